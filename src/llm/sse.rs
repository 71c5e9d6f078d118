//! Server-sent events, decoded incrementally from network chunks.
//!
//! Written by hand (about 80 lines) because the parser must work on bytes:
//! a line is decoded only once it is complete, so a UTF-8 character split
//! across two network chunks always comes out whole, and a `\r\n` split
//! across chunks is one line end. Follows the WHATWG event-stream rules for
//! the fields we use (`event`, `data`, comments).

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field; empty when the server sent none.
    pub event: String,
    pub data: String,
}

#[derive(Debug, Default)]
pub struct SseParser {
    buf: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
}

impl SseParser {
    /// Feeds one chunk; returns the events it completed.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        self.buf.extend_from_slice(chunk);
        let mut events = Vec::new();
        let mut start = 0;
        let mut i = 0;
        while i < self.buf.len() {
            let b = self.buf[i];
            if b == b'\n' || b == b'\r' {
                // A lone `\r` at the end may be the first half of `\r\n`.
                if b == b'\r' && i + 1 == self.buf.len() {
                    break;
                }
                let line = String::from_utf8_lossy(&self.buf[start..i]).into_owned();
                let end = if b == b'\r' && self.buf[i + 1] == b'\n' {
                    i + 2
                } else {
                    i + 1
                };
                if let Some(event) = self.line(&line) {
                    events.push(event);
                }
                start = end;
                i = end;
            } else {
                i += 1;
            }
        }
        self.buf.drain(..start);
        events
    }

    fn line(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            let event = std::mem::take(&mut self.event);
            if !std::mem::take(&mut self.has_data) {
                return None;
            }
            let mut data = std::mem::take(&mut self.data);
            data.pop(); // the newline after the last data line
            return Some(SseEvent { event, data });
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = value.to_string(),
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut p = SseParser::default();
        chunks.iter().flat_map(|c| p.push(c)).collect()
    }

    fn ev(event: &str, data: &str) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
        }
    }

    #[test]
    fn events_with_and_without_names() {
        let got = all(&[b"event: a\ndata: {\"x\":1}\n\ndata: [DONE]\n\n"]);
        assert_eq!(got, vec![ev("a", "{\"x\":1}"), ev("", "[DONE]")]);
    }

    #[test]
    fn utf8_split_across_chunks_comes_out_whole() {
        let text = "data: héllo 世界 🦀\n\n".as_bytes();
        // Split at every byte: every multi-byte character is cut somewhere.
        let chunks: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(all(&chunks), vec![ev("", "héllo 世界 🦀")]);
    }

    #[test]
    fn crlf_split_between_chunks_is_one_line_end() {
        let got = all(&[b"data: a\r", b"\n\r", b"\ndata: b\r\r\n"]);
        assert_eq!(got, vec![ev("", "a"), ev("", "b")]);
    }

    #[test]
    fn comments_and_multiline_data() {
        let got = all(&[b": keep-alive\n\ndata: one\ndata:two\nid: 7\n\n"]);
        assert_eq!(got, vec![ev("", "one\ntwo")]);
    }

    #[test]
    fn incomplete_event_waits_for_blank_line() {
        let mut p = SseParser::default();
        assert!(p.push(b"event: x\ndata: 1\n").is_empty());
        assert_eq!(p.push(b"\n"), vec![ev("x", "1")]);
    }
}
