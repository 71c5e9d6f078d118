//! Code of other languages inside a command (`python -c`, `node -e`,
//! `perl -e`...): judged for the same dangers as shell text, by the
//! strings it carries and the APIs it calls. Code that can start other
//! programs makes the command's program unknown: what it runs cannot be
//! matched against bans and deny rules.

use std::path::PathBuf;
use std::sync::LazyLock;

use regex::Regex;

use super::analyze::Analyzer;
use super::paths::Place;
use crate::permission::RiskAssessment;

pub const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "ash", "fish", "mksh", "busybox", "tcsh", "csh", "yash",
];

/// Interpreters and the options that give them code on the command line.
pub const INTERPRETERS: &[(&str, &[&str])] = &[
    ("python", &["-c"]),
    ("python2", &["-c"]),
    ("python3", &["-c"]),
    ("pypy", &["-c"]),
    ("pypy3", &["-c"]),
    ("perl", &["-e", "-E"]),
    ("ruby", &["-e"]),
    ("node", &["-e", "--eval", "-p", "--print"]),
    ("nodejs", &["-e", "--eval"]),
    ("deno", &["eval"]),
    ("bun", &["-e", "--eval"]),
    ("php", &["-r"]),
    ("lua", &["-e"]),
    ("luajit", &["-e"]),
    ("Rscript", &["-e"]),
    ("osascript", &["-e"]),
    ("pwsh", &["-c", "-Command"]),
    ("tclsh", &[]),
    ("expect", &["-c"]),
];

pub const DOWNLOADERS: &[&str] = &[
    "curl",
    "wget",
    "fetch",
    "http",
    "https",
    "aria2c",
    "xh",
    "lwp-request",
];

/// The interpreter entry for a program name (`python3.12` is `python3`).
pub fn interpreter(name: &str) -> Option<&'static [&'static str]> {
    INTERPRETERS
        .iter()
        .find(|(n, _)| {
            name == *n
                || (name.starts_with(n)
                    && name[n.len()..]
                        .chars()
                        .all(|c| c.is_ascii_digit() || c == '.'))
        })
        .map(|(_, flags)| *flags)
}

#[allow(clippy::expect_used)]
fn pattern(re: &str) -> Regex {
    Regex::new(re).expect("a constant pattern, exercised by the inline-code tests")
}

static SHELL_OUT: LazyLock<Regex> = LazyLock::new(|| {
    pattern(
        r"os\.execute|io\.popen|Deno\.run|Deno\.Command|os\.system|subprocess|popen|\bexec[lv]?p?e?\s*[\(\s]|\bspawn|child_process|execSync|\bsystem\b|`|\bqx|%x|Runtime\.getRuntime|\bshell_exec|\bpassthru|\bpty\b|\bos\.exec|\bIO\.popen|Open3|Kernel\.|\bopen\s*\(?\s*[A-Z\w]*\s*,?\s*['\x22][^'\x22]*\||\beval\b|\bcompile\s*\(|__import__|\bgetattr\s*\(|\bimportlib\b|\bctypes\b|\bFunction\s*\(|\brequire\s*\(|\bprocess\.binding|\bimport\s*\(|\bsend\s*\(|\bsyscall\b",
    )
});
static DELETE_API: LazyLock<Regex> = LazyLock::new(|| {
    pattern(
        r"removeSync|Deno\.remove|remove_dir_all|rmdirSync|rmtree|remove_tree|rmSync|rm_rf|rimraf|\brmdir|\bunlink|os\.remove|fs\.rm\b|FileUtils\.rm|\bremove\s*\(|Remove-Item",
    )
});
static WRITE_API: LazyLock<Regex> = LazyLock::new(|| {
    pattern(r#"open\s*\([^)]*['"][wa]|write|appendFile|>>|\bprint\s*\{|File\.open"#)
});
static NETWORK_API: LazyLock<Regex> = LazyLock::new(|| {
    pattern(
        r"urlopen|urllib|requests\.|http\.get|https\.get|\bfetch\s*\(|Net::HTTP|LWP|open-uri|curl|wget|socket",
    )
});
static EXEC_API: LazyLock<Regex> = LazyLock::new(|| {
    pattern(r"\bexec\s*\(|\beval\s*\(|then\(\s*eval\s*\)|\bsystem\s*\(|Function\s*\(")
});
pub static SPAWN_LOOP: LazyLock<Regex> = LazyLock::new(|| {
    pattern(r"(while|until)\s+(true|:|\[\s*1\s*\]|false)\s*;?\s*do\b[^;]*&\s*(;\s*)?done")
});
static CHMOD_777: LazyLock<Regex> = LazyLock::new(|| pattern(r"chmod\w*\s*\([^)]*0o?777"));
static FORK_LOOP: LazyLock<Regex> = LazyLock::new(|| {
    pattern(r"fork\s*(\(\s*\))?\s*while|while[^\n]{0,40}fork\s*\(|for[^\n]{0,40}:\s*os\.fork")
});
static KILL_ALL: LazyLock<Regex> = LazyLock::new(|| {
    pattern(r"kill\s*\(\s*-?1\s*,|kill\s+-?9?\s*,?\s*-1\b|process\.kill\s*\(\s*-?1\b")
});
static HOME_API: LazyLock<Regex> = LazyLock::new(|| {
    pattern(
        r"expanduser|Path\.home|os\.homedir|homedir\(|process\.env\.HOME|ENV\{.?HOME.?\}|Dir\.home|ENV\[.HOME.\]|environ\[.HOME.\]|getenv\(.HOME.\)",
    )
});
static LITERAL: LazyLock<Regex> =
    LazyLock::new(|| pattern(r#""((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|`([^`]*)`"#));

pub fn string_literals(code: &str) -> Vec<String> {
    LITERAL
        .captures_iter(code)
        .filter_map(|c| {
            c.get(1)
                .or(c.get(2))
                .or(c.get(3))
                .map(|m| m.as_str().to_string())
        })
        .collect()
}

impl Analyzer<'_> {
    /// Inline interpreter code: judged for the same dangers as shell text.
    pub(super) fn code(&mut self, lang: &str, code: &str, cwd: Option<PathBuf>, depth: u8) {
        self.flag(RiskAssessment::medium(format!("runs inline {lang} code")));
        let literals = string_literals(code);
        if SHELL_OUT.is_match(code) {
            for lit in &literals {
                self.script(lit, cwd.clone(), depth + 1);
            }
            // List form: `subprocess.run(["rm", "-rf", "/"])`.
            if literals.len() > 1 {
                let quoted: Vec<String> = literals
                    .iter()
                    .map(|l| format!("'{}'", l.replace('\'', "")))
                    .collect();
                self.script(&quoted.join(" "), cwd.clone(), depth + 1);
            }
        }
        if !super::snippets::inert_code(lang, code) {
            self.unknown(
                &format!("{lang} code that could start other programs"),
                &format!("{lang} code"),
            );
        }
        if CHMOD_777.is_match(code) {
            self.flag(RiskAssessment::high(format!(
                "makes files writable by every user from {lang} code"
            )));
        }
        if FORK_LOOP.is_match(code) {
            self.flag(RiskAssessment::high(format!(
                "forks processes in a loop from {lang} code (fork bomb)"
            )));
        }
        if KILL_ALL.is_match(code) {
            self.flag(RiskAssessment::high(format!(
                "kills init or every process from {lang} code"
            )));
        }
        let deletes = DELETE_API.is_match(code);
        let writes = WRITE_API.is_match(code);
        if NETWORK_API.is_match(code) && EXEC_API.is_match(code) {
            self.flag(RiskAssessment::high(format!(
                "runs {lang} code downloaded from the network"
            )));
        }
        let home_api = HOME_API.is_match(code);
        let mut paths: Vec<PathBuf> = Vec::new();
        if home_api && let Some(home) = self.env.home.clone() {
            paths.extend(
                literals
                    .iter()
                    .filter(|l| l.starts_with('/'))
                    .map(|l| home.join(l.trim_start_matches('/'))),
            );
            paths.push(home);
        }
        paths.extend(
            literals
                .iter()
                .filter(|l| l.starts_with(['/', '~', '.']) || l.as_str() == "$HOME")
                .filter_map(|l| self.env.resolve(l, cwd.as_deref())),
        );
        for path in paths {
            match self.env.place(&path) {
                Place::Secret(why) => self.flag(RiskAssessment::high(format!(
                    "reads {why} ({}) from {lang} code",
                    path.display()
                ))),
                Place::Persistence(why) if writes => self.flag(RiskAssessment::high(format!(
                    "writes {why} ({}), which runs code later",
                    path.display()
                ))),
                Place::Ancestor(what) if deletes => self.flag(RiskAssessment::high(format!(
                    "deletes {what} from {lang} code"
                ))),
                Place::System if deletes || writes => self.flag(RiskAssessment::high(format!(
                    "changes the system path {} from {lang} code",
                    path.display()
                ))),
                _ => {}
            }
            self.note_path(path, super::analyze::Role::Both);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_compile_and_match() {
        assert!(SHELL_OUT.is_match("import os; os.system('x')"));
        assert!(DELETE_API.is_match("shutil.rmtree('/')"));
        assert!(WRITE_API.is_match("open('x', 'w')"));
        assert!(NETWORK_API.is_match("urllib.request.urlopen(u)"));
        assert!(EXEC_API.is_match("exec(code)"));
        assert!(SPAWN_LOOP.is_match("while true; do x & done"));
        assert!(CHMOD_777.is_match("os.chmod('/x', 0o777)"));
        assert!(FORK_LOOP.is_match("while True: os.fork()"));
        assert!(KILL_ALL.is_match("os.kill(-1, 9)"));
        assert!(HOME_API.is_match("os.path.expanduser('~')"));
        assert_eq!(string_literals(r#"a("x") + 'y'"#), ["x", "y"]);
        assert!(interpreter("python3.12").is_some() && interpreter("pythonx").is_none());
    }
}
