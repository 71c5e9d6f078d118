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
    #[error("the conversation no longer fits in the context window of `{model}`, even compacted: set `context_window` in [providers.<id>] to the model's real window, `/compact` with a focus, or use a model with a larger context{}", detail_suffix(.detail))]
    ContextLength { model: String, detail: String },
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
    #[error("the response stream broke off: {0}")]
    Stream(String),
    #[error(
        "the response stream was idle for {0:?}; the server stopped sending (raise [llm] idle_timeout_secs if the model is just slow)"
    )]
    Idle(Duration),
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
        matches!(self, LlmError::ContextLength { .. })
    }

    /// Worth another attempt, if nothing was shown yet.
    pub fn is_transient(&self) -> bool {
        match self {
            LlmError::Status { status, .. } => *status == 429 || *status == 408 || *status >= 500,
            LlmError::Connect { .. }
            | LlmError::Stream(_)
            | LlmError::Idle(_)
            | LlmError::Incomplete => true,
            LlmError::Api { retryable, .. } => *retryable,
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
