//! Which projects the person trusts. A cloned repository must not loosen
//! protection or start programs on its own: its allow rules, hooks,
//! language servers and MCP servers, and the built-in language servers
//! (which run its build scripts), wait until the person said yes once, and
//! again whenever what the project asks for changes: the record keeps a
//! fingerprint (SHA-256) of those settings as they were trusted.
//!
//! Stored as `<data>/trusted-projects.json`: `{"/abs/project": "fingerprint"}`,
//! under the person's data directory, never in the project.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What a project's `.agent/config.toml` asks for that loosens protection
/// or starts programs: inert until the person trusts the project.
#[derive(Debug, Default, Clone)]
pub struct ProjectWants {
    pub allow: Vec<String>,
    pub hooks: crate::hooks::HooksFile,
    pub lsp_servers: std::collections::BTreeMap<String, crate::lsp::ServerConfig>,
    pub mcp_servers: std::collections::BTreeMap<String, crate::mcp::ServerConfig>,
    /// SHA-256 of those settings as written: trust is recorded with it and
    /// asked again when it changes.
    pub fingerprint: String,
}

impl ProjectWants {
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty()
            && self.hooks.is_empty()
            && self.lsp_servers.is_empty()
            && self.mcp_servers.is_empty()
    }

    /// `allow rules (2), hooks (1), language servers (mine)`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if !self.allow.is_empty() {
            parts.push(format!("allow rules ({})", self.allow.len()));
        }
        let hooks = self.hooks.pre_tool_use.len() + self.hooks.post_tool_use.len();
        if hooks > 0 {
            parts.push(format!("hooks ({hooks})"));
        }
        for (what, names) in [
            (
                "language servers",
                self.lsp_servers.keys().collect::<Vec<_>>(),
            ),
            ("MCP servers", self.mcp_servers.keys().collect::<Vec<_>>()),
        ] {
            if !names.is_empty() {
                let names: Vec<String> =
                    names.iter().map(|n| n.escape_debug().to_string()).collect();
                parts.push(format!("{what} ({})", names.join(", ")));
            }
        }
        parts.join(", ")
    }
}

/// The fingerprint of what a project's file asks for: the loosening tables
/// as parsed (key order does not matter, any change of value does).
pub(super) fn wants_fingerprint(text: Option<&str>) -> String {
    use sha2::Digest;
    let table: toml::Table = text.and_then(|t| t.parse().ok()).unwrap_or_default();
    let pick = |path: &[&str]| -> serde_json::Value {
        let mut v = toml::Value::Table(table.clone());
        for key in path {
            match v.get(key) {
                Some(next) => v = next.clone(),
                None => return serde_json::Value::Null,
            }
        }
        serde_json::to_value(&v).unwrap_or_default()
    };
    let mut lsp = pick(&["lsp"]);
    if let Some(m) = lsp.as_object_mut() {
        m.remove("settle_ms");
        m.remove("wait_secs");
    }
    let wants = serde_json::json!({
        "allow": pick(&["permissions", "allow"]),
        "hooks": pick(&["hooks"]),
        "lsp": lsp,
        "mcp": pick(&["mcp"]),
    });
    let digest = sha2::Sha256::digest(wants.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

impl super::Config {
    /// The person trusts this project (its settings as they are now): its
    /// wants apply from now on, and the trust is recorded under the data
    /// directory so the question is asked once. On an `Err` the trust
    /// holds for this run only.
    pub fn trust_project(&mut self) -> std::io::Result<()> {
        if !self.project_trusted {
            self.project_trusted = true;
            self.merge_project_wants();
        }
        record(
            &self.paths.data_dir,
            &self.workspace,
            &self.project_wants.fingerprint,
        )
    }

    /// One line per kind of thing the project's file said that is not in
    /// effect: what waits for trust, and what only the person may set.
    pub fn ignored_notes(&self) -> Vec<String> {
        let file = self.project_config();
        let mut notes = Vec::new();
        if let Some(e) = &self.project_error {
            notes.push(format!(
                "ignored {} as a whole: {e}. Fix or remove it.",
                file.display()
            ));
        }
        if !self.project_trusted && !self.project_wants.is_empty() {
            notes.push(format!(
                "ignored from {} until you trust this project: {} (run `agent trust` to see them, `agent --trust-project` to trust it)",
                file.display(),
                self.project_wants.summary()
            ));
        }
        if !self.claude_skipped.is_empty() {
            notes.push(format!(
                "not used from Claude Code's settings: {}",
                self.claude_skipped.join("; ")
            ));
        }
        if !self.project_ignored.is_empty() {
            notes.push(format!(
                "ignored from {}: {} (only your own config, {}, can set where requests and keys go and what the sandbox allows)",
                file.display(),
                self.project_ignored.join(", "),
                self.paths.user_config.display()
            ));
        }
        notes
    }

    /// The project's wants join the person's settings (theirs win a name).
    pub(super) fn merge_project_wants(&mut self) {
        let file = self.project_config();
        let wants = self.project_wants.clone();
        for text in wants.allow {
            self.rules.push(super::RuleEntry {
                list: crate::permission::RuleList::Allow,
                text,
                source: file.clone(),
            });
        }
        self.hooks.extend(wants.hooks);
        for (name, s) in wants.lsp_servers {
            self.lsp_servers.entry(name).or_insert(s);
        }
        let keys = self.providers.key_vars();
        for (name, mut s) in wants.mcp_servers {
            // Trusted or not, a project never sends the person's keys.
            s.sealed_env = keys.clone();
            self.mcp_servers.entry(name).or_insert(s);
        }
        self.mcp_ignored.clear();
        self.withhold_keys();
    }
}

fn store(data_dir: &Path) -> PathBuf {
    data_dir.join("trusted-projects.json")
}

fn load(data_dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(store(data_dir))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// The fingerprint `workspace` was trusted with, if it was.
pub fn recorded(data_dir: &Path, workspace: &Path) -> Option<String> {
    load(data_dir).remove(&workspace.display().to_string())
}

/// Whether `workspace` was trusted with exactly these settings.
pub fn is_trusted(data_dir: &Path, workspace: &Path, fingerprint: &str) -> bool {
    recorded(data_dir, workspace).is_some_and(|f| f == fingerprint)
}

/// Records the person's trust, atomically (a crash leaves the old record).
pub fn record(data_dir: &Path, workspace: &Path, fingerprint: &str) -> std::io::Result<()> {
    let mut all = load(data_dir);
    all.insert(workspace.display().to_string(), fingerprint.to_string());
    save(data_dir, &all)
}

/// Forgets the person's trust in `workspace`; whether there was any.
pub fn revoke(data_dir: &Path, workspace: &Path) -> std::io::Result<bool> {
    let mut all = load(data_dir);
    let had = all.remove(&workspace.display().to_string()).is_some();
    if had {
        save(data_dir, &all)?;
    }
    Ok(had)
}

/// Each thing a project asks for, one line each, escaped: a control
/// character or escape sequence in a cloned repository's config must not
/// redraw what the person reads.
pub fn list_wants(wants: &super::ProjectWants) -> Vec<String> {
    let mut lines = Vec::new();
    for rule in &wants.allow {
        lines.push(format!("allow rule: {}", rule.escape_debug()));
    }
    for (event, list) in [
        ("PreToolUse", &wants.hooks.pre_tool_use),
        ("PostToolUse", &wants.hooks.post_tool_use),
    ] {
        for h in list {
            let matcher = match h.matcher.trim() {
                "" => "*",
                m => m,
            };
            lines.push(format!(
                "{event} hook [{}]: {}",
                matcher.escape_debug(),
                h.command.escape_debug()
            ));
        }
    }
    for (name, s) in &wants.lsp_servers {
        lines.push(format!(
            "language server {}: {} {}",
            name.escape_debug(),
            s.command.escape_debug(),
            s.args.join(" ").escape_debug()
        ));
    }
    for (name, s) in &wants.mcp_servers {
        lines.push(format!(
            "MCP server {}: {}",
            name.escape_debug(),
            s.describe().escape_debug()
        ));
    }
    lines
}

/// What `agent trust` prints: the state, what the project asks for, what
/// of its config never applies, and how to change the state.
pub fn report(config: &super::Config) -> String {
    let state = if config.project_trusted {
        "yes".to_string()
    } else if recorded(&config.paths.data_dir, &config.workspace).is_some() {
        "no: trusted before, but what its config asks for changed since".to_string()
    } else {
        "no".to_string()
    };
    let mut out = format!(
        "project:  {}\ntrusted:  {state}\n",
        config.workspace.display()
    );
    let wants = list_wants(&config.project_wants);
    if wants.is_empty() {
        out.push_str("asks for: nothing beyond language servers (they run its code)\n");
    } else {
        out.push_str(&format!(
            "asks for ({}):\n",
            config.project_config().display()
        ));
        for w in wants {
            out.push_str(&format!("  {w}\n"));
        }
    }
    if !config.project_ignored.is_empty() {
        out.push_str(&format!(
            "never applied (only your own config can set these): {}\n",
            config.project_ignored.join(", ")
        ));
    }
    out.push_str(if config.project_trusted {
        "revoke:   agent trust --revoke\n"
    } else {
        "trust it: agent trust --yes (or run agent here and answer yes)\n"
    });
    out
}

/// The question before the interactive screen opens.
pub fn question(config: &super::Config) -> String {
    let mut text = format!(
        "agent: you have not trusted {} yet{}.\n\
         Trusting it starts language servers here (they run the project's code: build scripts, plugins)",
        config.workspace.display(),
        if recorded(&config.paths.data_dir, &config.workspace).is_some() {
            " with its current settings (they changed since you trusted it)"
        } else {
            ""
        }
    );
    let wants = list_wants(&config.project_wants);
    if wants.is_empty() {
        text.push_str(".\n");
    } else {
        text.push_str(&format!(
            " and applies what {} asks for:\n",
            config.project_config().display()
        ));
        for w in wants {
            text.push_str(&format!("  {w}\n"));
        }
    }
    if !config.project_ignored.is_empty() {
        text.push_str(&format!(
            "Never applied, trusted or not (only your own config can set these): {}\n",
            config.project_ignored.join(", ")
        ));
    }
    text
}

fn save(data_dir: &Path, all: &BTreeMap<String, String>) -> std::io::Result<()> {
    std::fs::create_dir_all(data_dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(data_dir)?;
    serde_json::to_writer_pretty(&mut tmp, all)?;
    tmp.write_all(b"\n")?;
    tmp.as_file().sync_all()?;
    tmp.persist(store(data_dir)).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_is_per_project_and_per_fingerprint() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (Path::new("/p/a"), Path::new("/p/b"));
        assert!(!is_trusted(d.path(), a, "f1"));
        record(d.path(), a, "f1").unwrap();
        assert!(is_trusted(d.path(), a, "f1"));
        assert!(!is_trusted(d.path(), a, "f2"), "changed hooks ask again");
        assert!(!is_trusted(d.path(), b, "f1"));
        record(d.path(), b, "f1").unwrap();
        assert!(is_trusted(d.path(), a, "f1"), "other records are kept");
        assert!(revoke(d.path(), a).unwrap());
        assert!(!is_trusted(d.path(), a, "f1"));
        assert!(is_trusted(d.path(), b, "f1"));
        assert!(!revoke(d.path(), a).unwrap());
    }
}
