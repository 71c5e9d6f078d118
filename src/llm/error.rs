use std::time::Duration;

/// Failures talking to a model. Each message says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("authentication failed (HTTP {status}) at {provider}: check that {env} holds a valid API key{}", detail_suffix(.detail))]
    Auth {
        status: u16,
        provider: String,
        env: String,
        detail: String,
    },
    #[error("model `{model}` was not found at {provider}: check --model or `model` in [providers.{provider}]{}", detail_suffix(.detail))]
    UnknownModel {
        model: String,
        provider: String,
        detail: String,
    },
    /// The request is longer than the model's context window (HTTP 400 with
    /// `context_length_exceeded`, "maximum context length", "prompt is too
    /// long"). Holds the server's message. Never retried as is: the
    /// conversation has to shrink first.
    #[error("the conversation no longer fits in the model's context window, even compacted: set `context_window` in [providers.<id>] to the model's real window, `/compact` with a focus, or use a model with a larger context{}", detail_suffix(.0))]
    ContextLength(String),
    #[error("{provider} answered HTTP {status} for {url}{}{}", hint_suffix(.hint), detail_suffix(.detail))]
    Status {
        provider: String,
        status: u16,
        url: String,
        hint: String,
        detail: String,
        retry_after: Option<Duration>,
    },
    #[error(
        "cannot reach {url}: {message}; check that the server is running and `base_url` is right"
    )]
    Connect { url: String, message: String },
    /// A 2xx answer whose body is not an event stream (a proxy's HTML page,
    /// a JSON error): what came instead.
    /// `retryable`: not a JSON error that says the request itself is wrong;
    /// such an answer (a proxy's page) is asked once more, not five times.
    #[error("{provider} answered HTTP {status} with content type `{content_type}` instead of an event stream{}; check base_url (a proxy or login page may be in the way)", first_line_suffix(.first_line))]
    NotEventStream {
        provider: String,
        status: u16,
        content_type: String,
        first_line: String,
        retryable: bool,
    },
    /// `Retry-After` asks for a longer wait than the settings allow.
    #[error("{}{provider} answered HTTP {status} and asks to wait {}, longer than [llm] max_retry_wait_secs ({}): try again later, or raise that setting", if *.status == 429 { "rate limited; " } else { "" }, human(*.wait), human(*.limit))]
    WaitTooLong {
        provider: String,
        status: u16,
        wait: Duration,
        limit: Duration,
    },
    #[error("the response stream broke off: {0}")]
    Stream(String),
    #[error(
        "no event from the server for {} (keep-alive pings do not count); the server stopped sending: raise [llm] idle_timeout_secs if the model is just slow", human(*.0)
    )]
    Idle(Duration),
    #[error(
        "no response from the server within {} of the request; it may be overloaded or stuck: raise [llm] first_byte_timeout_secs if it is just slow to start", human(*.0)
    )]
    FirstByte(Duration),
    /// The response began but no event came in the idle limit: nothing, or
    /// only keep-alive pings.
    #[error(
        "the server answered but sent no event within {} of the request (keep-alive pings do not count): raise [llm] first_byte_timeout_secs if the model is just slow to start", human(*.0)
    )]
    NoEvent(Duration),
    #[error(
        "the response took longer than {}, the limit for one request: raise [llm] request_timeout_secs for longer answers", human(*.0)
    )]
    RequestTimeout(Duration),
    #[error("the response stream ended before its final event; the server closed it early")]
    Incomplete,
    #[error("the provider sent something that is not valid for its protocol: {0}")]
    Protocol(String),
    #[error("{provider} reported an error: {kind}: {message}")]
    Api {
        provider: String,
        kind: String,
        message: String,
        retryable: bool,
    },
    #[error("gave up after {attempts} attempts; last error: {last}")]
    GaveUp { attempts: u32, last: Box<LlmError> },
    #[error("cancelled")]
    Cancelled,
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}

fn detail_suffix(detail: &str) -> String {
    if detail.is_empty() {
        String::new()
    } else {
        format!(" (server said: {detail})")
    }
}

fn first_line_suffix(line: &str) -> String {
    if line.is_empty() {
        " (an empty body)".to_string()
    } else {
        format!(": `{line}`")
    }
}

/// "90 ms", "45 s", "3 minutes", "2 hours": a wait as a person reads it.
pub(crate) fn human(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs < 1.0 {
        format!("{} ms", d.as_millis())
    } else if secs < 120.0 {
        let s = format!("{secs:.1}");
        format!("{} s", s.trim_end_matches(".0"))
    } else if secs < 2.0 * 3600.0 {
        format!("{} minutes", (secs / 60.0).round())
    } else {
        format!("{} hours", (secs / 3600.0).round())
    }
}

fn hint_suffix(hint: &str) -> String {
    if hint.is_empty() {
        String::new()
    } else {
        format!(": {hint}")
    }
}

impl LlmError {
    /// The server says the request is longer than the model's context
    /// window: compacting the conversation may help.
    pub fn is_context_overflow(&self) -> bool {
        matches!(self, LlmError::ContextLength(_))
    }

    /// Worth another attempt of the same request.
    pub fn is_transient(&self) -> bool {
        match self {
            LlmError::Status { status, .. } => *status == 429 || *status == 408 || *status >= 500,
            LlmError::Connect { .. }
            | LlmError::Stream(_)
            | LlmError::Idle(_)
            | LlmError::FirstByte(_)
            | LlmError::NoEvent(_)
            | LlmError::Incomplete => true,
            LlmError::Api { retryable, .. } | LlmError::NotEventStream { retryable, .. } => {
                *retryable
            }
            _ => false,
        }
    }

    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_read_as_a_person_says_them() {
        assert_eq!(human(Duration::from_millis(250)), "250 ms");
        assert_eq!(human(Duration::from_secs(60)), "60 s");
        assert_eq!(human(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(human(Duration::from_secs(3600)), "60 minutes");
        assert_eq!(human(Duration::from_secs(3 * 3600)), "3 hours");
    }

    #[test]
    fn time_limits_name_their_setting() {
        for (e, key) in [
            (
                LlmError::Idle(Duration::from_secs(120)),
                "idle_timeout_secs",
            ),
            (
                LlmError::FirstByte(Duration::from_secs(60)),
                "first_byte_timeout_secs",
            ),
            (
                LlmError::NoEvent(Duration::from_secs(60)),
                "first_byte_timeout_secs",
            ),
            (
                LlmError::RequestTimeout(Duration::from_secs(600)),
                "request_timeout_secs",
            ),
        ] {
            assert!(e.to_string().contains(&format!("[llm] {key}")), "{e}");
        }
        let e = LlmError::WaitTooLong {
            provider: "p".into(),
            status: 429,
            wait: Duration::from_secs(3600),
            limit: Duration::from_secs(120),
        };
        assert_eq!(
            e.to_string(),
            "rate limited; p answered HTTP 429 and asks to wait 60 minutes, longer than [llm] max_retry_wait_secs (2 minutes): try again later, or raise that setting"
        );
        assert!(!e.is_transient());
    }
}
