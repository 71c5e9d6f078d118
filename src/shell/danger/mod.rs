//! Command-specific danger rules, as data: one row per program (or family
//! of programs), each a list of cases tried in order (a condition on the
//! arguments, the risk, why), and a few procedural checks for programs
//! whose judgment needs paths or arithmetic (`checks`). Each reason names
//! the category from the design: irreversible deletion, history
//! destruction, privilege escalation, persistence, secrets,
//! infrastructure, publishing, repository and package changes.

use std::path::Path;

mod files;
mod rows;
mod services;

fn high(r: &str) -> Option<RiskAssessment> {
    Some(RiskAssessment::high(r))
}

fn medium(r: &str) -> Option<RiskAssessment> {
    Some(RiskAssessment::medium(r))
}

fn low(r: &str) -> Option<RiskAssessment> {
    Some(RiskAssessment::low(r))
}

use super::paths::{PathEnv, Place};
use crate::permission::{Risk, RiskAssessment};
pub(super) use files::{assignment_disables_history, find_filters, find_starts};

/// One simple command, unwrapped, with what the analysis knows about it.
pub struct Invocation<'a> {
    pub name: &'a str,
    pub args: Vec<&'a str>,
    pub dynamic: Vec<bool>,
    pub env: &'a PathEnv,
    pub cwd: Option<&'a Path>,
    /// Extra arguments arrive from standard input (`xargs`, `find -exec`).
    pub args_from_input: bool,
    /// Text fed to its standard input, when known (heredoc, `echo ... |`).
    pub stdin_text: Option<String>,
    /// The program whose output is piped in.
    pub producer: Option<String>,
}

/// A condition on a command's arguments.
pub(super) enum When {
    Always,
    /// The first positional word (after options and their values) is one of.
    Sub(&'static [&'static str]),
    /// Some argument is one of.
    Arg(&'static [&'static str]),
    /// Some argument starts with one of.
    ArgPrefix(&'static [&'static str]),
    /// Some argument ends with one of.
    ArgSuffix(&'static [&'static str]),
    /// Two consecutive arguments.
    Pair(&'static str, &'static str),
    /// A short flag letter (`-f`, `-rf`) or its long spelling (`--force`,
    /// `--force=x`).
    Flag(char, &'static str),
    All(&'static [When]),
    AnyOf(&'static [When]),
    Not(&'static When),
}

pub(super) enum Judge {
    /// Cases in order; the first that holds decides.
    Cases(&'static [(When, Risk, &'static str)]),
    Check(fn(&Invocation) -> Option<RiskAssessment>),
}

pub(super) struct Row {
    pub programs: &'static [&'static str],
    pub judge: Judge,
}

impl When {
    fn holds(&self, inv: &Invocation) -> bool {
        use When::*;
        let a = &inv.args;
        match self {
            Always => true,
            Sub(subs) => positional(inv.name, a)
                .first()
                .is_some_and(|s| subs.contains(s)),
            Arg(words) => a.iter().any(|x| words.contains(x)),
            ArgPrefix(prefixes) => a.iter().any(|x| prefixes.iter().any(|p| x.starts_with(p))),
            ArgSuffix(suffixes) => a.iter().any(|x| suffixes.iter().any(|s| x.ends_with(s))),
            Pair(x, y) => a.windows(2).any(|w| w[0] == *x && w[1] == *y),
            Flag(c, l) => (*c != '\0' && short(a, *c)) || (!l.is_empty() && long(a, l)),
            All(ws) => ws.iter().all(|w| w.holds(inv)),
            AnyOf(ws) => ws.iter().any(|w| w.holds(inv)),
            Not(w) => !w.holds(inv),
        }
    }
}

/// The row for a program (`mkfs.ext4` is `mkfs`).
pub(super) fn row(name: &str) -> Option<&'static Row> {
    static BY_NAME: std::sync::LazyLock<std::collections::HashMap<&'static str, &'static Row>> =
        std::sync::LazyLock::new(|| {
            rows::ROWS
                .iter()
                .flat_map(|r| r.programs.iter().map(move |p| (*p, r)))
                .collect()
        });
    let name = if name.starts_with("mkfs.") {
        "mkfs"
    } else {
        name
    };
    BY_NAME.get(name).copied()
}

impl Invocation<'_> {
    /// A specific judgment, when a row knows this command.
    pub fn judge(&self) -> Option<RiskAssessment> {
        match &row(self.name)?.judge {
            Judge::Check(f) => f(self),
            Judge::Cases(cases) => cases
                .iter()
                .find(|(when, _, _)| when.holds(self))
                .map(|(_, risk, why)| RiskAssessment::new(*risk, *why)),
        }
    }

    pub(super) fn place(&self, word: &str) -> Option<Place> {
        self.env.resolve(word, self.cwd).map(|p| self.env.place(&p))
    }

    pub(super) fn is_dynamic(&self, word: &str) -> bool {
        self.args
            .iter()
            .zip(&self.dynamic)
            .any(|(a, d)| *a == word && *d)
    }
}

pub(super) fn short(args: &[&str], c: char) -> bool {
    args.iter()
        .any(|a| a.starts_with('-') && !a.starts_with("--") && a[1..].contains(c))
}

pub(super) fn long(args: &[&str], l: &str) -> bool {
    args.iter()
        .any(|a| *a == l || a.strip_prefix(l).is_some_and(|r| r.starts_with('=')))
}

/// Global options that take a value, per program, so the word after them
/// is not mistaken for the subcommand (`kubectl -n prod delete`).
fn valued_globals(name: &str) -> &'static [&'static str] {
    match name {
        "kubectl" | "oc" | "helm" => &[
            "-n",
            "--namespace",
            "--context",
            "--cluster",
            "--user",
            "-s",
            "--server",
            "--kubeconfig",
            "--token",
            "--kube-context",
        ],
        "docker" | "podman" | "nerdctl" => &[
            "-H",
            "--host",
            "--context",
            "-c",
            "--config",
            "-l",
            "--log-level",
            "-f",
            "--file",
            "-p",
            "--project-name",
        ],
        "docker-compose" => &["-f", "--file", "-p", "--project-name", "--env-file"],
        "aws" => &[
            "--profile",
            "--region",
            "--output",
            "--endpoint-url",
            "--query",
            "--cli-input-json",
        ],
        "gcloud" | "gsutil" => &["--project", "--account", "--configuration", "-o"],
        "npm" | "pnpm" | "yarn" | "bun" => &[
            "--prefix",
            "-w",
            "--workspace",
            "--registry",
            "--filter",
            "-C",
            "--dir",
            "--cwd",
        ],
        "cargo" => &["-Z", "--config", "-C", "--manifest-path"],
        "terraform" | "tofu" | "terragrunt" => &["-chdir"],
        "git" => &[
            "-C",
            "-c",
            "--git-dir",
            "--work-tree",
            "--namespace",
            "--exec-path",
            "--config-env",
        ],
        _ => &[],
    }
}

/// Positional words of `name args`, skipping options and their values.
pub(super) fn positional<'a>(name: &str, args: &[&'a str]) -> Vec<&'a str> {
    let valued = valued_globals(name);
    let mut out = Vec::new();
    let mut skip = false;
    let mut after_dashes = false;
    for a in args {
        if std::mem::take(&mut skip) {
            continue;
        }
        if !after_dashes && *a == "--" {
            after_dashes = true;
        } else if after_dashes || !a.starts_with('-') || *a == "-" {
            // `cargo +nightly publish`: a toolchain, not the subcommand.
            if !(name == "cargo" && a.starts_with('+')) {
                out.push(*a);
            }
        } else if valued.contains(a) {
            skip = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_program_appears_in_two_rows() {
        let mut seen = std::collections::HashSet::new();
        for r in rows::ROWS {
            for p in r.programs {
                assert!(seen.insert(*p), "`{p}` has two rows");
            }
        }
    }
}
