//! Server-sent events, decoded incrementally from network chunks.
//!
//! Written by hand because the parser must work on bytes: a line is decoded
//! only once it is complete, so a UTF-8 character split across two network
//! chunks always comes out whole, and a `\r\n` split across chunks is one
//! line end. Follows the WHATWG event-stream rules for the fields we use
//! (`event`, `data`, comments; a leading BOM is dropped).
//!
//! Linear in the input whatever the chunking: complete lines are read
//! straight from the chunk, and only an unfinished line is kept, appended to
//! as more arrives (never rescanned). A line or an event longer than the
//! parser's limit is an error instead of unbounded memory.

/// The default cap on one line or one event's data: far above any real
/// response (a whole file written by a tool call is a few MB).
pub const MAX_EVENT_BYTES: usize = 32 * 1024 * 1024;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field; empty when the server sent none.
    pub event: String,
    pub data: String,
}

/// A line or an event's data passed the parser's limit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the server sent an event of more than {} MB without ending it", .limit / (1024 * 1024))]
pub struct TooLong {
    pub limit: usize,
}

#[derive(Debug)]
pub struct SseParser {
    /// An unfinished line (no terminator seen yet).
    line: Vec<u8>,
    /// The last line ended with `\r`: a `\n` first in the next chunk belongs to it.
    after_cr: bool,
    /// Nothing was read yet: a UTF-8 BOM here is dropped.
    at_start: bool,
    event: String,
    data: String,
    has_data: bool,
    limit: usize,
}

impl Default for SseParser {
    fn default() -> Self {
        SseParser::with_limit(MAX_EVENT_BYTES)
    }
}

impl SseParser {
    /// A parser that refuses lines and events longer than `limit` bytes.
    pub fn with_limit(limit: usize) -> SseParser {
        SseParser {
            line: Vec::new(),
            after_cr: false,
            at_start: true,
            event: String::new(),
            data: String::new(),
            has_data: false,
            limit,
        }
    }

    /// Feeds one chunk; returns the events it completed.
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, TooLong> {
        let mut events = Vec::new();
        let mut rest = chunk;
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
            }
        }
        while let Some(i) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            let (head, tail) = rest.split_at(i);
            if self.line.is_empty() {
                self.line_done(head, &mut events)?;
            } else {
                self.grow(head)?;
                let line = std::mem::take(&mut self.line);
                self.line_done(&line, &mut events)?;
                self.line = line;
                self.line.clear();
            }
            rest = &tail[1..];
            if tail[0] == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
        }
        self.grow(rest)?;
        Ok(events)
    }

    fn grow(&mut self, bytes: &[u8]) -> Result<(), TooLong> {
        if self.line.len() + bytes.len() > self.limit {
            return Err(TooLong { limit: self.limit });
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn line_done(&mut self, mut line: &[u8], events: &mut Vec<SseEvent>) -> Result<(), TooLong> {
        if std::mem::take(&mut self.at_start) {
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        }
        if line.is_empty() {
            let event = std::mem::take(&mut self.event);
            if std::mem::take(&mut self.has_data) {
                let mut data = std::mem::take(&mut self.data);
                data.pop(); // the newline after the last data line
                events.push(SseEvent { event, data });
            }
            return Ok(());
        }
        if line[0] == b':' {
            return Ok(());
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"event" => self.event = String::from_utf8_lossy(value).into_owned(),
            b"data" => {
                if self.data.len() + value.len() + 1 > self.limit {
                    return Err(TooLong { limit: self.limit });
                }
                self.data.push_str(&String::from_utf8_lossy(value));
                self.data.push('\n');
                self.has_data = true;
            }
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut p = SseParser::default();
        chunks.iter().flat_map(|c| p.push(c).unwrap()).collect()
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
    fn lone_cr_ends_a_line_without_waiting() {
        let mut p = SseParser::default();
        assert_eq!(p.push(b"data: a\r\r").unwrap(), vec![ev("", "a")]);
        // The `\n` that did not come is not needed, and a later one is a blank line.
        assert_eq!(p.push(b"data: b\n\n").unwrap(), vec![ev("", "b")]);
    }

    #[test]
    fn comments_and_multiline_data() {
        let got = all(&[b": keep-alive\n\ndata: one\ndata:two\nid: 7\ndata\n\n"]);
        assert_eq!(got, vec![ev("", "one\ntwo\n")]);
    }

    #[test]
    fn leading_bom_is_dropped() {
        let got = all(&[b"\xEF\xBB", b"\xBFdata: x\n\n"]);
        assert_eq!(got, vec![ev("", "x")]);
    }

    #[test]
    fn incomplete_event_waits_for_blank_line() {
        let mut p = SseParser::default();
        assert!(p.push(b"event: x\ndata: 1\n").unwrap().is_empty());
        assert_eq!(p.push(b"\n").unwrap(), vec![ev("x", "1")]);
    }

    #[test]
    fn a_line_or_event_over_the_limit_is_an_error() {
        let mut p = SseParser::with_limit(16);
        assert!(p.push(b"data: 0123456").unwrap().is_empty());
        assert_eq!(p.push(b"789abcdef"), Err(TooLong { limit: 16 }));
        // Short lines that add up to a long event are refused too.
        let mut p = SseParser::with_limit(16);
        assert_eq!(
            p.push(b"data: 01234\ndata: 56789\ndata: abcde\n"),
            Err(TooLong { limit: 16 })
        );
        // Up to the limit is fine.
        let mut p = SseParser::with_limit(16);
        assert_eq!(
            p.push(b"data: 0123456789\n\n").unwrap(),
            vec![ev("", "0123456789")]
        );
    }

    #[test]
    fn a_large_event_in_small_chunks_is_whole() {
        let payload = "x".repeat(1 << 20);
        let text = format!("data: {payload}\n\n");
        let mut p = SseParser::default();
        let mut got = Vec::new();
        for c in text.as_bytes().chunks(4096) {
            got.extend(p.push(c).unwrap());
        }
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].data.len(), payload.len());
    }

    /// Random streams of fields, comments, blank lines, every line ending,
    /// multi-byte characters and a BOM, split at random points: the events
    /// never depend on where the bytes were split.
    #[test]
    fn chunk_boundaries_do_not_matter() {
        let seed = std::env::var("AGENT_SSE_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(14);
        let mut rng = fastrand::Rng::with_seed(seed);
        const PIECES: &[&str] = &[
            "data: ", "data:", "event: ", "event:x", ": ping", "id: 3", "retry: 5", "data",
            "{\"a\":", "é", "世界", "🦀", "[DONE]", " ", ":", "x", "\u{FEFF}",
        ];
        const ENDS: &[&str] = &["\n", "\r", "\r\n", "\n\n", "\r\n\r\n", "\r\r"];
        let mut seen = 0;
        for case in 0..2000 {
            let mut text = String::new();
            if rng.u8(..8) == 0 {
                text.push('\u{FEFF}');
            }
            for _ in 0..rng.usize(0..40) {
                if rng.bool() {
                    text.push_str(ENDS[rng.usize(..ENDS.len())]);
                } else {
                    text.push_str(PIECES[rng.usize(..PIECES.len())]);
                }
            }
            let bytes = text.as_bytes();
            let whole = SseParser::default().push(bytes).unwrap();
            let mut p = SseParser::default();
            let mut split = Vec::new();
            let mut rest = bytes;
            while !rest.is_empty() {
                let n = rng.usize(0..=rest.len().min(9));
                let (c, r) = rest.split_at(n);
                split.extend(p.push(c).unwrap());
                rest = r;
            }
            assert_eq!(split, whole, "case {case}: {text:?}");
            seen += whole.len();
        }
        assert!(seen > 500, "the streams hold events: {seen}");
    }
}
