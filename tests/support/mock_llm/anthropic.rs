//! Anthropic Messages streaming (`event: <type>\ndata: {json}\n\n`).
//! JSON is written by hand so key order matches the real API.

use serde_json::Value;

use super::{Reply, Stream, json_str, model_of, pieces};

fn event(name: &str, data: &str) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// Appends content_block_start / deltas / content_block_stop for block `index`.
fn block(events: &mut Vec<String>, index: usize, start: &str, deltas: Vec<String>) {
    events.push(event(
        "content_block_start",
        &format!(r#"{{"type":"content_block_start","index":{index},"content_block":{start}}}"#),
    ));
    for d in deltas {
        events.push(event(
            "content_block_delta",
            &format!(r#"{{"type":"content_block_delta","index":{index},"delta":{d}}}"#),
        ));
    }
    events.push(event(
        "content_block_stop",
        &format!(r#"{{"type":"content_block_stop","index":{index}}}"#),
    ));
}

/// Deterministic fake signature for a thinking block (FNV-1a of its text).
fn signature(thinking: &str) -> String {
    let hash = thinking.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("sig-{hash:016x}")
}

pub(super) fn render(reply: &Reply, request: &Value) -> Stream {
    let model = model_of(request);
    let (input, output) = reply.usage;
    let mut events = vec![
        event(
            "message_start",
            &format!(
                "{{\"type\":\"message_start\",\"message\":{{\"id\":\"msg_mock\",\"type\":\"message\",\
                 \"role\":\"assistant\",\"model\":{model},\"content\":[],\"stop_reason\":null,\
                 \"stop_sequence\":null,\"usage\":{{\"input_tokens\":{input},\"output_tokens\":1}}}}}}"
            ),
        ),
        event("ping", r#"{"type":"ping"}"#),
    ];
    let mut index = 0;
    if let Some(t) = &reply.thinking {
        let mut deltas: Vec<String> = pieces(t, 4)
            .into_iter()
            .map(|p| format!(r#"{{"type":"thinking_delta","thinking":{}}}"#, json_str(p)))
            .collect();
        deltas.push(format!(
            r#"{{"type":"signature_delta","signature":{}}}"#,
            json_str(&signature(t))
        ));
        block(
            &mut events,
            index,
            r#"{"type":"thinking","thinking":"","signature":""}"#,
            deltas,
        );
        index += 1;
    }
    if let Some(t) = &reply.text {
        let deltas = pieces(t, 4)
            .into_iter()
            .map(|p| format!(r#"{{"type":"text_delta","text":{}}}"#, json_str(p)))
            .collect();
        block(&mut events, index, r#"{"type":"text","text":""}"#, deltas);
        index += 1;
    }
    for c in &reply.tool_calls {
        let start = format!(
            r#"{{"type":"tool_use","id":{},"name":{},"input":{{}}}}"#,
            json_str(&c.id),
            json_str(&c.name)
        );
        // The real API opens with an empty partial_json.
        let deltas = std::iter::once("")
            .chain(pieces(&c.arguments, 5))
            .map(|p| {
                format!(
                    r#"{{"type":"input_json_delta","partial_json":{}}}"#,
                    json_str(p)
                )
            })
            .collect();
        block(&mut events, index, &start, deltas);
        index += 1;
    }
    let stop = if reply.tool_calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    events.push(event(
        "message_delta",
        &format!(
            r#"{{"type":"message_delta","delta":{{"stop_reason":"{stop}","stop_sequence":null}},"usage":{{"output_tokens":{output}}}}}"#
        ),
    ));
    events.push(event("message_stop", r#"{"type":"message_stop"}"#));
    Stream {
        events,
        final_events: 2,
    }
}

/// The opening events of a text answer, and one more text delta to repeat.
pub(super) fn drip(request: &Value) -> (Vec<String>, String) {
    let model = model_of(request);
    let open = vec![
        event(
            "message_start",
            &format!(
                "{{\"type\":\"message_start\",\"message\":{{\"id\":\"msg_mock\",\"type\":\"message\",\
                 \"role\":\"assistant\",\"model\":{model},\"content\":[],\"stop_reason\":null,\
                 \"stop_sequence\":null,\"usage\":{{\"input_tokens\":1,\"output_tokens\":1}}}}}}"
            ),
        ),
        event(
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        ),
    ];
    let drop = event(
        "content_block_delta",
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"."}}"#,
    );
    (open, drop)
}
