//! JSON-RPC 2.0 over a language server's stdio: Content-Length framing,
//! requests matched to responses with timeouts, notifications both ways,
//! and answers to the server's own requests (`workspace/configuration`,
//! `window/workDoneProgress/create`, `client/registerCapability`). Knows
//! nothing of LSP methods beyond those; `client.rs` speaks LSP.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RpcError {
    #[error("the language server answered with error {code}: {message}")]
    Server { code: i64, message: String },
    #[error("the language server did not answer `{0}` in time")]
    Timeout(String),
    #[error("the language server exited")]
    Closed,
}

type Pending = Arc<Mutex<HashMap<i64, oneshot::Sender<Result<Value, RpcError>>>>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Inserts and removals only: a poisoned map is still consistent.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

pub struct Transport {
    out: mpsc::UnboundedSender<Value>,
    pending: Pending,
    next_id: AtomicI64,
}

impl Transport {
    /// Starts reading `reader` and writing `writer`; `on_notification`
    /// receives every notification the server sends.
    ///
    /// The server's own requests are answered here and then passed to
    /// `on_notification` as well, so the client can act on them
    /// (registrations, diagnostic refreshes). With `trace`, every message
    /// both ways is appended to that file (`AGENT_LSP_TRACE=1`).
    pub fn start<R, W>(
        reader: R,
        writer: W,
        trace: Option<std::fs::File>,
        on_notification: impl Fn(&str, Value) + Send + 'static,
    ) -> Transport
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (out, mut out_rx) = mpsc::unbounded_channel::<Value>();
        let pending: Pending = Arc::default();
        let trace = trace.map(|f| Arc::new(Mutex::new(f)));
        let traced = trace.clone();
        tokio::spawn(async move {
            let mut writer = writer;
            while let Some(msg) = out_rx.recv().await {
                let body = msg.to_string();
                write_trace(traced.as_ref(), "-->", &body);
                let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
                if writer.write_all(frame.as_bytes()).await.is_err()
                    || writer.flush().await.is_err()
                {
                    break;
                }
            }
        });
        let reply = out.clone();
        let waiting = Arc::clone(&pending);
        tokio::spawn(async move {
            let mut reader = BufReader::new(reader);
            while let Some(msg) = read_message(&mut reader).await {
                if trace.is_some() {
                    write_trace(trace.as_ref(), "<--", &msg.to_string());
                }
                dispatch(msg, &reply, &waiting, &on_notification);
            }
            // The server is gone: nobody will answer what is still waiting.
            for (_, tx) in lock(&waiting).drain() {
                let _ = tx.send(Err(RpcError::Closed));
            }
        });
        Transport {
            out,
            pending,
            next_id: AtomicI64::new(1),
        }
    }

    pub async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, RpcError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id, tx);
        if self
            .out
            .send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .is_err()
        {
            lock(&self.pending).remove(&id);
            return Err(RpcError::Closed);
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(RpcError::Closed),
            Err(_) => {
                lock(&self.pending).remove(&id);
                Err(RpcError::Timeout(method.to_string()))
            }
        }
    }

    pub fn notify(&self, method: &str, params: Value) -> Result<(), RpcError> {
        self.out
            .send(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .map_err(|_| RpcError::Closed)
    }
}

/// One line of the trace: direction and the message, cut at 4 KiB.
fn write_trace(trace: Option<&Arc<Mutex<std::fs::File>>>, dir: &str, body: &str) {
    use std::io::Write;
    if let Some(f) = trace {
        let now = time::OffsetDateTime::now_utc();
        let _ = writeln!(
            lock(f),
            "{dir} {:02}:{:02}.{:03} {}",
            now.minute(),
            now.second(),
            now.millisecond(),
            crate::text::cut_line(body, 4096)
        );
    }
}

/// One framed message, or `None` at the end of the stream or on garbage
/// that cannot be framed.
async fn read_message<R: AsyncRead + Unpin>(reader: &mut BufReader<R>) -> Option<Value> {
    loop {
        let mut length: Option<usize> = None;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).await.ok()? == 0 {
                return None;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.trim().eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().ok();
            }
        }
        let length = length?;
        let mut body = vec![0u8; length];
        reader.read_exact(&mut body).await.ok()?;
        // A body that is not JSON is skipped; the framing still holds.
        if let Ok(v) = serde_json::from_slice(&body) {
            return Some(v);
        }
    }
}

fn dispatch(
    msg: Value,
    reply: &mpsc::UnboundedSender<Value>,
    pending: &Pending,
    on_notification: &impl Fn(&str, Value),
) {
    let method = msg.get("method").and_then(Value::as_str);
    let id = msg.get("id").cloned();
    match (method, id) {
        (None, Some(id)) => {
            let Some(id) = id.as_i64() else { return };
            let Some(tx) = lock(pending).remove(&id) else {
                return;
            };
            let result = match msg.get("error") {
                Some(e) => Err(RpcError::Server {
                    code: e.get("code").and_then(Value::as_i64).unwrap_or(0),
                    message: e
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                }),
                None => Ok(msg.get("result").cloned().unwrap_or(Value::Null)),
            };
            let _ = tx.send(result);
        }
        (Some(method), Some(id)) => {
            // The server asks us something.
            let answer = match method {
                "workspace/configuration" => {
                    let n = msg
                        .pointer("/params/items")
                        .and_then(Value::as_array)
                        .map_or(0, Vec::len);
                    json!({"jsonrpc": "2.0", "id": id, "result": vec![Value::Null; n]})
                }
                "window/workDoneProgress/create"
                | "client/registerCapability"
                | "client/unregisterCapability"
                | "workspace/diagnostic/refresh"
                | "window/showMessageRequest" => {
                    json!({"jsonrpc": "2.0", "id": id, "result": null})
                }
                _ => {
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("{method} is not supported")}})
                }
            };
            let _ = reply.send(answer);
            on_notification(method, msg.get("params").cloned().unwrap_or(Value::Null));
        }
        (Some(method), None) => {
            on_notification(method, msg.get("params").cloned().unwrap_or(Value::Null))
        }
        (None, None) => {}
    }
}

/// Framing for tests that play the server's side.
#[cfg(test)]
pub(crate) mod test_io {
    use super::*;

    pub async fn frame(w: &mut (impl AsyncWrite + Unpin), v: Value) {
        let body = v.to_string();
        w.write_all(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes())
            .await
            .unwrap();
    }

    pub async fn read(r: &mut BufReader<impl AsyncRead + Unpin>) -> Value {
        read_message(r).await.expect("a framed message")
    }
}

#[cfg(test)]
mod tests {
    use super::test_io::frame;
    use super::*;

    #[tokio::test]
    async fn requests_match_responses_and_server_requests_are_answered() {
        let (client_side, server_side) = tokio::io::duplex(1 << 16);
        let (cr, cw) = tokio::io::split(client_side);
        let (sr, mut sw) = tokio::io::split(server_side);
        let notes: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
        let n = Arc::clone(&notes);
        let t = Transport::start(cr, cw, None, move |m, p| {
            n.lock().unwrap().push((m.to_string(), p))
        });
        let mut sr = BufReader::new(sr);

        let req = tokio::spawn(async move {
            t.request("initialize", json!({}), Duration::from_secs(5))
                .await
                .map(|v| (v, t))
        });
        let asked = read_message(&mut sr).await.unwrap();
        assert_eq!(asked["method"], "initialize");
        // The server asks for configuration first and sends a notification.
        frame(&mut sw, json!({"jsonrpc": "2.0", "id": 99, "method": "workspace/configuration", "params": {"items": [{}, {}]}})).await;
        frame(
            &mut sw,
            json!({"jsonrpc": "2.0", "method": "window/logMessage", "params": {"message": "hi"}}),
        )
        .await;
        let answer = read_message(&mut sr).await.unwrap();
        assert_eq!(
            answer,
            json!({"jsonrpc": "2.0", "id": 99, "result": [null, null]})
        );
        frame(
            &mut sw,
            json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"capabilities": {}}}),
        )
        .await;
        let (result, t) = req.await.unwrap().unwrap();
        assert_eq!(result, json!({"capabilities": {}}));
        let seen: Vec<String> = notes.lock().unwrap().iter().map(|n| n.0.clone()).collect();
        assert_eq!(seen, ["workspace/configuration", "window/logMessage"]);

        // Errors, timeouts and a closed server.
        let slow = t
            .request(
                "textDocument/references",
                json!({}),
                Duration::from_millis(50),
            )
            .await;
        assert_eq!(
            slow,
            Err(RpcError::Timeout("textDocument/references".into()))
        );
        let _ = read_message(&mut sr).await.unwrap();
        let t = Arc::new(t);
        let t2 = Arc::clone(&t);
        let failing = tokio::spawn(async move {
            t2.request("shutdown", Value::Null, Duration::from_secs(5))
                .await
        });
        let asked = read_message(&mut sr).await.unwrap();
        frame(&mut sw, json!({"jsonrpc": "2.0", "id": asked["id"], "error": {"code": -32600, "message": "nope"}})).await;
        assert_eq!(
            failing.await.unwrap(),
            Err(RpcError::Server {
                code: -32600,
                message: "nope".into()
            })
        );
        let t3 = Arc::clone(&t);
        let orphan =
            tokio::spawn(async move { t3.request("x", Value::Null, Duration::from_secs(5)).await });
        let _ = read_message(&mut sr).await.unwrap();
        drop(sw);
        drop(sr);
        assert_eq!(orphan.await.unwrap(), Err(RpcError::Closed));
    }
}
