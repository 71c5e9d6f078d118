//! The running language servers: one per (server, root), started lazily on
//! the first file of a matching type, restarted with backoff when they
//! crash and marked failed (with the reason) after a few failures. Built-in
//! entries are used only when their binary is on PATH. All servers are shut
//! down on exit (no orphans: children are killed when dropped).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lsp_types::{Diagnostic, DiagnosticSeverity};
use serde::Deserialize;
use serde_json::Value;

use super::client::{Client, path_of};

/// A server as configured (`[lsp.<name>]`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// File extensions it serves, without dots.
    #[serde(default)]
    pub extensions: Vec<String>,
    /// Or the languages it serves (`python`, `rust`, `typescript`...).
    #[serde(default)]
    pub languages: Vec<String>,
    /// Files that mark a project root (`Cargo.toml`, `pyproject.toml`).
    #[serde(default)]
    pub root_markers: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub initialization_options: Option<toml::Value>,
}

/// Built-in servers, used when the command is on PATH.
pub fn builtin() -> BTreeMap<String, ServerConfig> {
    let s = |command: &str, args: &[&str], ext: &[&str], markers: &[&str]| ServerConfig {
        command: command.into(),
        args: args.iter().map(|a| a.to_string()).collect(),
        extensions: ext.iter().map(|e| e.to_string()).collect(),
        root_markers: markers.iter().map(|m| m.to_string()).collect(),
        ..ServerConfig::default()
    };
    BTreeMap::from([
        (
            "rust-analyzer".into(),
            s("rust-analyzer", &[], &["rs"], &["Cargo.toml"]),
        ),
        (
            "pyright".into(),
            s(
                "pyright-langserver",
                &["--stdio"],
                &["py", "pyi"],
                &[
                    "pyproject.toml",
                    "setup.py",
                    "pyrightconfig.json",
                    "requirements.txt",
                ],
            ),
        ),
        (
            "typescript".into(),
            s(
                "typescript-language-server",
                &["--stdio"],
                &["ts", "tsx", "js", "jsx", "mjs", "cjs"],
                &["tsconfig.json", "package.json"],
            ),
        ),
        ("gopls".into(), s("gopls", &[], &["go"], &["go.mod"])),
        (
            "clangd".into(),
            s(
                "clangd",
                &[],
                &["c", "h", "cc", "cpp", "hpp", "cxx"],
                &["compile_commands.json", "CMakeLists.txt"],
            ),
        ),
    ])
}

/// How long a change waits for diagnostics.
#[derive(Debug, Clone)]
pub struct Timing {
    pub settle: Duration,
    pub cap: Duration,
    pub start: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            settle: Duration::from_millis(300),
            cap: Duration::from_secs(5),
            start: Duration::from_secs(30),
        }
    }
}

/// Failures after which a server is left alone for this session.
const MAX_FAILURES: u32 = 3;

enum Slot {
    /// A running server and how many times it was (re)started after crashing.
    Running(Arc<Client>, tokio::process::Child, u32),
    Down {
        failures: u32,
        retry_at: Instant,
        reason: String,
    },
}

pub struct LspManager {
    /// Paths changed outside the agent, for front ends that show them.
    pub external_changes: tokio::sync::broadcast::Sender<Vec<PathBuf>>,
    /// Files the agent wrote itself (not "outside" changes).
    pub own_writes: Arc<super::watch::OwnWrites>,
    watcher: std::sync::Mutex<Option<notify::RecommendedWatcher>>,
    servers: BTreeMap<String, ServerConfig>,
    workspace: PathBuf,
    log_dir: PathBuf,
    timing: Timing,
    /// Servers run the project's code (build scripts, proc macros,
    /// plugins): they start only in a trusted project, and then sandboxed
    /// like bash commands, without the provider keys.
    trusted: bool,
    sandbox: crate::shell::Sandbox,
    slots: tokio::sync::Mutex<HashMap<(String, PathBuf), Slot>>,
}

/// Why no server starts in an untrusted project, and what to do.
pub const UNTRUSTED: &str = "language servers are off because this project is not trusted (they run its code: build scripts, plugins); the person can trust it with `agent trust --yes` or by answering yes when agent starts";

pub fn on_path(command: &str) -> bool {
    if command.contains('/') {
        return Path::new(command).exists();
    }
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(command).is_file()))
}

fn language_id(path: &Path) -> &'static str {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
    {
        "rs" => "rust",
        "py" | "pyi" => "python",
        "ts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "go" => "go",
        "c" | "h" => "c",
        "cc" | "cpp" | "hpp" | "cxx" => "cpp",
        _ => "plaintext",
    }
}

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
            slots: tokio::sync::Mutex::default(),
        }
    }

    /// Lets servers start (the project is trusted), inside `sandbox`.
    pub fn trusted(mut self, sandbox: crate::shell::Sandbox) -> LspManager {
        self.trusted = true;
        self.sandbox = sandbox;
        self
    }

    fn server_for(&self, path: &Path) -> Option<(&String, &ServerConfig)> {
        let ext = path.extension()?.to_str()?;
        let lang = language_id(path);
        self.servers.iter().find(|(_, s)| {
            s.extensions.iter().any(|e| e == ext) || s.languages.iter().any(|l| l == lang)
        })
    }

    /// The nearest directory at or above the file (inside the workspace)
    /// holding one of the server's root markers; else the workspace.
    fn root_for(&self, path: &Path, server: &ServerConfig) -> PathBuf {
        let mut dir = path.parent();
        while let Some(d) = dir {
            if !d.starts_with(&self.workspace) {
                break;
            }
            if server.root_markers.iter().any(|m| d.join(m).exists()) {
                return d.to_path_buf();
            }
            dir = d.parent();
        }
        self.workspace.clone()
    }

    async fn client(&self, path: &Path) -> Result<Option<(String, Arc<Client>)>, String> {
        let Some((name, server)) = self.server_for(path) else {
            return Ok(None);
        };
        if !self.trusted {
            return Err(UNTRUSTED.to_string());
        }
        let root = self.root_for(path, server);
        let key = (name.clone(), root.clone());
        let mut slots = self.slots.lock().await;
        let failures = match slots.get_mut(&key) {
            Some(Slot::Running(client, child, crashes)) => {
                let Some(status) = child.try_wait().ok().flatten() else {
                    return Ok(Some((name.clone(), Arc::clone(client))));
                };
                let crashes = *crashes + 1;
                if crashes >= MAX_FAILURES {
                    let reason = format!(
                        "it exited ({status}) {crashes} times; see lsp-{name}.log in the data directory"
                    );
                    slots.insert(
                        key,
                        Slot::Down {
                            failures: MAX_FAILURES,
                            retry_at: Instant::now(),
                            reason: reason.clone(),
                        },
                    );
                    return Err(format!("{name} failed: {reason}"));
                }
                crashes
            }
            Some(Slot::Down {
                failures,
                retry_at,
                reason,
            }) => {
                if *failures >= MAX_FAILURES || Instant::now() < *retry_at {
                    return Err(format!("{name} is not running: {reason}"));
                }
                *failures + 1
            }
            None => 0,
        };
        match self.start(name, server, &root).await {
            Ok((client, child)) => {
                let client = Arc::new(client);
                slots.insert(key, Slot::Running(Arc::clone(&client), child, failures));
                Ok(Some((name.clone(), client)))
            }
            Err(reason) => {
                let failures = failures.max(1);
                let backoff = Duration::from_millis(500 * 2u64.pow(failures.min(6)));
                slots.insert(
                    key,
                    Slot::Down {
                        failures,
                        retry_at: Instant::now() + backoff,
                        reason: reason.clone(),
                    },
                );
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
        match Client::connect(stdout, stdin, root, options, self.timing.start).await {
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

    /// Tells every running server about changed files.
    pub async fn forward_watched(&self, changes: &[(PathBuf, super::watch::Change)]) {
        let slots = self.slots.lock().await;
        for slot in slots.values() {
            if let Slot::Running(client, _, _) = slot {
                client.watched(changes);
            }
        }
    }

    /// Opens (or updates) a file in its server without waiting (`view`).
    pub async fn open(&self, path: &Path) {
        if let Ok(Some((_, client))) = self.client(path).await
            && let Ok(text) = std::fs::read_to_string(path)
        {
            let _ = client.sync(path, language_id(path), &text);
        }
    }

    /// After a change: sends the new text and waits for its diagnostics.
    /// `None` when no server serves the file.
    pub async fn after_change(
        &self,
        path: &Path,
        workspace_display: &(dyn Fn(&Path) -> String + Sync),
    ) -> Option<String> {
        let client = match self.client(path).await {
            Ok(Some(c)) => c,
            Ok(None) => return None,
            Err(reason) => return Some(format!("Diagnostics: unavailable ({reason}).")),
        };
        let (name, client) = client;
        let text = std::fs::read_to_string(path).ok()?;
        let sent = match client.sync(path, language_id(path), &text) {
            Ok(s) => s,
            Err(e) => {
                self.mark_down(&name, path, &e.to_string()).await;
                return Some(format!(
                    "Diagnostics: unavailable ({name} stopped: {e}); it will be restarted."
                ));
            }
        };
        match client
            .diagnostics_after(&sent, self.timing.settle, self.timing.cap)
            .await
        {
            Some(diags) => Some(format_report(
                &name,
                path,
                &diags,
                &client.all_diagnostics(),
                workspace_display,
            )),
            None => Some(format!(
                "Diagnostics: none arrived from {name} within {:.1} s for this change, so nothing is reported (older results are not shown as current).",
                self.timing.cap.as_secs_f64()
            )),
        }
    }

    async fn mark_down(&self, name: &str, path: &Path, reason: &str) {
        let Some((_, server)) = self.server_for(path) else {
            return;
        };
        let root = self.root_for(path, server);
        let mut slots = self.slots.lock().await;
        slots.insert(
            (name.to_string(), root),
            Slot::Down {
                failures: 1,
                retry_at: Instant::now(),
                reason: reason.to_string(),
            },
        );
    }

    /// Current diagnostics: for one file (synced first), or all known.
    pub async fn diagnostics(
        &self,
        path: Option<&Path>,
        display: &(dyn Fn(&Path) -> String + Sync),
    ) -> String {
        if let Some(p) = path {
            return self
                .after_change(p, display)
                .await
                .unwrap_or_else(|| format!("No language server serves `{}`.", display(p)));
        }
        let slots = self.slots.lock().await;
        let mut out = String::new();
        for ((name, _), slot) in slots.iter() {
            if let Slot::Running(client, _, _) = slot {
                for (uri, diags) in client.all_diagnostics() {
                    let Some(p) = path_of(&uri) else { continue };
                    for d in &diags {
                        out.push_str(&format!("{}\n", line(&display(&p), name, d)));
                    }
                }
            }
        }
        if out.is_empty() {
            "No diagnostics from the running language servers.".into()
        } else {
            out
        }
    }

    /// References to the symbol at a 0-based position (the file is synced first).
    pub async fn references(&self, path: &Path, line: u32, column: u32) -> Result<Value, String> {
        let (_, client) = self
            .client(path)
            .await?
            .ok_or_else(|| format!("no language server serves `{}`", path.display()))?;
        let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
        client
            .sync(path, language_id(path), &text)
            .map_err(|e| e.to_string())?;
        client
            .references(path, line, column)
            .await
            .map_err(|e| e.to_string())
    }

    /// Where `name` is defined, asked of every running server (and first of
    /// the server for `hint`, started if needed).
    pub async fn find_symbol(
        &self,
        name: &str,
        hint: Option<&Path>,
    ) -> Result<Option<(PathBuf, u32, u32)>, String> {
        if let Some(h) = hint
            && let Some((_, client)) = self.client(h).await?
        {
            if let Ok(text) = std::fs::read_to_string(h) {
                let _ = client.sync(h, language_id(h), &text);
            }
            if let Some(found) = client.find_symbol(name).await.map_err(|e| e.to_string())? {
                return Ok(Some(found));
            }
        }
        let clients: Vec<Arc<Client>> = {
            let slots = self.slots.lock().await;
            slots
                .values()
                .filter_map(|s| {
                    if let Slot::Running(c, _, _) = s {
                        Some(Arc::clone(c))
                    } else {
                        None
                    }
                })
                .collect()
        };
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
        let mut slots = self.slots.lock().await;
        let keys: Vec<(String, PathBuf)> = slots
            .keys()
            .filter(|(n, _)| name.is_none_or(|x| x == n))
            .cloned()
            .collect();
        for k in &keys {
            if let Some(Slot::Running(client, mut child, _)) = slots.remove(k) {
                let _ = tokio::time::timeout(Duration::from_secs(2), client.shutdown()).await;
                // What the server started (a `cargo check`) goes with it.
                if let Some(pid) = child.id() {
                    // SAFETY: signals the process group the server leads.
                    unsafe { libc::killpg(pid as i32, libc::SIGKILL) };
                }
                let _ = child.kill().await;
            }
        }
        if keys.is_empty() {
            return match name {
                Some(n) => format!("`{n}` is not running; it starts on the next file it serves."),
                None => {
                    "No language server is running; each starts on the next file it serves.".into()
                }
            };
        }
        format!(
            "Restarted {} server{}; each starts again on its next file.",
            keys.len(),
            if keys.len() == 1 { "" } else { "s" }
        )
    }

    /// Server states for the status line: (name, "running" or the reason it is down).
    pub async fn status(&self) -> Vec<(String, String)> {
        let slots = self.slots.lock().await;
        slots
            .iter()
            .map(|((n, _), s)| match s {
                Slot::Running(..) => (n.clone(), "running".into()),
                Slot::Down {
                    reason, failures, ..
                } if *failures >= MAX_FAILURES => (n.clone(), format!("failed: {reason}")),
                Slot::Down { reason, .. } => (n.clone(), format!("restarting: {reason}")),
            })
            .collect()
    }

    pub async fn shutdown_all(&self) {
        self.restart(None).await;
    }
}

fn severity(d: &Diagnostic) -> &'static str {
    match d.severity {
        Some(DiagnosticSeverity::ERROR) => "error",
        Some(DiagnosticSeverity::WARNING) => "warning",
        Some(DiagnosticSeverity::INFORMATION) => "info",
        Some(DiagnosticSeverity::HINT) => "hint",
        _ => "error",
    }
}

fn line(file: &str, server: &str, d: &Diagnostic) -> String {
    let source = d.source.clone().unwrap_or_else(|| server.to_string());
    let code = match &d.code {
        Some(lsp_types::NumberOrString::Number(n)) => format!("/{n}"),
        Some(lsp_types::NumberOrString::String(s)) => format!("/{s}"),
        None => String::new(),
    };
    format!(
        "{file}:{}:{} {} [{source}{code}] {}",
        d.range.start.line + 1,
        d.range.start.character + 1,
        severity(d),
        d.message.lines().next().unwrap_or_default()
    )
}

/// Errors and warnings shown per list.
const MAX_LISTED: usize = 20;

fn format_report(
    server: &str,
    path: &Path,
    mine: &[Diagnostic],
    all: &[(String, Vec<Diagnostic>)],
    display: &(dyn Fn(&Path) -> String + Sync),
) -> String {
    let shown = display(path);
    let important = |d: &&Diagnostic| matches!(severity(d), "error" | "warning");
    let mut own: Vec<&Diagnostic> = mine.iter().filter(important).collect();
    own.sort_by_key(|d| (severity(d) != "error", d.range.start.line));
    let errors = own.iter().filter(|d| severity(d) == "error").count();
    let warnings = own.len() - errors;
    let mut out = String::from("Diagnostics:\n");
    for d in own.iter().take(MAX_LISTED) {
        out.push_str(&format!("  {}\n", line(&shown, server, d)));
    }
    if own.len() > MAX_LISTED {
        out.push_str(&format!("  … and {} more\n", own.len() - MAX_LISTED));
    }
    let here = super::client::uri(path);
    let others: Vec<(String, &Diagnostic)> = all
        .iter()
        .filter(|(u, _)| *u != here)
        .flat_map(|(u, ds)| {
            let file = path_of(u).map(|p| display(&p)).unwrap_or_else(|| u.clone());
            ds.iter()
                .filter(|d| severity(d) == "error")
                .map(move |d| (file.clone(), d))
        })
        .collect();
    if !others.is_empty() {
        out.push_str("  Other files:\n");
        for (file, d) in others.iter().take(MAX_LISTED) {
            out.push_str(&format!("  {}\n", line(file, server, d)));
        }
        if others.len() > MAX_LISTED {
            out.push_str(&format!("  … and {} more\n", others.len() - MAX_LISTED));
        }
    }
    out.push_str(&format!(
        "  {errors} error{}, {warnings} warning{} in {shown}{}",
        if errors == 1 { "" } else { "s" },
        if warnings == 1 { "" } else { "s" },
        if others.is_empty() {
            String::new()
        } else {
            format!(
                "; {} error{} in other files",
                others.len(),
                if others.len() == 1 { "" } else { "s" }
            )
        }
    ));
    out
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
        .map(|l| crate::tools::cut_line(l, 200))
        .collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manager_with(server: ServerConfig) -> LspManager {
        let dir = std::env::temp_dir();
        LspManager::new(
            BTreeMap::from([("mine".to_string(), server)]),
            dir.clone(),
            dir,
            Timing::default(),
        )
    }

    #[test]
    fn a_server_is_chosen_by_language_or_by_extension() {
        let by_language = manager_with(ServerConfig {
            command: "mine-ls".into(),
            languages: vec!["python".into()],
            ..ServerConfig::default()
        });
        let chosen = |m: &LspManager, p: &str| m.server_for(Path::new(p)).map(|(n, _)| n.clone());
        assert_eq!(chosen(&by_language, "/w/m.py").as_deref(), Some("mine"));
        assert_eq!(
            chosen(&by_language, "/w/stubs.pyi").as_deref(),
            Some("mine")
        );
        assert_eq!(chosen(&by_language, "/w/a.txt"), None);

        let by_extension = manager_with(ServerConfig {
            command: "mine-ls".into(),
            extensions: vec!["txt".into()],
            ..ServerConfig::default()
        });
        assert_eq!(chosen(&by_extension, "/w/a.txt").as_deref(), Some("mine"));
        // (A built-in pyright may serve it when installed; ours must not.)
        assert_ne!(chosen(&by_extension, "/w/m.py").as_deref(), Some("mine"));
    }
}
