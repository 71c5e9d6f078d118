//! A resumed session on screen: its log's entries become the events a
//! live session sends.

use tokio::sync::mpsc;

use super::UiEvent;
use crate::agent::Session;
use crate::transcript::Entry;

/// Draws a resumed session: its transcript, what could not be read, and
/// where it stands.
pub(super) fn show_resumed(
    ui: &mpsc::UnboundedSender<UiEvent>,
    session: &Session,
    loaded: &crate::transcript::Loaded,
) {
    for ev in replay(session, &loaded.entries) {
        let _ = ui.send(ev);
    }
    for w in &loaded.warnings {
        let _ = ui.send(UiEvent::Notice(w.clone(), true));
    }
    let _ = ui.send(UiEvent::Notice(
        format!(
            "Resumed session {} ({} turns).",
            session.id,
            session.turns()
        ),
        false,
    ));
}

/// The transcript of a resumed session as the UI draws a live one.
fn replay(session: &Session, entries: &[Entry]) -> Vec<UiEvent> {
    let surface = session.surface();
    let mut out = Vec::new();
    for e in entries {
        match e {
            Entry::User {
                text, auto: false, ..
            } => out.push(UiEvent::User(text.clone())),
            Entry::Assistant { message } => {
                let text = message.text();
                if !text.is_empty() {
                    out.push(UiEvent::Agent(crate::agent::AgentEvent::TextDelta { text }));
                }
                for c in &message.content {
                    if let crate::llm::Content::ToolCall {
                        id,
                        name,
                        arguments,
                    } = c
                    {
                        let call = crate::tools::ToolCall {
                            id: id.clone(),
                            name: name.clone(),
                            arguments: arguments.clone(),
                        };
                        let prepared = surface.prepare(&call);
                        out.push(UiEvent::Agent(crate::agent::AgentEvent::ToolCall {
                            summary: prepared.summary(),
                            preview: prepared.preview(),
                            id: id.clone(),
                            name: name.clone(),
                            arguments: arguments.clone(),
                        }));
                    }
                }
            }
            Entry::ToolResult {
                call_id,
                name,
                content,
                is_error,
                diff,
                denied,
            } => out.push(UiEvent::Agent(crate::agent::AgentEvent::ToolResult {
                id: call_id.clone(),
                name: name.clone(),
                content: content.clone(),
                is_error: *is_error,
                diff: diff.clone(),
                denied: *denied,
                notices: Vec::new(),
            })),
            Entry::Compaction {
                before,
                after,
                truncated,
                ..
            } => out.push(UiEvent::Agent(crate::agent::AgentEvent::Compacted {
                before: *before,
                after: *after,
                truncated: *truncated,
                reason: String::new(),
            })),
            Entry::Undo { files, redo, .. } => out.push(UiEvent::Notice(
                format!(
                    "{} {} file(s)",
                    if *redo { "Redid" } else { "Undid" },
                    files.len()
                ),
                false,
            )),
            Entry::TurnEnd { outcome, .. } if outcome != "done" => {
                out.push(UiEvent::Notice(outcome.clone(), true))
            }
            _ => {}
        }
    }
    out
}
