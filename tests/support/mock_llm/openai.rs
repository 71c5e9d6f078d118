//! OpenAI Chat Completions streaming (`data: {chunk}\n\n` ... `data: [DONE]\n\n`).
//! JSON is written by hand so key order matches the real API.

use serde_json::Value;

use super::{Reply, Stream, json_str, model_of, pieces};

const ID: &str = "chatcmpl-mock";
const CREATED: u64 = 1_700_000_000;

pub(super) fn render(reply: &Reply, request: &Value) -> Stream {
    let model = model_of(request);
    let include_usage = request
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        == Some(true);
    // With include_usage the real API sends `"usage":null` on every ordinary chunk.
    let usage_null = if include_usage {
        r#","usage":null"#
    } else {
        ""
    };
    let chunk = |delta: &str, finish: &str| {
        format!(
            "data: {{\"id\":\"{ID}\",\"object\":\"chat.completion.chunk\",\"created\":{CREATED},\
             \"model\":{model},\"choices\":[{{\"index\":0,\"delta\":{delta},\"logprobs\":null,\
             \"finish_reason\":{finish}}}]{usage_null}}}\n\n"
        )
    };

    let mut events = vec![chunk(r#"{"role":"assistant","content":""}"#, "null")];
    for p in pieces(reply.thinking.as_deref().unwrap_or(""), 4) {
        events.push(chunk(
            &format!("{{\"reasoning_content\":{}}}", json_str(p)),
            "null",
        ));
    }
    for p in pieces(reply.text.as_deref().unwrap_or(""), 4) {
        events.push(chunk(&format!("{{\"content\":{}}}", json_str(p)), "null"));
    }
    for (i, c) in reply.tool_calls.iter().enumerate() {
        let delta = format!(
            "{{\"tool_calls\":[{{\"index\":{i},\"id\":{},\"type\":\"function\",\
             \"function\":{{\"name\":{},\"arguments\":\"\"}}}}]}}",
            json_str(&c.id),
            json_str(&c.name)
        );
        events.push(chunk(&delta, "null"));
    }
    // Argument fragments of parallel calls interleave round-robin by index.
    let frags: Vec<Vec<&str>> = reply
        .tool_calls
        .iter()
        .map(|c| pieces(&c.arguments, 5))
        .collect();
    let rounds = frags.iter().map(Vec::len).max().unwrap_or(0);
    for r in 0..rounds {
        for (i, f) in frags.iter().enumerate() {
            if let Some(p) = f.get(r) {
                let delta = format!(
                    "{{\"tool_calls\":[{{\"index\":{i},\"function\":{{\"arguments\":{}}}}}]}}",
                    json_str(p)
                );
                events.push(chunk(&delta, "null"));
            }
        }
    }

    let finish = if reply.tool_calls.is_empty() {
        "\"stop\""
    } else {
        "\"tool_calls\""
    };
    events.push(chunk("{}", finish));
    let mut final_events = 2;
    if include_usage {
        let (input, output) = reply.usage;
        events.push(format!(
            "data: {{\"id\":\"{ID}\",\"object\":\"chat.completion.chunk\",\"created\":{CREATED},\
             \"model\":{model},\"choices\":[],\"usage\":{{\"prompt_tokens\":{input},\
             \"completion_tokens\":{output},\"total_tokens\":{}}}}}\n\n",
            input + output
        ));
        final_events += 1;
    }
    events.push("data: [DONE]\n\n".to_string());
    Stream {
        events,
        final_events,
    }
}

/// The opening chunk of a text answer, and one more text delta to repeat.
pub(super) fn drip(request: &Value) -> (Vec<String>, String) {
    let model = model_of(request);
    let chunk = |delta: &str| {
        format!(
            "data: {{\"id\":\"{ID}\",\"object\":\"chat.completion.chunk\",\"created\":{CREATED},\
             \"model\":{model},\"choices\":[{{\"index\":0,\"delta\":{delta},\"logprobs\":null,\
             \"finish_reason\":null}}]}}\n\n"
        )
    };
    (
        vec![chunk(r#"{"role":"assistant","content":""}"#)],
        chunk(r#"{"content":"."}"#),
    )
}
