//! The real binary in a pseudo-terminal against the mock LLM: what the
//! person sees (read back with vt100) and what the model receives.

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::mock_llm::{MockLlm, Reply, Step, call};
use support::project::{Project, sent_results};
use support::pty::Tui;

#[test]
fn approvals_in_the_terminal() {
    let p = Project::new();
    let mock = MockLlm::start(vec![
        // 1: a write, approved with `y` after keys typed as the dialog opened were ignored.
        Step::Reply(Reply::tools(vec![call(
            "w",
            "write",
            json!({"path": "notes.txt", "content": "hello\n"}),
        )])),
        Step::Reply(Reply::text("Wrote it.")),
        // 2: `a` on git commit covers a second commit; git push still asks; `n` with a reason.
        Step::Reply(Reply::tools(vec![call(
            "g1",
            "bash",
            json!({"command": "git init -q && git commit -q --allow-empty -m one"}),
        )])),
        Step::Reply(Reply::tools(vec![call(
            "g2",
            "bash",
            json!({"command": "git commit -q --allow-empty -m two"}),
        )])),
        Step::Reply(Reply::tools(vec![call(
            "g3",
            "bash",
            json!({"command": "git push"}),
        )])),
        Step::Reply(Reply::text("Understood.")),
        // 3: Esc ends a running command.
        Step::Reply(Reply::tools(vec![call(
            "s",
            "bash",
            json!({"command": "sleep 30"}),
        )])),
    ]);
    let mut tui = Tui::start(&p, &mock.openai_base());
    tui.wait_for("Enter sends");

    tui.prompt("make notes");
    // Keys arriving as the dialog opens (a typing burst) must approve nothing.
    for _ in 0..6 {
        tui.send("y");
        std::thread::sleep(Duration::from_millis(60));
    }
    tui.wait_for("Allow write?");
    assert!(
        tui.text().contains("create notes.txt (6 bytes, 1 line)"),
        "{}",
        tui.text()
    );
    assert!(tui.text().contains("risk: low"), "{}", tui.text());
    std::thread::sleep(Duration::from_millis(800));
    assert!(
        tui.text().contains("Allow write?"),
        "the burst approved the write:\n{}",
        tui.text()
    );
    assert!(!p.root().join("notes.txt").exists());
    tui.send("y");
    tui.wait_for("Wrote it.");
    assert_eq!(
        std::fs::read_to_string(p.root().join("notes.txt")).unwrap(),
        "hello\n"
    );

    // Keys typed while no dialog was open went to the composer, as meant; clear it.
    tui.send("\x03");
    tui.prompt("commit twice and push");
    tui.wait_for("Allow bash?");
    std::thread::sleep(Duration::from_millis(700));
    tui.send("a");
    tui.wait_for("run `git push`");
    std::thread::sleep(Duration::from_millis(700));
    tui.send("n");
    std::thread::sleep(Duration::from_millis(100));
    tui.send("no remote here\r");
    tui.wait_for("Understood.");
    let reqs = mock.requests();
    let push = sent_results(&reqs[5]);
    assert_eq!(push[0].call_id, "g3");
    assert!(
        push[0].content.contains("Their reason: \"no remote here\""),
        "{}",
        push[0].content
    );
    assert_eq!(
        sent_results(&reqs[4])[0].content,
        "(no output)\n[exit code 0]",
        "the second commit ran without a dialog (the first command gave {:?})",
        sent_results(&reqs[3])[0].content
    );

    tui.prompt("wait");
    tui.wait_for("sleep 30");
    std::thread::sleep(Duration::from_millis(300));
    tui.send("\x1b");
    tui.wait_for("Interrupted.");
    tui.wait_for("Cancelled by the person");
}

/// A project whose hook (on `view`) touches a marker file; the person
/// answers the trust question with `answer`, then the model reads a file.
/// Returns whether the hook ran and the project.
fn trust_question(answer: &str) -> (bool, Project) {
    let p = Project::new();
    let marker = p.scratch().join("hook-ran");
    p.file(
        ".agent/config.toml",
        &format!(
            "[[hooks.PreToolUse]]\nmatcher = \"view\"\ncommand = \"touch {}\"\n",
            marker.display()
        ),
    );
    p.file("a.txt", "alpha\n");
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call(
            "v",
            "view",
            json!({"path": "a.txt"}),
        )])),
        Step::Reply(Reply::text("Read it.")),
    ]);
    let mut tui = Tui::start_with(&p, &mock.openai_base(), &[]);
    tui.wait_for("Trust this project?");
    assert!(
        tui.text().contains(&format!(
            "PreToolUse hook [view]: touch {}",
            marker.display()
        )),
        "{}",
        tui.text()
    );
    tui.send(&format!("{answer}\r"));
    tui.wait_for("Enter sends");
    tui.prompt("read a.txt");
    tui.wait_for("Read it.");
    (marker.exists(), p)
}

#[test]
fn untrusted_project_hooks_are_put_to_the_person_first() {
    let (ran, p) = trust_question("y");
    assert!(ran, "the trusted hook did not run");
    let trusted = std::fs::read_to_string(p.home().join("data/trusted-projects.json")).unwrap();
    assert!(
        trusted.contains(&p.root().display().to_string()),
        "{trusted}"
    );
}

#[test]
fn project_hooks_the_person_does_not_trust_never_run() {
    let (ran, p) = trust_question("n");
    assert!(!ran, "an untrusted hook ran");
    assert!(!p.home().join("data/trusted-projects.json").exists());
}

#[test]
fn an_mcp_tool_is_asked_about_then_allowed() {
    let p = Project::new();
    let notes = p.home().join("notes.txt");
    p.user_config(&format!(
        "[mcp.test]\ncommand = \"{}\"\nenv = {{ MCP_NOTES = \"{}\" }}\n\
         [mcp.gone]\ncommand = \"/nonexistent/mcp-server\"\n",
        support::example_exe("mcp_server").display(),
        notes.display()
    ));
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call(
            "n1",
            "mcp_test_add_note",
            json!({"text": "first"}),
        )])),
        Step::Reply(Reply::tools(vec![call(
            "n2",
            "mcp_test_add_note",
            json!({"text": "second"}),
        )])),
        Step::Reply(Reply::text("Noted twice.")),
    ]);
    let mut tui = Tui::start(&p, &mock.openai_base());
    tui.wait_for("Enter sends");
    // The status line follows the servers as they start in the background.
    tui.wait_for("mcp:test ✓");
    tui.wait_for("mcp:gone ✗");
    tui.prompt("take notes");
    tui.wait_for("Allow mcp_test_add_note?");
    assert!(tui.text().contains("risk: medium"), "{}", tui.text());
    assert!(!notes.exists(), "it ran before the answer");
    std::thread::sleep(Duration::from_millis(600));
    // `a`: this tool for the session; the second call is not asked about.
    tui.send("a");
    tui.wait_for("Noted twice.");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "first\nsecond\n");
    let results = sent_results(&mock.requests()[2]);
    assert_eq!(results[0].content, "noted");
}

/// Issue 11: `a` on a redirection into a project file remembers that file
/// (and the command's prefix), so the next append runs without a dialog;
/// another file is asked about again.
#[test]
fn a_session_grant_on_an_append_covers_the_next_append_to_that_file() {
    let p = Project::new();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call(
            "e1",
            "bash",
            json!({"command": "echo one >> log.txt"}),
        )])),
        Step::Reply(Reply::tools(vec![call(
            "e2",
            "bash",
            json!({"command": "echo two >> log.txt"}),
        )])),
        Step::Reply(Reply::tools(vec![call(
            "e3",
            "bash",
            json!({"command": "echo three >> other.txt"}),
        )])),
        Step::Reply(Reply::text("Logged.")),
    ]);
    let mut tui = Tui::start(&p, &mock.openai_base());
    tui.wait_for("Enter sends");
    tui.prompt("log twice");
    tui.wait_for("Allow bash?");
    assert!(
        tui.text()
            .contains("for this session: `echo` commands writing log.txt in this session"),
        "{}",
        tui.text()
    );
    std::thread::sleep(Duration::from_millis(700));
    tui.send("a");
    tui.wait_for("run `echo three >> other.txt`");
    assert_eq!(
        std::fs::read_to_string(p.root().join("log.txt")).unwrap(),
        "one\ntwo\n",
        "the second append ran without a dialog"
    );
    std::thread::sleep(Duration::from_millis(700));
    tui.send("n");
    std::thread::sleep(Duration::from_millis(100));
    tui.send("\r");
    tui.wait_for("Logged.");
    assert!(!p.root().join("other.txt").exists());
    let reqs = mock.requests();
    assert_eq!(sent_results(&reqs[2])[0].call_id, "e2");
    assert_eq!(
        sent_results(&reqs[2])[0].content,
        "(no output)\n[exit code 0]"
    );
}

#[test]
fn the_external_editor_round_trip_keeps_the_agent_and_the_draft() {
    let p = Project::new();
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("Got the edited draft."))]);
    // An "editor" that appends to the draft it is given.
    let editor = p.scratch().join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nprintf ' and more from the editor' >> \"$1\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
    let editor = editor.display().to_string();
    let mut tui = Tui::start_env(
        &p,
        &mock.openai_base(),
        &["--trust-project"],
        &[("VISUAL", editor.as_str())],
    );
    tui.wait_for("Enter sends");
    tui.send("my draft");
    tui.wait_for("my draft");
    tui.send("\x07"); // Ctrl+G
    tui.wait_for("my draft and more from the editor");
    std::thread::sleep(Duration::from_millis(2500));
    assert!(
        tui.alive(),
        "the agent died after the editor:\n{}",
        tui.text()
    );
    tui.send("\r");
    tui.wait_for("Got the edited draft.");
    let asked = &mock.requests()[0].body["messages"];
    let last = asked.as_array().unwrap().last().unwrap();
    assert_eq!(last["content"], "my draft and more from the editor");
}

#[test]
fn quitting_while_an_answer_streams_does_not_wait() {
    let p = Project::new();
    // Half an answer, then silence: the turn is still running.
    let mock = MockLlm::start(vec![Step::Stall(Reply::text(
        "The first half of a long answer that never finishes streaming because the server stalls",
    ))]);
    let mut tui = Tui::start(&p, &mock.openai_base());
    tui.wait_for("Enter sends");
    tui.prompt("explain");
    tui.wait_for("The first half");
    tui.send("\x03");
    tui.send("\x03");
    let sent = std::time::Instant::now();
    // Before, the agent froze for 3 s after the screen was given back;
    // a liveness bound well under that, not a benchmark.
    let deadline = sent + Duration::from_millis(2000);
    while tui.alive() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        !tui.alive(),
        "still running {:?} after Ctrl+C twice",
        sent.elapsed()
    );
    eprintln!("quit took {:?}", sent.elapsed());
    assert!(
        tui.text().contains("session") && tui.text().contains("--resume"),
        "the way back is not printed:\n{}",
        tui.text()
    );
    // The conversation stays in the terminal after the full screen is gone.
    let after = tui.text();
    assert!(
        after.contains("explain") && after.contains("The first half"),
        "the transcript is not in the scrollback:\n{after}"
    );
}

#[test]
fn the_first_screen_and_what_the_person_adds_to_a_prompt() {
    let p = Project::new();
    p.file("AGENTS.md", "Be brief.\n")
        .file("notes.txt", "remember the milk\n");
    p.file(
        ".agent/commands/review.md",
        "---\ndescription: Review a file\n---\nReview $ARGUMENTS for typos.\n",
    );
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::text("Noted.")),
        Step::Reply(Reply::text("No typos.")),
    ]);
    let mut tui = Tui::start(&p, &mock.openai_base());
    // Not a blank screen: who, where, under which rules, what to type.
    tui.wait_for("agent v");
    let first = tui.text();
    for part in [
        "instructions: AGENTS.md",
        "sandbox:",
        "project trusted",
        "/help",
    ] {
        assert!(first.contains(part), "`{part}` is missing:\n{first}");
    }
    // `!cmd` runs it now; its output goes with the next prompt.
    tui.prompt("!echo hi-from-me");
    tui.wait_for("hi-from-me");
    tui.prompt("look at @notes.txt and @/etc/hostname");
    tui.wait_for("Noted.");
    let sent = mock.requests()[0].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        sent.contains("The person ran this command themselves"),
        "{sent}"
    );
    assert!(
        sent.contains("$ echo hi-from-me") && sent.contains("hi-from-me\n```"),
        "{sent}"
    );
    assert!(
        sent.contains("look at @notes.txt and @/etc/hostname"),
        "{sent}"
    );
    // Only the project's files are attached; others stay a mention.
    assert!(!sent.contains("<file path=\"/etc/hostname\">"), "{sent}");
    assert!(
        sent.contains("<file path=\"notes.txt\">\nremember the milk\n</file>"),
        "{sent}"
    );
    // A project's own slash command becomes the prompt.
    tui.prompt("/review notes.txt");
    tui.wait_for("No typos.");
    let sent = &mock.requests()[1].body["messages"];
    let last = sent.as_array().unwrap().last().unwrap()["content"].clone();
    assert_eq!(last, "Review notes.txt for typos.");
}

#[test]
fn diff_and_permissions_say_what_the_session_did_and_may_do() {
    let p = Project::new();
    p.file("notes.txt", "one\n");
    p.user_config(&format!(
        "{}[permissions]\nallow = [\"bash(git status)\"]\n",
        support::project::FAST_LLM
    ));
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call(
            "v",
            "view",
            json!({"path": "notes.txt"}),
        )])),
        Step::Reply(Reply::tools(vec![call(
            "e",
            "edit",
            json!({"path": "notes.txt", "old_string": "one", "new_string": "two"}),
        )])),
        Step::Reply(Reply::text("Changed it.")),
    ]);
    let mut tui = Tui::start_with(&p, &mock.openai_base(), &["--trust-project", "--yolo"]);
    tui.wait_for("Enter sends");
    tui.prompt("change it");
    tui.wait_for("Changed it.");
    tui.prompt("/diff");
    tui.wait_for("+two");
    assert!(tui.text().contains("-one"), "{}", tui.text());
    tui.prompt("/permissions");
    tui.wait_for("Rules in effect");
    tui.wait_for("bash(git status)");
}

#[test]
fn model_names_are_checked_against_the_providers_list() {
    let p = Project::new();
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("Switched."))]);
    let mut tui = Tui::start(&p, &mock.openai_base());
    tui.wait_for("Enter sends");
    tui.prompt("/model");
    tui.wait_for("offers: gpt-mock, mock-1, mock-2");
    tui.prompt("/model mock-3");
    tui.wait_for("has no model `mock-3`; the nearest are:");
    tui.prompt("/model mock-2");
    tui.wait_for("Model: mock-2");
    tui.prompt("hello");
    tui.wait_for("Switched.");
    assert_eq!(mock.requests()[0].body["model"], "mock-2");
}

#[test]
fn model_switches_the_reasoning_effort_on_the_responses_wire() {
    let p = Project::new();
    p.user_config("[providers.openai]\nkind = \"openai-responses\"\n");
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::text("Thought hard.")),
        Step::Reply(Reply::text("Still hard.")),
        Step::Reply(Reply::text("After clear.")),
    ]);
    let mut tui = Tui::start(&p, &mock.openai_base());
    tui.wait_for("Enter sends");
    tui.prompt("/model mock-1 high");
    tui.wait_for("Reasoning effort: high.");
    tui.prompt("hello");
    tui.wait_for("Thought hard.");
    // The effort stays with the next model, and both outlive /clear.
    tui.prompt("/model mock-2");
    tui.wait_for("Model: mock-2");
    tui.prompt("again");
    tui.wait_for("Still hard.");
    tui.prompt("/clear");
    tui.prompt("fresh");
    tui.wait_for("After clear.");
    let requests = mock.requests();
    let seen: Vec<(&Value, &Value)> = requests
        .iter()
        .map(|r| (&r.body["model"], &r.body["reasoning"]["effort"]))
        .collect();
    assert_eq!(
        seen,
        [
            (&json!("mock-1"), &json!("high")),
            (&json!("mock-2"), &json!("high")),
            (&json!("mock-2"), &json!("high")),
        ]
    );
}

#[test]
fn changes_made_outside_the_agent_are_noticed_in_every_session() {
    let p = Project::new();
    let mock = MockLlm::start(Vec::new());
    let mut tui = Tui::start(&p, &mock.openai_base());
    tui.wait_for("Enter sends");
    // The watcher starts with the session: write until it has seen one.
    let noticed = |tui: &Tui, name: &str| {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        let mut n = 0;
        while std::time::Instant::now() < deadline {
            n += 1;
            std::fs::write(p.root().join(name), format!("{n}")).unwrap();
            std::thread::sleep(Duration::from_millis(200));
            if tui
                .text()
                .contains(&format!("changed outside the agent: {name}"))
            {
                return true;
            }
        }
        false
    };
    assert!(noticed(&tui, "first.txt"), "{}", tui.text());
    tui.prompt("/clear");
    assert!(noticed(&tui, "second.txt"), "{}", tui.text());
}
