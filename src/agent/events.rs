//! What a turn reports as it happens ([`AgentEvent`]) and how it can end
//! without an answer ([`TurnError`]).

use serde::Serialize;

use crate::llm::{LlmError, Usage};
use crate::tools::Preview;

/// What happens during a turn, as it happens.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    TextDelta {
        text: String,
    },
    ThinkingDelta {
        text: String,
    },
    /// The text and thinking streamed since the last round trip began are
    /// withdrawn: the response broke off and is requested again (attempt
    /// `attempt` of at most `of`). Nothing of it was acted on.
    Withdrawn {
        attempt: u32,
        of: u32,
    },
    Retrying {
        attempt: u32,
        delay_ms: u64,
        reason: String,
    },
    ToolCall {
        id: String,
        name: String,
        arguments: String,
        /// One line for a person: the file, the pattern, the command.
        summary: String,
        /// How a front end previews the result (not part of the JSON stream).
        #[serde(skip)]
        preview: Preview,
    },
    ToolResult {
        id: String,
        name: String,
        content: String,
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        diff: Option<String>,
        /// The gate refused it.
        denied: bool,
        /// For the person: hooks that failed, hooks' messages.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        notices: Vec<String>,
    },
    /// A running call's step (a sub-agent's tool call), for the person.
    ToolProgress {
        id: String,
        text: String,
    },
    Usage {
        step: Usage,
        total: Usage,
    },
    /// How full the model's context window is (estimated), before a request.
    Context {
        tokens: u64,
        window: u64,
        /// The window is configured, built in or learned; else assumed.
        known: bool,
    },
    /// The conversation was compacted to fit the window.
    Compacted {
        /// Estimated tokens before and after.
        before: u64,
        after: u64,
        /// The summary could not be made: the oldest turns were dropped.
        truncated: bool,
        /// Why it could not (for `truncated`), or what triggered it.
        reason: String,
    },
}

pub type EventSink<'a> = &'a (dyn Fn(AgentEvent) + Send + Sync);

#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error(
        "stopped after {0} model round trips in one turn; raise [agent] max_steps (or --max-steps) if the task needs more"
    )]
    StepLimit(u32),
    #[error(
        "stopped: the model made the same `{tool}` call ({call}) {times} times in a row and got the same result each time, also after being told; rephrase the task or continue it with more guidance"
    )]
    Repeating {
        tool: String,
        call: String,
        times: u32,
    },
    #[error(
        "the answer was cut off by the output token limit, also after asking the model to continue; raise `max_tokens` in [providers.<id>] (the partial answer is in the session log)"
    )]
    Truncated(String),
    #[error("the model declined to answer (stop reason: {0})")]
    Refused(String),
    #[error("the model ended its turn without an answer (stop reason: {0})")]
    Empty(String),
    #[error("cancelled")]
    Cancelled,
    #[error("stopped by a hook: {0}")]
    Halted(String),
}
