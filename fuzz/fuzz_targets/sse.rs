//! Arbitrary bytes as a response body: the SSE parser's events must not
//! depend on where the body was split, and neither decoder may panic.
//! The first byte picks the chunk size.

#![no_main]

use agent::llm::fuzzing::{decode, split_invariant};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&first, body)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(first % 64) + 1;
    assert!(split_invariant(body, chunk));
    decode(false, body, chunk);
    decode(true, body, chunk);
});
