//! Permission rules in Claude Code's form, so people can carry theirs over:
//! `bash(git diff:*)`, `Bash(npm run *)`, `edit(src/**)`, `Read(~/.ssh/**)`,
//! `WebFetch(domain:docs.rs)`, `mcp_github_*`. Lists are `allow`, `ask` and
//! `deny`; precedence deny > ask > allow is the gate's order.
//!
//! A rule with an argument is about a capability, not a tool name: a path
//! rule on any reading tool (`view`, `Read`, `grep`, `glob`, `ls`) covers
//! every read of those paths (a bash `cat` included), a path rule on any
//! changing tool (`edit`, `write`, `multiedit`) every change, a `bash`
//! rule every simple command of a bash call however it is spelled, a
//! domain rule every host reached. A rule with no argument names tools.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use serde::Serialize;

use super::facts::{CallFacts, CommandSubject};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleList {
    Allow,
    Ask,
    Deny,
}

impl std::fmt::Display for RuleList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RuleList::Allow => "allow",
            RuleList::Ask => "ask",
            RuleList::Deny => "deny",
        })
    }
}

/// The capability a rule's argument is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Bash,
    Read,
    Edit,
    Fetch,
    /// Tools whose rules take no argument.
    Plain,
}

/// Every tool name the agent has (MCP tools are `mcp_<server>_<tool>`).
pub const TOOL_NAMES: &[&str] = &[
    "view",
    "ls",
    "glob",
    "grep",
    "write",
    "edit",
    "multiedit",
    "bash",
    "job_output",
    "job_kill",
    "fetch",
    "diagnostics",
    "references",
    "lsp_restart",
    "todos",
    "agent",
];

/// A rule's tool name (ours or Claude Code's): its family and the tools
/// the name alone stands for.
fn tool_name(name: &str) -> Option<(Family, &'static [&'static str])> {
    Some(match name {
        "bash" | "Bash" => (Family::Bash, &["bash"]),
        "view" | "Read" => (Family::Read, &["view"]),
        "grep" | "Grep" => (Family::Read, &["grep"]),
        "glob" | "Glob" => (Family::Read, &["glob"]),
        "ls" | "LS" => (Family::Read, &["ls"]),
        "edit" | "Edit" => (Family::Edit, &["edit", "multiedit"]),
        "multiedit" | "MultiEdit" => (Family::Edit, &["multiedit"]),
        "write" | "Write" => (Family::Edit, &["write"]),
        "fetch" | "WebFetch" => (Family::Fetch, &["fetch"]),
        "todos" | "TodoWrite" => (Family::Plain, &["todos"]),
        "agent" | "Task" => (Family::Plain, &["agent"]),
        "job_output" => (Family::Plain, &["job_output"]),
        "job_kill" => (Family::Plain, &["job_kill"]),
        "diagnostics" => (Family::Plain, &["diagnostics"]),
        "references" => (Family::Plain, &["references"]),
        "lsp_restart" => (Family::Plain, &["lsp_restart"]),
        _ => return None,
    })
}

#[derive(Debug, Clone)]
enum Tools {
    Named(&'static [&'static str]),
    /// A pattern (`mcp_github_*`, `*`).
    Pattern(GlobMatcher),
}

#[derive(Debug, Clone)]
struct PathSpec {
    glob: GlobMatcher,
    /// The part before any wildcard.
    base: PathBuf,
    /// The pattern is `base` or `base/**`: everything under `base`.
    whole: bool,
}

impl PathSpec {
    /// A path the rule names (deny and ask rules also cover what is under
    /// a named directory).
    fn covers(&self, p: &Path, broad: bool) -> bool {
        self.glob.is_match(p) || (broad && self.whole && p.starts_with(&self.base))
    }

    /// A directory walked whole reaches what the rule names.
    fn reached_by_tree(&self, tree: &Path) -> bool {
        self.whole && (tree.starts_with(&self.base) || self.base.starts_with(tree))
    }
}

#[derive(Debug, Clone)]
enum Spec {
    /// `git diff:*` (prefix on a word boundary) or a `*` pattern.
    Command(regex::Regex),
    Path(PathSpec),
    Domain(String),
}

#[derive(Debug, Clone)]
pub struct Rule {
    pub text: String,
    pub list: RuleList,
    /// The file it came from ("built-in" or a path).
    pub source: String,
    family: Family,
    tools: Tools,
    spec: Option<Spec>,
}

/// A host as rules compare it: lower case, IDNA in ASCII, no trailing dot.
/// Every spelling of an IPv4 address (`2130706433`, `0x7f.1`) becomes its
/// dotted form, and an IPv4-mapped IPv6 address (`[::ffff:127.0.0.1]`)
/// the IPv4 address it carries.
pub fn normalize_host(host: &str) -> String {
    let trimmed = host.trim().trim_end_matches('.');
    let ascii = reqwest::Url::parse(&format!("http://{trimmed}/"))
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_else(|| trimmed.to_lowercase());
    let ascii = ascii.trim_end_matches('.');
    match ascii
        .trim_matches(['[', ']'])
        .parse::<std::net::Ipv6Addr>()
        .ok()
        .and_then(|ip| ip.to_ipv4_mapped())
    {
        Some(v4) => v4.to_string(),
        None => ascii.to_string(),
    }
}

impl Rule {
    /// Parses `tool` or `tool(spec)`; paths in specs are relative to the
    /// workspace, `~/` to the home directory, or absolute.
    pub fn parse(
        text: &str,
        list: RuleList,
        source: &str,
        workspace: &Path,
        home: Option<&Path>,
    ) -> Result<Rule, String> {
        let text = text.trim();
        let (tool, spec) = match text.split_once('(') {
            Some((tool, rest)) => {
                let inner = rest
                    .strip_suffix(')')
                    .ok_or_else(|| format!("rule `{text}` opens `(` but does not end with `)`"))?;
                (tool.trim(), Some(inner.trim()))
            }
            None => (text, None),
        };
        if tool.is_empty() {
            return Err(format!(
                "rule `{text}` names no tool; write e.g. `bash(git diff:*)` or `edit(src/**)`"
            ));
        }
        let (family, tools) = match tool_name(tool) {
            Some((family, names)) => (family, Tools::Named(names)),
            None => (Family::Plain, Tools::Pattern(tool_pattern(tool, text)?)),
        };
        let spec = match spec {
            None | Some("") | Some("*") => None,
            Some(s) => Some(match family {
                Family::Bash => {
                    Spec::Command(command_pattern(s).map_err(|e| format!("rule `{text}`: {e}"))?)
                }
                Family::Read | Family::Edit => Spec::Path(
                    path_spec(s, workspace, home).map_err(|e| format!("rule `{text}`: {e}"))?,
                ),
                Family::Fetch => match s.strip_prefix("domain:") {
                    Some(d) if !d.trim().is_empty() => Spec::Domain(normalize_host(d)),
                    _ => {
                        return Err(format!(
                            "rule `{text}`: a fetch rule names a domain, e.g. `fetch(domain:docs.rs)`"
                        ));
                    }
                },
                Family::Plain => {
                    return Err(format!(
                        "rule `{text}`: `{tool}` rules take no argument; write `{tool}` alone"
                    ));
                }
            }),
        };
        Ok(Rule {
            text: text.to_string(),
            list,
            source: source.to_string(),
            family,
            tools,
            spec,
        })
    }

    fn names_tool(&self, tool: &str) -> bool {
        match &self.tools {
            Tools::Named(names) => names.contains(&tool),
            Tools::Pattern(g) => g.is_match(tool),
        }
    }

    /// Deny and ask: the rule matches when the call does any of what it
    /// names, through any tool.
    fn matches_any(&self, facts: &CallFacts) -> bool {
        let s = &facts.subjects;
        match &self.spec {
            None => self.names_tool(&facts.tool),
            Some(Spec::Command(re)) => s
                .commands
                .iter()
                .any(|c| !c.known || command_matches(re, c, false)),
            Some(Spec::Path(p)) if self.family == Family::Read => {
                s.unknown_reads
                    || s.reads.iter().any(|r| p.covers(r, true))
                    || s.trees.iter().any(|t| p.reached_by_tree(t))
            }
            Some(Spec::Path(p)) => {
                s.unknown_writes
                    || s.writes.iter().any(|w| p.covers(w, true))
                    || s.write_trees.iter().any(|t| p.reached_by_tree(t))
                    || s.commands
                        .iter()
                        .flat_map(|c| &c.files)
                        .any(|f| p.covers(f, true))
            }
            Some(Spec::Domain(d)) => s.unknown_hosts || s.hosts.iter().any(|h| host_matches(h, d)),
        }
    }
}

/// Claude Code's `mcp__server__tool` is our `mcp_server_tool`; a pattern
/// must name at least one tool the agent can have.
fn tool_pattern(tool: &str, text: &str) -> Result<GlobMatcher, String> {
    let tool = match tool.strip_prefix("mcp__") {
        Some(rest) => match rest.split_once("__") {
            Some((server, name)) => format!("mcp_{server}_{name}"),
            None => format!("mcp_{rest}_*"),
        },
        None => tool.to_string(),
    };
    let glob = GlobBuilder::new(&tool)
        .build()
        .map_err(|e| format!("rule `{text}`: bad tool pattern: {e}"))?
        .compile_matcher();
    let known = tool.starts_with("mcp_") || TOOL_NAMES.iter().any(|t| glob.is_match(t));
    if !known {
        return Err(format!(
            "rule `{text}` names no tool agent has (`{tool}`); tools are {}, Claude Code's names (Bash, Read, Edit, Write, Grep, Glob, LS, WebFetch) and mcp_<server>_<tool>",
            TOOL_NAMES.join(", ")
        ));
    }
    Ok(glob)
}

fn command_matches(re: &regex::Regex, c: &CommandSubject, with_assignments: bool) -> bool {
    if with_assignments && !c.assignments.is_empty() {
        let pre = c.assignments.join(" ");
        return re.is_match(&format!("{pre} {}", c.canonical))
            || re.is_match(&format!("{pre} {}", c.text));
    }
    re.is_match(&c.text) || re.is_match(&c.canonical) || c.aliases.iter().any(|a| re.is_match(a))
}

fn host_matches(host: &str, domain: &str) -> bool {
    let host = normalize_host(host);
    host == domain || host.ends_with(&format!(".{domain}"))
}

fn command_pattern(spec: &str) -> Result<regex::Regex, String> {
    let pattern = if let Some(prefix) = spec.strip_suffix(":*") {
        format!("^{}(\\s.*)?$", regex::escape(prefix.trim()))
    } else if let Some(prefix) = spec.strip_suffix(" *") {
        // `npm run *`: the prefix, with or without more words.
        let inner = regex::escape(prefix.trim()).replace("\\*", ".*");
        format!("^{inner}(\\s.*)?$")
    } else {
        format!("^{}$", regex::escape(spec.trim()).replace("\\*", ".*"))
    };
    regex::RegexBuilder::new(&pattern)
        .dot_matches_new_line(true)
        .build()
        .map_err(|e| e.to_string())
}

fn path_spec(spec: &str, workspace: &Path, home: Option<&Path>) -> Result<PathSpec, String> {
    let absolute: PathBuf = if let Some(rest) = spec.strip_prefix("~/") {
        home.ok_or("`~` used but HOME is not set")?.join(rest)
    } else if spec == "~" {
        home.ok_or("`~` used but HOME is not set")?.to_path_buf()
    } else if let Some(rest) = spec.strip_prefix("//") {
        PathBuf::from("/").join(rest)
    } else if spec.starts_with('/') {
        PathBuf::from(spec)
    } else if !spec.contains('/') {
        // A bare name pattern matches at any depth: `edit(*.md)`.
        workspace.join("**").join(spec)
    } else {
        workspace.join(spec.trim_start_matches("./"))
    };
    let text = absolute.to_string_lossy().to_string();
    let glob = GlobBuilder::new(&text)
        .literal_separator(true)
        .build()
        .map_err(|e| e.to_string())?
        .compile_matcher();
    let meta = |c: char| matches!(c, '*' | '?' | '[' | '{');
    let cut = text.find(meta).unwrap_or(text.len());
    let base = PathBuf::from(text[..cut].rsplit_once('/').map_or("/", |(b, _)| b));
    let literal = !text.contains(meta);
    let whole = literal || text.strip_suffix("/**").is_some_and(|b| !b.contains(meta));
    let base = if literal { PathBuf::from(&text) } else { base };
    // Paths are compared as the kernel resolves them.
    let base = crate::realpath::physical(&base).unwrap_or(base);
    Ok(PathSpec { glob, base, whole })
}

/// All rules in effect, in the order they were loaded.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    rules: Vec<Rule>,
}

impl RuleSet {
    pub fn push(&mut self, rule: Rule) {
        self.rules.push(rule);
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The first `list` rule that matches anything the call does.
    pub fn first_match(&self, list: RuleList, facts: &CallFacts) -> Option<&Rule> {
        self.rules
            .iter()
            .find(|r| r.list == list && r.matches_any(facts))
    }

    /// Whether any deny rule names paths to read.
    pub fn denies_reads(&self) -> bool {
        self.rules.iter().any(|r| {
            r.list == RuleList::Deny
                && r.family == Family::Read
                && matches!(r.spec, Some(Spec::Path(_)))
        })
    }

    /// Whether a deny rule forbids reading `path` (a walk skips it).
    pub fn denies_read(&self, path: &Path) -> bool {
        self.rules.iter().any(|r| {
            r.list == RuleList::Deny
                && r.family == Family::Read
                && matches!(&r.spec, Some(Spec::Path(p)) if p.covers(path, true))
        })
    }

    /// Allow rules covering everything the call needs approval for;
    /// returns the first rule used. A bash call needs each part that asks
    /// covered by a bash rule and each file it writes by an edit rule;
    /// other calls need their tool named, or each path (host) they touch
    /// covered by a rule of that capability.
    pub fn allows(&self, facts: &CallFacts) -> Option<&Rule> {
        let allow = || self.rules.iter().filter(|r| r.list == RuleList::Allow);
        let path_rule = |family: Family, p: &Path| {
            allow().find(|r| {
                r.family == family && matches!(&r.spec, Some(Spec::Path(s)) if s.covers(p, false))
            })
        };
        let s = &facts.subjects;
        if facts.tool == "bash" {
            let mut first = None;
            let mut any = false;
            for c in s
                .commands
                .iter()
                .filter(|c| c.needs_approval || !c.files.is_empty())
            {
                any = true;
                if !c.known {
                    return None;
                }
                if c.needs_approval || !c.text.is_empty() {
                    let rule = allow().find(|r| {
                        r.family == Family::Bash
                            && match &r.spec {
                                None => true,
                                Some(Spec::Command(re)) => command_matches(re, c, true),
                                _ => false,
                            }
                    })?;
                    first.get_or_insert(rule);
                }
                for f in &c.files {
                    first.get_or_insert(path_rule(Family::Edit, f)?);
                }
            }
            if !any {
                return allow().find(|r| r.family == Family::Bash && r.spec.is_none());
            }
            return first;
        }
        if let Some(r) = allow().find(|r| r.spec.is_none() && r.names_tool(&facts.tool)) {
            return Some(r);
        }
        let (family, paths) = if !s.writes.is_empty() {
            (Family::Edit, &s.writes)
        } else {
            (Family::Read, &s.reads)
        };
        if !paths.is_empty() {
            let mut first = None;
            for p in paths {
                first.get_or_insert(path_rule(family, p)?);
            }
            return first;
        }
        let host = s.hosts.first()?;
        allow().find(|r| matches!(&r.spec, Some(Spec::Domain(d)) if host_matches(host, d)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permission::RiskAssessment;
    use crate::permission::facts::{Scope, Subjects};

    fn facts(tool: &str, subjects: Subjects) -> CallFacts {
        CallFacts {
            tool: tool.into(),
            description: String::new(),
            risk: RiskAssessment::low(""),
            scope: Scope::Tool { tool: tool.into() },
            needs_approval: true,
            subjects,
            banned: None,
            protected: None,
            outside_sandbox: None,
            diff: None,
        }
    }

    fn rule(text: &str, list: RuleList) -> Rule {
        Rule::parse(
            text,
            list,
            "test",
            Path::new("/w"),
            Some(Path::new("/home/u")),
        )
        .unwrap()
    }

    fn bash(parts: &[&str]) -> CallFacts {
        facts(
            "bash",
            Subjects {
                commands: parts
                    .iter()
                    .map(|p| CommandSubject {
                        text: p.to_string(),
                        canonical: p.to_string(),
                        known: true,
                        needs_approval: true,
                        ..CommandSubject::default()
                    })
                    .collect(),
                ..Subjects::default()
            },
        )
    }

    fn reads(tool: &str, paths: &[&str]) -> CallFacts {
        facts(
            tool,
            Subjects {
                reads: paths.iter().map(PathBuf::from).collect(),
                ..Subjects::default()
            },
        )
    }

    #[test]
    fn bash_prefix_and_star_rules() {
        let r = rule("bash(git diff:*)", RuleList::Allow);
        assert!(r.matches_any(&bash(&["git diff"])));
        assert!(r.matches_any(&bash(&["git diff --stat"])));
        assert!(!r.matches_any(&bash(&["git difftool"])));
        let r = rule("Bash(npm run *)", RuleList::Allow);
        assert!(r.matches_any(&bash(&["npm run build"])));
        assert!(!r.matches_any(&bash(&["npm install"])));
        let exact = rule("bash(npm test)", RuleList::Allow);
        assert!(
            exact.matches_any(&bash(&["npm test"]))
                && !exact.matches_any(&bash(&["npm test -- x"]))
        );
    }

    #[test]
    fn compound_commands_need_every_part_allowed() {
        let mut set = RuleSet::default();
        set.push(rule("bash(git diff:*)", RuleList::Allow));
        assert!(set.allows(&bash(&["git diff"])).is_some());
        assert!(set.allows(&bash(&["git diff", "rm -rf x"])).is_none());
        set.push(rule("bash(rm:*)", RuleList::Deny));
        assert_eq!(
            set.first_match(RuleList::Deny, &bash(&["ls", "rm x"]))
                .map(|r| r.text.as_str()),
            Some("bash(rm:*)")
        );
    }

    #[test]
    fn unknown_programs_meet_every_bash_deny_and_no_allow() {
        let mut f = bash(&["$c x"]);
        f.subjects.commands[0].known = false;
        assert!(rule("bash(rm:*)", RuleList::Deny).matches_any(&f));
        let mut set = RuleSet::default();
        set.push(rule("bash", RuleList::Allow));
        assert!(set.allows(&f).is_none());
    }

    #[test]
    fn path_rules_cover_the_capability_not_the_tool() {
        let deny = rule("view(~/.ssh/**)", RuleList::Deny);
        for tool in ["view", "grep", "glob", "ls", "bash"] {
            assert!(
                deny.matches_any(&reads(tool, &["/home/u/.ssh/id_rsa"])),
                "{tool}"
            );
        }
        assert!(deny.matches_any(&reads("ls", &["/home/u/.ssh"])));
        assert!(!deny.matches_any(&reads("ls", &["/home/u"])));
        let walk = facts(
            "bash",
            Subjects {
                trees: vec![PathBuf::from("/home/u")],
                ..Subjects::default()
            },
        );
        assert!(deny.matches_any(&walk), "grep -r over ~ reaches ~/.ssh");
        let edit = rule("Edit(secret/**)", RuleList::Deny);
        let w = |tool: &str| {
            facts(
                tool,
                Subjects {
                    writes: vec![PathBuf::from("/w/secret/a")],
                    ..Subjects::default()
                },
            )
        };
        assert!(edit.matches_any(&w("write")) && edit.matches_any(&w("multiedit")));
        assert!(!edit.matches_any(&reads("view", &["/w/secret/a"])));
    }

    #[test]
    fn path_rules_relative_home_absolute_and_names() {
        let p = |s: &str| {
            facts(
                "edit",
                Subjects {
                    writes: vec![PathBuf::from(s)],
                    ..Subjects::default()
                },
            )
        };
        let allows = |r: &str, f: &CallFacts| {
            let mut set = RuleSet::default();
            set.push(rule(r, RuleList::Allow));
            set.allows(f).is_some()
        };
        assert!(allows("edit(src/**)", &p("/w/src/a/b.rs")));
        assert!(!allows("edit(src/**)", &p("/w/lib/a.rs")));
        assert!(allows("edit(*.md)", &p("/w/docs/x.md")));
        assert!(allows("edit(/etc/*)", &p("/etc/hosts")));
        assert!(!allows("edit(/etc/*)", &p("/etc/a/hosts")));
        assert!(allows("Write(./log.txt)", &p("/w/log.txt")));
        assert!(!allows("edit(./log.txt)", &p("/w/sub/log.txt")));
    }

    #[test]
    fn domains_tools_and_errors() {
        let host = |h: &str| {
            facts(
                "fetch",
                Subjects {
                    hosts: vec![normalize_host(h)],
                    ..Subjects::default()
                },
            )
        };
        assert!(rule("fetch(domain:docs.rs)", RuleList::Allow).matches_any(&host("api.docs.rs")));
        assert!(rule("WebFetch(domain:Docs.RS.)", RuleList::Deny).matches_any(&host("DOCS.rs.")));
        assert!(
            rule("fetch(domain:bücher.de)", RuleList::Deny).matches_any(&host("xn--bcher-kva.de"))
        );
        assert!(!rule("fetch(domain:rs)", RuleList::Allow).matches_any(&host("evil.com")));
        assert!(
            rule("mcp_github_*", RuleList::Allow)
                .matches_any(&facts("mcp_github_create_issue", Subjects::default()))
        );
        assert!(
            rule("mcp__github__create_issue", RuleList::Deny)
                .matches_any(&facts("mcp_github_create_issue", Subjects::default()))
        );
        assert!(
            !rule("mcp_github_*", RuleList::Allow).matches_any(&facts("bash", Subjects::default()))
        );
        let err =
            |t: &str| Rule::parse(t, RuleList::Allow, "t", Path::new("/w"), None).unwrap_err();
        assert!(err("bash(git").contains("does not end with `)`"));
        assert!(err("Bsh(ls)").contains("names no tool"));
        assert!(err("WebSearch").contains("names no tool"));
        assert!(err("todos(x)").contains("take no argument"));
        assert!(err("fetch(docs.rs)").contains("names a domain"));
    }
}
