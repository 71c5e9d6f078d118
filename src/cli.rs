//! Command-line arguments. Parsing only: `main.rs` decides what to run.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

/// A terminal coding agent: chat with an LLM that reads, searches and
/// (with your approval) changes the project in the current directory.
#[derive(Debug, Parser)]
#[command(name = "agent", version, about, long_about = None)]
pub struct Cli {
    /// Run one task without the interactive UI and print the final answer.
    /// Use `-p -` (or pipe the prompt on standard input) to read it from
    /// stdin. As in Claude Code, `-p` may also stand alone with the prompt
    /// given as the last argument (`agent -p --output-format json "task"`).
    #[arg(
        short = 'p',
        long = "print",
        value_name = "PROMPT",
        num_args = 0..=1,
        default_missing_value = ""
    )]
    pub prompt: Option<String>,

    /// Open the interactive interface and send this prompt first.
    #[arg(value_name = "PROMPT")]
    pub initial: Option<String>,

    /// Output of a headless run: the final text, one JSON object, or one JSON
    /// event per line as things happen.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output_format: OutputFormat,

    /// Where a headless run's prompts come from: the prompt, or one user
    /// message per line of stdin as JSON (`stream-json`, Claude Code's
    /// form), each a turn of the same session.
    #[arg(long, value_enum, default_value_t = InputFormat::Text)]
    pub input_format: InputFormat,

    /// With `--output-format stream-json`: also every event as it happens
    /// (text deltas, tool calls, retries, compaction), each in a
    /// `stream_event` message, as Claude Code names the option.
    #[arg(long)]
    pub include_partial_messages: bool,

    /// Provider id from the config (`openai`, `anthropic`, `ollama`, `deepseek`,
    /// `openrouter`, or one of your own `[providers.<id>]`).
    #[arg(long, value_name = "ID")]
    pub provider: Option<String>,

    /// Model name, overriding the provider's configured model.
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,

    /// Base URL of the provider's API, overriding the config
    /// (openai kind: include the version, e.g. `https://api.openai.com/v1`;
    /// anthropic kind: the host, e.g. `https://api.anthropic.com`).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,

    /// Run in this directory instead of the current one.
    #[arg(short = 'C', long = "cwd", value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// Maximum model round trips in one turn (`--max-turns`, as Claude
    /// Code names it).
    #[arg(long, visible_alias = "max-turns", value_name = "N")]
    pub max_steps: Option<u32>,

    /// Rules of calls allowed without a question, in the config's syntax
    /// (`"Bash(git log:*)" Read "edit(src/**)"`; commas or spaces between).
    #[arg(long = "allowedTools", visible_alias = "allowed-tools", value_name = "RULES", num_args = 1..)]
    pub allowed_tools: Vec<String>,

    /// Rules of calls refused (`"Bash(rm:*)" WebFetch`), as deny rules.
    #[arg(long = "disallowedTools", visible_alias = "disallowed-tools", value_name = "RULES", num_args = 1..)]
    pub disallowed_tools: Vec<String>,

    /// Text added to the end of the system prompt.
    #[arg(long, value_name = "TEXT")]
    pub append_system_prompt: Option<String>,

    /// Claude Code's permission modes: `default`; `acceptEdits` (edits in
    /// the project without a question); `plan` (no edits); and
    /// `bypassPermissions` (as --yolo).
    #[arg(long, value_enum, value_name = "MODE")]
    pub permission_mode: Option<PermissionMode>,

    /// Run every tool call without asking (deny rules and banned commands
    /// still apply, and so does the sandbox).
    #[arg(long)]
    pub yolo: bool,

    /// OS sandbox for bash commands (Landlock on Linux).
    #[arg(long, value_enum, value_name = "MODE")]
    pub sandbox: Option<crate::shell::SandboxMode>,

    /// Trust this project: start language servers (they run its code) and
    /// apply what its .agent/config.toml asks for (allow rules, hooks,
    /// language and MCP servers). Remembered until those settings change;
    /// `agent trust` shows them. Without it, an untrusted project gets none.
    #[arg(long)]
    pub trust_project: bool,

    /// Continue the most recent session of this project (its root: the git
    /// root, or the directory with `.agent/`).
    #[arg(short = 'c', long = "continue", conflicts_with = "resume")]
    pub continue_last: bool,

    /// Continue a session by id (or a unique start of one); without an id,
    /// the interactive interface lists this project's sessions to pick from.
    #[arg(short = 'r', long, value_name = "ID", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,

    #[command(subcommand)]
    pub command: Option<Subcommand>,
}

#[derive(Debug, clap::Subcommand)]
pub enum Subcommand {
    /// Inspect the permission gate.
    Permissions {
        #[command(subcommand)]
        action: PermissionsAction,
    },
    /// Whether this project is trusted, what it asks for, and what of its
    /// config is ignored; `--yes` trusts it, `--revoke` forgets the trust.
    Trust {
        #[arg(long, conflicts_with = "revoke")]
        yes: bool,
        #[arg(long)]
        revoke: bool,
    },
    /// What protects this machine and project, checked now: the sandbox,
    /// namespaces, protected places, trust, servers, config files.
    Doctor,
    /// Sessions of this project, newest first: id, time, title, turns.
    Sessions {
        /// Every project's sessions.
        #[arg(long)]
        all: bool,
        /// One JSON array.
        #[arg(long)]
        json: bool,
    },
    /// Restore the files the agent changed in the last turn (of the most
    /// recent session here) to their content before it: changed files
    /// rewritten, created files removed, deleted ones restored. A file
    /// changed since by anyone else stops it (see `--force`). Undoing is
    /// itself undone with `agent redo`.
    Undo {
        /// The session (id or unique start); default: the newest here.
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// Undo the last N turns.
        #[arg(long, value_name = "N", default_value_t = 1)]
        turns: u32,
        /// Only list what would change.
        #[arg(long)]
        dry_run: bool,
        /// Also overwrite files changed since the agent's change.
        #[arg(long)]
        force: bool,
    },
    /// Undo the last `agent undo` (or `/undo`).
    Redo {
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        force: bool,
    },
    /// MCP servers from the user config.
    Mcp {
        #[command(subcommand)]
        action: McpAction,
    },
}

#[derive(Debug, clap::Subcommand)]
pub enum McpAction {
    /// Start every configured server (waiting up to its startup timeout) and
    /// show its state (ready, failed and why, disabled) and tools.
    List,
}

#[derive(Debug, clap::Subcommand)]
pub enum PermissionsAction {
    /// Judge one call without running it: decision, risk, scope, and the rule that decided.
    Check {
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
        /// Tool name, e.g. `bash` or `edit`.
        tool: String,
        /// The call's arguments as JSON, e.g. '{"command": "git push"}';
        /// `-` reads them from standard input (for calls too large for
        /// the command line).
        args: String,
    },
    /// The effective rules and banned commands, and where each came from.
    List,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PermissionMode {
    #[value(name = "default")]
    Default,
    #[value(name = "acceptEdits")]
    AcceptEdits,
    #[value(name = "plan")]
    Plan,
    #[value(name = "bypassPermissions")]
    BypassPermissions,
}

impl PermissionMode {
    /// The rules the mode stands for: (allow, deny).
    pub fn rules(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            PermissionMode::Default | PermissionMode::BypassPermissions => (&[], &[]),
            PermissionMode::AcceptEdits => (&["edit(**)", "write(**)"], &[]),
            PermissionMode::Plan => (&[], &["edit", "write"]),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    Text,
    StreamJson,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
    StreamJson,
}
