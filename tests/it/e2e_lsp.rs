//! Diagnostics fed back into edit results, through the real binary, from
//! a fake language server (examples/fake_lsp.rs, tower-lsp) in each of its
//! publishing modes, and from pyright when it is installed (CI installs it).

use crate::support;

use std::path::PathBuf;

use serde_json::{Value, json};
use support::project::{FAST_LLM, Project, Wire};

/// The fake server, built by `cargo test` as an example next to the tests.
fn fake_server() -> PathBuf {
    support::example_exe("fake_lsp")
}

fn with_server(mode: &str, wait: f64) -> Project {
    let p = Project::new();
    p.user_config(&format!(
        "{FAST_LLM}[lsp]\nsettle_ms = 100\nwait_secs = {wait}\n[lsp.fake]\ncommand = \"{}\"\nextensions = [\"txt\"]\nenv = {{ FAKE_LSP_MODE = \"{mode}\" }}\n",
        fake_server().display()
    ));
    p
}

/// Rounds of tool calls under --yolo in a trusted project; the results
/// per round.
fn rounds(p: &Project, calls: Vec<(&str, Value)>) -> Vec<String> {
    support::project::rounds(p, Wire::OpenAi, calls, &["--yolo", "--trust-project"]).1
}

#[test]
fn an_untrusted_project_starts_no_server() {
    let p = with_server("versioned", 5.0);
    let r = support::project::rounds(&p, Wire::OpenAi, write_then_fix(), &["--yolo"]).1;
    assert!(
        r[0].ends_with(
            "Diagnostics: unavailable (language servers are off because this project is not trusted (they run its code: build scripts, plugins); the person can trust it with `agent trust --yes` or by answering yes when agent starts)."
        ),
        "{}",
        r[0]
    );
    assert!(
        !p.home().join("data/lsp-fake.log").exists(),
        "the server was started"
    );
}

fn write_then_fix() -> Vec<(&'static str, Value)> {
    vec![
        (
            "write",
            json!({"path": "a.txt", "content": "ok\nsome ERROR here\n"}),
        ),
        (
            "edit",
            json!({"path": "a.txt", "old_string": "ERROR", "new_string": "fine"}),
        ),
    ]
}

const ONE_ERROR: &str =
    "\n\nDiagnostics:\n  a.txt:2:6 error [fake/E1] ERROR found\n  1 error, 0 warnings in a.txt";
const NO_ERRORS: &str = "\n\nDiagnostics:\n  0 errors, 0 warnings in a.txt";

/// The results of [`write_then_fix`]: the error reported, then gone.
fn assert_error_then_fixed(r: &[String]) {
    assert_eq!(
        r[0],
        format!("Created `a.txt` (19 bytes, 2 lines).{ONE_ERROR}")
    );
    assert_eq!(
        r[1],
        format!("Edited `a.txt`: replaced 1 occurrence (+1 −1 lines).{NO_ERRORS}")
    );
}

#[test]
fn versioned_diagnostics_follow_each_change() {
    let p = with_server("versioned", 3.0);
    let r = rounds(&p, write_then_fix());
    assert_error_then_fixed(&r);
}

#[test]
fn servers_without_versions_work_too() {
    let p = with_server("noversion", 3.0);
    let r = rounds(&p, write_then_fix());
    assert!(r[0].ends_with(ONE_ERROR), "{}", r[0]);
    assert!(r[1].ends_with(NO_ERRORS), "{}", r[1]);
}

#[test]
fn a_stale_publication_is_never_reported_as_current() {
    // The server re-sends version 1's error just before version 2's result.
    let p = with_server("stale", 3.0);
    let r = rounds(&p, write_then_fix());
    assert!(
        r[1].ends_with(NO_ERRORS),
        "stale diagnostics leaked into the result: {}",
        r[1]
    );
}

#[test]
fn late_diagnostics_are_said_to_be_missing() {
    let p = with_server("late", 0.5);
    let r = rounds(&p, write_then_fix());
    assert!(
        r[0].ends_with("\n\nDiagnostics: none arrived from fake within 0.5 s for this change, so nothing is reported (older results are not shown as current)."),
        "{}",
        r[0]
    );
}

#[test]
fn a_crashing_server_is_restarted_then_marked_failed() {
    let p = with_server("crash", 1.0);
    let mut calls = vec![("write", json!({"path": "a.txt", "content": "v0 ERROR\n"}))];
    for i in 1..=6 {
        calls.push((
            "write",
            json!({"path": "a.txt", "content": format!("v{i}\n")}),
        ));
        calls.push(("view", json!({"path": "a.txt"})));
    }
    let r = rounds(&p, calls);
    assert!(r[0].ends_with("\n\nDiagnostics:\n  a.txt:1:4 error [fake/E1] ERROR found\n  1 error, 0 warnings in a.txt"), "{}", r[0]);
    let all = r.join("\n---\n");
    assert!(
        all.contains("it exited (exit status: 1) 3 times; see lsp-fake.log"),
        "never marked failed:\n{all}"
    );
    assert!(
        r.last().unwrap().contains("1\tv6"),
        "the agent kept working: {all}"
    );
}

#[test]
fn changes_made_outside_the_agent_reach_the_server() {
    let p = with_server("versioned", 3.0);
    p.file(".gitignore", "ignored.txt\n");
    let r = rounds(
        &p,
        vec![
            ("write", json!({"path": "a.txt", "content": "fine\n"})),
            (
                "bash",
                json!({"command": "echo hi > other.txt && echo no > ignored.txt && sleep 1"}),
            ),
            ("diagnostics", json!({})),
        ],
    );
    assert!(
        r[2].contains("other.txt:1:1 error [fake/W] watched change"),
        "{}",
        r[2]
    );
    assert!(
        !r[2].contains("ignored.txt"),
        "an ignored path was forwarded: {}",
        r[2]
    );
}

#[test]
fn references_list_locations_with_their_lines() {
    let p = with_server("versioned", 3.0);
    p.file(
        "code.txt",
        "let total = 1\nprint total\ntotal = total + 1\n",
    );
    let r = rounds(
        &p,
        vec![(
            "references",
            json!({"path": "code.txt", "line": 2, "column": 8}),
        )],
    );
    assert_eq!(
        r[0],
        "code.txt:1:5: let total = 1\ncode.txt:2:7: print total\ncode.txt:3:1: total = total + 1\ncode.txt:3:9: total = total + 1\n"
    );
}

#[test]
fn pulled_diagnostics_follow_each_change() {
    // The server publishes nothing; the agent asks for diagnostics
    // (`textDocument/diagnostic`) after each change.
    let p = with_server("pull", 3.0);
    let mut calls = write_then_fix();
    calls.insert(1, ("diagnostics", json!({})));
    let mut r = rounds(&p, calls);
    assert!(
        r[1].contains("a.txt:2:6 error [fake/E1] ERROR found"),
        "{}",
        r[1]
    );
    r.remove(1);
    assert_error_then_fixed(&r);
}

#[test]
fn references_by_symbol_name() {
    let p = with_server("versioned", 3.0);
    p.file(
        "code.txt",
        "let total = 1\nprint total\ntotal = total + 1\n",
    );
    let r = rounds(
        &p,
        vec![
            ("references", json!({"symbol": "total", "path": "code.txt"})),
            ("references", json!({"symbol": "nothing"})),
            ("references", json!({"path": "code.txt", "line": 2})),
        ],
    );
    assert_eq!(
        r[0],
        "code.txt:1:5: let total = 1\ncode.txt:2:7: print total\ncode.txt:3:1: total = total + 1\ncode.txt:3:9: total = total + 1\n"
    );
    assert_eq!(
        r[1],
        "No symbol named `nothing` is known to the language servers."
    );
    assert!(
        r[2].contains("give `path` with `line` and `column`"),
        "{}",
        r[2]
    );
}

#[test]
fn pyright_reports_a_type_error_and_its_fix() {
    let installed = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("pyright-langserver").is_file()));
    assert!(
        installed,
        "pyright-langserver is not installed: run `npm install -g pyright` (.ci/run does)"
    );
    let p = Project::new();
    p.user_config(&format!(
        "{FAST_LLM}[lsp]\nwait_secs = 30.0\nsettle_ms = 500\n"
    ));
    p.file("pyproject.toml", "[project]\nname = \"t\"\n");
    let r = rounds(
        &p,
        vec![
            (
                "write",
                json!({"path": "m.py", "content": "def f() -> int:\n    return \"nope\"\n"}),
            ),
            (
                "edit",
                json!({"path": "m.py", "old_string": "\"nope\"", "new_string": "1"}),
            ),
        ],
    );
    assert!(
        r[0].contains("\n\nDiagnostics:\n  m.py:2:12 error [Pyright/reportReturnType]"),
        "{}",
        r[0]
    );
    assert!(r[0].ends_with("1 error, 0 warnings in m.py"), "{}", r[0]);
    assert!(r[1].ends_with("0 errors, 0 warnings in m.py"), "{}", r[1]);
}

#[test]
fn lsp_tools_say_what_is_wrong_with_the_request() {
    let p = with_server("versioned", 1.0);
    let r = rounds(
        &p,
        vec![
            ("diagnostics", json!({"path": "missing.txt"})),
            ("lsp_restart", json!({"name": "nope"})),
            ("lsp_restart", json!({})),
            ("lsp_restart", json!({"name": "fake"})),
        ],
    );
    assert!(
        r[0].contains("`missing.txt` does not exist; check the path"),
        "{}",
        r[0]
    );
    assert!(
        r[1].starts_with("No language server is named `nope`; the configured ones are:")
            && r[1].contains("fake"),
        "{}",
        r[1]
    );
    assert_eq!(
        r[2],
        "No language server is running; each starts on the next file it serves."
    );
    assert_eq!(
        r[3],
        "`fake` is not running; it starts on the next file it serves."
    );
}

#[test]
fn a_path_with_a_space_gets_its_diagnostics_and_is_shown_plainly() {
    let p = with_server("versioned", 3.0);
    let r = rounds(
        &p,
        vec![(
            "write",
            json!({"path": "my dir/a b.txt", "content": "v0 ERROR\n"}),
        )],
    );
    assert!(
        r[0].contains("my dir/a b.txt:1:4 error [fake/E1] ERROR found"),
        "{}",
        r[0]
    );
    assert!(!r[0].contains("%20"), "{}", r[0]);
}

#[test]
fn a_server_that_fails_to_start_says_how_and_what_it_printed() {
    let p = Project::new();
    p.user_config(&format!(
        "{FAST_LLM}[lsp]\nsettle_ms = 100\nwait_secs = 1.0\n[lsp.broken]\ncommand = \"sh\"\nargs = [\"-c\", \"echo cannot find the toolchain >&2; exit 3\"]\nextensions = [\"txt\"]\n"
    ));
    let r = rounds(
        &p,
        vec![("write", json!({"path": "a.txt", "content": "x\n"}))],
    );
    assert!(r[0].contains("broken failed to start"), "{}", r[0]);
    assert!(r[0].contains("exit status: 3"), "{}", r[0]);
    assert!(r[0].contains("lsp-broken.log"), "{}", r[0]);
    assert!(r[0].contains("cannot find the toolchain"), "{}", r[0]);
}

#[test]
fn a_loading_server_is_not_taken_to_say_clean() {
    // While "Indexing" runs (1.5 s) the server answers pulls with nothing;
    // the edit waits for the end of loading and asks again.
    let p = with_server("loading", 5.0);
    let r = rounds(&p, write_then_fix());
    assert_error_then_fixed(&r);
    // With less time than loading takes, the result says it cannot tell.
    let p = with_server("loading", 1.0);
    let r = rounds(&p, write_then_fix());
    assert!(
        r[0].ends_with("Diagnostics: fake is still loading the project (busy with \"Indexing\"), so it cannot tell yet; diagnostics will follow: call `diagnostics` for this file in a moment."),
        "{}",
        r[0]
    );
}

#[test]
fn cancelled_pulls_are_asked_again() {
    let p = with_server("cancel", 3.0);
    let r = rounds(&p, write_then_fix());
    assert_error_then_fixed(&r);
}

#[test]
fn a_clean_edit_of_a_server_that_stays_silent_is_clean() {
    // The server sends nothing for a document that was clean and stays so.
    let p = Project::new();
    p.user_config(&format!(
        "{FAST_LLM}[lsp]\nsettle_ms = 100\nwait_secs = 5.0\n[lsp.fake]\ncommand = \"{}\"\nextensions = [\"txt\"]\nquiet_when_clean = true\nenv = {{ FAKE_LSP_MODE = \"quiet\" }}\n",
        fake_server().display()
    ));
    let r = rounds(
        &p,
        vec![
            ("write", json!({"path": "a.txt", "content": "ok\n"})),
            (
                "edit",
                json!({"path": "a.txt", "old_string": "ok", "new_string": "fine"}),
            ),
            (
                "edit",
                json!({"path": "a.txt", "old_string": "fine", "new_string": "ERROR"}),
            ),
        ],
    );
    assert!(r[0].ends_with(NO_ERRORS), "{}", r[0]);
    assert!(r[1].ends_with(NO_ERRORS), "{}", r[1]);
    assert!(
        r[2].ends_with("\n\nDiagnostics:\n  a.txt:1:1 error [fake/E1] ERROR found\n  1 error, 0 warnings in a.txt"),
        "{}",
        r[2]
    );
}

#[test]
fn a_server_that_never_starts_holds_up_nothing() {
    let p = Project::new();
    p.user_config(&format!(
        "{FAST_LLM}[lsp]\nsettle_ms = 100\nwait_secs = 0.5\nstart_secs = 1.0\n[lsp.fake]\ncommand = \"{}\"\nextensions = [\"txt\"]\nenv = {{ FAKE_LSP_MODE = \"hang\" }}\n",
        fake_server().display()
    ));
    p.file("a.txt", "hello\n");
    let r = rounds(
        &p,
        vec![
            ("view", json!({"path": "a.txt"})),
            ("write", json!({"path": "b.txt", "content": "x\n"})),
            ("bash", json!({"command": "sleep 1.5"})),
            ("write", json!({"path": "b.txt", "content": "y\n"})),
        ],
    );
    assert!(r[0].contains("1\thello"), "{}", r[0]);
    assert!(
        r[1].ends_with("Diagnostics: unavailable (fake is still starting; diagnostics will follow once it is up (up to 1 s))."),
        "{}",
        r[1]
    );
    assert!(
        r[3].contains(
            "fake is not running: the language server did not answer `initialize` in time"
        ),
        "{}",
        r[3]
    );
}

#[test]
fn files_a_command_fixes_or_deletes_lose_their_errors() {
    let p = with_server("versioned", 3.0);
    let r = rounds(
        &p,
        vec![
            ("write", json!({"path": "a.txt", "content": "an ERROR\n"})),
            ("write", json!({"path": "b.txt", "content": "b ERROR\n"})),
            ("diagnostics", json!({})),
            (
                "bash",
                json!({"command": "sed -i s/ERROR/fine/ a.txt && rm b.txt"}),
            ),
            ("diagnostics", json!({})),
        ],
    );
    assert!(
        r[2].contains("a.txt:1:4 error") && r[2].contains("b.txt:1:3 error"),
        "{}",
        r[2]
    );
    assert_eq!(r[4], "No diagnostics from the running language servers.");
}

#[test]
fn only_the_changes_a_server_registered_for_reach_it() {
    // The fake registers for `**/*.txt` and reports each change it hears of.
    let p = with_server("versioned", 3.0);
    let r = rounds(
        &p,
        vec![
            ("write", json!({"path": "a.txt", "content": "fine\n"})),
            (
                "bash",
                json!({"command": "echo hi > other.txt && echo hi > notes.md && sleep 1"}),
            ),
            ("diagnostics", json!({})),
        ],
    );
    assert!(
        r[2].contains("other.txt:1:1 error [fake/W] watched change"),
        "{}",
        r[2]
    );
    assert!(!r[2].contains("notes.md"), "{}", r[2]);
}
