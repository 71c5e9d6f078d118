//! End-to-end: the real binary, over each wire protocol, against the mock LLM
//! server; asserts on what the tools returned to the model.

use crate::support;

use std::time::{Duration, SystemTime};

use serde_json::json;
use support::mock_llm::{MockLlm, Reply, Step, call};
use support::project::{BOTH, Project, SentResult, Wire, result_texts, sent_results};

fn demo() -> Project {
    let p = Project::new();
    p.file("README.md", "# Demo\nA tiny project.\n")
        .file("src/main.rs", "fn main() {\n    println!(\"héllo\");\n}\n")
        .file(
            "src/lib.rs",
            "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
        );
    let old = SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(p.root().join("src/lib.rs"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    p
}

/// Every built-in tool, in the order the model is offered them.
const BUILT_IN_TOOLS: [&str; 16] = [
    "agent",
    "bash",
    "diagnostics",
    "edit",
    "fetch",
    "glob",
    "grep",
    "job_kill",
    "job_output",
    "ls",
    "lsp_restart",
    "multiedit",
    "references",
    "todos",
    "view",
    "write",
];
/// Where `view` stands in that list.
const VIEW: usize = 14;

#[test]
fn multi_step_conversation_uses_each_read_only_tool() {
    for wire in BOTH {
        let p = demo();
        let mock = MockLlm::start(vec![
            Step::Reply(
                Reply::tools(vec![call("c1", "view", json!({"path": "src/main.rs"}))])
                    .with_text("Let me look."),
            ),
            Step::Reply(Reply::tools(vec![call("c2", "ls", json!({}))])),
            Step::Reply(Reply::tools(vec![call(
                "c3",
                "glob",
                json!({"pattern": "src/*.rs"}),
            )])),
            Step::Reply(Reply::tools(vec![call(
                "c4",
                "grep",
                json!({"pattern": "fn \\w+"}),
            )])),
            Step::Reply(Reply::text("The project prints héllo.")),
        ]);
        let run = p.run(&mock, wire, "What does this project print?", &[]);
        run.assert_ok();
        assert_eq!(run.stdout, "The project prints héllo.\n", "{wire:?}");
        let reqs = mock.requests();
        assert_eq!(reqs.len(), 5, "{wire:?}");
        assert_eq!(
            sent_results(&reqs[1]),
            vec![SentResult {
                call_id: "c1".into(),
                content: "     1\tfn main() {\n     2\t    println!(\"héllo\");\n     3\t}\n"
                    .into(),
                is_error: false,
            }],
            "{wire:?}"
        );
        let root = p.root();
        assert_eq!(
            result_texts(&reqs[2]),
            vec![format!(
                "{}/\n  README.md\n  src/\n    lib.rs\n    main.rs\n",
                root.display()
            )],
            "{wire:?}"
        );
        assert_eq!(
            result_texts(&reqs[3]),
            vec!["src/main.rs\nsrc/lib.rs\n"],
            "{wire:?}"
        );
        assert_eq!(
            result_texts(&reqs[4]),
            vec![
                "Found 2 matching lines in 2 files:\nsrc/lib.rs:\n  1: pub fn add(a: i32, b: i32) -> i32 {\nsrc/main.rs:\n  1: fn main() {\n"
            ],
            "{wire:?}"
        );
    }
}

#[test]
fn first_request_carries_prompt_system_tools_and_credentials() {
    for wire in BOTH {
        let p = demo();
        let mock = MockLlm::start(vec![Step::Reply(Reply::text("ok"))]);
        p.run(&mock, wire, "hi there", &[]).assert_ok();
        let r = &mock.requests()[0];
        let b = &r.body;
        assert_eq!(b["model"], "mock-1");
        assert_eq!(b["stream"], true);
        let cwd_line = format!("Working directory (project root): {}", p.root().display());
        match wire {
            Wire::OpenAi => {
                assert_eq!(r.path, "/v1/chat/completions");
                assert_eq!(r.header("authorization"), Some("Bearer sk-test"));
                assert_eq!(b["stream_options"]["include_usage"], true);
                assert_eq!(b["messages"][0]["role"], "system");
                assert!(
                    b["messages"][0]["content"]
                        .as_str()
                        .unwrap()
                        .contains(&cwd_line)
                );
                assert_eq!(
                    b["messages"][1],
                    json!({"role": "user", "content": "hi there"})
                );
                let names: Vec<&str> = b["tools"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t["function"]["name"].as_str().unwrap())
                    .collect();
                assert_eq!(names, BUILT_IN_TOOLS);
                let view = &b["tools"][VIEW]["function"];
                assert_eq!(view["parameters"]["required"], json!(["path"]));
                assert!(view["description"].as_str().unwrap().contains("2000 lines"));
            }
            Wire::Anthropic => {
                assert_eq!(r.path, "/v1/messages");
                assert_eq!(r.header("x-api-key"), Some("ak-test"));
                assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
                assert!(b["max_tokens"].as_u64().unwrap() > 0);
                assert!(b["system"][0]["text"].as_str().unwrap().contains(&cwd_line));
                assert_eq!(b["messages"][0]["content"][0]["text"], "hi there");
                let names: Vec<&str> = b["tools"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t["name"].as_str().unwrap())
                    .collect();
                assert_eq!(names, BUILT_IN_TOOLS);
                assert_eq!(
                    b["tools"][VIEW]["input_schema"]["required"],
                    json!(["path"])
                );
            }
        }
    }
}

#[test]
fn parallel_tool_calls_return_results_in_model_order() {
    for wire in BOTH {
        let p = demo();
        let mock = MockLlm::start(vec![
            Step::Reply(Reply::tools(vec![
                call("a", "view", json!({"path": "README.md"})),
                call("b", "grep", json!({"pattern": "add", "include": "*.rs"})),
                call(
                    "c",
                    "view",
                    json!({"path": "src/lib.rs", "offset": 2, "limit": 1}),
                ),
            ])),
            Step::Reply(Reply::text("done")),
        ]);
        p.run(&mock, wire, "look", &[]).assert_ok();
        let results = sent_results(&mock.requests()[1]);
        let ids: Vec<&str> = results.iter().map(|r| r.call_id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c"], "{wire:?}");
        assert_eq!(
            results[0].content,
            "     1\t# Demo\n     2\tA tiny project.\n"
        );
        assert_eq!(
            results[1].content,
            "Found 1 matching line in 1 file:\nsrc/lib.rs:\n  1: pub fn add(a: i32, b: i32) -> i32 {\n"
        );
        assert_eq!(
            results[2].content,
            "     2\t    a + b\n(line limit: showing lines 2-2 of 3; continue with offset=3)\n"
        );
        // The assistant's calls went back to the model with the results.
        let body = &mock.requests()[1].body;
        match wire {
            Wire::OpenAi => {
                let assistant = &body["messages"][2];
                assert_eq!(
                    assistant["tool_calls"][1]["function"]["arguments"],
                    r#"{"include":"*.rs","pattern":"add"}"#
                );
            }
            Wire::Anthropic => {
                let assistant = &body["messages"][1];
                assert_eq!(
                    assistant["content"][1]["input"],
                    json!({"pattern": "add", "include": "*.rs"})
                );
            }
        }
    }
}

#[test]
fn awkward_chunks_and_split_utf8_come_out_whole() {
    for wire in BOTH {
        let p = demo();
        let text = "Ünïcödé ✓ 世界 🦀 done";
        let mock = MockLlm::start(vec![
            Step::Reply(
                Reply::tools(vec![call("x", "view", json!({"path": "src/main.rs"}))])
                    .with_text("é")
                    .chunked(1),
            ),
            Step::Reply(Reply::text(text).chunked(3)),
        ]);
        let run = p.run(&mock, wire, "go", &[]);
        run.assert_ok();
        assert_eq!(run.stdout.trim_end(), text, "{wire:?}");
        assert!(
            result_texts(&mock.requests()[1])[0].contains("héllo"),
            "{wire:?}"
        );
    }
}

#[test]
fn anthropic_thinking_is_sent_back_with_its_signature() {
    let p = demo();
    let mock = MockLlm::start(vec![
        Step::Reply(
            Reply::tools(vec![call("t", "ls", json!({}))]).with_thinking("I should list files."),
        ),
        Step::Reply(Reply::text("ok")),
    ]);
    p.run(&mock, Wire::Anthropic, "list", &[]).assert_ok();
    let second = &mock.requests()[1].body;
    let block = &second["messages"][1]["content"][0];
    assert_eq!(block["type"], "thinking");
    assert_eq!(block["thinking"], "I should list files.");
    assert!(block["signature"].as_str().unwrap().starts_with("sig-"));
}

#[test]
fn deepseek_reasoning_content_does_not_break_parsing() {
    let p = demo();
    let mock = MockLlm::start(vec![Step::Reply(
        Reply::text("answer").with_thinking("let me think"),
    )]);
    let run = p.run(&mock, Wire::OpenAi, "q", &[]);
    run.assert_ok();
    assert_eq!(run.stdout, "answer\n");
}

#[test]
fn bad_calls_become_tool_results_not_crashes() {
    for wire in BOTH {
        let p = demo();
        let mut bad_json = call("m", "grep", json!({}));
        bad_json.arguments = r#"{"pattern": "x"#.into();
        let mock = MockLlm::start(vec![
            Step::Reply(Reply::tools(vec![
                call("u", "delete_everything", json!({})),
                bad_json,
                call("r", "view", json!({"offset": 3})),
                call("o", "view", json!({"path": "/etc/passwd"})),
                call("n", "view", json!({"path": "src/mian.rs"})),
            ])),
            Step::Reply(Reply::text("sorry")),
        ]);
        p.run(&mock, wire, "go", &[]).assert_ok();
        let r = result_texts(&mock.requests()[1]);
        assert_eq!(
            r[0],
            "unknown tool `delete_everything`; available tools: agent, bash, diagnostics, edit, fetch, glob, grep, job_kill, job_output, ls, lsp_restart, multiedit, references, todos, view, write",
            "{wire:?}"
        );
        assert!(
            r[1].starts_with("arguments for `grep` are not valid JSON ("),
            "{wire:?}: {}",
            r[1]
        );
        assert!(
            r[1].ends_with("Call it again with a valid JSON object matching its schema."),
            "{}",
            r[1]
        );
        assert!(
            r[2].starts_with("invalid arguments for `view`: missing field `path`"),
            "{}",
            r[2]
        );
        assert!(
            r[3].starts_with(
                "This `view` call needs the person's approval (medium risk: reads outside the project (/etc/passwd)), and this run cannot ask"
            ),
            "{}",
            r[3]
        );
        assert!(
            r[3].contains("add `view(/etc/passwd)` to [permissions] allow"),
            "{}",
            r[3]
        );
        assert_eq!(
            r[4],
            "file not found: `src/mian.rs`; did you mean: src/main.rs?"
        );
        if wire == Wire::Anthropic {
            assert!(sent_results(&mock.requests()[1]).iter().all(|s| s.is_error));
        }
    }
}

#[test]
fn json_and_stream_json_outputs() {
    let p = demo();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call("c", "ls", json!({"path": "src"}))]).with_usage(100, 7)),
        Step::Reply(Reply::text("fine").with_usage(150, 3)),
    ]);
    let run = p.run(&mock, Wire::Anthropic, "q", &["--output-format", "json"]);
    run.assert_ok();
    let v: serde_json::Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(v["type"], "result");
    assert_eq!(v["subtype"], "success");
    assert_eq!(v["is_error"], false);
    assert_eq!(v["result"], "fine");
    assert_eq!(v["tool_calls"], 1);
    assert_eq!(v["num_turns"], 2, "two model round trips");
    assert_eq!(v["usage"]["input_tokens"], 250);
    assert_eq!(v["usage"]["output_tokens"], 10);
    assert_eq!(v["usage"]["cache_read_input_tokens"], 0);
    assert_eq!(v["usage"]["cache_creation_input_tokens"], 0);
    assert_eq!(v["permission_denials"], serde_json::json!([]));
    assert!(v["duration_api_ms"].as_u64().unwrap() <= v["duration_ms"].as_u64().unwrap());
    // mock-1 has no known prices: a number all the same, said to be unknown.
    assert_eq!(v["total_cost_usd"], 0.0);
    assert_eq!(v["cost_known"], false);
    let id = v["session_id"].as_str().unwrap();
    let saved = p.home().join(format!("data/sessions/{id}.jsonl"));
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(saved)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["id"], id);
    let kinds: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l["t"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "user",
            "usage",
            "assistant",
            "tool_result",
            "approval",
            "usage",
            "assistant",
            "turn_end"
        ],
        "{lines:?}"
    );

    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call("c", "ls", json!({"path": "src"}))]).with_text("Hi")),
        Step::Reply(Reply::text("fine")),
    ]);
    let run = p.run(
        &mock,
        Wire::OpenAi,
        "q",
        &["--output-format", "stream-json"],
    );
    run.assert_ok();
    // Claude Code's messages: init, the assistant's, the tool results, result.
    let lines = run.json_lines();
    let kinds: Vec<&str> = lines.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["system", "assistant", "user", "assistant", "result"]
    );
    let sid = lines[4]["session_id"].as_str().unwrap();
    assert_eq!(lines[0]["subtype"], "init");
    assert_eq!(lines[0]["session_id"], sid);
    assert_eq!(lines[0]["model"], "mock-1");
    assert_eq!(lines[0]["permissionMode"], "default");
    assert!(lines[0]["tools"].as_array().unwrap().contains(&json!("ls")));
    assert_eq!(lines[1]["message"]["role"], "assistant");
    assert_eq!(
        lines[1]["message"]["content"],
        json!([{"type": "text", "text": "Hi"}, {"type": "tool_use", "id": "c", "name": "ls", "input": {"path": "src"}}])
    );
    assert_eq!(lines[1]["session_id"], sid);
    assert_eq!(
        lines[2]["message"],
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c", "content": "src/\n  lib.rs\n  main.rs\n", "is_error": false}]})
    );
    assert_eq!(
        lines[3]["message"]["content"],
        json!([{"type": "text", "text": "fine"}])
    );
    assert_ne!(lines[1]["message"]["id"], lines[3]["message"]["id"]);
    assert_eq!(lines[4]["result"], "fine");

    // Every event as it happens, in `stream_event` messages, on request.
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call("c", "ls", json!({"path": "src"}))]).with_text("Hi")),
        Step::Reply(Reply::text("fine")),
    ]);
    let run = p.run(
        &mock,
        Wire::OpenAi,
        "q",
        &[
            "--output-format",
            "stream-json",
            "--include-partial-messages",
        ],
    );
    run.assert_ok();
    assert!(run.json_lines().iter().any(|l| l["type"] == "stream_event"));
    let events = run.events();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"system"));
    assert_eq!(kinds.last(), Some(&"result"));
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "text_delta")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Hifine");
    let call = events.iter().find(|e| e["type"] == "tool_call").unwrap();
    assert_eq!(
        (call["id"].as_str(), call["name"].as_str()),
        (Some("c"), Some("ls"))
    );
    let result = events.iter().find(|e| e["type"] == "tool_result").unwrap();
    assert_eq!(result["content"], "src/\n  lib.rs\n  main.rs\n");
    assert_eq!(events.last().unwrap()["result"], "fine");
}

/// Runs the binary against `mock` with `extra` flags and `input` piped in.
fn run_piped(p: &Project, mock: &MockLlm, extra: &[&str], input: &[u8]) -> std::process::Output {
    let mut cmd = p.command();
    cmd.args([
        "--provider",
        "openai",
        "--base-url",
        &mock.openai_base(),
        "--model",
        "m",
    ])
    .args(extra)
    .env("OPENAI_API_KEY", "k")
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn prompt_from_stdin() {
    let p = demo();
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("piped ok"))]);
    let out = run_piped(&p, &mock, &["-p", "-"], b"from stdin\n");
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "piped ok\n");
    assert_eq!(
        mock.requests()[0].body["messages"][1]["content"],
        "from stdin\n"
    );
}

#[test]
fn piped_input_goes_before_the_prompt() {
    // Claude Code's `cat log | claude -p "explain"`.
    let p = demo();
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("explained"))]);
    let out = run_piped(&p, &mock, &["-p", "explain"], b"line 1\nERROR 42\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "explained\n");
    assert_eq!(
        mock.requests()[0].body["messages"][1]["content"],
        "line 1\nERROR 42\n\nexplain"
    );
}

#[test]
fn prompt_piped_without_p() {
    let p = demo();
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("ok"))]);
    let out = run_piped(&p, &mock, &[], b"piped task");
    assert!(out.status.success());
    assert_eq!(
        mock.requests()[0].body["messages"][1]["content"],
        "piped task"
    );
}

#[test]
fn a_denied_call_is_listed_in_permission_denials() {
    let p = demo();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call(
            "w1",
            "write",
            json!({"path": "new.txt", "content": "x\n"}),
        )])),
        Step::Reply(Reply::text("could not write")),
    ]);
    let run = p.run(&mock, Wire::OpenAi, "q", &["--output-format", "json"]);
    run.assert_ok();
    let v: serde_json::Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(v["subtype"], "success");
    assert_eq!(
        v["permission_denials"],
        json!([{"tool_name": "write", "tool_use_id": "w1", "tool_input": {"path": "new.txt", "content": "x\n"}}])
    );
    assert!(!p.root().join("new.txt").exists());

    // A run stopped by the step limit says so.
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call("l", "ls", json!({}))])),
        Step::Reply(Reply::text("never")),
    ]);
    let run = p.run(
        &mock,
        Wire::OpenAi,
        "q",
        &["--output-format", "json", "--max-steps", "1"],
    );
    assert_eq!(run.code, 1);
    let v: serde_json::Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(v["subtype"], "error_max_turns");
    assert_eq!(v["is_error"], true);
}

#[test]
fn claude_code_permission_flags_map_onto_the_gate() {
    let calls = || {
        vec![
            ("write", json!({"path": "new.txt", "content": "x\n"})),
            ("bash", json!({"command": "touch made-by-touch"})),
            ("bash", json!({"command": "rm README.md"})),
        ]
    };
    // Headless without --yolo: what no rule allows is refused (nobody to ask).
    let p = demo();
    let r = support::project::rounds(
        &p,
        Wire::OpenAi,
        calls(),
        &[
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            "Bash(touch:*)",
            "--disallowedTools",
            "Bash(rm:*), WebFetch",
        ],
    )
    .1;
    assert!(r[0].starts_with("Created `new.txt`"), "{}", r[0]);
    assert!(p.root().join("made-by-touch").exists(), "{}", r[1]);
    assert!(r[2].contains("--disallowedTools"), "{}", r[2]);
    assert!(p.root().join("README.md").exists());

    // Plan mode: no edits, even under bypassPermissions' sibling --yolo.
    let p = demo();
    let r = support::project::rounds(
        &p,
        Wire::OpenAi,
        vec![("write", json!({"path": "new.txt", "content": "x\n"}))],
        &["--permission-mode", "plan", "--yolo"],
    )
    .1;
    assert!(r[0].contains("--permission-mode"), "{}", r[0]);
    assert!(!p.root().join("new.txt").exists());
}

#[test]
fn max_turns_and_append_system_prompt() {
    let p = demo();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call("a", "ls", json!({}))])),
        Step::Reply(Reply::tools(vec![call("b", "ls", json!({"path": "src"}))])),
        Step::Reply(Reply::text("never")),
    ]);
    let run = p.run(
        &mock,
        Wire::OpenAi,
        "q",
        &[
            "--max-turns",
            "1",
            "--append-system-prompt",
            "Always answer in French.",
            "--output-format",
            "json",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(v["subtype"], "error_max_turns", "{v}");
    let system = mock.requests()[0].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(system.ends_with("\n\nAlways answer in French."), "{system}");
}

#[test]
fn a_bad_rule_on_the_command_line_says_which_flag() {
    let p = demo();
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("never"))]);
    let run = p.run(
        &mock,
        Wire::OpenAi,
        "q",
        &["--allowedTools", "Bash(git log"],
    );
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("--allowedTools: rule `Bash(git log` opens `(` but does not end with `)`"),
        "{}",
        run.stderr
    );
    assert!(mock.requests().is_empty());
}

#[test]
fn user_messages_on_stdin_are_turns_of_one_session() {
    // Claude Code's `--input-format stream-json`: one user message a line.
    let p = demo();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::text("first answer")),
        Step::Reply(Reply::text("second answer")),
    ]);
    let input = concat!(
        r#"{"type":"user","message":{"role":"user","content":"first question"}}"#,
        "\n",
        r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"second question"}]}}"#,
        "\n"
    );
    let out = run_piped(
        &p,
        &mock,
        &[
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ],
        input.as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let results: Vec<&serde_json::Value> = lines.iter().filter(|l| l["type"] == "result").collect();
    assert_eq!(results.len(), 2, "{lines:?}");
    assert_eq!(results[0]["result"], "first answer");
    assert_eq!(results[1]["result"], "second answer");
    assert_eq!(results[0]["session_id"], results[1]["session_id"]);
    // The second turn carries the first.
    let second = &mock.requests()[1].body["messages"];
    let texts: Vec<String> = second
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].to_string())
        .collect();
    assert!(
        texts.iter().any(|t| t.contains("first question")),
        "{texts:?}"
    );
    assert!(
        texts.iter().any(|t| t.contains("first answer")),
        "{texts:?}"
    );
    assert!(
        texts.last().unwrap().contains("second question"),
        "{texts:?}"
    );

    // A line that is not a user message stops the run, saying why.
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("never"))]);
    let out = run_piped(
        &p,
        &mock,
        &["-p", "--input-format", "stream-json"],
        b"hello\n",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not JSON"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(mock.requests().is_empty());
}
