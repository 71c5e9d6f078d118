//! Tests of the mock LLM server itself (tests/support/mock_llm), using reqwest.

use crate::support;

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::{Value, json};
use support::mock_llm::{MockLlm, Reply, Step, call};

struct Resp {
    status: u16,
    headers: reqwest::header::HeaderMap,
    chunks: Vec<Vec<u8>>,
    error: Option<String>,
}

impl Resp {
    fn bytes(&self) -> Vec<u8> {
        self.chunks.concat()
    }
    fn text(&self) -> String {
        String::from_utf8(self.bytes()).unwrap()
    }
    fn header(&self, name: &str) -> &str {
        self.headers[name].to_str().unwrap()
    }
}

/// POSTs `body` and reads the whole response body chunk by chunk (500 ms read timeout).
fn post(url: &str, body: &Value) -> Resp {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    rt.unwrap().block_on(async {
        agent::tls::install();
        let client = reqwest::Client::builder().read_timeout(Duration::from_millis(500));
        let req = client
            .build()
            .unwrap()
            .post(url)
            .header("x-api-key", "k")
            .json(body);
        let resp = req.send().await.unwrap();
        let (status, headers) = (resp.status().as_u16(), resp.headers().clone());
        let (mut chunks, mut error) = (Vec::new(), None);
        let mut stream = resp.bytes_stream();
        while let Some(item) = stream.next().await {
            match item {
                Ok(b) => chunks.push(b.to_vec()),
                Err(e) => {
                    error = Some(format!("{e:?}"));
                    break;
                }
            }
        }
        Resp {
            status,
            headers,
            chunks,
            error,
        }
    })
}

fn parse(s: &str) -> Value {
    serde_json::from_str(s).unwrap()
}

/// SSE events as (event name or "", data).
fn sse(body: &str) -> Vec<(String, String)> {
    assert!(
        body.ends_with("\n\n"),
        "stream must end on an event boundary"
    );
    let field = |block: &str, name: &str| {
        let line = block.lines().find_map(|l| l.strip_prefix(name));
        line.unwrap_or_default().to_string()
    };
    let blocks = body.split_terminator("\n\n");
    blocks
        .map(|b| (field(b, "event: "), field(b, "data: ")))
        .collect()
}

fn openai_req(mock: &MockLlm, include_usage: bool) -> Resp {
    let url = format!("{}/chat/completions", mock.openai_base());
    let opts = json!({"include_usage": include_usage});
    post(
        &url,
        &json!({"model": "gpt-x", "stream": true, "stream_options": opts}),
    )
}

fn openai(mock: &MockLlm) -> Resp {
    openai_req(mock, true)
}

fn anthropic(mock: &MockLlm) -> Resp {
    let url = format!("{}/v1/messages", mock.anthropic_base());
    post(&url, &json!({"model": "claude-x"}))
}

#[test]
fn openai_stream_wire_format() {
    let a0 = json!({"path": "src/ä.rs", "n": 1});
    let a1 = json!({"cmd": "echo hi && ls -la"});
    let calls = vec![
        call("c0", "read", a0.clone()),
        call("c1", "bash", a1.clone()),
    ];
    let reply = Reply::tools(calls)
        .with_text("Hé llo ✓ wörld")
        .with_thinking("pondering");
    let mock = MockLlm::start(vec![
        Step::Reply(reply.with_usage(7, 9)),
        Step::Reply(Reply::text("ok")),
    ]);
    let r = openai(&mock);
    assert_eq!((r.status, r.error.as_deref()), (200, None));
    let events = sse(&r.text());
    assert_eq!(events.last().unwrap().1, "[DONE]");
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|e| parse(&e.1))
        .collect();
    let n = chunks.len();
    let first = json!({"role": "assistant", "content": ""});
    assert_eq!(chunks[0]["choices"][0]["delta"], first);
    let (mut thinking, mut text) = (String::new(), String::new());
    let (mut args, mut frag_order) = (vec![String::new(); 2], vec![]);
    for c in &chunks[..n - 2] {
        assert_eq!(c["object"], "chat.completion.chunk");
        assert_eq!(c["model"], "gpt-x");
        assert!(c["choices"][0]["finish_reason"].is_null() && c["usage"].is_null());
        let d = &c["choices"][0]["delta"];
        thinking += d["reasoning_content"].as_str().unwrap_or("");
        text += d["content"].as_str().unwrap_or("");
        let Some(tc) = d["tool_calls"].get(0) else {
            continue;
        };
        let i = tc["index"].as_u64().unwrap() as usize;
        if let Some(id) = tc["id"].as_str() {
            assert_eq!(id, ["c0", "c1"][i]);
            assert_eq!(tc["function"]["name"], ["read", "bash"][i]);
            assert!(
                frag_order.is_empty(),
                "all first chunks come before fragments"
            );
        } else {
            frag_order.push(i);
        }
        args[i] += tc["function"]["arguments"].as_str().unwrap();
    }
    assert_eq!(thinking, "pondering");
    assert_eq!(text, "Hé llo ✓ wörld");
    assert_eq!((parse(&args[0]), parse(&args[1])), (a0, a1));
    assert_eq!(
        frag_order[..4],
        [0, 1, 0, 1],
        "fragments interleave round-robin"
    );
    assert_eq!(chunks[n - 2]["choices"][0]["delta"], json!({}));
    assert_eq!(chunks[n - 2]["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(chunks[n - 1]["choices"], json!([]));
    let usage = json!({"prompt_tokens": 7, "completion_tokens": 9, "total_tokens": 16});
    assert_eq!(chunks[n - 1]["usage"], usage);

    // Without include_usage: no usage anywhere, finish_reason "stop".
    let text = openai_req(&mock, false).text();
    assert!(!text.contains("usage"));
    let events = sse(&text);
    let last = parse(&events[events.len() - 2].1);
    assert_eq!(last["choices"][0]["finish_reason"], "stop");
}

#[test]
fn anthropic_stream_wire_format() {
    let args = json!({"q": "naïve"});
    let reply = Reply::tools(vec![call("toolu_1", "grep", args.clone())]);
    let reply = reply.with_text("Hi there").with_thinking("hmm, ok");
    let mock = MockLlm::start(vec![Step::Reply(reply)]);
    let events = sse(&anthropic(&mock).text());
    let data: Vec<Value> = events.iter().map(|e| parse(&e.1)).collect();
    let ty = |v: &Value| v["type"].as_str().unwrap().to_string();
    let mut labels: Vec<String> = vec![];
    for ((name, _), d) in events.iter().zip(&data) {
        assert_eq!(&ty(d), name);
        let label = match name.as_str() {
            "content_block_start" => format!("start{}:{}", d["index"], ty(&d["content_block"])),
            "content_block_delta" => format!("delta{}:{}", d["index"], ty(&d["delta"])),
            "content_block_stop" => format!("stop{}", d["index"]),
            other => other.to_string(),
        };
        if labels.last() != Some(&label) {
            labels.push(label);
        }
    }
    let expected = "message_start ping \
        start0:thinking delta0:thinking_delta delta0:signature_delta stop0 \
        start1:text delta1:text_delta stop1 start2:tool_use delta2:input_json_delta stop2 \
        message_delta message_stop";
    assert_eq!(labels.join(" "), expected);
    assert_eq!(data[0]["message"]["model"], "claude-x");
    let usage = json!({"input_tokens": 10, "output_tokens": 1});
    assert_eq!(data[0]["message"]["usage"], usage);
    let joined = |kind: &str, key: &str| -> String {
        let deltas = data.iter().filter(|d| d["delta"]["type"] == kind);
        deltas.map(|d| d["delta"][key].as_str().unwrap()).collect()
    };
    assert_eq!(joined("thinking_delta", "thinking"), "hmm, ok");
    assert_eq!(joined("text_delta", "text"), "Hi there");
    assert_eq!(parse(&joined("input_json_delta", "partial_json")), args);
    assert!(joined("signature_delta", "signature").starts_with("sig-"));
    assert_eq!(data[data.len() - 2]["delta"]["stop_reason"], "tool_use");
    assert_eq!(data[data.len() - 2]["usage"]["output_tokens"], 20);
}

#[test]
fn chunked_reassembles_to_same_bytes() {
    let reply = Reply::text("añb✓c日本語 and more text").with_thinking("思考");
    let steps = vec![
        Step::Reply(reply.clone()),
        Step::Reply(reply.clone().chunked(1)),
        Step::Reply(reply.chunked(3)),
    ];
    for proto in [openai as fn(&MockLlm) -> Resp, anthropic] {
        let mock = MockLlm::start(steps.clone());
        let (whole, one, three) = (proto(&mock), proto(&mock), proto(&mock));
        assert!(one.error.is_none() && three.error.is_none());
        assert_eq!(one.bytes(), whole.bytes());
        assert_eq!(three.bytes(), whole.bytes());
        assert!(
            one.chunks.iter().all(|c| c.len() == 1),
            "each 1-byte chunk arrives alone"
        );
    }
}

#[test]
fn faults_drop_truncate_and_stall() {
    let reply = Reply::tools(vec![call("c0", "bash", json!({"cmd": "ls"}))]);
    let reply = reply.with_text("some text here");
    for proto in [openai as fn(&MockLlm) -> Resp, anthropic] {
        let mock = MockLlm::start(vec![
            Step::Reply(reply.clone()),
            Step::DropMidStream(reply.clone()),
            Step::DropMidStream(reply.clone().chunked(2)),
            Step::NoFinalEvent(reply.clone()),
            Step::Stall(reply.clone()),
        ]);
        let full = proto(&mock).text();
        for _ in 0..2 {
            let dropped = proto(&mock);
            assert!(
                dropped.error.is_some(),
                "DropMidStream must be a body read error"
            );
            let got = dropped.text();
            assert!(got.len() >= full.len() / 2 && got.len() < full.len());
            assert!(full.starts_with(&got));
        }
        let cut = proto(&mock);
        assert!(cut.error.is_none(), "NoFinalEvent ends the body cleanly");
        let cut = cut.text();
        assert!(full.starts_with(&cut) && !cut.is_empty());
        let finals = [
            "[DONE]",
            "finish_reason\":\"",
            "\"choices\":[]",
            "message_delta",
            "message_stop",
        ];
        for marker in finals {
            assert!(!cut.contains(marker), "{marker} must be missing");
        }
        let t0 = Instant::now();
        let stalled = proto(&mock);
        assert!(
            stalled.error.is_some(),
            "client read timeout fires on a stall"
        );
        assert!(!stalled.chunks.is_empty() && full.starts_with(&stalled.text()));
        assert_eq!(mock.remaining(), 0);
        drop(mock); // must not wait for the stall limit
        assert!(t0.elapsed() < Duration::from_secs(5));
    }
}

#[test]
fn status_raw_recording_and_exhaustion() {
    let retry = vec![("retry-after".to_string(), "1".to_string())];
    let err401 = r#"{"type":"error","error":{"type":"authentication_error","message":"bad"}}"#;
    let raw = "data: {\"x\":1}\n\n: comment\n";
    let mock = MockLlm::start(vec![
        Step::Status {
            code: 429,
            headers: retry,
            body: "{}".into(),
        },
        Step::Status {
            code: 401,
            headers: vec![],
            body: err401.into(),
        },
        Step::Raw(raw.into()),
    ]);
    let r = openai(&mock);
    assert_eq!((r.status, r.header("retry-after")), (429, "1"));
    let r = anthropic(&mock);
    assert_eq!((r.status, r.text()), (401, err401.to_string()));
    assert_eq!(r.header("content-type"), "application/json");
    let r = post(
        &format!("{}/v1/embeddings", mock.anthropic_base()),
        &json!({}),
    );
    assert_eq!(r.status, 404, "unknown paths get 404 and consume no step");
    let r = anthropic(&mock);
    assert_eq!((r.status, r.text()), (200, raw.to_string()));
    assert!(r.header("content-type").starts_with("text/event-stream"));
    let r = openai(&mock);
    assert_eq!(
        (r.status, r.text()),
        (500, "mock script exhausted".to_string())
    );

    let reqs = mock.requests();
    let paths: Vec<&str> = reqs.iter().map(|r| r.path.as_str()).collect();
    let (oa, an) = ("/v1/chat/completions", "/v1/messages");
    assert_eq!(paths, [oa, an, "/v1/embeddings", an, oa]);
    assert_eq!(reqs[0].body["stream_options"]["include_usage"], true);
    assert_eq!(reqs[1].body["model"], "claude-x");
    assert_eq!(reqs[1].header("X-API-Key"), Some("k"));
}

#[test]
fn chunked_request_body_over_raw_tcp() {
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("hi"))]);
    let base = mock.anthropic_base();
    let mut sock = std::net::TcpStream::connect(base.trim_start_matches("http://")).unwrap();
    let req = "POST /v1/messages?beta=true HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\
               Transfer-Encoding: chunked\r\n\r\n\
               7\r\n{\"model\r\n6;ext=1\r\n\":\"m\"}\r\n0\r\n\r\n";
    sock.write_all(req.as_bytes()).unwrap();
    let mut resp = String::new();
    sock.read_to_string(&mut resp).unwrap();
    assert!(resp.starts_with("HTTP/1.1 200 OK\r\n"), "{resp}");
    assert!(resp.contains("transfer-encoding: chunked\r\n"), "{resp}");
    assert!(resp.ends_with("\r\n0\r\n\r\n") && resp.contains("event: message_stop"));
    let reqs = mock.requests();
    assert_eq!(reqs[0].path, "/v1/messages");
    assert_eq!(reqs[0].body, json!({"model": "m"}));
}
