//! Variables a command sets, and values bash evaluates as code.
//!
//! An assignment can keep a command inert (`LC_ALL=C sort`), change what
//! a later word means or which program runs (`PATH=./bin:$PATH make`,
//! `LD_PRELOAD=…`, `GIT_SSH_COMMAND=…`), or plant code that bash runs when
//! the value is evaluated (`x='a[$(cmd)]'; echo $((x))`). The first list
//! here is an allow list: any other name needs approval.

use std::collections::HashSet;

use std::path::PathBuf;

use super::analyze::Analyzer;
use super::parse::{Evaluation, Script};

/// Variables that only change language, time zone, colour or layout.
const INERT: &[&str] = &[
    "LANG",
    "LANGUAGE",
    "TZ",
    "NO_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "FORCE_COLOR",
    "COLUMNS",
    "LINES",
    "TERM",
    "COLORTERM",
    "GREP_COLOR",
    "GREP_COLORS",
    "LS_COLORS",
    "TIME_STYLE",
    "QUOTING_STYLE",
    "BLOCK_SIZE",
    "POSIXLY_CORRECT",
    "RUST_BACKTRACE",
    "RUST_LOG",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONIOENCODING",
    "GIT_PAGER_IN_USE",
];

/// Variables that choose which program runs, load code into it, or point
/// it at configuration that can (names, and `PREFIX*` families).
const CODE: &[&str] = &[
    "PATH",
    "BASH_ENV",
    "ENV",
    "IFS",
    "CDPATH",
    "HOME",
    "SHELLOPTS",
    "BASHOPTS",
    "PS1",
    "PS2",
    "PS3",
    "PS4",
    "PROMPT_COMMAND",
    "BASH_XTRACEFD",
    "GLOBIGNORE",
    "BASH_LOADABLES_PATH",
    "LD_*",
    "DYLD_*",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PYTHONHOME",
    "PYTHONINSPECT",
    "PERL5LIB",
    "PERL5OPT",
    "PERLLIB",
    "RUBYLIB",
    "RUBYOPT",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "CLASSPATH",
    "GIT_*",
    "LESSOPEN",
    "LESSCLOSE",
    "LESSKEY",
    "LESS",
    "PAGER",
    "MANPAGER",
    "MANOPT",
    "SYSTEMD_PAGER",
    "EDITOR",
    "VISUAL",
    "BROWSER",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CONFIG_DIRS",
    "RIPGREP_CONFIG_PATH",
    "TAR_OPTIONS",
    "GREP_OPTIONS",
    "ZDOTDIR",
    "MAKEFLAGS",
    "MFLAGS",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "RUSTC",
    "RUSTDOC",
    "CARGO_*",
    "RUSTFLAGS",
    "CC",
    "CXX",
    "npm_config_*",
    "NPM_CONFIG_*",
    "YARN_*",
    "PIP_*",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "GNUPGHOME",
    "DOCKER_HOST",
    "KUBECONFIG",
    "TMPDIR",
];

fn listed(list: &[&str], name: &str) -> bool {
    list.iter().any(|entry| match entry.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => *entry == name,
    })
}

/// Setting it to this value keeps a command inert. (A time zone or locale
/// that is a path makes the C library read that file.)
pub fn inert(name: &str, value: &str) -> bool {
    let path = value.starts_with(['/', ':', '.', '~']) || value.contains("..");
    (listed(INERT, name) || name.starts_with("LC_"))
        && !(path && (name == "TZ" || name.starts_with("LC_") || name.starts_with("LANG")))
}

/// Setting it can change which program runs or what code it loads.
pub fn runs_code(name: &str) -> bool {
    listed(CODE, name)
}

/// Exported in the environment commands inherit (a plain assignment then
/// changes what later commands see).
pub fn exported(name: &str) -> bool {
    std::env::var_os(name).is_some()
}

/// Variables whose value could hold code bash would evaluate.
#[derive(Debug, Default)]
pub struct Taint {
    /// Some name could not be known (`declare "$x=…"`): all are suspect.
    all: bool,
    names: HashSet<String>,
}

impl Taint {
    /// Taint from a script's own assignments: a value only known at run
    /// time, or text with `[`, `$` or a backtick (a subscript or code).
    pub fn of(script: &Script) -> Taint {
        let mut t = Taint::default();
        for (name, value) in &script.assigned {
            if name.is_empty() || name.contains('$') {
                t.all = true;
            }
            if value.dynamic || value.text.contains(['[', '$', '`']) {
                t.names.insert(name.clone());
            }
        }
        t
    }

    /// Names a builtin fills from input (`read x`, `mapfile a`).
    pub fn add(&mut self, name: &str) {
        if name.contains('$') {
            self.all = true;
        }
        self.names.insert(base_name(name).to_string());
    }

    fn tainted(&self, var: &str) -> bool {
        // A command's output, and positional parameters (`set --` sets
        // them), are values this analysis cannot read.
        let positional = var
            .trim_start_matches('$')
            .trim_start_matches('{')
            .starts_with(|c: char| c.is_ascii_digit() || c == '@' || c == '*');
        if var.starts_with("$(") || var.starts_with('`') || positional {
            return true;
        }
        let name = base_name(var);
        (self.all && !name.is_empty()) || self.names.contains(name)
    }

    /// Why an evaluation in the script could run hidden code, if it can.
    pub fn hidden(&self, script: &Script) -> Option<String> {
        self.hidden_in(&script.evaluations)
    }

    /// [`Taint::hidden`] for these evaluations.
    pub fn hidden_in(&self, evaluations: &[Evaluation]) -> Option<String> {
        for e in evaluations {
            let why = match e {
                Evaluation::Arithmetic(vars) => vars.iter().find(|v| self.tainted(v)).map(|v| {
                    format!(
                        "evaluates `{}` as arithmetic, and its value (set by the command) could hold code bash would run",
                        base_name(v)
                    )
                }),
                Evaluation::Indirect(v) if self.tainted(v) || v.is_empty() => Some(format!(
                    "expands `${{!{v}}}`: the variable it names could carry code bash would run"
                )),
                Evaluation::Prompt(v) if self.tainted(v) || v.is_empty() => Some(format!(
                    "expands `${{{v}@P}}` like a prompt, running any `$(...)` its value holds"
                )),
                Evaluation::Code(text) => identifiers(text)
                    .into_iter()
                    .find(|v| self.tainted(v))
                    .map(|v| {
                        format!("evaluates a subscript on `{v}`, whose value could hold code")
                    }),
                _ => None,
            };
            if why.is_some() {
                return why;
            }
        }
        None
    }
}

/// `$x`, `${x}`, `x[1]` → `x`.
fn base_name(var: &str) -> &str {
    let v = var.trim_start_matches('$').trim_start_matches('{');
    let end = v
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(v.len());
    &v[..end]
}

/// Names in an arithmetic text (`a[i+1]` → `a`, `i`).
fn identifiers(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| {
            w.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        })
        .collect()
}

impl Analyzer<'_> {
    /// What bash evaluates by itself: subscripts with visible code are
    /// judged as commands; values that could hide code make the program
    /// unknown.
    pub(super) fn evaluations(&mut self, script: &Script, cwd: &Option<PathBuf>, depth: u8) {
        let mut taint = Taint::of(script);
        // Builtins that fill variables from input.
        for c in &script.commands {
            let words: Vec<&str> = c.words.iter().map(|w| w.text.as_str()).collect();
            match words.first() {
                Some(&("read" | "mapfile" | "readarray" | "getopts" | "select")) => {
                    for w in words[1..].iter().filter(|w| !w.starts_with('-')) {
                        taint.add(w);
                    }
                    if words[0] != "read" {
                        taint.add("MAPFILE");
                    }
                }
                Some(&"printf") => {
                    if let Some(pos) = words.iter().position(|w| *w == "-v") {
                        taint.add(words.get(pos + 1).unwrap_or(&""));
                    }
                }
                _ => {}
            }
        }
        for e in &script.evaluations {
            if let super::parse::Evaluation::Code(text) = e
                && (text.contains("$(") || text.contains('`'))
            {
                let inner = text
                    .split_once('[')
                    .map_or(text.as_str(), |(_, rest)| rest.trim_end_matches(']'));
                self.script(&format!(": {inner}"), cwd.clone(), depth + 1);
            }
        }
        // `let y=x`, `declare -i y=x`: the values are arithmetic too.
        let mut more = Vec::new();
        for c in &script.commands {
            let words: Vec<&str> = c.words.iter().map(|w| w.text.as_str()).collect();
            let integer = matches!(
                words.first(),
                Some(&("declare" | "typeset" | "local" | "export" | "readonly"))
            ) && words[1..]
                .iter()
                .any(|w| w.starts_with('-') && w.contains('i'));
            if words.first() == Some(&"let") || integer {
                for w in &words[1..] {
                    let value = if integer {
                        w.split_once('=').map_or("", |(_, v)| v)
                    } else {
                        w
                    };
                    more.push(Evaluation::Arithmetic(
                        identifiers(value).into_iter().map(str::to_string).collect(),
                    ));
                }
            }
        }
        if let Some(why) = taint.hidden(script).or_else(|| taint.hidden_in(&more)) {
            self.unknown(&format!("hidden code: it {why}"), "an evaluated value");
        }
        // Names whose subscripts bash evaluates when a builtin sets them.
        for c in &script.commands {
            let words: Vec<&str> = c.words.iter().map(|w| w.text.as_str()).collect();
            let names_variables = matches!(
                words.first(),
                Some(
                    &("read"
                        | "mapfile"
                        | "readarray"
                        | "printf"
                        | "declare"
                        | "typeset"
                        | "local"
                        | "export"
                        | "readonly"
                        | "let"
                        | "unset"
                        | "getopts"
                        | "wait")
                )
            );
            // The words that name variables: not printf's format, not the
            // value after `=`.
            let names: Vec<&str> = match words.first() {
                Some(&"printf") => words
                    .windows(2)
                    .filter(|w| w[0] == "-v")
                    .map(|w| w[1])
                    .chain(
                        words
                            .iter()
                            .filter_map(|w| w.strip_prefix("-v").filter(|n| !n.is_empty())),
                    )
                    .collect(),
                Some(&"wait") => words
                    .windows(2)
                    .filter(|w| w[0].starts_with('-') && w[0].ends_with('p'))
                    .map(|w| w[1])
                    .collect(),
                Some(&"let") => words[1..].to_vec(),
                _ => words
                    .get(1..)
                    .unwrap_or_default()
                    .iter()
                    .filter(|w| !w.starts_with('-'))
                    .map(|w| w.split('=').next().unwrap_or(w))
                    .collect(),
            };
            if names_variables
                && names.iter().any(|w| {
                    w.split_once('[').is_some_and(|(_, idx)| {
                        let idx = idx.split(']').next().unwrap_or("");
                        !idx.chars()
                            .all(|c| c.is_ascii_digit() || c == '@' || c == '*')
                    })
                })
            {
                self.unknown(
                    &format!(
                        "`{}` with an array subscript bash evaluates as code",
                        words[0]
                    ),
                    &words.join(" "),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::parse::parse;

    fn hidden(text: &str) -> bool {
        let s = parse(text);
        Taint::of(&s).hidden(&s).is_some()
    }

    #[test]
    fn taint_follows_values_into_evaluations() {
        assert!(hidden("x='a[$(id)]'; echo $((x))"));
        assert!(hidden("x=$(cat f); echo $((x + 1))"));
        assert!(hidden("for i in $(cat f); do echo $((i*2)); done"));
        assert!(hidden("x='a[$(id)]'; [[ $x -eq 1 ]]"));
        assert!(hidden("y='$(id)'; echo ${y@P}"));
        assert!(hidden("w='a[$(id)]'; echo ${!w}"));
        assert!(!hidden("x=5; echo $((x + 1))"));
        assert!(!hidden("for i in {1..5}; do echo $((i*2)); done"));
        assert!(!hidden("echo $((HOME_COUNT + 1))"));
        assert!(!hidden("for ((i=0;i<3;i++)); do echo $i; done"));
    }

    #[test]
    fn variable_lists() {
        assert!(
            inert("LC_ALL", "C")
                && inert("LANG", "C.UTF-8")
                && !inert("PATH", "x")
                && !inert("FOO", "1")
        );
        assert!(
            inert("TZ", "Europe/Paris")
                && !inert("TZ", "/etc/shadow")
                && !inert("TZ", ":/etc/shadow")
        );
        assert!(runs_code("PATH") && runs_code("LD_PRELOAD") && runs_code("GIT_SSH_COMMAND"));
        assert!(runs_code("npm_config_script_shell") && !runs_code("FOO"));
    }
}
