//! Sessions that last, through the real binary against the mock LLM:
//! --continue and --resume send the earlier conversation, `agent sessions`
//! lists it, a long task is compacted under the window, `agent undo`
//! restores files without git, and a run killed mid-turn can be continued.

use crate::support;

use serde_json::{Value, json};
use support::mock_llm::{MockLlm, Reply, Step, call};
use support::project::{BOTH, FAST_LLM, Project, Wire};

fn session_id(stdout: &str) -> String {
    let v: Value = serde_json::from_str(stdout.trim()).unwrap();
    v["session_id"].as_str().unwrap().to_string()
}

/// Every text the request carries, in order, from either wire format.
fn texts(body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for m in body["messages"].as_array().unwrap() {
        match &m["content"] {
            Value::String(s) => out.push(s.clone()),
            Value::Array(blocks) => {
                for b in blocks {
                    if let Some(t) = b["text"].as_str() {
                        out.push(t.to_string());
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[test]
fn continue_and_resume_send_the_earlier_conversation() {
    for wire in BOTH {
        let p = Project::new();
        let mock = MockLlm::start(vec![Step::Reply(Reply::text("first answer"))]);
        let run = p.run(&mock, wire, "first prompt", &["--output-format", "json"]);
        run.assert_ok();
        let id = session_id(&run.stdout);

        let mock = MockLlm::start(vec![Step::Reply(Reply::text("second answer"))]);
        let run = p.run(
            &mock,
            wire,
            "second prompt",
            &["--continue", "--output-format", "json"],
        );
        run.assert_ok();
        assert_eq!(session_id(&run.stdout), id, "--continue keeps the session");
        let sent = texts(&mock.requests()[0].body);
        assert_eq!(sent.last().map(String::as_str), Some("second prompt"));
        assert!(sent.contains(&"first prompt".to_string()), "{sent:?}");
        assert!(sent.contains(&"first answer".to_string()), "{sent:?}");

        // A unique start of the id is enough.
        let mock = MockLlm::start(vec![Step::Reply(Reply::text("third answer"))]);
        p.run(&mock, wire, "third prompt", &["--resume", &id[..8]])
            .assert_ok();
        let sent = texts(&mock.requests()[0].body);
        for t in [
            "first prompt",
            "first answer",
            "second prompt",
            "second answer",
            "third prompt",
        ] {
            assert!(sent.contains(&t.to_string()), "{t} missing in {sent:?}");
        }

        // Listed with its title and turns.
        let out = p.command().args(["sessions"]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(&id), "{text}");
        assert!(
            text.contains("3 turns") && text.contains("first prompt"),
            "{text}"
        );
        let out = p.command().args(["sessions", "--json"]).output().unwrap();
        let list: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(list[0]["id"], id.as_str());
        assert_eq!(list[0]["turns"], 3);
        assert_eq!(list[0]["title"], "first prompt");
    }
}

#[test]
fn resume_of_an_unknown_id_or_an_empty_project_says_what_to_do() {
    let p = Project::new();
    let mock = MockLlm::start(vec![]);
    let run = p.run(&mock, Wire::OpenAi, "x", &["--resume", "nope"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(
            "no session has an id starting with `nope`; `agent sessions --all` lists them"
        ),
        "{}",
        run.stderr
    );
    let run = p.run(&mock, Wire::OpenAi, "x", &["--continue"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("no earlier session in"),
        "{}",
        run.stderr
    );
    assert!(mock.requests().is_empty());
}

#[test]
fn a_damaged_log_resumes_with_what_is_readable() {
    let p = Project::new();
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("kept answer"))]);
    let run = p.run(
        &mock,
        Wire::OpenAi,
        "kept prompt",
        &["--output-format", "json"],
    );
    let id = session_id(&run.stdout);
    let log = p.home().join(format!("data/sessions/{id}.jsonl"));
    // A crash while writing leaves half a line.
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    std::io::Write::write_all(&mut f, br#"{"t":"assistant","message":{"ro"#).unwrap();
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("ok"))]);
    let run = p.run(&mock, Wire::OpenAi, "next", &["--continue"]);
    run.assert_ok();
    assert!(
        run.stderr.contains("skipped a torn last line"),
        "{}",
        run.stderr
    );
    let sent = texts(&mock.requests()[0].body);
    assert!(sent.contains(&"kept answer".to_string()), "{sent:?}");
}

#[test]
fn a_long_task_is_compacted_and_no_request_outgrows_the_window() {
    for wire in BOTH {
        let p = Project::new();
        p.user_config(&format!(
            "{FAST_LLM}[providers.openai]\ncontext_window = 16000\n[providers.anthropic]\ncontext_window = 16000\n"
        ));
        // 30 rounds, each reading a 6 KB file: 180 KB of results in all.
        for i in 0..30 {
            p.file(
                &format!("f{i}.txt"),
                &format!("{i} {}\n", "word ".repeat(1200)),
            );
        }
        p.file("small.txt", "tiny\n");
        let mut script = vec![Step::Reply(Reply::tools(vec![call(
            "s",
            "view",
            json!({"path": "small.txt"}),
        )]))];
        script.extend((0..30).map(|i| {
            Step::Reply(Reply::tools(vec![call(
                &format!("c{i}"),
                "view",
                json!({"path": format!("f{i}.txt")}),
            )]))
        }));
        // After compaction: the small file's content was attached to the
        // summary, so it may be edited; the first big file's was not, so
        // editing it needs a new view.
        script.push(Step::Reply(Reply::tools(vec![
            call(
                "e1",
                "edit",
                json!({"path": "small.txt", "old_string": "tiny", "new_string": "small"}),
            ),
            call(
                "e2",
                "edit",
                json!({"path": "f0.txt", "old_string": "0 word", "new_string": "zero word"}),
            ),
        ])));
        script.push(Step::Reply(Reply::text("all read")));
        let mock = MockLlm::start(script);
        mock.answer_summaries();
        let run = p.run(
            &mock,
            wire,
            "read every file",
            &["--output-format", "stream-json", "--yolo"],
        );
        run.assert_ok();
        assert_eq!(
            std::fs::read_to_string(p.root().join("small.txt")).unwrap(),
            "small\n"
        );
        assert!(
            std::fs::read_to_string(p.root().join("f0.txt"))
                .unwrap()
                .starts_with("0 word"),
            "a file whose content left the conversation is not edited blind"
        );
        let last = mock.requests().last().unwrap().clone();
        let results = support::project::result_texts(&last);
        assert!(results[1].contains("use `view` first"), "{results:?}");
        // Claude Code's mark of a compaction in stream-json.
        let events = run.json_lines();
        let compactions = events
            .iter()
            .filter(|e| e["type"] == "system" && e["subtype"] == "compact_boundary")
            .count();
        assert!(compactions >= 1, "no compaction: {}", run.stdout);
        assert_eq!(events.last().unwrap()["result"], "all read");
        for r in mock.requests() {
            let bytes = serde_json::to_vec(&r.body).unwrap().len();
            // A token is at least 3 bytes of JSON; 16000 tokens is 48 KB.
            assert!(bytes < 16000 * 3, "a request of {bytes} bytes");
        }
        // The summary request carried the conversation and no tools; the
        // model's next request starts from the summary.
        let after = mock
            .requests()
            .into_iter()
            .skip_while(|r| r.body.get("tools").is_some())
            .nth(1)
            .unwrap();
        let sent = texts(&after.body).join("\n");
        assert!(sent.contains("The summary of the mock."), "{sent}");
        assert!(
            sent.contains("read every file"),
            "the person's request stays: {sent}"
        );
        // The log keeps the whole history and the compaction.
        let id = events[0]["session_id"].as_str().unwrap();
        let log =
            std::fs::read_to_string(p.home().join(format!("data/sessions/{id}.jsonl"))).unwrap();
        assert_eq!(log.matches(r#""t":"tool_result""#).count(), 33);
        assert!(log.contains(r#""t":"compaction""#));
    }
}

#[test]
fn undo_restores_the_edited_file_and_removes_the_created_one_and_redo_brings_them_back() {
    let p = Project::new();
    p.file("a.txt", "alpha\n");
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call(
            "v",
            "view",
            json!({"path": "a.txt"}),
        )])),
        Step::Reply(Reply::tools(vec![
            call(
                "e",
                "edit",
                json!({"path": "a.txt", "old_string": "alpha", "new_string": "beta"}),
            ),
            call(
                "w",
                "write",
                json!({"path": "new.txt", "content": "fresh\n"}),
            ),
        ])),
        Step::Reply(Reply::text("done")),
    ]);
    p.run(&mock, Wire::OpenAi, "change things", &["--yolo"])
        .assert_ok();
    let a = p.root().join("a.txt");
    let new = p.root().join("new.txt");
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "beta\n");

    let dry = p.command().args(["undo", "--dry-run"]).output().unwrap();
    let text = String::from_utf8_lossy(&dry.stdout);
    assert!(
        text.contains("restore  a.txt") && text.contains("remove   new.txt"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(&a).unwrap(),
        "beta\n",
        "a dry run changes nothing"
    );

    let out = p.command().arg("undo").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "alpha\n");
    assert!(!new.exists());

    let out = p.command().arg("redo").output().unwrap();
    assert!(out.status.success());
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "beta\n");
    assert_eq!(std::fs::read_to_string(&new).unwrap(), "fresh\n");

    // Someone changes the file: undo stops, shows it, and only --force goes on.
    std::fs::write(&a, "person's text\n").unwrap();
    let out = p.command().arg("undo").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("changed since the agent's change"), "{text}");
    assert!(
        text.contains("-person's text") && text.contains("+alpha"),
        "{text}"
    );
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "person's text\n");
    assert!(new.exists(), "nothing is undone when one file conflicts");
    let out = p.command().args(["undo", "--force"]).output().unwrap();
    assert!(out.status.success());
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "alpha\n");
    assert!(!new.exists());
}

#[test]
fn a_run_killed_mid_turn_continues_with_what_it_did() {
    let p = Project::new();
    p.file("a.txt", "alpha\n");
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call(
            "v",
            "view",
            json!({"path": "a.txt"}),
        )])),
        Step::Reply(Reply::tools(vec![call(
            "s",
            "bash",
            json!({"command": "sleep 30"}),
        )])),
    ]);
    let mut child = p
        .command_for(&mock, Wire::OpenAi, "slow task", &["--yolo"])
        .spawn()
        .unwrap();
    // Wait until the log holds the call the kill will interrupt.
    let sessions = p.home().join("data/sessions");
    let logged = || {
        std::fs::read_dir(&sessions).ok().is_some_and(|d| {
            d.filter_map(Result::ok).any(|e| {
                std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains(r#""name":"bash""#))
            })
        })
    };
    let started = std::time::Instant::now();
    while !logged() && started.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(logged(), "the bash call never reached the log");
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait();

    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call(
            "e",
            "edit",
            json!({"path": "a.txt", "old_string": "alpha", "new_string": "beta"}),
        )])),
        Step::Reply(Reply::text("done")),
    ]);
    let run = p.run(&mock, Wire::OpenAi, "go on", &["--continue", "--yolo"]);
    run.assert_ok();
    let body = &mock.requests()[0].body;
    let sent = texts(body).join("\n");
    assert!(
        sent.contains("slow task") && sent.contains("go on"),
        "{sent}"
    );
    // The call the kill interrupted is answered, so the conversation is
    // one the API accepts.
    let answered = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == "s")
        .expect("a result for the interrupted call");
    assert!(
        answered["content"]
            .as_str()
            .unwrap()
            .contains("ended before"),
        "{answered}"
    );
    // The view survived the crash: the edit needs no new view.
    assert_eq!(
        std::fs::read_to_string(p.root().join("a.txt")).unwrap(),
        "beta\n"
    );
}

#[test]
fn undo_covers_files_a_command_named_changed() {
    let p = Project::new();
    p.file("a.txt", "alpha\n")
        .file("b.txt", "one\n")
        .file("c.txt", "doomed\n");
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call(
            "s",
            "bash",
            json!({"command": "sed -i s/alpha/beta/ a.txt && echo two >> b.txt && rm c.txt && echo new > d.txt"}),
        )])),
        Step::Reply(Reply::text("done")),
    ]);
    p.run(&mock, Wire::OpenAi, "shuffle files", &["--yolo"])
        .assert_ok();
    let read = |n: &str| std::fs::read_to_string(p.root().join(n)).ok();
    assert_eq!(read("a.txt").as_deref(), Some("beta\n"));
    assert_eq!(read("b.txt").as_deref(), Some("one\ntwo\n"));
    assert_eq!(read("c.txt"), None);
    let out = p.command().arg("undo").output().unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(read("a.txt").as_deref(), Some("alpha\n"));
    assert_eq!(
        read("b.txt").as_deref(),
        Some("one\n"),
        "appended in place, still restored"
    );
    assert_eq!(
        read("c.txt").as_deref(),
        Some("doomed\n"),
        "a deleted file comes back"
    );
    assert_eq!(read("d.txt"), None, "a created file goes");
}
