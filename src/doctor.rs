//! `agent doctor`: what protects this machine and project, checked now,
//! for the person to run when something is refused. Every "refused" line
//! comes from a probe command run in the real sandbox a moment ago, never
//! from what the settings say should happen.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::config::Config;
use crate::shell::contain;
use crate::shell::run::Process;

/// The report. Starts probe commands in the sandbox, so it is async.
pub async fn report(config: &Config) -> String {
    let mut out = format!("agent doctor: {}\n\n", config.workspace.display());
    let sandbox = config.sandbox();
    let abi = crate::shell::Sandbox::abi();
    let landlock = match abi {
        0 => "not available on this kernel: commands may write anywhere the user can".to_string(),
        1..=5 => {
            format!("ABI {abi}: file writes restricted (no signal or socket scoping: needs ABI 6)")
        }
        _ => format!("ABI {abi}: file writes restricted; signals and abstract unix sockets scoped"),
    };
    let _ = writeln!(
        out,
        "sandbox:          {} mode; Landlock {landlock}",
        sandbox.mode
    );
    let ns = contain::namespaces_available();
    let _ = writeln!(
        out,
        "user namespaces:  {}",
        if ns {
            "available: each command runs in its own user, mount and PID namespaces (protected places read-only, nothing it starts outlives it)"
        } else {
            "NOT available: .git/hooks, .git/config and .agent/ stay writable to commands, and a process that leaves a command's process group is not followed (on Ubuntu, see kernel.apparmor_restrict_unprivileged_userns)"
        }
    );
    out.push_str("checked just now, by commands in the sandbox:\n");
    for (what, verdict) in probes(config).await {
        let _ = writeln!(out, "  {what:<58} {verdict}");
    }
    let mut roots: Vec<String> = vec!["the project".into(), "/tmp, /var/tmp".into()];
    roots.extend(
        sandbox
            .writable
            .iter()
            .skip(1)
            .filter(|p| p.exists())
            .map(|p| p.display().to_string()),
    );
    let _ = writeln!(out, "writable:         {}", roots.join(", "));
    let _ = writeln!(
        out,
        "keys withheld:    {}",
        if config.withheld_env.is_empty() {
            "none".to_string()
        } else {
            config.withheld_env.join(", ")
        }
    );
    let trust = if config.project_trusted {
        "trusted".to_string()
    } else {
        "not trusted: language servers are off and the project's allow rules, hooks and servers are ignored (`agent trust`)".to_string()
    };
    let _ = writeln!(out, "project:          {trust}");
    for note in config.ignored_notes() {
        let _ = writeln!(out, "                  {note}");
    }
    let sources: Vec<String> = config
        .sources
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let _ = writeln!(
        out,
        "config files:     {}",
        if sources.is_empty() {
            "none (built-in defaults)".to_string()
        } else {
            sources.join(", ")
        }
    );
    let mut servers: Vec<String> = Vec::new();
    let mut all = crate::lsp::servers::builtin();
    all.extend(config.lsp_servers.clone());
    for (name, s) in &all {
        let state = if crate::lsp::servers::on_path(&s.command) {
            "found"
        } else {
            "not installed"
        };
        servers.push(format!("{name} ({}: {state})", s.command));
    }
    let _ = writeln!(
        out,
        "language servers: {}{}",
        servers.join(", "),
        if config.project_trusted {
            ""
        } else {
            "; none starts here until the project is trusted"
        }
    );
    let mcp: Vec<String> = config
        .mcp_servers
        .iter()
        .map(|(n, s)| {
            format!(
                "{n} ({}{})",
                s.describe(),
                if s.enabled { "" } else { ", disabled" }
            )
        })
        .chain(
            config
                .mcp_ignored
                .iter()
                .map(|(n, _)| format!("{n} (the project's: ignored until trusted)")),
        )
        .collect();
    let _ = writeln!(
        out,
        "MCP servers:      {}",
        if mcp.is_empty() {
            "none".to_string()
        } else {
            mcp.join(", ")
        }
    );
    out
}

/// Each probe: what it tries, and what happened.
async fn probes(config: &Config) -> Vec<(String, String)> {
    let sandbox = config.sandbox();
    let ws = &config.workspace;
    let active = sandbox.active();
    // (what, path, create a file there or open an existing one, should the
    // sandbox refuse it)
    let mut checks: Vec<(String, PathBuf, bool, bool)> = Vec::new();
    if let Some(home) = &config.home {
        checks.push((
            "create a file in your home directory".into(),
            home.join(format!(".agent-doctor-{}", std::process::id())),
            true,
            active,
        ));
        checks.push((
            "create a file in ~/.cargo/bin".into(),
            home.join(format!(".cargo/bin/.agent-doctor-{}", std::process::id())),
            true,
            active,
        ));
    }
    let places = active && contain::namespaces_available();
    for (label, rel, create, refuse) in [
        (
            "create a hook in .git/hooks",
            ".git/hooks/.agent-doctor",
            true,
            places,
        ),
        ("change .git/config", ".git/config", false, places),
        (
            "change .agent/config.toml",
            ".agent/config.toml",
            false,
            places,
        ),
        (
            "create a file in the project",
            ".agent-doctor-probe",
            true,
            sandbox.mode == crate::shell::SandboxMode::ReadOnly,
        ),
    ] {
        checks.push((label.to_string(), ws.join(rel), create, refuse));
    }
    for dir in config.agent_files() {
        checks.push((
            format!("change agent's own files ({})", dir.display()),
            dir.join(".agent-doctor-probe"),
            true,
            active,
        ));
    }
    let mut out = Vec::new();
    for (label, path, create, should_refuse) in checks {
        let exists = if create {
            path.parent().is_some_and(Path::exists)
        } else {
            path.exists()
        };
        if !exists {
            out.push((label, "(not there)".to_string()));
            continue;
        }
        let p = shell_quote(&path);
        // Opening for append writes nothing to an existing file.
        let script = if create {
            format!("touch {p} && rm -f {p}")
        } else {
            format!(": >> {p}")
        };
        let verdict = verdict(run(&script, ws, &sandbox).await, should_refuse);
        out.push((label, verdict));
    }
    let signal = format!("kill -0 {}", std::process::id());
    let refuse = active && (crate::shell::Sandbox::abi() >= 6 || contain::namespaces_available());
    let v = verdict(run(&signal, ws, &sandbox).await, refuse);
    out.push(("signal the agent (kill -0)".into(), v));
    out
}

/// What a probe found, against what this sandbox should do.
fn verdict(ran: Option<bool>, should_refuse: bool) -> String {
    match (ran, should_refuse) {
        (None, _) => "could not be checked".into(),
        (Some(false), true) => "refused".into(),
        (Some(true), false) => "allowed".into(),
        (Some(true), true) => "ALLOWED, though it should not be".into(),
        (Some(false), false) => "refused (this mode or system does not allow it)".into(),
    }
}

/// Runs `script` in the sandbox: whether it succeeded (`None`: it could
/// not run, or did not end in time).
async fn run(script: &str, cwd: &Path, sandbox: &crate::shell::Sandbox) -> Option<bool> {
    let p = Process::spawn(script, cwd, sandbox).ok()?;
    let (exit, _) = p.wait(Some(Duration::from_secs(10))).await?;
    Some(exit == crate::shell::run::Exit::Code(0))
}

fn shell_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "'\\''"))
}
