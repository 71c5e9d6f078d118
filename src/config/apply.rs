//! Merging one config file into the configuration, and what a project's
//! own file may set: it may tighten protection, never loosen it; programs
//! it would start and rules it would allow wait for the person's trust.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Config, ConfigError, ConfigFile};
use crate::permission::{Rule, RuleList};
use crate::shell::SandboxMode;

impl Config {
    pub(super) fn apply(
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
        if let Some(l) = file.lsp {
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
        if let Some(h) = file.hooks {
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
        for (name, server) in file.mcp {
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
        if !file.projects.is_empty() {
            if is_project {
                // The person's own answers live in the person's file only.
                self.project_ignored.push("[projects]".into());
            } else {
                let here = self.workspace.display().to_string();
                if let Some(mine) = file.projects.get(&here) {
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
        if let Some(p) = file.permissions {
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
        if let Some(p) = file.provider {
            if !is_project || self.providers.knows(&p) {
                self.default_provider = Some(p);
            } else {
                self.project_ignored.push(format!(
                    "provider = \"{}\" (not one of yours)",
                    p.escape_debug()
                ));
            }
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
        let providers = if is_project {
            let (kept, ignored) = self.providers.project_subset(file.providers);
            self.project_ignored.extend(ignored);
            kept
        } else {
            file.providers
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
        self.rules
            .push((list, text.to_string(), file.to_path_buf()));
        Ok(())
    }
}
