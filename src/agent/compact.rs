//! Automatic compaction: how big the conversation is, where to cut it, and
//! what goes to the model to summarize the part that is cut.
//!
//! Sizes are estimated from the encoded size of each message, counted once
//! when it joins the conversation (so the estimate costs nothing per round
//! trip), at [`BYTES_PER_TOKEN`], and raised to what the server reported
//! when it counted more.

use crate::llm::{Content, Message, Role};

/// Bytes of encoded conversation per token, on the low side (JSON and code
/// run at 3–4 bytes per token), so the estimate errs towards compacting.
pub const BYTES_PER_TOKEN: u64 = 3;

/// Encoded size of a message, without building the text.
pub fn message_bytes(m: &Message) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len() as u64;
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = serde_json::to_writer(&mut c, m);
    c.0
}

/// The shares of a context window.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub window: u64,
    /// Configured, built in or learned from the server's refusal; an
    /// assumed window never triggers compaction by itself.
    pub known: bool,
}

impl Budget {
    pub fn of(window: Option<u64>) -> Budget {
        match window {
            Some(w) => Budget {
                window: w.max(1_000),
                known: true,
            },
            None => Budget {
                window: crate::llm::DEFAULT_CONTEXT_WINDOW,
                known: false,
            },
        }
    }
}

impl Budget {
    /// Left free for the answer (and, when compacting, the summary).
    pub fn reserve(&self) -> u64 {
        (self.window / 5).max(256)
    }

    /// A request estimated above this is compacted first.
    pub fn limit(&self) -> u64 {
        self.window.saturating_sub(self.reserve())
    }

    /// Tokens of the most recent messages kept word for word.
    pub fn recent(&self) -> u64 {
        self.window * 3 / 10
    }

    /// Tokens of current file contents attached to the summary.
    pub fn files(&self) -> u64 {
        self.window / 10
    }
}

/// Whether the kept part may start at message `i`: an assistant message
/// (after the summary, which is a user message), or a user message that
/// carries no tool results (those need the call before them).
fn can_start(messages: &[Message], i: usize) -> bool {
    i > 0
        && match messages[i].role {
            Role::Assistant => true,
            Role::User => !messages[i]
                .content
                .iter()
                .any(|c| matches!(c, Content::ToolResult { .. })),
        }
}

/// Where the kept part starts: the longest tail within `budget` bytes that
/// starts where it may, else the shortest such tail; `messages.len()` when
/// none may start anywhere.
pub fn split_point(messages: &[Message], sizes: &[u64], budget: u64) -> usize {
    let mut tail = 0;
    let mut best = None;
    for i in (1..messages.len()).rev() {
        tail += sizes[i];
        if can_start(messages, i) {
            if tail <= budget || best.is_none() {
                best = Some(i);
            }
            if tail > budget {
                break;
            }
        }
    }
    best.unwrap_or(messages.len())
}

/// Longest a tool result or text is kept in the summary's transcript.
const RENDER_CUT: usize = 2_000;

/// The conversation as text for the summary request, at most `max` bytes:
/// long tool results and texts are cut, and when it is still too long the
/// oldest part goes first.
pub fn render(messages: &[Message], max: usize) -> String {
    let mut parts: Vec<String> = Vec::new();
    for m in messages {
        for c in &m.content {
            let part = match (m.role, c) {
                (Role::User, Content::Text { text }) => format!("[person]\n{}", cut(text)),
                (Role::Assistant, Content::Text { text }) => format!("[you]\n{}", cut(text)),
                (
                    _,
                    Content::ToolCall {
                        name, arguments, ..
                    },
                ) => format!("[you called {name}] {}", cut(arguments)),
                (
                    _,
                    Content::ToolResult {
                        content, is_error, ..
                    },
                ) => format!(
                    "[{}]\n{}",
                    if *is_error {
                        "tool error"
                    } else {
                        "tool result"
                    },
                    cut(content)
                ),
                _ => continue,
            };
            parts.push(part);
        }
    }
    let mut total: usize = parts.iter().map(|p| p.len() + 2).sum();
    let mut first = 0;
    while total > max && first < parts.len() {
        total -= parts[first].len() + 2;
        first += 1;
    }
    let mut out = String::new();
    if first > 0 {
        out.push_str("[the oldest part of the conversation is left out]\n\n");
    }
    out.push_str(&parts[first..].join("\n\n"));
    out
}

fn cut(s: &str) -> String {
    match s.char_indices().nth(RENDER_CUT) {
        Some((i, _)) => format!("{}\n[... {} more bytes]", &s[..i], s.len() - i),
        None => s.to_string(),
    }
}

/// Cuts the longest tool results and texts of `messages` until their
/// encoded size is within `budget` bytes (or nothing long is left).
pub fn shrink(messages: &mut [Message], budget: u64) {
    loop {
        let size: u64 = messages.iter().map(message_bytes).sum();
        if size <= budget {
            return;
        }
        let longest = messages
            .iter_mut()
            .flat_map(|m| m.content.iter_mut())
            .filter_map(|c| match c {
                Content::ToolResult { content, .. } => Some((content, false)),
                Content::Text { text } => Some((text, false)),
                Content::ToolCall { arguments, .. } => Some((arguments, true)),
                _ => None,
            })
            .max_by_key(|(s, _)| s.len());
        let Some((s, arguments)) = longest else {
            return;
        };
        if s.len() <= 256 {
            return;
        }
        if arguments {
            // Arguments must stay a JSON object; the call was made already.
            *s = serde_json::json!({
                "note": format!("{} bytes of arguments cut to fit the model's context window", s.len())
            })
            .to_string();
            continue;
        }
        let over = (size - budget) as usize;
        let keep = s.len().saturating_sub(over + 128).max(128).min(s.len() / 2);
        let mut at = keep;
        while !s.is_char_boundary(at) {
            at -= 1;
        }
        let dropped = s.len() - at;
        s.truncate(at);
        s.push_str(&format!(
            "\n[{dropped} bytes cut to fit the model's context window]"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str) -> Message {
        Message {
            role: Role::Assistant,
            content: vec![Content::ToolCall {
                id: id.into(),
                name: "view".into(),
                arguments: "{}".into(),
            }],
        }
    }

    fn result(id: &str, n: usize) -> Message {
        Message {
            role: Role::User,
            content: vec![Content::ToolResult {
                call_id: id.into(),
                content: "x".repeat(n),
                is_error: false,
            }],
        }
    }

    #[test]
    fn the_kept_part_starts_at_a_call_never_at_its_results() {
        let m = vec![
            Message::user("do it"),
            call("a"),
            result("a", 1000),
            call("b"),
            result("b", 1000),
        ];
        let sizes: Vec<u64> = m.iter().map(message_bytes).collect();
        // Room for one call and its result.
        assert_eq!(split_point(&m, &sizes, 1200), 3);
        // Room for everything after the prompt.
        assert_eq!(split_point(&m, &sizes, 100_000), 1);
        // Room for nothing: the shortest tail that may start.
        assert_eq!(split_point(&m, &sizes, 10), 3);
        assert_eq!(split_point(&m[..1], &sizes[..1], 10), 1);
    }

    #[test]
    fn shrink_cuts_the_longest_until_it_fits() {
        let mut m = vec![call("a"), result("a", 50_000)];
        shrink(&mut m, 5_000);
        let size: u64 = m.iter().map(message_bytes).sum();
        assert!(size <= 5_000, "{size}");
        let Content::ToolResult { content, .. } = &m[1].content[0] else {
            panic!()
        };
        assert!(content.ends_with("cut to fit the model's context window]"));
    }

    #[test]
    fn shrink_replaces_long_arguments_with_a_json_note() {
        let mut m = vec![Message {
            role: Role::Assistant,
            content: vec![Content::ToolCall {
                id: "w".into(),
                name: "write".into(),
                arguments: serde_json::json!({"content": "y".repeat(20_000)}).to_string(),
            }],
        }];
        shrink(&mut m, 1_000);
        let Content::ToolCall { arguments, .. } = &m[0].content[0] else {
            panic!()
        };
        let v: serde_json::Value = serde_json::from_str(arguments).unwrap();
        assert!(v["note"].as_str().unwrap().contains("cut to fit"), "{v}");
    }

    #[test]
    fn render_drops_the_oldest_first() {
        let m = vec![
            Message::user("first task"),
            call("a"),
            result("a", 10),
            Message::user("second task"),
        ];
        let all = render(&m, 100_000);
        assert!(all.starts_with("[person]\nfirst task"), "{all}");
        let some = render(&m, 60);
        assert!(
            some.contains("second task") && !some.contains("first task"),
            "{some}"
        );
        assert!(some.starts_with("[the oldest part"));
    }
}
