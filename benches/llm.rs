//! LLM transport figures:
//! - SSE parse throughput: 100,000 small Chat Completions chunks, and one
//!   10 MB event, both fed in 4 KB network chunks; plus the same small
//!   chunks parsed and decoded (JSON included) by the OpenAI decoder;
//! - time to fail against a server that never answers (shortened
//!   `first_byte_timeout_secs = 1`) and one that only sends keep-alive pings
//!   (the same limit: the first event is due within it), with the release
//!   binary, the other settings at their defaults; the default figures
//!   follow from the same formula with 60 s.
//!
//! Run with `cargo bench --bench llm`.

// A benchmark prints its figures, and a failure is its report.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use agent::llm::fuzzing::decode;
use agent::llm::sse::SseParser;
use support::mock_llm::{MockLlm, Step};
use support::project::{Project, Wire};

const RUNS: usize = 5;
const CHUNK: usize = 4096;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn parse(body: &[u8]) -> (Duration, usize) {
    let started = Instant::now();
    let mut parser = SseParser::default();
    let mut events = 0;
    for c in body.chunks(CHUNK) {
        events += parser.push(c).unwrap().len();
    }
    (started.elapsed(), events)
}

fn small_events() -> Vec<u8> {
    let mut body = String::new();
    for i in 0..100_000 {
        body.push_str(&format!(
            "data: {{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"tok{i} \"}},\"finish_reason\":null}}]}}\n\n"
        ));
    }
    body.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    body.into_bytes()
}

fn throughput() {
    let small = small_events();
    let mb = small.len() as f64 / 1e6;
    let t = median((0..RUNS).map(|_| parse(&small).0).collect());
    println!(
        "SSE parse, 100,002 small events ({mb:.1} MB) in 4 KB chunks: {t:?} = {:.0} MB/s, {:.1} M events/s",
        mb / t.as_secs_f64(),
        100_002.0 / t.as_secs_f64() / 1e6
    );
    let t = median(
        (0..RUNS)
            .map(|_| {
                let s = Instant::now();
                assert!(decode(false, &small, CHUNK));
                s.elapsed()
            })
            .collect(),
    );
    println!(
        "SSE parse + OpenAI decode of the same: {t:?} = {:.0} MB/s",
        mb / t.as_secs_f64()
    );

    let big = format!("data: {}\n\n", "x".repeat(10 << 20)).into_bytes();
    let t = median(
        (0..RUNS)
            .map(|_| {
                let (t, n) = parse(&big);
                assert_eq!(n, 1);
                t
            })
            .collect(),
    );
    println!(
        "SSE parse, one 10 MB event in 4 KB chunks: {t:?} = {:.0} MB/s",
        big.len() as f64 / 1e6 / t.as_secs_f64()
    );
}

/// Wall time until the binary gives up on `step` repeated, with `key = 1`.
fn time_to_fail(wire: Wire, step: Step, key: &str) -> Duration {
    let p = Project::new();
    p.user_config(&format!("[llm]\n{key} = 1.0\n"));
    let mock = MockLlm::start(vec![step.clone(), step.clone(), step]);
    let started = Instant::now();
    let run = p.run(&mock, wire, "go", &[]);
    let took = started.elapsed();
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains(key), "{}", run.stderr);
    assert_eq!(mock.requests().len(), 2);
    took
}

fn silent_server() {
    for wire in [Wire::OpenAi, Wire::Anthropic] {
        for (what, step, key) in [
            ("silent", Step::Silent, "first_byte_timeout_secs"),
            ("pings only", Step::PingsOnly, "first_byte_timeout_secs"),
        ] {
            let t = median(
                (0..3)
                    .map(|_| time_to_fail(wire, step.clone(), key))
                    .collect(),
            );
            println!(
                "{wire:?}, {what} server, {key} = 1: fails after {t:?} \
                 (2 attempts × 1 s + one backoff of 0.25–0.5 s)"
            );
        }
    }
}

fn main() {
    throughput();
    silent_server();
}
