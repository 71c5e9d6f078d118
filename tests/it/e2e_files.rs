//! End-to-end: `write`, `edit` and `multiedit` through the real binary
//! (`--yolo`) against the mock LLM; asserts on bytes on disk and on the exact
//! results the model received.

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::mock_llm::{MockLlm, Reply, Step, call};
use support::project::{FAST_LLM, Project, Wire, result_texts};

/// Runs the given rounds of tool calls (one reply each), then a final
/// answer; returns the results of each round.
fn rounds(p: &Project, calls: Vec<Vec<(&str, Value)>>, extra: &[&str]) -> Vec<Vec<String>> {
    let n = calls.len();
    let mut script: Vec<Step> = calls
        .into_iter()
        .enumerate()
        .map(|(r, cs)| {
            Step::Reply(Reply::tools(
                cs.into_iter()
                    .enumerate()
                    .map(|(i, (name, args))| call(&format!("r{r}c{i}"), name, args))
                    .collect(),
            ))
        })
        .collect();
    script.push(Step::Reply(Reply::text("done")));
    let mock = MockLlm::start(script);
    let mut flags = vec!["--yolo"];
    flags.extend(extra);
    p.run(&mock, Wire::Anthropic, "go", &flags).assert_ok();
    (1..=n).map(|i| result_texts(&mock.requests()[i])).collect()
}

fn view(path: &str) -> (&'static str, Value) {
    ("view", json!({"path": path}))
}

fn edit(path: &str, old: &str, new: &str) -> (&'static str, Value) {
    (
        "edit",
        json!({"path": path, "old_string": old, "new_string": new}),
    )
}

#[test]
fn edit_requires_a_read_first() {
    let p = Project::new();
    p.file("a.txt", "hello\n");
    let r = rounds(&p, vec![vec![edit("a.txt", "hello", "bye")]], &[]);
    assert_eq!(
        r[0][0],
        "you must read `a.txt` before editing it; use `view` first"
    );
    assert_eq!(
        std::fs::read_to_string(p.root().join("a.txt")).unwrap(),
        "hello\n"
    );
}

#[test]
fn edit_after_read_applies_and_reports() {
    let p = Project::new();
    p.file("a.txt", "one\ntwo\nthree\n");
    let r = rounds(
        &p,
        vec![vec![view("a.txt")], vec![edit("a.txt", "two", "2\n2b")]],
        &[],
    );
    assert_eq!(
        r[1][0],
        "Edited `a.txt`: replaced 1 occurrence (+2 −1 lines)."
    );
    assert_eq!(
        std::fs::read_to_string(p.root().join("a.txt")).unwrap(),
        "one\n2\n2b\nthree\n"
    );
}

#[test]
fn external_change_in_the_same_second_is_caught_but_a_touch_is_not() {
    let p = Project::new();
    p.file("a.txt", "v1\n");
    let path = p.root().join("a.txt");
    // The model reads; then (before its edit) someone else changes the file.
    // A bash call in between plays that someone, within the same second.
    let r = rounds(
        &p,
        vec![
            vec![view("a.txt")],
            vec![("bash", json!({"command": "printf 'v2\\n' > a.txt"}))],
            vec![edit("a.txt", "v1", "mine")],
        ],
        &[],
    );
    assert_eq!(
        r[2][0],
        "`a.txt` was modified since you last read it (3 bytes then, 3 bytes now); view it again before changing it"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "v2\n");

    let p = Project::new();
    p.file("b.txt", "same\n");
    let r = rounds(
        &p,
        vec![
            vec![view("b.txt")],
            vec![("bash", json!({"command": "touch -d '2001-01-01' b.txt"}))],
            vec![edit("b.txt", "same", "new")],
        ],
        &[],
    );
    assert_eq!(
        r[2][0],
        "Edited `b.txt`: replaced 1 occurrence (+1 −1 lines)."
    );
}

#[test]
fn not_unique_and_not_found_messages_verbatim() {
    let p = Project::new();
    p.file("m.rs", "fn a() {\n\tx();\n\tx();\n}\n");
    let r = rounds(
        &p,
        vec![
            vec![view("m.rs")],
            vec![edit("m.rs", "x();", "y();"), edit("m.rs", "z();", "w();")],
        ],
        &[],
    );
    assert_eq!(
        r[1][0],
        "cannot edit `m.rs`: old_string occurs 2 times; add a few surrounding lines to old_string so it matches exactly one place, or set replace_all to change all 2"
    );
    assert_eq!(
        r[1][1],
        "cannot edit `m.rs`: old_string was not found in the file. The closest lines (similarity 75%), with tabs shown as → and leading spaces as ·:\n     1│fn a() {\n     2│→x();\n     3│→x();\n     4│}\nCopy the exact text from `view` output (without the line numbers) and try again; view the file again if it may have changed."
    );
    assert_eq!(
        std::fs::read_to_string(p.root().join("m.rs")).unwrap(),
        "fn a() {\n\tx();\n\tx();\n}\n"
    );
}

#[test]
fn crlf_and_bom_are_preserved() {
    let p = Project::new();
    std::fs::write(
        p.root().join("w.txt"),
        b"\xef\xbb\xbfline one\r\nline two\r\n",
    )
    .unwrap();
    rounds(
        &p,
        vec![
            vec![view("w.txt")],
            vec![edit("w.txt", "line two\n", "line 2\nline 3\n")],
        ],
        &[],
    );
    assert_eq!(
        std::fs::read(p.root().join("w.txt")).unwrap(),
        b"\xef\xbb\xbfline one\r\nline 2\r\nline 3\r\n"
    );
}

#[test]
fn indentation_mismatch_is_applied_and_said() {
    let p = Project::new();
    p.file("i.py", "def f():\n    if x:\n        return 1\n");
    let r = rounds(
        &p,
        vec![
            vec![view("i.py")],
            vec![edit("i.py", "if x:\n    return 1", "if x:\n    return 2")],
        ],
        &[],
    );
    assert!(
        r[1][0].starts_with("Edited `i.py`: replaced 1 occurrence"),
        "{}",
        r[1][0]
    );
    assert!(
        r[1][0].contains("Note: old_string matched line 2 only after ignoring indentation"),
        "{}",
        r[1][0]
    );
    assert_eq!(
        std::fs::read_to_string(p.root().join("i.py")).unwrap(),
        "def f():\n    if x:\n        return 2\n"
    );
}

#[test]
fn multiedit_is_all_or_nothing() {
    let p = Project::new();
    p.file("c.txt", "alpha\nbeta\ngamma\n");
    let edits = json!({"path": "c.txt", "edits": [
        {"old_string": "alpha", "new_string": "ALPHA"},
        {"old_string": "nope", "new_string": "x"},
    ]});
    let good = json!({"path": "c.txt", "edits": [
        {"old_string": "alpha", "new_string": "ALPHA"},
        {"old_string": "ALPHA\nbeta", "new_string": "ALPHA\nBETA"},
    ]});
    let r = rounds(
        &p,
        vec![
            vec![view("c.txt")],
            vec![("multiedit", edits)],
            vec![("multiedit", good)],
        ],
        &[],
    );
    assert!(
        r[1][0].starts_with("edit 2 of 2 failed: old_string was not found in the file."),
        "{}",
        r[1][0]
    );
    assert!(
        r[1][0].ends_with("Nothing was written to `c.txt`; fix that edit and send them all again."),
        "{}",
        r[1][0]
    );
    assert_eq!(r[2][0], "Edited `c.txt`: applied 2 edits (+2 −2 lines).");
    assert_eq!(
        std::fs::read_to_string(p.root().join("c.txt")).unwrap(),
        "ALPHA\nBETA\ngamma\n"
    );
}

#[test]
fn write_creates_overwrites_after_read_and_caps() {
    let p = Project::new();
    // A megabyte in one call: a window that takes it, so no compaction.
    p.user_config(&format!(
        "{FAST_LLM}[providers.openai]\ncontext_window = 2000000\n[providers.anthropic]\ncontext_window = 2000000\n"
    ));
    p.file("old.txt", "old content\n");
    let big = "x".repeat(1024 * 1024 + 1);
    let r = rounds(
        &p,
        vec![
            vec![(
                "write",
                json!({"path": "new/dir/n.txt", "content": "a\nb\n"}),
            )],
            vec![("write", json!({"path": "old.txt", "content": "replaced\n"}))],
            vec![view("old.txt")],
            vec![
                ("write", json!({"path": "old.txt", "content": "replaced\n"})),
                ("write", json!({"path": "big.txt", "content": big})),
            ],
        ],
        &[],
    );
    assert_eq!(r[0][0], "Created `new/dir/n.txt` (4 bytes, 2 lines).");
    assert_eq!(
        std::fs::read_to_string(p.root().join("new/dir/n.txt")).unwrap(),
        "a\nb\n"
    );
    assert_eq!(
        r[1][0],
        "you must read `old.txt` before editing it; use `view` first"
    );
    assert_eq!(r[3][0], "Overwrote `old.txt` (12 bytes → 9 bytes, 1 line).");
    assert_eq!(
        std::fs::read_to_string(p.root().join("old.txt")).unwrap(),
        "replaced\n"
    );
    assert_eq!(
        r[3][1],
        "the content is 1,048,577 bytes; `write` takes at most 1,048,576 bytes. Write a smaller file, or build it up with `edit`"
    );
    assert!(!p.root().join("big.txt").exists());
}

#[test]
fn previous_content_goes_to_the_file_history() {
    let p = Project::new();
    p.file("h.txt", "before\n");
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call(
            "v",
            "view",
            json!({"path": "h.txt"}),
        )])),
        Step::Reply(Reply::tools(vec![call(
            "e",
            "edit",
            json!({"path": "h.txt", "old_string": "before", "new_string": "after"}),
        )])),
        Step::Reply(Reply::text("done")),
    ]);
    let run = p.run(
        &mock,
        Wire::OpenAi,
        "go",
        &["--yolo", "--output-format", "json"],
    );
    run.assert_ok();
    let id = serde_json::from_str::<Value>(run.stdout.trim()).unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let dir = p.home().join("data/history").join(id);
    assert_eq!(
        std::fs::read_to_string(dir.join("1.prev")).unwrap(),
        "before\n"
    );
    let index: Vec<Value> = std::fs::read_to_string(dir.join("index.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(index.len(), 2, "{index:?}");
    assert_eq!(index[0]["k"], "prev");
    assert_eq!(index[0]["cp"], "turn-1");
    assert_eq!(
        index[0]["path"],
        p.root().join("h.txt").display().to_string()
    );
    assert_eq!(index[0]["existed"], true);
    // The change landed: its new content's hash follows.
    assert_eq!(index[1]["k"], "landed");
    assert_eq!(index[1]["seq"], 1);
    assert_eq!(index[1]["hash"].as_str().unwrap().len(), 32);
}

#[test]
fn headless_without_yolo_refuses_edits_and_keeps_the_file() {
    let p = Project::new();
    p.file("a.txt", "keep\n");
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call(
            "v",
            "view",
            json!({"path": "a.txt"}),
        )])),
        Step::Reply(Reply::tools(vec![call(
            "e",
            "edit",
            json!({"path": "a.txt", "old_string": "keep", "new_string": "lose"}),
        )])),
        Step::Reply(Reply::text("done")),
    ]);
    p.run(&mock, Wire::OpenAi, "go", &[]).assert_ok();
    let r = result_texts(&mock.requests()[2]);
    assert!(
        r[0].starts_with(
            "This `edit` call needs the person's approval (medium risk: changes an existing file)"
        ),
        "{}",
        r[0]
    );
    assert!(
        r[0].contains("add `edit(./a.txt)` to [permissions] allow"),
        "{}",
        r[0]
    );
    assert_eq!(
        std::fs::read_to_string(p.root().join("a.txt")).unwrap(),
        "keep\n"
    );
}

/// SIGKILL at various moments of a large edit: the file on disk is always
/// the old or the new content, never a mix.
#[test]
fn killed_mid_write_leaves_old_or_new() {
    let p = Project::new();
    let line = "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz\n";
    let old: String = line.repeat(300_000); // ~22 MB
    let new = old.replacen("0123456789a", "CHANGED", 1);
    for delay_ms in [5u64, 30, 80, 150, 300] {
        std::fs::write(p.root().join("big.txt"), &old).unwrap();
        let mock = MockLlm::start(vec![
            Step::Reply(Reply::tools(vec![call(
                "v",
                "view",
                json!({"path": "big.txt", "limit": 1}),
            )])),
            Step::Reply(Reply::tools(vec![call(
                "e",
                "edit",
                json!({"path": "big.txt", "old_string": "0123456789a", "new_string": "CHANGED", "replace_all": false}),
            )])),
            Step::Reply(Reply::text("done")),
        ]);
        let mut child = p
            .command_for(&mock, Wire::OpenAi, "go", &["--yolo"])
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while mock.requests().len() < 2 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        let on_disk = std::fs::read_to_string(p.root().join("big.txt")).unwrap();
        assert!(
            on_disk == old || on_disk == new,
            "a mix after a kill at {delay_ms} ms ({} bytes)",
            on_disk.len()
        );
    }
}

#[test]
fn new_files_get_normal_permissions_and_overwrites_keep_crlf_and_bom() {
    use std::os::unix::fs::PermissionsExt;
    let p = Project::new();
    std::fs::write(p.root().join("win.txt"), b"\xef\xbb\xbfa\r\nb\r\n").unwrap();
    rounds(
        &p,
        vec![
            vec![("write", json!({"path": "fresh.txt", "content": "x\n"}))],
            vec![view("win.txt")],
            vec![("write", json!({"path": "win.txt", "content": "a\nc\n"}))],
        ],
        &[],
    );
    let mode = std::fs::metadata(p.root().join("fresh.txt"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(
        mode & 0o044,
        0o044,
        "a new file is readable by group and others like any other file ({mode:o})"
    );
    assert_eq!(
        std::fs::read(p.root().join("win.txt")).unwrap(),
        b"\xef\xbb\xbfa\r\nc\r\n"
    );
}

#[test]
fn todos_keep_the_latest_whole_list() {
    let p = Project::new();
    let item = |c: &str, s: &str| json!({"content": c, "status": s});
    let r = rounds(
        &p,
        vec![
            vec![(
                "todos",
                json!({"items": [item("parse input", "in_progress"), item("write tests", "pending")]}),
            )],
            vec![(
                "todos",
                json!({"items": [item("parse input", "in_progress"), item("write tests", "in_progress")]}),
            )],
            vec![(
                "todos",
                json!({"items": [item("parse input", "done"), item("  write tests ", "in_progress")]}),
            )],
            vec![("todos", json!({"items": [item(" ", "pending")]}))],
        ],
        &[],
    );
    assert_eq!(
        r[0][0],
        "Tasks (0 of 2 done):\n  [>] parse input\n  [ ] write tests"
    );
    assert_eq!(
        r[1][0],
        "2 items are in_progress; keep exactly one in progress at a time and mark the others pending or done"
    );
    assert_eq!(
        r[2][0],
        "Tasks (1 of 2 done):\n  [x] parse input\n  [>] write tests"
    );
    assert_eq!(
        r[3][0],
        "item 1 has no content; give each task a short line of text"
    );
}

#[test]
fn a_write_a_crash_interrupted_leaves_nothing_behind_and_no_tool_sees_its_temp_file() {
    let p = Project::new();
    p.file("a.txt", "alpha\n");
    // What `kill -9` mid-write leaves: the temporary file beside the target
    // and the journal entry of a process that is gone.
    let dead = std::process::Command::new("true").spawn().unwrap();
    let pid = dead.id();
    let mut dead = dead;
    dead.wait().unwrap();
    let tmp = p.root().join(format!(".agent-write-{pid}-0123abcd"));
    std::fs::write(&tmp, "x".repeat(3_000_000)).unwrap();
    // One whose journal entry is elsewhere (another data directory): found
    // by its name.
    std::fs::create_dir_all(p.root().join("deep/er")).unwrap();
    let orphan = p.root().join(format!(
        "deep/er/.agent-write-{pid}-0123456789abcdef0123456789abcdef"
    ));
    // A project file that only starts like one is the project's.
    let lookalike = p.root().join(format!("deep/.agent-write-{pid}-notes"));
    std::fs::write(&lookalike, "keep").unwrap();
    std::fs::write(&orphan, "half").unwrap();
    // A second temp file that is in use by a live writer (this test) stays.
    let live = p.root().join(format!(
        ".agent-write-{}-456789abcdef0123456789abcdef0123",
        std::process::id()
    ));
    std::fs::write(&live, "busy").unwrap();
    let journal = p.home().join("data/writes");
    std::fs::create_dir_all(&journal).unwrap();
    std::fs::write(journal.join(format!("{pid}-1")), tmp.to_str().unwrap()).unwrap();
    std::fs::write(
        journal.join(format!("{}-2", std::process::id())),
        live.to_str().unwrap(),
    )
    .unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![
            call("l", "ls", json!({})),
            call("g", "glob", json!({"pattern": "**/*"})),
            call("r", "grep", json!({"pattern": "busy"})),
        ])),
        Step::Reply(Reply::text("done")),
    ]);
    p.run(&mock, Wire::OpenAi, "look", &[]).assert_ok();
    assert!(
        !tmp.exists(),
        "the interrupted write's temp file is removed"
    );
    assert!(!journal.join(format!("{pid}-1")).exists());
    assert!(
        !orphan.exists(),
        "one without a journal entry is found by name"
    );
    assert!(lookalike.exists(), "a name that only looks alike is kept");
    assert!(live.exists(), "a live writer's temp file is left alone");
    let results = result_texts(&mock.requests()[1]);
    for r in &results {
        assert!(
            !r.contains("456789abcdef0123456789abcdef0123"),
            "a tool showed a temp file: {r}"
        );
    }
    // The project's own file is shown like any other.
    assert!(results[0].contains(".agent-write-"), "{}", results[0]);
}

#[test]
fn write_over_a_file_deleted_since_it_was_read_asks_for_intent() {
    let p = Project::new();
    p.file("gone.txt", "old\n");
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call(
            "v",
            "view",
            json!({"path": "gone.txt"}),
        )])),
        Step::Reply(Reply::tools(vec![call(
            "d",
            "bash",
            json!({"command": "rm gone.txt"}),
        )])),
        Step::Reply(Reply::tools(vec![call(
            "w1",
            "write",
            json!({"path": "gone.txt", "content": "new\n"}),
        )])),
        Step::Reply(Reply::tools(vec![call(
            "w2",
            "write",
            json!({"path": "gone.txt", "content": "new\n"}),
        )])),
        Step::Reply(Reply::text("done")),
    ]);
    p.run(&mock, Wire::OpenAi, "go", &["--yolo"]).assert_ok();
    let first = result_texts(&mock.requests()[3]);
    assert!(
        first[0].contains("was deleted since you read it")
            && first[0].contains("call `write` again"),
        "{first:?}"
    );
    assert_eq!(
        std::fs::read_to_string(p.root().join("gone.txt")).unwrap(),
        "new\n",
        "the second write, deliberate, creates it"
    );
}

#[test]
fn write_replaces_a_file_that_is_not_utf8_once_it_was_read() {
    let p = Project::new();
    std::fs::write(p.root().join("latin1.txt"), b"caf\xe9\n").unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call(
            "v",
            "view",
            json!({"path": "latin1.txt"}),
        )])),
        Step::Reply(Reply::tools(vec![call(
            "w",
            "write",
            json!({"path": "latin1.txt", "content": "café\n"}),
        )])),
        Step::Reply(Reply::text("done")),
    ]);
    p.run(&mock, Wire::OpenAi, "go", &["--yolo"]).assert_ok();
    assert!(
        result_texts(&mock.requests()[2])[0].starts_with("Overwrote"),
        "{:?}",
        result_texts(&mock.requests()[2])
    );
    assert_eq!(
        std::fs::read(p.root().join("latin1.txt")).unwrap(),
        "café\n".as_bytes()
    );
}
