//! One language server, spoken to in LSP: `initialize`, documents opened
//! and changed with full text and increasing versions, and diagnostics
//! waited for *for the version just sent* — never an older publication
//! passed off as current.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use lsp_types::{Diagnostic, PublishDiagnosticsParams};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Notify;

use super::transport::{RpcError, Transport};

/// Requests other than `initialize` get this long.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone)]
pub struct Published {
    /// The document version the server says these belong to, if it says.
    pub version: Option<i32>,
    pub diagnostics: Vec<Diagnostic>,
    /// Order of arrival, across all documents.
    pub seq: u64,
}

#[derive(Default)]
struct Store {
    by_uri: HashMap<String, Published>,
    seq: u64,
}

pub struct Client {
    transport: Transport,
    /// The server answers `textDocument/diagnostic` (pull diagnostics).
    pull: bool,
    store: Arc<Mutex<Store>>,
    arrived: Arc<Notify>,
    versions: Mutex<HashMap<String, i32>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Plain maps behind these locks stay consistent after a panic.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The `file://` URI of an absolute path, percent-encoded as servers
/// expect (a space is `%20`).
pub fn uri(path: &Path) -> String {
    match reqwest::Url::from_file_path(path) {
        Ok(u) => u.to_string(),
        Err(()) => format!("file://{}", path.display()),
    }
}

/// A server's URI in the form [`uri`] writes, so that lookups by URI
/// match however the server spelled it (`%3A` or `:`, `%7E` or `~`).
fn canonical(u: &str) -> String {
    path_of(u).map_or_else(|| u.to_string(), |p| uri(&p))
}

/// What a change waits for: which document, which version, and where the
/// publication counter stood when it was sent.
#[derive(Debug, Clone)]
pub struct Sent {
    pub uri: String,
    pub version: i32,
    pub seq: u64,
}

impl Client {
    /// Speaks LSP over `reader`/`writer` and initialises the server for `root`.
    pub async fn connect<R, W>(
        reader: R,
        writer: W,
        root: &Path,
        init_options: Value,
        timeout: Duration,
    ) -> Result<Client, RpcError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let store: Arc<Mutex<Store>> = Arc::default();
        let arrived = Arc::new(Notify::new());
        let (s, a) = (Arc::clone(&store), Arc::clone(&arrived));
        let transport = Transport::start(reader, writer, move |method, params| {
            if method != "textDocument/publishDiagnostics" {
                return;
            }
            let Ok(p) = serde_json::from_value::<PublishDiagnosticsParams>(params) else {
                return;
            };
            let mut st = lock(&s);
            st.seq += 1;
            let seq = st.seq;
            st.by_uri.insert(
                canonical(p.uri.as_str()),
                Published {
                    version: p.version,
                    diagnostics: p.diagnostics,
                    seq,
                },
            );
            drop(st);
            a.notify_waiters();
        });
        let root_uri = uri(root);
        let params = json!({
            "processId": std::process::id(),
            "rootUri": root_uri,
            "workspaceFolders": [{"uri": root_uri, "name": root.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default()}],
            "initializationOptions": init_options,
            "capabilities": {
                "textDocument": {
                    "publishDiagnostics": {"versionSupport": true, "relatedInformation": false},
                    "synchronization": {"didSave": true, "dynamicRegistration": false},
                    "references": {},
                    "diagnostic": {"dynamicRegistration": false, "relatedDocumentSupport": false},
                },
                "workspace": {"configuration": true, "workspaceFolders": true, "didChangeWatchedFiles": {"dynamicRegistration": true}},
                "window": {"workDoneProgress": true},
            },
        });
        let init = transport.request("initialize", params, timeout).await?;
        let pull = init
            .pointer("/capabilities/diagnosticProvider")
            .is_some_and(|d| !d.is_null());
        transport.notify("initialized", json!({}))?;
        Ok(Client {
            transport,
            pull,
            store,
            arrived,
            versions: Mutex::default(),
        })
    }

    /// Sends the document's full text: `didOpen` the first time, then
    /// `didChange` with the next version; then `didSave`.
    pub fn sync(&self, path: &Path, language_id: &str, text: &str) -> Result<Sent, RpcError> {
        let uri = uri(path);
        let seq = lock(&self.store).seq;
        let version = {
            let mut v = lock(&self.versions);
            let next = v.get(&uri).map_or(1, |n| n + 1);
            v.insert(uri.clone(), next);
            next
        };
        if version == 1 {
            self.transport.notify(
                "textDocument/didOpen",
                json!({"textDocument": {"uri": uri, "languageId": language_id, "version": version, "text": text}}),
            )?;
        } else {
            self.transport.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
            )?;
        }
        self.transport.notify(
            "textDocument/didSave",
            json!({"textDocument": {"uri": uri}}),
        )?;
        Ok(Sent { uri, version, seq })
    }

    /// Diagnostics for what `sent` sent: a publication for that version (or,
    /// from a server that sends no versions, the first one after it), once
    /// publications have been quiet for `settle`; `None` if none came
    /// within `cap`.
    pub async fn diagnostics_after(
        &self,
        sent: &Sent,
        settle: Duration,
        cap: Duration,
    ) -> Option<Vec<Diagnostic>> {
        // A server with pull diagnostics answers for the text it has now,
        // which is the text just sent.
        if self.pull
            && let Ok(report) = self
                .transport
                .request(
                    "textDocument/diagnostic",
                    json!({"textDocument": {"uri": sent.uri}}),
                    cap,
                )
                .await
            && let Some(items) = report.get("items")
            && let Ok(diags) = serde_json::from_value::<Vec<Diagnostic>>(items.clone())
        {
            // Kept like a publication, so the `diagnostics` tool sees it too.
            let mut st = lock(&self.store);
            st.seq += 1;
            let seq = st.seq;
            st.by_uri.insert(
                sent.uri.clone(),
                Published {
                    version: Some(sent.version),
                    diagnostics: diags.clone(),
                    seq,
                },
            );
            return Some(diags);
        }
        let deadline = Instant::now() + cap;
        let mut current: Option<Published> = None;
        loop {
            let notified = self.arrived.notified();
            if let Some(p) = lock(&self.store).by_uri.get(&sent.uri).cloned() {
                let fresh = match p.version {
                    Some(v) => v == sent.version,
                    None => p.seq > sent.seq,
                };
                if fresh {
                    current = Some(p);
                }
            }
            let wait = if current.is_some() {
                settle
            } else {
                deadline.saturating_duration_since(Instant::now())
            };
            let wait = wait.min(deadline.saturating_duration_since(Instant::now()));
            if wait.is_zero() {
                return current.map(|p| p.diagnostics);
            }
            if tokio::time::timeout(wait, notified).await.is_err() && current.is_some() {
                // Quiet for the settle time: that is the answer.
                return current.map(|p| p.diagnostics);
            }
        }
    }

    /// `workspace/didChangeWatchedFiles`.
    pub fn watched(&self, changes: &[(PathBuf, super::watch::Change)]) {
        let list: Vec<Value> = changes
            .iter()
            .map(|(p, c)| json!({"uri": uri(p), "type": *c as u8}))
            .collect();
        let _ = self
            .transport
            .notify("workspace/didChangeWatchedFiles", json!({"changes": list}));
    }

    /// The latest publication for every document.
    pub fn all_diagnostics(&self) -> Vec<(String, Vec<Diagnostic>)> {
        let st = lock(&self.store);
        let mut all: Vec<(String, Vec<Diagnostic>)> = st
            .by_uri
            .iter()
            .map(|(u, p)| (u.clone(), p.diagnostics.clone()))
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }

    pub async fn shutdown(&self) {
        let _ = self
            .transport
            .request("shutdown", Value::Null, REQUEST_TIMEOUT)
            .await;
        let _ = self.transport.notify("exit", Value::Null);
    }

    /// Where a symbol of that name is defined (`workspace/symbol`): the
    /// first exact match's file and 0-based position.
    pub async fn find_symbol(&self, name: &str) -> Result<Option<(PathBuf, u32, u32)>, RpcError> {
        let found = self
            .transport
            .request("workspace/symbol", json!({"query": name}), REQUEST_TIMEOUT)
            .await?;
        let list = found.as_array().cloned().unwrap_or_default();
        let best = list.iter().find(|s| s["name"] == name).or(list.first());
        Ok(best.and_then(|s| {
            let uri = s.pointer("/location/uri")?.as_str()?;
            let line = s.pointer("/location/range/start/line")?.as_u64()? as u32;
            let col = s.pointer("/location/range/start/character")?.as_u64()? as u32;
            Some((path_of(uri)?, line, col))
        }))
    }

    /// Locations referring to the symbol at `line`/`column` (0-based).
    pub async fn references(&self, path: &Path, line: u32, column: u32) -> Result<Value, RpcError> {
        self.transport
            .request(
                "textDocument/references",
                json!({"textDocument": {"uri": uri(path)}, "position": {"line": line, "character": column}, "context": {"includeDeclaration": true}}),
                REQUEST_TIMEOUT,
            )
            .await
    }
}

/// The path of a `file://` URI, percent-decoded.
pub fn path_of(uri: &str) -> Option<PathBuf> {
    reqwest::Url::parse(uri).ok()?.to_file_path().ok()
}

#[cfg(test)]
mod tests {
    use tokio::io::BufReader;

    use super::*;

    use super::super::transport::test_io::{frame, read};

    fn diag(msg: &str) -> Value {
        json!({"range": {"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 5}}, "severity": 1, "message": msg})
    }

    /// A scripted server over an in-memory pipe.
    async fn setup() -> (
        Client,
        BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
        tokio::io::WriteHalf<tokio::io::DuplexStream>,
    ) {
        let (c, s) = tokio::io::duplex(1 << 16);
        let (cr, cw) = tokio::io::split(c);
        let (sr, mut sw) = tokio::io::split(s);
        let mut sr = BufReader::new(sr);
        let connecting = tokio::spawn(async move {
            Client::connect(cr, cw, Path::new("/w"), Value::Null, Duration::from_secs(5)).await
        });
        let init = read(&mut sr).await;
        assert_eq!(init["method"], "initialize");
        assert_eq!(
            init["params"]["capabilities"]["textDocument"]["publishDiagnostics"]["versionSupport"],
            true
        );
        frame(
            &mut sw,
            json!({"jsonrpc": "2.0", "id": init["id"], "result": {"capabilities": {}}}),
        )
        .await;
        let client = connecting.await.unwrap().unwrap();
        assert_eq!(read(&mut sr).await["method"], "initialized");
        (client, sr, sw)
    }

    #[tokio::test]
    async fn stale_publications_are_never_reported_as_current() {
        let (client, mut sr, mut sw) = setup().await;
        let path = Path::new("/w/a.py");
        let first = client.sync(path, "python", "x = 1\n").unwrap();
        assert_eq!(read(&mut sr).await["method"], "textDocument/didOpen");
        assert_eq!(read(&mut sr).await["method"], "textDocument/didSave");
        frame(&mut sw, json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": "file:///w/a.py", "version": 1, "diagnostics": [diag("old")]}})).await;
        let got = client
            .diagnostics_after(&first, Duration::from_millis(50), Duration::from_secs(2))
            .await
            .unwrap();
        assert_eq!(got[0].message, "old");

        // Version 2 sent; the server republishes version 1 late, then 2.
        let second = client.sync(path, "python", "x = \n").unwrap();
        let change = read(&mut sr).await;
        assert_eq!(change["params"]["textDocument"]["version"], 2);
        read(&mut sr).await;
        frame(&mut sw, json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": "file:///w/a.py", "version": 1, "diagnostics": [diag("stale")]}})).await;
        let waiting = client
            .diagnostics_after(
                &second,
                Duration::from_millis(50),
                Duration::from_millis(300),
            )
            .await;
        assert_eq!(
            waiting, None,
            "a stale publication was taken for the new version"
        );
        frame(&mut sw, json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": "file:///w/a.py", "version": 2, "diagnostics": [diag("new")]}})).await;
        let got = client
            .diagnostics_after(&second, Duration::from_millis(50), Duration::from_secs(2))
            .await
            .unwrap();
        assert_eq!(got[0].message, "new");
    }

    #[tokio::test]
    async fn servers_without_versions_count_from_the_change() {
        let (client, mut sr, mut sw) = setup().await;
        let path = Path::new("/w/b.py");
        frame(&mut sw, json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": "file:///w/b.py", "diagnostics": [diag("before")]}})).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        let sent = client.sync(path, "python", "y\n").unwrap();
        read(&mut sr).await;
        read(&mut sr).await;
        assert_eq!(
            client
                .diagnostics_after(&sent, Duration::from_millis(50), Duration::from_millis(200))
                .await,
            None
        );
        frame(&mut sw, json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": "file:///w/b.py", "diagnostics": []}})).await;
        frame(&mut sw, json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": "file:///w/b.py", "diagnostics": [diag("after")]}})).await;
        let got = client
            .diagnostics_after(&sent, Duration::from_millis(100), Duration::from_secs(2))
            .await
            .unwrap();
        assert_eq!(got.len(), 1, "the settled (last) publication wins");
        assert_eq!(got[0].message, "after");
    }
}
