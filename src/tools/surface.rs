//! The Surface: the only place tools are registered, looked up, filtered and
//! dispatched. `call` runs the fixed steps of every tool call: look up, parse
//! and validate arguments, ask the tool for the call's facts (paths resolved,
//! risk, scope), let the permission gate decide, run. Every failure becomes a [`ToolResult`] the
//! model can act on; nothing here panics the agent.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::dyn_tool::{DynTool, PreparedCall, SCHEMA_HINT, parse_arguments};
use super::external::ExternalTools;
use super::{
    After, Effect, Preview, Tool, ToolContext, ToolError, bash, edit, fetch, glob, grep, jobs, ls,
    lsp_tools, multiedit, subagent, todos, view, write,
};
use crate::hooks::{self, Event, HookCall, Hooks};
use crate::llm::ToolSpec;
use crate::permission::{CallFacts, Decision, Gate, HookWord, Judgment, Risk};

/// A call as the model made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// Raw JSON text, possibly malformed.
    pub arguments: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    pub call_id: String,
    pub content: String,
    pub is_error: bool,
    /// The unified diff of a file change that happened, for front ends.
    pub diff: Option<String>,
    /// The gate refused the call (a rule, a ban, a hook, or the person).
    pub denied: bool,
    /// For the person, not the model: hooks that failed, hooks' messages.
    pub notices: Vec<String>,
    /// A hook ended the turn, with this reason.
    pub halt: Option<String>,
}

/// A call looked up, its arguments parsed and validated, once
/// ([`Surface::prepare`]): its summary, preview and whether it only reads
/// come from here, and [`Surface::run`] runs it.
pub struct Prepared {
    call: ToolCall,
    tool: Option<Arc<dyn DynTool>>,
    /// The tool, the arguments as parsed and the validated call, or why not.
    ready: Result<Ready, ToolError>,
}

struct Ready {
    tool: Arc<dyn DynTool>,
    args: Value,
    call: Box<dyn PreparedCall>,
}

impl Prepared {
    pub fn call(&self) -> &ToolCall {
        &self.call
    }

    /// A one-line human summary (the file, the pattern, the command), for
    /// front ends; the raw arguments when they do not parse.
    pub fn summary(&self) -> String {
        match &self.ready {
            Ok(r) => r.call.summary(),
            Err(_) => crate::text::cut_line(&self.call.arguments, 120),
        }
    }

    /// How front ends preview the result.
    pub fn preview(&self) -> Preview {
        self.tool.as_ref().map_or(Preview::Head, |t| t.preview())
    }

    /// Whether the call may run side by side with other such calls
    /// ([`Effect::concurrent`]). A tool not known yet runs alone: its MCP
    /// server may still be starting, and what it does is not known.
    pub fn concurrent(&self) -> bool {
        self.tool.as_ref().is_some_and(|t| t.effect().concurrent())
    }
}

/// Largest file a command's snapshot keeps for undo.
const KEEP_MAX: u64 = 16 * 1024 * 1024;

/// Keeps the content of the files a command will write (as far as the
/// analysis knows them: `sed -i f`, `> f`, `rm f`, `mv a b`); returns the
/// history's sequence numbers. Best effort: a path only known at run time,
/// a directory, or a file over [`KEEP_MAX`] is not kept.
fn keep_for_undo(
    history: &super::history::FileHistory,
    writes: &[std::path::PathBuf],
) -> Vec<(u64, std::path::PathBuf)> {
    let mut kept = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for path in writes {
        if !seen.insert(path) {
            continue;
        }
        let existed = match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_file() && m.len() <= KEEP_MAX => true,
            Ok(_) => continue,
            Err(_) => false,
        };
        match history.record_copy(path, existed) {
            Ok(seq) => kept.push((seq, path.clone())),
            Err(e) => crate::log::log(&format!("could not keep {} for undo: {e}", path.display())),
        }
    }
    kept
}

/// What hooks added to a call on the way.
#[derive(Default)]
struct HookEffects {
    context: Vec<String>,
    notices: Vec<String>,
    halt: Option<String>,
}

/// Why a call produced no output: the gate refused it, or it failed.
enum Refusal {
    Denied(String),
    Failed(ToolError),
}

impl From<ToolError> for Refusal {
    fn from(e: ToolError) -> Refusal {
        Refusal::Failed(e)
    }
}

pub struct Surface {
    tools: BTreeMap<&'static str, Arc<dyn DynTool>>,
    /// Tools that join while the session runs (MCP servers).
    external: Arc<ExternalTools>,
    ctx: ToolContext,
    gate: Arc<Gate>,
    hooks: Option<Arc<Hooks>>,
}

impl Surface {
    /// The full set of tools, as the binary and the tests use it.
    pub fn new(mut ctx: ToolContext, gate: Arc<Gate>) -> Surface {
        // Deny rules never change in a session ("always" only adds allows).
        ctx.rules = Arc::new(gate.rules());
        let mut s = Surface {
            tools: BTreeMap::new(),
            external: Arc::default(),
            ctx,
            gate,
            hooks: None,
        };
        s.register(view::View);
        s.register(ls::Ls);
        s.register(glob::Glob);
        s.register(grep::Grep);
        s.register(write::Write);
        s.register(edit::Edit);
        s.register(multiedit::MultiEdit);
        s.register(bash::Bash);
        s.register(jobs::JobOutput);
        s.register(jobs::JobKill);
        s.register(lsp_tools::Diagnostics);
        s.register(lsp_tools::References);
        s.register(lsp_tools::LspRestart);
        s.register(todos::Todos);
        s.register(fetch::Fetch);
        s.register(subagent::SubAgent);
        s.ctx.read_only_tools = Arc::new(
            s.tools
                .iter()
                .filter(|(_, t)| t.effect() == Effect::Read)
                .map(|(name, _)| *name)
                .collect(),
        );
        s
    }

    /// A sub-agent's Surface: only the tools whose effect is
    /// [`Effect::Read`], no hooks, no `agent`.
    pub fn read_only(ctx: ToolContext, gate: Arc<Gate>) -> Surface {
        let mut s = Surface::new(ctx, gate);
        s.tools.retain(|_, t| t.effect() == Effect::Read);
        s
    }

    /// Runs the person's PreToolUse / PostToolUse hooks around every call.
    pub fn with_hooks(mut self, hooks: Hooks) -> Surface {
        self.hooks = Some(Arc::new(hooks));
        self
    }

    fn register<T: Tool>(&mut self, tool: T) {
        self.tools.insert(T::NAME, Arc::new(tool));
    }

    pub fn context(&self) -> &ToolContext {
        &self.ctx
    }

    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    /// Where tools from outside (MCP servers) join this Surface.
    pub fn external(&self) -> &Arc<ExternalTools> {
        &self.external
    }

    /// Changes when tools join or leave; [`Surface::specs`] and
    /// [`Surface::notes`] are worth asking again only then.
    pub fn generation(&self) -> u64 {
        self.external.generation()
    }

    /// Text for the system prompt from the sources of external tools (how
    /// to use them), one block per source.
    pub fn notes(&self) -> Vec<String> {
        self.external.notes()
    }

    /// What the gate would decide for a call, without running it
    /// (`agent permissions check`).
    pub fn judge(&self, call: &ToolCall) -> Result<(CallFacts, Judgment), ToolError> {
        let facts = self.prepare(call).ready?.call.facts(&self.ctx)?;
        let judgment = self.gate.judge(&facts, HookWord::Silent);
        Ok((facts, judgment))
    }

    fn lookup(&self, name: &str) -> Result<Arc<dyn DynTool>, ToolError> {
        match self.tools.get(name) {
            Some(t) => Ok(Arc::clone(t)),
            None => self.external.get(name).ok_or_else(|| {
                ToolError::new(format!(
                    "unknown tool `{name}`; available tools: {}",
                    self.names().join(", ")
                ))
            }),
        }
    }

    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.tools.keys().map(|n| n.to_string()).collect();
        names.extend(self.external.names());
        names
    }

    pub fn specs(&self) -> Vec<ToolSpec> {
        let mut specs: Vec<ToolSpec> = self.tools.values().map(|t| t.spec(&self.ctx)).collect();
        specs.extend(self.external.specs(&self.ctx));
        specs
    }

    /// Looks the call's tool up and parses and validates its arguments,
    /// once for everything that follows.
    pub fn prepare(&self, call: &ToolCall) -> Prepared {
        let tool = self.lookup(&call.name);
        let ready = tool.clone().and_then(|tool| {
            let args = parse_arguments(&call.name, &call.arguments)?;
            let call = Arc::clone(&tool).prepare(args.clone())?;
            Ok(Ready { tool, args, call })
        });
        Prepared {
            call: call.clone(),
            tool: tool.ok(),
            ready,
        }
    }

    /// Runs one call through every step. `cancel` is the turn's token:
    /// cancelling it unblocks a waiting approval (as denied) and stops the
    /// tool.
    pub async fn call(&self, call: &ToolCall, cancel: &CancellationToken) -> ToolResult {
        self.run(self.prepare(call), cancel, None).await
    }

    /// Runs a prepared call through every step, its progress reports sent
    /// to `progress`.
    pub async fn run(
        &self,
        prepared: Prepared,
        cancel: &CancellationToken,
        progress: Option<tokio::sync::mpsc::UnboundedSender<(String, super::ProgressEvent)>>,
    ) -> ToolResult {
        let call = prepared.call.clone();
        let call = &call;
        let mut ctx = self.ctx.clone();
        ctx.cancel = cancel.clone();
        if let Some(tx) = progress {
            ctx.progress = super::Progress::new(&call.id, tx);
        }
        // A call to a tool of a source still starting waits for it.
        let prepared = if self.tools.contains_key(call.name.as_str()) {
            prepared
        } else {
            self.external.settle(&call.name, cancel).await;
            match prepared.tool {
                Some(_) => prepared,
                None => self.prepare(call),
            }
        };
        let mut effects = HookEffects::default();
        let outcome = AssertUnwindSafe(self.dispatch(prepared, ctx, &mut effects))
            .catch_unwind()
            .await
            .unwrap_or_else(|panic| {
                let what = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("unknown panic");
                Err(Refusal::Failed(ToolError::new(format!(
                    "the `{}` tool crashed ({what}); this is a bug in agent. Try another way.",
                    call.name
                ))))
            });
        let (mut content, is_error, diff, denied) = match outcome {
            Ok((text, diff)) => (text, false, diff, false),
            Err(Refusal::Denied(text)) => (text, true, None, true),
            Err(Refusal::Failed(e)) => (e.0, true, None, false),
        };
        for c in &effects.context {
            content.push_str("\n\nContext from a hook:\n");
            content.push_str(c);
        }
        ToolResult {
            call_id: call.id.clone(),
            content,
            is_error,
            diff,
            denied,
            notices: effects.notices,
            halt: effects.halt,
        }
    }

    async fn dispatch(
        &self,
        prepared: Prepared,
        ctx: ToolContext,
        effects: &mut HookEffects,
    ) -> Result<(String, Option<String>), Refusal> {
        let Prepared { call, ready, .. } = prepared;
        let call = &call;
        let Ready {
            tool,
            args,
            call: mut prepared,
        } = ready?;
        let tool = &tool;
        let hooked = |event| self.hooks.as_deref().filter(|h| h.any(event, &call.name));
        let (pre, post) = (hooked(Event::PreToolUse), hooked(Event::PostToolUse));
        // The call as hooks see it; after a rewrite, the call that runs.
        let mut input = (pre.is_some() || post.is_some())
            .then(|| hooks::hook_input(&call.name, &args, &|p| ctx.workspace.absolute(p)));
        let (facts, hook) = match (pre, &mut input) {
            (Some(hooks), Some(input)) => {
                let mut verdict = self
                    .run_hooks(hooks, Event::PreToolUse, call, input, None, &ctx.cancel)
                    .await;
                effects.notices.append(&mut verdict.notices);
                effects.context.append(&mut verdict.context);
                effects.halt.clone_from(&verdict.halt);
                self.apply_pre_verdict(call, tool, &mut prepared, verdict, input, &ctx)?
            }
            _ => (prepared.facts(&ctx)?, HookWord::Silent),
        };
        self.gate
            .check(&facts, &call.id, hook, &ctx.cancel)
            .await
            .map_err(|d| Refusal::Denied(d.0))?;
        if ctx.cancel.is_cancelled() {
            return Err(Refusal::Denied(
                "cancelled by the person before it ran".into(),
            ));
        }
        let lsp = ctx.lsp.clone();
        let display_ctx = ctx.workspace.clone();
        let cancel = ctx.cancel.clone();
        // A command changes files the file tools' history does not see:
        // the ones the analysis names are kept first, so undo covers them.
        let history = Arc::clone(&ctx.history);
        let kept = if tool.effect() == Effect::Execute {
            keep_for_undo(&history, &facts.subjects.writes)
        } else {
            Vec::new()
        };
        // What a command writes (as far as it is known) is the agent's own
        // change, not someone else's: noted before and after it runs.
        let note_own = |lsp: &Option<Arc<crate::lsp::LspManager>>| {
            if let Some(lsp) = lsp
                && tool.effect() == Effect::Execute
            {
                for p in &facts.subjects.writes {
                    lsp.own_writes.note_command(p);
                }
            }
        };
        note_own(&lsp);
        let ran = prepared.run(ctx).await;
        note_own(&lsp);
        for (seq, path) in kept {
            let now = std::fs::read(&path).ok();
            if let Err(e) = history.landed(seq, now.as_deref()) {
                crate::log::log(&format!("file history: {e}"));
            }
        }
        if let (Some(hooks), Some(input)) = (post, &input) {
            let response = match &ran {
                Ok(text) => serde_json::json!({"content": text, "is_error": false}),
                Err(e) => serde_json::json!({"content": e.0, "is_error": true}),
            };
            let mut v = self
                .run_hooks(
                    hooks,
                    Event::PostToolUse,
                    call,
                    input,
                    Some(&response),
                    &cancel,
                )
                .await;
            effects.notices.append(&mut v.notices);
            if v.decision == Some(Decision::Deny) {
                effects.context.push(format!(
                    "A PostToolUse hook objected to this call (it already ran): {}",
                    v.reason("no reason given")
                ));
            }
            effects.context.extend(v.context);
            effects.halt = effects.halt.take().or(v.halt);
        }
        let mut text = ran?;
        // After-effects: language servers see what was read or changed.
        if let Some(lsp) = lsp {
            // A command may have changed or deleted any open document.
            if tool.effect() == Effect::Execute {
                lsp.resync_open();
            }
            match tool.after() {
                After::Nothing => {}
                After::Open => {
                    for p in &facts.subjects.reads {
                        lsp.open(p);
                    }
                }
                After::Diagnose => {
                    let display = |p: &std::path::Path| display_ctx.display(p);
                    for p in &facts.subjects.writes {
                        if let Some(report) = lsp.after_change(p, &display).await {
                            text.push_str("\n\n");
                            text.push_str(&report);
                        }
                    }
                }
            }
        }
        Ok((text, facts.diff))
    }
}

impl Surface {
    fn permission_mode(&self) -> &'static str {
        if self.gate.yolo() {
            "bypassPermissions"
        } else {
            "default"
        }
    }

    async fn run_hooks(
        &self,
        hooks: &Hooks,
        event: Event,
        call: &ToolCall,
        input: &serde_json::Map<String, Value>,
        response: Option<&Value>,
        cancel: &CancellationToken,
    ) -> hooks::Verdict {
        let hook_call = HookCall {
            tool: &call.name,
            id: &call.id,
            input,
            permission_mode: self.permission_mode(),
        };
        hooks.run(event, &hook_call, response, cancel).await
    }

    /// Applies what PreToolUse hooks decided: a halt or a denial is the
    /// result; a rewrite is validated and judged afresh; allow and ask go
    /// to the gate with this call. Returns the facts the gate judges and
    /// the hooks' word on them; after a rewrite, `input` is the new call as
    /// hooks see it.
    fn apply_pre_verdict(
        &self,
        call: &ToolCall,
        tool: &Arc<dyn DynTool>,
        prepared: &mut Box<dyn PreparedCall>,
        verdict: hooks::Verdict,
        input: &mut serde_json::Map<String, Value>,
        ctx: &ToolContext,
    ) -> Result<(CallFacts, HookWord), Refusal> {
        if let Some(reason) = verdict.halt {
            return Err(Refusal::Denied(format!(
                "A PreToolUse hook stopped the turn before this `{}` call ran: {reason}",
                call.name
            )));
        }
        if verdict.decision == Some(Decision::Deny) {
            return Err(Refusal::Denied(format!(
                "A PreToolUse hook blocked this `{}` call: {}. Do not retry it unchanged; choose another way, or tell the person what you needed.",
                call.name,
                verdict.reason("no reason given")
            )));
        }
        let rewritten = verdict.updated_input.is_some();
        if let Some(new) = verdict.updated_input {
            let args = hooks::rewritten_args(&call.name, new, input);
            *prepared = Arc::clone(tool).prepare(args.clone()).map_err(|e| {
                ToolError::new(format!(
                    "A PreToolUse hook rewrote this call's arguments, and the rewrite is invalid: {}. \
                     The person's hook configuration is at fault, not your call, so retrying will not help: \
                     tell the person, and go on without this call.",
                    e.0.trim_end_matches(SCHEMA_HINT).trim_end_matches('.')
                ))
            })?;
            *input = hooks::hook_input(&call.name, &args, &|p| ctx.workspace.absolute(p));
        }
        let facts = prepared.facts(ctx)?;
        // An allow covers a rewrite only when the hook that rewrote said
        // it (others judged the call as the model made it), and never one
        // that made the call HIGH risk: that is put to the person.
        let allow_counts = !rewritten || verdict.rewriter_allowed && facts.risk.level != Risk::High;
        let word = match verdict.decision {
            Some(Decision::Allow) if allow_counts => HookWord::Allow,
            Some(Decision::Ask) => HookWord::Ask,
            _ => HookWord::Silent,
        };
        Ok((facts, word))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use tokio_util::sync::CancellationToken;

    use super::*;

    /// A --yolo Surface on `root` with a watching language-server manager.
    fn yolo_surface(root: &std::path::Path) -> (Surface, Arc<crate::lsp::LspManager>) {
        let gate = Gate::new(
            crate::permission::GateConfig {
                rules: crate::permission::RuleSet::default(),
                yolo: true,
                workspace: root.to_path_buf(),
                always_file: root.join("unused.toml"),
            },
            Arc::new(crate::headless::HeadlessApprover),
        );
        let lsp = Arc::new(crate::lsp::LspManager::new(
            Default::default(),
            root.to_path_buf(),
            root.join("data"),
            Default::default(),
        ));
        let ctx = ToolContext::new(
            crate::tools::Workspace::new(root.to_path_buf()),
            Vec::new(),
            CancellationToken::new(),
        )
        .with_lsp(Arc::clone(&lsp));
        (Surface::new(ctx, Arc::new(gate)), lsp)
    }

    fn gate(root: &std::path::Path) -> Arc<Gate> {
        Arc::new(Gate::new(
            crate::permission::GateConfig {
                rules: crate::permission::RuleSet::default(),
                yolo: false,
                workspace: root.to_path_buf(),
                always_file: root.join("unused.toml"),
            },
            Arc::new(crate::headless::HeadlessApprover),
        ))
    }

    fn description(surface: &Surface, tool: &str) -> String {
        surface
            .specs()
            .into_iter()
            .find(|s| s.name == tool)
            .map(|s| s.description)
            .unwrap()
    }

    #[test]
    fn the_bash_description_shows_the_sessions_limits_and_sandbox() {
        let root = std::path::Path::new("/w");
        let ctx = || {
            ToolContext::new(
                crate::tools::Workspace::new(root.to_path_buf()),
                Vec::new(),
                CancellationToken::new(),
            )
        };
        let limits = crate::tools::BashLimits {
            default_timeout: Duration::from_secs(7),
            max_timeout: Duration::from_secs(70),
            background_after: Duration::from_secs(33),
        };
        let off = Surface::new(ctx().with_bash_limits(limits), gate(root));
        let text = description(&off, "bash");
        assert!(
            text.contains("`timeout_secs`: default 7, at most 70.")
                && text.contains("after 33 seconds"),
            "{text}"
        );
        assert!(text.contains("without an OS sandbox"), "{text}");
        let sandbox =
            crate::shell::Sandbox::new(crate::shell::SandboxMode::WorkspaceWrite, root, None, &[]);
        let on = Surface::new(ctx().with_sandbox(sandbox), gate(root));
        let text = description(&on, "bash");
        assert!(
            text.contains("`timeout_secs`: default 120, at most 600."),
            "{text}"
        );
        let expected = if crate::shell::Sandbox::supported() {
            "inside an OS sandbox that allows writes only inside the project"
        } else {
            "without an OS sandbox"
        };
        assert!(text.contains(expected), "{text}");
    }

    #[test]
    fn a_sub_agent_gets_exactly_the_tools_that_read() {
        let root = std::path::Path::new("/w");
        let ctx = ToolContext::new(
            crate::tools::Workspace::new(root.to_path_buf()),
            Vec::new(),
            CancellationToken::new(),
        );
        let reading = ["diagnostics", "glob", "grep", "ls", "references", "view"];
        let child = Surface::read_only(ctx.clone(), gate(root));
        assert_eq!(child.names(), reading);
        let full = Surface::new(ctx, gate(root));
        assert!(
            description(&full, "agent").contains(&reading.join(", ")),
            "{}",
            description(&full, "agent")
        );
        let concurrent: Vec<String> = full
            .names()
            .into_iter()
            .filter(|n| {
                let call = ToolCall {
                    id: "c".into(),
                    name: n.clone(),
                    arguments: "{}".into(),
                };
                full.prepare(&call).concurrent()
            })
            .collect();
        let mut expected: Vec<&str> = reading.to_vec();
        expected.insert(0, "agent");
        assert_eq!(
            concurrent, expected,
            "todos, jobs and lsp_restart run alone"
        );
        let unknown = ToolCall {
            id: "u".into(),
            name: "mcp_late_write".into(),
            arguments: "{}".into(),
        };
        assert!(
            !full.prepare(&unknown).concurrent(),
            "a tool not known yet (its server may be starting) runs alone"
        );
    }

    #[tokio::test]
    async fn a_commands_own_writes_are_not_changes_made_outside() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (surface, lsp) = yolo_surface(&root);
        lsp.watch();
        let mut changes = lsp.external_changes.subscribe();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let call = ToolCall {
            id: "b".into(),
            name: "bash".into(),
            arguments: r#"{"command": "echo mine > mine.txt"}"#.into(),
        };
        let r = surface.call(&call, &CancellationToken::new()).await;
        assert!(!r.is_error, "{}", r.content);
        std::fs::write(root.join("theirs.txt"), "x").unwrap();
        let got = tokio::time::timeout(Duration::from_secs(3), changes.recv())
            .await
            .expect("no change announced")
            .unwrap();
        assert_eq!(got, vec![root.join("theirs.txt")]);
    }
}
