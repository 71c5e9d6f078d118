//! A scripted mock LLM server speaking the real streaming wire protocols
//! (OpenAI Chat Completions and Anthropic Messages) over hand-written HTTP/1.1.
//!
//! [`MockLlm`] owns:
//! - a [`super::http::Server`] on `127.0.0.1` (ephemeral port): a background
//!   thread with its own runtime serving each connection in its own task (a
//!   normal reply keeps the connection alive for the next request; faults and
//!   errors close it);
//! - the script: a queue of [`Step`]s, one popped per request to a known path;
//! - the log of every request received ([`Recorded`]), in arrival order.
//!
//! Dropping a `MockLlm` stops the accept loop and shuts down the runtime, which
//! cancels every in-flight connection (including [`Step::Stall`]s), then joins the thread.
//!
//! HTTP is hand-written on purpose: faults are injected at byte level. Server-side I/O
//! errors never panic; they are logged to stderr and the connection is dropped.

mod anthropic;
mod openai;
mod responses;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;
use tokio::net::TcpStream;

use super::http;

/// How long a [`Step::Stall`] keeps the connection open if the client never goes away.
pub const STALL_LIMIT: Duration = Duration::from_secs(60);
/// How long the server waits for a complete request before dropping the connection.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// One scripted answer; each request to a known path consumes the next step.
#[derive(Clone, Debug)]
pub enum Step {
    /// A normal streamed response in the wire format of the request path.
    Reply(Reply),
    /// Non-streaming response: `content-type: application/json` (unless `headers`
    /// sets one), `Content-Length`, `body` verbatim; `headers` are added as given.
    Status {
        code: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Status line, headers and the SSE events up to (and including) the one crossing
    /// half of the stream's bytes, then the socket is closed without the terminating
    /// zero-length chunk. The client sees a body read error.
    DropMidStream(Reply),
    /// The full stream minus its final events (OpenAI: finish_reason chunk, usage chunk,
    /// `[DONE]`; Anthropic: `message_delta`, `message_stop`); the chunked body ends cleanly.
    NoFinalEvent(Reply),
    /// The same prefix as [`Step::DropMidStream`], then silence until the client closes
    /// the connection or [`STALL_LIMIT`] passes (then the socket is closed mid-body).
    Stall(Reply),
    /// 200, `content-type: text/event-stream`, exactly this body (one HTTP chunk).
    Raw(String),
    /// [`Step::Raw`] split into HTTP chunks of `n` bytes (ignoring line and
    /// UTF-8 boundaries).
    RawChunked(String, usize),
    /// Reads the request and never answers (no status line) until the client
    /// closes the connection or [`STALL_LIMIT`] passes.
    Silent,
    /// 200 and event-stream headers, then only keep-alives every
    /// [`KEEP_ALIVE_EVERY`] until the client closes or [`STALL_LIMIT`]
    /// passes: `: ping` comments, and on the Anthropic path also
    /// `event: ping` events, as the real servers send them.
    PingsOnly,
    /// The prefix of [`Step::DropMidStream`], then keep-alives as [`Step::PingsOnly`].
    PingsAfter(Reply),
    /// The opening events of a text answer, then one real text delta (`.`)
    /// every [`KEEP_ALIVE_EVERY`], never ending: only a cap on the whole
    /// request stops it.
    Drip,
}

/// How often [`Step::PingsOnly`] pings and [`Step::Drip`] drips.
pub const KEEP_ALIVE_EVERY: Duration = Duration::from_millis(50);

/// A [`Step::Status`] from borrowed parts.
#[allow(dead_code)]
pub fn status(code: u16, headers: &[(&str, &str)], body: &str) -> Step {
    Step::Status {
        code,
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        body: body.to_string(),
    }
}

/// A tool call in a [`Reply`]. `arguments` is sent verbatim and may be malformed JSON.
#[derive(Clone, Debug)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// Builds a [`ToolCall`] whose arguments are `args.to_string()`.
pub fn call(id: &str, name: &str, args: Value) -> ToolCall {
    ToolCall {
        id: id.to_string(),
        name: name.to_string(),
        arguments: args.to_string(),
    }
}

/// Content of one streamed assistant turn.
#[derive(Clone, Debug)]
pub struct Reply {
    pub text: Option<String>,
    pub thinking: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    /// `Some(n)`: split the whole SSE byte stream into HTTP chunks of `n` bytes
    /// (ignoring UTF-8 and line boundaries). `None`: one HTTP chunk per SSE event.
    pub chunk: Option<usize>,
    /// (input tokens, output tokens). Default `(10, 20)`.
    pub usage: (u64, u64),
}

impl Reply {
    fn empty() -> Reply {
        Reply {
            text: None,
            thinking: None,
            tool_calls: Vec::new(),
            chunk: None,
            usage: (10, 20),
        }
    }
    pub fn text(t: &str) -> Reply {
        Reply::empty().with_text(t)
    }
    pub fn tools(calls: Vec<ToolCall>) -> Reply {
        Reply {
            tool_calls: calls,
            ..Reply::empty()
        }
    }
    pub fn with_text(mut self, t: &str) -> Reply {
        self.text = Some(t.to_string());
        self
    }
    pub fn with_thinking(mut self, t: &str) -> Reply {
        self.thinking = Some(t.to_string());
        self
    }
    /// Split the SSE bytes into HTTP chunks of `n` bytes (0 is treated as 1).
    pub fn chunked(mut self, n: usize) -> Reply {
        self.chunk = Some(n.max(1));
        self
    }
    pub fn with_usage(mut self, input: u64, output: u64) -> Reply {
        self.usage = (input, output);
        self
    }
}

/// A request as received by the mock.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// Request target without the query string, e.g. `/v1/messages`.
    pub path: String,
    /// Header names lowercased, values trimmed, in received order.
    pub headers: Vec<(String, String)>,
    /// Body parsed as JSON, or `Value::Null` if it is not JSON.
    pub body: Value,
}

impl Recorded {
    /// First header with this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

struct State {
    script: VecDeque<Step>,
    requests: Vec<Recorded>,
    /// Requests without tools (an agent's compaction summary) get a
    /// summary reply that takes no step of the script.
    summaries: bool,
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// Handle to a running mock server; see the module docs.
pub struct MockLlm {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    _server: http::Server,
}

impl MockLlm {
    /// Binds `127.0.0.1:0` and starts serving `script`.
    pub fn start(script: Vec<Step>) -> MockLlm {
        let state = Arc::new(Mutex::new(State {
            script: script.into(),
            requests: Vec::new(),
            summaries: false,
        }));
        let server_state = state.clone();
        let server = http::Server::start("mock_llm", move |sock| {
            let state = server_state.clone();
            async move { serve_conn(sock, &state).await }
        });
        MockLlm {
            addr: server.addr(),
            state,
            _server: server,
        }
    }

    /// `http://127.0.0.1:PORT/v1` (append `/chat/completions`).
    pub fn openai_base(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// `http://127.0.0.1:PORT` (append `/v1/messages`).
    pub fn anthropic_base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far, in order, including ones answered with faults.
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.state).requests.clone()
    }

    /// From now on, requests without tools (compaction summaries) are
    /// answered with a short summary outside the script.
    #[allow(dead_code)]
    pub fn answer_summaries(&self) {
        lock(&self.state).summaries = true;
    }

    /// Script steps not yet consumed.
    pub fn remaining(&self) -> usize {
        lock(&self.state).script.len()
    }
}

#[derive(Clone, Copy)]
enum Proto {
    OpenAi,
    Anthropic,
    Responses,
}

impl Proto {
    fn for_path(path: &str) -> Option<Proto> {
        if path.ends_with("/chat/completions") {
            Some(Proto::OpenAi)
        } else if path.ends_with("/v1/messages") {
            Some(Proto::Anthropic)
        } else if path.ends_with("/responses") {
            Some(Proto::Responses)
        } else {
            None
        }
    }
}

/// A rendered SSE stream: one string per event; the last `final_events` are the
/// events that signal a complete turn.
struct Stream {
    events: Vec<String>,
    final_events: usize,
}

impl Stream {
    fn render(proto: Proto, reply: &Reply, request: &Value) -> Stream {
        match proto {
            Proto::OpenAi => openai::render(reply, request),
            Proto::Anthropic => anthropic::render(reply, request),
            Proto::Responses => responses::render(reply, request),
        }
    }

    /// Number of events up to and including the one crossing half of the bytes,
    /// always leaving at least one event unsent.
    fn midpoint(&self) -> usize {
        let total: usize = self.events.iter().map(String::len).sum();
        let mut sent = 0;
        for (i, e) in self.events.iter().enumerate() {
            sent += e.len();
            if sent * 2 >= total {
                return (i + 1).min(self.events.len() - 1);
            }
        }
        self.events.len().saturating_sub(1)
    }
}

async fn serve_conn(sock: TcpStream, state: &Mutex<State>) -> std::io::Result<()> {
    sock.set_nodelay(true)?;
    let mut conn = http::Conn::new(sock);
    // A normal reply keeps the connection alive (as real servers do, so the
    // client's pool is exercised); every other step closes it.
    while serve_request(&mut conn, state).await? {
        if !conn.next_request_arrives(REQUEST_TIMEOUT).await {
            break;
        }
    }
    Ok(())
}

/// Serves one request; `Ok(true)` when the connection may take another.
/// The models the mock offers at `/models`.
pub const MODELS: [&str; 3] = ["gpt-mock", "mock-1", "mock-2"];

async fn serve_request(conn: &mut http::Conn, state: &Mutex<State>) -> std::io::Result<bool> {
    let req = match tokio::time::timeout(REQUEST_TIMEOUT, conn.read_request()).await {
        Ok(Ok(req)) => req,
        Ok(Err(e)) => {
            let msg = format!("mock_llm: bad request: {e}");
            let _ = conn.respond(400, &[], "text/plain", &msg).await;
            return Err(e);
        }
        Err(_) => return Err(std::io::Error::other("no complete request within 30 s")),
    };
    // The model list (`/models`, `/v1/models`): not part of the script,
    // and not recorded as a request.
    if req.path.ends_with("/models") {
        let list = serde_json::json!({"object": "list", "data": MODELS.iter()
            .map(|m| serde_json::json!({"id": m, "object": "model"})).collect::<Vec<_>>()});
        return conn
            .respond(200, &[], "application/json", &list.to_string())
            .await
            .map(|()| true);
    }
    let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
    let client_closes = req
        .headers
        .iter()
        .any(|(k, v)| k == "connection" && v.eq_ignore_ascii_case("close"));
    let proto = Proto::for_path(&req.path);
    let step = {
        let mut st = lock(state);
        st.requests.push(Recorded {
            path: req.path.clone(),
            headers: req.headers,
            body: body.clone(),
        });
        let summary = st.summaries
            && body
                .get("tools")
                .is_none_or(|t| t.as_array().is_some_and(|a| a.is_empty()));
        if summary {
            proto.map(|_| Step::Reply(Reply::text("## Task\nThe summary of the mock.")))
        } else {
            proto.and_then(|_| st.script.pop_front())
        }
    };
    let Some(proto) = proto else {
        let err = serde_json::json!({"error": {"type": "not_found_error",
            "message": format!("mock_llm: unknown path {}", req.path)}});
        return conn
            .respond(404, &[], "application/json", &err.to_string())
            .await
            .map(|()| false);
    };
    let Some(step) = step else {
        return conn
            .respond(500, &[], "text/plain", "mock script exhausted")
            .await
            .map(|()| false);
    };
    let keep_alive = match step {
        Step::Status {
            code,
            headers,
            body,
        } => {
            conn.respond(code, &headers, "application/json", &body)
                .await?;
            false
        }
        Step::Raw(raw) => {
            conn.start_stream(false).await?;
            conn.send_pieces(&[raw.as_str()], None).await?;
            conn.end_stream().await?;
            false
        }
        Step::RawChunked(raw, n) => {
            conn.start_stream(false).await?;
            conn.send_pieces(&[raw.as_str()], Some(n)).await?;
            conn.end_stream().await?;
            false
        }
        Step::Silent => {
            conn.wait_for_close(STALL_LIMIT).await;
            false
        }
        Step::PingsOnly => {
            conn.start_stream(false).await?;
            conn.repeat_until_closed(keep_alive(proto), KEEP_ALIVE_EVERY, STALL_LIMIT)
                .await;
            false
        }
        Step::PingsAfter(reply) => {
            let s = Stream::render(proto, &reply, &body);
            conn.start_stream(false).await?;
            conn.send_pieces(&s.events[..s.midpoint()], reply.chunk)
                .await?;
            conn.repeat_until_closed(keep_alive(proto), KEEP_ALIVE_EVERY, STALL_LIMIT)
                .await;
            false
        }
        Step::Drip => {
            let (open, drop) = match proto {
                Proto::OpenAi => openai::drip(&body),
                Proto::Anthropic => anthropic::drip(&body),
                Proto::Responses => responses::drip(&body),
            };
            conn.start_stream(false).await?;
            conn.send_pieces(&open, None).await?;
            conn.repeat_until_closed(&drop, KEEP_ALIVE_EVERY, STALL_LIMIT)
                .await;
            false
        }
        Step::Reply(reply) => {
            let s = Stream::render(proto, &reply, &body);
            conn.start_stream(!client_closes).await?;
            conn.send_pieces(&s.events, reply.chunk).await?;
            if client_closes {
                conn.end_stream().await?;
            } else {
                conn.end_body().await?;
            }
            !client_closes
        }
        Step::NoFinalEvent(reply) => {
            let s = Stream::render(proto, &reply, &body);
            let keep = s.events.len() - s.final_events;
            conn.start_stream(false).await?;
            conn.send_pieces(&s.events[..keep], reply.chunk).await?;
            conn.end_stream().await?;
            false
        }
        Step::DropMidStream(reply) => {
            let s = Stream::render(proto, &reply, &body);
            conn.start_stream(false).await?;
            conn.send_pieces(&s.events[..s.midpoint()], reply.chunk)
                .await?;
            // Returning `false` drops `conn`: the socket closes without the final chunk.
            false
        }
        Step::Stall(reply) => {
            let s = Stream::render(proto, &reply, &body);
            conn.start_stream(false).await?;
            conn.send_pieces(&s.events[..s.midpoint()], reply.chunk)
                .await?;
            conn.wait_for_close(STALL_LIMIT).await;
            false
        }
    };
    Ok(keep_alive)
}

/// One keep-alive as the real servers of each protocol send it.
fn keep_alive(proto: Proto) -> &'static str {
    match proto {
        Proto::OpenAi | Proto::Responses => ": ping\n\n",
        Proto::Anthropic => ": ping\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n",
    }
}

/// JSON string literal for `s` (quoted and escaped).
fn json_str(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// Model name from the request body, as a JSON string literal.
fn model_of(request: &Value) -> String {
    json_str(request["model"].as_str().unwrap_or("mock-model"))
}

/// Splits `s` into pieces of `n` characters (char boundaries only).
fn pieces(s: &str, n: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (count, (i, _)) in s.char_indices().enumerate() {
        if count > 0 && count % n == 0 {
            out.push(&s[start..i]);
            start = i;
        }
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}
