//! TUI figures:
//! - frame time with a 10,000-entry transcript (TestBackend, 120×40), at the
//!   bottom and scrolled far up;
//! - time to first frame of the real binary in a pseudo-terminal;
//! - idle CPU of the real binary over 10 s;
//! - keystroke-to-screen latency while a reply streams at ~2,000 tokens/s.
//!
//! Run with `cargo bench --bench tui`.

// A benchmark prints its figures, and a failure is its report.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use agent::agent::AgentEvent;
use agent::tools::Preview;
use agent::tui::{App, Status, Theme, UiEvent};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use support::project::Project;
use support::pty::Tui;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn frame_times() {
    let mut app = App::new(
        Status {
            provider: "p".into(),
            model: "m".into(),
            prices: None,
            context: None,
            session: String::new(),
            servers: Vec::new(),
            yolo: false,
            sandbox: "workspace-write".into(),
            cwd: "~".into(),
        },
        Theme { colors: true },
    );
    for i in 0..10_000 {
        let id = i.to_string();
        app.apply(UiEvent::Agent(AgentEvent::ToolCall {
            id: id.clone(),
            name: "bash".into(),
            arguments: String::new(),
            summary: format!("cargo test -p crate{i}"),
            preview: Preview::Tail,
        }));
        app.apply(UiEvent::Agent(AgentEvent::ToolResult {
            id,
            name: "bash".into(),
            content: "test a ... ok\ntest b ... ok\n[exit code 0]".into(),
            is_error: false,
            diff: None,
            denied: false,
            notices: Vec::new(),
        }));
    }
    let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let mut time = |app: &mut App| {
        median(
            (0..50)
                .map(|_| {
                    let t = Instant::now();
                    term.draw(|f| app.draw(f, Instant::now())).unwrap();
                    t.elapsed()
                })
                .collect(),
        )
    };
    println!(
        "frame, 10,000 tool cells, at the bottom: {:?}",
        time(&mut app)
    );
    for _ in 0..300 {
        app.on_event(
            crossterm::event::Event::Key(crossterm::event::KeyEvent::new(
                crossterm::event::KeyCode::PageUp,
                crossterm::event::KeyModifiers::NONE,
            )),
            Instant::now(),
        );
    }
    println!(
        "frame, 10,000 tool cells, 3,000 lines up: {:?}",
        time(&mut app)
    );
}

fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
    let f: Vec<&str> = after.split_whitespace().collect();
    f.get(11).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0)
}

/// A server that streams one long reply at ~2,000 tokens per second.
fn slow_stream_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            std::thread::spawn(move || {
                let mut buf = [0u8; 65536];
                let _ = s.read(&mut buf);
                let _ = s.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n");
                for i in 0..20_000 {
                    let chunk = format!(
                        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"word{} \"}}}}]}}\n\n",
                        i % 10
                    );
                    if s.write_all(chunk.as_bytes()).is_err() {
                        return;
                    }
                    if i % 2 == 0 {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
                let _ = s.write_all(b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
            });
        }
    });
    format!("http://{addr}/v1")
}

fn main() {
    frame_times();

    let p = Project::new();
    let firsts: Vec<Duration> = (0..5)
        .map(|_| {
            let t = Instant::now();
            let tui = Tui::start(&p, "http://127.0.0.1:9/v1");
            tui.wait_for("Enter sends") - t
        })
        .collect();
    println!(
        "time to first frame: median {:?} over 5 starts",
        median(firsts)
    );

    let tui = Tui::start(&p, "http://127.0.0.1:9/v1");
    tui.wait_for("Enter sends");
    let pid = tui.pid().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(10));
    let ticks = cpu_ticks(pid) - before;
    println!("idle CPU over 10 s: {} ms", ticks * 10);
    drop(tui);

    let base = slow_stream_server();
    let mut tui = Tui::start(&p, &base);
    tui.wait_for("Enter sends");
    tui.prompt("go");
    tui.wait_for("word");
    let mut lat = Vec::new();
    for c in ["q", "z", "k", "j", "v", "x", "m", "b", "n", "y"] {
        std::thread::sleep(Duration::from_millis(150));
        let t = Instant::now();
        tui.send(c);
        let typed: String = lat
            .iter()
            .map(|(c, _): &(String, Duration)| c.clone())
            .collect::<String>()
            + c;
        let shown = tui.wait_for(&format!("│{typed}"));
        lat.push((c.to_string(), shown - t));
    }
    println!(
        "keystroke to screen while streaming ~2,000 tokens/s: median {:?} over 10 keys",
        median(lat.into_iter().map(|(_, d)| d).collect())
    );
}
