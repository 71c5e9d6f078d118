//! A fault soak: a 49-step read/edit/shell conversation through the real
//! binary, with a fault before a third of the model's answers, chosen by a
//! fixed seed from every kind the transport must survive (500, 429, a drop
//! before and after text, a missing final event, pings only, a stall, a
//! 200 that is HTML, unknown block types), on both wire protocols. The run
//! must finish with the right files, and leave no temporary file and no
//! process behind.

use crate::support;

use serde_json::json;
use support::mock_llm::{MockLlm, Reply, Step, ToolCall, call, status};
use support::project::{BOTH, Project, Wire};

const FILES: usize = 16;

/// The conversation: for each file, view it, edit it, check it with bash.
fn steps() -> Vec<Reply> {
    let mut s = Vec::new();
    for k in 0..FILES {
        let path = format!("f{k}.txt");
        s.push(Reply::tools(vec![call(
            &format!("v{k}"),
            "view",
            json!({ "path": path }),
        )]));
        s.push(
            Reply::tools(vec![call(
                &format!("e{k}"),
                "edit",
                json!({ "path": path, "old_string": "state: old", "new_string": "state: new" }),
            )])
            .with_text("Editing it."),
        );
        s.push(Reply::tools(vec![call(
            &format!("b{k}"),
            "bash",
            json!({ "command": format!("grep -c 'state: new' {path}") }),
        )]));
    }
    s.push(Reply::text("All files are updated."));
    s
}

/// The same tool calls, with a block of a type the decoder does not know
/// first (Anthropic: `server_tool_use`; OpenAI: delta fields it does not
/// know). Not a fault to retry: an answer to decode.
fn with_unknown_blocks(wire: Wire, calls: &[ToolCall]) -> Step {
    let c = &calls[0];
    let id = serde_json::to_string(&c.id).unwrap();
    let name = serde_json::to_string(&c.name).unwrap();
    let args = serde_json::to_string(&c.arguments).unwrap();
    Step::Raw(match wire {
        Wire::Anthropic => format!(
            "event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"mock-1\",\"content\":[],\"stop_reason\":null,\"usage\":{{\"input_tokens\":5,\"output_tokens\":1}}}}}}\n\n\
             event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{{\"type\":\"server_tool_use\",\"id\":\"srv_1\",\"name\":\"web_search\",\"input\":{{\"query\":\"x\"}}}}}}\n\n\
             event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":0}}\n\n\
             event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{{\"type\":\"tool_use\",\"id\":{id},\"name\":{name},\"input\":{{}}}}}}\n\n\
             event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":{args}}}}}\n\n\
             event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":1}}\n\n\
             event: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"tool_use\"}},\"usage\":{{\"output_tokens\":9}}}}\n\n\
             event: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n"
        ),
        Wire::OpenAi => format!(
            "data: {{\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"model\":\"mock-1\",\"choices\":[{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"annotations\":[],\"audio\":null}},\"finish_reason\":null}}]}}\n\n\
             data: {{\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"model\":\"mock-1\",\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"id\":{id},\"type\":\"function\",\"function\":{{\"name\":{name},\"arguments\":{args}}}}}]}},\"finish_reason\":null}}]}}\n\n\
             data: {{\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"model\":\"mock-1\",\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"tool_calls\"}}]}}\n\n\
             data: [DONE]\n\n"
        ),
    })
}

/// The script: every answer, a third of them after a fault.
fn script(wire: Wire, seed: u64) -> (Vec<Step>, Vec<&'static str>) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut out = Vec::new();
    let mut kinds = Vec::new();
    for reply in steps() {
        if rng.u32(0..3) != 0 {
            out.push(Step::Reply(reply));
            continue;
        }
        let kind = [
            "500",
            "429",
            "drop",
            "drop after text",
            "no final event",
            "pings only",
            "stall",
            "html 200",
            "unknown blocks",
        ][rng.usize(0..9)];
        kinds.push(kind);
        match kind {
            "500" => out.push(status(
                500,
                &[],
                r#"{"error":{"type":"api_error","message":"boom"}}"#,
            )),
            "429" => out.push(status(
                429,
                &[("retry-after", "0")],
                r#"{"error":{"type":"rate_limit_error","message":"slow down"}}"#,
            )),
            "drop" => out.push(Step::DropMidStream(reply.clone())),
            "drop after text" => out.push(Step::DropMidStream(
                reply.clone().with_text(&"partial ".repeat(40)),
            )),
            "no final event" => out.push(Step::NoFinalEvent(reply.clone())),
            "pings only" => out.push(Step::PingsOnly),
            "stall" => out.push(Step::Stall(reply.clone())),
            "html 200" => out.push(status(
                200,
                &[("content-type", "text/html; charset=utf-8")],
                "<!DOCTYPE html><html><body>502 Bad Gateway</body></html>",
            )),
            _ => {}
        }
        if kind == "unknown blocks" && !reply.tool_calls.is_empty() {
            out.push(with_unknown_blocks(wire, &reply.tool_calls));
        } else {
            out.push(Step::Reply(reply));
        }
    }
    (out, kinds)
}

/// Processes whose working directory is inside `root`.
fn processes_in(root: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
        if let Ok(cwd) = std::fs::read_link(e.path().join("cwd"))
            && cwd.starts_with(root)
        {
            let cmd = std::fs::read_to_string(e.path().join("cmdline")).unwrap_or_default();
            found.push(cmd.replace('\0', " "));
        }
    }
    found
}

#[test]
fn a_long_conversation_survives_a_fault_on_a_third_of_the_requests() {
    let mut seen = std::collections::BTreeSet::new();
    for wire in BOTH {
        let p = Project::new();
        p.user_config(
            "[llm]\nretry_base_ms = 5\nretry_max_secs = 0.05\nmax_retries = 3\n\
             idle_timeout_secs = 1\nfirst_byte_timeout_secs = 1\n",
        );
        for k in 0..FILES {
            p.file(&format!("f{k}.txt"), &format!("file {k}\nstate: old\n"));
        }
        let (script, kinds) = script(wire, 7 + wire as u64);
        assert!(kinds.len() >= 10, "a third of 49 answers: {kinds:?}");
        seen.extend(kinds.iter().copied());
        let mock = MockLlm::start(script);
        let run = p.run(
            &mock,
            wire,
            "update every file",
            &["--yolo", "--max-steps", "200"],
        );
        run.assert_ok();
        assert_eq!(run.stdout.trim(), "All files are updated.", "{wire:?}");
        assert_eq!(mock.remaining(), 0, "{wire:?}: every step was asked for");
        for k in 0..FILES {
            assert_eq!(
                std::fs::read_to_string(p.root().join(format!("f{k}.txt"))).unwrap(),
                format!("file {k}\nstate: new\n"),
                "{wire:?}: file {k} (faults: {kinds:?})"
            );
        }
        let leftovers: Vec<String> = std::fs::read_dir(p.root())
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".agent-write-"))
            .collect();
        assert!(leftovers.is_empty(), "{wire:?}: {leftovers:?}");
        assert!(
            processes_in(&p.root()).is_empty(),
            "{wire:?}: left running: {:?}",
            processes_in(&p.root())
        );
    }
    assert_eq!(
        seen.len(),
        9,
        "the seeds exercise every kind of fault: {seen:?}"
    );
}
