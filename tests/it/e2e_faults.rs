//! End-to-end: every fault the mock can inject is survived (retried) or
//! reported with a message that says what to do, over both wire protocols.

use crate::support;

use std::time::Instant;

use serde_json::json;
use support::mock_llm::{MockLlm, Reply, Step, call, status};
use support::project::{BOTH, Project, Wire, result_texts};

fn tool_reply() -> Reply {
    Reply::tools(vec![call("c1", "ls", json!({}))])
}

/// Runs a script whose first step is a fault and whose rest is a normal
/// tool call and answer; asserts the run survived with one retry.
fn survives(fault: Step) {
    for wire in BOTH {
        let p = Project::new();
        p.file("a.txt", "x");
        let mock = MockLlm::start(vec![
            fault.clone(),
            Step::Reply(tool_reply()),
            Step::Reply(Reply::text("recovered")),
        ]);
        let run = p.run(&mock, wire, "go", &[]);
        run.assert_ok();
        assert_eq!(run.stdout, "recovered\n", "{wire:?}");
        let reqs = mock.requests();
        assert_eq!(reqs.len(), 3, "{wire:?}: one retry, then the conversation");
        assert_eq!(
            reqs[0].body, reqs[1].body,
            "{wire:?}: the retry resends the same request"
        );
        assert!(result_texts(&reqs[2])[0].contains("a.txt"), "{wire:?}");
    }
}

#[test]
fn server_error_is_retried() {
    survives(status(500, &[], r#"{"error":{"message":"internal"}}"#));
}

#[test]
fn dropped_connection_mid_stream_is_retried_when_nothing_was_shown() {
    survives(Step::DropMidStream(tool_reply()));
}

#[test]
fn stream_without_final_event_is_retried() {
    survives(Step::NoFinalEvent(tool_reply()));
}

#[test]
fn idle_stream_times_out_and_is_retried() {
    survives(Step::Stall(tool_reply()));
}

#[test]
fn rate_limit_honours_retry_after() {
    for wire in BOTH {
        let p = Project::new();
        let mock = MockLlm::start(vec![
            status(
                429,
                &[("retry-after", "1")],
                r#"{"error":{"message":"slow down"}}"#,
            ),
            Step::Reply(Reply::text("after the wait")),
        ]);
        let started = Instant::now();
        let run = p.run(&mock, wire, "go", &[]);
        run.assert_ok();
        assert_eq!(run.stdout, "after the wait\n");
        // The configured backoff is 5 ms; only Retry-After explains a 1 s wait.
        assert!(
            started.elapsed().as_millis() >= 1000,
            "{wire:?}: waited {:?}",
            started.elapsed()
        );
        assert_eq!(mock.requests().len(), 2);
    }
}

#[test]
fn broken_stream_after_text_was_shown_is_retried_and_the_text_withdrawn() {
    for wire in BOTH {
        let p = Project::new();
        let mock = MockLlm::start(vec![
            Step::DropMidStream(Reply::text("a long answer that breaks off")),
            Step::Reply(Reply::text("the answer, whole")),
        ]);
        let run = p.run(
            &mock,
            wire,
            "go",
            &[
                "--output-format",
                "stream-json",
                "--include-partial-messages",
            ],
        );
        run.assert_ok();
        assert_eq!(mock.requests().len(), 2, "{wire:?}");
        let lines = run.events();
        let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
        let withdrawn = kinds.iter().position(|k| *k == "withdrawn").unwrap();
        assert!(
            kinds[..withdrawn].contains(&"text_delta"),
            "{wire:?}: text came before it was withdrawn: {kinds:?}"
        );
        assert_eq!(
            lines[withdrawn],
            json!({"type": "withdrawn", "attempt": 2, "of": 4}),
            "{wire:?}"
        );
        assert_eq!(kinds[withdrawn + 1], "retrying", "{wire:?}");
        let after: String = lines[withdrawn..]
            .iter()
            .filter(|l| l["type"] == "text_delta")
            .map(|l| l["text"].as_str().unwrap())
            .collect();
        assert_eq!(after, "the answer, whole", "{wire:?}");
        assert_eq!(lines.last().unwrap()["result"], "the answer, whole");
    }
}

#[test]
fn persistent_server_errors_give_up_with_a_count() {
    for wire in BOTH {
        let p = Project::new();
        let script = (0..4)
            .map(|_| status(503, &[], r#"{"error":{"message":"overloaded"}}"#))
            .collect();
        let mock = MockLlm::start(script);
        let run = p.run(&mock, wire, "go", &[]);
        assert_eq!(run.code, 1);
        assert!(
            run.stderr.contains("gave up after 4 attempts"),
            "{wire:?}: {}",
            run.stderr
        );
        assert!(run.stderr.contains("HTTP 503"), "{}", run.stderr);
        assert_eq!(mock.requests().len(), 4);
    }
}

#[test]
fn authentication_failure_names_the_key_variable() {
    for (wire, var) in [
        (Wire::OpenAi, "OPENAI_API_KEY"),
        (Wire::Anthropic, "ANTHROPIC_API_KEY"),
    ] {
        let p = Project::new();
        let mock = MockLlm::start(vec![status(
            401,
            &[],
            r#"{"error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
        )]);
        let run = p.run(&mock, wire, "go", &[]);
        assert_eq!(run.code, 1);
        assert!(
            run.stderr
                .contains(&format!("check that {var} holds a valid API key")),
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains("invalid x-api-key"), "{}", run.stderr);
        assert_eq!(mock.requests().len(), 1, "auth errors are not retried");
    }
}

#[test]
fn unknown_model_and_context_length_say_so() {
    for wire in BOTH {
        let p = Project::new();
        let mock = MockLlm::start(vec![status(
            404,
            &[],
            r#"{"error":{"type":"not_found_error","code":"model_not_found","message":"model: mock-1 does not exist"}}"#,
        )]);
        let run = p.run(&mock, wire, "go", &[]);
        assert_eq!(run.code, 1);
        assert!(
            run.stderr.contains("model `mock-1` was not found"),
            "{}",
            run.stderr
        );

        // Too long: one compaction (the summary request has no tools), the
        // same step again, and when that is still too long, the error.
        let too_long = || {
            status(
                400,
                &[],
                r#"{"error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
            )
        };
        let mock = MockLlm::start(vec![
            too_long(),
            Step::Reply(Reply::text("## Task\ngo")),
            too_long(),
        ]);
        let run = p.run(&mock, wire, "go", &[]);
        assert_eq!(run.code, 1);
        let requests = mock.requests();
        assert_eq!(requests.len(), 3, "{}", run.stderr);
        assert!(requests[1].body.get("tools").is_none());
        assert!(run.stderr.contains("compacted"), "{}", run.stderr);
        assert!(
            run.stderr
                .contains("no longer fits in the model's context window"),
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains("prompt is too long"), "{}", run.stderr);
    }
}

#[test]
fn unreachable_server_is_reported_with_what_to_check() {
    let p = Project::new();
    // Nothing listens on port 9 (discard) on loopback here.
    let mut cmd = p.command();
    cmd.args([
        "--provider",
        "ollama",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "-p",
        "hi",
    ]);
    let run = support::project::Run::of(cmd.output().unwrap());
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("gave up after 4 attempts"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("cannot reach http://127.0.0.1:9/v1/chat/completions"),
        "{}",
        run.stderr
    );
}

#[test]
fn malformed_tool_call_json_is_answered_and_the_turn_goes_on() {
    for wire in BOTH {
        let p = Project::new();
        let mut broken = call("b1", "view", json!({}));
        broken.arguments = r#"{"path": "a.txt""#.into();
        let mock = MockLlm::start(vec![
            Step::Reply(Reply::tools(vec![broken])),
            Step::Reply(Reply::tools(vec![call(
                "b2",
                "view",
                json!({"path": "a.txt"}),
            )])),
            Step::Reply(Reply::text("fixed")),
        ]);
        p.file("a.txt", "content\n");
        let run = p.run(&mock, wire, "go", &[]);
        run.assert_ok();
        let first = result_texts(&mock.requests()[1]);
        assert!(
            first[0].starts_with("arguments for `view` are not valid JSON"),
            "{wire:?}: {first:?}"
        );
        assert_eq!(result_texts(&mock.requests()[2]), vec!["     1\tcontent\n"]);
    }
}

#[test]
fn step_limit_and_repetition_stop_the_turn() {
    let p = Project::new();
    let again = || Step::Reply(Reply::tools(vec![call("r", "ls", json!({}))]));
    let mock = MockLlm::start(vec![
        again(),
        again(),
        again(),
        again(),
        Step::Reply(Reply::text("never")),
    ]);
    let run = p.run(&mock, Wire::OpenAi, "go", &[]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("made the same `ls` call ({}) 4 times in a row"),
        "{}",
        run.stderr
    );

    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call("1", "ls", json!({}))])),
        Step::Reply(Reply::tools(vec![call(
            "2",
            "glob",
            json!({"pattern": "*"}),
        )])),
        Step::Reply(Reply::text("never")),
    ]);
    let run = p.run(&mock, Wire::Anthropic, "go", &["--max-steps", "2"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("stopped after 2 model round trips"),
        "{}",
        run.stderr
    );
    assert_eq!(mock.requests().len(), 2);
}

#[test]
fn api_error_event_in_the_stream_is_retried() {
    let p = Project::new();
    let overloaded = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let mock = MockLlm::start(vec![
        Step::Raw(overloaded.into()),
        Step::Reply(Reply::text("fine")),
    ]);
    let run = p.run(&mock, Wire::Anthropic, "go", &[]);
    run.assert_ok();
    assert_eq!(run.stdout, "fine\n");
}

#[test]
fn interrupt_stops_a_stalled_stream_promptly() {
    for wire in BOTH {
        let p = Project::new();
        p.user_config("[llm]\nidle_timeout_secs = 60\n");
        let mock = MockLlm::start(vec![Step::Stall(Reply::text("this will hang"))]);
        let child = p
            .command_for(&mock, wire, "go", &[])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Wait until the request reached the server, then interrupt.
        let deadline = Instant::now() + std::time::Duration::from_secs(10);
        while mock.requests().is_empty() && Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let sent = Instant::now();
        // SAFETY: sending SIGINT to our own child process.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let run = support::project::Run::of(child.wait_with_output().unwrap());
        assert_eq!(run.code, 130, "{wire:?}: {}", run.stderr);
        assert!(run.stderr.contains("cancelled"), "{}", run.stderr);
        assert!(
            sent.elapsed().as_secs() < 5,
            "{wire:?}: took {:?}",
            sent.elapsed()
        );
        assert_eq!(
            mock.requests().len(),
            1,
            "a cancelled request is not retried"
        );
    }
}
