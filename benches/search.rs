//! `grep` and `glob` on a generated tree of 50,000 files, side by side with
//! ripgrep (`rg PATTERN` and `rg --files`) in the same run. Our tools are
//! called through the real `Surface`; ripgrep runs as a process with its
//! output sent to /dev/null. Needs `rg` on PATH (`apt-get install ripgrep`).
//!
//! Run with `cargo bench --bench search`.

// A benchmark prints its figures, and a failure is its report.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent::headless::HeadlessApprover;
use agent::permission::{Gate, GateConfig, RuleSet};
use agent::tools::{Surface, ToolCall, ToolContext, Workspace};

const FILES: usize = 50_000;
const RUNS: usize = 7;

fn tree() -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-tree-50k");
    let done = root.join(".complete");
    if done.exists() {
        return root;
    }
    let _ = std::fs::remove_dir_all(&root);
    for i in 0..FILES {
        let dir = root.join(format!("mod{:02}/sub{:02}", i % 50, (i / 50) % 20));
        std::fs::create_dir_all(&dir).unwrap();
        let mut body = String::with_capacity(2048);
        for j in 0..40 {
            match (i + j) % 7 {
                0 => body.push_str(&format!(
                    "pub fn handle_item{j}_request(input: &str) -> usize {{\n"
                )),
                1 => body.push_str(&format!("    let value_{j} = input.len() * {i};\n")),
                2 => body.push_str("    // a comment line that says nothing in particular\n"),
                3 => body.push_str(&format!("    if value_{j} > {j} {{ return value_{j}; }}\n")),
                _ => body.push_str("    }\n"),
            }
        }
        if i % 100 == 0 {
            body.push_str(&format!("// needle_marker {i}\n"));
        }
        std::fs::write(dir.join(format!("file{i}.rs")), body).unwrap();
    }
    std::fs::write(&done, "").unwrap();
    root
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time_rg(args: &[&str], root: &Path) -> Duration {
    median(
        (0..RUNS)
            .map(|_| {
                let t = Instant::now();
                let st = Command::new("rg")
                    .args(args)
                    .current_dir(root)
                    .stdout(Stdio::null())
                    .status()
                    .unwrap();
                assert!(st.code().is_some_and(|c| c <= 1), "rg failed");
                t.elapsed()
            })
            .collect(),
    )
}

fn time_tool(
    rt: &tokio::runtime::Runtime,
    surface: &Surface,
    name: &str,
    args: serde_json::Value,
) -> (Duration, String) {
    let call = ToolCall {
        id: "b".into(),
        name: name.into(),
        arguments: args.to_string(),
    };
    let mut last = String::new();
    let times = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            let r = rt.block_on(surface.call(&call, &Default::default()));
            let elapsed = t.elapsed();
            assert!(!r.is_error, "{}", r.content);
            last = r.content;
            elapsed
        })
        .collect();
    (median(times), last)
}

fn main() {
    if Command::new("rg").arg("--version").output().is_err() {
        eprintln!("rg not found: install ripgrep (apt-get install ripgrep) to compare");
        std::process::exit(1);
    }
    let root = tree();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let root = root.canonicalize().unwrap();
    let gate = Gate::new(
        GateConfig {
            rules: RuleSet::default(),
            yolo: false,
            workspace: root.clone(),
            always_file: root.join("unused-user-config.toml"),
        },
        Arc::new(HeadlessApprover),
    );
    let surface = Surface::new(
        ToolContext::new(Workspace::new(root.clone()), Vec::new(), Default::default()),
        Arc::new(gate),
    );
    println!("tree: {FILES} files under {}", root.display());

    for pattern in ["needle_marker", r"fn handle_item[0-9]+_request"] {
        let (ours, out) = time_tool(
            &rt,
            &surface,
            "grep",
            serde_json::json!({ "pattern": pattern }),
        );
        let rg = time_rg(&[pattern], &root);
        println!(
            "grep {pattern:?}: agent {ours:?}, rg {rg:?}, ratio {:.2} ({})",
            ours.as_secs_f64() / rg.as_secs_f64(),
            out.lines().next().unwrap_or_default()
        );
    }
    let (ours, out) = time_tool(
        &rt,
        &surface,
        "glob",
        serde_json::json!({ "pattern": "*.rs" }),
    );
    let rg = time_rg(&["--files"], &root);
    println!(
        "glob \"*.rs\" vs rg --files: agent {ours:?}, rg {rg:?}, ratio {:.2} ({})",
        ours.as_secs_f64() / rg.as_secs_f64(),
        out.lines().last().unwrap_or_default()
    );
}
