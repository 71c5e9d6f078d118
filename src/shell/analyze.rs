//! The analysis of one bash command: parse, unwrap, follow nested code,
//! judge every part, and sum up: risk (the highest part's), whether it only
//! reads, the prefixes a session grant would remember, what each part
//! reads, writes and reaches (for deny rules), and any ban.
//!
//! It fails closed: a word whose value is only known at run time is not
//! inert, a program whose name is only known at run time is an *unknown
//! program* (matched by every ban and every bash deny rule), and text the
//! parser cannot read, or too much text to read in time, is the same.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::danger::Invocation;
use super::danger::assignment_disables_history;
use super::inline::{DOWNLOADERS, SPAWN_LOOP};
use super::parse::{Command, Script, Word, parse_until};
use super::paths::PathEnv;
use super::prefix::{Ban, prefix};
use super::readonly::is_read_only;
use super::variables;
use super::wrappers::{self, ESCALATION, basename};
use crate::permission::{Banned, Risk, RiskAssessment};

/// Nested shells deeper than this are not followed.
const MAX_DEPTH: u8 = 6;
/// Scripts and commands judged before the analysis stops, judging the
/// rest as an unknown program: a bound on time for any input.
const BUDGET: usize = 20_000;
/// Text longer than this is not cut into pieces when it does not parse.
const MAX_PIECEWISE: usize = 64 * 1024;
/// Bytes of shell text parsed in all (the command, nested code, scripts
/// of the project it runs) before the rest is judged unknown.
const MAX_TEXT: usize = 8 << 20;
/// Directory entries listed to expand globs, in all.
const MAX_LISTED: usize = 50_000;

/// How a part uses a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Read,
    Write,
    Both,
}

/// One simple command of the analysed text, as the rules see it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Part {
    /// Program and arguments after wrappers and assignments are stripped.
    pub text: String,
    /// The same words, the action words (`git commit`) first.
    pub canonical: String,
    /// The same call under the other name of its program (a symlink's
    /// target): deny and ask rules match it too.
    pub aliases: Vec<String>,
    /// Assignments that change what the command does (`PATH=./bin`).
    pub assignments: Vec<String>,
    /// What a session grant remembers for it: assignments, the action
    /// words, and paths outside the workspace, so a grant for `rm` never
    /// covers `rm /etc/x`.
    pub prefix: String,
    /// Whether the program call itself needs the person's approval
    /// (writes by redirection are in `files`).
    pub needs_approval: bool,
    /// False when the program could not be known (`$c`, `{rm,-f,x}`).
    pub program_known: bool,
    pub reads: Vec<PathBuf>,
    pub writes: Vec<PathBuf>,
    /// Directories it reads everything under.
    pub trees: Vec<PathBuf>,
    /// Directories it may change everything under.
    pub write_trees: Vec<PathBuf>,
    /// Files inside the workspace it writes by redirection: covered like
    /// an `edit` of that file.
    pub files: Vec<PathBuf>,
    pub hosts: Vec<String>,
    /// It reads (writes) a path only known at run time.
    pub unknown_reads: bool,
    pub unknown_writes: bool,
    /// It reaches a host only known at run time.
    pub unknown_hosts: bool,
    /// The prefix names paths outside the workspace.
    pub outside: bool,
}

#[derive(Debug, Clone)]
pub struct Analysis {
    pub risk: RiskAssessment,
    /// Every part only reads, inside the workspace, without writing redirects:
    /// it runs without a prompt.
    pub read_only: bool,
    pub parts: Vec<Part>,
    pub banned: Option<Banned>,
    /// Paths outside the workspace that the command names.
    pub outside: Vec<PathBuf>,
    /// Why some program could not be known, when one could not.
    pub unknown: Option<String>,
    /// It changes agent's own settings or records (see `CallFacts`).
    pub protected: Option<String>,
}

/// What a command reads on standard input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stdin {
    /// Known text: a heredoc, a here-string, `echo … |`.
    Text(String),
    /// Something downloaded (`curl … |`).
    Downloaded,
    /// Decoded or obfuscated text (`base64 -d |`, `printf '\x72…' |`).
    Decoded,
    /// A file (`< f`, `cat f |`).
    File(String),
    /// Another command's output.
    Unknown,
    /// Nothing: commands get `/dev/null`.
    Terminal,
}

/// How long the analysis of one command may take; past it, what is left is
/// judged an unknown program (a bound on time for any input, such as a
/// megabyte of here-document that tree-sitter parses slowly). A debug
/// build (the tests' binary) runs the same analysis several times slower,
/// so it gets five times the time: its verdicts then do not depend on how
/// busy the machine is.
pub const TIME_LIMIT: Duration = if cfg!(debug_assertions) {
    Duration::from_millis(400)
} else {
    Duration::from_millis(80)
};

pub fn analyze(command: &str, env: &PathEnv, banned: &[Ban]) -> Analysis {
    analyze_within(command, env, banned, TIME_LIMIT)
}

/// [`analyze`] with another time limit (tests of large inputs in debug
/// builds use a generous one, so their verdicts do not depend on speed).
pub fn analyze_within(command: &str, env: &PathEnv, banned: &[Ban], limit: Duration) -> Analysis {
    let mut a = Analyzer {
        deadline: Instant::now() + limit,
        env,
        banned,
        out: Analysis {
            risk: RiskAssessment::low(""),
            read_only: true,
            parts: Vec::new(),
            banned: None,
            outside: Vec::new(),
            unknown: None,
            protected: None,
        },
        budget: BUDGET,
        text_left: MAX_TEXT,
        listed_left: MAX_LISTED,
        generated: Vec::new(),
        cur_paths: Vec::new(),
        cur_unknown: Vec::new(),
        cur_hosts: Vec::new(),
        cur_unknown_hosts: false,
    };
    if command.trim().is_empty() {
        a.require(RiskAssessment::medium("the command is empty"));
    }
    a.script(command, Some(env.workspace.clone()), 0);
    if let Some(why) = a.out.protected.clone()
        && a.out.risk.level != Risk::High
    {
        a.flag(RiskAssessment::high(why));
    }
    if a.out.risk.reason.is_empty() {
        a.out.risk.reason = if a.out.read_only {
            "only reads inside the project".into()
        } else {
            "needs approval".into()
        };
    }
    a.out
}

pub struct Analyzer<'a> {
    pub(super) env: &'a PathEnv,
    banned: &'a [Ban],
    pub(super) out: Analysis,
    budget: usize,
    /// Past this instant nothing more is parsed or judged.
    pub(super) deadline: Instant,
    text_left: usize,
    /// Directory entries globs may still list.
    pub(super) listed_left: usize,
    /// Files the command downloads or decodes, and how.
    pub(super) generated: Vec<(PathBuf, &'static str)>,
    /// Paths the part being judged names: (path, role, whole tree).
    pub(super) cur_paths: Vec<(PathBuf, Role, bool)>,
    /// Roles of paths it uses that cannot be known.
    pub(super) cur_unknown: Vec<Role>,
    pub(super) cur_hosts: Vec<String>,
    /// The part reaches a host only known at run time.
    pub(super) cur_unknown_hosts: bool,
}

impl Analyzer<'_> {
    /// Raises the risk of the part being judged; above low it needs approval.
    pub(super) fn flag(&mut self, r: RiskAssessment) {
        if r.level > Risk::Low {
            self.out.read_only = false;
        }
        self.out.risk.raise(r);
    }

    /// The part needs approval, at this risk.
    pub(super) fn require(&mut self, r: RiskAssessment) {
        self.out.read_only = false;
        self.out.risk.raise(r);
    }

    pub(super) fn note_path(&mut self, path: PathBuf, role: Role) {
        self.guard_agent_files(&path, role);
        self.cur_paths.push((path, role, false));
    }

    pub(super) fn note_tree(&mut self, path: PathBuf, role: Role) {
        self.guard_agent_files(&path, role);
        self.cur_paths.push((path, role, true));
    }

    /// A change to agent's own settings or records (or to a directory
    /// holding them) is for the person alone to allow.
    fn guard_agent_files(&mut self, path: &std::path::Path, role: Role) {
        if role == Role::Read || self.out.protected.is_some() {
            return;
        }
        if let Some(mine) = self
            .env
            .protected
            .iter()
            .find(|p| p.starts_with(path) || path.starts_with(p))
        {
            // Raised to high at the end, unless a graver reason says so.
            self.out.protected = Some(format!(
                "changes agent's own settings or records ({}), which decide what agent allows",
                mine.display()
            ));
        }
    }

    /// The part reads or writes a path that cannot be known here: deny
    /// rules on paths of that kind apply to it.
    pub(super) fn unknown_path(&mut self, role: Role) {
        self.cur_unknown.push(role);
    }

    /// One unit of work; false once the budget is spent (and says so once).
    fn spend(&mut self) -> bool {
        if self.budget == 0 {
            return false;
        }
        self.budget -= 1;
        if Instant::now() >= self.deadline {
            self.budget = 0;
        }
        if self.budget == 0 {
            self.unknown(
                "more commands than can be judged in time",
                "the rest of the command",
            );
            return false;
        }
        true
    }

    /// A program that cannot be known: needs approval, is never
    /// remembered, and every ban and bash deny rule applies to it.
    pub(super) fn unknown(&mut self, why: &str, text: &str) {
        self.require(RiskAssessment::medium(format!("runs {why}")));
        let shown = cut(text, 80);
        // An unknown program may read, write and reach anything.
        self.out.parts.push(Part {
            text: shown.clone(),
            canonical: shown.clone(),
            needs_approval: true,
            program_known: false,
            unknown_reads: true,
            unknown_writes: true,
            unknown_hosts: true,
            ..Part::default()
        });
        self.out.unknown.get_or_insert_with(|| why.to_string());
        if !self.banned.is_empty() && self.out.banned.is_none() {
            self.out.banned = Some(Banned {
                command: shown,
                why: format!("it runs {why}"),
                unknown: true,
            });
        }
    }

    fn check_ban(&mut self, argv: &[&str]) {
        if let Some(b) = self.banned.iter().find(|b| b.matches(argv)) {
            self.flag(RiskAssessment::high(format!("`{}`: {}", b.text(), b.why)));
            if self.out.banned.is_none() {
                self.out.banned = Some(Banned {
                    command: b.text(),
                    why: b.why.clone(),
                    unknown: false,
                });
            }
        }
    }

    pub(super) fn script(&mut self, text: &str, cwd: Option<PathBuf>, depth: u8) {
        if depth > MAX_DEPTH {
            self.unknown("shells nested too deeply to follow", text);
            return;
        }
        if !self.spend() {
            return;
        }
        if text.len() > self.text_left {
            self.text_left = 0;
            self.unknown("more text than can be judged in time", text);
            return;
        }
        self.text_left -= text.len();
        let script = parse_until(text, Some(self.deadline));
        if script.errors {
            self.unknown("text that could not be fully parsed", text);
            // Judge what can be read of it: each piece between separators
            // that parses on its own.
            if text.len() <= MAX_PIECEWISE {
                for piece in text
                    .split(['\n', ';', '&', '|'])
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                {
                    let clean = piece
                        .trim_start_matches(['(', '{', '!', ' '])
                        .trim_end_matches([')', '}', ' ']);
                    if clean != text.trim() && !parse_until(clean, Some(self.deadline)).errors {
                        self.script(clean, cwd.clone(), depth + 1);
                    }
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
        // Loop variables and `${X:=v}` set variables too: one that bash or
        // the programs read (`for PATH in .`) changes what runs.
        for (name, value) in &script.assigned {
            if !variables::inert(name, &value.text)
                && (variables::runs_code(name) || variables::exported(name))
            {
                self.assignment_risk(name);
            }
        }
        for name in &script.functions {
            self.require(RiskAssessment::low(format!(
                "defines the function `{name}`, which changes what its name runs"
            )));
        }
        self.evaluations(&script, &cwd, depth);
        let mut cwd = cwd;
        for cmd in &script.commands {
            if self.budget == 0 {
                break;
            }
            self.command(cmd, &script, &mut cwd, depth);
        }
    }

    pub(super) fn command(
        &mut self,
        cmd: &Command,
        script: &Script,
        cwd: &mut Option<PathBuf>,
        depth: u8,
    ) {
        if !self.spend() {
            return;
        }
        // This part is judged on its own, then merged into the whole.
        let before = std::mem::replace(&mut self.out.risk, RiskAssessment::low(""));
        let was_read_only = std::mem::replace(&mut self.out.read_only, true);
        let outer_paths = std::mem::take(&mut self.cur_paths);
        let outer_hosts = std::mem::take(&mut self.cur_hosts);
        let outer_unknown = std::mem::take(&mut self.cur_unknown);
        let outer_unknown_hosts = std::mem::take(&mut self.cur_unknown_hosts);

        let part = self.judge_command(cmd, script, cwd, depth);
        if let Some(mut part) = part {
            part.needs_approval = !self.out.read_only;
            for (p, role, tree) in std::mem::take(&mut self.cur_paths) {
                let (list, tree_list) = match role {
                    Role::Read => (&mut part.reads, &mut part.trees),
                    Role::Write => (&mut part.writes, &mut part.write_trees),
                    Role::Both => {
                        if tree {
                            part.trees.push(p.clone());
                        } else {
                            part.reads.push(p.clone());
                        }
                        (&mut part.writes, &mut part.write_trees)
                    }
                };
                if tree {
                    tree_list.push(p);
                } else {
                    list.push(p);
                }
            }
            part.hosts = std::mem::take(&mut self.cur_hosts);
            part.unknown_hosts = std::mem::take(&mut self.cur_unknown_hosts);
            for role in std::mem::take(&mut self.cur_unknown) {
                part.unknown_reads |= role != Role::Write;
                part.unknown_writes |= role != Role::Read;
            }
            self.out.parts.push(part);
        }
        self.cur_paths = outer_paths;
        self.cur_hosts = outer_hosts;
        self.cur_unknown = outer_unknown;
        self.cur_unknown_hosts = outer_unknown_hosts;
        let mine = std::mem::replace(&mut self.out.risk, before);
        self.out.read_only &= was_read_only;
        self.out.risk.raise(mine);
    }

    /// Judges one simple command; the part it makes (none for a bare
    /// assignment that changes nothing).
    fn judge_command(
        &mut self,
        cmd: &Command,
        script: &Script,
        cwd: &mut Option<PathBuf>,
        depth: u8,
    ) -> Option<Part> {
        let mut assignments = Vec::new();
        let standalone = cmd.words.is_empty();
        for a in &cmd.assignments {
            let text = a.text();
            if assignment_disables_history(&text) {
                self.flag(RiskAssessment::high("disables shell history"));
            }
            let inert = variables::inert(&a.name, &a.value.text) && !a.value.dynamic;
            if standalone {
                // Only names the environment already exports, or that
                // bash itself reads, change later commands.
                if !inert && (variables::runs_code(&a.name) || variables::exported(&a.name)) {
                    self.assignment_risk(&a.name);
                    self.assigned_value(&a.value.text, a.value.dynamic, cwd.as_deref());
                    assignments.push(text);
                }
            } else if !inert {
                self.assignment_risk(&a.name);
                self.assigned_value(&a.value.text, a.value.dynamic, cwd.as_deref());
                assignments.push(text);
            }
        }
        let mut outside = Vec::new();
        let mut files = Vec::new();
        self.redirects(cmd, cwd.as_deref(), &mut outside, &mut files);
        let Some(words) = self.expand_arguments(&cmd.words) else {
            self.unknown("more words than brace expansion can be followed for", "{…}");
            return None;
        };
        let words = self.option_globs(words, cwd.as_deref());
        let u = wrappers::unwrap(&words);
        for a in &u.assignments {
            let (name, value) = a.split_once('=').unwrap_or((a, ""));
            if !variables::inert(name, value) {
                self.assignment_risk(name);
                self.assigned_value(value, false, cwd.as_deref());
                assignments.push(a.clone());
            }
        }
        if let Some(opt) = &u.unknown_option {
            let wrapper = u.wrappers.last().cloned().unwrap_or_default();
            self.unknown(
                &format!("a program behind an option of `{wrapper}` that is not known ({opt})"),
                &wrapper,
            );
        }
        for w in &u.wrappers {
            if ESCALATION.contains(&w.as_str()) {
                self.flag(RiskAssessment::high(format!(
                    "runs as another user with `{w}` (privilege escalation)"
                )));
            }
            self.check_ban(&[w.as_str()]);
            // `time CMD` only reports; `time -o FILE` writes a file.
            let before = &words[..words.len().saturating_sub(u.words.len())];
            let timed = w == "time"
                && !before.iter().any(|x| {
                    x.text.starts_with("-o")
                        || x.text.starts_with("--o")
                        || x.text.starts_with("--a")
                        || x.text == "-a"
                });
            if !wrappers::INERT.contains(&w.as_str()) && !timed {
                self.require(RiskAssessment::low(format!(
                    "runs the command through `{w}`"
                )));
            }
        }
        let part_cwd: Option<PathBuf> = match &u.chdir {
            Some(dir) if !dir.dynamic => self.env.resolve(&dir.text, cwd.as_deref()),
            Some(_) => None,
            None => cwd.clone(),
        };
        // A command that runs outside the project reads (at least lists)
        // there: `cd; ls`.
        if let Some(dir) = &part_cwd
            && !self.env.is_inside(dir)
            && !cmd.words.is_empty()
        {
            self.flag(RiskAssessment::medium(format!(
                "runs in a directory outside the project ({})",
                dir.display()
            )));
            self.note_path(dir.clone(), Role::Read);
            outside.push(dir.clone());
        }
        let Some(first) = u.words.first() else {
            // Only redirections or assignments.
            let text = u.wrappers.first().cloned().unwrap_or_default();
            if text.is_empty()
                && files.is_empty()
                && outside.is_empty()
                && assignments.is_empty()
                && self.cur_paths.is_empty()
            {
                return None;
            }
            let mut prefix = assignments.join(" ");
            for p in &outside {
                prefix = format!("{prefix} > {}", p.display()).trim().to_string();
            }
            self.out.outside.extend(outside.iter().cloned());
            return Some(Part {
                text: text.clone(),
                canonical: text,
                assignments,
                prefix,
                program_known: true,
                files,
                outside: !self.out.outside.is_empty(),
                ..Part::default()
            });
        };
        // The name can be read from the command (it may still name a
        // program that does not exist yet: then it is judged by its name,
        // and unknown all the same).
        let static_name = !(first.dynamic || first.is_brace() || first.is_glob());
        let mut known = static_name;
        if !known {
            self.unknown(
                &format!(
                    "a program whose name is only known at run time ({})",
                    first.text
                ),
                &first.text,
            );
        }
        let (name, alias) = match self.program(&first.text, part_cwd.as_deref()) {
            Some(named) => named,
            None => {
                if known {
                    self.unknown(
                        &format!("a program that does not exist yet ({})", first.text),
                        &first.text,
                    );
                }
                known = false;
                (basename(&first.text).to_string(), None)
            }
        };
        let args: Vec<&str> = u.words[1..].iter().map(|w| w.text.as_str()).collect();
        let mut argv: Vec<&str> = vec![name.as_str()];
        argv.extend(&args);
        let alias_argv: Option<Vec<&str>> = alias.as_deref().map(|a| {
            let mut v = vec![a];
            v.extend(&args);
            v
        });
        if static_name {
            self.check_ban(&argv);
            if let Some(other) = &alias_argv {
                self.check_ban(other);
            }
        }
        let stdin = self.stdin(cmd, script);
        if known
            && DOWNLOADERS.contains(&name.as_str())
            && cmd.redirects.iter().any(|r| {
                r.target.text.starts_with(">(")
                    && super::inline::SHELLS
                        .iter()
                        .chain(super::inline::INTERPRETERS.iter().map(|(n, _)| n))
                        .any(|s| super::stdin::mentions(&r.target.text, s))
            })
        {
            self.flag(RiskAssessment::high(
                "runs a script downloaded from the network",
            ));
        }
        if known {
            self.nested(&name, &u.words, script, part_cwd.clone(), depth, &stdin);
        }
        let inv = Invocation {
            name: &name,
            args: args.clone(),
            dynamic: u.words[1..].iter().map(|w| w.dynamic).collect(),
            env: self.env,
            cwd: part_cwd.as_deref(),
            args_from_input: u.args_from_input,
            stdin_text: match &stdin {
                Stdin::Text(t) => Some(t.clone()),
                _ => None,
            },
            producer: cmd.piped_from.and_then(|i| {
                wrappers::unwrap(&script.commands[i].words)
                    .words
                    .first()
                    .map(|w| basename(&w.text).to_string())
            }),
        };
        let mut judged = if static_name { inv.judge() } else { None };
        // A link to another program is judged as that program too.
        if let Some(other) = alias.as_deref().filter(|_| static_name) {
            let as_other = Invocation { name: other, ..inv };
            if let Some(r) = as_other.judge() {
                match &mut judged {
                    Some(j) => j.raise(r),
                    None => judged = Some(r),
                }
            }
        }
        let has_rule = judged.is_some();
        if let Some(r) = judged {
            self.require(r);
        }
        let read_only = known
            && is_read_only(&name, &args)
            && (!u.args_from_input || self.input_args_inert(&name, &u, cmd, script))
            && !self.diffs_directories(&name, &args, part_cwd.as_deref());
        let read_only = read_only && {
            match toolchain_file(&name, part_cwd.as_deref(), &self.env.workspace) {
                Some(why) => {
                    self.require(RiskAssessment::medium(why));
                    false
                }
                None => true,
            }
        };
        let read_only = if name == "git" {
            match self.git_runs_programs(&args, part_cwd.as_deref()) {
                Some(why) => {
                    self.require(RiskAssessment::medium(why));
                    false
                }
                None => read_only,
            }
        } else {
            read_only
        };
        if u.args_from_file {
            self.require(RiskAssessment::low(
                "takes its arguments from a file, unknown here",
            ));
        }
        let mut operands = u.words[1..].to_vec();
        if u.args_from_input {
            // `xargs CMD`: what arrives on standard input are arguments too.
            match &stdin {
                Stdin::Text(t) => operands.extend(t.split_whitespace().map(Word::literal)),
                _ if read_only => {}
                _ => self.unknown_path(Role::Both),
            }
        }
        if u.args_from_file {
            self.unknown_path(Role::Both);
        }
        outside.extend(self.check_paths(&name, &operands, part_cwd.as_deref(), read_only));
        // What a download or a decoder writes is remembered: running it
        // later in the same command is running that text.
        let made = if DOWNLOADERS.contains(&name.as_str()) {
            Some("downloaded")
        } else if super::stdin::decodes(&name, &args) {
            Some("decoded")
        } else {
            None
        };
        if let Some(how) = made {
            let written: Vec<PathBuf> = self
                .cur_paths
                .iter()
                .filter(|(_, role, _)| *role != Role::Read)
                .map(|(p, _, _)| p.clone())
                .collect();
            self.generated.extend(written.into_iter().map(|p| (p, how)));
        }
        if part_cwd.is_none() {
            self.require(RiskAssessment::medium(
                "runs in a directory only known at run time",
            ));
        }
        if !read_only && !has_rule && known {
            // Not irreversible by itself (`cargo test`, `npm run build`),
            // but not known to be a read either: it needs approval.
            self.require(RiskAssessment::low(format!(
                "runs `{}`, which is not known to only read",
                prefix(&argv)
            )));
        }
        if name == "cd" || name == "pushd" {
            // `cd -P dir`, `cd -e dir`, `cd -- dir`: options first.
            let mut rest = u.words[1..]
                .iter()
                .skip_while(|w| w.text.starts_with('-') && w.text != "-" && w.text != "--");
            let target = match rest.next() {
                Some(w) if w.text == "--" => rest.next(),
                other => other,
            };
            *cwd = match target {
                None if name == "cd" => self.env.home.clone(),
                None => None,
                Some(w) if w.dynamic || w.text == "-" || w.is_brace() || w.is_glob() => None,
                Some(w) if w.text.starts_with('+') || w.text.starts_with("-") => None,
                Some(w) => self.env.resolve(&w.text, cwd.as_deref()),
            };
        } else if name == "popd" {
            *cwd = None;
        }

        let action = prefix(&argv);
        let canonical = canonical(&action, &argv);
        let mut part_prefix = assignments.join(" ");
        if known {
            if !part_prefix.is_empty() {
                part_prefix.push(' ');
            }
            part_prefix.push_str(&action);
        }
        for p in &outside {
            part_prefix.push(' ');
            part_prefix.push_str(&p.display().to_string());
        }
        let is_outside = !outside.is_empty();
        self.out.outside.extend(outside);
        Some(Part {
            text: argv.join(" "),
            aliases: alias_argv.map(|a| a.join(" ")).into_iter().collect(),
            canonical,
            assignments,
            prefix: if known { part_prefix } else { String::new() },
            needs_approval: false,
            program_known: known,
            files,
            outside: is_outside,
            ..Part::default()
        })
    }

    /// The program a command name runs, and what else it is known as. A
    /// bare name is itself. A path outside the project is its file name
    /// (`./../../../bin/rm` is `rm`; multi-call programs read that name), a
    /// path inside is `./path`; either way, when the file is a symlink, the
    /// name of its target is the other name (`./myrm` → `rm`). `None` for a
    /// path to nothing (a program the command itself would create).
    fn program(
        &self,
        text: &str,
        cwd: Option<&std::path::Path>,
    ) -> Option<(String, Option<String>)> {
        if !text.contains('/') {
            return Some((text.to_string(), None));
        }
        let (dir, file) = text.rsplit_once('/').unwrap_or(("", text));
        let dir = if dir.is_empty() && text.starts_with('/') {
            "/"
        } else {
            dir
        };
        let Some(dir) = self
            .env
            .resolve(if dir.is_empty() { "." } else { dir }, cwd)
        else {
            return Some((basename(text).to_string(), None));
        };
        let written = dir.join(file);
        if !self.env.exists(&written) {
            return None;
        }
        let target = super::paths::physical(&written)
            .and_then(|t| t.file_name().map(|n| n.to_string_lossy().into_owned()))
            .filter(|t| t != file);
        let name = match written.strip_prefix(&self.env.workspace) {
            Ok(rel) => format!("./{}", rel.display()),
            Err(_) => file.to_string(),
        };
        Some((name, target))
    }

    /// The words bash passes after brace expansion (`sort {-o,out} x` is
    /// `sort -o out x`): options are judged as the program will see them.
    /// The program's own name is left as written (a brace there makes it
    /// unknown). `None` when the expansion is too large to follow.
    fn expand_arguments(&self, words: &[Word]) -> Option<Vec<Word>> {
        if !words.iter().skip(1).any(Word::is_brace) {
            return Some(words.to_vec());
        }
        let mut out = Vec::with_capacity(words.len());
        for (i, w) in words.iter().enumerate() {
            if i == 0 || !w.is_brace() || w.dynamic {
                out.push(w.clone());
                continue;
            }
            for pattern in super::words::expand_braces(&w.pattern)? {
                out.push(Word {
                    text: super::words::pattern_text(&pattern),
                    dynamic: false,
                    pattern,
                });
            }
            if out.len() > super::words::MAX_BRACE_WORDS * 4 {
                return None;
            }
        }
        Some(out)
    }

    /// Why `git ARGS` run in `cwd` may run a program its repository chose
    /// (`core.fsmonitor`, a diff driver): see [`super::gitconfig`].
    fn git_runs_programs(&self, args: &[&str], cwd: Option<&std::path::Path>) -> Option<String> {
        let unknown = || Some("git runs in a repository that cannot be known here".to_string());
        let Some(mut dir) = cwd.map(std::path::Path::to_path_buf) else {
            return unknown();
        };
        let mut git_dir = None;
        let mut i = 0;
        while let Some(a) = args.get(i) {
            let value = match *a {
                "-C" | "--git-dir" => {
                    i += 1;
                    args.get(i).copied()
                }
                a => a.strip_prefix("--git-dir="),
            };
            let resolved = value.and_then(|v| self.env.resolve(v, Some(&dir)));
            match *a {
                "-C" => match resolved {
                    Some(d) => dir = d,
                    None => return unknown(),
                },
                a if a == "--git-dir" || a.starts_with("--git-dir=") => match resolved {
                    Some(d) => git_dir = Some(d),
                    None => return unknown(),
                },
                a if !a.starts_with('-') => break,
                _ => {}
            }
            i += 1;
        }
        super::gitconfig::runs_programs(&dir, git_dir.as_deref())
    }

    /// `diff dirA dirB` compares the files in them, following symlinks to
    /// wherever they point (`-r` is judged by the read-only table).
    fn diffs_directories(&self, name: &str, args: &[&str], cwd: Option<&std::path::Path>) -> bool {
        name == "diff"
            && !args.contains(&"--no-dereference")
            && args
                .iter()
                .filter(|a| !a.starts_with('-'))
                .any(|a| cwd.is_none() || self.env.resolve(a, cwd).is_none_or(|p| p.is_dir()))
    }

    fn assignment_risk(&mut self, name: &str) {
        if variables::runs_code(name) {
            self.require(RiskAssessment::medium(format!(
                "sets `{name}`, which changes which programs run or what they load"
            )));
        } else {
            self.require(RiskAssessment::low(format!(
                "sets `{name}` for the command"
            )));
        }
    }
}

/// Programs a version manager's shim picks by a file in the project.
const RUST_PROXIES: &[&str] = &[
    "cargo",
    "rustc",
    "rustup",
    "rustdoc",
    "rustfmt",
    "cargo-clippy",
];
const SHIMMED: &[&str] = &[
    "python", "python3", "pip", "pip3", "node", "npm", "npx", "ruby", "gem", "go", "java", "deno",
    "bun", "perl",
];

/// Why running `name` in `cwd` runs what the project chose: rustup reads
/// `rust-toolchain(.toml)` (a `path` it execs, a channel it downloads), asdf
/// and mise read `.tool-versions` / `mise.toml` (`path:/…` versions).
fn toolchain_file(
    name: &str,
    cwd: Option<&std::path::Path>,
    workspace: &std::path::Path,
) -> Option<String> {
    let mut files: Vec<&str> = Vec::new();
    if RUST_PROXIES.contains(&name) {
        files.extend(["rust-toolchain", "rust-toolchain.toml"]);
    }
    if SHIMMED.contains(&name) {
        files.extend([
            ".tool-versions",
            "mise.toml",
            ".mise.toml",
            ".mise/config.toml",
            ".config/mise.toml",
        ]);
    }
    // npm reads the project's `.npmrc`: a registry URL with `${VAR}` in
    // it, a log and cache directory anywhere.
    if matches!(name, "npm" | "npx" | "pnpm" | "yarn") {
        files.extend([".npmrc", ".yarnrc", ".yarnrc.yml"]);
    }
    if files.is_empty() {
        return None;
    }
    let Some(cwd) = cwd else {
        return Some(format!(
            "`{name}` runs in a directory only known at run time"
        ));
    };
    // Above the project the files are the person's own.
    cwd.ancestors()
        .take_while(|d| d.starts_with(workspace))
        .flat_map(|d| files.iter().map(move |f| d.join(f)).collect::<Vec<_>>())
        .find(|p| p.is_file())
        .map(|p| {
            format!(
                "{} configures what `{name}` runs or reaches (a toolchain, a path, a registry)",
                p.display()
            )
        })
}

/// The action words first, then the rest in order (`git -C x commit -m y`
/// → `git commit -C x -m y`), so rules on `git commit` match however the
/// options are placed.
fn canonical(action: &str, argv: &[&str]) -> String {
    let mut rest: Vec<&str> = argv.to_vec();
    for w in action.split(' ') {
        if let Some(i) = rest.iter().position(|r| *r == w) {
            rest.remove(i);
        }
    }
    let mut out = action.to_string();
    for r in rest {
        out.push(' ');
        out.push_str(r);
    }
    out
}

/// `s` cut to `max` characters (on a character boundary).
fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}
