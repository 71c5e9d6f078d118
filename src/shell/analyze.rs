//! The analysis of one bash command: parse, unwrap, follow nested code,
//! judge every part, and sum up: risk (the highest part's), whether it only
//! reads, the prefixes a session grant would remember, and any ban.

use std::path::PathBuf;
use std::sync::LazyLock;

use regex::Regex;

use super::danger::{Invocation, assignment_disables_history};
use super::parse::{Command, Script, Word, parse};
use super::paths::{PathEnv, Place};
use super::prefix::{Ban, prefix};
use super::readonly::is_read_only;
use crate::permission::{Risk, RiskAssessment};

/// Nested shells deeper than this are not followed (and are medium risk).
const MAX_DEPTH: u8 = 6;

/// One simple command of the analysed text, as the rules see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// Program and arguments after wrappers and assignments are stripped.
    pub text: String,
    /// What a session grant remembers for it; paths outside the workspace
    /// are part of it, so a grant for `rm` never covers `rm /etc/x`.
    pub prefix: String,
    /// Whether this part alone would need the person's approval.
    pub needs_approval: bool,
}

#[derive(Debug, Clone)]
pub struct Analysis {
    pub risk: RiskAssessment,
    /// Every part only reads, inside the workspace, without writing redirects:
    /// it runs without a prompt.
    pub read_only: bool,
    pub parts: Vec<Part>,
    /// The first banned command found, and why it is banned.
    pub banned: Option<Ban>,
    /// Paths outside the workspace that the command names.
    pub outside: Vec<PathBuf>,
}

pub fn analyze(command: &str, env: &PathEnv, banned: &[Ban]) -> Analysis {
    let mut a = Analyzer {
        env,
        banned,
        out: Analysis {
            risk: RiskAssessment::low(""),
            read_only: true,
            parts: Vec::new(),
            banned: None,
            outside: Vec::new(),
        },
    };
    if command.trim().is_empty() {
        a.flag(RiskAssessment::medium("the command is empty"));
    }
    a.script(command, Some(env.workspace.clone()), 0);
    if a.out.risk.reason.is_empty() {
        a.out.risk.reason = "only reads inside the project".into();
    }
    a.out
}

struct Analyzer<'a> {
    env: &'a PathEnv,
    banned: &'a [Ban],
    out: Analysis,
}

const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "ash", "fish", "mksh", "busybox",
];
const INTERPRETERS: &[(&str, &[&str])] = &[
    ("python", &["-c"]),
    ("python2", &["-c"]),
    ("python3", &["-c"]),
    ("perl", &["-e", "-E"]),
    ("ruby", &["-e"]),
    ("node", &["-e", "--eval", "-p", "--print"]),
    ("nodejs", &["-e", "--eval"]),
    ("deno", &["eval"]),
    ("bun", &["-e", "--eval"]),
    ("php", &["-r"]),
    ("lua", &["-e"]),
    ("Rscript", &["-e"]),
    ("osascript", &["-e"]),
    ("pwsh", &["-c", "-Command"]),
];
const DOWNLOADERS: &[&str] = &[
    "curl",
    "wget",
    "fetch",
    "http",
    "https",
    "aria2c",
    "xh",
    "lwp-request",
];
/// Commands whose arguments are data, never paths.
const DATA_ONLY: &[&str] = &[
    "echo", "printf", "true", "false", "seq", "sleep", "yes", "expr", "test", "[",
];
/// Stands for "standard input comes from a download" in `stdin_text`.
const DOWNLOADED: &str = "\u{0}downloaded";
const ESCALATION: &[&str] = &["sudo", "su", "doas", "pkexec", "run0"];

fn basename(program: &str) -> &str {
    if program.starts_with("./") || program.starts_with("../") {
        return program;
    }
    program.rsplit('/').next().unwrap_or(program)
}

impl Analyzer<'_> {
    fn flag(&mut self, r: RiskAssessment) {
        if r.level > Risk::Low {
            self.out.read_only = false;
        }
        self.out.risk.raise(r);
    }

    fn script(&mut self, text: &str, cwd: Option<PathBuf>, depth: u8) {
        if depth > MAX_DEPTH {
            self.flag(RiskAssessment::medium("nests shells too deeply to follow"));
            return;
        }
        let script = parse(text);
        if script.errors {
            self.flag(RiskAssessment::medium("could not be fully parsed"));
            // Judge what can be read of it: each piece between separators
            // that parses on its own.
            for piece in text
                .split(['\n', ';', '&', '|'])
                .map(str::trim)
                .filter(|p| !p.is_empty())
            {
                let clean = piece
                    .trim_start_matches(['(', '{', '!', ' '])
                    .trim_end_matches([')', '}', ' ']);
                if clean != text.trim() && !parse(clean).errors {
                    self.script(clean, cwd.clone(), depth + 1);
                }
            }
        }
        if SPAWN_LOOP.is_match(text) {
            self.flag(RiskAssessment::high(
                "starts processes in the background in an endless loop (fork bomb)",
            ));
        }
        for name in &script.self_recursive {
            self.flag(RiskAssessment::high(format!(
                "defines `{name}` to call itself (fork bomb)"
            )));
        }
        let mut cwd = cwd;
        for cmd in &script.commands {
            self.command(cmd, &script, &mut cwd, depth);
        }
    }

    fn command(&mut self, cmd: &Command, script: &Script, cwd: &mut Option<PathBuf>, depth: u8) {
        for a in &cmd.assignments {
            if assignment_disables_history(&a.text) {
                self.flag(RiskAssessment::high("disables shell history"));
            }
            if a.text.starts_with("LD_PRELOAD=") || a.text.starts_with("LD_LIBRARY_PATH=") {
                self.flag(RiskAssessment::medium("loads libraries into the command"));
            }
        }
        let mut touches_outside = Vec::new();
        for r in &cmd.redirects {
            if r.heredoc.is_some() || r.op == "<<<" {
                continue;
            }
            let target = &r.target;
            let place = if target.dynamic {
                None
            } else {
                self.env
                    .resolve(&target.text, cwd.as_deref())
                    .map(|p| (self.env.place(&p), p))
            };
            let writes = r.writes();
            match place {
                None => self.flag(RiskAssessment::medium(
                    "redirects to a file only known at run time",
                )),
                Some((Place::Harmless, _)) => {}
                Some((Place::Secret(why), p)) => {
                    touches_outside.push(p.clone());
                    self.flag(RiskAssessment::high(format!(
                        "{} {why} ({})",
                        if writes { "overwrites" } else { "reads" },
                        p.display()
                    )));
                }
                Some((Place::Persistence(why), p)) if writes => {
                    self.flag(RiskAssessment::high(format!(
                        "writes {why} ({}), which runs code later",
                        p.display()
                    )));
                    touches_outside.push(p);
                }
                Some((Place::System, p)) if writes => {
                    touches_outside.push(p.clone());
                    let what = if p.starts_with("/dev") {
                        "writes a raw device"
                    } else {
                        "writes a system file"
                    };
                    self.flag(RiskAssessment::high(format!("{what} ({})", p.display())));
                }
                Some((Place::Workspace | Place::Ancestor(_), p))
                    if p.starts_with(&self.env.workspace) =>
                {
                    if writes {
                        self.flag(RiskAssessment::medium(format!("writes {}", p.display())));
                    }
                }
                Some((_, p)) => {
                    self.flag(RiskAssessment::medium(format!(
                        "uses a path outside the project ({})",
                        p.display()
                    )));
                    touches_outside.push(p);
                }
            }
        }
        let (wrappers, words, args_from_input) = unwrap(&cmd.words);
        if words
            .first()
            .is_some_and(|w| DOWNLOADERS.contains(&basename(&w.text)))
            && cmd.redirects.iter().any(|r| {
                r.target.text.starts_with(">(") && SHELLS.iter().any(|s| r.target.text.contains(s))
            })
        {
            self.flag(RiskAssessment::high(
                "runs a script downloaded from the network",
            ));
        }
        for w in &wrappers {
            if ESCALATION.contains(&w.as_str()) {
                self.flag(RiskAssessment::high(format!(
                    "runs as another user with `{w}` (privilege escalation)"
                )));
            }
            self.check_ban(&[w.as_str()]);
        }
        let Some(first) = words.first() else {
            self.out.parts.extend(wrappers.first().map(|w| Part {
                text: w.clone(),
                prefix: w.clone(),
                needs_approval: true,
            }));
            return;
        };
        if first.dynamic {
            self.flag(RiskAssessment::medium(
                "runs a command whose name is only known at run time",
            ));
        }
        let name = basename(&first.text).to_string();
        let args: Vec<&str> = words[1..].iter().map(|w| w.text.as_str()).collect();
        let dynamic: Vec<bool> = words[1..].iter().map(|w| w.dynamic).collect();
        let mut argv: Vec<&str> = vec![name.as_str()];
        argv.extend(&args);
        self.check_ban(&argv);

        let before = self.out.risk.clone();
        let was_read_only = self.out.read_only;
        self.out.risk = RiskAssessment::low("");
        self.out.read_only = true;

        let stdin_text = self.stdin_text(cmd, script);
        self.nested(
            &name,
            &words,
            cmd,
            script,
            cwd.clone(),
            depth,
            stdin_text.as_deref(),
        );

        let inv = Invocation {
            name: &name,
            args: args.clone(),
            dynamic: dynamic.clone(),
            env: self.env,
            cwd: cwd.as_deref(),
            args_from_input,
            stdin_text,
            producer: cmd.piped_from.and_then(|i| {
                unwrap(&script.commands[i].words)
                    .1
                    .first()
                    .map(|w| basename(&w.text).to_string())
            }),
        };
        // Under xargs the extra arguments are whatever the previous command
        // printed; a reading command stays a reading command.
        let read_only = is_read_only(&name, &args);
        if let Some(r) = inv.judge() {
            self.flag(r);
        }
        if !DATA_ONLY.contains(&name.as_str()) {
            touches_outside.extend(self.check_paths(
                &name,
                &args,
                &dynamic,
                cwd.as_deref(),
                read_only,
            ));
            if cwd.is_none() {
                self.flag(RiskAssessment::medium(
                    "runs in a directory only known at run time",
                ));
            }
        }
        if !read_only {
            // Not irreversible by itself (`cargo test`, `npm run build`), but
            // not a read either: it needs approval.
            self.out.read_only = false;
            self.flag(RiskAssessment::low(format!(
                "runs `{}`, which can change files",
                prefix(&argv)
            )));
        }
        if name == "cd" || name == "pushd" {
            *cwd = match words.get(1) {
                None => self.env.home.clone(),
                Some(w) if w.dynamic || w.text == "-" => None,
                Some(w) => self.env.resolve(&w.text, cwd.as_deref()),
            };
        }

        let part_needs = !self.out.read_only;
        let mut part_prefix = prefix(&argv);
        for p in &touches_outside {
            part_prefix.push(' ');
            part_prefix.push_str(&p.display().to_string());
        }
        self.out.parts.push(Part {
            text: argv.join(" "),
            prefix: part_prefix,
            needs_approval: part_needs,
        });
        self.out.outside.extend(touches_outside);
        // Merge this part's judgment into the whole.
        let mine = std::mem::replace(&mut self.out.risk, before);
        self.out.read_only &= was_read_only;
        self.out.risk.raise(mine);
    }

    fn check_ban(&mut self, argv: &[&str]) {
        if let Some(b) = self.banned.iter().find(|b| b.matches(argv)) {
            self.flag(RiskAssessment::high(format!("`{}`: {}", b.text(), b.why)));
            if self.out.banned.is_none() {
                self.out.banned = Some(b.clone());
            }
        }
    }

    /// What the command reads on standard input, when the text is known:
    /// a heredoc, a here-string, or `echo`/`printf` piped in.
    fn stdin_text(&self, cmd: &Command, script: &Script) -> Option<String> {
        for r in &cmd.redirects {
            if let Some(h) = &r.heredoc {
                return Some(h.clone());
            }
            if r.op == "<<<" && !r.target.dynamic {
                return Some(r.target.text.clone());
            }
            if r.op == "<<<" && mentions_downloader(&r.target.text) {
                return Some(DOWNLOADED.to_string());
            }
        }
        if downloaded_upstream(cmd, script) {
            return Some(DOWNLOADED.to_string());
        }
        let producer = &script.commands[cmd.piped_from?];
        let (_, words, _) = unwrap(&producer.words);
        let name = basename(&words.first()?.text);
        if matches!(name, "echo" | "printf") && words[1..].iter().all(|w| !w.dynamic) {
            let text: Vec<&str> = words[1..]
                .iter()
                .map(|w| w.text.as_str())
                .skip_while(|w| w.starts_with('-'))
                .collect();
            return Some(text.join(" "));
        }
        None
    }

    /// Code hidden in data: `bash -c`, `eval`, scripts piped into a shell,
    /// interpreter one-liners, `find -exec`, `xargs`, `watch`, `ssh host cmd`.
    #[allow(clippy::too_many_arguments)]
    fn nested(
        &mut self,
        name: &str,
        words: &[Word],
        cmd: &Command,
        script: &Script,
        cwd: Option<PathBuf>,
        depth: u8,
        stdin: Option<&str>,
    ) {
        let rest = &words[1..];
        if SHELLS.contains(&name) {
            let mut i = 0;
            if name == "busybox"
                && rest
                    .first()
                    .is_some_and(|w| SHELLS.contains(&w.text.as_str()))
            {
                i = 1;
            }
            while i < rest.len() && rest[i].text.starts_with('-') {
                let flag = &rest[i].text;
                if !flag.starts_with("--") && flag.contains('c') {
                    let k = if rest.get(i + 1).is_some_and(|w| w.text == "--") {
                        i + 2
                    } else {
                        i + 1
                    };
                    let from_download = stdin == Some(DOWNLOADED);
                    match rest.get(k) {
                        Some(code) if code.dynamic => {
                            if from_download
                                || DOWNLOADERS.iter().any(|d| {
                                    code.text.contains(&format!("$({d}"))
                                        || code.text.contains(&format!("`{d}"))
                                })
                            {
                                self.flag(RiskAssessment::high(
                                    "runs a script downloaded from the network",
                                ));
                            } else {
                                self.flag(RiskAssessment::medium(
                                    "runs shell code built at run time",
                                ));
                            }
                        }
                        Some(_) if from_download => self.flag(RiskAssessment::high(
                            "runs a shell on a script downloaded from the network",
                        )),
                        Some(code) => self.script(&code.text, cwd, depth + 1),
                        None if from_download => self.flag(RiskAssessment::high(
                            "runs a script downloaded from the network",
                        )),
                        None => self.flag(RiskAssessment::medium("runs a shell")),
                    }
                    return;
                }
                i += 1;
            }
            match rest.get(i) {
                Some(file)
                    if matches!(
                        file.text.as_str(),
                        "/dev/stdin" | "-" | "/proc/self/fd/0" | "/dev/fd/0"
                    ) =>
                {
                    self.piped_code("", stdin, cwd, depth, name)
                }
                Some(file) if file.text.starts_with("<(") => {
                    self.piped_code(file.text.as_str(), None, cwd, depth, name)
                }
                Some(file) => self.flag(RiskAssessment::medium(format!(
                    "runs the script {}",
                    file.text
                ))),
                None => self.piped_code("", stdin, cwd, depth, name),
            }
            let _ = (cmd, script);
        } else if name == "su" {
            self.flag(RiskAssessment::high(
                "runs as another user with `su` (privilege escalation)",
            ));
            if let Some(pos) = rest
                .iter()
                .position(|w| w.text == "-c" || w.text == "--command")
            {
                match rest.get(pos + 1) {
                    Some(code) if !code.dynamic => self.script(&code.text, cwd, depth + 1),
                    _ => self.flag(RiskAssessment::medium("runs shell code built at run time")),
                }
            }
        } else if name.starts_with("python")
            && let Some(pos) = rest.iter().position(|w| w.text == "-m")
        {
            // `python -m twine upload` runs the module like a command.
            let sub = Command {
                words: rest[pos + 1..].to_vec(),
                ..Command::default()
            };
            let mut c = cwd;
            self.command(&sub, script, &mut c, depth + 1);
        } else if name == "trap" {
            if let Some(code) = rest.first().filter(|w| !w.text.starts_with('-')) {
                if code.dynamic {
                    self.flag(RiskAssessment::medium(
                        "sets a trap with code built at run time",
                    ));
                } else {
                    self.script(&code.text, cwd, depth + 1);
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
                    Some(code) if !code.dynamic => self.script(&code.text, cwd, depth + 1),
                    _ => self.flag(RiskAssessment::medium("runs shell code built at run time")),
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
                let sub = Command {
                    words,
                    ..Command::default()
                };
                let mut c = cwd;
                self.command(&sub, script, &mut c, depth + 1);
            }
        } else if matches!(name, "awk" | "gawk" | "mawk" | "nawk") {
            if let Some(program) = rest.iter().find(|w| !w.text.starts_with('-'))
                && (program.text.contains("system(")
                    || program.text.contains("| getline")
                    || program.text.contains("|&"))
            {
                for lit in string_literals(&program.text) {
                    self.script(&lit, cwd.clone(), depth + 1);
                }
            }
        } else if name == "eval" {
            if rest.iter().any(|w| w.dynamic) {
                let text: String = rest
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                if DOWNLOADERS
                    .iter()
                    .any(|d| text.contains(&format!("$({d}")) || text.contains(&format!("`{d}")))
                {
                    self.flag(RiskAssessment::high(
                        "runs a script downloaded from the network",
                    ));
                } else {
                    self.flag(RiskAssessment::medium("evaluates code built at run time"));
                }
            } else {
                let code: Vec<&str> = rest.iter().map(|w| w.text.as_str()).collect();
                self.script(&code.join(" "), cwd, depth + 1);
            }
        } else if name == "source" || name == "." {
            match rest.first() {
                Some(f) if f.text.starts_with("<(") => {
                    self.piped_code(&f.text, None, cwd, depth, name)
                }
                Some(f)
                    if matches!(
                        f.text.as_str(),
                        "/dev/stdin" | "-" | "/proc/self/fd/0" | "/dev/fd/0"
                    ) =>
                {
                    self.piped_code("", stdin, cwd, depth, "sh")
                }
                _ => self.flag(RiskAssessment::medium("runs the commands of another file")),
            }
        } else if let Some((_, flags)) = INTERPRETERS.iter().find(|(n, _)| {
            name == *n
                || (name.starts_with(n)
                    && name[n.len()..]
                        .chars()
                        .all(|c| c.is_ascii_digit() || c == '.'))
        }) {
            if let Some(pos) = rest.iter().position(|w| flags.contains(&w.text.as_str())) {
                match rest.get(pos + 1) {
                    Some(code) if !code.dynamic => self.code(name, &code.text, cwd, depth),
                    _ => self.flag(RiskAssessment::medium(format!(
                        "runs {name} code built at run time"
                    ))),
                }
            } else if let Some(file) = rest.iter().find(|w| w.text.starts_with("<(")) {
                self.piped_code(&file.text, None, cwd, depth, name);
            } else if rest.iter().all(|w| w.text.starts_with('-'))
                && !rest
                    .iter()
                    .any(|w| matches!(w.text.as_str(), "--version" | "-V" | "--help" | "-h"))
            {
                // No script file: the program comes from standard input.
                self.piped_code("", stdin, cwd, depth, name);
            }
        } else if name == "find" {
            let mut it = rest.iter().enumerate();
            while let Some((i, w)) = it.next() {
                if matches!(w.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
                    let end = rest[i + 1..]
                        .iter()
                        .position(|w| w.text == ";" || w.text == "+")
                        .map_or(rest.len(), |e| i + 1 + e);
                    // `{}` stands for what find found: with no filter, that
                    // is everything under the start directories.
                    let starts: Vec<&Word> = rest
                        .iter()
                        .take_while(|w| {
                            !w.text.starts_with('-') && !matches!(w.text.as_str(), "(" | "!")
                        })
                        .collect();
                    let words: Vec<&str> = rest.iter().map(|w| w.text.as_str()).collect();
                    let filtered = super::danger::find_filters(&words);
                    let stand_in = match starts.first() {
                        Some(w) if !filtered => (*w).clone(),
                        None if !filtered => Word {
                            text: ".".into(),
                            dynamic: false,
                        },
                        _ => Word {
                            text: "{}".into(),
                            dynamic: false,
                        },
                    };
                    let inner: Vec<Word> = rest[i + 1..end]
                        .iter()
                        .map(|w| Word {
                            text: w.text.replace("{}", &stand_in.text),
                            dynamic: w.dynamic,
                        })
                        .collect();
                    let deletes = inner.first().is_some_and(|w| {
                        matches!(basename(&w.text), "rm" | "shred" | "unlink" | "rmdir")
                    });
                    if deletes && stand_in.text != "{}" {
                        let start = stand_in.text.clone();
                        if let Some(p) = self.env.resolve(&start, cwd.as_deref()) {
                            match self.env.place(&p) {
                                Place::Ancestor(what) => self.flag(RiskAssessment::high(format!(
                                    "deletes everything under {what}"
                                ))),
                                Place::System => self.flag(RiskAssessment::high(format!(
                                    "deletes everything under the system directory {start}"
                                ))),
                                _ => {}
                            }
                        }
                    }
                    if !inner.is_empty() {
                        let sub = Command {
                            words: inner,
                            ..Command::default()
                        };
                        let mut c = cwd.clone();
                        self.command(&sub, script, &mut c, depth + 1);
                    }
                    for _ in i + 1..end {
                        it.next();
                    }
                }
            }
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
            if !code.is_empty() {
                self.script(
                    &code.join(" "),
                    if name == "ssh" { None } else { cwd },
                    depth + 1,
                );
            }
        }
    }

    /// A shell or interpreter reading its program from standard input.
    fn piped_code(
        &mut self,
        substitution: &str,
        stdin: Option<&str>,
        cwd: Option<PathBuf>,
        depth: u8,
        runner: &str,
    ) {
        let downloaded = |t: &str| {
            DOWNLOADERS.iter().any(|d| {
                t.split(|c: char| !c.is_alphanumeric() && c != '-')
                    .any(|w| w == *d)
            })
        };
        if !substitution.is_empty() {
            if downloaded(substitution) {
                self.flag(RiskAssessment::high(
                    "runs a script downloaded from the network",
                ));
            } else {
                self.flag(RiskAssessment::medium(
                    "runs a script produced by another command",
                ));
            }
            return;
        }
        match stdin {
            Some(DOWNLOADED) => self.flag(RiskAssessment::high(
                "runs a script downloaded from the network",
            )),
            Some(code) if SHELLS.contains(&runner) => self.script(code, cwd, depth + 1),
            Some(code) => self.code(runner, code, cwd, depth),
            None => self.flag(RiskAssessment::medium(format!(
                "runs a {runner} program from its input"
            ))),
        }
    }

    /// Inline interpreter code: judged for the same dangers as shell text.
    fn code(&mut self, lang: &str, code: &str, cwd: Option<PathBuf>, depth: u8) {
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
        if CHMOD_777.is_match(code) {
            self.flag(RiskAssessment::high(format!(
                "makes files writable by every user from {lang} code"
            )));
        }
        if HOME_API.is_match(code)
            && let Some(home) = self.env.home.clone()
        {
            for lit in literals.iter().filter(|l| l.starts_with('/')) {
                match self.env.place(&home.join(lit.trim_start_matches('/'))) {
                    Place::Secret(why) => self.flag(RiskAssessment::high(format!(
                        "reads {why} from {lang} code"
                    ))),
                    Place::Persistence(why) if writes_in(code) => self.flag(RiskAssessment::high(
                        format!("writes {why} from {lang} code"),
                    )),
                    _ => {}
                }
            }
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
        for lit in literals
            .iter()
            .map(String::as_str)
            .chain(HOME_API.is_match(code).then_some("~"))
        {
            let Some(path) = self
                .env
                .resolve(lit, cwd.as_deref())
                .filter(|_| lit.starts_with(['/', '~', '.']) || lit == "$HOME")
            else {
                continue;
            };
            match self.env.place(&path) {
                Place::Secret(why) => self.flag(RiskAssessment::high(format!(
                    "reads {why} ({})",
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
        }
    }

    /// Generic path rules for a command's arguments; returns the paths
    /// outside the workspace.
    fn check_paths(
        &mut self,
        name: &str,
        args: &[&str],
        dynamic: &[bool],
        cwd: Option<&std::path::Path>,
        read_only: bool,
    ) -> Vec<PathBuf> {
        let mut outside = Vec::new();
        let mut skip_next = false;
        // The first operand of these is a pattern or a program, not a path
        // (unless the pattern came with -e / -f).
        let pattern_first = matches!(
            name,
            "grep"
                | "egrep"
                | "fgrep"
                | "rg"
                | "ag"
                | "ack"
                | "sed"
                | "awk"
                | "gawk"
                | "mawk"
                | "jq"
                | "yq"
                | "zgrep"
        ) && !args
            .iter()
            .any(|a| matches!(*a, "-e" | "-f" | "--regexp" | "--file" | "--expression"));
        let mut pattern_pending = pattern_first;
        // `ln TARGET LINK`: only the link is written; the target is just text.
        let last_operand = args.iter().rposition(|a| !a.starts_with('-'));
        for (i, raw) in args.iter().enumerate() {
            if std::mem::take(&mut skip_next) {
                continue;
            }
            if pattern_pending && !raw.starts_with('-') {
                pattern_pending = false;
                continue;
            }
            if name == "ln" && Some(i) != last_operand {
                continue;
            }
            if matches!(
                *raw,
                "--grep" | "-subj" | "--xpath" | "--author" | "-S" | "-G"
            ) {
                skip_next = true;
                continue;
            }
            if raw.starts_with("--grep=")
                || raw.starts_with("--author=")
                || raw.starts_with("-subj")
            {
                continue;
            }
            if matches!(*raw, "-m" | "--message" | "-e" | "--regexp") && name != "sed" {
                skip_next = true;
                continue;
            }
            let word = raw
                .rsplit_once('=')
                .filter(|(k, _)| k.starts_with('-') || name == "dd")
                .map_or(*raw, |(_, v)| v);
            // curl's `@file` and `name=@file` upload a file.
            let word = word.rsplit_once("=@").map_or(word, |(_, f)| f);
            let word = word.strip_prefix('@').unwrap_or(word);
            // Process substitutions are judged as commands of their own;
            // arithmetic is a number.
            if raw.starts_with("<(") || raw.starts_with(">(") || raw.starts_with("$((") {
                continue;
            }
            if dynamic.get(i).copied().unwrap_or(false) {
                self.flag(RiskAssessment::medium(format!(
                    "uses an argument only known at run time ({raw})"
                )));
                continue;
            }
            if word.contains("://") || word.is_empty() {
                continue;
            }
            let pathy = word.starts_with(['/', '~', '.'])
                || word.starts_with("$HOME")
                || word.contains('/');
            if !pathy || (word.starts_with('-') && !word.contains('/')) {
                continue;
            }
            let Some(path) = self.env.resolve(word, cwd) else {
                continue;
            };
            let place = self.env.place(&path);
            if matches!(place, Place::Harmless | Place::Workspace) || path == self.env.workspace {
                continue;
            }
            self.flag(RiskAssessment::medium(format!(
                "uses a path outside the project ({})",
                path.display()
            )));
            match place {
                Place::Secret(why) => self.flag(RiskAssessment::high(format!(
                    "reads {why} ({})",
                    path.display()
                ))),
                Place::Persistence(why) if !read_only => self.flag(RiskAssessment::high(format!(
                    "changes {why} ({}), which runs code later",
                    path.display()
                ))),
                Place::System if !read_only => self.flag(RiskAssessment::high(format!(
                    "changes the system path {}",
                    path.display()
                ))),
                _ => {}
            }
            outside.push(path);
        }
        outside
    }
}

/// Whether a downloader feeds this command's input, through any number of
/// pipeline stages (`curl URL | tee x | base64 -d | sh`), or a redirection
/// from a process substitution that downloads (`bash < <(curl URL)`).
fn downloaded_upstream(cmd: &Command, script: &Script) -> bool {
    let from_substitution = cmd.redirects.iter().any(|r| {
        r.op == "<" && r.target.text.starts_with("<(") && mentions_downloader(&r.target.text)
    });
    let mut at = cmd.piped_from;
    let mut hops = 0;
    while let Some(i) = at {
        let (_, words, _) = unwrap(&script.commands[i].words);
        if words
            .first()
            .is_some_and(|w| DOWNLOADERS.contains(&basename(&w.text)))
        {
            return true;
        }
        at = script.commands[i].piped_from;
        hops += 1;
        if hops > 64 {
            break;
        }
    }
    from_substitution
}

fn mentions_downloader(text: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric() && c != '-')
        .any(|w| DOWNLOADERS.contains(&w))
}

/// Strips wrappers (`env`, `sudo`, `timeout 5`, `nice -n 5`, `xargs -0`...)
/// and returns them, the remaining words, and whether arguments arrive on
/// standard input.
fn unwrap(words: &[Word]) -> (Vec<String>, Vec<Word>, bool) {
    let mut wrappers = Vec::new();
    let mut from_input = false;
    let mut i = 0;
    while let Some(w) = words.get(i) {
        let name = basename(&w.text);
        // Options of each wrapper that take a value.
        let valued: &[&str] = match name {
            "sudo" | "doas" => &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"],
            "env" => &["-u", "-C", "--unset", "--chdir"],
            "nice" => &["-n", "--adjustment"],
            "ionice" => &["-c", "-n", "-p"],
            "timeout" => &["-s", "-k", "--signal", "--kill-after"],
            "stdbuf" => &["-i", "-o", "-e"],
            "xargs" => &[
                "-n",
                "-I",
                "-P",
                "-L",
                "-d",
                "-a",
                "-E",
                "-s",
                "--max-args",
                "--replace",
                "--delimiter",
                "--max-procs",
            ],
            "command" | "builtin" | "exec" | "nohup" | "time" | "unbuffer" | "pkexec" | "run0"
            | "caffeinate" | "chronic" | "flock" | "then" | "do" | "setsid" | "coproc"
            | "unshare" | "busybox" => &["-a"],
            "taskset" => &["-c", "--cpu-list"],
            "npx" | "pnpx" | "bunx" => &["-p", "--package", "-c", "--call"],
            "chrt" => &["-p"],
            "strace" | "ltrace" => &["-o", "-e", "-p", "-s", "-u", "-E"],
            _ => break,
        };
        if name == "command"
            && words
                .get(i + 1)
                .is_some_and(|n| n.text == "-v" || n.text == "-V")
        {
            break; // `command -v x` looks something up.
        }
        wrappers.push(name.to_string());
        from_input |= name == "xargs";
        i += 1;
        while let Some(opt) = words.get(i) {
            let t = opt.text.as_str();
            if name == "env" && t.contains('=') && !t.starts_with('-') {
                i += 1;
                continue;
            }
            if name == "env" && (t == "-S" || t == "--split-string") {
                // `env -S "rm -rf ~"`: the value is split into the command.
                let split: Vec<Word> = words
                    .get(i + 1)
                    .map(|w| {
                        w.text
                            .split_whitespace()
                            .map(|p| Word {
                                text: p.to_string(),
                                dynamic: w.dynamic,
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let mut rebuilt: Vec<Word> = split;
                rebuilt.extend(words.iter().skip(i + 2).cloned());
                let (more, inner, input) = unwrap(&rebuilt);
                wrappers.extend(more);
                return (wrappers, inner, from_input || input);
            }
            if !t.starts_with('-') || t == "-" {
                break;
            }
            i += 1;
            if t == "--" {
                break;
            }
            if valued.contains(&t) {
                i += 1;
            }
        }
        if name == "timeout" && words.get(i).is_some() {
            i += 1; // the duration
        }
        if name == "flock" && words.get(i).is_some() {
            i += 1; // the lock file
        }
        if (name == "taskset" || name == "chrt")
            && words.get(i).is_some_and(|w| {
                w.text
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() || c == 'x' || c == ',' || c == '-')
            })
        {
            i += 1; // the CPU mask or priority
        }
    }
    (wrappers, words[i.min(words.len())..].to_vec(), from_input)
}

static SHELL_OUT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"os\.execute|io\.popen|Deno\.run|Deno\.Command|os\.system|subprocess|popen|\bexec[lv]?p?e?\s*\(|\bspawn|child_process|execSync|\bsystem\s*\(|`|\bqx|Runtime\.getRuntime|\bshell_exec|\bpassthru").unwrap_or_else(|_| never())
});
static DELETE_API: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"removeSync|Deno\.remove|remove_dir_all|rmdirSync|rmtree|remove_tree|rmSync|rm_rf|rimraf|\brmdir|\bunlink|os\.remove|fs\.rm\b|FileUtils\.rm|\bremove\s*\(|Remove-Item").unwrap_or_else(|_| never())
});
static WRITE_API: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"open\s*\([^)]*['"][wa]|write|appendFile|>>|\bprint\s*\{|File\.open"#)
        .unwrap_or_else(|_| never())
});
static NETWORK_API: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"urlopen|urllib|requests\.|http\.get|https\.get|\bfetch\s*\(|Net::HTTP|LWP|open-uri|curl|wget").unwrap_or_else(|_| never())
});
static EXEC_API: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\bexec\s*\(|\beval\s*\(|then\(\s*eval\s*\)|\bsystem\s*\(|Function\s*\(")
        .unwrap_or_else(|_| never())
});
static SPAWN_LOOP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(while|until)\s+(true|:|\[\s*1\s*\]|false)\s*;?\s*do\b[^;]*&\s*(;\s*)?done")
        .unwrap_or_else(|_| never())
});
static CHMOD_777: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"chmod\w*\s*\([^)]*0o?777").unwrap_or_else(|_| never()));
static FORK_LOOP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"fork\s*(\(\s*\))?\s*while|while[^\n]{0,40}fork\s*\(|for[^\n]{0,40}:\s*os\.fork")
        .unwrap_or_else(|_| never())
});
static KILL_ALL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"kill\s*\(\s*-?1\s*,|kill\s+-?9?\s*,?\s*-1\b|process\.kill\s*\(\s*-?1\b")
        .unwrap_or_else(|_| never())
});
static HOME_API: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"expanduser|Path\.home|os\.homedir|homedir\(|process\.env\.HOME|ENV\{.?HOME.?\}|Dir\.home|ENV\[.HOME.\]|environ\[.HOME.\]|getenv\(.HOME.\)")
        .unwrap_or_else(|_| never())
});
static LITERAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#""((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|`([^`]*)`"#).unwrap_or_else(|_| never())
});

/// A regex that matches nothing, for the impossible case that one of the
/// constant patterns above fails to compile (they are covered by tests).
fn never() -> Regex {
    Regex::new(r"[^\s\S]").unwrap_or_else(|_| unreachable!("constant regex"))
}

fn writes_in(code: &str) -> bool {
    WRITE_API.is_match(code)
}

fn string_literals(code: &str) -> Vec<String> {
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
