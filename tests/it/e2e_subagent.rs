//! The `agent` tool through the real binary: the child session talks to the
//! same mock model, searches and reads with its read-only Surface, and the
//! parent receives only the child's final text. Writes are refused by the
//! child's Surface, usage adds up, hooks stay out of children, and a
//! child's failure is a tool result.

use crate::support;

use serde_json::{Value, json};
use support::mock_llm::{MockLlm, Reply, Step, call};
use support::project::{Project, Wire, result_texts};

fn system_text(body: &Value) -> String {
    body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn child_searches_and_reads_and_only_its_report_comes_back() {
    let p = Project::new();
    p.file("src/config.rs", "pub fn load_config() {}\n");
    p.file("src/main.rs", "fn main() { load_config(); }\n");
    let mock = MockLlm::start(vec![
        // Parent delegates.
        Step::Reply(Reply::tools(vec![call(
            "p1",
            "agent",
            json!({"prompt": "Where is load_config defined?", "description": "find the loader"}),
        )])),
        // Child searches, then reads.
        Step::Reply(Reply::tools(vec![call(
            "k1",
            "grep",
            json!({"pattern": "fn load_config"}),
        )])),
        Step::Reply(Reply::tools(vec![call(
            "k2",
            "view",
            json!({"path": "src/config.rs"}),
        )])),
        Step::Reply(Reply::text("load_config is defined at src/config.rs:1.")),
        // Parent answers.
        Step::Reply(Reply::text("It is in src/config.rs.")),
    ]);
    let run = p.run(
        &mock,
        Wire::OpenAi,
        "find load_config",
        &[
            "--output-format",
            "stream-json",
            "--include-partial-messages",
        ],
    );
    run.assert_ok();
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 5);

    // The child: its own prompt, read-only tools, none of the parent's talk.
    let child = &reqs[1].body;
    assert!(
        system_text(child).contains("You are a sub-agent"),
        "{}",
        system_text(child)
    );
    assert_eq!(
        tool_names(child),
        ["diagnostics", "glob", "grep", "ls", "references", "view"]
    );
    assert_eq!(
        child["messages"][1],
        json!({"role": "user", "content": "Where is load_config defined?"})
    );
    assert!(
        result_texts(&reqs[2])[0].contains("src/config.rs"),
        "grep ran"
    );
    assert!(
        result_texts(&reqs[3])[0].contains("pub fn load_config"),
        "view ran"
    );

    // The parent: exactly the child's final text, nothing of its steps.
    assert_eq!(
        result_texts(&reqs[4]),
        ["load_config is defined at src/config.rs:1."]
    );
    assert!(tool_names(&reqs[0].body).contains(&"agent".to_string()));

    // Progress: the child's steps were reported under the parent's call.
    let lines = run.events();
    let steps: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "tool_progress")
        .map(|l| {
            assert_eq!(l["id"], "p1");
            l["text"].as_str().unwrap()
        })
        .collect();
    assert_eq!(steps, ["grep fn load_config", "view src/config.rs"]);
}

#[test]
fn child_cannot_write_and_parent_usage_includes_children() {
    let p = Project::new();
    let mock = MockLlm::start(vec![
        Step::Reply(
            Reply::tools(vec![call("p1", "agent", json!({"prompt": "make a file"}))])
                .with_usage(100, 10),
        ),
        Step::Reply(
            Reply::tools(vec![call(
                "k1",
                "write",
                json!({"path": "evil.txt", "content": "x"}),
            )])
            .with_usage(40, 4),
        ),
        Step::Reply(Reply::text("I could not write.").with_usage(50, 5)),
        Step::Reply(Reply::text("ok").with_usage(200, 20)),
    ]);
    let run = p.run(
        &mock,
        Wire::OpenAi,
        "go",
        &["--yolo", "--output-format", "json"],
    );
    run.assert_ok();
    let reqs = mock.requests();
    assert_eq!(
        result_texts(&reqs[2]),
        ["unknown tool `write`; available tools: diagnostics, glob, grep, ls, references, view"]
    );
    assert!(!p.root().join("evil.txt").exists());
    assert_eq!(result_texts(&reqs[3]), ["I could not write."]);
    let v: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(v["usage"]["input_tokens"], 100 + 40 + 50 + 200);
    assert_eq!(v["usage"]["output_tokens"], 10 + 4 + 5 + 20);
}

#[test]
fn several_children_run_and_hooks_stay_out_of_them() {
    let p = Project::new();
    p.file("a.txt", "alpha\n");
    let log = p.scratch().join("hooked.txt");
    p.user_config(&format!(
        "{}[[hooks.PreToolUse]]\ncommand = \"echo $AGENT_TOOL_NAME >> {}\"\n",
        support::project::FAST_LLM,
        log.display()
    ));
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![
            call("p1", "agent", json!({"prompt": "task one"})),
            call("p2", "agent", json!({"prompt": "task two"})),
        ])),
        // Each child reads once, then reports; the replies are alike, so
        // it does not matter which child takes which.
        Step::Reply(Reply::tools(vec![call(
            "k1",
            "view",
            json!({"path": "a.txt"}),
        )])),
        Step::Reply(Reply::tools(vec![call(
            "k2",
            "view",
            json!({"path": "a.txt"}),
        )])),
        Step::Reply(Reply::text("report")),
        Step::Reply(Reply::text("report")),
        Step::Reply(Reply::text("both done")),
    ]);
    p.run(&mock, Wire::OpenAi, "go", &[]).assert_ok();
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 6);
    assert_eq!(result_texts(&reqs[5]), ["report", "report"]);
    // The parent's two calls ran the hook; the children's views did not.
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "agent\nagent\n");
}

#[test]
fn a_failing_child_is_a_tool_result() {
    let p = Project::new();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call(
            "p1",
            "agent",
            json!({"prompt": "look"}),
        )])),
        Step::Status {
            code: 400,
            headers: vec![],
            body: r#"{"error": {"message": "context too long for the child"}}"#.into(),
        },
        Step::Reply(Reply::text("I will search myself.")),
    ]);
    let run = p.run(&mock, Wire::OpenAi, "go", &[]);
    run.assert_ok();
    assert_eq!(run.stdout.trim(), "I will search myself.");
    let result = &result_texts(&mock.requests()[2])[0];
    assert!(
        result.starts_with("the sub-agent failed: ")
            && result.contains("context too long for the child"),
        "{result}"
    );
}
