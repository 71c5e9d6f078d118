//! The running language servers: one per (server, root), started lazily on
//! the first file of a matching type, restarted with backoff when they
//! crash and marked failed (with the reason) after a few failures. Built-in
//! entries are used only when their binary is on PATH. All servers are shut
//! down on exit (no orphans: each runs in the sandbox, whose keeper ends
//! its whole process tree with the agent, and its group is killed).
//!
//! Waits are bounded: a server starts in a task of its own (others and
//! `view` never wait for it), an edit waits at most `wait_secs` in all,
//! start included, and a start that takes longer goes on in the background.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::client::{Answer, Client, path_of};
use super::report::{format_report, line};
use super::servers::{ServerConfig, Timing, builtin, language_id, on_path};

/// Failures after which a server is left alone for this session.
const MAX_FAILURES: u32 = 3;

enum Slot {
    Empty,
    /// A running server and how many times it was (re)started after crashing.
    Running(Arc<Client>, tokio::process::Child, u32),
    Down {
        failures: u32,
        retry_at: Instant,
        reason: String,
    },
}

type Key = (String, PathBuf);
/// One server's slot, locked while it starts (by its own task).
type Cell = Arc<tokio::sync::Mutex<Slot>>;

pub struct LspManager {
    /// Paths changed outside the agent, for front ends that show them.
    pub external_changes: tokio::sync::broadcast::Sender<Vec<PathBuf>>,
    /// Files the agent wrote itself (not "outside" changes).
    pub own_writes: Arc<super::watch::OwnWrites>,
    watcher: std::sync::Mutex<Option<notify::RecommendedWatcher>>,
    pub(super) servers: BTreeMap<String, ServerConfig>,
    pub(super) workspace: PathBuf,
    log_dir: PathBuf,
    timing: Timing,
    /// Servers run the project's code (build scripts, proc macros,
    /// plugins): they start only in a trusted project, and then sandboxed
    /// like bash commands, without the provider keys.
    trusted: bool,
    sandbox: crate::shell::Sandbox,
    slots: std::sync::Mutex<HashMap<Key, Cell>>,
    /// The running servers, for what goes to all of them.
    live: std::sync::Mutex<HashMap<Key, Arc<Client>>>,
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Inserts and removals only: a poisoned map is still consistent.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Why no server starts in an untrusted project, and what to do.
pub const UNTRUSTED: &str = "language servers are off because this project is not trusted (they run its code: build scripts, plugins); the person can trust it with `agent trust --yes` or by answering yes when agent starts";

impl LspManager {
    /// `configured` entries override built-ins of the same name; built-ins
    /// whose command is missing are dropped.
    pub fn new(
        configured: BTreeMap<String, ServerConfig>,
        workspace: PathBuf,
        log_dir: PathBuf,
        timing: Timing,
    ) -> LspManager {
        let mut servers: BTreeMap<String, ServerConfig> = builtin()
            .into_iter()
            .filter(|(_, s)| on_path(&s.command))
            .collect();
        servers.extend(configured);
        LspManager {
            external_changes: tokio::sync::broadcast::channel(16).0,
            own_writes: Arc::default(),
            watcher: std::sync::Mutex::new(None),
            servers,
            workspace,
            log_dir,
            timing,
            trusted: false,
            sandbox: crate::shell::Sandbox::off(),
            slots: std::sync::Mutex::default(),
            live: std::sync::Mutex::default(),
        }
    }

    /// Lets servers start (the project is trusted), inside `sandbox`.
    pub fn trusted(mut self, sandbox: crate::shell::Sandbox) -> LspManager {
        self.trusted = true;
        self.sandbox = sandbox;
        self
    }

    /// The running server for `path`, started if needed, by `deadline`;
    /// `None` when no server serves the file. A start that takes longer
    /// goes on in the background.
    async fn client(
        self: &Arc<Self>,
        path: &Path,
        deadline: Instant,
    ) -> Result<Option<(String, Arc<Client>)>, String> {
        let Some((name, server)) = self.server_for(path) else {
            return Ok(None);
        };
        if !self.trusted {
            return Err(UNTRUSTED.to_string());
        }
        let root = self.root_for(path, server);
        let key = (name.clone(), root);
        let cell = Arc::clone(
            lock(&self.slots)
                .entry(key.clone())
                .or_insert_with(|| Arc::new(tokio::sync::Mutex::new(Slot::Empty))),
        );
        let me = Arc::clone(self);
        let task = tokio::spawn(async move { me.acquire(key, cell).await });
        match tokio::time::timeout_at(deadline.into(), task).await {
            Ok(Ok(r)) => r.map(|c| Some((name.clone(), c))),
            Ok(Err(e)) => Err(format!("{name} could not be started: {e}")),
            Err(_) => Err(format!(
                "{name} is still starting; diagnostics will follow once it is up (up to {:.0} s)",
                self.timing.start.as_secs_f64()
            )),
        }
    }

    /// Runs in a task of its own: holds the server's slot while it starts.
    async fn acquire(self: Arc<Self>, key: Key, cell: Cell) -> Result<Arc<Client>, String> {
        let (name, root) = (&key.0, &key.1);
        let Some(server) = self.servers.get(name) else {
            return Err(format!("{name} is not configured"));
        };
        let mut slot = cell.lock().await;
        let failures = match &mut *slot {
            Slot::Running(client, child, crashes) => {
                let Some(status) = child.try_wait().ok().flatten() else {
                    return Ok(Arc::clone(client));
                };
                lock(&self.live).remove(&key);
                crate::log::log(&format!("language server {name} exited ({status})"));
                let crashes = *crashes + 1;
                if crashes >= MAX_FAILURES {
                    let reason = format!(
                        "it exited ({status}) {crashes} times; see lsp-{name}.log in the data directory"
                    );
                    *slot = Slot::Down {
                        failures: MAX_FAILURES,
                        retry_at: Instant::now(),
                        reason: reason.clone(),
                    };
                    return Err(format!("{name} failed: {reason}"));
                }
                crashes
            }
            Slot::Down {
                failures,
                retry_at,
                reason,
            } => {
                if *failures >= MAX_FAILURES || Instant::now() < *retry_at {
                    return Err(format!("{name} is not running: {reason}"));
                }
                *failures + 1
            }
            Slot::Empty => 0,
        };
        match self.start(name, server, root).await {
            Ok((client, child)) => {
                let client = Arc::new(client);
                *slot = Slot::Running(Arc::clone(&client), child, failures);
                lock(&self.live).insert(key.clone(), Arc::clone(&client));
                Ok(client)
            }
            Err(reason) => {
                let failures = failures.max(1);
                let backoff = Duration::from_millis(500 * 2u64.pow(failures.min(6)));
                *slot = Slot::Down {
                    failures,
                    retry_at: Instant::now() + backoff,
                    reason: reason.clone(),
                };
                Err(format!("{name} failed to start: {reason}"))
            }
        }
    }

    async fn start(
        &self,
        name: &str,
        server: &ServerConfig,
        root: &Path,
    ) -> Result<(Client, tokio::process::Child), String> {
        let _ = std::fs::create_dir_all(&self.log_dir);
        // The server's stderr goes to a log file, never to the screen.
        let stderr = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_dir.join(format!("lsp-{name}.log")))
            .map(Stdio::from)
            .unwrap_or_else(|_| Stdio::null());
        let mut cmd = tokio::process::Command::new(&server.command);
        // A cache of its own where the sandbox lets it write (gopls exits
        // when it cannot create one in a read-only home).
        if !server.env.contains_key("XDG_CACHE_HOME")
            && let Some(dir) = private_cache(name, root)
        {
            cmd.env("XDG_CACHE_HOME", dir);
        }
        cmd.args(&server.args)
            .envs(&server.env)
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            // Its own session and process group: `Sandbox::apply`.
            .kill_on_drop(true);
        self.sandbox
            .apply(&mut cmd)
            .map_err(|e| format!("cannot sandbox `{}`: {e}", server.command))?;
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot run `{}`: {e}", server.command))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("no pipes to the server".into());
        };
        let options = server
            .initialization_options
            .as_ref()
            .and_then(|v| serde_json::to_value(v).ok())
            .unwrap_or(Value::Null);
        let trace = std::env::var_os("AGENT_LSP_TRACE")
            .is_some_and(|v| !v.is_empty() && v != "0")
            .then(|| {
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(self.log_dir.join(format!("lsp-{name}.log")))
                    .ok()
            })
            .flatten();
        let options = super::client::Options {
            name: name.to_string(),
            init_options: options,
            timeout: self.timing.start,
            quiet_when_clean: server.quiet_when_clean,
            trace,
        };
        match Client::connect(stdout, stdin, root, options).await {
            Ok(client) => Ok((client, child)),
            Err(e) => {
                // Say how it ended and what it said, not only that it is down.
                let status = tokio::time::timeout(Duration::from_millis(500), child.wait())
                    .await
                    .ok()
                    .and_then(Result::ok);
                let _ = child.start_kill();
                let log = self.log_dir.join(format!("lsp-{name}.log"));
                let mut reason = e.to_string();
                if let Some(s) = status {
                    reason.push_str(&format!(" ({s})"));
                }
                reason.push_str(&format!("; its log is {}", log.display()));
                let tail = last_lines(&log, 5);
                if !tail.is_empty() {
                    reason.push_str(&format!(", ending: {}", tail.join(" | ")));
                }
                Err(reason)
            }
        }
    }

    /// Starts watching the workspace for changes made outside the agent.
    pub fn watch(self: &Arc<Self>) {
        let w = super::watch::start(
            Arc::downgrade(self),
            &self.workspace,
            Arc::clone(&self.own_writes),
        );
        *self.watcher.lock().unwrap_or_else(|p| p.into_inner()) = w;
    }

    fn clients(&self) -> Vec<Arc<Client>> {
        lock(&self.live).values().cloned().collect()
    }

    /// Tells every running server about changed files: open documents get
    /// their new text (or are closed when deleted), reports of other
    /// changed files are dropped until the server reports again, and the
    /// changes a server registered for go to it as watched-file events.
    pub async fn forward_watched(&self, changes: &[(PathBuf, super::watch::Change)]) {
        for client in self.clients() {
            for (p, _) in changes {
                client.resync(p, language_id(p));
            }
            client.watched(changes);
        }
    }

    /// Brings every open document in line with the disk (after a command,
    /// which may have changed or deleted any of them).
    pub fn resync_open(&self) {
        for client in self.clients() {
            for p in client.open_paths() {
                client.resync(&p, language_id(&p));
            }
        }
    }

    /// Opens (or updates) a file in its server, in the background (`view`
    /// never waits for a server).
    pub fn open(self: &Arc<Self>, path: &Path) {
        let me = Arc::clone(self);
        let path = path.to_path_buf();
        tokio::spawn(async move {
            let deadline = Instant::now() + me.timing.start + Duration::from_secs(1);
            if let Ok(Some((_, client))) = me.client(&path, deadline).await
                && let Ok(text) = std::fs::read_to_string(&path)
            {
                let _ = client.sync(&path, language_id(&path), &text);
            }
        });
    }

    /// After a change: sends the new text and waits for its diagnostics,
    /// `wait_secs` at most in all. `None` when no server serves the file.
    pub async fn after_change(
        self: &Arc<Self>,
        path: &Path,
        workspace_display: &(dyn Fn(&Path) -> String + Sync),
    ) -> Option<String> {
        let deadline = Instant::now() + self.timing.cap;
        let (name, client) = match self.client(path, deadline).await {
            Ok(Some(c)) => c,
            Ok(None) => return None,
            Err(reason) => return Some(format!("Diagnostics: unavailable ({reason}).")),
        };
        let text = std::fs::read_to_string(path).ok()?;
        let checks = client.checks_begun();
        let sent = match client.sync(path, language_id(path), &text) {
            Ok(s) => s,
            Err(e) => {
                self.mark_down(&name, path, &e.to_string()).await;
                return Some(format!(
                    "Diagnostics: unavailable ({name} stopped: {e}); it will be restarted."
                ));
            }
        };
        let answer = client
            .diagnostics_after(&sent, self.timing.settle, deadline)
            .await;
        let mut checking = false;
        if !sent.unchanged {
            client.refresh_others(&sent.uri, deadline).await;
            // A check the save started (`cargo check`) reports what the
            // server's own analysis misses, other files included.
            checking = client
                .until_checked(checks, self.timing.settle, deadline)
                .await;
        }
        // Other files: what arrived after this change, as current.
        let since = if sent.unchanged {
            client.changed()
        } else {
            sent.seq
        };
        match answer {
            Answer::Current(diags) => {
                // The pushed part of this file's report may have come
                // with the check: take the file's report as it is now.
                let now = client.reports_since(since);
                let here = super::client::uri(path);
                let diags = now
                    .iter()
                    .find(|(u, _)| *u == here)
                    .map_or(diags, |(_, d)| d.clone());
                let mut report = format_report(&name, path, &diags, &now, workspace_display);
                if checking {
                    report.push_str(&format!(
                        "\n  ({name}'s check is still running: `diagnostics` shows what it finds.)"
                    ));
                }
                Some(report)
            }
            Answer::Loading(what) => Some(format!(
                "Diagnostics: {name} is still loading the project ({what}), so it cannot tell yet; diagnostics will follow: call `diagnostics` for this file in a moment."
            )),
            Answer::Missing => Some(format!(
                "Diagnostics: none arrived from {name} within {:.1} s for this change, so nothing is reported (older results are not shown as current).{}",
                self.timing.cap.as_secs_f64(),
                client
                    .last_error()
                    .map(|e| format!(" {name} reported an error: {e}"))
                    .unwrap_or_default()
            )),
        }
    }

    async fn mark_down(&self, name: &str, path: &Path, reason: &str) {
        let Some((_, server)) = self.server_for(path) else {
            return;
        };
        let key = (name.to_string(), self.root_for(path, server));
        lock(&self.live).remove(&key);
        let cell = lock(&self.slots).get(&key).cloned();
        if let Some(cell) = cell {
            *cell.lock().await = Slot::Down {
                failures: 1,
                retry_at: Instant::now(),
                reason: reason.to_string(),
            };
        }
    }

    /// Current diagnostics: for one file (synced first), or all that are
    /// current (every open document synced with the disk first).
    pub async fn diagnostics(
        self: &Arc<Self>,
        path: Option<&Path>,
        display: &(dyn Fn(&Path) -> String + Sync),
    ) -> String {
        if let Some(p) = path {
            return self
                .after_change(p, display)
                .await
                .unwrap_or_else(|| format!("No language server serves `{}`.", display(p)));
        }
        let checks: HashMap<String, u64> = lock(&self.live)
            .iter()
            .map(|((n, _), c)| (n.clone(), c.checks_begun()))
            .collect();
        self.resync_open();
        let deadline = Instant::now() + self.timing.cap;
        let mut out = String::new();
        let mut older = 0;
        let mut loading = Vec::new();
        let clients = lock(&self.live).clone();
        for ((name, _), client) in clients {
            client.settle_all(self.timing.settle, deadline).await;
            // A check the resync's save started reports what is fixed.
            client
                .until_checked(
                    checks.get(&name).copied().unwrap_or(0),
                    self.timing.settle,
                    deadline,
                )
                .await;
            if let Some(what) = client.loading() {
                loading.push(format!("{name} is still loading the project ({what})"));
            }
            for (uri, diags) in client.reports_since(client.changed()) {
                let Some(p) = path_of(&uri) else { continue };
                for d in &diags {
                    out.push_str(&format!("{}\n", line(&display(&p), &name, d, display)));
                }
            }
            older += client.older_reports();
        }
        if out.is_empty() {
            out = "No diagnostics from the running language servers.".into();
        }
        if older > 0 {
            out.push_str(&format!(
                "\n({older} file{} reported before the last change and not since are left out, as possibly out of date; `diagnostics` with a path checks a file now.)",
                if older == 1 { "" } else { "s" }
            ));
        }
        for l in loading {
            out.push_str(&format!("\n({l}: what it said so far may be incomplete.)"));
        }
        out
    }

    /// References to the symbol at a 0-based position (the file is synced
    /// first; a server still loading is given until it is done, 10 s at most).
    pub async fn references(
        self: &Arc<Self>,
        path: &Path,
        line: u32,
        column: u32,
    ) -> Result<Value, String> {
        let deadline = Instant::now() + self.timing.start + Duration::from_secs(10);
        let (_, client) = self
            .client(path, deadline)
            .await?
            .ok_or_else(|| format!("no language server serves `{}`", path.display()))?;
        let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
        client
            .sync(path, language_id(path), &text)
            .map_err(|e| e.to_string())?;
        client.until_loaded(deadline).await;
        client
            .references(path, line, column)
            .await
            .map_err(|e| e.to_string())
    }

    /// Where `name` is defined, asked of every running server (and first of
    /// the server for `hint`, started if needed).
    pub async fn find_symbol(
        self: &Arc<Self>,
        name: &str,
        hint: Option<&Path>,
    ) -> Result<Option<(PathBuf, u32, u32)>, String> {
        let deadline = Instant::now() + self.timing.start + Duration::from_secs(10);
        if let Some(h) = hint
            && let Some((_, client)) = self.client(h, deadline).await?
        {
            if let Ok(text) = std::fs::read_to_string(h) {
                let _ = client.sync(h, language_id(h), &text);
            }
            client.until_loaded(deadline).await;
            if let Some(found) = client.find_symbol(name).await.map_err(|e| e.to_string())? {
                return Ok(Some(found));
            }
        }
        let clients = self.clients();
        if clients.is_empty() {
            return Err("no language server is running yet; give `path` (a file of the symbol's language) too".into());
        }
        for c in clients {
            if let Ok(Some(found)) = c.find_symbol(name).await {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    /// Stops the named server (or all) so the next use starts it afresh.
    pub async fn restart(&self, name: Option<&str>) -> String {
        if let Some(name) = name
            && !self.servers.contains_key(name)
        {
            return format!(
                "No language server is named `{name}`; the configured ones are: {}.",
                self.servers.keys().cloned().collect::<Vec<_>>().join(", ")
            );
        }
        let cells: Vec<(Key, Cell)> = lock(&self.slots)
            .iter()
            .filter(|((n, _), _)| name.is_none_or(|x| x == n))
            .map(|(k, c)| (k.clone(), Arc::clone(c)))
            .collect();
        let mut stopped = 0;
        for (key, cell) in cells {
            lock(&self.live).remove(&key);
            let mut slot = cell.lock().await;
            if let Slot::Running(client, mut child, _) = std::mem::replace(&mut *slot, Slot::Empty)
            {
                stopped += 1;
                let _ = tokio::time::timeout(Duration::from_secs(2), client.shutdown()).await;
                // What the server started (a `cargo check`) goes with it.
                if let Some(pid) = child.id() {
                    // SAFETY: signals the process group the server leads.
                    unsafe { libc::killpg(pid as i32, libc::SIGKILL) };
                }
                let _ = child.kill().await;
            }
        }
        if stopped == 0 {
            return match name {
                Some(n) => format!("`{n}` is not running; it starts on the next file it serves."),
                None => {
                    "No language server is running; each starts on the next file it serves.".into()
                }
            };
        }
        format!(
            "Restarted {stopped} server{}; each starts again on its next file.",
            if stopped == 1 { "" } else { "s" }
        )
    }

    /// Server states for the status line: (name, "running" or the reason it is down).
    pub async fn status(&self) -> Vec<(String, String)> {
        let cells: Vec<(Key, Cell)> = lock(&self.slots)
            .iter()
            .map(|(k, c)| (k.clone(), Arc::clone(c)))
            .collect();
        let mut out = Vec::new();
        for ((n, _), cell) in cells {
            // A slot held by its start is starting.
            let Ok(slot) = cell.try_lock() else {
                out.push((n, "starting".into()));
                continue;
            };
            out.push(match &*slot {
                Slot::Empty => continue,
                Slot::Running(client, ..) => match client.loading() {
                    Some(what) => (n, format!("loading ({what})")),
                    None => (n, "running".into()),
                },
                Slot::Down {
                    reason, failures, ..
                } if *failures >= MAX_FAILURES => (n, format!("failed: {reason}")),
                Slot::Down { reason, .. } => (n, format!("restarting: {reason}")),
            });
        }
        out
    }

    pub async fn shutdown_all(&self) {
        self.restart(None).await;
    }
}

/// `<temp>/agent-lsp-<uid>/<server>-<project hash>`: made private (0700)
/// and checked to be ours and no link, so another user cannot hand a
/// server a cache, and one per project, so one project's server does not
/// read what another project's wrote.
fn private_cache(server: &str, root: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let base = std::env::temp_dir().join(format!("agent-lsp-{uid}"));
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&base);
    let meta = std::fs::symlink_metadata(&base).ok()?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return None;
    }
    let project = xxhash_rust::xxh3::xxh3_64(root.as_os_str().as_encoded_bytes());
    let dir = base.join(format!("{server}-{project:016x}"));
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    std::fs::symlink_metadata(&dir)
        .is_ok_and(|m| m.is_dir() && m.uid() == uid)
        .then_some(dir)
}

/// The last `n` non-empty lines of a log file (at most its last 64 KiB).
fn last_lines(path: &Path, n: usize) -> Vec<String> {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(64 * 1024)));
    let mut bytes = Vec::new();
    let _ = f.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| crate::text::cut_line(l, 200))
        .collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}
