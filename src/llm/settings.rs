//! What a client is built from: the wire a provider speaks, the provider
//! as resolved from configuration, and the transport's limits. `config`
//! fills these in; the clients take them from here, below `config`.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use super::Prices;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// Any OpenAI-compatible Chat Completions endpoint.
    Openai,
    /// Anthropic Messages.
    Anthropic,
    /// OpenAI's Responses API (`/responses`), which its newest models need.
    #[serde(rename = "openai-responses")]
    OpenaiResponses,
}

/// A provider ready to connect to.
#[derive(Debug, Clone)]
pub struct ResolvedProvider {
    pub id: String,
    pub kind: ProviderKind,
    pub base_url: String,
    pub api_key: Option<String>,
    pub api_key_env: Option<String>,
    pub model: String,
    pub headers: BTreeMap<String, String>,
    pub max_tokens: u32,
    pub thinking_budget: Option<u32>,
    /// Responses API: `reasoning.effort` (`low`, `medium`, `high`...).
    pub reasoning_effort: Option<String>,
    /// USD per million tokens, when known.
    pub prices: Option<Prices>,
    /// Tokens the model can take in one request (prompt and answer), when
    /// known (configured, or a model of the built-in table).
    pub context_window: Option<u64>,
}

/// The window assumed for sizing a compaction of a model whose window is
/// not known. No compaction happens before the server says the
/// conversation is too long (a guess would compact too early for large
/// models and too late for small ones); after that, the size it refused
/// is the window.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;

/// Settings of the LLM transport. Each time limit is one `[llm]` key, and
/// the error a limit causes names that key.
#[derive(Debug, Clone)]
pub struct LlmSettings {
    /// Attempts after the first for transient failures (`max_retries`).
    pub max_retries: u32,
    pub retry_base: Duration,
    pub retry_max: Duration,
    /// Longest time without an event once the response has begun, before
    /// the first and between two (`idle_timeout_secs`); keep-alive pings do
    /// not count as events.
    pub idle_timeout: Duration,
    pub connect_timeout: Duration,
    /// Longest time from sending a request to the response's head
    /// (`first_byte_timeout_secs`).
    pub first_byte_timeout: Duration,
    /// Attempts after the first for a request that got no event at all (no
    /// head within `first_byte_timeout`, or only pings for `idle_timeout`)
    /// (`first_byte_retries`): a server silent that long rarely answers the
    /// next time, so a silent server fails in
    /// `first_byte_timeout × (1 + first_byte_retries)`.
    pub first_byte_retries: u32,
    /// Longest one HTTP request may take from start to end
    /// (`request_timeout_secs`); not retried.
    pub request_timeout: Duration,
    /// Longest `Retry-After` waited for (`max_retry_wait_secs`); a server
    /// asking for more fails at once, saying how long it asked for.
    pub max_retry_wait: Duration,
}

impl Default for LlmSettings {
    fn default() -> Self {
        LlmSettings {
            max_retries: 4,
            retry_base: Duration::from_millis(500),
            retry_max: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(15),
            first_byte_timeout: Duration::from_secs(60),
            first_byte_retries: 1,
            request_timeout: Duration::from_secs(600),
            max_retry_wait: Duration::from_secs(120),
        }
    }
}
