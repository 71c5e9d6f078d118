//! Merging one config file into the configuration, and what a project's
//! own file may set: it may tighten protection, never loosen it; programs
//! it would start and rules it would allow wait for the person's trust.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::file::{AgentFile, BashFile, LlmFile, LspFile, ProviderFile, SandboxFile};
use super::{Config, ConfigError, ConfigFile, PermissionsFile};
use crate::hooks::HooksFile;
use crate::permission::{Rule, RuleList};
use crate::shell::SandboxMode;

impl Config {
    /// Merges one file into the configuration, section by section.
    pub(super) fn apply(
        &mut self,
        file: ConfigFile,
        path: &Path,
        is_project: bool,
    ) -> Result<(), ConfigError> {
        self.apply_bash(file.bash);
        self.apply_sandbox(file.sandbox, is_project);
        self.apply_lsp(file.lsp, path, is_project)?;
        self.apply_hooks(file.hooks, path, is_project)?;
        self.apply_mcp(file.mcp, path, is_project)?;
        self.apply_projects(file.projects, path, is_project)?;
        self.apply_permissions(file.permissions, path, is_project)?;
        self.apply_default_provider(file.provider, is_project);
        self.apply_agent(file.agent);
        self.apply_llm(file.llm, path)?;
        self.apply_providers(file.providers, path, is_project)
    }

    /// `[bash]`: command timeouts.
    fn apply_bash(&mut self, bash: Option<BashFile>) {
        if let Some(b) = bash {
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
    }

    /// `[sandbox]`: a project may only tighten the mode; writable roots and
    /// passed-on keys come from the person's file only.
    fn apply_sandbox(&mut self, sandbox: Option<SandboxFile>, is_project: bool) {
        if let Some(sb) = sandbox {
            // A cloned repository may tighten the sandbox, never loosen it.
            if let Some(mode) = sb.mode {
                if !is_project || mode == SandboxMode::ReadOnly {
                    self.sandbox_mode = mode;
                } else if mode != self.sandbox_mode {
                    self.project_ignored
                        .push(format!("[sandbox].mode = \"{mode}\""));
                }
            }
            if is_project {
                if !sb.writable_roots.is_empty() {
                    self.project_ignored.push("[sandbox].writable_roots".into());
                }
                if !sb.pass_env.is_empty() {
                    self.project_ignored.push("[sandbox].pass_env".into());
                }
            } else {
                self.pass_env.extend(sb.pass_env);
                for root in sb.writable_roots {
                    let expanded = match (root.strip_prefix("~/"), &self.home) {
                        (Some(rest), Some(h)) => h.join(rest),
                        _ => PathBuf::from(&root),
                    };
                    self.writable_roots.push(expanded);
                }
            }
        }
    }

    /// `[lsp]`: timing, bounded, and servers; a project's servers wait for
    /// trust.
    fn apply_lsp(
        &mut self,
        lsp: Option<LspFile>,
        path: &Path,
        is_project: bool,
    ) -> Result<(), ConfigError> {
        if let Some(l) = lsp {
            if let Some(ms) = l.settle_ms {
                self.lsp_timing.settle = Duration::from_millis(ms);
            }
            // Bounded: a project's config cannot make an edit wait forever.
            let secs = |v: f64, key: &str| {
                Duration::try_from_secs_f64(v)
                    .ok()
                    .filter(|d| *d <= Duration::from_secs(600))
                    .ok_or_else(|| ConfigError::Value {
                        file: path.to_path_buf(),
                        key: format!("lsp.{key}"),
                        message: format!("`{v}` is not a number of seconds from 0 to 600"),
                    })
            };
            if let Some(v) = l.wait_secs {
                self.lsp_timing.cap = secs(v, "wait_secs")?;
            }
            if let Some(v) = l.start_secs {
                self.lsp_timing.start = secs(v, "start_secs")?;
            }
            // A cloned repository must not start programs on its own.
            if is_project {
                self.project_wants.lsp_servers.extend(l.servers);
            } else {
                self.lsp_servers.extend(l.servers);
            }
        }
        Ok(())
    }

    /// `[hooks]`, checked; a project's hooks wait for trust.
    fn apply_hooks(
        &mut self,
        hooks: Option<HooksFile>,
        path: &Path,
        is_project: bool,
    ) -> Result<(), ConfigError> {
        if let Some(h) = hooks {
            h.validate().map_err(|(key, message)| ConfigError::Value {
                file: path.to_path_buf(),
                key,
                message,
            })?;
            if is_project {
                self.project_wants.hooks.extend(h);
            } else {
                self.hooks.extend(h);
            }
        }
        Ok(())
    }

    /// `[mcp.<name>]`, each checked; a project's servers wait for trust.
    fn apply_mcp(
        &mut self,
        mcp: BTreeMap<String, crate::mcp::ServerConfig>,
        path: &Path,
        is_project: bool,
    ) -> Result<(), ConfigError> {
        for (name, server) in mcp {
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
            // A cloned repository must not start programs on its own.
            if is_project {
                self.project_wants.mcp_servers.insert(name, server);
            } else {
                self.mcp_servers.insert(name, server);
            }
        }
        Ok(())
    }

    /// `[projects."<root>"]`: the person's rules for this project, from
    /// their own file only.
    fn apply_projects(
        &mut self,
        projects: BTreeMap<String, PermissionsFile>,
        path: &Path,
        is_project: bool,
    ) -> Result<(), ConfigError> {
        if !projects.is_empty() {
            if is_project {
                // The person's own answers live in the person's file only.
                self.project_ignored.push("[projects]".into());
            } else {
                let here = self.workspace.display().to_string();
                if let Some(mine) = projects.get(&here) {
                    for (list, key, texts) in [
                        (RuleList::Allow, "allow", &mine.allow),
                        (RuleList::Ask, "ask", &mine.ask),
                        (RuleList::Deny, "deny", &mine.deny),
                    ] {
                        for (i, text) in texts.iter().enumerate() {
                            self.add_rule(
                                list,
                                text,
                                path,
                                &format!("projects.\"{here}\".{key}[{i}]"),
                            )?;
                        }
                    }
                    self.banned.extend(mine.banned.iter().flatten().cloned());
                }
            }
        }
        Ok(())
    }

    /// `[permissions]`: rules (a project's allow rules wait for trust) and
    /// the banned list (a project's only adds).
    fn apply_permissions(
        &mut self,
        permissions: Option<PermissionsFile>,
        path: &Path,
        is_project: bool,
    ) -> Result<(), ConfigError> {
        if let Some(p) = permissions {
            for (list, key, texts) in [
                (RuleList::Allow, "allow", p.allow),
                (RuleList::Ask, "ask", p.ask),
                (RuleList::Deny, "deny", p.deny),
            ] {
                for (i, text) in texts.into_iter().enumerate() {
                    let place = format!("permissions.{key}[{i}]");
                    if is_project && list == RuleList::Allow {
                        // Validated now, applied once the project is trusted.
                        self.check_rule(list, &text, path, &place)?;
                        self.project_wants.allow.push(text);
                    } else {
                        self.add_rule(list, &text, path, &place)?;
                    }
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
        Ok(())
    }

    /// `provider`: the default provider; a project may pick only one the
    /// person has.
    fn apply_default_provider(&mut self, provider: Option<String>, is_project: bool) {
        if let Some(p) = provider {
            if !is_project || self.providers.knows(&p) {
                self.default_provider = Some(p);
            } else {
                self.project_ignored.push(format!(
                    "provider = \"{}\" (not one of yours)",
                    p.escape_debug()
                ));
            }
        }
    }

    /// `[agent]`: the step limit.
    fn apply_agent(&mut self, agent: Option<AgentFile>) {
        if let Some(agent) = agent
            && let Some(n) = agent.max_steps
        {
            self.max_steps = n;
        }
    }

    /// `[llm]`: retries and timeouts.
    fn apply_llm(&mut self, llm: Option<LlmFile>, path: &Path) -> Result<(), ConfigError> {
        if let Some(llm) = llm {
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
            if let Some(v) = llm.first_byte_timeout_secs {
                self.llm.first_byte_timeout = secs("first_byte_timeout_secs", v)?;
            }
            if let Some(n) = llm.first_byte_retries {
                self.llm.first_byte_retries = n;
            }
            if let Some(v) = llm.request_timeout_secs {
                self.llm.request_timeout = secs("request_timeout_secs", v)?;
            }
            if let Some(v) = llm.max_retry_wait_secs {
                self.llm.max_retry_wait = secs("max_retry_wait_secs", v)?;
            }
        }
        Ok(())
    }

    /// `[providers.<id>]`; from a project, only what `project_subset` keeps
    /// (models, token and price settings of the person's providers).
    fn apply_providers(
        &mut self,
        providers: BTreeMap<String, ProviderFile>,
        path: &Path,
        is_project: bool,
    ) -> Result<(), ConfigError> {
        let providers = if is_project {
            let (kept, ignored) = self.providers.project_subset(providers);
            self.project_ignored.extend(ignored);
            kept
        } else {
            providers
        };
        self.providers.apply(providers, path)
    }

    /// Checks a rule's text, so a bad rule is reported with its place.
    fn check_rule(
        &self,
        list: RuleList,
        text: &str,
        file: &Path,
        key: &str,
    ) -> Result<(), ConfigError> {
        Rule::parse(text, list, "", &self.workspace, self.home.as_deref())
            .map(drop)
            .map_err(|message| ConfigError::Value {
                file: file.to_path_buf(),
                key: key.to_string(),
                message,
            })
    }

    fn add_rule(
        &mut self,
        list: RuleList,
        text: &str,
        file: &Path,
        key: &str,
    ) -> Result<(), ConfigError> {
        self.check_rule(list, text, file, key)?;
        self.rules.push(super::RuleEntry {
            list,
            text: text.to_string(),
            source: file.to_path_buf(),
        });
        Ok(())
    }
}
