//! End-to-end: the LLM transport's time limits hold against servers that
//! stay silent, only ping, or never finish; what a server really sent is
//! reported (a page that is not an event stream, a `Retry-After` too long to
//! wait); and a response that breaks off after text or a tool call's first
//! half is retried without anything of it having run. Over both wire
//! protocols, through the real binary, with limits shortened in `[llm]`.

use crate::support;

use serde_json::json;
use support::mock_llm::{MockLlm, Reply, Step, call, status};
use support::project::{BOTH, FAST_LLM, Project, Wire};

/// A project with the fast test settings, `extra_llm` keys replacing theirs.
fn project(extra_llm: &str) -> Project {
    let p = Project::new();
    let keys: Vec<&str> = extra_llm
        .lines()
        .filter_map(|l| l.split('=').next())
        .map(str::trim)
        .collect();
    let kept: String = FAST_LLM
        .lines()
        .filter(|l| !keys.contains(&l.split('=').next().unwrap_or_default().trim()))
        .map(|l| format!("{l}\n"))
        .collect();
    p.user_config(&format!("{kept}{extra_llm}"));
    p
}

#[test]
fn a_silent_server_fails_after_the_first_byte_limit_and_one_more_try() {
    for wire in BOTH {
        let p = project("first_byte_timeout_secs = 0.3\n");
        let mock = MockLlm::start(vec![
            Step::Silent,
            Step::Silent,
            Step::Reply(Reply::text("never asked for")),
        ]);
        let run = p.run(&mock, wire, "go", &[]);
        assert_eq!(run.code, 1, "{wire:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("gave up after 2 attempts"),
            "{wire:?}: {}",
            run.stderr
        );
        assert!(
            run.stderr
                .contains("no response from the server within 300 ms")
                && run.stderr.contains("[llm] first_byte_timeout_secs"),
            "{wire:?}: {}",
            run.stderr
        );
        assert_eq!(mock.requests().len(), 2, "{wire:?}");
        assert_eq!(mock.remaining(), 1, "{wire:?}");
    }
}

#[test]
fn first_byte_retries_is_the_number_of_tries_after_silence() {
    // Long enough that the answer itself is never late on a loaded machine.
    let p = project("first_byte_timeout_secs = 1\nfirst_byte_retries = 2\n");
    let mock = MockLlm::start(vec![
        Step::Silent,
        Step::Silent,
        Step::Reply(Reply::text("third time")),
    ]);
    let run = p.run(&mock, Wire::OpenAi, "go", &[]);
    run.assert_ok();
    assert_eq!(run.stdout, "third time\n");
}

#[test]
fn keep_alive_pings_alone_are_not_an_answer() {
    for wire in BOTH {
        // Pings every 50 ms; the first event is due within 1 s of the
        // request, and pings do not count.
        let p = project("first_byte_timeout_secs = 1\n");
        let mock = MockLlm::start(vec![
            Step::PingsOnly,
            Step::PingsOnly,
            Step::Reply(Reply::text("never asked for")),
        ]);
        let run = p.run(&mock, wire, "go", &[]);
        assert_eq!(run.code, 1, "{wire:?}: {}", run.stderr);
        assert!(
            run.stderr.contains(
                "sent no event within 1 s of the request (keep-alive pings do not count)"
            ) && run.stderr.contains("[llm] first_byte_timeout_secs")
                && run.stderr.contains("gave up after 2 attempts"),
            "{wire:?}: {}",
            run.stderr
        );
        assert_eq!(mock.requests().len(), 2, "{wire:?}");

        // Once is a hiccup: the next attempt is answered.
        let mock = MockLlm::start(vec![Step::PingsOnly, Step::Reply(Reply::text("late"))]);
        let run = p.run(&mock, wire, "go", &[]);
        run.assert_ok();
        assert_eq!(run.stdout, "late\n");
    }
}

#[test]
fn pings_after_some_text_do_not_hold_the_stream_open() {
    for wire in BOTH {
        // Pings every 50 ms; only events reset the 1 s idle limit.
        let p = project("idle_timeout_secs = 1\n");
        let mock = MockLlm::start(vec![
            Step::PingsAfter(Reply::text("a first answer that stalls")),
            Step::Reply(Reply::text("a second answer, whole")),
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
        let lines = run.events();
        let retry = lines.iter().find(|l| l["type"] == "retrying").unwrap();
        assert!(
            retry["reason"]
                .as_str()
                .unwrap()
                .contains("[llm] idle_timeout_secs"),
            "{wire:?}: {retry}"
        );
        assert!(lines.iter().any(|l| l["type"] == "withdrawn"), "{wire:?}");
        assert_eq!(lines.last().unwrap()["result"], "a second answer, whole");
    }
}

#[test]
fn a_response_that_never_ends_meets_the_request_cap_and_is_not_retried() {
    for wire in BOTH {
        let p = project("request_timeout_secs = 0.6\n");
        let mock = MockLlm::start(vec![Step::Drip, Step::Reply(Reply::text("unused"))]);
        let run = p.run(&mock, wire, "go", &[]);
        assert_eq!(run.code, 1, "{wire:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("the response took longer than 600 ms")
                && run.stderr.contains("[llm] request_timeout_secs"),
            "{wire:?}: {}",
            run.stderr
        );
        assert_eq!(mock.requests().len(), 1, "{wire:?}");
    }
}

#[test]
fn a_page_that_is_not_an_event_stream_is_asked_once_more_then_reported() {
    let page = || {
        status(
            200,
            &[("content-type", "text/html; charset=utf-8")],
            "\n<!DOCTYPE html>\n<html><head><title>Sign in to the proxy</title></head></html>\n",
        )
    };
    for wire in BOTH {
        let p = Project::new();
        let mock = MockLlm::start(vec![page(), Step::Reply(Reply::text("it passed"))]);
        let run = p.run(&mock, wire, "go", &[]);
        run.assert_ok();
        assert_eq!(run.stdout, "it passed\n");

        let mock = MockLlm::start(vec![page(), page(), Step::Reply(Reply::text("unused"))]);
        let run = p.run(&mock, wire, "go", &[]);
        assert_eq!(run.code, 1, "{wire:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("gave up after 2 attempts"),
            "{}",
            run.stderr
        );
        assert!(
            run.stderr.contains(
                "answered HTTP 200 with content type `text/html; charset=utf-8` instead of an event stream: `<!DOCTYPE html>`"
            ),
            "{wire:?}: {}",
            run.stderr
        );
        assert_eq!(
            mock.requests().len(),
            2,
            "{wire:?}: asked once more, not five times"
        );
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);

        let mock = MockLlm::start(vec![status(
            200,
            &[],
            r#"{"error":{"message":"insufficient quota","type":"insufficient_quota"}}"#,
        )]);
        let run = p.run(&mock, wire, "go", &[]);
        assert_eq!(run.code, 1, "{wire:?}");
        assert!(
            run.stderr.contains("`application/json`") && run.stderr.contains("insufficient quota"),
            "{wire:?}: {}",
            run.stderr
        );
    }
}

#[test]
fn an_event_stream_under_another_content_type_is_read() {
    let openai = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"plain\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    let anthropic = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\n\
        event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
        event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"plain\"}}\n\n\
        event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}\n\n\
        event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    for (wire, body) in [(Wire::OpenAi, openai), (Wire::Anthropic, anthropic)] {
        let p = Project::new();
        let mock = MockLlm::start(vec![status(200, &[("content-type", "text/plain")], body)]);
        let run = p.run(&mock, wire, "go", &[]);
        run.assert_ok();
        assert_eq!(run.stdout, "plain\n", "{wire:?}");
    }
}

#[test]
fn retry_after_longer_than_the_budget_fails_at_once_saying_how_long() {
    for wire in BOTH {
        let p = Project::new();
        let mock = MockLlm::start(vec![
            status(
                429,
                &[("retry-after", "3600")],
                r#"{"error":{"message":"slow down"}}"#,
            ),
            Step::Reply(Reply::text("unused")),
        ]);
        let run = p.run(&mock, wire, "go", &[]);
        assert_eq!(run.code, 1, "{wire:?}");
        assert!(
            run.stderr
                .contains("rate limited; openai answered HTTP 429 and asks to wait 60 minutes")
                || run.stderr.contains(
                    "rate limited; anthropic answered HTTP 429 and asks to wait 60 minutes"
                ),
            "{wire:?}: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains("[llm] max_retry_wait_secs"),
            "{}",
            run.stderr
        );
        assert_eq!(mock.requests().len(), 1, "{wire:?}");
    }
}

#[test]
fn a_tool_call_of_a_broken_response_runs_once_from_the_retry() {
    for wire in BOTH {
        let p = Project::new();
        let append = || {
            Reply::tools(vec![call(
                "c1",
                "bash",
                json!({"command": "echo ran >> count.txt"}),
            )])
            .with_text("I will count.")
        };
        let mock = MockLlm::start(vec![
            Step::DropMidStream(append()),
            Step::NoFinalEvent(append()),
            Step::Reply(append()),
            Step::Reply(Reply::text("counted")),
        ]);
        let run = p.run(&mock, wire, "go", &["--yolo"]);
        run.assert_ok();
        assert_eq!(run.stdout, "counted\n", "{wire:?}");
        assert_eq!(
            std::fs::read_to_string(p.root().join("count.txt")).unwrap(),
            "ran\n",
            "{wire:?}: the call ran once"
        );
        assert_eq!(mock.requests().len(), 4, "{wire:?}");
    }
}

#[test]
fn a_large_tool_input_in_small_chunks_arrives_whole() {
    // Just under `write`'s 1 MiB limit, in one JSON string of one event.
    let content = "0123456789abcdef\n".repeat(60_000);
    let args = json!({"path": "big.txt", "content": content}).to_string();
    let body = format!(
        "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"w1","type":"function","function":{"name":"write","arguments":args}}]}}]}),
        json!({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}),
    );
    let p = Project::new();
    let mock = MockLlm::start(vec![
        Step::RawChunked(body, 4096),
        Step::Reply(Reply::text("written")),
    ]);
    let run = p.run(&mock, Wire::OpenAi, "go", &["--yolo"]);
    run.assert_ok();
    let results = support::project::result_texts(&mock.requests()[1]);
    let written = std::fs::read_to_string(p.root().join("big.txt")).unwrap_or_default();
    assert!(written == content, "{results:?}");
}
