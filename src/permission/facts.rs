//! What a tool declares about one call, for the gate: a human description,
//! the risk, the scope a session grant remembers, whether it needs approval
//! at all, and what rules match against.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::RiskAssessment;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subjects {
    None,
    /// Absolute paths the call reads or writes.
    Paths(Vec<PathBuf>),
    /// The simple commands of a bash call: (text, needs approval).
    Commands(Vec<(String, bool)>),
    /// The host of a URL.
    Host(String),
}

/// What "allow for this session" remembers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Scope {
    /// Every call of the tool.
    Tool { tool: String },
    /// `write`: parent directories; `edit`: files.
    Paths { tool: String, paths: Vec<PathBuf> },
    /// `bash`: the command prefix of each part that needs approval.
    Commands { prefixes: Vec<String> },
    /// `fetch`: the domain.
    Domain { tool: String, domain: String },
}

impl Scope {
    /// The grant keys; a call is covered when all of them are granted.
    pub fn keys(&self) -> Vec<String> {
        match self {
            Scope::Tool { tool } => vec![format!("{tool}:*")],
            Scope::Paths { tool, paths } => paths
                .iter()
                .map(|p| format!("{tool}:{}", p.display()))
                .collect(),
            Scope::Commands { prefixes } => prefixes.iter().map(|p| format!("bash:{p}")).collect(),
            Scope::Domain { tool, domain } => vec![format!("{tool}:domain:{domain}")],
        }
    }

    /// What the grant covers, in words for the approval dialog.
    pub fn describe(&self, workspace: &Path) -> String {
        let show = |p: &Path| match p.strip_prefix(workspace) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => p.display().to_string(),
        };
        match self {
            Scope::Tool { tool } => format!("every `{tool}` call in this session"),
            Scope::Paths { tool, paths } if tool == "write" => {
                let dirs: Vec<String> = paths.iter().map(|p| format!("{}/", show(p))).collect();
                format!(
                    "writing files directly in {} in this session",
                    dirs.join(", ")
                )
            }
            Scope::Paths { tool, paths } => {
                let files: Vec<String> = paths.iter().map(|p| show(p)).collect();
                format!("`{tool}` on {} in this session", files.join(", "))
            }
            Scope::Commands { prefixes } => {
                let list: Vec<String> = prefixes.iter().map(|p| format!("`{p}`")).collect();
                format!("all {} commands in this session", list.join(" and "))
            }
            Scope::Domain { tool, domain } => format!("`{tool}` from {domain} in this session"),
        }
    }

    /// Allow rules that "always" saves for this scope.
    pub fn rules(&self, workspace: &Path) -> Vec<String> {
        let rel = |p: &Path| match p.strip_prefix(workspace) {
            Ok(r) => r.display().to_string(),
            Err(_) => p.display().to_string(),
        };
        match self {
            Scope::Tool { tool } => vec![tool.clone()],
            Scope::Paths { tool, paths } if tool == "write" => paths
                .iter()
                .map(|p| format!("write({}/*)", rel(p)))
                .collect(),
            Scope::Paths { tool, paths } => paths
                .iter()
                .map(|p| format!("{tool}({})", rel(p)))
                .collect(),
            Scope::Commands { prefixes } => {
                prefixes.iter().map(|p| format!("bash({p}:*)")).collect()
            }
            Scope::Domain { tool, domain } => vec![format!("{tool}(domain:{domain})")],
        }
    }
}

/// Everything the gate needs to judge one call.
#[derive(Debug, Clone)]
pub struct CallFacts {
    pub tool: String,
    /// For the person: "overwrite src/main.rs: 1,200 bytes → 3,400 bytes".
    pub description: String,
    pub risk: RiskAssessment,
    pub scope: Scope,
    /// False for a read-only call inside the workspace (gate step 6).
    pub needs_approval: bool,
    pub subjects: Subjects,
    /// A banned command in the call, and why it is banned.
    pub banned: Option<(String, String)>,
    /// A unified diff of the change, for the approval dialog.
    pub diff: Option<String>,
}
