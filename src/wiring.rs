//! Assembly of a session from a [`Config`]: the Surface with its gate,
//! language servers, hooks and sub-agents; the session with its transcript;
//! the MCP servers. [`Live`] owns what a running session needs to end
//! cleanly, so every front end saves and shuts down the same way.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::agent::{NobodyToAsk, Session, SubAgents, system_prompt};
use crate::config::Config;
use crate::llm::Provider;
use crate::mcp::McpManager;
use crate::permission::{Approver, Gate, GateConfig};
use crate::tools::{Surface, ToolContext, Workspace};

/// How long servers get to stop cleanly at the end of a session before
/// they are killed.
pub const SHUTDOWN_WAIT: Duration = Duration::from_secs(2);

/// The one Surface of a session, with its gate, as every front end builds it.
/// With a `provider`, its `agent` tool can start read-only sub-agents.
pub fn surface(
    config: &Config,
    approver: Arc<dyn Approver>,
    cancel: &CancellationToken,
    history: Option<std::path::PathBuf>,
    provider: Option<Arc<dyn Provider>>,
) -> Surface {
    let ctx = ToolContext::new(
        Workspace::new(config.workspace.clone()).protecting(config.agent_files()),
        config.bans(),
        cancel.clone(),
    )
    .with_sandbox(config.sandbox())
    .with_bash_limits(config.bash.clone())
    .with_lsp(Arc::new({
        let lsp = crate::lsp::LspManager::new(
            config.lsp_servers.clone(),
            config.workspace.clone(),
            config.paths.data_dir.clone(),
            config.lsp_timing.clone(),
        );
        if config.project_trusted {
            lsp.trusted(config.sandbox())
        } else {
            lsp
        }
    }));
    let mut ctx = match history {
        Some(dir) => ctx.with_history(dir),
        None => ctx,
    };
    let gate = Arc::new(Gate::new(
        GateConfig {
            rules: config.rule_set(),
            yolo: config.yolo(),
            workspace: config.workspace.clone(),
            always_file: config.paths.user_config.clone(),
        },
        approver,
    ));
    if let Some(provider) = provider {
        // The session's rules, grants and yolo switch judge a sub-agent's
        // calls; nobody is asked.
        let child_gate = gate.child(Arc::new(NobodyToAsk));
        let surface = Surface::read_only(ctx.for_sub_agent(), Arc::new(child_gate));
        ctx = ctx.with_delegate(Arc::new(SubAgents::new(
            provider,
            Arc::new(surface),
            &config.workspace,
            config.max_steps,
            config.paths.data_dir.clone(),
        )));
    }
    Surface::new(ctx, gate)
}

/// What a session knows of its model besides the connection.
#[derive(Debug, Clone, Copy)]
pub struct ModelFacts {
    /// `None`: not known (compaction waits for the server to say so).
    pub window: Option<u64>,
    pub prices: Option<crate::llm::Prices>,
}

impl ModelFacts {
    pub fn of(p: &crate::llm::ResolvedProvider) -> ModelFacts {
        ModelFacts {
            window: p.context_window,
            prices: p.prices,
        }
    }
}

/// A running session and the servers it started.
pub struct Live {
    pub session: Session,
    /// The session's MCP servers, when any are configured.
    pub mcp: Option<Arc<McpManager>>,
}

impl Live {
    /// Why the transcript could not be saved, if it could not: the one
    /// policy for every front end is to tell the person.
    pub fn transcript_problem(&self) -> Option<String> {
        self.session.log().and_then(|l| l.error())
    }

    /// Language servers and MCP servers with their state.
    pub async fn server_status(&self) -> Vec<(String, String)> {
        let mut list = match &self.session.surface().context().lsp {
            Some(lsp) => lsp.status().await,
            None => Vec::new(),
        };
        if let Some(mcp) = &self.mcp {
            list.extend(mcp.status());
        }
        list
    }

    /// Stops the language servers and MCP servers, together, each given
    /// [`SHUTDOWN_WAIT`] to exit cleanly before it is killed.
    pub async fn shutdown(&self) {
        let lsp = self.session.surface().context().lsp.clone();
        let mcp = self.mcp.clone();
        let lsp = async move {
            if let Some(lsp) = lsp {
                let _ = tokio::time::timeout(SHUTDOWN_WAIT, lsp.shutdown_all()).await;
            }
        };
        let mcp = async move {
            if let Some(mcp) = mcp {
                let _ = tokio::time::timeout(SHUTDOWN_WAIT, mcp.shutdown()).await;
            }
        };
        tokio::join!(lsp, mcp);
    }
}

/// A session with its own id, log, file history, Surface and MCP servers,
/// new or continuing `resume`; every front end builds sessions this way.
pub fn session(
    config: &Config,
    provider: Arc<dyn Provider>,
    facts: ModelFacts,
    approver: Arc<dyn Approver>,
    cancel: &CancellationToken,
    resume: Option<&crate::transcript::Loaded>,
) -> Live {
    let id = match resume {
        Some(l) => l.header.id.clone(),
        None => uuid::Uuid::new_v4().to_string(),
    };
    let history = config.paths.data_dir.join("history").join(&id);
    let mut surface = surface(
        config,
        approver,
        cancel,
        Some(history),
        Some(Arc::clone(&provider)),
    );
    let hooks = config.active_hooks();
    if !hooks.is_empty() {
        surface = surface.with_hooks(crate::hooks::Hooks::new(
            &hooks,
            crate::hooks::HookEnv {
                session_id: id.clone(),
                cwd: config.workspace.clone(),
                transcript_path: crate::transcript::log_path(&config.paths.data_dir, &id),
                // Hooks may read the transcript, which lives with agent's records.
                sandbox: config.sandbox().hiding(Vec::new()),
            },
        ));
    }
    let surface = Arc::new(surface);
    if let Some(lsp) = &surface.context().lsp {
        lsp.watch();
    }
    let mcp = (!config.mcp_servers.is_empty()).then(|| {
        let mcp = Arc::new(McpManager::new(
            &config.mcp_servers,
            &config.workspace,
            &config.paths.data_dir,
        ));
        // In the background: a slow server does not delay the first prompt.
        mcp.start(surface.external(), surface.names());
        mcp
    });
    let (mut system, _) = {
        let rules = config.rule_set();
        system_prompt(
            &config.workspace,
            Some(&global_instructions(config)),
            &|p| rules.denies_read(p),
        )
    };
    if let Some(extra) = &config.append_system_prompt {
        system.push_str("\n\n");
        system.push_str(extra);
    }
    let (provider_id, model) = {
        let (p, m) = provider.describe();
        (p.to_string(), m.to_string())
    };
    let log = match resume {
        Some(l) if l.header.v != 0 => crate::transcript::SessionLog::reopen(
            crate::transcript::log_path(&config.paths.data_dir, &id),
        ),
        // A transcript of the earlier format is converted once, into a log.
        Some(l) => {
            let log = crate::transcript::SessionLog::create(
                &config.paths.data_dir,
                crate::transcript::Header {
                    v: crate::transcript::store::FORMAT,
                    ..l.header.clone()
                },
            );
            for e in &l.entries {
                log.append(e);
            }
            log.flush();
            log
        }
        None => crate::transcript::SessionLog::create(
            &config.paths.data_dir,
            crate::transcript::Header {
                v: crate::transcript::store::FORMAT,
                id: id.clone(),
                created: time::OffsetDateTime::now_utc().unix_timestamp(),
                cwd: config.workspace.clone(),
                project: crate::transcript::store::project_root(&config.workspace),
                git_root: crate::transcript::store::git_root(&config.workspace),
                provider: provider_id.clone(),
                model: model.clone(),
                agent_version: env!("CARGO_PKG_VERSION").into(),
                parent: None,
            },
        ),
    };
    let mut session = Session::new(id, provider, surface, system, config.max_steps)
        .with_log(Arc::new(log))
        .with_model_facts(facts.window, facts.prices);
    if let Some(loaded) = resume {
        let replay = crate::transcript::Replay::of(&loaded.entries);
        session.resume(&replay);
        let (was_p, was_m) = replay
            .model
            .clone()
            .unwrap_or((loaded.header.provider.clone(), loaded.header.model.clone()));
        if (was_p.as_str(), was_m.as_str()) != (provider_id.as_str(), model.as_str()) {
            // The log says from where on another model answered.
            if let Some(log) = session.log() {
                log.append(&crate::transcript::Entry::Model {
                    provider: provider_id,
                    model,
                });
            }
        }
    }
    Live { session, mcp }
}

/// The person's own instructions for every project: `AGENTS.md` beside
/// their config file.
pub fn global_instructions(config: &Config) -> std::path::PathBuf {
    config
        .paths
        .user_config
        .parent()
        .map(|d| d.join("AGENTS.md"))
        .unwrap_or_default()
}

/// Which session a run continues: `--continue` (the newest of this
/// project), `--resume ID` (an id or a unique prefix of one). Warnings
/// (lines skipped in a damaged log, another project's session, another
/// model) are for the person, on stderr or as notices.
pub fn find_session(
    config: &Config,
    continue_last: bool,
    resume: Option<&str>,
) -> Result<Option<(crate::transcript::Loaded, Vec<String>)>, String> {
    let data = &config.paths.data_dir;
    let summary = if let Some(id) = resume {
        crate::transcript::list::find(data, id).map_err(|e| e.to_string())?
    } else if continue_last {
        let root = crate::transcript::store::project_root(&config.workspace);
        crate::transcript::list::latest(data, &root).map_err(|e| e.to_string())?
    } else {
        return Ok(None);
    };
    let loaded = crate::transcript::store::load(&summary.path).map_err(|e| e.to_string())?;
    let mut notes = loaded.warnings.clone();
    let root = crate::transcript::store::project_root(&config.workspace);
    if loaded.header.project != root {
        notes.push(format!(
            "session {} was started in {}; it continues here, in {}",
            loaded.header.id,
            loaded.header.project.display(),
            config.workspace.display()
        ));
    }
    Ok(Some((loaded, notes)))
}

/// Ctrl-C, SIGTERM or SIGHUP: the run stops cleanly (tools cancelled, their
/// process groups killed) instead of dying with orphans left behind.
pub async fn stop_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let term = signal(SignalKind::terminate());
    let hup = signal(SignalKind::hangup());
    match (term, hup) {
        (Ok(mut term), Ok(mut hup)) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
                _ = hup.recv() => {}
            }
        }
        _ => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// SIGTERM or SIGHUP (a closed terminal): the TUI quits cleanly. Ctrl-C
/// arrives there as a key, not a signal.
pub async fn stop_signal_terminal() {
    use tokio::signal::unix::{SignalKind, signal};
    match (
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) {
        (Ok(mut term), Ok(mut hup)) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = hup.recv() => {}
            }
        }
        _ => std::future::pending().await,
    }
}
