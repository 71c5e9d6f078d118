//! Compacting a session: its conversation replaced by a summary of the
//! older part, the recent messages and the files still as the model saw
//! them. Sizes and where to cut are in `compact`.

use tokio_util::sync::CancellationToken;

use super::{AgentEvent, EventSink, Session, TurnError, compact, prompt};
use crate::llm::{Content, Message, Request, Role, StreamEvent};
use crate::transcript::Entry;

impl Session {
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
    pub(super) async fn compact(
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
}
