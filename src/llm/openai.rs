//! OpenAI-compatible Chat Completions, streamed. Works with OpenAI itself and
//! the many servers that copy its wire format (Ollama, DeepSeek, OpenRouter,
//! vLLM...): tool-call arguments arrive split across chunks and interleaved by
//! `index`; DeepSeek-style `reasoning_content` is shown as thinking. What
//! compatible servers do differently is decoded too: a function name repeated
//! in every chunk, arguments in one piece (or as an object), calls without an
//! `index`, no `finish_reason` before `[DONE]`, usage in a trailing chunk
//! with empty `choices`. `tests/streams/` holds such streams as recorded.

use std::collections::{BTreeMap, HashMap};

use futures_util::future::BoxFuture;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::ResolvedProvider;
use super::prefix::{EncodedPrefix, open_array, push_element};
use super::sse::SseEvent;
use super::transport::{Decoder, Seen, Transport};
use super::{
    Completion, Content, EventFn, LlmError, Message, Provider, Request, Role, StopReason,
    StreamEvent, Usage,
};

pub(crate) struct OpenAi {
    transport: Transport,
    url: String,
    auth: HeaderMap,
    sent: EncodedPrefix,
}

/// `Authorization: Bearer <key>`, as OpenAI's APIs take the key.
pub(crate) fn bearer(p: &ResolvedProvider) -> HeaderMap {
    let mut auth = HeaderMap::new();
    if let Some(key) = &p.api_key
        && let Ok(v) = HeaderValue::from_str(&format!("Bearer {key}"))
    {
        auth.insert(AUTHORIZATION, v);
    }
    auth
}

impl OpenAi {
    pub fn new(p: &ResolvedProvider, transport: Transport) -> OpenAi {
        OpenAi {
            transport,
            url: format!("{}/chat/completions", p.base_url),
            auth: bearer(p),
            sent: EncodedPrefix::default(),
        }
    }

    /// The request body: the fields, then the messages, of which only those
    /// not sent before in this conversation are encoded now.
    fn body(&self, req: &Request<'_>) -> Result<bytes::Bytes, LlmError> {
        let head = serde_json::to_vec(&self.head(req))
            .map_err(|e| LlmError::Client(format!("cannot encode the request: {e}")))?;
        let mut open = open_array(head, "messages");
        serde_json::to_writer(
            &mut open,
            &ChatMessage::System {
                content: req.system,
            },
        )
        .map_err(|e| LlmError::Client(format!("cannot encode the request: {e}")))?;
        self.sent
            .body(req.conversation, open, true, req.messages, &|m, _, out| {
                let mut chat = Vec::new();
                encode_message(m, &mut chat);
                for c in &chat {
                    push_element(out, c)?;
                }
                Ok(())
            })
    }

    fn head<'a>(&'a self, req: &Request<'a>) -> ChatRequest<'a> {
        ChatRequest {
            model: self.transport.model(),
            stream: true,
            stream_options: StreamOptions {
                include_usage: true,
            },
            tools: req
                .tools
                .iter()
                .map(|t| ChatTool {
                    kind: "function",
                    function: FunctionSpec {
                        name: &t.name,
                        description: &t.description,
                        parameters: &t.parameters,
                    },
                })
                .collect(),
        }
    }
}

// The request, borrowing from the conversation: serialized straight to bytes
// without building a JSON tree, since the whole history goes out every trip.
#[derive(Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ChatTool<'a>>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct ChatTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionSpec<'a>,
}

#[derive(Serialize)]
struct FunctionSpec<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

#[derive(Debug, Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum ChatMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: String,
    },
    Assistant {
        content: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ChatToolCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

#[derive(Debug, Serialize)]
struct ChatToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionCall<'a>,
}

#[derive(Debug, Serialize)]
struct FunctionCall<'a> {
    name: &'a str,
    arguments: &'a str,
}

/// One neutral message becomes one or more Chat Completions messages: tool
/// results are separate `tool` messages; thinking is not sent back.
fn encode_message<'a>(m: &'a Message, out: &mut Vec<ChatMessage<'a>>) {
    match m.role {
        Role::User => {
            let mut text = String::new();
            for c in &m.content {
                match c {
                    Content::ToolResult {
                        call_id, content, ..
                    } => out.push(ChatMessage::Tool {
                        tool_call_id: call_id,
                        content,
                    }),
                    // Two prompts in one user turn (the first one's turn
                    // was interrupted) stay two paragraphs, not one word.
                    Content::Text { text: t } => {
                        if !text.is_empty() && !t.is_empty() {
                            text.push_str("\n\n");
                        }
                        text.push_str(t)
                    }
                    _ => {}
                }
            }
            if !text.is_empty() {
                out.push(ChatMessage::User { content: text });
            }
        }
        Role::Assistant => {
            let text = m.text();
            let tool_calls = m
                .content
                .iter()
                .filter_map(|c| match c {
                    Content::ToolCall {
                        id,
                        name,
                        arguments,
                    } => Some(ChatToolCall {
                        id,
                        kind: "function",
                        function: FunctionCall { name, arguments },
                    }),
                    _ => None,
                })
                .collect();
            out.push(ChatMessage::Assistant {
                content: (!text.is_empty()).then_some(text),
                tool_calls,
            });
        }
    }
}

impl Provider for OpenAi {
    fn describe(&self) -> (&str, &str) {
        (self.transport.provider(), self.transport.model())
    }

    fn models(&self) -> BoxFuture<'_, Result<Vec<String>, LlmError>> {
        let url = self.url.replace("/chat/completions", "/models");
        Box::pin(async move { self.transport.model_ids(&url, &self.auth).await })
    }

    fn stream<'a>(
        &'a self,
        request: Request<'a>,
        on_event: EventFn<'a>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Completion, LlmError>> {
        Box::pin(async move {
            let body = self.body(&request)?;
            let provider = self.transport.provider().to_string();
            let new = move || Box::new(ChatDecoder::new(provider.clone())) as Box<dyn Decoder>;
            self.transport
                .stream(&self.url, &self.auth, body, &new, on_event, cancel)
                .await
        })
    }
}

#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

pub(crate) struct ChatDecoder {
    provider: String,
    text: String,
    reasoning: String,
    /// Calls in the order they began.
    calls: BTreeMap<u64, PartialCall>,
    /// The wire's `index` → the call it currently names.
    slots: HashMap<u64, u64>,
    finish: Option<String>,
    usage: Usage,
}

impl ChatDecoder {
    pub(crate) fn new(provider: String) -> ChatDecoder {
        ChatDecoder {
            provider,
            text: String::new(),
            reasoning: String::new(),
            calls: BTreeMap::new(),
            slots: HashMap::new(),
            finish: None,
            usage: Usage::default(),
        }
    }
}

impl ChatDecoder {
    /// One entry of a chunk's `tool_calls`: a new call or more of one.
    fn call_delta(&mut self, call: &Value) {
        let id = call.get("id").and_then(as_str);
        let fresh = self.calls.len() as u64;
        let key = match call.get("index").and_then(Value::as_u64) {
            Some(index) => match self.slots.get(&index) {
                // The same index with another id is another call (servers
                // that number every whole call 0).
                Some(&key)
                    if id.is_some_and(|id| {
                        let known = &self.calls[&key].id;
                        !known.is_empty() && known != id
                    }) =>
                {
                    fresh
                }
                Some(&key) => key,
                None => fresh,
            },
            // Without an index, an id names the call; a new id is a new
            // call, no id continues the last one.
            None => match id {
                Some(id) => self
                    .calls
                    .iter()
                    .find(|(_, c)| c.id == id)
                    .map_or(fresh, |(k, _)| *k),
                None => fresh.saturating_sub(1),
            },
        };
        if let Some(index) = call.get("index").and_then(Value::as_u64) {
            self.slots.insert(index, key);
        }
        let entry = self.calls.entry(key).or_default();
        if let Some(id) = id {
            entry.id = id.to_string();
        }
        let Some(f) = call.get("function") else {
            return;
        };
        if let Some(name) = f.get("name").and_then(as_str) {
            // Some servers repeat the whole name in every chunk: a repeat
            // (or a longer version of what came) replaces, a new piece adds.
            if entry.name.is_empty() || name.starts_with(entry.name.as_str()) {
                entry.name = name.to_string();
            } else {
                entry.name.push_str(name);
            }
        }
        match f.get("arguments") {
            Some(Value::String(args)) => entry.arguments.push_str(args),
            // A few servers send the arguments as an object, in one piece.
            Some(args @ Value::Object(_)) => entry.arguments = args.to_string(),
            _ => {}
        }
    }

    fn read_usage(&mut self, u: &Value) {
        let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
        // OpenAI reports cached tokens inside the prompt; DeepSeek as hits.
        let cached = u
            .pointer("/prompt_tokens_details/cached_tokens")
            .and_then(Value::as_u64)
            .unwrap_or_else(|| n("prompt_cache_hit_tokens"));
        self.usage = Usage {
            input_tokens: n("prompt_tokens").saturating_sub(cached),
            output_tokens: n("completion_tokens"),
            cache_read_tokens: cached,
            cache_write_tokens: 0,
        };
    }
}

fn as_str(v: &Value) -> Option<&str> {
    v.as_str().filter(|s| !s.is_empty())
}

impl Decoder for ChatDecoder {
    fn event(&mut self, ev: SseEvent, emit: &mut dyn FnMut(StreamEvent)) -> Result<Seen, LlmError> {
        let data = ev.data.trim();
        if data == "[DONE]" {
            return Ok(Seen::Final);
        }
        if data.is_empty() {
            return Ok(Seen::KeepAlive);
        }
        let v: Value = serde_json::from_str(data).map_err(|e| {
            LlmError::Protocol(format!("chunk is not JSON ({e}): {}", truncate(data)))
        })?;
        if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
            let kind = err
                .get("type")
                .or(err.get("code"))
                .map(|k| k.to_string())
                .unwrap_or_default();
            let message = err
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            if super::status::about_context_length(&format!("{kind} {message}").to_lowercase()) {
                return Err(LlmError::ContextLength(message));
            }
            let retryable = kind.contains("overloaded")
                || kind.contains("server_error")
                || kind.contains("rate_limit");
            return Err(LlmError::Api {
                provider: self.provider.clone(),
                kind: kind.trim_matches('"').to_string(),
                message,
                retryable,
            });
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            self.read_usage(u);
        }
        let Some(choice) = v.get("choices").and_then(|c| c.get(0)) else {
            return Ok(Seen::Event);
        };
        if let Some(delta) = choice.get("delta") {
            for key in ["reasoning_content", "reasoning"] {
                if let Some(r) = delta.get(key).and_then(as_str) {
                    self.reasoning.push_str(r);
                    emit(StreamEvent::ThinkingDelta(r.to_string()));
                }
            }
            if let Some(t) = delta.get("content").and_then(as_str) {
                self.text.push_str(t);
                emit(StreamEvent::TextDelta(t.to_string()));
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for call in calls {
                    self.call_delta(call);
                }
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(as_str) {
            self.finish = Some(reason.to_string());
        }
        Ok(Seen::Event)
    }

    fn finish(self: Box<Self>, complete: bool) -> Result<Completion, LlmError> {
        // Some compatible servers end the body without `[DONE]`; a
        // `finish_reason` is enough to know the answer is whole.
        let Some(finish) = self.finish.clone().or(complete.then(|| "stop".to_string())) else {
            return Err(LlmError::Incomplete);
        };
        let has_calls = !self.calls.is_empty();
        let mut content = Vec::new();
        if !self.reasoning.is_empty() {
            content.push(Content::Thinking {
                thinking: self.reasoning,
                signature: None,
            });
        }
        if !self.text.is_empty() {
            content.push(Content::Text { text: self.text });
        }
        for (index, call) in self.calls {
            content.push(Content::ToolCall {
                id: if call.id.is_empty() {
                    // Unique, so nothing keyed by call id carries across steps.
                    format!("call_{index}_{}", uuid::Uuid::new_v4().simple())
                } else {
                    call.id
                },
                name: call.name,
                arguments: call.arguments,
            });
        }
        let stop = match finish.as_str() {
            // Some servers say "stop" after tool calls, or nothing at all.
            "stop" if has_calls => StopReason::ToolUse,
            "stop" => StopReason::EndTurn,
            "tool_calls" | "function_call" => StopReason::ToolUse,
            "length" => StopReason::MaxTokens,
            other => StopReason::Other(other.to_string()),
        };
        Ok(Completion {
            message: Message {
                role: Role::Assistant,
                content,
            },
            stop,
            usage: self.usage,
        })
    }
}

pub(crate) fn truncate(s: &str) -> String {
    const MAX: usize = 200;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn two_prompts_in_one_user_turn_stay_apart() {
        let m = Message {
            role: Role::User,
            content: vec![
                Content::Text {
                    text: "first prompt".into(),
                },
                Content::Text {
                    text: "second prompt".into(),
                },
            ],
        };
        let mut out = Vec::new();
        encode_message(&m, &mut out);
        let v = serde_json::to_value(&out).unwrap();
        assert_eq!(v[0]["content"], "first prompt\n\nsecond prompt");
    }

    fn feed(lines: &[&str]) -> (Result<Completion, LlmError>, Vec<StreamEvent>) {
        let mut d = Box::new(ChatDecoder::new("t".into()));
        let mut events = Vec::new();
        let mut done = false;
        for l in lines {
            let ev = SseEvent {
                event: String::new(),
                data: l.to_string(),
            };
            match d.event(ev, &mut |e| events.push(e)) {
                Ok(Seen::Final) => {
                    done = true;
                    break;
                }
                Ok(_) => {}
                Err(e) => return (Err(e), events),
            }
        }
        (d.finish(done), events)
    }

    #[test]
    fn interleaved_tool_calls_reassemble_by_index() {
        let (c, _) = feed(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"view","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","type":"function","function":{"name":"ls","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"pa"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"th\":\".\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"a.rs\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":4}}}"#,
            "[DONE]",
        ]);
        let c = c.unwrap();
        assert_eq!(c.stop, StopReason::ToolUse);
        assert_eq!(
            c.message.content,
            vec![
                Content::ToolCall {
                    id: "a".into(),
                    name: "view".into(),
                    arguments: r#"{"path":"a.rs"}"#.into()
                },
                Content::ToolCall {
                    id: "b".into(),
                    name: "ls".into(),
                    arguments: r#"{"path":"."}"#.into()
                },
            ]
        );
        assert_eq!(
            (
                c.usage.input_tokens,
                c.usage.output_tokens,
                c.usage.cache_read_tokens
            ),
            (6, 5, 4)
        );
    }

    #[test]
    fn reasoning_content_is_thinking_not_text() {
        let (c, events) = feed(&[
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":"hmm","content":null}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]}"#,
            "[DONE]",
        ]);
        assert_eq!(c.unwrap().message.text(), "Hi");
        assert_eq!(
            events,
            vec![
                StreamEvent::ThinkingDelta("hmm".into()),
                StreamEvent::TextDelta("Hi".into())
            ]
        );
    }

    fn one_call(c: &Completion) -> (&str, &str) {
        match c.message.content.as_slice() {
            [
                Content::ToolCall {
                    name, arguments, ..
                },
            ] => (name, arguments),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn name_repeated_in_every_chunk_is_one_name() {
        let (c, _) = feed(&[
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"view","arguments":"{\"pa"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"view","arguments":"th\":\"x\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            "[DONE]",
        ]);
        let c = c.unwrap();
        assert_eq!(one_call(&c), ("view", r#"{"path":"x"}"#));
    }

    #[test]
    fn a_name_split_in_pieces_is_joined() {
        let (c, _) = feed(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"multi","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"edit","arguments":"{}"}}]}}]}"#,
            "[DONE]",
        ]);
        assert_eq!(one_call(&c.unwrap()), ("multiedit", "{}"));
    }

    #[test]
    fn arguments_in_one_piece_or_as_an_object_and_no_finish_reason() {
        for args in [r#""{\"path\":\"x\"}""#, r#"{"path":"x"}"#] {
            let chunk = format!(
                r#"{{"choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":0,"id":"a","function":{{"name":"view","arguments":{args}}}}}]}}}}]}}"#
            );
            let (c, _) = feed(&[&chunk, "[DONE]"]);
            let c = c.unwrap();
            assert_eq!(one_call(&c), ("view", r#"{"path":"x"}"#));
            // No finish_reason, but `[DONE]`: whole, and a tool use.
            assert_eq!(c.stop, StopReason::ToolUse);
        }
        let (c, _) = feed(&[r#"{"choices":[{"delta":{"content":"Hi"}}]}"#, "[DONE]"]);
        assert_eq!(c.unwrap().stop, StopReason::EndTurn);
    }

    #[test]
    fn calls_without_an_index_are_told_apart_by_id() {
        let (c, _) = feed(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"view","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"ls","arguments":"{"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
            "[DONE]",
        ]);
        let names: Vec<(String, String)> = c
            .unwrap()
            .message
            .content
            .into_iter()
            .map(|c| match c {
                Content::ToolCall {
                    name, arguments, ..
                } => (name, arguments),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            names,
            vec![("view".into(), "{}".into()), ("ls".into(), "{}".into())]
        );
    }

    #[test]
    fn whole_calls_all_numbered_zero_stay_apart() {
        let (c, _) = feed(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"view","arguments":"{\"path\":\"x\"}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"ls","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
            "[DONE]",
        ]);
        let calls: Vec<(String, String, String)> = c
            .unwrap()
            .message
            .content
            .into_iter()
            .map(|c| match c {
                Content::ToolCall {
                    id,
                    name,
                    arguments,
                } => (id, name, arguments),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            calls,
            vec![
                ("a".into(), "view".into(), r#"{"path":"x"}"#.into()),
                ("b".into(), "ls".into(), "{}".into())
            ]
        );
    }

    #[test]
    fn deepseek_cache_hits_and_keep_alives() {
        let mut d = ChatDecoder::new("t".into());
        let keep = SseEvent {
            event: String::new(),
            data: " ".into(),
        };
        assert_eq!(d.event(keep, &mut |_| {}).unwrap(), Seen::KeepAlive);
        let (c, _) = feed(&[
            r#"{"choices":[{"delta":{"content":"Hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"prompt_cache_hit_tokens":8,"prompt_cache_miss_tokens":2}}"#,
            "[DONE]",
        ]);
        let u = c.unwrap().usage;
        assert_eq!(
            (u.input_tokens, u.cache_read_tokens, u.output_tokens),
            (2, 8, 2)
        );
    }

    #[test]
    fn missing_final_event_is_incomplete() {
        let (c, _) = feed(&[r#"{"choices":[{"index":0,"delta":{"content":"Hi"}}]}"#]);
        assert!(matches!(c, Err(LlmError::Incomplete)));
    }

    #[test]
    fn error_chunk_and_garbage_are_errors() {
        let (c, _) = feed(&[r#"{"error":{"message":"boom","type":"server_error"}}"#]);
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
        let (c, _) = feed(&["{not json"]);
        assert!(matches!(c, Err(LlmError::Protocol(_))));
    }

    #[test]
    fn context_length_error_chunk_is_its_own_error() {
        let (c, _) = feed(&[
            r#"{"error":{"code":400,"message":"This endpoint's maximum context length is 8192 tokens. However, you requested about 9000 tokens."}}"#,
        ]);
        assert!(matches!(c, Err(LlmError::ContextLength(_))), "{c:?}");
    }

    #[test]
    fn tool_results_become_tool_messages() {
        let m = Message {
            role: Role::User,
            content: vec![
                Content::ToolResult {
                    call_id: "a".into(),
                    content: "r".into(),
                    is_error: false,
                },
                Content::Text {
                    text: "more".into(),
                },
            ],
        };
        let mut out = Vec::new();
        encode_message(&m, &mut out);
        assert_eq!(
            serde_json::to_value(&out).unwrap(),
            json!([
                {"role": "tool", "tool_call_id": "a", "content": "r"},
                {"role": "user", "content": "more"},
            ])
        );
    }
}
