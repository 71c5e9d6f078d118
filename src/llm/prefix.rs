//! The encoded form of messages already sent, kept between the requests of
//! one conversation, so a round trip encodes only what is new instead of
//! the whole history (whose cost grew with every step).
//!
//! Sound because a [`Conversation`] promises that, within one epoch,
//! messages are only appended and only the last one may still change: a
//! message that was not the last when it was encoded never changes again.

use std::sync::Mutex;

use super::{Conversation, LlmError, Message};

/// Writes one message's array elements; `true` for the last message.
pub(crate) type Encode<'a> = dyn Fn(&Message, bool, &mut Vec<u8>) -> Result<(), LlmError> + 'a;

#[derive(Default)]
pub(crate) struct EncodedPrefix {
    state: Mutex<Option<(Conversation, Vec<Vec<u8>>)>>,
}

impl EncodedPrefix {
    /// The JSON array elements for `messages`, comma-separated (no
    /// brackets). `encode(m, last)` writes one message's elements; the
    /// last message is encoded anew every time, with `last` set.
    pub fn join(
        &self,
        conversation: Option<Conversation>,
        messages: &[Message],
        encode: &Encode<'_>,
    ) -> Result<Vec<u8>, LlmError> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut parts = match (&mut *state, conversation) {
            (Some((c, parts)), Some(now)) if *c == now && parts.len() < messages.len() => {
                std::mem::take(parts)
            }
            _ => Vec::new(),
        };
        let Some((last, done)) = messages.split_last() else {
            return Ok(Vec::new());
        };
        for m in &done[parts.len()..] {
            let mut part = Vec::new();
            encode(m, false, &mut part)?;
            parts.push(part);
        }
        let mut tail = Vec::new();
        encode(last, true, &mut tail)?;
        let size: usize = parts.iter().map(|p| p.len() + 1).sum::<usize>() + tail.len();
        let mut out = Vec::with_capacity(size);
        for p in parts.iter().chain(std::iter::once(&tail)) {
            if p.is_empty() {
                continue;
            }
            if !out.is_empty() {
                out.push(b',');
            }
            out.extend_from_slice(p);
        }
        *state = conversation.map(|c| (c, parts));
        Ok(out)
    }
}

/// `head` (a JSON object) with `"<field>":[<elements>]` added at its end.
pub(crate) fn with_array(mut head: Vec<u8>, field: &str, elements: &[u8]) -> Vec<u8> {
    // `head` is serialized from a struct, so it ends with `}`.
    let empty = head.ends_with(b"{}");
    head.pop();
    if !empty {
        head.push(b',');
    }
    head.extend_from_slice(format!("\"{field}\":[").as_bytes());
    head.extend_from_slice(elements);
    head.extend_from_slice(b"]}");
    head
}

/// Serializes `v` onto `out`, with a comma before it when `out` has
/// elements already.
pub(crate) fn push_element(out: &mut Vec<u8>, v: &impl serde::Serialize) -> Result<(), LlmError> {
    if !out.is_empty() {
        out.push(b',');
    }
    serde_json::to_writer(&mut *out, v)
        .map_err(|e| LlmError::Client(format!("cannot encode the request: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(m: &Message, last: bool, out: &mut Vec<u8>) -> Result<(), LlmError> {
        push_element(out, &format!("{}{}", m.text(), if last { "*" } else { "" }))
    }

    #[test]
    fn reuses_what_was_sent_and_starts_over_on_a_new_epoch() {
        let p = EncodedPrefix::default();
        let c = Conversation { id: 1, epoch: 0 };
        let mut m = vec![Message::user("a"), Message::user("b")];
        assert_eq!(p.join(Some(c), &m, &enc).unwrap(), br#""a","b*""#);
        m.push(Message::user("c"));
        assert_eq!(p.join(Some(c), &m, &enc).unwrap(), br#""a","b","c*""#);
        // A rewritten history (new epoch) is encoded from scratch.
        m[0] = Message::user("z");
        let c2 = Conversation { id: 1, epoch: 1 };
        assert_eq!(p.join(Some(c2), &m, &enc).unwrap(), br#""z","b","c*""#);
        // Another conversation on the same client does not see this one's.
        let other = Conversation { id: 2, epoch: 0 };
        assert_eq!(p.join(Some(other), &m[..1], &enc).unwrap(), br#""z*""#);
        assert_eq!(
            with_array(br#"{"model":"m"}"#.to_vec(), "messages", b"1,2"),
            br#"{"model":"m","messages":[1,2]}"#
        );
        assert_eq!(with_array(b"{}".to_vec(), "x", b""), br#"{"x":[]}"#);
    }
}
