//! Tools the model can call, and the one [`Surface`] that registers, looks up
//! and dispatches them. A tool declares facts about itself (name, schema,
//! [`Effect`], the paths a call touches) and does its work; validation, the
//! workspace boundary and (later) permission are steps of `Surface::call`,
//! never inside a tool.

mod bash;
mod dyn_tool;
mod edit;
mod external;
mod fetch;
mod files;
pub use files::{Journal, clean_project, read_project_file};
mod glob;
mod grep;
pub mod history;
mod jobs;
mod ls;
mod lsp_tools;
mod multiedit;
mod schema;
mod subagent;
mod surface;
mod todos;
mod tracker;
mod view;
pub mod workspace;
mod write;

use std::future::Future;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use crate::permission::{CallFacts, RiskAssessment, Scope, Subjects};
use crate::shell::paths::Place;
use crate::shell::{Ban, Sandbox};

pub use bash::BashLimits;
pub use external::{ExternalTool, ExternalTools};
pub use subagent::Delegate;
pub use surface::{Prepared, Surface, ToolCall, ToolResult};
pub use tracker::{FileStamp, ReadTracker};
pub use workspace::Workspace;

/// What a tool does to the world: one declared fact, from which follow
/// which calls may run side by side ([`Effect::concurrent`]) and which
/// tools a sub-agent gets (the `Read` ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Reads files or language servers and changes nothing.
    Read,
    /// Changes only the session's own state (its task list, its background
    /// jobs, its language servers); runs alone, in order.
    Session,
    /// Runs a sub-agent, which only reads.
    Delegate,
    Write,
    Execute,
    Network,
}

impl Effect {
    /// Whether calls may run side by side with other such calls: reads,
    /// and sub-agents (which only read).
    pub fn concurrent(self) -> bool {
        matches!(self, Effect::Read | Effect::Delegate)
    }
}

/// How a front end shows a result while its cell is collapsed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Preview {
    /// The first lines.
    #[default]
    Head,
    /// The last lines: a command's end says the most.
    Tail,
    /// All of it, as a checklist (`[x]` done, `[>]` current, `[ ]` to do).
    Checklist,
    /// A file's numbered lines (`N<tab>text`): the first lines, the text
    /// highlighted by the language of the file the summary names.
    Numbered,
}

/// An after-effect of a successful call, on the paths it touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum After {
    Nothing,
    /// Open the files in their language servers (reads).
    Open,
    /// Send the new text and append the diagnostics it caused (changes).
    Diagnose,
}

/// An error the model can act on. The message says what to do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError(pub String);

impl ToolError {
    pub fn new(message: impl Into<String>) -> ToolError {
        ToolError(message.into())
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a running call reports before its result: a sub-agent's steps and
/// the tokens they cost.
#[derive(Debug, Clone, PartialEq)]
pub enum ProgressEvent {
    Step(String),
    Usage(crate::llm::Usage),
}

/// Where a call reports progress, tagged with its call id; nowhere when
/// the caller does not listen.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    call_id: String,
    tx: Option<tokio::sync::mpsc::UnboundedSender<(String, ProgressEvent)>>,
}

impl Progress {
    pub fn new(
        call_id: &str,
        tx: tokio::sync::mpsc::UnboundedSender<(String, ProgressEvent)>,
    ) -> Progress {
        Progress {
            call_id: call_id.to_string(),
            tx: Some(tx),
        }
    }

    pub fn send(&self, event: ProgressEvent) {
        if let Some(tx) = &self.tx {
            // A caller that stopped listening loses nothing it needs.
            let _ = tx.send((self.call_id.clone(), event));
        }
    }
}

/// What every tool call can use.
#[derive(Clone)]
pub struct ToolContext {
    pub workspace: Arc<Workspace>,
    pub tracker: Arc<ReadTracker>,
    pub cancel: CancellationToken,
    /// Commands the shell never runs (from config).
    pub banned: Arc<Vec<Ban>>,
    pub sandbox: Arc<Sandbox>,
    pub bash: Arc<BashLimits>,
    /// Background jobs of this session; dropping the last context stops them.
    pub jobs: Arc<jobs::Jobs>,
    pub locks: Arc<files::FileLocks>,
    /// The session's language servers, when any are configured.
    pub lsp: Option<Arc<crate::lsp::LspManager>>,
    /// Previous contents of changed files (for undo).
    pub history: Arc<history::FileHistory>,
    /// The model's task list (`todos`).
    pub todos: Arc<todos::TodoList>,
    /// Runs sub-agents (`agent`); `None` inside a sub-agent.
    pub delegate: Option<Arc<dyn Delegate>>,
    /// This call's progress reports.
    pub progress: Progress,
    /// The gate's rules (set by the Surface): walks (`grep`, `glob`, `ls`)
    /// leave out what deny rules forbid reading.
    pub rules: Arc<crate::permission::RuleSet>,
    /// The tools whose effect is [`Effect::Read`] (set by the Surface):
    /// what a sub-agent gets.
    pub read_only_tools: Arc<Vec<&'static str>>,
}

impl ToolContext {
    pub fn new(workspace: Workspace, banned: Vec<Ban>, cancel: CancellationToken) -> ToolContext {
        ToolContext {
            workspace: Arc::new(workspace),
            tracker: Arc::new(ReadTracker::default()),
            cancel,
            banned: Arc::new(banned),
            sandbox: Arc::new(Sandbox::off()),
            bash: Arc::new(BashLimits::default()),
            jobs: Arc::default(),
            locks: Arc::default(),
            lsp: None,
            history: Arc::new(history::FileHistory::new(None)),
            todos: Arc::default(),
            delegate: None,
            progress: Progress::default(),
            rules: Arc::default(),
            read_only_tools: Arc::default(),
        }
    }

    /// A directory walk with the project's rules (see [`workspace::walker`])
    /// that also leaves out what deny rules forbid reading: `grep` over
    /// the project never opens a denied file.
    pub fn walker(&self, path: &std::path::Path) -> ignore::WalkBuilder {
        let mut w = workspace::walker(path);
        let rules = Arc::clone(&self.rules);
        if rules.denies_reads() {
            w.filter_entry(move |e| {
                !workspace::skipped(e.file_name()) && !rules.denies_read(e.path())
            });
        }
        w
    }

    /// Lets the `agent` tool start sub-agents through `delegate`.
    pub fn with_delegate(mut self, delegate: Arc<dyn Delegate>) -> ToolContext {
        self.delegate = Some(delegate);
        self
    }

    /// The context a sub-agent's tools get: the same project, language
    /// servers and limits, but its own read tracker (its reads do not let
    /// the parent edit files the parent never saw) and no sub-agents.
    pub fn for_sub_agent(&self) -> ToolContext {
        ToolContext {
            tracker: Arc::new(ReadTracker::default()),
            todos: Arc::default(),
            delegate: None,
            progress: Progress::default(),
            ..self.clone()
        }
    }

    pub fn with_lsp(mut self, lsp: Arc<crate::lsp::LspManager>) -> ToolContext {
        self.lsp = Some(lsp);
        self
    }

    /// Keeps previous file contents under `dir`.
    pub fn with_history(mut self, dir: std::path::PathBuf) -> ToolContext {
        self.history = Arc::new(history::FileHistory::new(Some(dir)));
        self
    }

    pub fn with_sandbox(mut self, sandbox: Sandbox) -> ToolContext {
        self.sandbox = Arc::new(sandbox);
        self
    }

    pub fn with_bash_limits(mut self, limits: BashLimits) -> ToolContext {
        self.bash = Arc::new(limits);
        self
    }
}

/// A tool, with typed arguments. `Surface` turns it into a [`DynTool`].
pub trait Tool: Send + Sync + 'static {
    /// Arguments as the model sends them; their JSON schema is what the model sees.
    type Args: DeserializeOwned + schemars::JsonSchema + Send + 'static;
    const NAME: &'static str;

    /// The text the model reads, with limits filled in from the code and
    /// the session's settings.
    fn description(&self, ctx: &ToolContext) -> String;
    fn effect(&self) -> Effect;
    /// Paths this call reads or writes, as the model gave them.
    fn paths(args: &Self::Args) -> Vec<&str>;
    /// What the Surface does after a successful call: nothing, open the
    /// files in their language servers, or append the servers' diagnostics.
    fn after(&self) -> After {
        After::Nothing
    }
    /// How front ends preview its results.
    fn preview(&self) -> Preview {
        Preview::Head
    }
    /// One line for a person: the file, the pattern, the command.
    fn summary(args: &Self::Args) -> String {
        Self::paths(args).join(", ")
    }
    /// What the permission gate needs to know about a call. The default
    /// suits tools that only read: no approval inside the workspace.
    /// An `Err` here is the call's result, before anyone is asked (an
    /// edit that cannot apply is not put to the person).
    fn facts(&self, args: &Self::Args, ctx: &ToolContext) -> Result<CallFacts, ToolError> {
        Ok(read_facts(Self::NAME, &Self::paths(args), ctx))
    }
    fn run(
        &self,
        args: Self::Args,
        ctx: &ToolContext,
    ) -> impl Future<Output = Result<String, ToolError>> + Send;
}

/// Facts for a call that only reads `paths` (the workspace root when none).
pub(crate) fn read_facts(tool: &str, paths: &[&str], ctx: &ToolContext) -> CallFacts {
    let ws = &ctx.workspace;
    let env = ws.path_env();
    let abs: Vec<std::path::PathBuf> = if paths.is_empty() {
        vec![ws.root().to_path_buf()]
    } else {
        paths.iter().map(|p| ws.absolute(p)).collect()
    };
    let mut risk = RiskAssessment::low("reads inside the project");
    let mut needs_approval = false;
    for p in &abs {
        match env.place(p) {
            Place::Workspace | Place::Harmless => {}
            _ if p == ws.root() => {}
            Place::Secret(why) => {
                needs_approval = true;
                risk.raise(RiskAssessment::high(format!(
                    "reads {why} ({})",
                    p.display()
                )));
            }
            _ => {
                needs_approval = true;
                risk.raise(RiskAssessment::medium(format!(
                    "reads outside the project ({})",
                    p.display()
                )));
            }
        }
    }
    let shown: Vec<String> = abs.iter().map(|p| ws.display(p)).collect();
    CallFacts {
        tool: tool.to_string(),
        description: format!("{tool} {}", shown.join(", ")),
        risk,
        scope: Scope::Reads { paths: abs.clone() },
        needs_approval,
        subjects: Subjects {
            reads: abs,
            ..Subjects::default()
        },
        banned: None,
        protected: None,
        outside_sandbox: None,
        diff: None,
    }
}

/// Fills `{{name}}` placeholders of a description template.
pub(crate) fn render(template: &str, values: &[(&str, String)]) -> String {
    let mut out = template.trim().to_string();
    for (name, value) in values {
        out = out.replace(&format!("{{{{{name}}}}}"), value);
    }
    out
}

/// Runs blocking file-system work off the async threads.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::new(format!("the tool stopped unexpectedly: {e}")))?
}
