//! Code hidden in data: `bash -c`, `eval`, `trap`, `alias`, scripts piped
//! into a shell, interpreter one-liners, `find -exec`, `fd -x`, `watch`,
//! `ssh host cmd`. What can be read is analysed as commands of its own;
//! what is only known at run time makes the program unknown.

use std::path::PathBuf;

use super::analyze::{Analyzer, Stdin};
use super::inline::{DOWNLOADERS, SHELLS, interpreter, string_literals};
use super::parse::{Script, SimpleCommand, Word};
use super::paths::Place;
use super::wrappers::basename;
use crate::permission::RiskAssessment;

/// Files a shell or interpreter reads its program from instead of a path.
const STDIN_FILES: &[&str] = &["/dev/stdin", "-", "/proc/self/fd/0", "/dev/fd/0"];

/// Whether code text fetches something from the network into the shell.
fn downloads(text: &str) -> bool {
    DOWNLOADERS
        .iter()
        .any(|d| text.contains(&format!("$({d}")) || text.contains(&format!("`{d}")))
}

/// Whether code text decodes something into the shell (`$(echo … | base64 -d)`).
fn decodes(text: &str) -> bool {
    [
        "base64 -d",
        "base64 --decode",
        "base32 -d",
        "xxd -r",
        "openssl enc -d",
        "openssl base64 -d",
        "uudecode",
        "gzip -d",
        "gunzip",
        "zcat",
        "rev |",
        "| rev",
    ]
    .iter()
    .any(|d| text.contains(d))
}

impl Analyzer<'_> {
    /// Code the command carries or runs; `name` is its program after
    /// wrappers, `words` its words.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn nested(
        &mut self,
        name: &str,
        words: &[Word],
        script: &Script,
        cwd: Option<PathBuf>,
        depth: u8,
        stdin: &Stdin,
    ) {
        let rest = &words[1..];
        let next = depth + 1;
        if name == "git"
            && rest
                .windows(2)
                .any(|w| w[0].text == "-c" && w[1].text.to_lowercase().starts_with("alias."))
        {
            self.unknown(
                "a git subcommand defined on the command line (`-c alias.…`)",
                "git",
            );
        }
        if SHELLS.contains(&name) {
            self.shell(name, rest, cwd, depth, stdin);
        } else if name == "su" {
            self.flag(RiskAssessment::high(
                "runs as another user with `su` (privilege escalation)",
            ));
            if let Some(pos) = rest
                .iter()
                .position(|w| w.text == "-c" || w.text == "--command")
            {
                match rest.get(pos + 1) {
                    Some(code) if !code.dynamic => self.script(&code.text, cwd, next),
                    _ => self.unknown("shell code built at run time", "su -c"),
                }
            }
        } else if name.starts_with("python") && rest.iter().any(|w| w.text == "-m") {
            // `python -m twine upload` runs the module like a command.
            let pos = rest.iter().position(|w| w.text == "-m").unwrap_or(0);
            let sub = SimpleCommand {
                words: rest[pos + 1..].to_vec(),
                ..SimpleCommand::default()
            };
            let mut c = cwd;
            self.command(&sub, script, &mut c, next);
        } else if name == "trap" {
            if let Some(code) = rest.first().filter(|w| !w.text.starts_with('-')) {
                if code.dynamic {
                    self.unknown("a trap with code built at run time", &code.text);
                } else {
                    self.script(&code.text, cwd, next);
                }
            }
        } else if name == "alias" {
            // With `expand_aliases` the value runs as code where the name is used.
            for def in rest.iter().filter(|w| w.text.contains('=')) {
                let value = def.text.split_once('=').map_or("", |(_, v)| v);
                if def.dynamic {
                    self.unknown("an alias built at run time", &def.text);
                } else if !value.is_empty() {
                    self.script(value, cwd.clone(), next);
                }
            }
        } else if name == "script" {
            if let Some(pos) = rest.iter().position(|w| {
                w.text == "-c"
                    || w.text == "--command"
                    || (w.text.starts_with('-')
                        && !w.text.starts_with("--")
                        && w.text.ends_with('c'))
            }) {
                match rest.get(pos + 1) {
                    Some(code) if !code.dynamic => self.script(&code.text, cwd, next),
                    _ => self.unknown("shell code built at run time", "script -c"),
                }
            }
        } else if name == "parallel" {
            // `parallel CMD ::: ARGS` runs CMD with each of ARGS.
            let split = rest
                .iter()
                .position(|w| w.text == ":::" || w.text == "::::")
                .unwrap_or(rest.len());
            let mut words: Vec<Word> = rest[..split].to_vec();
            words.extend(rest.get(split + 1..).unwrap_or_default().iter().cloned());
            if !words.is_empty() {
                let sub = SimpleCommand {
                    words,
                    ..SimpleCommand::default()
                };
                let mut c = cwd;
                self.command(&sub, script, &mut c, next);
            }
        } else if matches!(name, "awk" | "gawk" | "mawk" | "nawk") {
            if let Some(program) = rest.iter().find(|w| !w.text.starts_with('-'))
                && (program.text.contains("system")
                    || program.text.contains('|')
                    || program.text.contains('@'))
            {
                for lit in string_literals(&program.text) {
                    self.script(&lit, cwd.clone(), next);
                }
                self.unknown("an awk program that runs commands", &program.text);
            }
        } else if name == "eval" {
            let text: String = rest
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            if rest.iter().any(|w| w.dynamic) {
                if downloads(&text) {
                    self.flag(RiskAssessment::high(
                        "runs a script downloaded from the network",
                    ));
                }
                if decodes(&text) {
                    self.flag(RiskAssessment::high(
                        "runs decoded or obfuscated text as shell code",
                    ));
                }
                self.unknown("code built at run time (eval)", &text);
            } else {
                self.script(&text, cwd, next);
            }
        } else if name == "source" || name == "." {
            match rest.first() {
                Some(f) if f.text.starts_with("<(") => {
                    self.piped_code(&f.text, &Stdin::Unknown, cwd, depth, name)
                }
                Some(f) if STDIN_FILES.contains(&f.text.as_str()) => {
                    self.piped_code("", stdin, cwd, depth, "sh")
                }
                Some(f) if f.dynamic => {
                    self.unknown("commands of a file only known at run time", &f.text)
                }
                Some(f) => {
                    self.flag(RiskAssessment::low(format!(
                        "runs the commands of {}",
                        f.text
                    )));
                    let file = f.text.clone();
                    self.script_file(&file, cwd, depth);
                }
                None => {}
            }
        } else if let Some(flags) = interpreter(name) {
            if let Some(pos) = rest.iter().position(|w| flags.contains(&w.text.as_str())) {
                match rest.get(pos + 1) {
                    Some(code) if !code.dynamic => self.code(name, &code.text, cwd, depth),
                    _ => self.unknown(&format!("{name} code built at run time"), name),
                }
            } else if let Some(file) = rest.iter().find(|w| w.text.starts_with("<(")) {
                self.piped_code(&file.text, &Stdin::Unknown, cwd, depth, name);
            } else if rest.iter().all(|w| w.text.starts_with('-'))
                && !rest
                    .iter()
                    .any(|w| matches!(w.text.as_str(), "--version" | "-V" | "--help" | "-h" | "-v"))
            {
                // No script file: the program comes from standard input.
                self.piped_code("", stdin, cwd, depth, name);
            }
        } else if name == "find" {
            self.find_exec(rest, script, cwd, depth);
        } else if name == "fd" || name == "fdfind" {
            if let Some(pos) = rest
                .iter()
                .position(|w| matches!(w.text.as_str(), "-x" | "--exec" | "-X" | "--exec-batch"))
            {
                let end = rest[pos + 1..]
                    .iter()
                    .position(|w| w.text == ";")
                    .map_or(rest.len(), |e| pos + 1 + e);
                let inner: Vec<Word> = rest[pos + 1..end]
                    .iter()
                    .map(|w| Word {
                        dynamic: w.dynamic || w.text.contains('{'),
                        ..w.clone()
                    })
                    .collect();
                if !inner.is_empty() {
                    let sub = SimpleCommand {
                        words: inner,
                        ..SimpleCommand::default()
                    };
                    let mut c = cwd;
                    self.command(&sub, script, &mut c, next);
                }
            }
        } else if name.contains('/') && self.shell_script(name, cwd.as_deref()) {
            // `./deploy.sh`: a shell script of the project run directly.
            self.script_file(name, cwd, depth);
        } else if name == "watch"
            || name == "ssh" && rest.iter().filter(|w| !w.text.starts_with('-')).count() > 1
        {
            let skip = if name == "ssh" {
                rest.iter()
                    .position(|w| !w.text.starts_with('-'))
                    .map_or(rest.len(), |p| p + 1)
            } else {
                rest.iter()
                    .position(|w| !w.text.starts_with('-'))
                    .unwrap_or(rest.len())
            };
            let code: Vec<&str> = rest[skip..].iter().map(|w| w.text.as_str()).collect();
            if rest[skip..].iter().any(|w| w.dynamic) {
                self.unknown(
                    "a remote or repeated command built at run time",
                    &code.join(" "),
                );
            } else if !code.is_empty() {
                self.script(
                    &code.join(" "),
                    if name == "ssh" { None } else { cwd },
                    next,
                );
            }
        }
    }

    /// `bash -c CODE`, `bash FILE`, `bash` reading standard input.
    fn shell(&mut self, name: &str, rest: &[Word], cwd: Option<PathBuf>, depth: u8, stdin: &Stdin) {
        let mut i = 0;
        if name == "busybox"
            && rest
                .first()
                .is_some_and(|w| SHELLS.contains(&w.text.as_str()))
        {
            i = 1;
        }
        while let Some(flag) = rest
            .get(i)
            .map(|w| w.text.as_str())
            .filter(|f| f.starts_with('-') || f.starts_with('+'))
        {
            if matches!(flag, "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file") {
                i += 2;
                continue;
            }
            if flag.starts_with('-') && !flag.starts_with("--") && flag.contains('c') {
                let k = if rest.get(i + 1).is_some_and(|w| w.text == "--") {
                    i + 2
                } else {
                    i + 1
                };
                match rest.get(k) {
                    Some(code) if code.dynamic => {
                        if matches!(stdin, Stdin::Downloaded) || downloads(&code.text) {
                            self.flag(RiskAssessment::high(
                                "runs a script downloaded from the network",
                            ));
                        }
                        if matches!(stdin, Stdin::Decoded) || decodes(&code.text) {
                            self.flag(RiskAssessment::high(
                                "runs decoded or obfuscated text as shell code",
                            ));
                        }
                        self.unknown("shell code built at run time", &code.text);
                    }
                    Some(_) if matches!(stdin, Stdin::Downloaded) => {
                        self.flag(RiskAssessment::high(
                            "runs a shell on a script downloaded from the network",
                        ));
                        self.unknown("a script downloaded from the network", name);
                    }
                    Some(code) => self.script(&code.text, cwd, depth + 1),
                    None => self.piped_code("", stdin, cwd, depth, name),
                }
                return;
            }
            i += 1;
        }
        match rest.get(i) {
            Some(file) if STDIN_FILES.contains(&file.text.as_str()) => {
                self.piped_code("", stdin, cwd, depth, name)
            }
            Some(file) if file.text.starts_with("<(") => {
                self.piped_code(file.text.as_str(), &Stdin::Unknown, cwd, depth, name)
            }
            Some(file) if file.dynamic => {
                self.unknown("a script only known at run time", &file.text)
            }
            Some(file) => {
                self.flag(RiskAssessment::low(format!(
                    "runs the script {}",
                    file.text
                )));
                self.script_file(&file.text, cwd, depth);
            }
            None => self.piped_code("", stdin, cwd, depth, name),
        }
    }

    /// A shell or interpreter reading its program from standard input or
    /// a process substitution.
    pub(super) fn piped_code(
        &mut self,
        substitution: &str,
        stdin: &Stdin,
        cwd: Option<PathBuf>,
        depth: u8,
        runner: &str,
    ) {
        if !substitution.is_empty() {
            if super::stdin::mentions_downloader(substitution) {
                self.flag(RiskAssessment::high(
                    "runs a script downloaded from the network",
                ));
                self.unknown("a script downloaded from the network", substitution);
            } else if decodes(substitution) {
                self.flag(RiskAssessment::high(
                    "runs decoded or obfuscated text as code",
                ));
                self.unknown("decoded text run as code", substitution);
            } else {
                self.unknown("a script produced by another command", substitution);
            }
            return;
        }
        match stdin {
            Stdin::Downloaded => {
                self.flag(RiskAssessment::high(
                    "runs a script downloaded from the network",
                ));
                self.unknown("a script downloaded from the network", runner);
            }
            Stdin::Decoded => {
                self.flag(RiskAssessment::high(
                    "runs decoded or obfuscated text as code",
                ));
                self.unknown("decoded text run as code", runner);
            }
            Stdin::Text(code) if SHELLS.contains(&runner) => {
                let code = code.clone();
                self.script(&code, cwd, depth + 1)
            }
            Stdin::Text(code) => {
                let code = code.clone();
                self.code(runner, &code, cwd, depth)
            }
            Stdin::File(f) => {
                self.flag(RiskAssessment::low(format!("runs the script {f}")));
                if SHELLS.contains(&runner) {
                    let file = f.clone();
                    self.script_file(&file, cwd, depth);
                }
            }
            Stdin::Unknown => self.unknown(
                &format!("a {runner} program from another command's output"),
                runner,
            ),
            Stdin::Terminal => {}
        }
    }

    /// A shell script of the project that a command runs: its commands are
    /// judged too, so a ban or deny rule sees inside `bash deploy.sh`.
    /// Files outside the project or too large are only named.
    pub(super) fn script_file(&mut self, file: &str, cwd: Option<PathBuf>, depth: u8) {
        const MAX_SCRIPT: u64 = 64 * 1024;
        let Some(path) = self.env.resolve(file, cwd.as_deref()) else {
            return;
        };
        if let Some(how) = self
            .generated
            .iter()
            .find(|(p, _)| *p == path)
            .map(|(_, h)| *h)
        {
            self.flag(RiskAssessment::high(format!(
                "runs a script {how} earlier in the same command"
            )));
            self.unknown(&format!("a script {how} earlier in the same command"), file);
            return;
        }
        if !path.starts_with(&self.env.workspace)
            || std::fs::metadata(&path).map_or(true, |m| !m.is_file() || m.len() > MAX_SCRIPT)
        {
            return;
        }
        if let Ok(text) = std::fs::read_to_string(&path) {
            self.script(&text, cwd, depth + 1);
        }
    }

    /// Whether `file` starts with a shell's `#!` line.
    fn shell_script(&self, file: &str, cwd: Option<&std::path::Path>) -> bool {
        use std::io::Read;
        let Some(path) = self.env.resolve(file, cwd) else {
            return false;
        };
        let mut head = [0u8; 128];
        let n = std::fs::File::open(path)
            .and_then(|mut f| f.read(&mut head))
            .unwrap_or(0);
        let line = String::from_utf8_lossy(&head[..n]);
        let first = line.lines().next().unwrap_or("");
        first.starts_with("#!") && first.split(['/', ' ']).any(|w| SHELLS.contains(&w.trim()))
    }

    /// `find … -exec CMD {} ;`: CMD runs on what find found.
    fn find_exec(&mut self, rest: &[Word], script: &Script, cwd: Option<PathBuf>, depth: u8) {
        let words: Vec<&str> = rest.iter().map(|w| w.text.as_str()).collect();
        let mut i = 0;
        while i < rest.len() {
            if !matches!(
                rest[i].text.as_str(),
                "-exec" | "-execdir" | "-ok" | "-okdir"
            ) {
                i += 1;
                continue;
            }
            let end = rest[i + 1..]
                .iter()
                .position(|w| w.text == ";" || w.text == "+")
                .map_or(rest.len(), |e| i + 1 + e);
            // `{}` stands for what find found: with no filter, that is
            // everything under the start directories.
            let starts = super::danger::find_starts(&words);
            let filtered = super::danger::find_filters(&words);
            let stand_in = if filtered { "{}" } else { starts[0] };
            let inner: Vec<Word> = rest[i + 1..end]
                .iter()
                .map(|w| Word {
                    text: w.text.replace("{}", stand_in),
                    dynamic: w.dynamic,
                    pattern: w.pattern.replace("{}", stand_in),
                })
                .collect();
            // A found name inside code is code: file names choose what runs.
            let runner = inner.first().map_or("", |w| basename(&w.text));
            if (SHELLS.contains(&runner) || interpreter(runner).is_some() || runner == "eval")
                && rest[i + 1..end]
                    .iter()
                    .skip(1)
                    .any(|w| w.text.contains("{}"))
            {
                self.unknown("code built from the names of the files it finds", runner);
            }
            let deletes = inner
                .first()
                .is_some_and(|w| matches!(basename(&w.text), "rm" | "shred" | "unlink" | "rmdir"));
            if deletes
                && stand_in != "{}"
                && let Some(p) = self.env.resolve(stand_in, cwd.as_deref())
            {
                match self.env.place(&p) {
                    Place::Ancestor(what) => self.flag(RiskAssessment::high(format!(
                        "deletes everything under {what}"
                    ))),
                    Place::System => self.flag(RiskAssessment::high(format!(
                        "deletes everything under the system directory {stand_in}"
                    ))),
                    _ => {}
                }
            }
            if !inner.is_empty() {
                let sub = SimpleCommand {
                    words: inner,
                    ..SimpleCommand::default()
                };
                let mut c = cwd.clone();
                self.command(&sub, script, &mut c, depth + 1);
            }
            i = end + 1;
        }
    }
}
