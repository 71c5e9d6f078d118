//! One language server, spoken to in LSP, and what the agent knows of it:
//! the documents it has open (text hash, version, when sent), what it
//! published or answered for each, whether it is still loading, and which
//! file changes it asked to hear of. Every answer is checked for being
//! *current* — a publication for the version just sent, a pull answered
//! after the change and not while loading — never an older one passed off
//! as the state of the files now.
//!
//! `incoming` takes in what the server sends on its own; `wait` waits for
//! answers that are current.

mod incoming;
#[cfg(test)]
mod tests;
mod wait;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use lsp_types::Diagnostic;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Notify;

use super::transport::{RpcError, Transport};
use incoming::on_message;

/// Requests other than `initialize` get this long.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Documents kept open per server; the least recently used is closed.
pub const MAX_OPEN: usize = 64;

#[derive(Debug, Clone)]
pub struct Published {
    /// The document version the server says these belong to, if it says.
    pub version: Option<i32>,
    pub diagnostics: Vec<Diagnostic>,
    /// Order of arrival, across all documents.
    pub seq: u64,
}

/// A document the server has open, as last sent.
#[derive(Debug, Clone)]
struct Doc {
    version: i32,
    hash: u64,
    /// The publication counter when this version was sent.
    seq: u64,
    /// For closing the least recently used.
    used: u64,
    /// When this version was sent, until the first publication for it:
    /// how long the server takes to answer is learned from it.
    sent_at: Option<Instant>,
}

/// One `workspace/didChangeWatchedFiles` watcher the server registered.
struct WatchRule {
    glob: globset::GlobMatcher,
    /// A relative pattern's base; absolute patterns have none.
    base: Option<PathBuf>,
    /// Bits: 1 created, 2 changed, 4 deleted.
    kinds: u8,
}

#[derive(Default)]
struct State {
    seq: u64,
    pushed: HashMap<String, Published>,
    pulled: HashMap<String, Published>,
    docs: HashMap<String, Doc>,
    tick: u64,
    /// The publication counter at the last change of the project sent to
    /// the server: a report from before it may be out of date.
    changed: u64,
    /// Work in progress (`$/progress` begun, not ended): token → title.
    progress: HashMap<String, String>,
    /// rust-analyzer's `experimental/serverStatus`: not quiescent.
    busy: bool,
    /// `workspace/diagnostic/refresh` requests received.
    refreshes: u64,
    watchers: HashMap<String, Vec<WatchRule>>,
    /// The longest recent wait between a change and its publication.
    latency: Option<Duration>,
    /// The last error the server showed the person (`window/showMessage`).
    last_error: Option<String>,
    /// Checks begun (`cargo check`), counted, and how many are running.
    checks_begun: u64,
    checking: usize,
}

impl State {
    /// Whether `p` describes `uri` as the server has it now.
    fn current(&self, uri: &str, p: &Published) -> bool {
        match self.docs.get(uri) {
            Some(doc) => match p.version {
                Some(v) => v == doc.version,
                None => p.seq > doc.seq,
            },
            None => true,
        }
    }

    /// What the server is still loading, if anything (titles of work that
    /// makes its answers incomplete).
    fn loading(&self) -> Option<String> {
        if self.busy {
            return Some("loading the project".into());
        }
        const LOADING: [&str; 8] = [
            "index",
            "load",
            "fetch",
            "roots",
            "metadata",
            "build",
            "initializ",
            "setting up",
        ];
        self.progress
            .values()
            .find(|t| {
                let t = t.to_lowercase();
                LOADING.iter().any(|w| t.contains(w))
            })
            .map(|t| format!("busy with \"{t}\""))
    }
}

pub struct Client {
    name: String,
    /// The project root the server was started for.
    root: PathBuf,
    transport: Transport,
    /// The server answers `textDocument/diagnostic` (pull diagnostics).
    pull: bool,
    /// The server sends no new publication when a document stays clean.
    quiet_when_clean: bool,
    state: Arc<Mutex<State>>,
    /// Something arrived: a publication, progress, a refresh.
    arrived: Arc<Notify>,
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

fn hash(text: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(text.as_bytes())
}

/// What a change waits for: which document, which version, and where the
/// publication counter stood when it was sent.
#[derive(Debug, Clone)]
pub struct Sent {
    pub uri: String,
    pub version: i32,
    pub seq: u64,
    /// The text is what the server had already: nothing was sent.
    pub unchanged: bool,
    /// The document's last current report was empty.
    pub was_clean: bool,
}

/// The answer for one document.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Current(Vec<Diagnostic>),
    /// The server is still loading; what it would say now is not the truth.
    Loading(String),
    /// Nothing current arrived in time.
    Missing,
}

/// How a server is spoken to, besides its pipes.
pub struct Options {
    pub name: String,
    pub init_options: Value,
    pub timeout: Duration,
    pub quiet_when_clean: bool,
    pub trace: Option<std::fs::File>,
}

impl Client {
    /// Speaks LSP over `reader`/`writer` and initialises the server for `root`.
    pub async fn connect<R, W>(
        reader: R,
        writer: W,
        root: &Path,
        options: Options,
    ) -> Result<Client, RpcError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let state: Arc<Mutex<State>> = Arc::default();
        let arrived = Arc::new(Notify::new());
        let (s, a) = (Arc::clone(&state), Arc::clone(&arrived));
        let transport = Transport::start(reader, writer, options.trace, move |method, params| {
            on_message(&mut lock(&s), method, params);
            a.notify_waiters();
        });
        let root_uri = uri(root);
        let params = json!({
            // Not our pid: the server runs in a PID namespace of its own,
            // where that number is nobody (or someone else), and servers
            // that watch it exit. Its keeper ends it with the agent instead.
            "processId": Value::Null,
            "rootUri": root_uri,
            "rootPath": root.display().to_string(),
            "workspaceFolders": [{"uri": root_uri, "name": root.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default()}],
            "initializationOptions": options.init_options,
            "capabilities": {
                "textDocument": {
                    "publishDiagnostics": {"versionSupport": true, "relatedInformation": true},
                    "synchronization": {"didSave": true, "dynamicRegistration": false},
                    "references": {},
                    "diagnostic": {"dynamicRegistration": false, "relatedDocumentSupport": false},
                },
                "workspace": {
                    "configuration": true,
                    "workspaceFolders": true,
                    "didChangeWatchedFiles": {"dynamicRegistration": true, "relativePatternSupport": true},
                    "diagnostics": {"refreshSupport": true},
                },
                "window": {"workDoneProgress": true},
                "experimental": {"serverStatusNotification": true},
            },
        });
        let init = transport
            .request("initialize", params, options.timeout)
            .await?;
        let pull = init
            .pointer("/capabilities/diagnosticProvider")
            .is_some_and(|d| !d.is_null());
        transport.notify("initialized", json!({}))?;
        Ok(Client {
            name: options.name,
            root: root.to_path_buf(),
            transport,
            pull,
            quiet_when_clean: options.quiet_when_clean,
            state,
            arrived,
        })
    }

    /// Sends the document's full text if the server does not have it:
    /// `didOpen` the first time, then `didChange` with the next version
    /// and `didSave`. Text the server already has is not sent again.
    pub fn sync(&self, path: &Path, language_id: &str, text: &str) -> Result<Sent, RpcError> {
        let uri = uri(path);
        let h = hash(text);
        let mut st = lock(&self.state);
        st.tick += 1;
        let tick = st.tick;
        // What the server last said of it, whichever version: a server
        // that skips clean republications compares with that.
        let was_clean = st
            .pushed
            .get(&uri)
            .is_some_and(|p| p.diagnostics.is_empty());
        if let Some(doc) = st.docs.get_mut(&uri) {
            doc.used = tick;
            if doc.hash == h {
                return Ok(Sent {
                    uri,
                    version: doc.version,
                    seq: doc.seq,
                    unchanged: true,
                    was_clean,
                });
            }
        }
        let seq = st.seq;
        let opened = !st.docs.contains_key(&uri);
        let version = st.docs.get(&uri).map_or(1, |d| d.version + 1);
        st.docs.insert(
            uri.clone(),
            Doc {
                version,
                hash: h,
                seq,
                used: tick,
                sent_at: Some(Instant::now()),
            },
        );
        if opened {
            self.transport.notify(
                "textDocument/didOpen",
                json!({"textDocument": {"uri": uri, "languageId": language_id, "version": version, "text": text}}),
            )?;
        } else {
            // New text: what the server said of other files may change.
            st.changed = seq;
            self.transport.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
            )?;
            self.transport.notify(
                "textDocument/didSave",
                json!({"textDocument": {"uri": uri}}),
            )?;
        }
        // Bounded: the least recently used document is closed.
        if st.docs.len() > MAX_OPEN
            && let Some(old) = st
                .docs
                .iter()
                .filter(|(u, _)| **u != uri)
                .min_by_key(|(_, d)| d.used)
                .map(|(u, _)| u.clone())
        {
            self.close_locked(&mut st, &old);
        }
        Ok(Sent {
            uri,
            version,
            seq,
            unchanged: false,
            was_clean,
        })
    }

    /// Brings an open document in line with the disk: its new text, or
    /// `didClose` (and its reports dropped) when the file is gone. Files
    /// the server does not have open lose their reports when they changed.
    /// True when something was sent.
    pub fn resync(&self, path: &Path, language_id: &str) -> bool {
        let u = uri(path);
        let open = lock(&self.state).docs.contains_key(&u);
        if !open {
            let mut st = lock(&self.state);
            st.pushed.remove(&u);
            st.pulled.remove(&u);
            return false;
        }
        match std::fs::read_to_string(path) {
            Ok(text) => self
                .sync(path, language_id, &text)
                .is_ok_and(|s| !s.unchanged),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut st = lock(&self.state);
                self.close_locked(&mut st, &u);
                true
            }
            // Unreadable now (a partial write, say): the next change tells.
            Err(_) => false,
        }
    }

    fn close_locked(&self, st: &mut State, uri: &str) {
        st.docs.remove(uri);
        st.pushed.remove(uri);
        st.pulled.remove(uri);
        st.changed = st.seq;
        let _ = self.transport.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri}}),
        );
    }

    /// The open documents, as paths.
    pub fn open_paths(&self) -> Vec<PathBuf> {
        lock(&self.state)
            .docs
            .keys()
            .filter_map(|u| path_of(u))
            .collect()
    }

    /// The current report for a document: pulled and pushed together.
    fn report_of(&self, st: &State, uri: &str) -> Option<Vec<Diagnostic>> {
        let pulled = st.pulled.get(uri).filter(|p| st.current(uri, p));
        let pushed = st.pushed.get(uri).filter(|p| st.current(uri, p));
        match (pulled, pushed) {
            (None, None) => None,
            (a, b) => {
                let mut all: Vec<Diagnostic> = Vec::new();
                for d in a.into_iter().chain(b).flat_map(|p| &p.diagnostics) {
                    if !all
                        .iter()
                        .any(|x| x.range == d.range && x.message == d.message)
                    {
                        all.push(d.clone());
                    }
                }
                Some(all)
            }
        }
    }

    /// What the server is still loading, if anything.
    pub fn loading(&self) -> Option<String> {
        lock(&self.state).loading()
    }

    /// The last error the server showed, if any.
    pub fn last_error(&self) -> Option<String> {
        lock(&self.state).last_error.clone()
    }

    /// Reports that are current and arrived after `since` (the publication
    /// counter when a change was sent): each document's as the server has
    /// it now, and not from before the change.
    pub fn reports_since(&self, since: u64) -> Vec<(String, Vec<Diagnostic>)> {
        let st = lock(&self.state);
        let mut uris: Vec<&String> = st.pushed.keys().chain(st.pulled.keys()).collect();
        uris.sort();
        uris.dedup();
        uris.into_iter()
            .filter(|u| {
                st.pushed
                    .get(*u)
                    .into_iter()
                    .chain(st.pulled.get(*u))
                    .any(|p| st.current(u, p) && p.seq > since)
            })
            .filter_map(|u| Some((u.clone(), self.report_of(&st, u)?)))
            .collect()
    }

    /// Reports kept from before the last change (possibly out of date):
    /// how many documents have some.
    pub fn older_reports(&self) -> usize {
        let st = lock(&self.state);
        st.pushed
            .iter()
            .chain(st.pulled.iter())
            .filter(|(u, p)| {
                let fresh = st.current(u, p) && p.seq > st.changed;
                !(p.diagnostics.is_empty() || fresh)
            })
            .count()
    }

    /// The publication counter at the last change sent.
    pub fn changed(&self) -> u64 {
        lock(&self.state).changed
    }

    /// `workspace/didChangeWatchedFiles`, with only the changes the server
    /// registered for. True when something was sent.
    pub fn watched(&self, changes: &[(PathBuf, super::watch::Change)]) -> bool {
        let mut st = lock(&self.state);
        let list: Vec<Value> = changes
            .iter()
            .filter(|(p, c)| {
                let bit = 1u8 << (*c as u8 - 1);
                st.watchers.values().flatten().any(|w| {
                    w.kinds & bit != 0
                        && match &w.base {
                            Some(b) => p.strip_prefix(b).is_ok_and(|r| w.glob.is_match(r)),
                            // A relative pattern (`**/*.rs`) is of paths in the project.
                            None => {
                                w.glob.is_match(p)
                                    || p.strip_prefix(&self.root).is_ok_and(|r| w.glob.is_match(r))
                            }
                        }
                })
            })
            .map(|(p, c)| json!({"uri": uri(p), "type": *c as u8}))
            .collect();
        if list.is_empty() {
            return false;
        }
        st.changed = st.seq;
        drop(st);
        self.transport
            .notify("workspace/didChangeWatchedFiles", json!({"changes": list}))
            .is_ok()
    }

    pub fn name(&self) -> &str {
        &self.name
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
