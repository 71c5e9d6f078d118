//! Anthropic Messages, streamed: text, `tool_use` blocks built from
//! `input_json_delta` fragments, and `thinking` blocks, which are kept with
//! their signatures and sent back unchanged as the API requires. The system
//! prompt, tools and newest message carry cache breakpoints, so a long
//! session re-reads its prefix from the prompt cache. Tool input that comes
//! whole in `content_block_start` is kept; block, delta and event types this
//! client does not know (server tools, citations, later additions) are
//! skipped with one note in the log, never fatal.

use futures_util::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderValue};
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;
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

const API_VERSION: &str = "2023-06-01";

pub(crate) struct Anthropic {
    transport: Transport,
    url: String,
    headers: HeaderMap,
    max_tokens: u32,
    thinking_budget: Option<u32>,
    sent: EncodedPrefix,
}

impl Anthropic {
    pub fn new(p: &ResolvedProvider, transport: Transport) -> Anthropic {
        let mut headers = HeaderMap::new();
        if let Some(key) = &p.api_key
            && let Ok(v) = HeaderValue::from_str(key)
        {
            headers.insert("x-api-key", v);
        }
        headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
        Anthropic {
            transport,
            url: format!("{}/v1/messages", p.base_url),
            headers,
            max_tokens: p.max_tokens,
            thinking_budget: p.thinking_budget,
            sent: EncodedPrefix::default(),
        }
    }

    /// The request body: the fields, then the messages, of which only those
    /// not sent before in this conversation are encoded now (the last one
    /// always, since it carries the cache breakpoint).
    fn body(&self, req: &Request<'_>) -> Result<bytes::Bytes, LlmError> {
        let head = serde_json::to_vec(&self.head(req))
            .map_err(|e| LlmError::Client(format!("cannot encode the request: {e}")))?;
        let open = open_array(head, "messages");
        self.sent.body(
            req.conversation,
            open,
            false,
            req.messages,
            &|m, last, out| {
                let Some(mut wire) = encode_message(m) else {
                    return Ok(());
                };
                if last && let Some(block) = wire.content.last_mut() {
                    block.cache_control = Some(EPHEMERAL);
                }
                push_element(out, &wire)
            },
        )
    }

    fn head<'a>(&'a self, req: &Request<'a>) -> MessagesRequest<'a> {
        let count = req.tools.len();
        let tools = req
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| WireTool {
                name: &t.name,
                description: &t.description,
                input_schema: &t.parameters,
                cache_control: (i + 1 == count).then_some(EPHEMERAL),
            })
            .collect();
        MessagesRequest {
            model: self.transport.model(),
            max_tokens: self.max_tokens,
            stream: true,
            system: [WireBlock {
                kind: BlockKind::Text { text: req.system },
                cache_control: Some(EPHEMERAL),
            }],
            tools,
            thinking: self.thinking_budget.map(|budget_tokens| ThinkingConfig {
                kind: "enabled",
                budget_tokens,
            }),
        }
    }
}

// The request, borrowing from the conversation: serialized straight to bytes
// without building a JSON tree, since the whole history goes out every trip.
#[derive(Serialize)]
struct MessagesRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    stream: bool,
    system: [WireBlock<'a>; 1],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<ThinkingConfig>,
}

#[derive(Serialize)]
struct ThinkingConfig {
    #[serde(rename = "type")]
    kind: &'static str,
    budget_tokens: u32,
}

#[derive(Serialize, Clone, Copy)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

const EPHEMERAL: CacheControl = CacheControl { kind: "ephemeral" };

#[derive(Serialize)]
struct WireTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    content: Vec<WireBlock<'a>>,
}

#[derive(Serialize)]
struct WireBlock<'a> {
    #[serde(flatten)]
    kind: BlockKind<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockKind<'a> {
    Text {
        text: &'a str,
    },
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    RedactedThinking {
        data: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: &'a RawValue,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: &'a str,
        is_error: bool,
    },
}

fn block(kind: BlockKind<'_>) -> WireBlock<'_> {
    WireBlock {
        kind,
        cache_control: None,
    }
}

/// The arguments as the `input` object the API requires. Malformed
/// arguments were answered with an error result; the API still needs an
/// object here, so they go out as `{}`.
fn tool_input(arguments: &str) -> &RawValue {
    const EMPTY: &str = "{}";
    match serde_json::from_str::<&RawValue>(arguments) {
        Ok(raw) if raw.get().starts_with('{') => raw,
        // Parsing a constant `{}` cannot fail.
        _ => serde_json::from_str(EMPTY).unwrap_or_else(|_| unreachable!()),
    }
}

fn encode_message(m: &Message) -> Option<WireMessage<'_>> {
    let mut content = Vec::new();
    // Tool results must open a user message.
    for c in &m.content {
        if let Content::ToolResult {
            call_id,
            content: text,
            is_error,
        } = c
        {
            content.push(block(BlockKind::ToolResult {
                tool_use_id: call_id,
                content: text,
                is_error: *is_error,
            }));
        }
    }
    for c in &m.content {
        let kind = match c {
            Content::Text { text } if !text.is_empty() => BlockKind::Text { text },
            Content::Thinking {
                thinking,
                signature: Some(signature),
            } => BlockKind::Thinking {
                thinking,
                signature,
            },
            Content::RedactedThinking { data } => BlockKind::RedactedThinking { data },
            Content::ToolCall {
                id,
                name,
                arguments,
            } => BlockKind::ToolUse {
                id,
                name,
                input: tool_input(arguments),
            },
            _ => continue,
        };
        content.push(block(kind));
    }
    if content.is_empty() {
        return None;
    }
    let role = match m.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    Some(WireMessage { role, content })
}

impl Provider for Anthropic {
    fn describe(&self) -> (&str, &str) {
        (self.transport.provider(), self.transport.model())
    }

    fn models(&self) -> BoxFuture<'_, Result<Vec<String>, LlmError>> {
        let url = self.url.replace("/v1/messages", "/v1/models");
        Box::pin(async move { self.transport.model_ids(&url, &self.headers).await })
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
            let new = move || Box::new(MessagesDecoder::new(provider.clone())) as Box<dyn Decoder>;
            self.transport
                .stream(&self.url, &self.headers, body, &new, on_event, cancel)
                .await
        })
    }
}

enum Block {
    Text(String),
    Thinking {
        text: String,
        signature: String,
    },
    Redacted(String),
    ToolUse {
        id: String,
        name: String,
        /// `input` of `content_block_start` when it was not empty: some
        /// servers send the whole input there and no deltas.
        start: String,
        json: String,
    },
    /// A block type this client does not know; its deltas are dropped.
    Skipped,
}

pub(crate) struct MessagesDecoder {
    provider: String,
    blocks: Vec<(u64, Block)>,
    stop: Option<String>,
    usage: Usage,
}

impl MessagesDecoder {
    pub(crate) fn new(provider: String) -> MessagesDecoder {
        MessagesDecoder {
            provider,
            blocks: Vec::new(),
            stop: None,
            usage: Usage::default(),
        }
    }

    fn block(&mut self, index: u64) -> Result<&mut Block, LlmError> {
        self.blocks
            .iter_mut()
            .find(|(i, _)| *i == index)
            .map(|(_, b)| b)
            .ok_or_else(|| {
                LlmError::Protocol(format!(
                    "delta for content block {index}, which was never started"
                ))
            })
    }

    fn read_usage(&mut self, u: &Value) {
        let n = |k: &str| u.get(k).and_then(Value::as_u64);
        if let Some(v) = n("input_tokens") {
            self.usage.input_tokens = v;
        }
        if let Some(v) = n("output_tokens") {
            self.usage.output_tokens = v;
        }
        if let Some(v) = n("cache_read_input_tokens") {
            self.usage.cache_read_tokens = v;
        }
        if let Some(v) = n("cache_creation_input_tokens") {
            self.usage.cache_write_tokens = v;
        }
    }
}

impl Decoder for MessagesDecoder {
    fn event(&mut self, ev: SseEvent, emit: &mut dyn FnMut(StreamEvent)) -> Result<Seen, LlmError> {
        if ev.data.trim().is_empty() {
            return Ok(Seen::KeepAlive);
        }
        let v: Value = serde_json::from_str(&ev.data).map_err(|e| {
            LlmError::Protocol(format!("event is not JSON ({e}): {}", truncate(&ev.data)))
        })?;
        let kind = v
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(ev.event.as_str());
        let s = |v: &Value, k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "ping" => return Ok(Seen::KeepAlive),
            "message_start" => {
                if let Some(u) = v.pointer("/message/usage") {
                    self.read_usage(u);
                }
            }
            "content_block_start" => {
                let b = &v["content_block"];
                let block = match b.get("type").and_then(Value::as_str) {
                    Some("text") => Block::Text(s(b, "text")),
                    Some("thinking") => Block::Thinking {
                        text: s(b, "thinking"),
                        signature: s(b, "signature"),
                    },
                    Some("redacted_thinking") => Block::Redacted(s(b, "data")),
                    Some("tool_use") => Block::ToolUse {
                        id: s(b, "id"),
                        name: s(b, "name"),
                        start: match b.get("input") {
                            Some(i) if i.as_object().is_some_and(|o| !o.is_empty()) => {
                                i.to_string()
                            }
                            _ => String::new(),
                        },
                        json: String::new(),
                    },
                    other => {
                        let other = other.unwrap_or("(none)");
                        log_once(
                            &format!("anthropic block {other}"),
                            &format!(
                                "{}: skipped a content block of unknown type `{other}`",
                                self.provider
                            ),
                        );
                        Block::Skipped
                    }
                };
                if let Block::Text(t) = &block
                    && !t.is_empty()
                {
                    emit(StreamEvent::TextDelta(t.clone()));
                }
                self.blocks.push((index, block));
            }
            "content_block_delta" => {
                let d = &v["delta"];
                let provider = self.provider.clone();
                let block = self.block(index)?;
                match (d.get("type").and_then(Value::as_str), block) {
                    (_, Block::Skipped) => {}
                    (Some("text_delta"), Block::Text(t)) => {
                        let piece = s(d, "text");
                        t.push_str(&piece);
                        emit(StreamEvent::TextDelta(piece));
                    }
                    (Some("thinking_delta"), Block::Thinking { text, .. }) => {
                        let piece = s(d, "thinking");
                        text.push_str(&piece);
                        emit(StreamEvent::ThinkingDelta(piece));
                    }
                    (Some("signature_delta"), Block::Thinking { signature, .. }) => {
                        signature.push_str(&s(d, "signature"))
                    }
                    (Some("input_json_delta"), Block::ToolUse { json, .. }) => {
                        json.push_str(&s(d, "partial_json"))
                    }
                    (t, _) => {
                        let t = t.unwrap_or("(none)");
                        log_once(
                            &format!("anthropic delta {t}"),
                            &format!("{provider}: skipped a `{t}` delta of content block {index}"),
                        );
                    }
                }
            }
            "message_delta" => {
                if let Some(r) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop = Some(r.to_string());
                }
                if let Some(u) = v.get("usage") {
                    self.read_usage(u);
                }
            }
            "message_stop" => return Ok(Seen::Final),
            "error" => {
                let kind = v
                    .pointer("/error/type")
                    .and_then(Value::as_str)
                    .unwrap_or("error")
                    .to_string();
                let message = v
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                if super::status::about_context_length(&message.to_lowercase()) {
                    return Err(LlmError::ContextLength(message));
                }
                let retryable = matches!(
                    kind.as_str(),
                    "overloaded_error" | "api_error" | "rate_limit_error"
                );
                return Err(LlmError::Api {
                    provider: self.provider.clone(),
                    kind,
                    message,
                    retryable,
                });
            }
            "content_block_stop" => {}
            other => log_once(
                &format!("anthropic event {other}"),
                &format!(
                    "{}: skipped an event of unknown type `{other}`",
                    self.provider
                ),
            ),
        }
        Ok(Seen::Event)
    }

    fn finish(self: Box<Self>, _complete: bool) -> Result<Completion, LlmError> {
        let Some(stop) = self.stop else {
            return Err(LlmError::Incomplete);
        };
        let mut blocks = self.blocks;
        blocks.sort_by_key(|(i, _)| *i);
        let content = blocks
            .into_iter()
            .filter_map(|(_, b)| {
                Some(match b {
                    Block::Text(text) => Content::Text { text },
                    Block::Thinking { text, signature } => Content::Thinking {
                        thinking: text,
                        signature: Some(signature),
                    },
                    Block::Redacted(data) => Content::RedactedThinking { data },
                    Block::ToolUse {
                        id,
                        name,
                        start,
                        json,
                    } => Content::ToolCall {
                        id,
                        name,
                        arguments: if !json.trim().is_empty() {
                            json
                        } else if !start.is_empty() {
                            start
                        } else {
                            "{}".into()
                        },
                    },
                    Block::Skipped => return None,
                })
            })
            .collect();
        let stop = match stop.as_str() {
            "end_turn" | "stop_sequence" => StopReason::EndTurn,
            "tool_use" => StopReason::ToolUse,
            "max_tokens" => StopReason::MaxTokens,
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

#[cfg(test)]
mod tests;
