//! OpenAI's Responses API (`kind = "openai-responses"`) through the real
//! binary against the mock server's Responses wire: the request shape
//! (instructions, `input` items, tools, `store: false`, reasoning), a
//! tool round trip with the model's reasoning carried back encrypted,
//! usage, and a broken stream retried like on the other wires.

use crate::support;

use serde_json::{Value, json};
use support::mock_llm::{MockLlm, Reply, Step, call};
use support::project::{FAST_LLM, Project, Run};

fn run(p: &Project, mock: &MockLlm) -> Run {
    p.user_config(&format!(
        "{FAST_LLM}[providers.oai]\nkind = \"openai-responses\"\nbase_url = \"{}\"\napi_key_env = \"OPENAI_API_KEY\"\nmodel = \"gpt-mock\"\nreasoning_effort = \"low\"\n",
        mock.openai_base()
    ));
    let out = p
        .command()
        .args([
            "--provider",
            "oai",
            "--output-format",
            "json",
            "-p",
            "list the project",
        ])
        .env("OPENAI_API_KEY", "sk-test")
        .output()
        .unwrap();
    Run::of(out)
}

#[test]
fn a_tool_round_trip_over_the_responses_api() {
    let p = Project::new();
    p.file("a.txt", "alpha\n");
    let mock = MockLlm::start(vec![
        Step::Reply(
            Reply::tools(vec![call("call_1", "ls", json!({}))])
                .with_text("Looking.")
                .with_thinking("plan it"),
        ),
        Step::Reply(Reply::text("Done.").with_usage(120, 7)),
    ]);
    let r = run(&p, &mock);
    r.assert_ok();
    let v: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(v["result"], "Done.");
    assert_eq!(v["usage"]["output_tokens"], 27, "{v}");

    let reqs = mock.requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs[0].path.ends_with("/responses"), "{}", reqs[0].path);
    assert!(
        reqs[0]
            .headers
            .iter()
            .any(|(k, v)| k == "authorization" && v == "Bearer sk-test")
    );
    let first = &reqs[0].body;
    assert_eq!(first["model"], "gpt-mock");
    assert_eq!(first["stream"], true);
    assert_eq!(first["store"], false);
    assert_eq!(
        first["reasoning"],
        json!({"effort": "low", "summary": "auto"})
    );
    assert_eq!(first["include"], json!(["reasoning.encrypted_content"]));
    assert!(first["instructions"].as_str().unwrap().len() > 100);
    let ls = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "ls")
        .unwrap();
    assert_eq!(ls["type"], "function");
    assert!(ls["parameters"].is_object());
    assert_eq!(
        first["input"],
        json!([{"role": "user", "content": [{"type": "input_text", "text": "list the project"}]}])
    );

    // The second request carries the first answer: reasoning (encrypted,
    // as returned), text, the call, and its output.
    let input = reqs[1].body["input"].as_array().unwrap().clone();
    assert_eq!(input.len(), 5, "{input:#?}");
    assert_eq!(
        input[1],
        json!({"type": "reasoning", "id": "rs_mock", "encrypted_content": "enc:plan it",
               "summary": [{"type": "summary_text", "text": "plan it"}]})
    );
    assert_eq!(
        input[2],
        json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Looking."}]})
    );
    assert_eq!(
        input[3],
        json!({"type": "function_call", "call_id": "call_1", "name": "ls", "arguments": "{}"})
    );
    assert_eq!(input[4]["type"], "function_call_output");
    assert_eq!(input[4]["call_id"], "call_1");
    assert!(
        input[4]["output"].as_str().unwrap().contains("a.txt"),
        "{}",
        input[4]
    );
}

#[test]
fn a_broken_responses_stream_is_asked_for_again() {
    let p = Project::new();
    let mock = MockLlm::start(vec![
        Step::DropMidStream(Reply::text("a long first answer that breaks off")),
        Step::Reply(Reply::text("Whole answer.")),
    ]);
    let r = run(&p, &mock);
    r.assert_ok();
    let v: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(v["result"], "Whole answer.");
    assert_eq!(mock.requests().len(), 2);
}
