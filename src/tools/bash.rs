//! `bash`: runs a command through `shell::run` in the workspace, inside the
//! sandbox, with a timeout; long commands move to the background as jobs.
//! Danger analysis, bans and scopes come from the gate (via `facts`), not
//! from here.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Effect, Preview, Tool, ToolContext, ToolError, render};
use crate::permission::{CallFacts, CommandSubject, Scope, Subjects};
use crate::shell::Analysis;
use crate::shell::run::{HEAD_BYTES, Process, TAIL_BYTES};

pub struct Bash;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct BashArgs {
    /// The command, e.g. `cargo test` or `git status`.
    command: String,
    /// Seconds before the command is stopped.
    timeout_secs: Option<u64>,
    /// Start it as a background job at once (servers, watchers).
    run_in_background: Option<bool>,
    /// What the command does, in a few words, for the person.
    description: Option<String>,
}

/// Limits of the bash tool, from config.
#[derive(Debug, Clone)]
pub struct BashLimits {
    pub default_timeout: Duration,
    pub max_timeout: Duration,
    pub background_after: Duration,
}

impl Default for BashLimits {
    fn default() -> Self {
        BashLimits {
            default_timeout: Duration::from_secs(120),
            max_timeout: Duration::from_secs(600),
            background_after: Duration::from_secs(60),
        }
    }
}

impl Tool for Bash {
    type Args = BashArgs;
    const NAME: &'static str = "bash";

    fn preview(&self) -> Preview {
        Preview::Tail
    }

    fn description(&self, ctx: &ToolContext) -> String {
        let l = &ctx.bash;
        let sandbox = match ctx.sandbox.mode {
            _ if !ctx.sandbox.active() => {
                "Commands run without an OS sandbox here: the person's approval is the only check on what they change."
            }
            crate::shell::SandboxMode::ReadOnly => {
                "Commands run inside a read-only OS sandbox: they can write only to the temp directory, so nothing that writes into the project (a build included) works."
            }
            _ => {
                "Commands run inside an OS sandbox that allows writes only inside the project, the temp directory and tool caches."
            }
        };
        render(
            include_str!("../../templates/bash.md"),
            &[
                ("default_timeout", l.default_timeout.as_secs().to_string()),
                ("max_timeout", l.max_timeout.as_secs().to_string()),
                ("background_after", l.background_after.as_secs().to_string()),
                ("max_output", (HEAD_BYTES + TAIL_BYTES).to_string()),
                ("head", HEAD_BYTES.to_string()),
                ("tail", TAIL_BYTES.to_string()),
                ("sandbox", sandbox.to_string()),
            ],
        )
    }

    fn effect(&self) -> Effect {
        Effect::Execute
    }

    fn paths(_: &BashArgs) -> Vec<&str> {
        Vec::new()
    }

    fn summary(args: &BashArgs) -> String {
        args.command.clone()
    }

    fn facts(&self, args: &BashArgs, ctx: &ToolContext) -> Result<CallFacts, ToolError> {
        let analysis = crate::shell::analyze(&args.command, &ctx.workspace.path_env(), &ctx.banned);
        let description = match &args.description {
            Some(d) if !d.trim().is_empty() => format!("run `{}` ({})", args.command, d.trim()),
            _ => format!("run `{}`", args.command),
        };
        Ok(CallFacts {
            tool: Self::NAME.to_string(),
            description,
            risk: analysis.risk.clone(),
            scope: scope(&analysis),
            needs_approval: !analysis.read_only,
            subjects: subjects(&analysis),
            banned: analysis.banned,
            protected: analysis.protected.clone(),
            outside_sandbox: None,
            diff: None,
        })
    }

    async fn run(&self, args: BashArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let limits = &ctx.bash;
        let started = Instant::now();
        let process = Process::spawn(&args.command, ctx.workspace.root(), &ctx.sandbox)
            .map_err(|e| ToolError::new(format!("could not start the command: {e}")))?;
        if args.run_in_background.unwrap_or(false) {
            let id = ctx.jobs.add(&args.command, process, started);
            return Ok(format!(
                "Started in the background as job {id}. Use `job_output` with id {id} to see its output, `job_kill` to stop it."
            ));
        }
        let timeout = args
            .timeout_secs
            .map_or(limits.default_timeout, Duration::from_secs)
            .min(limits.max_timeout)
            .max(Duration::from_secs(1));
        let to_background = limits.background_after < timeout;
        let first_wait = if to_background {
            limits.background_after
        } else {
            timeout
        };
        let finished = tokio::select! {
            r = process.wait(Some(first_wait)) => r,
            _ = ctx.cancel.cancelled() => {
                let stopped = process.kill().await;
                let output = process.take_output();
                return Err(ToolError::new(format!("{output}\nCancelled by the person: {}.", stopped.describe())));
            }
        };
        // It may have exited just as the deadline passed: then it finished.
        let finished = match finished {
            None if process.exit().is_some() => process.wait(None).await,
            other => other,
        };
        let Some((exit, stopped_leftovers)) = finished else {
            if to_background {
                let id = ctx.jobs.add(&args.command, process, started);
                return Ok(format!(
                    "Still running after {} s, so it moved to the background as job {id}. Use `job_output` with id {id} (and `wait`) to follow it, `job_kill` to stop it.",
                    limits.background_after.as_secs()
                ));
            }
            let stopped = process.kill().await;
            let output = process.take_output();
            return Err(ToolError::new(format!(
                "{output}\nTimed out after {} s: {}. Pass a larger `timeout_secs` (at most {}), or `run_in_background` for long-running work.",
                timeout.as_secs(),
                stopped.describe(),
                limits.max_timeout.as_secs()
            )));
        };
        let output = process.take_output();
        let mut text = if output.is_empty() {
            "(no output)\n".to_string()
        } else {
            output
        };
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!("[{exit}]"));
        if stopped_leftovers {
            text.push_str("\n[processes it left running in the background were stopped; use `run_in_background` to keep a process running]");
        }
        let failed = exit != crate::shell::run::Exit::Code(0);
        if failed && let Some(note) = ctx.sandbox.explain_failure(&text) {
            text.push('\n');
            text.push_str(&note);
        }
        if failed {
            Err(ToolError(text))
        } else {
            Ok(text)
        }
    }
}

/// What "for this session" covers: each part that needs approval by its
/// prefix, and the files it writes by redirection; nothing when a program
/// could not be known.
fn scope(a: &Analysis) -> Scope {
    if a.unknown.is_some() {
        return Scope::None;
    }
    let mut prefixes: Vec<String> = Vec::new();
    let mut files = Vec::new();
    let mut exact = true;
    for p in a
        .parts
        .iter()
        .filter(|p| p.needs_approval || !p.files.is_empty())
    {
        if !prefixes.contains(&p.prefix) {
            prefixes.push(p.prefix.clone());
        }
        for f in &p.files {
            if !files.contains(f) {
                files.push(f.clone());
            }
        }
        exact &= !p.outside;
    }
    if prefixes.iter().all(String::is_empty) && files.is_empty() {
        return Scope::None;
    }
    Scope::Commands {
        prefixes,
        files,
        exact,
    }
}

/// Everything the command's parts read, write, reach and run, for rules.
fn subjects(a: &Analysis) -> Subjects {
    let mut s = Subjects::default();
    for p in &a.parts {
        s.reads.extend(p.reads.iter().cloned());
        s.trees.extend(p.trees.iter().cloned());
        s.writes.extend(p.writes.iter().cloned());
        s.writes.extend(p.files.iter().cloned());
        s.write_trees.extend(p.write_trees.iter().cloned());
        s.hosts
            .extend(p.hosts.iter().map(|h| crate::permission::normalize_host(h)));
        s.unknown_reads |= p.unknown_reads;
        s.unknown_writes |= p.unknown_writes;
        s.unknown_hosts |= p.unknown_hosts;
        s.commands.push(CommandSubject {
            text: p.text.clone(),
            canonical: p.canonical.clone(),
            aliases: p.aliases.clone(),
            assignments: p.assignments.clone(),
            known: p.program_known,
            needs_approval: p.needs_approval,
            files: p.files.clone(),
        });
    }
    s
}
