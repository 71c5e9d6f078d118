//! A session: the conversation with one model, and the turn loop that streams
//! an answer, hands each tool call to the [`Surface`], appends the results and
//! asks again until the model answers without tool calls. Front ends (headless,
//! the TUI, tests) watch through [`AgentEvent`]s; this module never depends on
//! them, and it never looks at a tool's name.

mod prompt;
mod subagent;

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use futures_util::future::join_all;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

pub use prompt::system_prompt;
pub use subagent::{NobodyToAsk, SubAgents};

use crate::llm::{
    Content, LlmError, Message, Provider, Request, Role, StreamEvent, ToolSpec, Usage,
};
use crate::tools::{Preview, ProgressEvent, Surface, ToolCall, ToolResult};

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
        "stopped: the model made the same `{tool}` call {times} times and got the same result each time"
    )]
    Repeating { tool: String, times: u32 },
    #[error("cancelled")]
    Cancelled,
    #[error("stopped by a hook: {0}")]
    Halted(String),
}

/// The same call with the same result this many times ends the turn.
const MAX_REPEATS: u32 = 3;

pub struct Session {
    pub id: String,
    provider: Arc<dyn Provider>,
    surface: Arc<Surface>,
    tools: Vec<ToolSpec>,
    /// The Surface's generation `tools` and `system` were built at.
    tools_generation: u64,
    /// The system prompt as given; `system` adds the Surface's notes.
    base_system: String,
    system: String,
    messages: Vec<Message>,
    usage: Usage,
    tool_calls: u64,
    max_steps: u32,
}

impl Session {
    pub fn new(
        id: String,
        provider: Arc<dyn Provider>,
        surface: Arc<Surface>,
        system: String,
        max_steps: u32,
    ) -> Session {
        let mut session = Session {
            id,
            tools: Vec::new(),
            // Never a real generation: the first refresh builds both.
            tools_generation: u64::MAX,
            provider,
            surface,
            base_system: system.clone(),
            system,
            messages: Vec::new(),
            usage: Usage::default(),
            tool_calls: 0,
            max_steps: max_steps.max(1),
        };
        session.refresh_tools();
        session
    }

    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    pub fn usage(&self) -> Usage {
        self.usage
    }

    pub fn tool_calls(&self) -> u64 {
        self.tool_calls
    }

    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name.as_str()).collect()
    }

    /// Talks to another model from the next request on.
    pub fn set_provider(&mut self, provider: Arc<dyn Provider>) {
        if let Some(d) = &self.surface.context().delegate {
            d.set_provider(Arc::clone(&provider));
        }
        self.provider = provider;
    }

    pub fn surface(&self) -> &Arc<Surface> {
        &self.surface
    }

    pub fn provider(&self) -> &dyn Provider {
        self.provider.as_ref()
    }

    /// Runs one turn and returns the model's final text.
    pub async fn run_turn(
        &mut self,
        prompt: &str,
        on_event: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<String, TurnError> {
        self.push_user(Content::Text {
            text: prompt.to_string(),
        });
        let mut repeats: HashMap<u64, u32> = HashMap::new();
        for _ in 0..self.max_steps {
            let forward = |ev: StreamEvent| {
                on_event(match ev {
                    StreamEvent::TextDelta(text) => AgentEvent::TextDelta { text },
                    StreamEvent::ThinkingDelta(text) => AgentEvent::ThinkingDelta { text },
                    StreamEvent::Withdrawn { attempt, of } => AgentEvent::Withdrawn { attempt, of },
                    StreamEvent::Retrying {
                        attempt,
                        delay,
                        reason,
                    } => AgentEvent::Retrying {
                        attempt,
                        delay_ms: delay.as_millis() as u64,
                        reason,
                    },
                })
            };
            self.refresh_tools();
            let request = Request {
                system: &self.system,
                messages: &self.messages,
                tools: &self.tools,
            };
            let completion = match self.provider.stream(request, &forward, cancel).await {
                Ok(c) => c,
                Err(LlmError::Cancelled) => return Err(TurnError::Cancelled),
                Err(e) => return Err(e.into()),
            };
            self.usage += completion.usage;
            on_event(AgentEvent::Usage {
                step: completion.usage,
                total: self.usage,
            });
            let calls: Vec<ToolCall> = completion
                .message
                .content
                .iter()
                .filter_map(|c| match c {
                    Content::ToolCall {
                        id,
                        name,
                        arguments,
                    } => Some(ToolCall {
                        id: id.clone(),
                        name: name.clone(),
                        arguments: arguments.clone(),
                    }),
                    _ => None,
                })
                .collect();
            let text = completion.message.text();
            if !completion.message.content.is_empty() {
                self.messages.push(completion.message);
            }
            if calls.is_empty() {
                return Ok(text);
            }
            let results = self.run_calls(&calls, on_event, cancel).await;
            let mut repeated = None;
            let halt = results.iter().find_map(|r| r.halt.clone());
            for (call, result) in calls.iter().zip(&results) {
                let n = repeats.entry(fingerprint(call, result)).or_insert(0);
                *n += 1;
                if *n >= MAX_REPEATS {
                    repeated = Some(call.name.clone());
                }
            }
            for r in results {
                self.push_user(Content::ToolResult {
                    call_id: r.call_id,
                    content: r.content,
                    is_error: r.is_error,
                });
            }
            if cancel.is_cancelled() {
                return Err(TurnError::Cancelled);
            }
            if let Some(reason) = halt {
                return Err(TurnError::Halted(reason));
            }
            if let Some(tool) = repeated {
                return Err(TurnError::Repeating {
                    tool,
                    times: MAX_REPEATS,
                });
            }
        }
        Err(TurnError::StepLimit(self.max_steps))
    }

    /// Tools that joined or left the Surface since the last request (an MCP
    /// server became ready) reach the model, with their sources' notes in
    /// the system prompt. Costs one atomic load when nothing changed.
    fn refresh_tools(&mut self) {
        let generation = self.surface.generation();
        if generation == self.tools_generation {
            return;
        }
        self.tools_generation = generation;
        self.tools = self.surface.specs();
        self.system = self.base_system.clone();
        for note in self.surface.notes() {
            self.system.push_str("\n\n");
            self.system.push_str(&note);
        }
    }

    /// Runs calls in the model's order: each run of consecutive read-only
    /// calls concurrently, every other call alone. Results keep call order.
    async fn run_calls(
        &mut self,
        calls: &[ToolCall],
        on_event: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> Vec<ToolResult> {
        let mut results = Vec::with_capacity(calls.len());
        let mut i = 0;
        while i < calls.len() {
            let mut end = i + 1;
            if self.surface.is_read_only(&calls[i].name) {
                while end < calls.len() && self.surface.is_read_only(&calls[end].name) {
                    end += 1;
                }
            }
            let batch = &calls[i..end];
            for c in batch {
                on_event(AgentEvent::ToolCall {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    arguments: c.arguments.clone(),
                    summary: self.surface.summary(c),
                    preview: self.surface.preview(&c.name),
                });
            }
            let surface = &self.surface;
            // Sub-agents report steps and token usage while they run.
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let running = join_all(
                batch
                    .iter()
                    .map(|c| surface.call_reporting(c, cancel, Some(tx.clone()))),
            );
            drop(tx);
            tokio::pin!(running);
            let mut usage = self.usage;
            let mut report = |(id, ev): (String, ProgressEvent)| match ev {
                ProgressEvent::Step(text) => on_event(AgentEvent::ToolProgress { id, text }),
                ProgressEvent::Usage(step) => {
                    usage += step;
                    on_event(AgentEvent::Usage { step, total: usage });
                }
            };
            let done = loop {
                tokio::select! {
                    done = &mut running => break done,
                    Some(p) = rx.recv() => report(p),
                }
            };
            while let Ok(p) = rx.try_recv() {
                report(p);
            }
            self.usage = usage;
            for (c, r) in batch.iter().zip(done) {
                on_event(AgentEvent::ToolResult {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    content: r.content.clone(),
                    is_error: r.is_error,
                    diff: r.diff.clone(),
                    denied: r.denied,
                    notices: r.notices.clone(),
                });
                results.push(r);
            }
            self.tool_calls += batch.len() as u64;
            i = end;
            // A hook ended the turn: the rest are answered, not run, so the
            // conversation stays well formed.
            if results.iter().any(|r| r.halt.is_some()) {
                for c in &calls[i..] {
                    results.push(ToolResult {
                        call_id: c.id.clone(),
                        content: "Not run: a hook stopped the turn before this call.".into(),
                        is_error: true,
                        diff: None,
                        denied: true,
                        notices: Vec::new(),
                        halt: None,
                    });
                }
                break;
            }
        }
        results
    }

    /// Appends to the last user message when there is one (tool results and
    /// a following prompt belong to one user turn), else starts one.
    fn push_user(&mut self, content: Content) {
        match self.messages.last_mut() {
            Some(m) if m.role == Role::User => m.content.push(content),
            _ => self.messages.push(Message {
                role: Role::User,
                content: vec![content],
            }),
        }
    }
}

fn fingerprint(call: &ToolCall, result: &ToolResult) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    call.name.hash(&mut h);
    call.arguments.hash(&mut h);
    result.content.hash(&mut h);
    h.finish()
}
