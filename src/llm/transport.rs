//! What both wire protocols share: one POST whose response is an SSE stream,
//! read with an idle timeout, decoded by a protocol-specific [`Decoder`], and
//! retried with exponential backoff and jitter (honouring `Retry-After`) while
//! nothing has been shown to the person yet.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use futures_util::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio_util::sync::CancellationToken;

use super::sse::{SseEvent, SseParser};
use super::{Completion, EventFn, LlmError, StreamEvent};
use crate::config::{LlmSettings, ResolvedProvider};

/// Turns one protocol's SSE events into stream events and a [`Completion`].
pub(crate) trait Decoder: Send {
    /// Handles one event; returns `true` once the protocol's final event came.
    fn event(&mut self, ev: SseEvent, emit: &mut dyn FnMut(StreamEvent)) -> Result<bool, LlmError>;
    /// Builds the response after the final event or at the end of the body
    /// (`complete` says which); an unfinished stream is an error.
    fn finish(self: Box<Self>, complete: bool) -> Result<Completion, LlmError>;
}

pub(crate) struct Transport {
    http: reqwest::Client,
    settings: LlmSettings,
    provider: String,
    model: String,
    key_env: String,
    pub headers: HeaderMap,
}

/// Longest `Retry-After` we will sit through before giving up instead.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(300);

impl Transport {
    pub fn new(p: &ResolvedProvider, settings: &LlmSettings) -> Result<Transport, LlmError> {
        let http = reqwest::Client::builder()
            .connect_timeout(settings.connect_timeout)
            .user_agent(concat!("agent/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| LlmError::Client(e.to_string()))?;
        let mut headers = HeaderMap::new();
        for (k, v) in &p.headers {
            let name = HeaderName::from_bytes(k.as_bytes()).map_err(|_| {
                LlmError::Client(format!(
                    "header name `{k}` in [providers.{}] is not valid",
                    p.id
                ))
            })?;
            let value = HeaderValue::from_str(v).map_err(|_| {
                LlmError::Client(format!(
                    "header `{k}` in [providers.{}] has an invalid value",
                    p.id
                ))
            })?;
            headers.insert(name, value);
        }
        Ok(Transport {
            http,
            settings: settings.clone(),
            provider: p.id.clone(),
            model: p.model.clone(),
            key_env: p
                .api_key_env
                .clone()
                .unwrap_or_else(|| "the provider's API key".into()),
            headers,
        })
    }

    pub fn provider(&self) -> &str {
        &self.provider
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    pub async fn stream(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: bytes::Bytes,
        new_decoder: &(dyn Fn() -> Box<dyn Decoder> + Sync),
        on_event: EventFn<'_>,
        cancel: &CancellationToken,
    ) -> Result<Completion, LlmError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let shown = AtomicBool::new(false);
            let mut emit = |ev: StreamEvent| {
                if matches!(
                    ev,
                    StreamEvent::TextDelta(_) | StreamEvent::ThinkingDelta(_)
                ) {
                    shown.store(true, Ordering::Relaxed);
                }
                on_event(ev);
            };
            let result = tokio::select! {
                biased;
                _ = cancel.cancelled() => Err(LlmError::Cancelled),
                r = self.attempt(url, headers, body.clone(), new_decoder(), &mut emit) => r,
            };
            let error = match result {
                Ok(c) => return Ok(c),
                Err(e) => e,
            };
            let retry_after = error.retry_after();
            let may_retry = error.is_transient()
                && !shown.load(Ordering::Relaxed)
                && attempt <= self.settings.max_retries
                && retry_after.is_none_or(|d| d <= MAX_RETRY_AFTER);
            if !may_retry {
                return Err(if attempt > 1 && error.is_transient() {
                    LlmError::GaveUp {
                        attempts: attempt,
                        last: Box::new(error),
                    }
                } else {
                    error
                });
            }
            let delay = retry_after.unwrap_or_else(|| self.backoff(attempt));
            on_event(StreamEvent::Retrying {
                attempt,
                delay,
                reason: error.to_string(),
            });
            tokio::select! {
                _ = cancel.cancelled() => return Err(LlmError::Cancelled),
                _ = tokio::time::sleep(delay) => {}
            }
        }
    }

    /// Exponential backoff with jitter: between half and all of
    /// `base * 2^(attempt-1)`, capped.
    fn backoff(&self, attempt: u32) -> Duration {
        let exp = self
            .settings
            .retry_base
            .saturating_mul(1 << (attempt - 1).min(16))
            .min(self.settings.retry_max);
        exp.mul_f64(0.5 + fastrand::f64() * 0.5)
    }

    async fn attempt(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: bytes::Bytes,
        mut decoder: Box<dyn Decoder>,
        emit: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<Completion, LlmError> {
        let response = self
            .http
            .post(url)
            .headers(self.headers.clone())
            .headers(headers.clone())
            .header("content-type", "application/json")
            .header("accept", "text/event-stream")
            .body(body)
            .send();
        // A server that accepts but never answers must not hang the turn.
        let response = tokio::time::timeout(self.settings.idle_timeout, response)
            .await
            .map_err(|_| LlmError::Idle(self.settings.idle_timeout))?
            .map_err(|e| LlmError::Connect {
                url: url.to_string(),
                message: root_cause(&e),
            })?;
        let status = response.status();
        if !status.is_success() {
            let retry_after = retry_after(response.headers());
            let text = tokio::time::timeout(self.settings.idle_timeout, response.text())
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default();
            return Err(self.status_error(status.as_u16(), url, &text, retry_after));
        }
        let mut parser = SseParser::default();
        let mut body = response.bytes_stream();
        loop {
            let next = tokio::time::timeout(self.settings.idle_timeout, body.next())
                .await
                .map_err(|_| LlmError::Idle(self.settings.idle_timeout))?;
            let Some(chunk) = next else {
                return decoder.finish(false);
            };
            let chunk = chunk.map_err(|e| LlmError::Stream(root_cause(&e)))?;
            for event in parser.push(&chunk) {
                if decoder.event(event, emit)? {
                    return decoder.finish(true);
                }
            }
        }
    }

    /// Maps an HTTP failure to an error that says what to do.
    fn status_error(
        &self,
        status: u16,
        url: &str,
        body: &str,
        retry_after: Option<Duration>,
    ) -> LlmError {
        let (kind, message) = error_fields(body);
        let detail = if message.is_empty() {
            body.chars()
                .take(300)
                .collect::<String>()
                .trim()
                .to_string()
        } else {
            message.clone()
        };
        let lower = format!("{kind} {message}").to_lowercase();
        let mentions_model = lower.contains("model");
        let context = [
            "context_length",
            "context length",
            "context window",
            "prompt is too long",
            "maximum context",
            "too many tokens",
        ]
        .iter()
        .any(|m| lower.contains(m));
        let missing = [
            "not found",
            "not_found",
            "does not exist",
            "unknown",
            "no such",
        ]
        .iter()
        .any(|m| lower.contains(m));
        match status {
            401 | 403 => LlmError::Auth {
                status,
                provider: self.provider.clone(),
                env: self.key_env.clone(),
                detail,
            },
            400 | 404 | 413 | 422 if context => LlmError::ContextLength {
                model: self.model.clone(),
                detail,
            },
            400 | 404 | 422 if mentions_model && missing => LlmError::UnknownModel {
                model: self.model.clone(),
                provider: self.provider.clone(),
                detail,
            },
            _ => {
                let hint = match status {
                    404 => {
                        "check base_url (for kind \"openai\" it includes the version, e.g. /v1; for kind \"anthropic\" it is the host only)"
                    }
                    429 => "rate limited; wait a moment or lower your usage",
                    500.. => "the provider had a problem; try again later",
                    _ => "",
                };
                LlmError::Status {
                    provider: self.provider.clone(),
                    status,
                    url: url.to_string(),
                    hint: hint.to_string(),
                    detail,
                    retry_after,
                }
            }
        }
    }
}

/// `error.type`/`error.code` and `error.message` from either vendor's error body.
fn error_fields(body: &str) -> (String, String) {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(body) else {
        return (String::new(), String::new());
    };
    let err = v.get("error").unwrap_or(&v);
    let s = |key: &str| {
        err.get(key)
            .and_then(|x| x.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let kind = [s("code"), s("type")]
        .into_iter()
        .find(|k| !k.is_empty())
        .unwrap_or_default();
    let message = match err {
        serde_json::Value::String(m) => m.clone(),
        _ => s("message"),
    };
    (kind, message)
}

/// `retry-after-ms` (OpenAI), else `retry-after` as seconds or an HTTP date.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return Duration::try_from_secs_f64(ms / 1000.0).ok();
    }
    let value = get("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).ok();
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(SystemTime::now()).unwrap_or_default())
}

/// The innermost cause, which is the part a person can act on
/// ("Connection refused"), without reqwest's wrapping.
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_forms() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
        let mut d = HeaderMap::new();
        let later = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(30));
        d.insert("retry-after", HeaderValue::from_str(&later).unwrap());
        let got = retry_after(&d).unwrap();
        assert!(
            got > Duration::from_secs(25) && got <= Duration::from_secs(30),
            "{got:?}"
        );
    }

    #[test]
    fn error_fields_of_both_vendors() {
        let openai = r#"{"error":{"message":"The model `x` does not exist","type":"invalid_request_error","code":"model_not_found"}}"#;
        assert_eq!(
            error_fields(openai),
            (
                "model_not_found".into(),
                "The model `x` does not exist".into()
            )
        );
        let anthropic =
            r#"{"type":"error","error":{"type":"not_found_error","message":"model: claude-x"}}"#;
        assert_eq!(
            error_fields(anthropic),
            ("not_found_error".into(), "model: claude-x".into())
        );
        assert_eq!(error_fields("<html>"), (String::new(), String::new()));
    }
}
