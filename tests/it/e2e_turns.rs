//! How a turn ends, through the real binary: an answer cut off by the token
//! limit is continued once and then reported; a refusal or an empty answer
//! is not success; the loop detector stops only consecutive identical
//! steps, tells the model first, and names the call; identical calls in
//! one response run once.

use crate::support;

use serde_json::{Value, json};
use support::mock_llm::{MockLlm, Reply, Step, call};
use support::project::{BOTH, Project, Wire, result_texts};

/// A text answer that ends with `stop` (the protocol's own word for it).
fn ending(wire: Wire, text: &str, stop: &str) -> Step {
    let text = serde_json::to_string(text).unwrap();
    Step::Raw(match wire {
        Wire::OpenAi => format!(
            "data: {{\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"model\":\"mock-1\",\"choices\":[{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":{text}}},\"finish_reason\":null}}]}}\n\n\
             data: {{\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"model\":\"mock-1\",\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"{stop}\"}}]}}\n\n\
             data: [DONE]\n\n"
        ),
        Wire::Anthropic => format!(
            "event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"mock-1\",\"content\":[],\"stop_reason\":null,\"usage\":{{\"input_tokens\":5,\"output_tokens\":1}}}}}}\n\n\
             event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{{\"type\":\"text\",\"text\":\"\"}}}}\n\n\
             event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":{text}}}}}\n\n\
             event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":0}}\n\n\
             event: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"{stop}\"}},\"usage\":{{\"output_tokens\":9}}}}\n\n\
             event: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n"
        ),
    })
}

fn cut(wire: Wire) -> &'static str {
    match wire {
        Wire::OpenAi => "length",
        Wire::Anthropic => "max_tokens",
    }
}

/// The last text the person sent in a request.
fn last_text(body: &Value) -> String {
    let m = body["messages"].as_array().unwrap().last().unwrap().clone();
    match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(b) => b
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

#[test]
fn a_cut_answer_is_continued_once_then_reported() {
    for wire in BOTH {
        let p = Project::new();
        // The second answer ends normally, in each protocol's words.
        let normal = match wire {
            Wire::OpenAi => "stop",
            Wire::Anthropic => "end_turn",
        };
        let mock = MockLlm::start(vec![
            ending(wire, "The first half", cut(wire)),
            ending(wire, " and the rest.", normal),
        ]);
        let run = p.run(&mock, wire, "explain", &["--output-format", "json"]);
        run.assert_ok();
        let v: Value = serde_json::from_str(run.stdout.trim()).unwrap();
        assert_eq!(v["result"], "The first half and the rest.");
        assert_eq!(v["stop_reason"], "end_turn");
        assert!(
            last_text(&mock.requests()[1].body).contains("cut off by the output token limit"),
            "{wire:?}"
        );

        // Cut twice: an error, with the partial answer kept in the log.
        let mock = MockLlm::start(vec![
            ending(wire, "one", cut(wire)),
            ending(wire, " two", cut(wire)),
        ]);
        let run = p.run(&mock, wire, "explain", &["--output-format", "json"]);
        assert_eq!(run.code, 1, "{wire:?}");
        let v: Value = serde_json::from_str(run.stdout.trim()).unwrap();
        assert_eq!(v["is_error"], true);
        assert_eq!(v["stop_reason"], "max_tokens");
        assert!(
            run.stderr.contains("cut off by the output token limit"),
            "{}",
            run.stderr
        );
    }
}

#[test]
fn a_refusal_or_an_empty_answer_is_not_success() {
    for wire in BOTH {
        let p = Project::new();
        let refusal = match wire {
            Wire::OpenAi => "content_filter",
            Wire::Anthropic => "refusal",
        };
        let mock = MockLlm::start(vec![ending(wire, "", refusal)]);
        let run = p.run(&mock, wire, "do it", &[]);
        assert_eq!(run.code, 1);
        assert!(run.stderr.contains("declined to answer"), "{}", run.stderr);

        let normal = match wire {
            Wire::OpenAi => "stop",
            Wire::Anthropic => "end_turn",
        };
        let mock = MockLlm::start(vec![ending(wire, "", normal)]);
        let run = p.run(&mock, wire, "do it", &[]);
        assert_eq!(run.code, 1);
        assert!(run.stderr.contains("without an answer"), "{}", run.stderr);
    }
}

#[test]
fn progress_between_repeats_is_not_a_loop() {
    let p = Project::new();
    p.file("a.txt", "v1\n");
    let test = |i: usize| {
        Step::Reply(Reply::tools(vec![call(
            &format!("t{i}"),
            "bash",
            json!({"command": "cat a.txt"}),
        )]))
    };
    let edit = |i: usize, from: &str, to: &str| {
        Step::Reply(Reply::tools(vec![call(
            &format!("e{i}"),
            "edit",
            json!({"path": "a.txt", "old_string": from, "new_string": to}),
        )]))
    };
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call(
            "v",
            "view",
            json!({"path": "a.txt"}),
        )])),
        test(1),
        edit(1, "v1", "v2"),
        test(2),
        edit(2, "v2", "v1"),
        // The same command and the same output as test 1, with edits between.
        test(3),
        edit(3, "v1", "v2"),
        test(4),
        Step::Reply(Reply::text("done")),
    ]);
    let run = p.run(&mock, Wire::OpenAi, "test, fix, test", &["--yolo"]);
    run.assert_ok();
    assert_eq!(run.stdout.trim(), "done");
}

#[test]
fn a_real_loop_is_told_first_then_stopped_naming_the_call() {
    let p = Project::new();
    let again = |i: usize| Step::Reply(Reply::tools(vec![call(&format!("r{i}"), "ls", json!({}))]));
    let mock = MockLlm::start(vec![
        again(1),
        again(2),
        again(3),
        again(4),
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
    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    // The third identical result reached the model with a note.
    let third = result_texts(&requests[3]);
    assert!(
        third[0].contains("you are not making progress"),
        "{third:?}"
    );
    assert!(!result_texts(&requests[2])[0].contains("not making progress"));
}

#[test]
fn identical_calls_in_one_response_run_once() {
    let p = Project::new();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![
            call("a", "bash", json!({"command": "echo once >> log.txt"})),
            call("b", "bash", json!({"command": "echo once >> log.txt"})),
        ])),
        Step::Reply(Reply::text("done")),
    ]);
    p.run(&mock, Wire::OpenAi, "go", &["--yolo"]).assert_ok();
    assert_eq!(
        std::fs::read_to_string(p.root().join("log.txt")).unwrap(),
        "once\n"
    );
    let results = result_texts(&mock.requests()[1]);
    assert_eq!(results.len(), 2);
    assert!(
        results[1].starts_with("Not run: this call is identical to call `a`"),
        "{results:?}"
    );
}
