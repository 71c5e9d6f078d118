//! OpenAI Responses API streaming: typed events (`event: <type>` and a
//! `data:` object with the same `type`), ending with `response.completed`.

use serde_json::{Value, json};

use super::{Reply, Stream, pieces};

fn event(v: Value) -> String {
    format!(
        "event: {}\ndata: {v}\n\n",
        v["type"].as_str().unwrap_or_default()
    )
}

pub(super) fn render(reply: &Reply, request: &Value) -> Stream {
    let model = request["model"].as_str().unwrap_or("mock-model");
    let mut events = vec![event(json!({
        "type": "response.created",
        "response": {"id": "resp_mock", "object": "response", "status": "in_progress", "model": model},
    }))];
    let mut index = 0;
    if let Some(thinking) = &reply.thinking {
        events.push(event(
            json!({"type": "response.output_item.added", "output_index": index,
            "item": {"type": "reasoning", "id": "rs_mock", "summary": []}}),
        ));
        for p in pieces(thinking, 4) {
            events.push(event(
                json!({"type": "response.reasoning_summary_text.delta",
                "item_id": "rs_mock", "output_index": index, "summary_index": 0, "delta": p}),
            ));
        }
        events.push(event(
            json!({"type": "response.output_item.done", "output_index": index,
            "item": {"type": "reasoning", "id": "rs_mock",
                     "summary": [{"type": "summary_text", "text": thinking}],
                     "encrypted_content": format!("enc:{thinking}")}}),
        ));
        index += 1;
    }
    if let Some(text) = &reply.text {
        events.push(event(json!({"type": "response.output_item.added", "output_index": index,
            "item": {"type": "message", "id": "msg_mock", "role": "assistant", "status": "in_progress", "content": []}})));
        for p in pieces(text, 4) {
            events.push(event(
                json!({"type": "response.output_text.delta", "item_id": "msg_mock",
                "output_index": index, "content_index": 0, "delta": p}),
            ));
        }
        events.push(event(json!({"type": "response.output_item.done", "output_index": index,
            "item": {"type": "message", "id": "msg_mock", "role": "assistant", "status": "completed",
                     "content": [{"type": "output_text", "text": text, "annotations": []}]}})));
        index += 1;
    }
    for c in &reply.tool_calls {
        let id = format!("fc_{index}");
        events.push(event(json!({"type": "response.output_item.added", "output_index": index,
            "item": {"type": "function_call", "id": id, "call_id": c.id, "name": c.name, "arguments": ""}})));
        for p in pieces(&c.arguments, 5) {
            events.push(event(
                json!({"type": "response.function_call_arguments.delta",
                "item_id": id, "output_index": index, "delta": p}),
            ));
        }
        events.push(event(
            json!({"type": "response.output_item.done", "output_index": index,
            "item": {"type": "function_call", "id": id, "call_id": c.id, "name": c.name,
                     "arguments": c.arguments, "status": "completed"}}),
        ));
        index += 1;
    }
    let (input, output) = reply.usage;
    events.push(event(json!({"type": "response.completed", "response": {
        "id": "resp_mock", "object": "response", "status": "completed", "model": model,
        "usage": {"input_tokens": input, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": output, "total_tokens": input + output}}})));
    Stream {
        events,
        final_events: 1,
    }
}

/// The opening of a text answer, and one more text delta to repeat.
pub(super) fn drip(request: &Value) -> (Vec<String>, String) {
    let model = request["model"].as_str().unwrap_or("mock-model");
    (
        vec![event(json!({"type": "response.created",
            "response": {"id": "resp_mock", "status": "in_progress", "model": model}}))],
        event(
            json!({"type": "response.output_text.delta", "item_id": "msg_mock",
            "output_index": 0, "content_index": 0, "delta": "more "}),
        ),
    )
}
