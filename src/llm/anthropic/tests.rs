use serde_json::json;

use super::*;

fn run(events: &[(&str, &str)]) -> (Result<Completion, LlmError>, Vec<StreamEvent>) {
    let mut d = Box::new(MessagesDecoder::new("anthropic".into()));
    let mut out = Vec::new();
    for (event, data) in events {
        match d.event(
            SseEvent {
                event: event.to_string(),
                data: data.to_string(),
            },
            &mut |e| out.push(e),
        ) {
            Ok(Seen::Final) => return (d.finish(true), out),
            Ok(_) => {}
            Err(e) => return (Err(e), out),
        }
    }
    (d.finish(false), out)
}

#[test]
fn thinking_text_and_tool_use() {
    let (c, events) = run(&[
        (
            "message_start",
            r#"{"type":"message_start","message":{"usage":{"input_tokens":12,"output_tokens":1,"cache_read_input_tokens":3}}}"#,
        ),
        ("ping", r#"{"type":"ping"}"#),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"plan"}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG"}}"#,
        ),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Look"}}"#,
        ),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"t1","name":"view","input":{}}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"a\"}"}}"#,
        ),
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":2}"#,
        ),
        (
            "message_delta",
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":40}}"#,
        ),
        ("message_stop", r#"{"type":"message_stop"}"#),
    ]);
    let c = c.unwrap();
    assert_eq!(c.stop, StopReason::ToolUse);
    assert_eq!(
        c.usage,
        Usage {
            input_tokens: 12,
            output_tokens: 40,
            cache_read_tokens: 3,
            cache_write_tokens: 0
        }
    );
    assert_eq!(
        c.message.content,
        vec![
            Content::Thinking {
                thinking: "plan".into(),
                signature: Some("SIG".into())
            },
            Content::Text {
                text: "Look".into()
            },
            Content::ToolCall {
                id: "t1".into(),
                name: "view".into(),
                arguments: "{\"path\": \"a\"}".into()
            },
        ]
    );
    assert_eq!(
        events,
        vec![
            StreamEvent::ThinkingDelta("plan".into()),
            StreamEvent::TextDelta("Look".into())
        ]
    );
    // Sent back: thinking with its signature, then the tool call.
    let sent = serde_json::to_value(encode_message(&c.message).unwrap()).unwrap();
    assert_eq!(
        sent["content"][0],
        json!({"type":"thinking","thinking":"plan","signature":"SIG"})
    );
    assert_eq!(sent["content"][2]["input"], json!({"path":"a"}));
}

#[test]
fn tool_input_whole_in_block_start() {
    let (c, _) = run(&[
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"view","input":{"path":"a"}}}"#,
        ),
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":0}"#,
        ),
        (
            "message_delta",
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"}}"#,
        ),
        ("message_stop", r#"{"type":"message_stop"}"#),
    ]);
    assert_eq!(
        c.unwrap().message.content,
        vec![Content::ToolCall {
            id: "t1".into(),
            name: "view".into(),
            arguments: r#"{"path":"a"}"#.into()
        }]
    );
}

#[test]
fn unknown_blocks_deltas_and_events_are_skipped() {
    let (c, events) = run(&[
        ("ping", r#"{"type":"ping"}"#),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"s1","name":"web_search","input":{}}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"x\"}"}}"#,
        ),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"web_search_tool_result","tool_use_id":"s1","content":[]}}"#,
        ),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location"}}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Found"}}"#,
        ),
        ("future_event", r#"{"type":"future_event","x":1}"#),
        (
            "message_delta",
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"}}"#,
        ),
        ("message_stop", r#"{"type":"message_stop"}"#),
    ]);
    let c = c.unwrap();
    assert_eq!(
        c.message.content,
        vec![Content::Text {
            text: "Found".into()
        }]
    );
    assert_eq!(events, vec![StreamEvent::TextDelta("Found".into())]);
}

#[test]
fn pings_are_keep_alives() {
    let mut d = MessagesDecoder::new("a".into());
    for (event, data) in [("ping", r#"{"type":"ping"}"#), ("ping", "")] {
        let ev = SseEvent {
            event: event.into(),
            data: data.into(),
        };
        assert_eq!(d.event(ev, &mut |_| {}).unwrap(), Seen::KeepAlive);
    }
}

#[test]
fn overloaded_error_event_is_retryable() {
    let (c, _) = run(&[(
        "error",
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    )]);
    assert!(
        matches!(
            c,
            Err(LlmError::Api {
                retryable: true,
                ..
            })
        ),
        "{c:?}"
    );
}

#[test]
fn context_length_error_event_is_its_own_error() {
    let (c, _) = run(&[(
        "error",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
    )]);
    assert!(
        matches!(c, Err(LlmError::ContextLength(ref m)) if m.contains("210000")),
        "{c:?}"
    );
}

#[test]
fn stream_without_stop_is_incomplete() {
    let (c, _) = run(&[(
        "content_block_start",
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
    )]);
    assert!(matches!(c, Err(LlmError::Incomplete)));
}

#[test]
fn tool_results_open_the_user_message() {
    let m = Message {
        role: Role::User,
        content: vec![
            Content::Text {
                text: "note".into(),
            },
            Content::ToolResult {
                call_id: "t1".into(),
                content: "ok".into(),
                is_error: true,
            },
        ],
    };
    let v = serde_json::to_value(encode_message(&m).unwrap()).unwrap();
    assert_eq!(v["content"][0]["type"], "tool_result");
    assert_eq!(v["content"][0]["is_error"], true);
    assert_eq!(v["content"][1]["type"], "text");
}
