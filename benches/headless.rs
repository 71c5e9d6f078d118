//! Headless figures, with the release binary against the in-process mock LLM
//! server (which answers instantly, over kept-alive connections):
//! - `agent --version` wall time;
//! - the added cost of one model round trip: (T(1 + N trips) - T(1 trip)) / N,
//!   where each extra trip is a call to a tool that does no work; wall time
//!   (which includes the mock's own work) and the agent's CPU time;
//! - peak resident memory of a headless run (GNU time's %M; getrusage of
//!   children would count the forking parent's pages);
//! - the added cost of a PreToolUse hook (`true`) on each tool call:
//!   (T(N hooked views) - T(N plain views)) / N.
//!
//! Run with `cargo bench --bench headless`.

// A benchmark prints its figures, and a failure is its report.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use support::mock_llm::{MockLlm, Reply, Step, ToolCall};
use support::project::{Project, Wire};

const EXTRA_TRIPS: usize = 200;
const RUNS: usize = 5;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// A script of `trips` round trips: `trips - 1` calls to a tool that does
/// nothing (unknown name: the Surface answers at once), then an answer.
fn script(trips: usize) -> Vec<Step> {
    let mut s: Vec<Step> = (1..trips)
        .map(|i| {
            Step::Reply(Reply::tools(vec![ToolCall {
                id: format!("c{i}"),
                name: "noop".into(),
                arguments: json!({ "i": i }).to_string(),
            }]))
        })
        .collect();
    s.push(Step::Reply(Reply::text("done")));
    s
}

/// CPU time (user + system) of all waited-for children so far.
fn children_cpu() -> Duration {
    // SAFETY: rusage is plain integers, for which all zeroes is a valid value.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage only writes into the struct we pass.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// Wall and CPU time of one run of `trips` round trips.
fn timed_run(p: &Project, wire: Wire, trips: usize) -> (Duration, Duration) {
    let mock = MockLlm::start(script(trips));
    let cpu = children_cpu();
    let started = Instant::now();
    let run = p.run(&mock, wire, "go", &["--max-steps", "1000"]);
    let elapsed = started.elapsed();
    run.assert_ok();
    assert_eq!(mock.requests().len(), trips);
    (elapsed, children_cpu() - cpu)
}

/// Peak RSS in KiB of one run, from GNU time.
fn peak_rss_kib(p: &Project, wire: Wire, trips: usize) -> Option<u64> {
    let mock = MockLlm::start(script(trips));
    let inner = p.command_for(&mock, wire, "go", &["--max-steps", "1000"]);
    let mut cmd = Command::new("/usr/bin/time");
    cmd.arg("-f")
        .arg("%M")
        .arg(inner.get_program())
        .args(inner.get_args());
    cmd.env_clear().current_dir(inner.get_current_dir()?);
    for (k, v) in inner.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    let out = cmd.output().ok()?;
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .last()?
        .trim()
        .parse()
        .ok()
}

/// Wall time of a run of `calls` `view` calls, one per round trip.
fn views_run(p: &Project, calls: usize) -> Duration {
    let mut s: Vec<Step> = (0..calls)
        .map(|i| {
            Step::Reply(Reply::tools(vec![ToolCall {
                id: format!("v{i}"),
                name: "view".into(),
                // Distinct arguments: the same call three times ends the turn.
                arguments: json!({ "path": "a.txt", "limit": i + 1 }).to_string(),
            }]))
        })
        .collect();
    s.push(Step::Reply(Reply::text("done")));
    let mock = MockLlm::start(s);
    let started = Instant::now();
    p.run(&mock, Wire::OpenAi, "go", &["--max-steps", "1000"])
        .assert_ok();
    started.elapsed()
}

fn hook_cost() {
    const CALLS: usize = 100;
    let p = Project::new();
    p.file("a.txt", "alpha\n");
    let plain = median((0..RUNS).map(|_| views_run(&p, CALLS)).collect());
    p.user_config(&format!(
        "{}[[hooks.PreToolUse]]\nmatcher = \"view\"\ncommand = \"true\"\n",
        support::project::FAST_LLM
    ));
    let hooked = median((0..RUNS).map(|_| views_run(&p, CALLS)).collect());
    println!(
        "PreToolUse hook `true`: {CALLS} views {plain:?} plain, {hooked:?} hooked => {:?} per hooked call",
        hooked.saturating_sub(plain) / CALLS as u32
    );
}

fn main() {
    hook_cost();
    let p = Project::new();
    let version: Vec<Duration> = (0..50)
        .map(|_| {
            let t = Instant::now();
            let out = Command::new(env!("CARGO_BIN_EXE_agent"))
                .arg("--version")
                .output()
                .unwrap();
            assert!(out.status.success());
            t.elapsed()
        })
        .collect();
    println!("agent --version: median {:?} over 50 runs", median(version));

    for wire in [Wire::OpenAi, Wire::Anthropic] {
        let (one, one_cpu): (Vec<_>, Vec<_>) = (0..RUNS).map(|_| timed_run(&p, wire, 1)).unzip();
        let (many, many_cpu): (Vec<_>, Vec<_>) = (0..RUNS)
            .map(|_| timed_run(&p, wire, 1 + EXTRA_TRIPS))
            .unzip();
        let per = |a: Duration, b: Duration| b.saturating_sub(a) / EXTRA_TRIPS as u32;
        let (t1, tn) = (median(one), median(many));
        let (c1, cn) = (median(one_cpu), median(many_cpu));
        println!(
            "{wire:?}: 1 trip {t1:?}, {} trips {tn:?} => per round trip {:?} wall, {:?} agent CPU",
            1 + EXTRA_TRIPS,
            per(t1, tn),
            per(c1, cn)
        );
        match (
            peak_rss_kib(&p, wire, 1),
            peak_rss_kib(&p, wire, 1 + EXTRA_TRIPS),
        ) {
            (Some(a), Some(b)) => println!(
                "{wire:?}: peak RSS {a} KiB (1 trip), {b} KiB ({} trips)",
                1 + EXTRA_TRIPS
            ),
            _ => println!("{wire:?}: peak RSS not measured (needs GNU time at /usr/bin/time)"),
        }
    }
}
