//! Language-server figures:
//! - for each of the five servers that is installed (`.ci/run` installs
//!   them): the first edit (the server's start included), warm edits that
//!   break and fix the file in turn, and `diagnostics` of an unchanged
//!   file, at settle times of 300 ms and 100 ms (the difference is the
//!   settle time's share of the wait);
//! - peak RSS of the agent (not the server) in a headless run with pyright.
//!
//! Run with `cargo bench --bench lsp`.

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
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent::headless::HeadlessApprover;
use agent::lsp::{LspManager, Timing};
use agent::permission::{Gate, GateConfig, RuleSet};
use agent::tools::{Surface, ToolCall, ToolContext, Workspace};

use serde_json::json;
use support::mock_llm::{MockLlm, Reply, Step, call};
use support::project::{FAST_LLM, Project, Wire, result_texts};

/// One server's project: files, the file edited, and an edit that breaks
/// it and back (the pair alternates, so every edit changes the text).
struct Server {
    binary: &'static str,
    files: &'static [(&'static str, &'static str)],
    edited: &'static str,
    good: &'static str,
    bad: &'static str,
}

const SERVERS: &[Server] = &[
    Server {
        binary: "pyright-langserver",
        files: &[
            ("pyproject.toml", "[project]\nname = \"t\"\n"),
            ("m.py", "def f(x: int) -> int:\n    return x + 1\n"),
        ],
        edited: "m.py",
        good: "return x + 1",
        bad: "return \"bad\"",
    },
    Server {
        binary: "typescript-language-server",
        files: &[
            ("package.json", "{\"name\": \"t\"}\n"),
            (
                "tsconfig.json",
                "{\"compilerOptions\": {\"strict\": true}}\n",
            ),
            (
                "m.ts",
                "export function f(x: number): number {\n  return x + 1;\n}\n",
            ),
        ],
        edited: "m.ts",
        good: "return x + 1;",
        bad: "return \"bad\";",
    },
    Server {
        binary: "gopls",
        files: &[
            ("go.mod", "module example.com/t\n\ngo 1.19\n"),
            (
                "m.go",
                "package t\n\nfunc F(x int) int {\n\treturn x + 1\n}\n",
            ),
        ],
        edited: "m.go",
        good: "return x + 1",
        bad: "return \"bad\"",
    },
    Server {
        binary: "clangd",
        files: &[
            ("compile_flags.txt", "-xc++\n-std=c++17\n"),
            ("m.cpp", "int f(int x) {\n  return x + 1;\n}\n"),
        ],
        edited: "m.cpp",
        good: "return x + 1;",
        bad: "return \"bad\";",
    },
    Server {
        binary: "rust-analyzer",
        files: &[
            (
                "Cargo.toml",
                "[package]\nname = \"t\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            ("src/lib.rs", "pub fn f(x: i32) -> i32 {\n    x + 1\n}\n"),
        ],
        edited: "src/lib.rs",
        good: "x + 1",
        bad: "\"bad\"",
    },
];

fn installed(binary: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(binary).is_file()))
}

/// Cold first edit, warm edits, `diagnostics` of an unchanged file, for
/// one server at one settle time, through the real Surface.
fn per_server(server: &Server, settle_ms: u64) {
    let p = Project::new();
    for (path, text) in server.files {
        p.file(path, text);
    }
    let root = p.root();
    let scratch = p.scratch().to_path_buf();
    let lsp = LspManager::new(
        Default::default(),
        root.clone(),
        p.home().join("data"),
        Timing {
            settle: Duration::from_millis(settle_ms),
            cap: Duration::from_secs(60),
            start: Duration::from_secs(30),
        },
    )
    .trusted(agent::shell::Sandbox::new(
        agent::shell::SandboxMode::WorkspaceWrite,
        &root,
        Some(p.home()),
        &[scratch],
    ));
    let gate = Gate::new(
        GateConfig {
            rules: RuleSet::default(),
            yolo: true,
            workspace: root.clone(),
            always_file: root.join("unused-user-config.toml"),
        },
        Arc::new(HeadlessApprover),
    );
    let s = Surface::new(
        ToolContext::new(Workspace::new(root.clone()), Vec::new(), Default::default())
            .with_lsp(Arc::new(lsp)),
        Arc::new(gate),
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let run = |name: &str, args: serde_json::Value| {
        let t = Instant::now();
        let r = rt.block_on(s.call(
            &ToolCall {
                id: "b".into(),
                name: name.into(),
                arguments: args.to_string(),
            },
            &Default::default(),
        ));
        (t.elapsed(), r.content)
    };
    let (_, viewed) = run("view", json!({"path": server.edited}));
    assert!(!viewed.is_empty());
    let edit = |i: usize| {
        let (old, new) = if i.is_multiple_of(2) {
            (server.good, server.bad)
        } else {
            (server.bad, server.good)
        };
        let (d, text) = run(
            "edit",
            json!({"path": server.edited, "old_string": old, "new_string": new}),
        );
        // Broken on even edits, fixed on odd ones: the result must say so.
        let clean = text.contains("\n  0 errors, ");
        assert!(
            text.contains("Diagnostics:\n") && clean == (i % 2 == 1),
            "{}: {text}",
            server.binary
        );
        d
    };
    let cold = edit(0);
    let mut warm: Vec<Duration> = (1..9).map(edit).collect();
    warm.sort();
    let mut unchanged: Vec<Duration> = (0..3)
        .map(|_| run("diagnostics", json!({"path": server.edited})).0)
        .collect();
    unchanged.sort();
    println!(
        "{:<28} settle {settle_ms:>3} ms: cold first edit {:>6.0} ms, warm edit median {:>5.0} ms (min {:.0}, max {:.0}), diagnostics of an unchanged file {:>4.0} ms",
        server.binary,
        cold.as_secs_f64() * 1e3,
        warm[warm.len() / 2].as_secs_f64() * 1e3,
        warm[0].as_secs_f64() * 1e3,
        warm[warm.len() - 1].as_secs_f64() * 1e3,
        unchanged[1].as_secs_f64() * 1e3,
    );
}

fn main() {
    let p = Project::new();
    p.user_config(&format!(
        "{FAST_LLM}[lsp]\nwait_secs = 30.0\nsettle_ms = 300\n"
    ));
    p.file("pyproject.toml", "[project]\nname = \"t\"\n");
    for i in 0..20 {
        p.file(
            &format!("pkg/m{i}.py"),
            &format!("def f{i}(x: int) -> int:\n    return x + {i}\n"),
        );
    }
    for server in SERVERS {
        if !installed(server.binary) {
            println!("{}: not installed, skipped", server.binary);
            continue;
        }
        for settle in [300, 100] {
            per_server(server, settle);
        }
    }
    let edits = 6;
    let mut script = vec![Step::Reply(Reply::tools(vec![call(
        "v",
        "view",
        json!({"path": "pkg/m0.py"}),
    )]))];
    for i in 0..edits {
        // Different text each time, so no two calls repeat.
        let (old, new) = if i % 2 == 0 {
            ("return x + 0".to_string(), format!("return \"bad{i}\""))
        } else {
            (
                format!("return \"bad{}\"", i - 1),
                "return x + 0".to_string(),
            )
        };
        script.push(Step::Reply(Reply::tools(vec![call(
            &format!("e{i}"),
            "edit",
            json!({"path": "pkg/m0.py", "old_string": old, "new_string": new}),
        )])));
    }
    script.push(Step::Reply(Reply::text("done")));
    let mock = MockLlm::start(script);
    let cmd = p.command_for(&mock, Wire::OpenAi, "go", &["--yolo", "--trust-project"]);
    let mut timed = Command::new("/usr/bin/time");
    timed
        .arg("-f")
        .arg("%M")
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .env_clear()
        .current_dir(cmd.get_current_dir().unwrap());
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            timed.env(k, v);
        }
    }
    // Time each edit's round trip as seen by the mock: request N+1 arrives
    // when the edit's result (with diagnostics) is ready.
    let started = Instant::now();
    let out = timed.output().unwrap();
    let total = started.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reqs = mock.requests();
    for (i, r) in reqs.iter().enumerate().skip(2).take(edits) {
        let text = &result_texts(r)[0];
        assert!(text.contains("Diagnostics:"), "edit {i}: {text}");
    }
    let rss = String::from_utf8_lossy(&out.stderr)
        .lines()
        .last()
        .unwrap_or_default()
        .trim()
        .to_string();
    println!(
        "{edits} edits with pyright diagnostics, whole run (server start included): {total:?}"
    );
    println!("peak RSS of the agent with pyright running: {rss} KiB");
}
