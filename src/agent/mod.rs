//! A session: the conversation with one model, and the turn loop that streams
//! an answer, hands each tool call to the [`Surface`], appends the results and
//! asks again until the model answers without tool calls. Front ends (headless,
//! the TUI, tests) watch through [`AgentEvent`]s; this module never depends on
//! them, and it never looks at a tool's name.

mod compact;
mod prompt;
mod subagent;

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use futures_util::future::join_all;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

pub use compact::Budget;
pub use prompt::{instructions_files, system_prompt};
pub use subagent::{NobodyToAsk, SubAgents};

use crate::llm::{
    Content, Conversation, LlmError, Message, Prices, Provider, Request, Role, StopReason,
    StreamEvent, ToolSpec, Usage,
};
use crate::session::{Entry, Replay, SessionLog};
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

/// The same calls with the same results this many steps in a row: the
/// model is told it is not making progress; once more ends the turn.
const MAX_REPEATS: u32 = 3;

/// What a cut-off answer gets, once, to go on.
const CONTINUE: &str = "Your answer was cut off by the output token limit. Continue exactly where it stopped, without repeating what you already wrote.";

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
    /// Encoded size of each message, for the context estimate.
    sizes: Vec<u64>,
    /// Encoded size of the system prompt and tools.
    fixed_bytes: u64,
    /// The server counted more tokens than estimated: this many per
    /// thousand estimated (≥ 1000).
    calibration: u64,
    budget: Budget,
    conversation: Conversation,
    usage: Usage,
    /// Usage and prices per (provider, model), sub-agents included.
    by_model: Vec<ModelUsage>,
    prices: Option<Prices>,
    tool_calls: u64,
    max_steps: u32,
    log: Option<Arc<SessionLog>>,
    turn: u32,
    /// Where each turn since the last compaction started in `messages`.
    /// (message, content block) where each turn's prompt begins.
    turn_starts: Vec<(u32, (usize, usize))>,
    /// The read tracker's version last written to the log.
    reads_logged: u64,
    /// The estimate right after the last compaction: one that could not
    /// bring the conversation under the limit is not repeated every step.
    compacted_to: Option<u64>,
    /// Why the model's last response ended (`end_turn`, `max_tokens`...).
    stop: Option<String>,
    /// Its turns are the file history's checkpoints (a sub-agent's are
    /// not: it shares its parent's history).
    checkpoints: bool,
    /// Model round trips of the last turn, and time spent waiting for the
    /// model in it.
    steps: u32,
    api_time: std::time::Duration,
}

/// What one model cost in this session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelUsage {
    pub provider: String,
    pub model: String,
    pub usage: Usage,
    /// USD, when the model's prices are known.
    pub cost: Option<f64>,
    /// The prices it was used at.
    #[serde(skip)]
    prices: Option<Prices>,
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
            sizes: Vec::new(),
            fixed_bytes: 0,
            calibration: 1000,
            budget: Budget::of(None),
            conversation: Conversation {
                id: Conversation::new_id(),
                epoch: 0,
            },
            usage: Usage::default(),
            by_model: Vec::new(),
            prices: None,
            tool_calls: 0,
            max_steps: max_steps.max(1),
            log: None,
            turn: 0,
            turn_starts: Vec::new(),
            reads_logged: 0,
            compacted_to: None,
            stop: None,
            checkpoints: true,
            steps: 0,
            api_time: std::time::Duration::ZERO,
        };
        session.refresh_tools();
        session
    }

    /// A sub-agent's session: its turns do not move the file history's
    /// checkpoint, which belongs to the parent's turn.
    pub fn within_parent_turn(mut self) -> Session {
        self.checkpoints = false;
        self
    }

    /// Writes everything that happens to `log`.
    pub fn with_log(mut self, log: Arc<SessionLog>) -> Session {
        self.log = Some(log);
        self
    }

    /// The model's context window (tokens) and prices.
    pub fn with_model_facts(mut self, window: Option<u64>, prices: Option<Prices>) -> Session {
        self.budget = Budget::of(window);
        self.prices = prices;
        self
    }

    pub fn log(&self) -> Option<&Arc<SessionLog>> {
        self.log.as_ref()
    }

    fn record(&self, entry: &Entry) {
        if let Some(log) = &self.log {
            log.append(entry);
        }
    }

    /// Continues a session read back from its log: its conversation, turn
    /// count and usage. Files the model had read count as read only where
    /// their content is still what it saw.
    pub fn resume(&mut self, replay: &Replay) {
        self.messages = replay.messages.clone();
        self.sizes = self.messages.iter().map(compact::message_bytes).collect();
        self.conversation.epoch += 1;
        self.turn = replay.turns;
        self.turn_starts.clear();
        self.usage = replay.total_usage();
        self.by_model = replay
            .usage
            .iter()
            .map(|((provider, model), usage)| ModelUsage {
                provider: provider.clone(),
                model: model.clone(),
                usage: *usage,
                cost: None,
                prices: None,
            })
            .collect();
        let tracker = &self.surface.context().tracker;
        for (path, hash) in &replay.reads {
            if let Ok(bytes) = std::fs::read(path)
                && crate::tools::history::hash(&bytes) == *hash
                && let Ok(meta) = std::fs::metadata(path)
            {
                tracker.record(path, crate::tools::FileStamp::of(&meta, &bytes));
            }
        }
        self.reads_logged = tracker.since(u64::MAX).1;
    }

    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// Usage and cost per model, sub-agents included.
    pub fn usage_by_model(&self) -> Vec<ModelUsage> {
        let mut list = self.by_model.clone();
        let (provider, model) = self.provider.describe();
        for m in &mut list {
            // A model of a resumed session's earlier turns is priced like
            // the current one when it is the current one.
            if m.prices.is_none() && m.provider == provider && m.model == model {
                m.prices = self.prices;
            }
            m.cost = m.prices.map(|p| p.cost(&m.usage));
        }
        list
    }

    /// USD so far: the sum over the models whose prices are known (`None`
    /// when none is).
    pub fn cost(&self) -> Option<f64> {
        let list = self.usage_by_model();
        if list.is_empty() {
            return self.prices.map(|_| 0.0);
        }
        let known: Vec<f64> = list.iter().filter_map(|m| m.cost).collect();
        (!known.is_empty()).then(|| known.iter().sum())
    }

    pub fn tool_calls(&self) -> u64 {
        self.tool_calls
    }

    pub fn turns(&self) -> u32 {
        self.turn
    }

    /// Model round trips of the last turn (compaction summaries included).
    pub fn steps(&self) -> u32 {
        self.steps
    }

    /// Time the last turn spent waiting for the model.
    pub fn api_time(&self) -> std::time::Duration {
        self.api_time
    }

    /// Why the model's last response ended, as the session log says it.
    pub fn stop_reason(&self) -> Option<&str> {
        self.stop.as_deref()
    }

    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name.as_str()).collect()
    }

    /// Talks to another model from the next request on.
    pub fn set_provider(
        &mut self,
        provider: Arc<dyn Provider>,
        window: Option<u64>,
        prices: Option<Prices>,
    ) {
        if let Some(d) = &self.surface.context().delegate {
            d.set_provider(Arc::clone(&provider));
        }
        let (p, m) = provider.describe();
        self.record(&Entry::Model {
            provider: p.to_string(),
            model: m.to_string(),
        });
        self.provider = provider;
        self.budget = Budget::of(window);
        self.prices = prices;
        self.calibration = 1000;
    }

    pub fn surface(&self) -> &Arc<Surface> {
        &self.surface
    }

    pub fn provider(&self) -> &dyn Provider {
        self.provider.as_ref()
    }

    /// The estimated size of the next request, in tokens, the window, and
    /// whether the window is known (not assumed).
    pub fn context(&self) -> (u64, u64, bool) {
        (self.estimate(), self.budget.window, self.budget.known)
    }

    fn estimate(&self) -> u64 {
        let bytes = self.fixed_bytes + self.sizes.iter().sum::<u64>();
        bytes / compact::BYTES_PER_TOKEN * self.calibration / 1000
    }

    fn add_usage(&mut self, step: Usage) {
        self.usage += step;
        let (provider, model) = self.provider.describe();
        match self
            .by_model
            .iter_mut()
            .find(|m| m.provider == provider && m.model == model)
        {
            Some(m) => {
                m.usage += step;
                m.prices = m.prices.or(self.prices);
            }
            None => self.by_model.push(ModelUsage {
                provider: provider.to_string(),
                model: model.to_string(),
                usage: step,
                cost: None,
                prices: self.prices,
            }),
        }
        self.record(&Entry::Usage {
            provider: provider.to_string(),
            model: model.to_string(),
            usage: step,
        });
    }

    /// Runs one turn and returns the model's final text.
    pub async fn run_turn(
        &mut self,
        prompt: &str,
        on_event: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<String, TurnError> {
        self.turn += 1;
        self.steps = 0;
        self.api_time = std::time::Duration::ZERO;
        if self.checkpoints {
            self.surface.context().history.begin_turn(self.turn);
        }
        // Where the prompt begins: a new message, or the end of a user
        // message a cancelled turn left (results without an answer).
        let start = match self.messages.last() {
            Some(m) if m.role == Role::User => (self.messages.len() - 1, m.content.len()),
            _ => (self.messages.len(), 0),
        };
        self.turn_starts.push((self.turn, start));
        self.record(&Entry::User {
            turn: self.turn,
            text: prompt.to_string(),
            time: time::OffsetDateTime::now_utc().unix_timestamp(),
            auto: false,
        });
        self.push_user(Content::Text {
            text: prompt.to_string(),
        });
        let outcome = self.turn_steps(on_event, cancel).await;
        self.record(&Entry::TurnEnd {
            turn: self.turn,
            outcome: match &outcome {
                Ok(_) => "done".into(),
                Err(e) => e.to_string(),
            },
            stop: self.stop.clone(),
        });
        self.end_step();
        if let Some(log) = &self.log {
            log.flush();
        }
        outcome
    }

    /// After each step: what the model read goes to the log, and the log
    /// to the disk.
    fn end_step(&mut self) {
        let Some(log) = &self.log else { return };
        let tracker = &self.surface.context().tracker;
        let (files, version) = tracker.since(self.reads_logged);
        if !files.is_empty() {
            log.append(&Entry::Reads {
                files: files
                    .into_iter()
                    .filter(|(_, s)| s.prefix.is_none())
                    .map(|(p, s)| (p, format!("{:032x}", s.hash)))
                    .collect(),
            });
        }
        self.reads_logged = version;
        for d in self.surface.gate().take_decisions() {
            log.append(&Entry::Approval {
                call_id: d.call_id,
                tool: d.tool,
                decision: d.decision,
                by: d.by,
                scope: d.scope,
            });
        }
        log.sync();
    }

    async fn turn_steps(
        &mut self,
        on_event: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<String, TurnError> {
        // The last step's calls and results, and how many steps in a row
        // had exactly those.
        let mut last_step: Vec<u64> = Vec::new();
        let mut streak = 0u32;
        let mut continued = false;
        let mut partial = String::new();
        let mut overflowed = false;
        let mut step = 0;
        while step < self.max_steps {
            step += 1;
            self.refresh_tools();
            let grown = self
                .compacted_to
                .is_none_or(|to| self.estimate() > to + self.budget.window / 10);
            if self.budget.known && self.estimate() > self.budget.limit() && grown {
                self.compact(
                    None,
                    "the conversation outgrew the context window",
                    on_event,
                    cancel,
                )
                .await?;
            }
            on_event(AgentEvent::Context {
                tokens: self.estimate(),
                window: self.budget.window,
                known: self.budget.known,
            });
            let estimated = self.estimate();
            let asked = std::time::Instant::now();
            let response = self.request(on_event, cancel).await;
            self.steps += 1;
            self.api_time += asked.elapsed();
            let completion = match response {
                Ok(c) => c,
                Err(LlmError::Cancelled) => return Err(TurnError::Cancelled),
                // The server says the conversation is too long: compact
                // once and try the same step again.
                Err(e) if e.is_context_overflow() && !overflowed => {
                    overflowed = true;
                    // What the server refused is more than its window.
                    if !self.budget.known || estimated < self.budget.window {
                        self.budget = Budget {
                            window: (estimated * 9 / 10).max(1_000),
                            known: true,
                        };
                    }
                    self.compact(None, &e.to_string(), on_event, cancel).await?;
                    step -= 1;
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            let reported = completion.usage.input_tokens
                + completion.usage.cache_read_tokens
                + completion.usage.cache_write_tokens;
            if reported > estimated && estimated > 0 {
                self.calibration = (reported * 1000 / estimated).clamp(1000, 4000);
            }
            self.add_usage(completion.usage);
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
            let stop = completion.stop.clone();
            self.stop = Some(stop_name(&stop));
            if !completion.message.content.is_empty() {
                self.record(&Entry::Assistant {
                    message: completion.message.clone(),
                });
                self.sizes.push(compact::message_bytes(&completion.message));
                self.messages.push(completion.message);
            }
            if calls.is_empty() {
                partial.push_str(&text);
                match stop {
                    // Cut off mid-answer: ask once for the rest.
                    StopReason::MaxTokens if !continued => {
                        continued = true;
                        self.push_user(Content::Text {
                            text: CONTINUE.into(),
                        });
                        self.record(&Entry::User {
                            turn: self.turn,
                            text: CONTINUE.into(),
                            time: time::OffsetDateTime::now_utc().unix_timestamp(),
                            auto: true,
                        });
                        continue;
                    }
                    StopReason::MaxTokens => return Err(TurnError::Truncated(partial)),
                    StopReason::Other(why) if why == "refusal" || why == "content_filter" => {
                        return Err(TurnError::Refused(why));
                    }
                    other if partial.trim().is_empty() => {
                        return Err(TurnError::Empty(stop_name(&other)));
                    }
                    _ => return Ok(partial),
                }
            }
            let mut results = self.run_unique(&calls, on_event, cancel).await;
            let halt = results.iter().find_map(|r| r.halt.clone());
            let mut this_step: Vec<u64> = calls
                .iter()
                .zip(&results)
                .map(|(c, r)| fingerprint(c, r))
                .collect();
            this_step.sort_unstable();
            streak = if this_step == last_step {
                streak + 1
            } else {
                1
            };
            last_step = this_step;
            if streak == MAX_REPEATS {
                for r in &mut results {
                    r.content.push_str(&format!(
                        "\n\n[agent: this is the {MAX_REPEATS}rd time in a row that you made exactly this call and got exactly this result: you are not making progress. Do something different, or stop and tell the person what blocks you.]"
                    ));
                }
            }
            for (call, result) in calls.iter().zip(&results) {
                self.record(&Entry::ToolResult {
                    call_id: result.call_id.clone(),
                    name: call.name.clone(),
                    content: result.content.clone(),
                    is_error: result.is_error,
                    diff: result.diff.clone(),
                    denied: result.denied,
                });
            }
            for r in results {
                self.push_user(Content::ToolResult {
                    call_id: r.call_id,
                    content: r.content,
                    is_error: r.is_error,
                });
            }
            self.end_step();
            if cancel.is_cancelled() {
                return Err(TurnError::Cancelled);
            }
            if let Some(reason) = halt {
                return Err(TurnError::Halted(reason));
            }
            if streak > MAX_REPEATS {
                let call = &calls[0];
                let summary = self.surface.summary(call);
                return Err(TurnError::Repeating {
                    tool: call.name.clone(),
                    call: if summary.trim().is_empty() {
                        call.arguments.clone()
                    } else {
                        summary
                    },
                    times: streak,
                });
            }
        }
        Err(TurnError::StepLimit(self.max_steps))
    }

    /// One request with the conversation as it is.
    async fn request(
        &self,
        on_event: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<crate::llm::Completion, LlmError> {
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
        let request = Request {
            system: &self.system,
            messages: &self.messages,
            tools: &self.tools,
            conversation: Some(self.conversation),
        };
        self.provider.stream(request, &forward, cancel).await
    }

    /// `/compact [focus]`: compacts now, whatever the size.
    pub async fn compact_now(
        &mut self,
        focus: Option<&str>,
        on_event: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<(), TurnError> {
        if self.messages.is_empty() {
            return Ok(());
        }
        let r = self.compact(focus, "asked for", on_event, cancel).await;
        self.end_step();
        r
    }

    /// Replaces the conversation with a summary of its older part plus the
    /// most recent messages that fit, and records it in the log (the full
    /// history stays there). When the summary cannot be made, the oldest
    /// part is dropped instead and a notice says so; the turn goes on.
    async fn compact(
        &mut self,
        focus: Option<&str>,
        why: &str,
        on_event: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<(), TurnError> {
        let before = self.estimate();
        // Tokens to bytes as the estimate counts them (with the server's
        // calibration), so what is kept fits by the same measure.
        let calibration = self.calibration;
        let bytes = |tokens: u64| tokens * compact::BYTES_PER_TOKEN * 1000 / calibration;
        let split = compact::split_point(&self.messages, &self.sizes, bytes(self.budget.recent()));
        let old = self.messages[..split].to_vec();
        let mut recent = self.messages[split..].to_vec();
        // The person's latest request, verbatim, if it is in the old part.
        let latest = old.iter().rev().find_map(|m| {
            (m.role == Role::User)
                .then(|| {
                    m.content.iter().rev().find_map(|c| match c {
                        Content::Text { text } => Some(text.clone()),
                        _ => None,
                    })
                })
                .flatten()
        });
        let room = bytes(self.budget.limit().saturating_sub(1_000)).saturating_sub(self.fixed_bytes)
            as usize;
        let summary = if old.is_empty() {
            Err("nothing old enough to summarize".to_string())
        } else {
            self.summarize(&old, focus, room, cancel).await
        };
        if cancel.is_cancelled() {
            return Err(TurnError::Cancelled);
        }
        let (mut text, truncated, reason) = match summary {
            Ok(s) => (
                format!(
                    "This session was compacted: the summary below replaces the earlier conversation.\n\n{}",
                    s.trim()
                ),
                false,
                why.to_string(),
            ),
            Err(e) => (
                format!(
                    "The oldest part of this session was dropped to fit the model's context window (a summary could not be made: {e})."
                ),
                true,
                e,
            ),
        };
        if let Some(latest) = latest {
            text.push_str("\n\nThe person's most recent request, verbatim:\n");
            text.push_str(&latest);
        }
        text.push_str(&self.reattach_files());
        let mut messages = vec![Message {
            role: Role::User,
            content: vec![Content::Text { text }],
        }];
        if recent.first().is_some_and(|m| m.role == Role::User) {
            let first = recent.remove(0);
            messages[0].content.extend(first.content);
        }
        messages.extend(recent);
        // What is kept must fit, with the summary, under the limit.
        let fixed = self.fixed_bytes;
        compact::shrink(
            &mut messages,
            bytes(self.budget.limit()).saturating_sub(fixed),
        );
        self.messages = messages;
        self.sizes = self.messages.iter().map(compact::message_bytes).collect();
        self.conversation.epoch += 1;
        self.turn_starts.clear();
        let after = self.estimate();
        self.compacted_to = Some(after);
        let (kept, _) = self.surface.context().tracker.since(0);
        self.record(&Entry::Compaction {
            messages: self.messages.clone(),
            before,
            after,
            truncated,
            reads: kept
                .into_iter()
                .filter(|(_, s)| s.prefix.is_none())
                .map(|(p, s)| (p, format!("{:032x}", s.hash)))
                .collect(),
        });
        on_event(AgentEvent::Compacted {
            before,
            after,
            truncated,
            reason,
        });
        Ok(())
    }

    /// Asks the model for the summary of `old`, without tools.
    async fn summarize(
        &mut self,
        old: &[Message],
        focus: Option<&str>,
        room: usize,
        cancel: &CancellationToken,
    ) -> Result<String, String> {
        let conversation = compact::render(old, room.max(4_000));
        let focus = focus
            .map(|f| format!("\n\nThe person asks the summary to focus on: {f}"))
            .unwrap_or_default();
        let mut values = prompt::environment(self.surface.context().workspace.root());
        values.push(("focus", focus));
        values.push(("conversation", conversation));
        let text = crate::tools::render(include_str!("../../templates/compact.md"), &values);
        let messages = [Message::user(text)];
        let request = Request {
            system: "Compaction: you write the summary of a coding session so that it can continue without its history.",
            messages: &messages,
            tools: &[],
            conversation: None,
        };
        let quiet = |_: StreamEvent| {};
        match self.provider.stream(request, &quiet, cancel).await {
            Ok(c) => {
                self.add_usage(c.usage);
                let s = c.message.text();
                if s.trim().is_empty() {
                    Err("the model answered with an empty summary".into())
                } else {
                    Ok(s)
                }
            }
            Err(e) => Err(e.to_string()),
        }
    }

    /// The current content of the files read most recently, while they fit
    /// the budget and are still what the model saw: those stay "read". Every
    /// other file must be viewed again before it is changed, since its
    /// content is no longer in the conversation.
    fn reattach_files(&self) -> String {
        let tracker = &self.surface.context().tracker;
        let (files, _) = tracker.since(0);
        let mut room =
            (self.budget.files() * compact::BYTES_PER_TOKEN * 1000 / self.calibration) as usize;
        let mut kept: Vec<std::path::PathBuf> = Vec::new();
        let mut out = String::new();
        for (path, stamp) in files {
            if stamp.prefix.is_some() || stamp.size as usize > room {
                continue;
            }
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            let Ok(text) = std::str::from_utf8(&bytes) else {
                continue;
            };
            if xxhash_rust::xxh3::xxh3_128(&bytes) != stamp.hash {
                continue;
            }
            room -= bytes.len();
            out.push_str(&format!(
                "\n\nCurrent content of {} (you may edit it without viewing it again):\n```\n{}\n```",
                path.display(),
                text.trim_end_matches('\n')
            ));
            kept.push(path);
        }
        tracker.retain(&|p| kept.iter().any(|k| k == p));
        out
    }

    /// `/rewind`: the conversation as it was before turn `turn` (a turn
    /// since the last compaction); returns that turn's prompt.
    pub fn rewind(&mut self, turn: u32) -> Option<String> {
        let i = self.turn_starts.iter().position(|(t, _)| *t == turn)?;
        let (_, (at, block)) = self.turn_starts[i];
        let prompt = self.prompt_at(at, block);
        self.turn_starts.truncate(i);
        self.messages.truncate(at + 1);
        if let Some(m) = self.messages.get_mut(at) {
            m.content.truncate(block);
            if m.content.is_empty() {
                self.messages.truncate(at);
            }
        }
        self.sizes = self.messages.iter().map(compact::message_bytes).collect();
        self.conversation.epoch += 1;
        self.record(&Entry::Rewind {
            keep: at,
            keep_blocks: Some(block),
        });
        if let Some(log) = &self.log {
            log.flush();
        }
        prompt
    }

    /// The prompt that begins at block `block` of message `at`.
    fn prompt_at(&self, at: usize, block: usize) -> Option<String> {
        self.messages.get(at)?.content[block..]
            .iter()
            .find_map(|c| match c {
                Content::Text { text } => Some(text.clone()),
                _ => None,
            })
    }

    /// Turns the conversation can be rewound to, with their prompts.
    pub fn rewind_points(&self) -> Vec<(u32, String)> {
        self.turn_starts
            .iter()
            .filter_map(|(t, (at, block))| Some((*t, self.prompt_at(*at, *block)?)))
            .collect()
    }

    /// Records an undo (or redo) of `checkpoint` that restored `files`;
    /// the model must read them again before changing them.
    pub fn note_undo(&self, checkpoint: &str, redo: bool, files: &[std::path::PathBuf]) {
        let tracker = &self.surface.context().tracker;
        for f in files {
            tracker.forget(f);
        }
        self.record(&Entry::Undo {
            checkpoint: checkpoint
                .rsplit('-')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0),
            redo,
            files: files.to_vec(),
        });
        if let Some(log) = &self.log {
            log.flush();
        }
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
        self.fixed_bytes = self.system.len() as u64
            + self
                .tools
                .iter()
                .map(|t| {
                    (t.name.len() + t.description.len() + t.parameters.to_string().len()) as u64
                })
                .sum::<u64>();
    }

    /// Runs the calls of one response, each distinct call once: a call
    /// identical to an earlier one in the same response (same tool, same
    /// arguments) is answered with a pointer to that one's result.
    async fn run_unique(
        &mut self,
        calls: &[ToolCall],
        on_event: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> Vec<ToolResult> {
        let first: Vec<Option<usize>> = calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                calls[..i]
                    .iter()
                    .position(|e| e.name == c.name && e.arguments == c.arguments)
            })
            .collect();
        if first.iter().all(Option::is_none) {
            return self.run_calls(calls, on_event, cancel).await;
        }
        let unique: Vec<ToolCall> = calls
            .iter()
            .zip(&first)
            .filter(|(_, f)| f.is_none())
            .map(|(c, _)| c.clone())
            .collect();
        let mut ran = self.run_calls(&unique, on_event, cancel).await.into_iter();
        let mut results: Vec<ToolResult> = Vec::with_capacity(calls.len());
        for (c, f) in calls.iter().zip(&first) {
            match f {
                None => results.extend(ran.next()),
                Some(j) => {
                    let original = &calls[*j];
                    let r = ToolResult {
                        call_id: c.id.clone(),
                        content: format!(
                            "Not run: this call is identical to call `{}` earlier in this response (same tool, same arguments); its result is the result of this one too.",
                            original.id
                        ),
                        is_error: false,
                        diff: None,
                        denied: false,
                        notices: Vec::new(),
                        halt: None,
                    };
                    on_event(AgentEvent::ToolCall {
                        id: c.id.clone(),
                        name: c.name.clone(),
                        arguments: c.arguments.clone(),
                        summary: self.surface.summary(c),
                        preview: self.surface.preview(&c.name),
                    });
                    on_event(AgentEvent::ToolResult {
                        id: c.id.clone(),
                        name: c.name.clone(),
                        content: r.content.clone(),
                        is_error: false,
                        diff: None,
                        denied: false,
                        notices: Vec::new(),
                    });
                    results.push(r);
                }
            }
        }
        results
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
            let surface = Arc::clone(&self.surface);
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
            let mut steps = Vec::new();
            let mut report = |(id, ev): (String, ProgressEvent)| match ev {
                ProgressEvent::Step(text) => on_event(AgentEvent::ToolProgress { id, text }),
                ProgressEvent::Usage(step) => {
                    usage += step;
                    steps.push(step);
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
            // Sub-agents' usage counts, per model, in the log too.
            for step in steps {
                self.add_usage(step);
            }
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
        let added = compact::message_bytes(&Message {
            role: Role::User,
            content: vec![content.clone()],
        });
        let joins = self.messages.last().is_some_and(|m| m.role == Role::User);
        crate::session::store::push_user(&mut self.messages, content);
        match (joins, self.sizes.last_mut()) {
            (true, Some(last)) => *last += added,
            _ => self.sizes.push(added),
        }
    }
}

/// A stop reason as the logs and the JSON result name it.
fn stop_name(s: &StopReason) -> String {
    match s {
        StopReason::EndTurn => "end_turn".into(),
        StopReason::ToolUse => "tool_use".into(),
        StopReason::MaxTokens => "max_tokens".into(),
        StopReason::Other(o) => o.clone(),
    }
}

fn fingerprint(call: &ToolCall, result: &ToolResult) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    call.name.hash(&mut h);
    call.arguments.hash(&mut h);
    result.content.hash(&mut h);
    h.finish()
}
