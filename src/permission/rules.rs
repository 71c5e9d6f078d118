//! Permission rules in Claude Code's form, so people can carry theirs over:
//! `bash(git diff:*)`, `bash(npm run *)`, `edit(src/**)`, `view(~/.ssh/**)`,
//! `fetch(domain:docs.rs)`, `mcp_github_*`. Lists are `allow`, `ask` and
//! `deny`; precedence deny > ask > allow is the gate's order.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use serde::Serialize;

use super::facts::{CallFacts, Subjects};

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

#[derive(Debug, Clone)]
enum Spec {
    /// `git diff:*` (prefix on a word boundary) or a `*` pattern.
    Command(regex::Regex),
    Path(GlobMatcher),
    Domain(String),
}

#[derive(Debug, Clone)]
pub struct Rule {
    pub text: String,
    pub list: RuleList,
    /// The file it came from ("built-in" or a path).
    pub source: String,
    tool: GlobMatcher,
    spec: Option<Spec>,
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
        let tool_glob = GlobBuilder::new(tool)
            .build()
            .map_err(|e| format!("rule `{text}`: bad tool pattern: {e}"))?
            .compile_matcher();
        let spec = match spec {
            None | Some("") | Some("*") => None,
            Some(s) if tool == "bash" => Some(Spec::Command(
                command_pattern(s).map_err(|e| format!("rule `{text}`: {e}"))?,
            )),
            Some(s) if s.starts_with("domain:") => {
                Some(Spec::Domain(s["domain:".len()..].to_lowercase()))
            }
            Some(s) => Some(Spec::Path(
                path_glob(s, workspace, home).map_err(|e| format!("rule `{text}`: {e}"))?,
            )),
        };
        Ok(Rule {
            text: text.to_string(),
            list,
            source: source.to_string(),
            tool: tool_glob,
            spec,
        })
    }

    /// Deny and ask rules match when any subject matches; allow rules only
    /// when every subject that needs approval does (a compound command is
    /// allowed part by part, see [`RuleSet::allows`]).
    fn matches_any(&self, facts: &CallFacts) -> bool {
        if !self.tool.is_match(&facts.tool) {
            return false;
        }
        match (&self.spec, &facts.subjects) {
            (None, _) => true,
            (Some(Spec::Command(re)), Subjects::Commands(parts)) => {
                parts.iter().any(|(t, _)| re.is_match(t))
            }
            (Some(Spec::Path(g)), Subjects::Paths(paths)) => paths.iter().any(|p| g.is_match(p)),
            (Some(Spec::Domain(d)), Subjects::Host(h)) => host_matches(h, d),
            _ => false,
        }
    }

    fn matches_subject(&self, facts: &CallFacts, index: usize) -> bool {
        if !self.tool.is_match(&facts.tool) {
            return false;
        }
        match (&self.spec, &facts.subjects) {
            (None, _) => true,
            (Some(Spec::Command(re)), Subjects::Commands(parts)) => {
                parts.get(index).is_some_and(|(t, _)| re.is_match(t))
            }
            (Some(Spec::Path(g)), Subjects::Paths(paths)) => {
                paths.get(index).is_some_and(|p| g.is_match(p))
            }
            (Some(Spec::Domain(d)), Subjects::Host(h)) => index == 0 && host_matches(h, d),
            _ => false,
        }
    }
}

fn host_matches(host: &str, domain: &str) -> bool {
    let host = host.to_lowercase();
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
    regex::Regex::new(&pattern).map_err(|e| e.to_string())
}

fn path_glob(spec: &str, workspace: &Path, home: Option<&Path>) -> Result<GlobMatcher, String> {
    let absolute: PathBuf = if let Some(rest) = spec.strip_prefix("~/") {
        home.ok_or("`~` used but HOME is not set")?.join(rest)
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
    GlobBuilder::new(&absolute.to_string_lossy())
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| e.to_string())
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

    /// The first `list` rule that matches any subject of the call.
    pub fn first_match(&self, list: RuleList, facts: &CallFacts) -> Option<&Rule> {
        self.rules
            .iter()
            .find(|r| r.list == list && r.matches_any(facts))
    }

    /// An allow rule for each subject that needs approval (every one must be
    /// covered); returns the first rule used.
    pub fn allows(&self, facts: &CallFacts) -> Option<&Rule> {
        let indexes: Vec<usize> = match &facts.subjects {
            Subjects::Commands(parts) => parts
                .iter()
                .enumerate()
                .filter(|(_, (_, needs))| *needs)
                .map(|(i, _)| i)
                .collect(),
            Subjects::Paths(paths) => (0..paths.len()).collect(),
            Subjects::Host(_) => vec![0],
            Subjects::None => Vec::new(),
        };
        let allow = || self.rules.iter().filter(|r| r.list == RuleList::Allow);
        if indexes.is_empty() {
            return allow().find(|r| {
                r.matches_any(facts) || (r.tool.is_match(&facts.tool) && r.spec.is_none())
            });
        }
        let mut first = None;
        for i in indexes {
            let rule = allow().find(|r| r.matches_subject(facts, i))?;
            first.get_or_insert(rule);
        }
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permission::RiskAssessment;
    use crate::permission::facts::Scope;

    fn facts(tool: &str, subjects: Subjects) -> CallFacts {
        CallFacts {
            tool: tool.into(),
            description: String::new(),
            risk: RiskAssessment::low(""),
            scope: Scope::Tool { tool: tool.into() },
            needs_approval: true,
            subjects,
            banned: None,
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
            Subjects::Commands(parts.iter().map(|p| (p.to_string(), true)).collect()),
        )
    }

    #[test]
    fn bash_prefix_and_star_rules() {
        let r = rule("bash(git diff:*)", RuleList::Allow);
        assert!(r.matches_any(&bash(&["git diff"])));
        assert!(r.matches_any(&bash(&["git diff --stat"])));
        assert!(!r.matches_any(&bash(&["git difftool"])));
        let r = rule("bash(npm run *)", RuleList::Allow);
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
    fn path_rules_relative_home_absolute_and_names() {
        let p = |s: &str| facts("edit", Subjects::Paths(vec![PathBuf::from(s)]));
        assert!(rule("edit(src/**)", RuleList::Allow).matches_any(&p("/w/src/a/b.rs")));
        assert!(!rule("edit(src/**)", RuleList::Allow).matches_any(&p("/w/lib/a.rs")));
        assert!(rule("view(~/.ssh/**)", RuleList::Deny).matches_any(&facts(
            "view",
            Subjects::Paths(vec!["/home/u/.ssh/id_rsa".into()])
        )));
        assert!(rule("edit(*.md)", RuleList::Allow).matches_any(&p("/w/docs/x.md")));
        assert!(rule("edit(/etc/*)", RuleList::Allow).matches_any(&p("/etc/hosts")));
        assert!(!rule("edit(/etc/*)", RuleList::Allow).matches_any(&p("/etc/a/hosts")));
    }

    #[test]
    fn domains_tools_and_errors() {
        let f = facts("fetch", Subjects::Host("api.docs.rs".into()));
        assert!(rule("fetch(domain:docs.rs)", RuleList::Allow).matches_any(&f));
        assert!(
            !rule("fetch(domain:rs)", RuleList::Allow)
                .matches_any(&facts("fetch", Subjects::Host("evil.com".into())))
        );
        assert!(
            rule("mcp_github_*", RuleList::Allow)
                .matches_any(&facts("mcp_github_create_issue", Subjects::None))
        );
        assert!(!rule("mcp_github_*", RuleList::Allow).matches_any(&facts("bash", Subjects::None)));
        assert!(
            Rule::parse("bash(git", RuleList::Allow, "t", Path::new("/w"), None)
                .unwrap_err()
                .contains("does not end with `)`")
        );
    }
}
