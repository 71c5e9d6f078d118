//! The request body of one conversation, kept between its requests, so a
//! round trip encodes and copies only what is new instead of the whole
//! history (whose cost grew with every step).
//!
//! The body is `{fields…,"messages":[` + the messages + `]}`. The bytes up
//! to the end of the last message but one are kept in one buffer; each
//! request appends the messages that are new since, then the last message
//! and the closing brackets, sends the buffer as one [`Bytes`], and the
//! next request takes the buffer back (its only owner again once the
//! previous request is done), cuts the tail and appends. A buffer still
//! shared (a request in flight) is copied instead.
//!
//! Sound because a [`Conversation`] promises that, within one epoch,
//! messages are only appended and only the last one may still change: a
//! message that was not the last when it was encoded never changes again.
//! Anything else (another epoch, other fields or tools, fewer messages)
//! starts the buffer over.

use std::sync::Mutex;

use bytes::{Bytes, BytesMut};

use super::{Conversation, LlmError, Message};

/// Writes one message's array elements (none, one or several, comma
/// separated); `true` for the last message.
pub(crate) type Encode<'a> = dyn Fn(&Message, bool, &mut Vec<u8>) -> Result<(), LlmError> + 'a;

struct Kept {
    conversation: Conversation,
    /// The bytes before the first message (fields, `"messages":[`, and for
    /// some protocols a first element such as the system prompt).
    open: Vec<u8>,
    body: Bytes,
    /// Bytes of `body` that stay: `open` and every message but the last.
    prefix: usize,
    /// Messages in the prefix.
    count: usize,
    /// Whether the prefix ends with an element (a comma comes next).
    elements: bool,
}

#[derive(Default)]
pub(crate) struct EncodedPrefix {
    kept: Mutex<Option<Kept>>,
    /// Messages encoded so far (a test sees the work stay flat).
    encoded: std::sync::atomic::AtomicUsize,
}

impl EncodedPrefix {
    /// The body: `open` (a JSON object's fields up to and including
    /// `"<array>":[` and any first elements; `elements` says whether there
    /// are some), then `messages`, then `]}`.
    pub fn body(
        &self,
        conversation: Option<Conversation>,
        open: Vec<u8>,
        elements: bool,
        messages: &[Message],
        encode: &Encode<'_>,
    ) -> Result<Bytes, LlmError> {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let reuse = match (kept.take(), conversation) {
            (Some(k), Some(c))
                if k.conversation == c && k.open == open && k.count < messages.len().max(1) =>
            {
                Some(k)
            }
            _ => None,
        };
        let (mut buf, mut count, mut has) = match reuse {
            Some(k) => {
                let mut buf = k
                    .body
                    .try_into_mut()
                    .unwrap_or_else(|shared| BytesMut::from(&shared[..k.prefix]));
                buf.truncate(k.prefix);
                (buf, k.count, k.elements)
            }
            None => (BytesMut::from(&open[..]), 0, elements),
        };
        let mut part = Vec::new();
        let last = messages.len().saturating_sub(1);
        let fresh = last.saturating_sub(count.min(last)) + usize::from(!messages.is_empty());
        self.encoded
            .fetch_add(fresh, std::sync::atomic::Ordering::Relaxed);
        for m in &messages[count.min(last)..last] {
            part.clear();
            encode(m, false, &mut part)?;
            append(&mut buf, &part, &mut has);
            count += 1;
        }
        let prefix = buf.len();
        let elements_before_tail = has;
        if let Some(m) = messages.last() {
            part.clear();
            encode(m, true, &mut part)?;
            append(&mut buf, &part, &mut has);
        }
        buf.extend_from_slice(b"]}");
        let body = buf.freeze();
        if let Some(conversation) = conversation {
            *kept = Some(Kept {
                conversation,
                open,
                body: body.clone(),
                prefix,
                count,
                elements: elements_before_tail,
            });
        }
        Ok(body)
    }
}

fn append(buf: &mut BytesMut, part: &[u8], has: &mut bool) {
    if part.is_empty() {
        return;
    }
    if *has {
        buf.extend_from_slice(b",");
    }
    buf.extend_from_slice(part);
    *has = true;
}

/// `head` (a JSON object) opened for an array `field` at its end:
/// `{…,"field":[`.
pub(crate) fn open_array(mut head: Vec<u8>, field: &str) -> Vec<u8> {
    // `head` is serialized from a struct, so it ends with `}`.
    let empty = head.ends_with(b"{}");
    head.pop();
    if !empty {
        head.push(b',');
    }
    head.extend_from_slice(format!("\"{field}\":[").as_bytes());
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

    fn open() -> Vec<u8> {
        open_array(br#"{"model":"m"}"#.to_vec(), "messages")
    }

    #[test]
    fn a_growing_conversation_encodes_each_message_about_once() {
        let p = EncodedPrefix::default();
        let c = Conversation { id: 7, epoch: 0 };
        let mut m = Vec::new();
        for i in 0..300 {
            m.push(Message::user(format!("message {i}")));
            let body = p.body(Some(c), open(), false, &m, &enc).unwrap();
            assert!(body.ends_with(format!("\"message {i}*\"]}}").as_bytes()));
        }
        // Each request: the new message once, and the last one again.
        let n = p.encoded.load(std::sync::atomic::Ordering::Relaxed);
        assert!(n < 2 * 300, "{n} encodings for 300 requests");
        let full =
            String::from_utf8(p.body(None, open(), false, &m, &enc).unwrap().to_vec()).unwrap();
        let cached =
            String::from_utf8(p.body(Some(c), open(), false, &m, &enc).unwrap().to_vec()).unwrap();
        assert_eq!(full, cached, "the kept body is the body");
    }

    #[test]
    fn reuses_what_was_sent_and_starts_over_on_a_new_epoch() {
        let p = EncodedPrefix::default();
        let c = Conversation { id: 1, epoch: 0 };
        let mut m = vec![Message::user("a"), Message::user("b")];
        let body = |p: &EncodedPrefix, c, m: &[Message]| {
            String::from_utf8(p.body(Some(c), open(), false, m, &enc).unwrap().to_vec()).unwrap()
        };
        assert_eq!(body(&p, c, &m), r#"{"model":"m","messages":["a","b*"]}"#);
        m.push(Message::user("c"));
        assert_eq!(
            body(&p, c, &m),
            r#"{"model":"m","messages":["a","b","c*"]}"#
        );
        // The last message changed (it may grow): encoded anew.
        m[2] = Message::user("c2");
        assert_eq!(
            body(&p, c, &m),
            r#"{"model":"m","messages":["a","b","c2*"]}"#
        );
        // A body still held elsewhere (a request in flight) is not touched.
        let held = p.body(Some(c), open(), false, &m, &enc).unwrap();
        m.push(Message::user("d"));
        assert_eq!(
            body(&p, c, &m),
            r#"{"model":"m","messages":["a","b","c2","d*"]}"#
        );
        assert_eq!(&held[..], br#"{"model":"m","messages":["a","b","c2*"]}"#);
        // A rewritten history (new epoch) is encoded from scratch.
        m[0] = Message::user("z");
        let c2 = Conversation { id: 1, epoch: 1 };
        assert_eq!(
            body(&p, c2, &m),
            r#"{"model":"m","messages":["z","b","c2","d*"]}"#
        );
        // Another conversation on the same client does not see this one's.
        let other = Conversation { id: 2, epoch: 0 };
        assert_eq!(
            body(&p, other, &m[..1]),
            r#"{"model":"m","messages":["z*"]}"#
        );
        // A first element in `open` (a system prompt) is followed by a comma.
        let with_system = {
            let mut o = open();
            o.extend_from_slice(br#""sys""#);
            o
        };
        let b = p.body(None, with_system, true, &m[..2], &enc).unwrap();
        assert_eq!(&b[..], br#"{"model":"m","messages":["sys","z","b*"]}"#);
        assert_eq!(
            &p.body(None, open_array(b"{}".to_vec(), "x"), false, &[], &enc)
                .unwrap()[..],
            br#"{"x":[]}"#
        );
    }
}
