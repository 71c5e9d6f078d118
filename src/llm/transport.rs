//! What both wire protocols share: one POST whose response is an SSE stream,
//! read under three time limits, decoded by a protocol-specific [`Decoder`],
//! and retried with exponential backoff and jitter (honouring `Retry-After`).
//!
//! The time limits, each an `[llm]` key named by the error it causes:
//! - `first_byte_timeout`: from sending the request to the response's head,
//!   and to its first event;
//! - `idle_timeout`: between events;
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

/// A head that came just before the first-byte limit still gets this long
/// for its first event.
const FIRST_EVENT_GRACE: Duration = Duration::from_secs(5);
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::sse::{SseEvent, SseParser};
use super::status;
use super::{Completion, EventFn, LlmError, StreamEvent};
use super::{LlmSettings, ResolvedProvider};

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
        crate::log::log(line);
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
        crate::tls::install();
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

    /// The ids of a `/models` list (`{"data": [{"id": ...}]}`), asked
    /// once with a short time limit.
    pub async fn model_ids(&self, url: &str, headers: &HeaderMap) -> Result<Vec<String>, LlmError> {
        let sent = self
            .http
            .get(url)
            .headers(self.headers.clone())
            .headers(headers.clone())
            .timeout(std::time::Duration::from_secs(15))
            .send()
            .await
            .map_err(|e| LlmError::Client(format!("cannot list the models: {e}")))?;
        let status = sent.status();
        if !status.is_success() {
            return Err(LlmError::Client(format!(
                "{} answered {status} when asked for its models",
                self.provider
            )));
        }
        let v: serde_json::Value = sent
            .json()
            .await
            .map_err(|e| LlmError::Client(format!("the model list is not JSON: {e}")))?;
        let mut ids: Vec<String> = v["data"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["id"].as_str().map(str::to_string))
            .collect();
        ids.sort();
        Ok(ids)
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
        let retry_after = status::retry_after(response.headers());
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
            let who = status::Origin {
                provider: &self.provider,
                model: &self.model,
                key_env: &self.key_env,
            };
            return Err(status::status_error(
                &who,
                status.as_u16(),
                url,
                &text,
                retry_after,
            ));
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
            if !status::looks_like_sse(&head) {
                return Err(status::not_event_stream(
                    &self.provider,
                    status.as_u16(),
                    content_type,
                    &head,
                ));
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
        // The first event is due within the first-byte limit of sending (a
        // head followed by pings only is a server that does not answer);
        // after it, each event within the idle limit of the last.
        let first_event = first.max(Instant::now() + FIRST_EVENT_GRACE.min(s.first_byte_timeout));
        let mut last_event = Instant::now();
        let mut any_event = false;
        loop {
            let next = match pending.take() {
                Some(chunk) => Some(chunk),
                None => {
                    let (late, until) = if any_event {
                        (LlmError::Idle(s.idle_timeout), last_event + s.idle_timeout)
                    } else {
                        (LlmError::NoEvent(s.first_byte_timeout), first_event)
                    };
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

/// The innermost cause, which is the part a person can act on
/// ("Connection refused"), without reqwest's wrapping.
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}
