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

use super::inline::SPAWN_LOOP;
use super::parse::{Script, SimpleCommand, parse_until};
use super::paths::PathEnv;
use super::prefix::Ban;
use super::variables;
use crate::permission::{Banned, Risk, RiskAssessment};

mod judge;

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
        cmd: &SimpleCommand,
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

/// `s` cut to `max` characters (on a character boundary).
fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}
