//! What both wire protocols share: one POST whose response is an SSE stream,
//! read under three time limits, decoded by a protocol-specific [`Decoder`],
//! and retried with exponential backoff and jitter (honouring `Retry-After`).
//!
//! The time limits, each an `[llm]` key named by the error it causes:
//! - `first_byte_timeout`: from sending the request to the response's head;
//! - `idle_timeout`: from the head to the first event, and between events;
//! - `request_timeout`: the whole request, start to end (not retried).
//!
//! Only an *event* restarts the idle limit: bytes that parse into nothing (a
//! `: ping` comment) and keep-alive events (Anthropic's `ping`) do not, so a
//! server that only pings cannot hold a turn. A request that got no event at
//! all (no head in time, or only pings) is tried `first_byte_retries` more
//! times, not `max_retries`: a server that never answers fails within
//! `first_byte_timeout × (1 + first_byte_retries)`. An answer that is not an
//! event stream is asked once more at most.
//!
//! A response is returned only once it is complete, so no tool call of it
//! can have run when a broken stream is retried; deltas already shown are
//! withdrawn first ([`StreamEvent::Withdrawn`]).

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use futures_util::StreamExt;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::sse::{SseEvent, SseParser};
use super::{Completion, EventFn, LlmError, StreamEvent};
use crate::config::{LlmSettings, ResolvedProvider};

/// Serializes a request body once; every attempt sends the same bytes.
pub(crate) fn encode(body: &impl serde::Serialize) -> Result<bytes::Bytes, LlmError> {
    serde_json::to_vec(body)
        .map(bytes::Bytes::from)
        .map_err(|e| LlmError::Client(format!("cannot encode the request: {e}")))
}

/// What one SSE event was to the decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen {
    /// Part of the response: the time limits start again.
    Event,
    /// A keep-alive: proof of a connection, not of progress.
    KeepAlive,
    /// The protocol's final event.
    Final,
}

/// Turns one protocol's SSE events into stream events and a [`Completion`].
pub(crate) trait Decoder: Send {
    /// Handles one event.
    fn event(&mut self, ev: SseEvent, emit: &mut dyn FnMut(StreamEvent)) -> Result<Seen, LlmError>;
    /// Builds the response after the final event or at the end of the body
    /// (`complete` says which); an unfinished stream is an error.
    fn finish(self: Box<Self>, complete: bool) -> Result<Completion, LlmError>;
}

/// Writes `line` to the warning log the first time `key` is seen in this
/// process: an unknown event or block type is worth one note, not one per
/// event.
pub(crate) fn log_once(key: &str, line: &str) {
    static SEEN: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    let mut seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    if seen.get_or_insert_default().insert(key.to_string()) {
        crate::session::log(line);
    }
}

pub(crate) struct Transport {
    http: reqwest::Client,
    settings: LlmSettings,
    provider: String,
    model: String,
    key_env: String,
    pub headers: HeaderMap,
}

/// How much of a body that is not an event stream (or of an error body) is
/// read to report it.
const MAX_REPORTED_BODY: usize = 64 * 1024;

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
        let s = &self.settings;
        let mut attempt = 0;
        // Attempts that got no event at all, and answers that were no stream.
        let mut unanswered = 0;
        let mut not_streams = 0;
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
            match error {
                LlmError::FirstByte(_) | LlmError::NoEvent(_) => unanswered += 1,
                LlmError::NotEventStream { .. } => not_streams += 1,
                _ => {}
            }
            let retry_after = error.retry_after();
            if let (
                Some(wait),
                LlmError::Status {
                    provider, status, ..
                },
            ) = (retry_after, &error)
                && error.is_transient()
                && wait > s.max_retry_wait
            {
                return Err(LlmError::WaitTooLong {
                    provider: provider.clone(),
                    status: *status,
                    wait,
                    limit: s.max_retry_wait,
                });
            }
            let may_retry = error.is_transient()
                && attempt <= s.max_retries
                && unanswered <= s.first_byte_retries
                && not_streams <= 1;
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
            if shown.load(Ordering::Relaxed) {
                // Nothing of this response was acted on (it was never
                // returned); the front end drops what it showed.
                on_event(StreamEvent::Withdrawn {
                    attempt: attempt + 1,
                    of: s.max_retries + 1,
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

    /// Awaits `fut` until `until` (failing with `late`) or the request's
    /// cap `cap`, whichever comes first.
    async fn within<F: Future>(
        &self,
        fut: F,
        until: Instant,
        late: LlmError,
        cap: Instant,
    ) -> Result<F::Output, LlmError> {
        if cap <= until {
            tokio::time::timeout_at(cap, fut)
                .await
                .map_err(|_| LlmError::RequestTimeout(self.settings.request_timeout))
        } else {
            tokio::time::timeout_at(until, fut).await.map_err(|_| late)
        }
    }

    async fn attempt(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: bytes::Bytes,
        mut decoder: Box<dyn Decoder>,
        emit: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<Completion, LlmError> {
        let s = &self.settings;
        let start = Instant::now();
        let cap = start + s.request_timeout;
        let first = start + s.first_byte_timeout;
        let request = self
            .http
            .post(url)
            .headers(self.headers.clone())
            .headers(headers.clone())
            .header("content-type", "application/json")
            .header("accept", "text/event-stream")
            .body(body)
            .send();
        let response = self
            .within(
                request,
                first,
                LlmError::FirstByte(s.first_byte_timeout),
                cap,
            )
            .await?
            .map_err(|e| LlmError::Connect {
                url: url.to_string(),
                message: root_cause(&e),
            })?;
        let status = response.status();
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .trim()
            .to_string();
        let retry_after = retry_after(response.headers());
        let mut body = response.bytes_stream();
        if !status.is_success() {
            let until = Instant::now() + s.idle_timeout;
            let text = self
                .within(
                    read_prefix(&mut body, false),
                    until,
                    LlmError::Idle(s.idle_timeout),
                    cap,
                )
                .await
                .unwrap_or_default();
            let text = String::from_utf8_lossy(&text);
            return Err(self.status_error(status.as_u16(), url, &text, retry_after));
        }
        // A missing type is taken on trust; another type is believed only
        // if the body really starts like an event stream.
        let mut pending = None;
        let is_sse = content_type.is_empty()
            || content_type
                .to_ascii_lowercase()
                .starts_with("text/event-stream");
        if !is_sse {
            let head = self
                .within(
                    read_prefix(&mut body, true),
                    Instant::now() + s.idle_timeout,
                    LlmError::NoEvent(s.idle_timeout),
                    cap,
                )
                .await?;
            if !looks_like_sse(&head) {
                let (kind, _) = error_fields(&String::from_utf8_lossy(&head));
                return Err(LlmError::NotEventStream {
                    provider: self.provider.clone(),
                    status: status.as_u16(),
                    content_type,
                    first_line: first_line(&head),
                    retryable: !request_is_wrong(&kind),
                });
            }
            log_once(
                &format!("content-type {content_type}"),
                &format!(
                    "{} sent an event stream as `{content_type}`; reading it anyway",
                    self.provider
                ),
            );
            pending = Some(Ok(bytes::Bytes::from(head)));
        }
        let mut parser = SseParser::default();
        // The idle limit runs from the head until the first event.
        let mut last_event = Instant::now();
        let mut any_event = false;
        loop {
            let next = match pending.take() {
                Some(chunk) => Some(chunk),
                None => {
                    let late = if any_event {
                        LlmError::Idle(s.idle_timeout)
                    } else {
                        LlmError::NoEvent(s.idle_timeout)
                    };
                    let until = last_event + s.idle_timeout;
                    self.within(body.next(), until, late, cap).await?
                }
            };
            let Some(chunk) = next else {
                return decoder.finish(false);
            };
            let chunk = chunk.map_err(|e| LlmError::Stream(root_cause(&e)))?;
            let events = parser
                .push(&chunk)
                .map_err(|e| LlmError::Protocol(e.to_string()))?;
            for event in events {
                match decoder.event(event, emit)? {
                    Seen::Final => return decoder.finish(true),
                    Seen::Event => {
                        last_event = Instant::now();
                        any_event = true;
                    }
                    Seen::KeepAlive => {}
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
            "context size",
            "context limit",
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
            400 | 404 | 413 | 422 if context => LlmError::ContextLength(detail),
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

/// Up to [`MAX_REPORTED_BODY`] bytes of a body (with `line`, only until
/// its first non-blank line is complete), or what came before it failed:
/// enough to see what the server said, never unbounded.
async fn read_prefix<S, E>(body: &mut S, line: bool) -> Vec<u8>
where
    S: futures_util::Stream<Item = Result<bytes::Bytes, E>> + Unpin,
{
    let mut out: Vec<u8> = Vec::new();
    while out.len() < MAX_REPORTED_BODY {
        match body.next().await {
            Some(Ok(chunk)) => out.extend_from_slice(&chunk),
            _ => break,
        }
        let start = out.iter().position(|b| !b.is_ascii_whitespace());
        if line && start.is_some_and(|i| out[i..].contains(&b'\n')) {
            break;
        }
    }
    out
}

/// Whether a body's first line is an SSE field or comment.
fn looks_like_sse(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let line = text
        .trim_start_matches('\u{FEFF}')
        .trim_start()
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    ["data:", "event:", ":", "id:", "retry:"]
        .iter()
        .any(|p| line.starts_with(p))
}

/// The first non-blank line of a body, shortened, for an error message.
fn first_line(head: &[u8]) -> String {
    let text = String::from_utf8_lossy(head);
    let line = text.lines().map(str::trim).find(|l| !l.is_empty());
    super::openai::truncate(line.unwrap_or_default())
}

/// An error kind that says the request itself (or the account) is wrong,
/// so sending it again cannot help.
fn request_is_wrong(kind: &str) -> bool {
    [
        "invalid_request",
        "authentication",
        "permission",
        "not_found",
        "insufficient_quota",
        "billing",
    ]
    .iter()
    .any(|k| kind.contains(k))
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
