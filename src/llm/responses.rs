//! OpenAI's Responses API, streamed: the wire of OpenAI's newest models
//! (`kind = "openai-responses"`). The conversation goes as `input` items
//! (messages, `function_call`, `function_call_output`, and the model's
//! `reasoning` items carried across turns with their encrypted content,
//! since nothing is stored server-side: `store: false`). Events arrive
//! typed (`response.output_text.delta`, `response.output_item.done`,
//! `response.completed`...); a call is taken from its finished item.

use futures_util::future::BoxFuture;
use reqwest::header::HeaderMap;
use serde::Serialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::ResolvedProvider;
use super::openai::truncate;
use super::prefix::{EncodedPrefix, open_array, push_element};
use super::sse::SseEvent;
use super::transport::{Decoder, Seen, Transport, log_once};
use super::{
    Completion, Content, EventFn, LlmError, Message, Provider, Request, Role, StopReason,
    StreamEvent, Usage,
};

pub(crate) struct Responses {
    transport: Transport,
    url: String,
    auth: HeaderMap,
    sent: EncodedPrefix,
    effort: Option<String>,
}

impl Responses {
    pub fn new(p: &ResolvedProvider, transport: Transport) -> Responses {
        Responses {
            transport,
            url: format!("{}/responses", p.base_url),
            auth: super::openai::bearer(p),
            sent: EncodedPrefix::default(),
            effort: p.reasoning_effort.clone(),
        }
    }

    fn body(&self, req: &Request<'_>) -> Result<bytes::Bytes, LlmError> {
        let head = ResponsesRequest {
            model: self.transport.model(),
            instructions: req.system,
            stream: true,
            store: false,
            include: if self.effort.is_some() {
                vec!["reasoning.encrypted_content"]
            } else {
                Vec::new()
            },
            reasoning: self.effort.as_deref().map(|effort| Reasoning {
                effort,
                summary: "auto",
            }),
            tools: req
                .tools
                .iter()
                .map(|t| FunctionTool {
                    kind: "function",
                    name: &t.name,
                    description: &t.description,
                    parameters: &t.parameters,
                    strict: false,
                })
                .collect(),
        };
        let head = serde_json::to_vec(&head)
            .map_err(|e| LlmError::Client(format!("cannot encode the request: {e}")))?;
        let open = open_array(head, "input");
        self.sent
            .body(req.conversation, open, false, req.messages, &|m, _, out| {
                for item in items(m) {
                    push_element(out, &item)?;
                }
                Ok(())
            })
    }
}

#[derive(Serialize)]
struct ResponsesRequest<'a> {
    model: &'a str,
    instructions: &'a str,
    stream: bool,
    store: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    include: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<Reasoning<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<FunctionTool<'a>>,
}

#[derive(Serialize)]
struct Reasoning<'a> {
    effort: &'a str,
    summary: &'static str,
}

#[derive(Serialize)]
struct FunctionTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
    strict: bool,
}

/// One neutral message as input items. A reasoning item is sent back only
/// with its encrypted content (kept as the thinking's signature): without
/// it, and with nothing stored, the server could not use it.
fn items(m: &Message) -> Vec<Value> {
    let mut out = Vec::new();
    match m.role {
        Role::User => {
            let mut text = String::new();
            for c in &m.content {
                match c {
                    Content::ToolResult {
                        call_id, content, ..
                    } => out.push(json!({"type": "function_call_output", "call_id": call_id, "output": content})),
                    Content::Text { text: t } => {
                        if !text.is_empty() && !t.is_empty() {
                            text.push_str("\n\n");
                        }
                        text.push_str(t);
                    }
                    _ => {}
                }
            }
            if !text.is_empty() {
                out.push(
                    json!({"role": "user", "content": [{"type": "input_text", "text": text}]}),
                );
            }
        }
        Role::Assistant => {
            for c in &m.content {
                match c {
                    Content::Thinking {
                        thinking,
                        signature: Some(kept),
                    } => {
                        if let Ok(Value::Object(mut item)) = serde_json::from_str::<Value>(kept) {
                            item.insert("type".into(), json!("reasoning"));
                            item.insert(
                                "summary".into(),
                                if thinking.is_empty() {
                                    json!([])
                                } else {
                                    json!([{"type": "summary_text", "text": thinking}])
                                },
                            );
                            out.push(Value::Object(item));
                        }
                    }
                    Content::Text { text } if !text.is_empty() => out.push(json!({
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": text}],
                    })),
                    Content::ToolCall {
                        id,
                        name,
                        arguments,
                    } => out.push(json!({
                        "type": "function_call",
                        "call_id": id,
                        "name": name,
                        "arguments": arguments,
                    })),
                    _ => {}
                }
            }
        }
    }
    out
}

impl Provider for Responses {
    fn describe(&self) -> (&str, &str) {
        (self.transport.provider(), self.transport.model())
    }

    fn models(&self) -> BoxFuture<'_, Result<Vec<String>, LlmError>> {
        let url = format!("{}/models", self.url.trim_end_matches("/responses"));
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
            let new = move || Box::new(ResponsesDecoder::new(provider.clone())) as Box<dyn Decoder>;
            self.transport
                .stream(&self.url, &self.auth, body, &new, on_event, cancel)
                .await
        })
    }
}

pub(crate) struct ResponsesDecoder {
    provider: String,
    text: String,
    summary: String,
    /// Reasoning items to carry: `{"id", "encrypted_content"}` as JSON.
    reasoning: Vec<String>,
    calls: Vec<(String, String, String)>,
    /// `completed` or `incomplete` (with why).
    end: Option<Result<(), String>>,
    usage: Usage,
}

impl ResponsesDecoder {
    pub(crate) fn new(provider: String) -> ResponsesDecoder {
        ResponsesDecoder {
            provider,
            text: String::new(),
            summary: String::new(),
            reasoning: Vec::new(),
            calls: Vec::new(),
            end: None,
            usage: Usage::default(),
        }
    }

    fn read_usage(&mut self, u: &Value) {
        let n = |p: &str| u.pointer(p).and_then(Value::as_u64).unwrap_or(0);
        let cached = n("/input_tokens_details/cached_tokens");
        self.usage = Usage {
            input_tokens: n("/input_tokens").saturating_sub(cached),
            output_tokens: n("/output_tokens"),
            cache_read_tokens: cached,
            cache_write_tokens: 0,
        };
    }

    fn error(&self, e: &Value) -> LlmError {
        let kind = e
            .get("code")
            .or(e.get("type"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let message = e
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if super::status::about_context_length(&format!("{kind} {message}").to_lowercase()) {
            return LlmError::ContextLength(message);
        }
        let retryable = ["server_error", "rate_limit", "overloaded"]
            .iter()
            .any(|k| kind.contains(k));
        LlmError::Api {
            provider: self.provider.clone(),
            kind,
            message,
            retryable,
        }
    }
}

impl Decoder for ResponsesDecoder {
    fn event(&mut self, ev: SseEvent, emit: &mut dyn FnMut(StreamEvent)) -> Result<Seen, LlmError> {
        let data = ev.data.trim();
        if data.is_empty() {
            return Ok(Seen::KeepAlive);
        }
        let v: Value = serde_json::from_str(data).map_err(|e| {
            LlmError::Protocol(format!("event is not JSON ({e}): {}", truncate(data)))
        })?;
        let kind = v
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(ev.event.as_str())
            .to_string();
        let text = |k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        match kind.as_str() {
            "response.output_text.delta" => {
                let d = text("delta");
                self.text.push_str(&d);
                emit(StreamEvent::TextDelta(d));
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let d = text("delta");
                self.summary.push_str(&d);
                emit(StreamEvent::ThinkingDelta(d));
            }
            "response.output_item.done" => {
                let item = &v["item"];
                match item["type"].as_str() {
                    Some("function_call") => self.calls.push((
                        item["call_id"].as_str().unwrap_or_default().to_string(),
                        item["name"].as_str().unwrap_or_default().to_string(),
                        item["arguments"].as_str().unwrap_or_default().to_string(),
                    )),
                    Some("reasoning") => {
                        if let Some(enc) = item.get("encrypted_content").filter(|e| e.is_string()) {
                            self.reasoning.push(
                                json!({"id": item["id"], "encrypted_content": enc}).to_string(),
                            );
                        }
                    }
                    _ => {}
                }
            }
            "response.completed" => {
                self.read_usage(&v["response"]["usage"]);
                self.end = Some(Ok(()));
                return Ok(Seen::Final);
            }
            "response.incomplete" => {
                self.read_usage(&v["response"]["usage"]);
                let why = v
                    .pointer("/response/incomplete_details/reason")
                    .and_then(Value::as_str)
                    .unwrap_or("incomplete")
                    .to_string();
                self.end = Some(Err(why));
                return Ok(Seen::Final);
            }
            "response.failed" => return Err(self.error(&v["response"]["error"])),
            "error" => return Err(self.error(v.get("error").unwrap_or(&v))),
            k if k.starts_with("response.") => {}
            other => log_once(
                &format!("responses:{other}"),
                &format!("Responses API: unknown event type `{other}` ignored"),
            ),
        }
        Ok(Seen::Event)
    }

    fn finish(self: Box<Self>, _complete: bool) -> Result<Completion, LlmError> {
        // Only `response.completed` (or `.incomplete`) says the answer is whole.
        let Some(end) = self.end else {
            return Err(LlmError::Incomplete);
        };
        let mut content = Vec::new();
        for (i, kept) in self.reasoning.into_iter().enumerate() {
            content.push(Content::Thinking {
                thinking: if i == 0 {
                    self.summary.clone()
                } else {
                    String::new()
                },
                signature: Some(kept),
            });
        }
        if !self.text.is_empty() {
            content.push(Content::Text { text: self.text });
        }
        let has_calls = !self.calls.is_empty();
        for (id, name, arguments) in self.calls {
            content.push(Content::ToolCall {
                id,
                name,
                arguments,
            });
        }
        let stop = match end {
            Ok(()) if has_calls => StopReason::ToolUse,
            Ok(()) => StopReason::EndTurn,
            Err(why) if why == "max_output_tokens" => StopReason::MaxTokens,
            Err(why) => StopReason::Other(why),
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
