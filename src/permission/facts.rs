//! What a tool declares about one call, for the gate: a human description,
//! the risk, the scope a session grant remembers, whether it needs approval
//! at all, and what rules match against: the paths it reads and writes,
//! the hosts it reaches, the commands it runs. Rules match capabilities,
//! not tool names: a file denied to `view` is denied to `grep` and to a
//! bash `cat` alike.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::RiskAssessment;

/// One simple command of a bash call, as rules see it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandSubject {
    /// Program and arguments (wrappers and inert assignments removed).
    pub text: String,
    /// The same with the action words first (`git commit -C x -m y`).
    pub canonical: String,
    /// The same call under another name of its program (`./myrm x` when
    /// `myrm` links to `rm`): deny and ask rules match these too.
    pub aliases: Vec<String>,
    /// Assignments that change what it does (`PATH=./bin`).
    pub assignments: Vec<String>,
    /// The program is known; an unknown one matches every bash rule that
    /// denies or asks, and no rule that allows.
    pub known: bool,
    /// The program call needs approval.
    pub needs_approval: bool,
    /// Workspace files it writes by redirection (covered like edits).
    pub files: Vec<PathBuf>,
}

/// Everything a call touches, for rules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subjects {
    /// Files and directories it reads (absolute, symlinks resolved).
    pub reads: Vec<PathBuf>,
    /// Directories it reads everything under.
    pub trees: Vec<PathBuf>,
    /// Files it creates, changes or deletes.
    pub writes: Vec<PathBuf>,
    /// Directories it may change anything under.
    pub write_trees: Vec<PathBuf>,
    /// Hosts it reaches (normalised: lower case, ASCII, no trailing dot).
    pub hosts: Vec<String>,
    /// It reads (writes) a path only known at run time: any deny rule on
    /// reading (changing) paths may be about it.
    pub unknown_reads: bool,
    pub unknown_writes: bool,
    /// It reaches a host only known at run time: any domain deny rule may
    /// be about it.
    pub unknown_hosts: bool,
    /// The simple commands of a bash call.
    pub commands: Vec<CommandSubject>,
}

/// A banned command in the call (or a program that could be one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Banned {
    pub command: String,
    pub why: String,
    /// The program is only known at run time, so every ban might apply.
    pub unknown: bool,
}

/// What "allow for this session" remembers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Scope {
    /// Nothing a grant could name (a program only known at run time).
    None,
    /// Every call of the tool.
    Tool { tool: String },
    /// Reading these paths, with any tool that reads.
    Reads { paths: Vec<PathBuf> },
    /// Changing these files (`edit`, `multiedit`, `write`, a redirection).
    Files { paths: Vec<PathBuf> },
    /// Writing files directly in these directories (`write`).
    Dirs { paths: Vec<PathBuf> },
    /// `bash`: the prefix of each part that needs approval, and the
    /// workspace files it writes by redirection. `exact` when an allow
    /// rule can say the same (no paths outside the workspace in a prefix).
    Commands {
        prefixes: Vec<String>,
        files: Vec<PathBuf>,
        exact: bool,
    },
    /// `fetch`: the domain.
    Domain { tool: String, domain: String },
}

fn shown(p: &Path, workspace: &Path) -> String {
    match p.strip_prefix(workspace) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => p.display().to_string(),
    }
}

/// A path as a glob that matches only itself.
fn literal_glob(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    for c in p.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn edit_key(p: &Path) -> String {
    format!("edit:{}", p.display())
}

fn dir_key(p: &Path) -> String {
    format!("editdir:{}", p.display())
}

impl Scope {
    /// The grant keys this scope adds.
    pub fn keys(&self) -> Vec<String> {
        match self {
            Scope::None => Vec::new(),
            Scope::Tool { tool } => vec![format!("{tool}:*")],
            Scope::Reads { paths } => paths
                .iter()
                .map(|p| format!("read:{}", p.display()))
                .collect(),
            Scope::Files { paths } => paths.iter().map(|p| edit_key(p)).collect(),
            Scope::Dirs { paths } => paths.iter().map(|p| dir_key(p)).collect(),
            Scope::Commands {
                prefixes, files, ..
            } => prefixes
                .iter()
                .filter(|p| !p.is_empty())
                .map(|p| format!("bash:{p}"))
                .chain(files.iter().map(|f| edit_key(f)))
                .collect(),
            Scope::Domain { tool, domain } => vec![format!("{tool}:domain:{domain}")],
        }
    }

    /// Whether `grants` cover this scope: every key granted; a file
    /// change is also covered by a grant on writing in its directory.
    pub fn covered_by(&self, grants: &HashSet<String>) -> bool {
        let keys = self.keys();
        let file = |p: &Path| {
            grants.contains(&edit_key(p))
                || p.parent().is_some_and(|d| grants.contains(&dir_key(d)))
        };
        !keys.is_empty()
            && match self {
                Scope::Files { paths } => paths.iter().all(|p| file(p)),
                Scope::Commands {
                    prefixes, files, ..
                } => {
                    prefixes
                        .iter()
                        .filter(|p| !p.is_empty())
                        .all(|p| grants.contains(&format!("bash:{p}")))
                        && files.iter().all(|f| file(f))
                }
                _ => keys.iter().all(|k| grants.contains(k)),
            }
    }

    /// What the grant covers, in words for the approval dialog.
    pub fn describe(&self, workspace: &Path) -> String {
        let list = |paths: &[PathBuf]| {
            paths
                .iter()
                .map(|p| shown(p, workspace))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            Scope::None => "nothing that can be remembered".into(),
            Scope::Tool { tool } => format!("every `{tool}` call in this session"),
            Scope::Reads { paths } => format!("reading {} in this session", list(paths)),
            Scope::Files { paths } => format!("changes to {} in this session", list(paths)),
            Scope::Dirs { paths } => {
                let dirs: Vec<String> = paths
                    .iter()
                    .map(|p| format!("{}/", shown(p, workspace)))
                    .collect();
                format!(
                    "writing files directly in {} in this session",
                    dirs.join(", ")
                )
            }
            Scope::Commands {
                prefixes, files, ..
            } => {
                let commands: Vec<String> = prefixes
                    .iter()
                    .filter(|p| !p.is_empty())
                    .map(|p| format!("`{p}`"))
                    .collect();
                match (commands.is_empty(), files.is_empty()) {
                    (false, true) => format!("{} commands in this session", commands.join(" and ")),
                    (false, false) => format!(
                        "{} commands writing {} in this session",
                        commands.join(" and "),
                        list(files)
                    ),
                    (true, false) => format!("writing {} in this session", list(files)),
                    (true, true) => "nothing that can be remembered".into(),
                }
            }
            Scope::Domain { tool, domain } => format!("`{tool}` from {domain} in this session"),
        }
    }

    /// Allow rules that "always" saves: exactly what the session grant
    /// covers, or `None` when no rule can say that (then "always" is not
    /// offered).
    pub fn rules(&self, workspace: &Path) -> Option<Vec<String>> {
        // `./x`, never a bare name: a bare name matches at any depth.
        let rel = |p: &Path| match p.strip_prefix(workspace) {
            Ok(r) if r.as_os_str().is_empty() => ".".to_string(),
            Ok(r) => format!("./{}", literal_glob(&r.display().to_string())),
            Err(_) => literal_glob(&p.display().to_string()),
        };
        let rules = match self {
            Scope::None => return None,
            Scope::Tool { tool } => vec![tool.clone()],
            Scope::Reads { paths } => paths.iter().map(|p| format!("view({})", rel(p))).collect(),
            Scope::Files { paths } => paths.iter().map(|p| format!("edit({})", rel(p))).collect(),
            Scope::Dirs { paths } => paths
                .iter()
                .map(|p| {
                    let dir = rel(p);
                    if dir == "." {
                        "write(./*)".to_string()
                    } else {
                        format!("write({dir}/*)")
                    }
                })
                .collect(),
            Scope::Commands {
                prefixes,
                files,
                exact,
            } => {
                if !exact {
                    return None;
                }
                prefixes
                    .iter()
                    .filter(|p| !p.is_empty())
                    .map(|p| format!("bash({p}:*)"))
                    .chain(files.iter().map(|f| format!("edit({})", rel(f))))
                    .collect()
            }
            Scope::Domain { tool, domain } => vec![format!("{tool}(domain:{domain})")],
        };
        (!rules.is_empty()).then_some(rules)
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
    pub banned: Option<Banned>,
    /// A unified diff of the change, for the approval dialog.
    pub diff: Option<String>,
    /// It changes agent's own settings or records (the user config, trust
    /// records, session data): only the person may say yes, every time,
    /// even under --yolo; nobody to ask means no.
    pub protected: Option<String>,
    /// It writes where the OS sandbox lets no command write: --yolo does
    /// not stretch to it (the person can still approve it, or turn the
    /// sandbox off).
    pub outside_sandbox: Option<String>,
}
