//! Language-server figures with pyright (`npm install -g pyright`):
//! - time from an edit to its diagnostics in the tool result, on a small
//!   project (the first edit includes starting the server);
//! - peak RSS of the agent (not the server) in a headless run with pyright.
//!
//! Run with `cargo bench --bench lsp`.

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

fn per_edit(p: &Project) {
    let root = p.root();
    let lsp = LspManager::new(
        Default::default(),
        root.clone(),
        p.home().join("data"),
        Timing {
            settle: Duration::from_millis(300),
            cap: Duration::from_secs(30),
            start: Duration::from_secs(30),
        },
    )
    .trusted(agent::shell::Sandbox::new(
        agent::shell::SandboxMode::WorkspaceWrite,
        &root,
        Some(p.home()),
        &[],
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
    let rt = tokio::runtime::Builder::new_current_thread()
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
    let (open, _) = run("view", json!({"path": "pkg/m1.py"}));
    println!("view (starts pyright and opens the file): {open:?}");
    let mut times = Vec::new();
    for i in 0..6 {
        let (old, new) = if i % 2 == 0 {
            ("return x + 1", "return \"bad\"")
        } else {
            ("return \"bad\"", "return x + 1")
        };
        let (d, text) = run(
            "edit",
            json!({"path": "pkg/m1.py", "old_string": old, "new_string": new}),
        );
        assert!(text.contains("Diagnostics:\n"), "{text}");
        times.push(d);
    }
    times.sort();
    println!(
        "edit to diagnostics in the result, pyright warm, settle 300 ms: median {:?} (min {:?}, max {:?}) over 6 edits",
        times[3], times[0], times[5]
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
    per_edit(&p);
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
    let cmd = p.command_for(&mock, Wire::OpenAi, "go", &["--yolo"]);
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
