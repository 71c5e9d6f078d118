//! End-to-end: every recorded stream shape in `tests/streams/` (the
//! providers' and popular OpenAI-compatible servers' own shapes, see its
//! README) goes through the real binary over its wire, whole and cut into
//! 7-byte chunks, and must give the recorded text, thinking, tool calls
//! and usage; then through the other wire's decoder, where it must end with
//! one line of error (or an answer), never a panic or a hang.

use crate::support;

use std::path::Path;

use serde_json::{Value, json};
use support::mock_llm::{MockLlm, Recorded, Reply, Step};
use support::project::{Project, Run, Wire, sent_results};

/// One file of the corpus: its header and the body to serve.
struct Shape {
    name: String,
    wire: Wire,
    body: String,
    text: String,
    thinking: String,
    calls: Vec<(String, Value)>,
    usage: Option<(u64, u64, u64)>,
}

fn corpus() -> Vec<Shape> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/streams");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sse"))
        .collect();
    paths.sort();
    paths.iter().map(|p| parse(p)).collect()
}

fn parse(path: &Path) -> Shape {
    let raw = std::fs::read_to_string(path).unwrap();
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let mut shape = Shape {
        name: name.clone(),
        wire: Wire::OpenAi,
        body: String::new(),
        text: String::new(),
        thinking: String::new(),
        calls: Vec::new(),
        usage: None,
    };
    let mut crlf = false;
    let mut lines = raw.lines().peekable();
    let mut wire = None;
    while let Some(line) = lines.next_if(|l| l.starts_with('#')) {
        let (key, value) = line[1..].trim().split_once(':').unwrap();
        let value = value.trim();
        match key {
            "wire" => {
                wire = Some(match value {
                    "openai" => Wire::OpenAi,
                    "anthropic" => Wire::Anthropic,
                    other => panic!("{name}: unknown wire {other}"),
                })
            }
            "source" => assert!(!value.is_empty(), "{name}: say where it comes from"),
            "crlf" => crlf = value == "true",
            "text" => shape.text = serde_json::from_str(value).unwrap(),
            "thinking" => shape.thinking = serde_json::from_str(value).unwrap(),
            "call" => {
                let (tool, args) = value.split_once(' ').unwrap();
                shape
                    .calls
                    .push((tool.to_string(), serde_json::from_str(args).unwrap()));
            }
            "usage" => {
                let n: Vec<u64> = value.split(' ').map(|v| v.parse().unwrap()).collect();
                shape.usage = Some((n[0], n[1], n[2]));
            }
            other => panic!("{name}: unknown header {other}"),
        }
    }
    shape.wire = wire.unwrap_or_else(|| panic!("{name}: no wire"));
    let body: Vec<&str> = lines.collect();
    let mut body = body.join("\n") + "\n";
    if crlf {
        body = body.replace('\n', "\r\n");
    }
    shape.body = body;
    shape
}

/// The tool calls of the assistant message the client sent back, from
/// either wire format: (name, arguments as JSON).
fn sent_calls(r: &Recorded) -> Vec<(String, Value)> {
    let messages = r.body["messages"].as_array().unwrap();
    let assistant = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    if r.path.ends_with("/chat/completions") {
        assistant["tool_calls"]
            .as_array()
            .map(|calls| {
                calls
                    .iter()
                    .map(|c| {
                        let f = &c["function"];
                        let args = f["arguments"].as_str().unwrap();
                        (
                            f["name"].as_str().unwrap().to_string(),
                            serde_json::from_str(args).unwrap(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    } else {
        assistant["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["type"] == "tool_use")
            .map(|b| (b["name"].as_str().unwrap().to_string(), b["input"].clone()))
            .collect()
    }
}

fn joined(lines: &[Value], kind: &str) -> String {
    lines
        .iter()
        .filter(|l| l["type"] == kind)
        .map(|l| l["text"].as_str().unwrap())
        .collect()
}

fn run_shape(p: &Project, shape: &Shape, wire: Wire, chunk: usize) -> (MockLlm, Run) {
    let mut script = vec![Step::RawChunked(shape.body.clone(), chunk)];
    if !shape.calls.is_empty() {
        script.push(Step::Reply(Reply::text("done")));
    }
    let mock = MockLlm::start(script);
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
    (mock, run)
}

#[test]
fn every_recorded_shape_decodes_over_its_wire() {
    let shapes = corpus();
    assert!(shapes.len() >= 20, "the corpus is there: {}", shapes.len());
    for wire in [Wire::OpenAi, Wire::Anthropic] {
        assert!(
            shapes.iter().filter(|s| s.wire == wire).count() >= 6,
            "{wire:?}: shapes of both protocols"
        );
    }
    for shape in &shapes {
        for chunk in [usize::MAX, 7] {
            let p = Project::new();
            p.file("a.txt", "alpha\n");
            let (mock, run) = run_shape(&p, shape, shape.wire, chunk);
            let at = if chunk == usize::MAX {
                format!("{} in one chunk", shape.name)
            } else {
                format!("{} in {chunk}-byte chunks", shape.name)
            };
            run.assert_ok();
            let lines = run.events();
            // The first round trip: up to its usage.
            let first = lines.iter().position(|l| l["type"] == "usage").unwrap();
            assert_eq!(joined(&lines[..first], "text_delta"), shape.text, "{at}");
            assert_eq!(
                joined(&lines[..first], "thinking_delta"),
                shape.thinking,
                "{at}"
            );
            if let Some((input, output, cached)) = shape.usage {
                let usage = lines.iter().find(|l| l["type"] == "usage").unwrap();
                assert_eq!(
                    (
                        &usage["step"]["input_tokens"],
                        &usage["step"]["output_tokens"],
                        &usage["step"]["cache_read_tokens"]
                    ),
                    (&json!(input), &json!(output), &json!(cached)),
                    "{at}"
                );
            }
            let requests = mock.requests();
            if shape.calls.is_empty() {
                assert_eq!(requests.len(), 1, "{at}");
                assert_eq!(lines.last().unwrap()["result"], shape.text, "{at}");
                continue;
            }
            assert_eq!(requests.len(), 2, "{at}: the calls ran, then the answer");
            assert_eq!(sent_calls(&requests[1]), shape.calls, "{at}");
            let results = sent_results(&requests[1]);
            assert_eq!(results.len(), shape.calls.len(), "{at}");
            for ((tool, _), result) in shape.calls.iter().zip(&results) {
                assert!(
                    !result.content.starts_with("unknown tool"),
                    "{at}: {tool}: {}",
                    result.content
                );
                if tool != "ls" {
                    assert!(
                        result.content.contains("a.txt") || result.content.contains("alpha"),
                        "{at}: {tool} saw the file: {}",
                        result.content
                    );
                }
            }
        }
    }
}

#[test]
fn every_recorded_shape_through_the_other_decoder_ends_in_one_line() {
    for shape in corpus() {
        let other = match shape.wire {
            Wire::OpenAi => Wire::Anthropic,
            Wire::Anthropic => Wire::OpenAi,
        };
        let p = Project::new();
        let (_mock, run) = run_shape(&p, &shape, other, usize::MAX);
        assert!(
            run.code == 0 || run.code == 1,
            "{}: exit {}: {}",
            shape.name,
            run.code,
            run.stderr
        );
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
        if run.code == 1 {
            assert_eq!(
                run.stderr.lines().count(),
                1,
                "{}: {}",
                shape.name,
                run.stderr
            );
        }
    }
}
