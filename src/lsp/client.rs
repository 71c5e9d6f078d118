//! One language server, spoken to in LSP, and what the agent knows of it:
//! the documents it has open (text hash, version, when sent), what it
//! published or answered for each, whether it is still loading, and which
//! file changes it asked to hear of. Every answer is checked for being
//! *current* — a publication for the version just sent, a pull answered
//! after the change and not while loading — never an older one passed off
//! as the state of the files now.

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
/// Documents kept open per server; the least recently used is closed.
pub const MAX_OPEN: usize = 64;
/// Other open documents pulled again after a change.
const PULLED_OTHERS: usize = 16;
/// LSP's "content modified" and "server cancelled": ask again.
const RETRY_CODES: [i64; 2] = [-32801, -32802];

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

/// Work whose results come as publications later (rust-analyzer's
/// `cargo check` after a save).
fn is_check(title: &str) -> bool {
    let t = title.to_lowercase();
    t.contains("check") || t.contains("flycheck")
}

impl State {
    fn note_progress(&mut self, token: String, title: Option<&str>) {
        match title {
            Some(title) => {
                if is_check(title) {
                    self.checks_begun += 1;
                    self.checking += 1;
                }
                self.progress.insert(token, title.to_string());
            }
            None => {
                if self.progress.remove(&token).is_some_and(|t| is_check(&t)) {
                    self.checking = self.checking.saturating_sub(1);
                }
            }
        }
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

/// How a server said what it registered to watch.
fn watch_rules(registration: &Value) -> Vec<WatchRule> {
    let Some(list) = registration
        .pointer("/registerOptions/watchers")
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|w| {
            let kinds = w.get("kind").and_then(Value::as_u64).unwrap_or(7) as u8;
            let (pattern, base) = match w.get("globPattern")? {
                Value::String(p) => (p.clone(), None),
                rel => {
                    let base = rel.get("baseUri").and_then(|b| match b {
                        Value::String(u) => path_of(u),
                        o => o.get("uri").and_then(Value::as_str).and_then(path_of),
                    })?;
                    (rel.get("pattern")?.as_str()?.to_string(), Some(base))
                }
            };
            let glob = globset::GlobBuilder::new(&pattern)
                .literal_separator(true)
                .build()
                .ok()?
                .compile_matcher();
            Some(WatchRule { glob, base, kinds })
        })
        .collect()
}

fn on_message(st: &mut State, method: &str, params: Value) {
    match method {
        "textDocument/publishDiagnostics" => {
            let Ok(p) = serde_json::from_value::<PublishDiagnosticsParams>(params) else {
                return;
            };
            st.seq += 1;
            let seq = st.seq;
            let uri = canonical(p.uri.as_str());
            if let Some(sent) = st.docs.get_mut(&uri).and_then(|d| d.sent_at.take()) {
                // Older samples fade, so one slow answer does not last.
                let sample = sent.elapsed();
                let old = st.latency.map_or(Duration::ZERO, |l| l.mul_f64(0.8));
                st.latency = Some(sample.max(old));
            }
            st.pushed.insert(
                uri,
                Published {
                    version: p.version,
                    diagnostics: p.diagnostics,
                    seq,
                },
            );
        }
        "$/progress" => {
            let token = params
                .get("token")
                .map(Value::to_string)
                .unwrap_or_default();
            match params.pointer("/value/kind").and_then(Value::as_str) {
                Some("begin") => {
                    let title = params
                        .pointer("/value/title")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    st.note_progress(token, Some(title));
                }
                Some("end") => st.note_progress(token, None),
                _ => {}
            }
        }
        "window/showMessage" => {
            if params.get("type").and_then(Value::as_u64) == Some(1)
                && let Some(m) = params.get("message").and_then(Value::as_str)
            {
                let m = m.split_whitespace().collect::<Vec<_>>().join(" ");
                st.last_error = Some(crate::text::cut_line(&m, 300));
            }
        }
        "experimental/serverStatus" => {
            st.busy = params.get("quiescent").and_then(Value::as_bool) == Some(false);
        }
        "workspace/diagnostic/refresh" => st.refreshes += 1,
        "client/registerCapability" => {
            for r in params
                .get("registrations")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if r["method"] == "workspace/didChangeWatchedFiles" {
                    let id = r["id"].as_str().unwrap_or_default().to_string();
                    st.watchers.insert(id, watch_rules(r));
                }
            }
        }
        "client/unregisterCapability" => {
            for r in params
                .get("unregisterations")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(id) = r["id"].as_str() {
                    st.watchers.remove(id);
                }
            }
        }
        _ => {}
    }
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

    /// After a save: a check the server starts (within `settle`) is waited
    /// for until it ends, or `deadline`; its publications then count.
    /// True when one is still running at the deadline.
    /// Only a server that has run a check before is waited for: others
    /// (most servers) cost nothing here.
    pub async fn until_checked(
        &self,
        begun_before: u64,
        settle: Duration,
        deadline: Instant,
    ) -> bool {
        if lock(&self.state).checks_begun == 0 {
            return false;
        }
        let started = Instant::now();
        loop {
            let notified = self.arrived.notified();
            let (begun, running) = {
                let st = lock(&self.state);
                (st.checks_begun > begun_before, st.checking > 0)
            };
            if begun && !running {
                return false;
            }
            let now = Instant::now();
            if now >= deadline {
                return running;
            }
            let wait = if begun || running {
                deadline - now
            } else if now.duration_since(started) >= settle {
                return false;
            } else {
                (started + settle - now).min(deadline - now)
            };
            let _ = tokio::time::timeout(wait, notified).await;
        }
    }

    /// How many checks have begun so far.
    pub fn checks_begun(&self) -> u64 {
        lock(&self.state).checks_begun
    }

    /// Waits until the server is done loading, or `deadline`.
    pub async fn until_loaded(&self, deadline: Instant) {
        loop {
            let notified = self.arrived.notified();
            if self.loading().is_none() {
                return;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || tokio::time::timeout(left, notified).await.is_err() {
                return;
            }
        }
    }

    /// Diagnostics for what `sent` sent, by `deadline`: pulled from a
    /// server that answers requests (asked again when it says the content
    /// changed, when it asks to be asked again, or while it is loading);
    /// otherwise a publication for that version (or, from a server that
    /// sends no versions, the first one after it), once publications have
    /// been quiet for `settle`.
    pub async fn diagnostics_after(
        &self,
        sent: &Sent,
        settle: Duration,
        deadline: Instant,
    ) -> Answer {
        if self.pull {
            return self.pull_until(&sent.uri, deadline).await;
        }
        if sent.unchanged
            && let Some(d) = self.report_of(&lock(&self.state), &sent.uri)
        {
            // Nothing changed: the current report is the answer.
            return Answer::Current(d);
        }
        let started = Instant::now();
        // How long silence must last to mean "still clean": twice what
        // the server takes to answer a change (1 s until that is known).
        let quiet = lock(&self.state)
            .latency
            .map_or(Duration::from_secs(1), |l| l * 2)
            .min(Duration::from_secs(2))
            .max(settle);
        let mut current: Option<Vec<Diagnostic>> = None;
        loop {
            let notified = self.arrived.notified();
            let loading = {
                let st = lock(&self.state);
                if let Some(p) = st.pushed.get(&sent.uri)
                    && st.current(&sent.uri, p)
                    && (p.version.is_some() || p.seq > sent.seq)
                {
                    current = Some(p.diagnostics.clone());
                }
                st.loading()
            };
            let now = Instant::now();
            if now >= deadline {
                return match (current, loading) {
                    (_, Some(l)) => Answer::Loading(l),
                    (Some(d), None) => Answer::Current(d),
                    (None, None) => Answer::Missing,
                };
            }
            // A server that skips republishing a clean document: silence
            // for the settle time after a clean report is "still clean".
            let quiet_clean = current.is_none()
                && loading.is_none()
                && self.quiet_when_clean
                && sent.was_clean
                && now.duration_since(started) >= quiet;
            if quiet_clean {
                return Answer::Current(Vec::new());
            }
            let wait = if current.is_some() {
                settle
            } else if self.quiet_when_clean && sent.was_clean {
                (started + quiet)
                    .saturating_duration_since(now)
                    .max(Duration::from_millis(1))
            } else {
                deadline - now
            };
            let wait = wait.min(deadline - now);
            if tokio::time::timeout(wait, notified).await.is_err()
                && loading.is_none()
                && let Some(d) = current.take()
            {
                // Quiet for the settle time: that is the answer.
                return Answer::Current(d);
            }
        }
    }

    /// Asks for a document's diagnostics until the answer is one to trust.
    async fn pull_until(&self, uri: &str, deadline: Instant) -> Answer {
        loop {
            let notified = self.arrived.notified();
            let (loading, refreshes, version) = {
                let st = lock(&self.state);
                (
                    st.loading(),
                    st.refreshes,
                    st.docs.get(uri).map(|d| d.version),
                )
            };
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return loading.map_or(Answer::Missing, Answer::Loading);
            }
            if loading.is_some() {
                // Its answer now would be "clean" for want of knowing.
                let _ = tokio::time::timeout(left, notified).await;
                continue;
            }
            let asked = self
                .transport
                .request(
                    "textDocument/diagnostic",
                    json!({"textDocument": {"uri": uri}}),
                    left,
                )
                .await;
            match asked {
                Ok(report) => {
                    let mut st = lock(&self.state);
                    if st.loading().is_some() || st.refreshes != refreshes {
                        continue;
                    }
                    let items = report
                        .get("items")
                        .cloned()
                        .and_then(|i| serde_json::from_value::<Vec<Diagnostic>>(i).ok())
                        .unwrap_or_default();
                    // Kept like a publication for the version asked about.
                    st.seq += 1;
                    let seq = st.seq;
                    st.pulled.insert(
                        uri.to_string(),
                        Published {
                            version,
                            diagnostics: items,
                            seq,
                        },
                    );
                    return Answer::Current(self.report_of(&st, uri).unwrap_or_default());
                }
                Err(RpcError::Server { code, .. }) if RETRY_CODES.contains(&code) => {
                    let pause = Duration::from_millis(100)
                        .min(deadline.saturating_duration_since(Instant::now()));
                    tokio::time::sleep(pause).await;
                }
                Err(_) => return Answer::Missing,
            }
        }
    }

    /// After a change: pull servers are asked again for the other open
    /// documents (what the change broke elsewhere); push servers publish
    /// them on their own. Waits at most until `deadline`.
    pub async fn refresh_others(&self, except: &str, deadline: Instant) {
        if !self.pull {
            return;
        }
        // The most recently used ones: a change rarely breaks more than
        // the files being worked on, and each pull costs the server.
        let mut others: Vec<(u64, String)> = lock(&self.state)
            .docs
            .iter()
            .filter(|(u, _)| *u != except)
            .map(|(u, d)| (d.used, u.clone()))
            .collect();
        others.sort_by_key(|o| std::cmp::Reverse(o.0));
        let others: Vec<String> = others
            .into_iter()
            .take(PULLED_OTHERS)
            .map(|(_, u)| u)
            .collect();
        let asks = others.iter().map(|u| self.pull_until(u, deadline));
        futures_util::future::join_all(asks).await;
    }

    /// Waits until every open document has a current report and
    /// publications have been quiet for `settle`, or `deadline`.
    pub async fn settle_all(&self, settle: Duration, deadline: Instant) {
        if self.pull {
            self.refresh_others("", deadline).await;
            return;
        }
        loop {
            let notified = self.arrived.notified();
            let pending = {
                let st = lock(&self.state);
                // A document sent and not yet published for; but a quiet
                // server's clean document may stay unpublished.
                st.loading().is_some()
                    || st.docs.iter().any(|(u, d)| {
                        let quiet_clean = self.quiet_when_clean
                            && st.pushed.get(u).is_some_and(|p| p.diagnostics.is_empty());
                        d.sent_at.is_some() && !quiet_clean
                    })
            };
            let left = deadline.saturating_duration_since(Instant::now());
            let wait = if pending { left } else { settle.min(left) };
            if wait.is_zero() || (tokio::time::timeout(wait, notified).await.is_err() && !pending) {
                return;
            }
        }
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

#[cfg(test)]
mod tests {
    use tokio::io::BufReader;

    use super::*;

    use super::super::transport::test_io::{frame, read};

    fn messages(a: &Answer) -> Vec<String> {
        match a {
            Answer::Current(d) => d.iter().map(|d| d.message.clone()).collect(),
            other => panic!("no current answer: {other:?}"),
        }
    }

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
            let options = Options {
                name: "t".into(),
                init_options: Value::Null,
                timeout: Duration::from_secs(5),
                quiet_when_clean: false,
                trace: None,
            };
            Client::connect(cr, cw, Path::new("/w"), options).await
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
        frame(&mut sw, json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": "file:///w/a.py", "version": 1, "diagnostics": [diag("old")]}})).await;
        let got = client
            .diagnostics_after(
                &first,
                Duration::from_millis(50),
                Instant::now() + Duration::from_secs(2),
            )
            .await;
        assert_eq!(messages(&got), ["old"]);

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
                Instant::now() + Duration::from_millis(300),
            )
            .await;
        assert_eq!(
            waiting,
            Answer::Missing,
            "a stale publication was taken for the new version"
        );
        frame(&mut sw, json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": "file:///w/a.py", "version": 2, "diagnostics": [diag("new")]}})).await;
        let got = client
            .diagnostics_after(
                &second,
                Duration::from_millis(50),
                Instant::now() + Duration::from_secs(2),
            )
            .await;
        assert_eq!(messages(&got), ["new"]);
    }

    #[tokio::test]
    async fn servers_without_versions_count_from_the_change() {
        let (client, mut sr, mut sw) = setup().await;
        let path = Path::new("/w/b.py");
        frame(&mut sw, json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": "file:///w/b.py", "diagnostics": [diag("before")]}})).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        let sent = client.sync(path, "python", "y\n").unwrap();
        assert_eq!(read(&mut sr).await["method"], "textDocument/didOpen");
        assert_eq!(
            client
                .diagnostics_after(
                    &sent,
                    Duration::from_millis(50),
                    Instant::now() + Duration::from_millis(200)
                )
                .await,
            Answer::Missing
        );
        frame(&mut sw, json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": "file:///w/b.py", "diagnostics": []}})).await;
        frame(&mut sw, json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": "file:///w/b.py", "diagnostics": [diag("after")]}})).await;
        let got = client
            .diagnostics_after(
                &sent,
                Duration::from_millis(100),
                Instant::now() + Duration::from_secs(2),
            )
            .await;
        assert_eq!(
            messages(&got),
            ["after"],
            "the settled (last) publication wins"
        );
    }
}
