//! Session figures:
//! - loading (and replaying) a 10,000-event session log;
//! - the cost of appending one event to a log (one `write`), and of the
//!   per-step sync;
//! - the agent's own cost per model round trip early and late in a long
//!   session: the release binary against the mock LLM, each trip a `view`
//!   of a 10 KB file, so 300 trips carry 3 MB of history. Per-step cost at
//!   step k is (CPU(k + 50 trips) − CPU(k trips)) / 50, the least of 7
//!   runs each, agent CPU only (the mock's parsing of 3 MB requests is not
//!   the agent's), user and system time apart: system time includes the
//!   kernel copying each request (the whole history, as both protocols
//!   require) into the socket.
//!
//! Run with `cargo bench --bench sessions`.

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

use agent::llm::{Content, Message, Role, Usage};
use agent::transcript::store::{self, Entry, FORMAT, Header, SessionLog};
use serde_json::json;
use support::mock_llm::{MockLlm, Reply, Step, ToolCall};
use support::project::{FAST_LLM, Project, Wire};

const RUNS: usize = 5;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn header(id: &str) -> Header {
    Header {
        v: FORMAT,
        id: id.into(),
        created: 0,
        cwd: "/w".into(),
        project: "/w".into(),
        git_root: None,
        provider: "p".into(),
        model: "m".into(),
        agent_version: "0".into(),
        parent: None,
    }
}

/// The i-th event of a typical session: prompts, calls, 500-byte results, usage.
fn event(i: usize) -> Entry {
    match i % 4 {
        0 => Entry::User {
            turn: (i / 4) as u32,
            text: format!("prompt {i}"),
            time: 0,
            auto: false,
        },
        1 => Entry::Assistant {
            message: Message {
                role: Role::Assistant,
                content: vec![Content::ToolCall {
                    id: format!("c{i}"),
                    name: "view".into(),
                    arguments: json!({"path": format!("src/f{i}.rs")}).to_string(),
                }],
            },
        },
        2 => Entry::ToolResult {
            call_id: format!("c{}", i - 1),
            name: "view".into(),
            content: "x".repeat(500),
            is_error: false,
            diff: None,
            denied: false,
        },
        _ => Entry::Usage {
            provider: "p".into(),
            model: "m".into(),
            usage: Usage::default(),
        },
    }
}

fn log_figures() {
    let dir = tempfile::tempdir().unwrap();
    let log = SessionLog::create(dir.path(), header("big"));
    let started = Instant::now();
    for i in 0..10_000 {
        log.append(&event(i));
    }
    let append = started.elapsed() / 10_000;
    let started = Instant::now();
    for i in 0..1_000 {
        log.append(&event(i));
        log.sync();
    }
    let append_sync = started.elapsed() / 1_000;
    let path = log.path().to_path_buf();
    let size = std::fs::metadata(&path).unwrap().len();
    // Back to 10,000 events for the load figure.
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().take(10_001).collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let load = median(
        (0..RUNS)
            .map(|_| {
                let t = Instant::now();
                let loaded = store::load(&path).unwrap();
                let replay = store::Replay::of(&loaded.entries);
                assert_eq!(loaded.entries.len(), 10_000);
                assert!(!replay.messages.is_empty());
                t.elapsed()
            })
            .collect(),
    );
    println!(
        "session log: append {append:?} per event, append + sync {append_sync:?}; load + replay of 10,000 events ({:.1} MB): {load:?}",
        size as f64 / 1e6 * 10.0 / 11.0
    );
}

/// A script of `trips` round trips, each a `view` of the 10 KB file with
/// distinct arguments (the same call again and again is a loop), then an
/// answer.
fn views(trips: usize) -> Vec<Step> {
    let mut s: Vec<Step> = (1..trips)
        .map(|i| {
            Step::Reply(Reply::tools(vec![ToolCall {
                id: format!("v{i}"),
                name: "view".into(),
                arguments: json!({ "path": "big.txt", "limit": 2000 + i }).to_string(),
            }]))
        })
        .collect();
    s.push(Step::Reply(Reply::text("done")));
    s
}

/// `program first_args…` in `inner`'s directory with its clean
/// environment; the caller adds what follows.
fn run_as(
    inner: &std::process::Command,
    program: &std::ffi::OsStr,
    first_args: &[&str],
) -> std::process::Command {
    let mut cmd = std::process::Command::new(program);
    cmd.args(first_args)
        .env_clear()
        .current_dir(inner.get_current_dir().unwrap())
        .stdin(std::process::Stdio::null());
    for (k, v) in inner.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    cmd
}

/// CPU time (user, system) of all waited-for children so far.
fn children_cpu() -> (Duration, Duration) {
    // SAFETY: rusage is plain integers, for which all zeroes is a valid value.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage only writes into the struct we pass.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (tv(u.ru_utime), tv(u.ru_stime))
}

/// Agent CPU (user, system) of a run of `trips` round trips, each a view
/// of the 10 KB file.
fn views_cpu(
    p: &Project,
    wire: Wire,
    trips: usize,
    binary: Option<&std::ffi::OsStr>,
) -> (Duration, Duration) {
    let mock = MockLlm::start(views(trips));
    let inner = p.command_for(&mock, wire, "go", &["--max-steps", "1000"]);
    let mut cmd = run_as(&inner, binary.unwrap_or(inner.get_program()), &[]);
    cmd.args(inner.get_args());
    let (user, sys) = children_cpu();
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (u2, s2) = children_cpu();
    (u2 - user, s2 - sys)
}

/// `AGENT_BENCH_BEFORE=/path/to/old/agent`: the same figures for that
/// binary too, side by side.
fn step_cost() {
    let before = std::env::var_os("AGENT_BENCH_BEFORE");
    step_cost_of(None, "this build");
    if let Some(old) = &before {
        step_cost_of(Some(old), &old.to_string_lossy());
    }
}

fn step_cost_of(binary: Option<&std::ffi::OsString>, name: &str) {
    let binary = binary.map(|b| b.as_os_str());
    let p = Project::new();
    if binary.is_some() {
        // An earlier build: it may not know `context_window` (and it does
        // not compact).
        p.user_config(FAST_LLM);
    } else {
        // No compaction: the cost of carrying the whole history is measured.
        p.user_config(&format!(
            "{FAST_LLM}[providers.openai]\ncontext_window = 100000000\n[providers.anthropic]\ncontext_window = 100000000\n"
        ));
    }
    let line = format!("{}\n", "y".repeat(99));
    p.file("big.txt", &line.repeat(100));
    // The least of several runs: CPU noise only ever adds.
    const SPAN: usize = 50;
    let least = |v: Vec<(Duration, Duration)>| {
        (
            v.iter().map(|c| c.0).min().unwrap(),
            v.iter().map(|c| c.1).min().unwrap(),
        )
    };
    for wire in [Wire::OpenAi, Wire::Anthropic] {
        // Per step around step k: (CPU(k + SPAN) − CPU(k)) / SPAN.
        let at = |k: usize| {
            let before = least(
                (0..RUNS + 2)
                    .map(|_| views_cpu(&p, wire, k, binary))
                    .collect(),
            );
            let after = least(
                (0..RUNS + 2)
                    .map(|_| views_cpu(&p, wire, k + SPAN, binary))
                    .collect(),
            );
            (
                after.0.saturating_sub(before.0) / SPAN as u32,
                after.1.saturating_sub(before.1) / SPAN as u32,
            )
        };
        let early = at(10);
        let late = at(300);
        println!(
            "{name}, {wire:?}: agent CPU per step, user / system: steps 10–60 {:?} / {:?}; steps 300–350 (3 MB of history) {:?} / {:?}; user {:.2}x, total {:.2}x",
            early.0,
            early.1,
            late.0,
            late.1,
            late.0.as_secs_f64() / early.0.as_secs_f64().max(1e-9),
            (late.0 + late.1).as_secs_f64() / (early.0 + early.1).as_secs_f64().max(1e-9),
        );
    }
}

/// `AGENT_BENCH_PERF=FILE`: one 300-trip run under `perf record` instead
/// of the figures, to see where a late step's time goes.
fn profile(out: &str) {
    let p = Project::new();
    p.user_config(&format!(
        "{FAST_LLM}[providers.openai]\ncontext_window = 100000000\n[providers.anthropic]\ncontext_window = 100000000\n"
    ));
    p.file("big.txt", &format!("{}\n", "y".repeat(99)).repeat(100));
    let mock = MockLlm::start(views(300));
    let wire = match std::env::var("AGENT_BENCH_WIRE").as_deref() {
        Ok("anthropic") => Wire::Anthropic,
        _ => Wire::OpenAi,
    };
    let inner = p.command_for(&mock, wire, "go", &["--max-steps", "1000"]);
    let record = ["record", "-F", "4000", "-g", "-o", out];
    let mut cmd = run_as(&inner, "perf".as_ref(), &record);
    let mut args = vec![inner.get_program()];
    args.extend(inner.get_args());
    cmd.args(args);
    let status = cmd.status().unwrap();
    println!("perf: {status}; `perf report -i {out}`");
}

fn main() {
    if let Ok(out) = std::env::var("AGENT_BENCH_PERF") {
        return profile(&out);
    }
    log_figures();
    step_cost();
}
