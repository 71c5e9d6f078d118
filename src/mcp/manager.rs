//! The session's MCP servers. Each enabled server starts in the background
//! when the session is built, so a slow one never delays the first prompt;
//! its tools (and its instructions, for the system prompt) join the
//! Surface's [`ExternalTools`] once it is ready. A call to a server still
//! starting waits up to its startup timeout. A server that dies is marked
//! exited and started again by the next call to one of its tools; its tools
//! stay listed meanwhile, so that call can happen.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::ServerConfig;
use super::client::{Connection, exit_reason};
use super::tool::McpTool;
use crate::tools::{ExternalTool, ExternalTools, ToolError, render};

/// The most of a server's instructions the system prompt carries.
const MAX_INSTRUCTIONS: usize = 8 * 1024;

#[derive(Clone)]
enum Status {
    NotStarted,
    Disabled,
    Starting,
    Ready(Arc<Connection>),
    /// It could not start (why).
    Failed(String),
    /// It was ready, then went away (why); the next call starts it again.
    Exited(String),
}

/// One configured server and its current connection.
pub(super) struct Server {
    pub name: String,
    pub config: ServerConfig,
    workspace: PathBuf,
    log_dir: PathBuf,
    status: watch::Sender<Status>,
    /// Where its tools are published; unset for `agent mcp list`.
    target: Arc<OnceLock<Target>>,
    /// Failed first starts so far (a server that was never ready has no
    /// tools a call could restart it through, so it is retried alone).
    failed_starts: std::sync::atomic::AtomicUsize,
    ever_ready: std::sync::atomic::AtomicBool,
}

/// Waits before starting again a server that never came up: slow first
/// starts (a package manager downloading the server) often succeed later.
const RETRY_DELAYS: [Duration; 2] = [Duration::from_secs(2), Duration::from_secs(20)];

/// Where a manager's servers publish their tools.
struct Target {
    registry: Weak<ExternalTools>,
    /// Names the tools may not take (the built-in tools).
    reserved: BTreeSet<String>,
}

impl Server {
    fn prefix(&self) -> String {
        format!("mcp_{}_", self.name)
    }

    fn source(&self) -> String {
        format!("mcp:{}", self.name)
    }

    fn registry(&self) -> Option<Arc<ExternalTools>> {
        self.target.get().and_then(|t| t.registry.upgrade())
    }

    /// Starts it in the background unless it is starting, ready or disabled.
    fn begin_start(self: &Arc<Self>) {
        let begun = self.status.send_if_modified(|s| match s {
            Status::NotStarted | Status::Failed(_) | Status::Exited(_) => {
                *s = Status::Starting;
                true
            }
            _ => false,
        });
        if begun {
            tokio::spawn(Arc::clone(self).start());
        }
    }

    async fn start(self: Arc<Self>) {
        let limit = self.config.startup_timeout();
        if let Some(registry) = self.registry() {
            registry.starting(&self.source(), &self.prefix(), Instant::now() + limit);
        }
        let opened = tokio::time::timeout(
            limit,
            Connection::open(&self.name, &self.config, &self.workspace, &self.log_dir),
        )
        .await
        .unwrap_or_else(|_| {
            Err(format!(
                "it did not finish starting within {} s (startup_timeout_secs)",
                limit.as_secs_f64()
            ))
        });
        match opened {
            Ok(conn) => {
                let conn = Arc::new(conn);
                self.ever_ready.store(true, Ordering::Relaxed);
                self.publish(&conn);
                self.status.send_replace(Status::Ready(Arc::clone(&conn)));
                if let Some(exit) = conn.process.as_ref().map(|p| p.exit_watch()) {
                    tokio::spawn(watch(Arc::downgrade(&self), Arc::downgrade(&conn), exit));
                }
            }
            Err(reason) => {
                crate::log::log(&format!("MCP server {} failed: {reason}", self.name));
                if let Some(registry) = self.registry() {
                    registry.stopped_starting(&self.source());
                }
                self.status.send_replace(Status::Failed(reason));
                self.retry_later();
            }
        }
    }

    /// Starts a server that never came up again after a pause, a few
    /// times, while its session lives. A server that was ready once is
    /// restarted by the next call to one of its tools instead.
    fn retry_later(self: &Arc<Self>) {
        if self.ever_ready.load(Ordering::Relaxed) || self.registry().is_none() {
            return;
        }
        let n = self.failed_starts.fetch_add(1, Ordering::Relaxed);
        let Some(&delay) = RETRY_DELAYS.get(n) else {
            return;
        };
        let server = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            // Not if the session went meanwhile.
            if let Some(s) = server.upgrade()
                && s.registry().is_some()
            {
                s.begin_start();
            }
        });
    }

    /// Puts its tools and instructions into the Surface.
    fn publish(self: &Arc<Self>, conn: &Connection) {
        let (Some(registry), Some(target)) = (self.registry(), self.target.get()) else {
            return;
        };
        let tools: Vec<Arc<dyn ExternalTool>> = conn
            .tools
            .iter()
            .filter(|t| self.config.offers(&t.name))
            .map(|t| Arc::new(McpTool::new(Arc::clone(self), t)) as Arc<dyn ExternalTool>)
            .collect();
        let notes = conn.instructions.as_ref().map(|i| {
            let i = crate::text::cut_line(i.trim(), MAX_INSTRUCTIONS);
            render(
                include_str!("../../templates/mcp_instructions.md"),
                &[("server", self.name.clone()), ("instructions", i)],
            )
        });
        let refused = registry.publish(&self.source(), &self.prefix(), tools, notes, &|n| {
            target.reserved.contains(n)
        });
        if !refused.is_empty() {
            crate::log::log(&format!(
                "MCP server {}: tools left out because their names are taken: {}",
                self.name,
                refused.join(", ")
            ));
        }
    }

    fn mark_exited(&self, conn: &Arc<Connection>, reason: String) {
        self.status.send_if_modified(|s| match s {
            Status::Ready(c) if Arc::ptr_eq(c, conn) => {
                *s = Status::Exited(reason);
                true
            }
            _ => false,
        });
    }

    /// The connection for a call: the current one, or a (re)started one
    /// within the startup timeout.
    pub async fn connection(
        self: &Arc<Self>,
        cancel: &CancellationToken,
    ) -> Result<Arc<Connection>, ToolError> {
        // Cloned first: the borrow must end before `mark_exited` writes.
        let current = self.status.borrow().clone();
        if let Status::Ready(c) = current {
            if c.alive() {
                return Ok(c);
            }
            self.mark_exited(&c, "it went away".into());
        }
        self.begin_start();
        let mut rx = self.status.subscribe();
        let limit = self.config.startup_timeout() + Duration::from_secs(1);
        let settled = tokio::select! {
            _ = cancel.cancelled() => return Err(ToolError::new("cancelled")),
            r = tokio::time::timeout(limit, rx.wait_for(|s| !matches!(s, Status::Starting | Status::NotStarted))) => {
                r.ok().and_then(|r| r.ok().map(|s| s.clone()))
            }
        };
        match settled {
            Some(Status::Ready(c)) => Ok(c),
            Some(Status::Failed(why)) | Some(Status::Exited(why)) => Err(ToolError::new(format!(
                "The MCP server `{}` could not start: {why}\nIts tools cannot be used now; finish without them and tell the person (they can check it with `agent mcp list`).",
                self.name
            ))),
            Some(Status::Disabled) => Err(ToolError::new(format!(
                "The MCP server `{}` is disabled in the config; do not call its tools.",
                self.name
            ))),
            _ => Err(ToolError::new(format!(
                "The MCP server `{}` is not ready after {} s (startup_timeout_secs); try again later or finish without it.",
                self.name,
                self.config.startup_timeout().as_secs_f64()
            ))),
        }
    }

    /// The connection broke during a call (`why`): says how, marks the
    /// server exited so the next call starts it again.
    pub async fn lost(&self, conn: &Arc<Connection>, why: String) -> String {
        let reason = match &conn.process {
            Some(p) => match p.wait_exit(Duration::from_secs(2)).await {
                Some(how) => exit_reason(p, Some(&how)),
                None => {
                    p.kill().await;
                    format!("its connection broke ({why}) and it was stopped")
                }
            },
            None => format!("the connection broke: {why}"),
        };
        self.mark_exited(conn, reason.clone());
        reason
    }
}

/// Marks a server exited when its process goes. Holds neither the server
/// nor the connection: dropping them (a session that ends) must still stop
/// the process.
async fn watch(
    server: Weak<Server>,
    conn: Weak<Connection>,
    mut exit: watch::Receiver<Option<String>>,
) {
    let how = match exit.wait_for(Option::is_some).await {
        Ok(how) => how.clone().unwrap_or_default(),
        Err(_) => return,
    };
    let (Some(server), Some(conn)) = (server.upgrade(), conn.upgrade()) else {
        return;
    };
    let Some(process) = &conn.process else { return };
    let reason = exit_reason(process, Some(&how));
    crate::log::log(&format!("MCP server {}: {reason}", server.name));
    server.mark_exited(&conn, reason);
}

/// Every configured server of a session (or of `agent mcp list`).
pub struct McpManager {
    servers: Vec<Arc<Server>>,
    target: Arc<OnceLock<Target>>,
}

impl McpManager {
    /// The servers, not started yet. `log_dir` gets each stdio server's
    /// stderr as `mcp-<name>.log`.
    pub fn new(
        servers: &BTreeMap<String, ServerConfig>,
        workspace: &Path,
        log_dir: &Path,
    ) -> McpManager {
        let target = Arc::new(OnceLock::new());
        let servers = servers
            .iter()
            .map(|(name, config)| {
                Arc::new(Server {
                    name: name.clone(),
                    config: config.clone(),
                    workspace: workspace.to_path_buf(),
                    log_dir: log_dir.to_path_buf(),
                    status: watch::Sender::new(if config.enabled {
                        Status::NotStarted
                    } else {
                        Status::Disabled
                    }),
                    target: Arc::clone(&target),
                    failed_starts: Default::default(),
                    ever_ready: Default::default(),
                })
            })
            .collect();
        McpManager { servers, target }
    }

    /// Starts every enabled server in the background; their tools join
    /// `registry` as each becomes ready, never under a name in `reserved`.
    pub fn start(&self, registry: &Arc<ExternalTools>, reserved: Vec<String>) {
        let _ = self.target.set(Target {
            registry: Arc::downgrade(registry),
            reserved: reserved.into_iter().collect(),
        });
        for server in &self.servers {
            server.begin_start();
        }
    }

    /// Starts every enabled server and waits until each is ready or failed.
    pub async fn start_and_wait(&self) {
        let waits = self.servers.iter().map(|s| async move {
            s.begin_start();
            let mut rx = s.status.subscribe();
            let limit = s.config.startup_timeout() + Duration::from_secs(1);
            let _ = tokio::time::timeout(
                limit,
                rx.wait_for(|st| !matches!(st, Status::Starting | Status::NotStarted)),
            )
            .await;
        });
        futures_util::future::join_all(waits).await;
    }

    /// Each enabled server as the status line shows it: `mcp:<name>` and
    /// "running", "starting", "failed: why" or "exited: why" (it starts
    /// again on the next call).
    pub fn status(&self) -> Vec<(String, String)> {
        self.servers
            .iter()
            .filter_map(|s| {
                let state = match &*s.status.borrow() {
                    Status::Disabled => return None,
                    Status::Ready(_) => "running".to_string(),
                    Status::NotStarted | Status::Starting => "starting".into(),
                    Status::Failed(why) => format!("failed: {why}"),
                    Status::Exited(why) => format!("exited: {why}"),
                };
                Some((format!("mcp:{}", s.name), state))
            })
            .collect()
    }

    /// Resolves when any server's state changes (front ends redraw then).
    pub async fn changed(&self) {
        let mut receivers: Vec<_> = self.servers.iter().map(|s| s.status.subscribe()).collect();
        if receivers.is_empty() {
            return std::future::pending().await;
        }
        let waits = receivers.iter_mut().map(|rx| Box::pin(rx.changed()));
        let _ = futures_util::future::select_all(waits).await;
    }

    /// Closes every connection; stdio servers are stopped, their process
    /// groups killed if they do not exit at once.
    pub async fn shutdown(&self) {
        let closing = self.servers.iter().map(|s| async move {
            let conn = match &*s.status.borrow() {
                Status::Ready(c) => Some(Arc::clone(c)),
                _ => None,
            };
            if let Some(c) = conn {
                c.close().await;
                s.mark_exited(&c, "stopped with the session".into());
            }
        });
        futures_util::future::join_all(closing).await;
    }

    /// One block per server: state, and its tools when ready.
    pub fn report(&self) -> String {
        let mut out = String::new();
        for s in &self.servers {
            let status = s.status.borrow().clone();
            let state = match &status {
                Status::Ready(c) => format!("ready ({} tools)", c.tools.len()),
                Status::Disabled => "disabled (enabled = false)".into(),
                Status::Failed(why) | Status::Exited(why) => format!("failed: {why}"),
                Status::NotStarted | Status::Starting => "not ready".into(),
            };
            out.push_str(&format!(
                "{}  {}
",
                s.name,
                s.config.describe()
            ));
            for (i, line) in state.lines().enumerate() {
                out.push_str(if i == 0 { "  state: " } else { "  " });
                out.push_str(line);
                out.push('\n');
            }
            if let Status::Ready(c) = &status {
                for t in &c.tools {
                    let name = super::tool::tool_name(&s.name, &t.name);
                    let mut marks = Vec::new();
                    if !s.config.offers(&t.name) {
                        marks.push("disabled");
                    }
                    if t.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true) {
                        marks.push("read-only");
                    }
                    let marks = if marks.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", marks.join(", "))
                    };
                    let about = t
                        .description
                        .as_deref()
                        .and_then(|d| d.lines().next())
                        .unwrap_or_default();
                    out.push_str(&format!(
                        "  - {name}{marks}: {}\n",
                        crate::text::cut_line(about, 100)
                    ));
                }
            }
        }
        out
    }
}
