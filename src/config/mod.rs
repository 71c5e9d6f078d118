//! Layered configuration: built-in defaults, the user's file
//! (`~/.config/agent/config.toml`, honouring `XDG_CONFIG_HOME`), the project's
//! `.agent/config.toml`, environment variables, then command-line flags; later
//! layers win field by field. `AGENT_HOME` puts all config and data under one
//! directory. This module owns reading and merging; it does not talk to
//! providers.

mod apply;
mod claude;
mod file;
mod providers;
#[cfg(test)]
mod tests;
pub mod trust;

pub use trust::ProjectWants;

use std::path::{Path, PathBuf};

pub use file::{ConfigFile, PermissionsFile};
use providers::ProviderTable;

pub use crate::llm::{DEFAULT_CONTEXT_WINDOW, LlmSettings, ProviderKind, ResolvedProvider};
use crate::permission::{Rule, RuleList, RuleSet};
use crate::shell::{Ban, DEFAULT_BANNED, Sandbox, SandboxMode};
use crate::tools::BashLimits;

/// Where config and data live.
#[derive(Debug, Clone)]
pub struct Paths {
    /// The user's config file.
    pub user_config: PathBuf,
    /// Session transcripts, logs, file history.
    pub data_dir: PathBuf,
}

impl Paths {
    /// From the process environment: `AGENT_HOME`, else the XDG directories.
    pub fn from_env() -> Result<Paths, ConfigError> {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        if let Some(home) = var("AGENT_HOME") {
            return Ok(Paths {
                user_config: home.join("config.toml"),
                data_dir: home.join("data"),
            });
        }
        let home = var("HOME");
        let config_base =
            var("XDG_CONFIG_HOME").or_else(|| home.as_ref().map(|h| h.join(".config")));
        let data_base =
            var("XDG_DATA_HOME").or_else(|| home.as_ref().map(|h| h.join(".local/share")));
        match (config_base, data_base) {
            (Some(c), Some(d)) => Ok(Paths {
                user_config: c.join("agent/config.toml"),
                data_dir: d.join("agent"),
            }),
            _ => Err(ConfigError::NoHome),
        }
    }
}

/// A permission rule as configured: its list, its text, and the file (or
/// flag) it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleEntry {
    pub list: RuleList,
    pub text: String,
    pub source: PathBuf,
}

/// Values from the environment and flags, the two top layers.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub max_steps: Option<u32>,
    /// `--yolo`: allow every call no deny rule or ban stops.
    pub yolo: bool,
    /// `--sandbox MODE`.
    pub sandbox: Option<SandboxMode>,
}

impl Overrides {
    /// `AGENT_PROVIDER`, `AGENT_MODEL`, `AGENT_BASE_URL`, `AGENT_MAX_STEPS`.
    pub fn from_env() -> Result<Overrides, ConfigError> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let max_steps = match var("AGENT_MAX_STEPS") {
            None => None,
            Some(v) => Some(v.parse().map_err(|_| ConfigError::Env {
                name: "AGENT_MAX_STEPS".into(),
                message: format!("`{v}` is not a whole number"),
            })?),
        };
        Ok(Overrides {
            provider: var("AGENT_PROVIDER"),
            model: var("AGENT_MODEL"),
            base_url: var("AGENT_BASE_URL"),
            max_steps,
            yolo: false,
            sandbox: None,
        })
    }

    /// `self` over `lower`.
    pub fn over(self, lower: Overrides) -> Overrides {
        Overrides {
            provider: self.provider.or(lower.provider),
            model: self.model.or(lower.model),
            base_url: self.base_url.or(lower.base_url),
            max_steps: self.max_steps.or(lower.max_steps),
            yolo: self.yolo || lower.yolo,
            sandbox: self.sandbox.or(lower.sandbox),
        }
    }
}

/// The effective configuration of one run.
#[derive(Debug, Clone)]
pub struct Config {
    pub paths: Paths,
    /// The project directory the agent works in (canonical).
    pub workspace: PathBuf,
    pub max_steps: u32,
    pub llm: LlmSettings,
    providers: ProviderTable,
    default_provider: Option<String>,
    overrides: Overrides,
    /// Files that were read, lowest layer first.
    pub sources: Vec<PathBuf>,
    /// Permission rules with the file each came from, in load order.
    pub rules: Vec<RuleEntry>,
    /// `--append-system-prompt`: added to the end of the system prompt.
    pub append_system_prompt: Option<String>,
    /// What of Claude Code's settings files could not be used, and why.
    pub claude_skipped: Vec<String>,
    /// Banned command prefixes (`sudo`, `apt-get install`...).
    pub banned: Vec<String>,
    pub home: Option<PathBuf>,
    pub bash: BashLimits,
    pub sandbox_mode: SandboxMode,
    pub writable_roots: Vec<PathBuf>,
    /// Language servers from the user's config, and the project's once
    /// trusted. None starts in an untrusted project (they run its code).
    pub lsp_servers: std::collections::BTreeMap<String, crate::lsp::ServerConfig>,
    pub lsp_timing: crate::lsp::Timing,
    /// Hooks from the user's config, and the project's once trusted.
    pub hooks: crate::hooks::HooksFile,
    /// What the project's own file asks for that loosens protection or
    /// starts programs; merged in only once the person trusts the project
    /// with exactly these settings ([`Config::trust_project`]).
    pub project_wants: ProjectWants,
    pub project_trusted: bool,
    /// What the project's file tried to set that only the person's own
    /// config may (`[providers.openai].base_url`): never applied.
    pub project_ignored: Vec<String>,
    /// MCP servers from the user's config (and the project's once trusted),
    /// and the ones an untrusted project asked for.
    pub mcp_servers: std::collections::BTreeMap<String, crate::mcp::ServerConfig>,
    pub mcp_ignored: Vec<(String, PathBuf)>,
    /// Provider key variables withheld from commands, hooks, language and
    /// MCP servers (every key variable in use, minus `[sandbox] pass_env`).
    pub withheld_env: Vec<String>,
    pass_env: Vec<String>,
    /// Why the project's config file was ignored as a whole, if it was.
    pub project_error: Option<String>,
}

/// A project's config file larger than this is read only this far.
const MAX_PROJECT_CONFIG: u64 = 1024 * 1024;

pub const DEFAULT_MAX_STEPS: u32 = 100;

impl Config {
    /// Loads every layer for a run in `workspace`.
    pub fn load(
        paths: Paths,
        workspace: &Path,
        overrides: Overrides,
    ) -> Result<Config, ConfigError> {
        let workspace = workspace
            .canonicalize()
            .map_err(|source| ConfigError::Workspace {
                dir: workspace.to_path_buf(),
                source,
            })?;
        if !workspace.is_dir() {
            return Err(ConfigError::Workspace {
                dir: workspace,
                source: std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory"),
            });
        }
        let project_config = workspace.join(".agent/config.toml");
        let mut config = Config {
            paths,
            workspace,
            append_system_prompt: None,
            claude_skipped: Vec::new(),
            max_steps: DEFAULT_MAX_STEPS,
            llm: LlmSettings::default(),
            providers: ProviderTable::builtin(),
            default_provider: None,
            overrides: Overrides::default(),
            sources: Vec::new(),
            rules: Vec::new(),
            banned: DEFAULT_BANNED.iter().map(|s| s.to_string()).collect(),
            home: std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from),
            bash: BashLimits::default(),
            sandbox_mode: SandboxMode::WorkspaceWrite,
            writable_roots: Vec::new(),
            lsp_servers: Default::default(),
            lsp_timing: Default::default(),
            hooks: Default::default(),
            project_wants: Default::default(),
            project_trusted: false,
            project_ignored: Vec::new(),
            mcp_servers: Default::default(),
            mcp_ignored: Vec::new(),
            withheld_env: Vec::new(),
            pass_env: Vec::new(),
            project_error: None,
        };
        let user_config = config.paths.user_config.clone();
        if let Some(file) = ConfigFile::load(&user_config)? {
            config.apply(file, &user_config, false)?;
            config.sources.push(user_config);
        }
        // The person's Claude Code settings protect them here too.
        if let Some(home) = config.home.clone() {
            let claude = home.join(".claude/settings.json");
            if let Ok(Some(bytes)) = crate::tools::read_project_file(&claude, claude::MAX_BYTES) {
                let text = String::from_utf8_lossy(&bytes);
                match claude::parse(&text, &claude, &config.workspace, Some(&home)) {
                    Ok(s) => {
                        config.apply(s.file, &claude, false)?;
                        config.sources.push(claude.clone());
                        config.claude_skipped.extend(s.skipped);
                    }
                    Err(e) => config.claude_skipped.push(e),
                }
            }
        }
        // A repository's config that cannot be read or used does not stop
        // the run: it is ignored, and said so (`ignored_notes`).
        let inside = project_config
            .canonicalize()
            .map(|p| p.starts_with(&config.workspace))
            .unwrap_or(true);
        let project_text =
            match crate::tools::read_project_file(&project_config, MAX_PROJECT_CONFIG) {
                Ok(_) if !inside => {
                    config.project_error = Some("it leads outside the project".into());
                    None
                }
                Ok(bytes) => bytes.map(|b| String::from_utf8_lossy(&b).into_owned()),
                Err(e) => {
                    config.project_error = Some(format!("cannot read it: {e}"));
                    None
                }
            };
        let user_default = config.default_provider.clone();
        // A project's Claude Code settings: as its own config, trust and all.
        let mut claude_wants = Vec::new();
        for name in ["settings.json", "settings.local.json"] {
            let path = config.workspace.join(".claude").join(name);
            let inside = path
                .canonicalize()
                .map(|p| p.starts_with(&config.workspace))
                .unwrap_or(false);
            let Ok(Some(bytes)) = crate::tools::read_project_file(&path, claude::MAX_BYTES) else {
                continue;
            };
            if !inside {
                continue;
            }
            let text = String::from_utf8_lossy(&bytes);
            let home = config.home.clone();
            match claude::parse(&text, &path, &config.workspace, home.as_deref()) {
                Ok(s) => {
                    let mut trial = config.clone();
                    match trial.apply(s.file, &path, true) {
                        Ok(()) => {
                            config = trial;
                            config.sources.push(path.clone());
                            config.claude_skipped.extend(s.skipped);
                            claude_wants.push(s.wants);
                        }
                        Err(e) => config.claude_skipped.push(e.to_string()),
                    }
                }
                Err(e) => config.claude_skipped.push(e),
            }
        }
        if let Some(text) = &project_text {
            let mut trial = config.clone();
            let applied = ConfigFile::parse(text, &project_config)
                .and_then(|file| trial.apply(file, &project_config, true));
            match applied {
                Ok(()) => {
                    config = trial;
                    config.sources.push(project_config.clone());
                }
                Err(e) => config.project_error = Some(e.to_string()),
            }
        }
        // The person's --base-url / AGENT_BASE_URL is meant for the
        // provider they chose: a project picking another would send that
        // provider's key there.
        if overrides.base_url.is_some() && config.default_provider != user_default {
            config.default_provider = user_default;
            config
                .project_ignored
                .push("provider (your base URL override is for your own provider)".into());
        }
        config.project_wants.fingerprint = trust::wants_fingerprint(project_text.as_deref());
        if !claude_wants.is_empty() {
            // What Claude Code's files ask for is trusted with the rest.
            use sha2::Digest;
            let both = format!(
                "{}{}",
                config.project_wants.fingerprint,
                serde_json::Value::Array(claude_wants)
            );
            let digest = sha2::Sha256::digest(both.as_bytes());
            config.project_wants.fingerprint = digest.iter().map(|b| format!("{b:02x}")).collect();
        }
        config.project_trusted = trust::is_trusted(
            &config.paths.data_dir,
            &config.workspace,
            &config.project_wants.fingerprint,
        );
        if config.project_trusted {
            config.merge_project_wants();
        } else {
            config.mcp_ignored = config
                .project_wants
                .mcp_servers
                .keys()
                .map(|n| (n.clone(), project_config.clone()))
                .collect();
        }
        config.withhold_keys();
        if let Some(n) = overrides.max_steps {
            config.max_steps = n;
        }
        if let Some(m) = overrides.sandbox {
            config.sandbox_mode = m;
        }
        config.overrides = overrides;
        Ok(config)
    }

    /// A command, hook or third-party server does not get the person's LLM
    /// keys, unless the person's config passes one on.
    fn withhold_keys(&mut self) {
        let mut keys = self.providers.key_vars();
        keys.sort();
        keys.dedup();
        keys.retain(|k| !self.pass_env.contains(k));
        for server in self.mcp_servers.values_mut() {
            server.withheld_env = keys
                .iter()
                .filter(|k| !server.env.contains_key(*k))
                .cloned()
                .collect();
        }
        self.withheld_env = keys;
    }

    /// The same configuration with other flag values on top.
    pub fn with_overrides(&self, top: Overrides) -> Config {
        let mut c = self.clone();
        c.overrides = top.over(c.overrides.clone());
        c
    }

    /// The rules, parsed against this workspace.
    /// Rules given on the command line (`--allowedTools`, a permission
    /// mode): each checked now; several in one value are split at commas
    /// and spaces outside parentheses.
    pub fn add_flag_rules(
        &mut self,
        list: RuleList,
        values: &[String],
        flag: &str,
    ) -> Result<(), ConfigError> {
        for text in values.iter().flat_map(|v| split_rules(v)) {
            Rule::parse(&text, list, flag, &self.workspace, self.home.as_deref()).map_err(
                |message| ConfigError::Flag {
                    flag: flag.to_string(),
                    message,
                },
            )?;
            self.rules.push(RuleEntry {
                list,
                text,
                source: PathBuf::from(flag),
            });
        }
        Ok(())
    }

    pub fn rule_set(&self) -> RuleSet {
        let mut set = RuleSet::default();
        for RuleEntry { list, text, source } in &self.rules {
            // Every rule was validated when its file was loaded.
            if let Ok(rule) = Rule::parse(
                text,
                *list,
                &source.display().to_string(),
                &self.workspace,
                self.home.as_deref(),
            ) {
                set.push(rule);
            }
        }
        set
    }

    pub fn bans(&self) -> Vec<Ban> {
        self.banned.iter().map(|b| Ban::parse(b)).collect()
    }

    pub fn sandbox(&self) -> Sandbox {
        Sandbox::new(
            self.sandbox_mode,
            &self.workspace,
            self.home.as_deref(),
            &self.writable_roots,
        )
        .withholding(&self.withheld_env)
        .protecting(self.agent_files())
        .hiding(vec![self.paths.data_dir.clone()])
    }

    /// agent's own settings and records: the user config's directory and
    /// the data directory (trust records, sessions, file history). No
    /// tool writes them without the person's say, and the sandbox never.
    pub fn agent_files(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = self
            .paths
            .user_config
            .parent()
            .map(Path::to_path_buf)
            .into_iter()
            .chain([self.paths.data_dir.clone()])
            .map(|p| p.canonicalize().unwrap_or(p))
            .collect();
        v.dedup();
        v
    }

    pub fn yolo(&self) -> bool {
        self.overrides.yolo
    }

    /// The hooks that run: the user's, and the project's once trusted.
    pub fn active_hooks(&self) -> crate::hooks::HooksFile {
        self.hooks.clone()
    }

    /// The project's own config file.
    pub fn project_config(&self) -> PathBuf {
        self.workspace.join(".agent/config.toml")
    }

    /// The provider this run talks to, with flags and environment applied.
    /// `key_present` says whether an environment variable holds a key (tests
    /// pass a closure; the binary passes the real environment).
    pub fn resolve_provider(
        &self,
        key_present: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ResolvedProvider, ConfigError> {
        let chosen = self
            .overrides
            .provider
            .as_ref()
            .or(self.default_provider.as_ref());
        self.providers
            .resolve(chosen.map(String::as_str), &self.overrides, key_present)
    }
}

/// What can go wrong loading configuration. Every message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{}:{line}:{column}: {message}{}", file.display(), key.as_ref().map(|k| format!(" (key `{k}`)")).unwrap_or_default())]
    Parse {
        file: PathBuf,
        line: usize,
        column: usize,
        key: Option<String>,
        message: String,
    },
    #[error("{}: key `{key}`: {message}", file.display())]
    Value {
        file: PathBuf,
        key: String,
        message: String,
    },
    #[error("cannot read config file {}: {source}", file.display())]
    Io {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("environment variable {name}: {message}")]
    Env { name: String, message: String },
    #[error("{flag}: {message}")]
    Flag { flag: String, message: String },
    #[error("cannot use {} as the project directory: {source}", dir.display())]
    Workspace {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "neither AGENT_HOME nor HOME is set, so there is no place for config and data; set one of them"
    )]
    NoHome,
    #[error(
        "unknown provider `{id}`; known providers: {known}. Define it as [providers.{id}] in {hint}"
    )]
    UnknownProvider {
        id: String,
        known: String,
        hint: String,
    },
    #[error(
        "provider `{provider}` needs an API key in the environment variable {env}: run `export {env}=<your key>` (or pick another provider with --provider)"
    )]
    MissingKey { provider: String, env: String },
    #[error("provider `{provider}` {message}")]
    Provider { provider: String, message: String },
    #[error("{0}")]
    NoProvider(String),
}

/// `"Bash(git log:*) Read, Edit"` → the three rules.
fn split_rules(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in value.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth == 0 && (c == ',' || c.is_whitespace()) {
            if !current.trim().is_empty() {
                out.push(current.trim().to_string());
            }
            current.clear();
        } else {
            current.push(c);
        }
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_string());
    }
    out
}
