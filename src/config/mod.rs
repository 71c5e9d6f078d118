//! Layered configuration: built-in defaults, the user's file
//! (`~/.config/agent/config.toml`, honouring `XDG_CONFIG_HOME`), the project's
//! `.agent/config.toml`, environment variables, then command-line flags; later
//! layers win field by field. `AGENT_HOME` puts all config and data under one
//! directory. This module owns reading and merging; it does not talk to
//! providers.

mod file;
mod providers;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use file::{ConfigFile, PermissionsFile, ProviderKind};
use providers::ProviderTable;

use crate::permission::{Rule, RuleList, RuleSet};
use crate::shell::{Ban, DEFAULT_BANNED, Sandbox, SandboxMode};
use crate::tools::BashLimits;
pub use providers::ResolvedProvider;

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

/// Settings of the LLM transport.
#[derive(Debug, Clone)]
pub struct LlmSettings {
    pub max_retries: u32,
    pub retry_base: Duration,
    pub retry_max: Duration,
    pub idle_timeout: Duration,
    pub connect_timeout: Duration,
}

impl Default for LlmSettings {
    fn default() -> Self {
        LlmSettings {
            max_retries: 4,
            retry_base: Duration::from_millis(500),
            retry_max: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(15),
        }
    }
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
    pub rules: Vec<(RuleList, String, PathBuf)>,
    /// Banned command prefixes (`sudo`, `apt-get install`...).
    pub banned: Vec<String>,
    pub home: Option<PathBuf>,
    pub bash: BashLimits,
    pub sandbox_mode: SandboxMode,
    pub writable_roots: Vec<PathBuf>,
    /// Language servers from the user's config (a project's are ignored:
    /// a cloned repository must not start programs on its own).
    pub lsp_servers: std::collections::BTreeMap<String, crate::lsp::ServerConfig>,
    pub lsp_timing: crate::lsp::Timing,
    /// Hooks from the user's config: always run.
    pub hooks: crate::hooks::HooksFile,
    /// Hooks from the project's config: run only once the person trusted
    /// the project with exactly these hooks ([`Config::trust_project`]).
    pub project_hooks: crate::hooks::HooksFile,
    pub project_trusted: bool,
    /// MCP servers from the user's config (a project's are ignored, as
    /// language servers are), and the ones a project tried to add.
    pub mcp_servers: std::collections::BTreeMap<String, crate::mcp::ServerConfig>,
    pub mcp_ignored: Vec<(String, PathBuf)>,
}

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
            project_hooks: Default::default(),
            project_trusted: false,
            mcp_servers: Default::default(),
            mcp_ignored: Vec::new(),
        };
        let user_config = config.paths.user_config.clone();
        for (path, is_project) in [(user_config, false), (project_config, true)] {
            if let Some(file) = ConfigFile::load(&path)? {
                config.apply(file, &path, is_project)?;
                config.sources.push(path);
            }
        }
        config.project_trusted = !config.project_hooks.is_empty()
            && crate::hooks::trust::is_trusted(
                &config.paths.data_dir,
                &config.workspace,
                &config.project_hooks.fingerprint(),
            );
        // A third-party MCP server does not get the person's LLM keys.
        let keys = config.providers.key_vars();
        for server in config.mcp_servers.values_mut() {
            server.withheld_env = keys
                .iter()
                .filter(|k| !server.env.contains_key(*k))
                .cloned()
                .collect();
        }
        if let Some(n) = overrides.max_steps {
            config.max_steps = n;
        }
        if let Some(m) = overrides.sandbox {
            config.sandbox_mode = m;
        }
        config.overrides = overrides;
        Ok(config)
    }

    fn apply(
        &mut self,
        file: ConfigFile,
        path: &Path,
        is_project: bool,
    ) -> Result<(), ConfigError> {
        if let Some(b) = file.bash {
            let secs = Duration::from_secs;
            if let Some(t) = b.timeout_secs {
                self.bash.default_timeout = secs(t);
            }
            if let Some(t) = b.max_timeout_secs {
                self.bash.max_timeout = secs(t);
            }
            if let Some(t) = b.background_after_secs {
                self.bash.background_after = secs(t);
            }
        }
        if let Some(sb) = file.sandbox {
            // A cloned repository may tighten the sandbox, never loosen it.
            if let Some(mode) = sb.mode
                && (!is_project || mode == SandboxMode::ReadOnly)
            {
                self.sandbox_mode = mode;
            }
            if !is_project {
                for root in sb.writable_roots {
                    let expanded = match (root.strip_prefix("~/"), &self.home) {
                        (Some(rest), Some(h)) => h.join(rest),
                        _ => PathBuf::from(&root),
                    };
                    self.writable_roots.push(expanded);
                }
            }
        }
        if let Some(l) = file.lsp {
            if let Some(ms) = l.settle_ms {
                self.lsp_timing.settle = Duration::from_millis(ms);
            }
            if let Some(v) = l.wait_secs {
                self.lsp_timing.cap =
                    Duration::try_from_secs_f64(v).map_err(|_| ConfigError::Value {
                        file: path.to_path_buf(),
                        key: "lsp.wait_secs".into(),
                        message: format!("`{v}` is not a valid number of seconds"),
                    })?;
            }
            // A cloned repository must not start programs on its own.
            if !is_project {
                self.lsp_servers.extend(l.servers);
            }
        }
        if let Some(h) = file.hooks {
            h.validate().map_err(|(key, message)| ConfigError::Value {
                file: path.to_path_buf(),
                key,
                message,
            })?;
            if is_project {
                self.project_hooks.extend(h);
            } else {
                self.hooks.extend(h);
            }
        }
        for (name, server) in file.mcp {
            // A cloned repository must not start programs on its own.
            if is_project {
                self.mcp_ignored.push((name, path.to_path_buf()));
                continue;
            }
            server
                .validate(&name)
                .map_err(|(key, message)| ConfigError::Value {
                    file: path.to_path_buf(),
                    key: if key.is_empty() {
                        format!("mcp.{name}")
                    } else {
                        format!("mcp.{name}.{key}")
                    },
                    message,
                })?;
            self.mcp_servers.insert(name, server);
        }
        if let Some(p) = file.permissions {
            for (list, key, texts) in [
                (RuleList::Allow, "allow", p.allow),
                (RuleList::Ask, "ask", p.ask),
                (RuleList::Deny, "deny", p.deny),
            ] {
                for (i, text) in texts.into_iter().enumerate() {
                    // Validate now, so a bad rule is reported with its place.
                    Rule::parse(&text, list, "", &self.workspace, self.home.as_deref()).map_err(
                        |message| ConfigError::Value {
                            file: path.to_path_buf(),
                            key: format!("permissions.{key}[{i}]"),
                            message,
                        },
                    )?;
                    self.rules.push((list, text, path.to_path_buf()));
                }
            }
            if let Some(banned) = p.banned {
                // A cloned repository must not unban anything for the person.
                if is_project {
                    self.banned.extend(banned);
                } else {
                    self.banned = banned;
                }
            }
        }
        if let Some(p) = file.provider {
            self.default_provider = Some(p);
        }
        if let Some(agent) = file.agent
            && let Some(n) = agent.max_steps
        {
            self.max_steps = n;
        }
        if let Some(llm) = file.llm {
            let secs = |key: &str, v: f64| -> Result<Duration, ConfigError> {
                Duration::try_from_secs_f64(v).map_err(|_| ConfigError::Value {
                    file: path.to_path_buf(),
                    key: format!("llm.{key}"),
                    message: format!("`{v}` is not a valid number of seconds"),
                })
            };
            if let Some(n) = llm.max_retries {
                self.llm.max_retries = n;
            }
            if let Some(ms) = llm.retry_base_ms {
                self.llm.retry_base = Duration::from_millis(ms);
            }
            if let Some(v) = llm.retry_max_secs {
                self.llm.retry_max = secs("retry_max_secs", v)?;
            }
            if let Some(v) = llm.idle_timeout_secs {
                self.llm.idle_timeout = secs("idle_timeout_secs", v)?;
            }
            if let Some(v) = llm.connect_timeout_secs {
                self.llm.connect_timeout = secs("connect_timeout_secs", v)?;
            }
        }
        self.providers.apply(file.providers, path)
    }

    /// The same configuration with other flag values on top.
    pub fn with_overrides(&self, top: Overrides) -> Config {
        let mut c = self.clone();
        c.overrides = top.over(c.overrides.clone());
        c
    }

    /// The rules, parsed against this workspace.
    pub fn rule_set(&self) -> RuleSet {
        let mut set = RuleSet::default();
        for (list, text, source) in &self.rules {
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
    }

    pub fn yolo(&self) -> bool {
        self.overrides.yolo
    }

    /// The hooks that run: the user's, and the project's once trusted.
    pub fn active_hooks(&self) -> crate::hooks::HooksFile {
        let mut all = self.hooks.clone();
        if self.project_trusted {
            all.extend(self.project_hooks.clone());
        }
        all
    }

    /// Project hooks waiting for the person's trust.
    pub fn untrusted_hooks(&self) -> Option<&crate::hooks::HooksFile> {
        (!self.project_hooks.is_empty() && !self.project_trusted).then_some(&self.project_hooks)
    }

    /// The person trusts this project's hooks (as they are now); recorded
    /// under the data directory so the question is asked once.
    pub fn trust_project(&mut self) -> std::io::Result<()> {
        self.project_trusted = true;
        if self.project_hooks.is_empty() {
            return Ok(());
        }
        crate::hooks::trust::record(
            &self.paths.data_dir,
            &self.workspace,
            &self.project_hooks.fingerprint(),
        )
    }

    /// Where "always" answers are saved.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn load(user: &str, project: &str) -> Config {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("config.toml"), user).unwrap();
        std::fs::create_dir_all(ws.path().join(".agent")).unwrap();
        std::fs::write(ws.path().join(".agent/config.toml"), project).unwrap();
        let paths = Paths {
            user_config: home.path().join("config.toml"),
            data_dir: home.path().join("data"),
        };
        Config::load(paths, ws.path(), Overrides::default()).unwrap()
    }

    #[test]
    fn bash_sandbox_and_lsp_sections_apply() {
        let c = load(
            "[bash]\ntimeout_secs = 7\nbackground_after_secs = 3\n[sandbox]\nmode = \"off\"\nwritable_roots = [\"/data\"]\n[lsp]\nwait_secs = 1.5\n[lsp.mine]\ncommand = \"my-ls\"\nextensions = [\"x\"]\n",
            "",
        );
        assert_eq!(c.bash.default_timeout, Duration::from_secs(7));
        assert_eq!(c.bash.background_after, Duration::from_secs(3));
        assert_eq!(c.sandbox_mode, SandboxMode::Off);
        assert_eq!(c.writable_roots, vec![PathBuf::from("/data")]);
        assert_eq!(c.lsp_timing.cap, Duration::from_millis(1500));
        assert_eq!(c.lsp_servers["mine"].command, "my-ls");
    }

    #[test]
    fn a_project_may_tighten_but_never_loosen() {
        let c = load(
            "[permissions]\nbanned = [\"sudo\"]\n",
            "[permissions]\nbanned = [\"curl\"]\n[sandbox]\nmode = \"off\"\nwritable_roots = [\"/\"]\n[lsp.evil]\ncommand = \"rm\"\nextensions = [\"rs\"]\n[mcp.evil]\ncommand = \"rm\"\n",
        );
        assert_eq!(
            c.banned,
            vec!["sudo".to_string(), "curl".to_string()],
            "a project adds bans"
        );
        assert_eq!(
            c.sandbox_mode,
            SandboxMode::WorkspaceWrite,
            "a project cannot switch the sandbox off"
        );
        assert!(c.writable_roots.is_empty());
        assert!(c.lsp_servers.is_empty(), "a project cannot start programs");
        assert!(c.mcp_servers.is_empty(), "nor MCP servers");
        assert_eq!(c.mcp_ignored.len(), 1);
        assert_eq!(c.mcp_ignored[0].0, "evil");
        let c = load("", "[sandbox]\nmode = \"read-only\"\n");
        assert_eq!(
            c.sandbox_mode,
            SandboxMode::ReadOnly,
            "but it can tighten it"
        );
    }

    #[test]
    fn mcp_servers_come_from_the_user_file() {
        let c = load(
            "[mcp.files]\ncommand = \"srv\"\nargs = [\"--root\", \".\"]\ntool_timeout_secs = 5\n[mcp.web]\nurl = \"https://h/mcp\"\nenabled = false\n",
            "",
        );
        assert_eq!(c.mcp_servers["files"].args, vec!["--root", "."]);
        assert_eq!(
            c.mcp_servers["files"].tool_timeout(),
            Duration::from_secs(5)
        );
        assert!(!c.mcp_servers["web"].enabled);
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join("config.toml"),
            "[mcp.web]\nurl = \"https://h/mcp\"\nargs = [\"x\"]\n",
        )
        .unwrap();
        let paths = Paths {
            user_config: home.path().join("config.toml"),
            data_dir: home.path().join("data"),
        };
        let e = Config::load(paths, home.path(), Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("key `mcp.web.args`"), "{e}");
    }
}
