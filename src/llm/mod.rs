//! Provider-neutral conversation types and stream events, and the clients
//! that speak each wire protocol: OpenAI-compatible Chat Completions
//! (`openai.rs`) and Anthropic Messages (`anthropic.rs`). `transport.rs` owns
//! what both share: HTTP, SSE reading (`sse.rs`), time limits and retries;
//! `status.rs` maps answers that are not a good stream to errors a person
//! can act on. Nothing here knows about tools beyond their name,
//! description and schema.

mod anthropic;
mod error;
#[doc(hidden)]
pub mod fuzzing;
mod openai;
mod prefix;
mod responses;
mod settings;
pub mod sse;
mod status;
mod transport;

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

pub use error::LlmError;

pub use settings::{DEFAULT_CONTEXT_WINDOW, LlmSettings, ProviderKind, ResolvedProvider};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One message of the conversation, in the order the model saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<Content>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    Text {
        text: String,
    },
    /// Model reasoning. Anthropic requires it sent back unchanged (with its
    /// signature) alongside the tool calls it led to.
    Thinking {
        thinking: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    RedactedThinking {
        data: String,
    },
    /// A tool call. `arguments` is the raw JSON text the model produced,
    /// which may be malformed; the Surface judges it, not the client.
    ToolCall {
        id: String,
        name: String,
        arguments: String,
    },
    ToolResult {
        call_id: String,
        content: String,
        is_error: bool,
    },
}

impl Message {
    pub fn user(text: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            content: vec![Content::Text { text: text.into() }],
        }
    }

    /// The concatenated text blocks.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|c| match c {
                Content::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
}

/// One request: the whole conversation so far.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub system: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [ToolSpec],
    /// Which conversation this is, so a client may keep the encoded form of
    /// messages it already sent instead of encoding them again each trip.
    /// `None`: encode everything.
    pub conversation: Option<Conversation>,
}

/// A conversation whose messages only grow: `epoch` changes whenever its
/// history is rewritten (compaction, rewind, resume), and between changes
/// of epoch, messages are only appended (the last may still grow).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conversation {
    pub id: u64,
    pub epoch: u64,
}

impl Conversation {
    /// A fresh id, unique in this process.
    pub fn new_id() -> u64 {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
}

/// USD per million tokens of each kind.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Prices {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

impl Prices {
    /// What `u` costs, in USD.
    pub fn cost(&self, u: &Usage) -> f64 {
        (u.input_tokens as f64 * self.input
            + u.output_tokens as f64 * self.output
            + u.cache_read_tokens as f64 * self.cache_read
            + u.cache_write_tokens as f64 * self.cache_write)
            / 1_000_000.0
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, o: Usage) {
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
        self.cache_read_tokens += o.cache_read_tokens;
        self.cache_write_tokens += o.cache_write_tokens;
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
    Other(String),
}

/// A finished response.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub message: Message,
    pub stop: StopReason,
    pub usage: Usage,
}

/// What a front end sees while a response streams.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    TextDelta(String),
    ThinkingDelta(String),
    /// The deltas shown so far belong to a response that broke off and is
    /// being requested again as attempt `attempt` of at most `of`: a front
    /// end drops them; the new attempt streams the message afresh. Always
    /// followed by `Retrying`. Nothing of a withdrawn response was acted on
    /// (a response is returned, and its tool calls run, only once whole).
    Withdrawn {
        attempt: u32,
        of: u32,
    },
    /// A failed attempt that will be retried after `delay`.
    Retrying {
        attempt: u32,
        delay: std::time::Duration,
        reason: String,
    },
}

pub type EventFn<'a> = &'a (dyn Fn(StreamEvent) + Send + Sync);

/// A model behind some wire protocol.
pub trait Provider: Send + Sync {
    /// Provider id and model, for display.
    fn describe(&self) -> (&str, &str);

    /// Streams one response, reporting deltas to `on_event`, and returns it
    /// whole. Retries transient failures, also after deltas were shown
    /// (withdrawing them first with [`StreamEvent::Withdrawn`]).
    fn stream<'a>(
        &'a self,
        request: Request<'a>,
        on_event: EventFn<'a>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Completion, LlmError>>;

    /// The models the provider offers (its `/models` list), for choosing
    /// and checking a model by name.
    fn models(&self) -> BoxFuture<'_, Result<Vec<String>, LlmError>> {
        Box::pin(async { Err(LlmError::Client("this provider lists no models".into())) })
    }
}

/// Builds the client for a resolved provider.
pub fn connect(
    p: &ResolvedProvider,
    settings: &LlmSettings,
) -> Result<Arc<dyn Provider>, LlmError> {
    let transport = transport::Transport::new(p, settings)?;
    Ok(match p.kind {
        ProviderKind::Openai => Arc::new(openai::OpenAi::new(p, transport)),
        ProviderKind::Anthropic => Arc::new(anthropic::Anthropic::new(p, transport)),
        ProviderKind::OpenaiResponses => Arc::new(responses::Responses::new(p, transport)),
    })
}
