//! Entry points for `fuzz/` (cargo fuzz) and the seeded tests beside them:
//! arbitrary bytes through the SSE parser and a wire protocol's decoder,
//! as the transport feeds them. Not an API; hidden from the docs.

use super::anthropic::MessagesDecoder;
use super::openai::ChatDecoder;
use super::sse::SseParser;
use super::transport::{Decoder, Seen};

/// Parses `body` cut into chunks of `chunk` bytes and decodes it as
/// Anthropic Messages (`anthropic`) or Chat Completions events. Returns
/// whether a whole response came out. Must never panic.
pub fn decode(anthropic: bool, body: &[u8], chunk: usize) -> bool {
    let mut decoder: Box<dyn Decoder> = if anthropic {
        Box::new(MessagesDecoder::new("fuzz".into()))
    } else {
        Box::new(ChatDecoder::new("fuzz".into()))
    };
    let mut parser = SseParser::with_limit(1 << 20);
    for piece in body.chunks(chunk.max(1)) {
        let Ok(events) = parser.push(piece) else {
            return false;
        };
        for event in events {
            match decoder.event(event, &mut |_| {}) {
                Ok(Seen::Final) => return decoder.finish(true).is_ok(),
                Ok(_) => {}
                Err(_) => return false,
            }
        }
    }
    decoder.finish(false).is_ok()
}

/// The events of `body` parsed whole and parsed in `chunk`-byte pieces
/// are the same. Must never panic.
pub fn split_invariant(body: &[u8], chunk: usize) -> bool {
    let whole = SseParser::default().push(body);
    let mut parser = SseParser::default();
    let mut split = Vec::new();
    for piece in body.chunks(chunk.max(1)) {
        match parser.push(piece) {
            Ok(events) => split.extend(events),
            Err(e) => return whole == Err(e),
        }
    }
    whole == Ok(split)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mutated real streams (the corpus) and random bytes never panic, and
    /// their events never depend on the chunking. `AGENT_FUZZ_CASES` runs
    /// more.
    #[test]
    fn mutated_streams_never_panic() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/streams");
        let mut seeds: Vec<Vec<u8>> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "sse"))
            .map(|p| std::fs::read(p).unwrap())
            .collect();
        seeds.sort();
        assert!(!seeds.is_empty());
        let cases: usize = std::env::var("AGENT_FUZZ_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(300);
        let mut rng = fastrand::Rng::with_seed(14);
        let mut whole = 0;
        for _ in 0..cases {
            let mut body = seeds[rng.usize(..seeds.len())].clone();
            for _ in 0..rng.usize(0..6) {
                if body.is_empty() {
                    break;
                }
                let at = rng.usize(..body.len());
                match rng.u8(..4) {
                    0 => body[at] = rng.u8(..),
                    1 => {
                        body.remove(at);
                    }
                    2 => body.insert(at, b"\r\n:{}\"\\"[rng.usize(..7)]),
                    _ => body.truncate(at),
                }
            }
            let chunk = rng.usize(1..64);
            assert!(split_invariant(&body, chunk));
            for anthropic in [false, true] {
                whole += usize::from(decode(anthropic, &body, chunk));
            }
        }
        assert!(whole > 0, "some mutated streams still decode");
    }
}
