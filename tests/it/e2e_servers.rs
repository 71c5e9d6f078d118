//! The five language servers users run, for real, through the release
//! path (the binary, a mock model, files in a temp project): the same
//! script of edits for each, and after every step the result must say
//! what is true *now* — no error that was fixed, by an edit or by a bash
//! command, and no error of a deleted file.
//!
//! `.ci/run` installs all five. Elsewhere a missing server skips its test
//! with a message; under `CI=true` a missing server fails it.

use crate::support;

use serde_json::{Value, json};
use support::project::{FAST_LLM, Project, Wire};

struct Lang {
    /// The server's binary, looked up on PATH.
    binary: &'static str,
    /// Project files written before the run (markers, manifests).
    setup: &'static [(&'static str, &'static str)],
    lib: (&'static str, &'static str),
    caller: (&'static str, &'static str),
    /// An edit of the caller that breaks it, and where its error is.
    own_break: (&'static str, &'static str),
    own_error: &'static str,
    /// An edit of the library that breaks the caller, and where.
    lib_break: (&'static str, &'static str),
    caller_error: &'static str,
    /// A comment line added to the library (a clean edit).
    comment: &'static str,
    /// Where the library's function is named (1-based line, column).
    symbol: (u32, u32),
    wait_secs: f64,
}

/// The rounds of `calls` under --yolo in a trusted project, with the
/// real toolchain's homes (rustup's proxies find their toolchain there).
fn run(p: &Project, calls: Vec<(&str, Value)>) -> Vec<String> {
    let mut env: Vec<(String, std::ffi::OsString)> = [
        "RUSTUP_HOME",
        "CARGO_HOME",
        "RUSTUP_TOOLCHAIN",
        "AGENT_LSP_TRACE",
    ]
    .iter()
    .filter_map(|v| Some((v.to_string(), std::env::var_os(v)?)))
    .collect();
    // Go's caches, where the sandbox lets a server write (the test's
    // home is agent's own, read-only to it).
    env.push(("GOCACHE".into(), p.scratch().join("go-build").into()));
    env.push(("GOPATH".into(), p.scratch().join("go").into()));
    if std::env::var_os("RUSTUP_HOME").is_none()
        && let Some(home) = std::env::var_os("HOME")
    {
        env.push((
            "RUSTUP_HOME".into(),
            std::path::Path::new(&home).join(".rustup").into(),
        ));
    }
    let flags = ["--yolo", "--trust-project"];
    support::project::rounds_with_env(p, Wire::OpenAi, calls, &flags, &env).1
}

fn installed(binary: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(binary).is_file()))
}

/// Runs the script against `lang`'s server and checks every step.
fn script(lang: &Lang) {
    if !support::prerequisite(
        installed(lang.binary),
        &format!("{} is not installed (.ci/run installs it)", lang.binary),
    ) {
        return;
    }
    let p = Project::new();
    p.user_config(&format!(
        "{FAST_LLM}[lsp]\nwait_secs = {}\n",
        lang.wait_secs
    ));
    for (path, text) in lang.setup {
        p.file(path, text);
    }
    let (lib, lib_text) = lang.lib;
    let (caller, caller_text) = lang.caller;
    let edit = |path: &str, old: &str, new: &str| {
        (
            "edit",
            json!({"path": path, "old_string": old, "new_string": new}),
        )
    };
    let revert = |path: &str, (old, new): (&str, &str)| edit(path, new, old);
    let (break_old, break_new) = lang.lib_break;
    let sed = format!(
        "sed -i 's/{}/{}/' {lib}",
        break_new.replace('/', "\\/"),
        break_old.replace('/', "\\/")
    );
    let calls: Vec<(&str, Value)> = vec![
        ("write", json!({"path": lib, "content": lib_text})),
        ("write", json!({"path": caller, "content": caller_text})),
        edit(caller, lang.own_break.0, lang.own_break.1),
        revert(caller, lang.own_break),
        edit(lib, break_old, break_new),
        revert(lib, lang.lib_break),
        edit(lib, break_old, break_new),
        ("bash", json!({"command": sed})),
        ("diagnostics", json!({})),
        ("view", json!({"path": lib})),
        (
            "references",
            json!({"path": lib, "line": lang.symbol.0, "column": lang.symbol.1}),
        ),
        edit(
            lib,
            lang.comment,
            &format!("{}\n{}", lang.comment, lang.comment),
        ),
        edit(caller, lang.own_break.0, lang.own_break.1),
        ("bash", json!({"command": format!("rm {caller}")})),
        ("diagnostics", json!({})),
    ];
    let r = run(&p, calls);
    let mut all = r
        .iter()
        .enumerate()
        .map(|(i, t)| format!("--- step {i}\n{t}"))
        .collect::<Vec<_>>()
        .join("\n");
    // The server's own log, for whoever reads a failure.
    for log in std::fs::read_dir(p.home().join("data"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let file = log.file_name().to_string_lossy().to_string();
        if file.starts_with("lsp-") || file == "agent.log" {
            if let Some(keep) = std::env::var_os("KEEP_LSP_LOGS") {
                let _ = std::fs::copy(
                    log.path(),
                    std::path::Path::new(&keep).join(log.file_name()),
                );
            }
            let text = std::fs::read_to_string(log.path()).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(40).collect();
            all.push_str(&format!("\n--- {}\n", log.path().display()));
            for l in tail.iter().rev() {
                all.extend(l.chars().take(400));
                all.push('\n');
            }
        }
    }
    let clean = |i: usize, file: &str| {
        assert!(
            r[i].ends_with(&format!("0 errors, 0 warnings in {file}")),
            "step {i} is not clean:\n{all}"
        );
    };
    clean(0, lib);
    clean(1, caller);
    assert!(
        r[2].contains(&format!("\n  {}", lang.own_error)) && r[2].contains(" error ["),
        "step 2: the caller's own error is missing:\n{all}"
    );
    clean(3, caller);
    assert!(
        r[4].contains("Other files:") && r[4].contains(&format!("\n  {}", lang.caller_error)),
        "step 4: the broken caller is not mentioned:\n{all}"
    );
    clean(5, lib);
    assert!(
        !r[8].contains(" error ["),
        "step 8: an error fixed by a command is still reported:\n{all}"
    );
    assert!(
        r[10].contains(&format!("{caller}:")),
        "step 10: the caller's reference is missing:\n{all}"
    );
    clean(11, lib);
    assert!(
        r[12].contains(&format!("\n  {}", lang.own_error)),
        "step 12: the caller's own error is missing:\n{all}"
    );
    assert!(
        !r[14].contains(caller),
        "step 14: a deleted file's errors are still reported:\n{all}"
    );
}

#[test]
fn pyright() {
    script(&Lang {
        binary: "pyright-langserver",
        setup: &[("pyproject.toml", "[project]\nname = \"t\"\n")],
        lib: (
            "lib.py",
            "# lib\ndef greet(name: str) -> str:\n    return 'hi ' + name\n",
        ),
        caller: ("main.py", "from lib import greet\n\nprint(greet('x'))\n"),
        own_break: ("greet('x')", "greet(1)"),
        own_error: "main.py:3:13 error [Pyright/reportArgumentType]",
        lib_break: ("def greet", "def hello"),
        caller_error: "main.py:1:17 error [Pyright/",
        comment: "# lib",
        symbol: (2, 5),
        wait_secs: 20.0,
    });
}

#[test]
fn typescript() {
    script(&Lang {
        binary: "typescript-language-server",
        setup: &[
            ("package.json", "{\"name\": \"t\", \"private\": true}\n"),
            (
                "tsconfig.json",
                "{\"compilerOptions\": {\"strict\": true, \"noEmit\": true}}\n",
            ),
        ],
        lib: (
            "lib.ts",
            "// lib\nexport function greet(name: string): string {\n  return \"hi \" + name;\n}\n",
        ),
        caller: (
            "main.ts",
            "import { greet } from \"./lib\";\n\nconsole.log(greet(\"x\"));\n",
        ),
        own_break: ("greet(\"x\")", "greet(1)"),
        own_error: "main.ts:3:19 error [typescript/2345]",
        lib_break: ("function greet", "function hello"),
        caller_error: "main.ts:1:10 error [typescript/",
        comment: "// lib",
        symbol: (2, 17),
        wait_secs: 20.0,
    });
}

#[test]
fn gopls() {
    script(&Lang {
        binary: "gopls",
        setup: &[("go.mod", "module example.com/t\n\ngo 1.19\n")],
        lib: (
            "lib.go",
            "// lib\npackage main\n\nfunc Greet(name string) string {\n\treturn \"hi \" + name\n}\n",
        ),
        caller: (
            "main.go",
            "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(Greet(\"x\"))\n}\n",
        ),
        own_break: ("Greet(\"x\")", "Greet(1)"),
        own_error: "main.go:6:20 error [",
        lib_break: ("func Greet", "func Hello"),
        caller_error: "main.go:6:14 error [",
        comment: "// lib",
        symbol: (4, 6),
        wait_secs: 20.0,
    });
}

#[test]
fn clangd() {
    script(&Lang {
        binary: "clangd",
        setup: &[("compile_flags.txt", "-xc++\n-std=c++17\n")],
        lib: (
            "lib.h",
            "// lib\ninline int add(int a, int b) {\n  return a + b;\n}\n",
        ),
        caller: (
            "main.cpp",
            "#include \"lib.h\"\n\nint main() {\n  return add(1, 2);\n}\n",
        ),
        own_break: ("add(1, 2)", "add(1)"),
        own_error: "main.cpp:4:10 error [",
        lib_break: ("int add", "int plus"),
        caller_error: "main.cpp:4:10 error [",
        comment: "// lib",
        symbol: (2, 12),
        wait_secs: 20.0,
    });
}

#[test]
fn rust_analyzer() {
    script(&Lang {
        binary: "rust-analyzer",
        setup: &[(
            "Cargo.toml",
            "[package]\nname = \"t\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        )],
        lib: (
            "src/greet.rs",
            "// lib\npub fn greet(name: &str) -> String {\n    format!(\"hi {name}\")\n}\n",
        ),
        caller: (
            "src/lib.rs",
            "pub mod greet;\n\npub fn call() -> String {\n    greet::greet(\"x\")\n}\n",
        ),
        own_break: ("greet::greet(\"x\")", "greet::greet(1)"),
        own_error: "src/lib.rs:4:18 error [",
        lib_break: ("pub fn greet", "pub fn hello"),
        caller_error: "src/lib.rs:4:12 error [",
        comment: "// lib",
        symbol: (2, 8),
        wait_secs: 60.0,
    });
}
