//! The turn loop: a prompt in, model round trips (compacting when the
//! context outgrows the window, continuing a cut-off answer once), each
//! response's tool calls run and their results appended, until the model
//! answers without calls or a limit, a hook or a cancel ends the turn.

use std::hash::{Hash, Hasher};

use tokio_util::sync::CancellationToken;

use super::{AgentEvent, Budget, EventSink, Session, TurnError, compact};
use crate::llm::{Content, LlmError, Request, Role, StopReason, StreamEvent};
use crate::tools::{ToolCall, ToolResult};
use crate::transcript::Entry;

/// The same calls with the same results this many steps in a row: the
/// model is told it is not making progress; once more ends the turn.
const MAX_REPEATS: u32 = 3;

/// What a cut-off answer gets, once, to go on.
const CONTINUE: &str = "Your answer was cut off by the output token limit. Continue exactly where it stopped, without repeating what you already wrote.";

impl Session {
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
    pub(super) fn end_step(&mut self) {
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
                let summary = self.surface.prepare(call).summary();
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
