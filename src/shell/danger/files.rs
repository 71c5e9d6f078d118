//! Procedural danger checks on files: where a deletion, move, copy,
//! permission change or raw write leads, and signals to processes.

use super::{Invocation, high, long, low, medium, positional, short};
use crate::permission::RiskAssessment;
use crate::shell::paths::{Ancestor, Place, Secret};

impl Invocation<'_> {
    /// The place a deletion would wipe out wholesale: an ancestor, a system
    /// directory, or a wildcard over one.
    pub(super) fn sweeping(&self, target: &str) -> Option<String> {
        // `{/,}` and friends: brace expansion yields several targets.
        if let Some(words) = crate::shell::words::expand_braces(target)
            && words.len() > 1
        {
            return words.iter().find_map(|t| {
                let t = crate::shell::words::pattern_text(t);
                self.sweeping(if t.is_empty() { "." } else { &t })
            });
        }
        if self.is_dynamic(target) {
            return Some("a path only known at run time".into());
        }
        if let Some(dir) = target
            .strip_suffix('*')
            .map(|d| d.trim_end_matches('/'))
            .filter(|d| !d.contains('*'))
        {
            let dir = if dir.is_empty() { "." } else { dir };
            let what = match self.place(dir) {
                Some(Place::Ancestor(what)) => what.to_string(),
                Some(Place::System) => format!("the system directory {dir}"),
                None => "a directory only known at run time".into(),
                Some(_) if target == "*" || target == ".*" => "the current directory".into(),
                _ => return None,
            };
            return Some(format!("everything in {what}"));
        }
        match self.place(target) {
            Some(Place::Ancestor(what)) => Some(what.to_string()),
            Some(Place::System) => Some(format!("the system path {target}")),
            None => Some("a path in a directory only known at run time".into()),
            _ => None,
        }
    }
}

pub(super) fn rm(inv: &Invocation) -> Option<RiskAssessment> {
    let a = &inv.args;
    let recursive = short(a, 'r') || short(a, 'R') || long(a, "--recursive") || inv.name != "rm";
    if long(a, "--no-preserve-root") {
        return high("recursive deletion with --no-preserve-root");
    }
    for t in positional(inv.name, a) {
        if let Some(Place::Secret(Secret::ShellHistory)) = inv.place(t) {
            return high("clears shell history");
        }
        if recursive && let Some(what) = inv.sweeping(t) {
            return high(&format!("recursive deletion of {what}"));
        }
        if matches!(inv.place(t), Some(Place::System)) {
            return high(&format!("deletes the system file {t}"));
        }
    }
    if recursive && inv.args_from_input {
        return high("recursive deletion of paths read from input");
    }
    medium("deletes files")
}

/// `find` predicates that narrow what it matches.
pub(in crate::shell) fn find_filters(a: &[&str]) -> bool {
    a.iter().any(|x| {
        matches!(
            *x,
            "-name"
                | "-iname"
                | "-path"
                | "-ipath"
                | "-regex"
                | "-iregex"
                | "-newer"
                | "-mtime"
                | "-mmin"
                | "-atime"
                | "-ctime"
                | "-size"
                | "-empty"
                | "-user"
                | "-group"
                | "-perm"
                | "-wholename"
                | "-lname"
                | "-inum"
                | "-links"
        )
    })
}

/// The start points of `find ARGS` (`.` when none is given).
pub(in crate::shell) fn find_starts<'a>(a: &[&'a str]) -> Vec<&'a str> {
    let starts: Vec<&str> = a
        .iter()
        .skip_while(|x| matches!(**x, "-P" | "-H" | "-L"))
        .take_while(|x| !x.starts_with('-') && !matches!(**x, "(" | "!"))
        .copied()
        .collect();
    if starts.is_empty() { vec!["."] } else { starts }
}

pub(super) fn find(inv: &Invocation) -> Option<RiskAssessment> {
    let a = &inv.args;
    if !a.contains(&"-delete") {
        return None;
    }
    for s in find_starts(a) {
        match inv.place(s) {
            Some(Place::Ancestor(what)) if s != "." && what != Ancestor::Project => {
                return high(&format!("deletes files under {what}"));
            }
            Some(Place::System) => {
                return high(&format!("deletes files under the system directory {s}"));
            }
            Some(Place::Ancestor(_)) if !find_filters(a) => {
                return high("deletes everything in the project directory");
            }
            _ => {}
        }
    }
    medium("deletes the files it finds")
}

pub(super) fn mv(inv: &Invocation) -> Option<RiskAssessment> {
    for t in positional(inv.name, &inv.args).iter().rev().skip(1) {
        if let Some(Place::Ancestor(what)) = inv.place(t) {
            return high(&format!("moves {what} away"));
        }
    }
    medium("moves files")
}

/// Copying over an existing file loses it; into a new name it does not.
pub(super) fn cp(inv: &Invocation) -> Option<RiskAssessment> {
    let targets = positional(inv.name, &inv.args);
    let overwrites = match targets.last() {
        Some(dest) if targets.len() >= 2 => inv
            .env
            .resolve(dest, inv.cwd)
            .is_none_or(|p| p.is_dir() || p.exists()),
        _ => true,
    };
    if overwrites || inv.args_from_input {
        medium("copies files, replacing any that exist at the destination")
    } else {
        low("copies a file to a new name")
    }
}

/// What a chmod mode grants: write for everyone, or setuid/setgid.
struct ChmodMode {
    world_writable: bool,
    setuid: bool,
}

fn chmod_mode(mode: &str) -> ChmodMode {
    if !mode.is_empty() && mode.chars().all(|c| c.is_ascii_digit()) {
        let digits: Vec<u32> = mode.chars().filter_map(|c| c.to_digit(8)).collect();
        let others = digits.last().copied().unwrap_or(0);
        let special = if digits.len() == 4 { digits[0] } else { 0 };
        return ChmodMode {
            world_writable: others & 2 != 0,
            setuid: special & 6 != 0,
        };
    }
    let mut m = ChmodMode {
        world_writable: false,
        setuid: false,
    };
    for clause in mode.split(',') {
        let who: String = clause.chars().take_while(|c| "ugoa".contains(*c)).collect();
        let rest = &clause[who.len()..];
        let mut ops = rest.chars();
        let Some(op) = ops.next() else {
            continue;
        };
        let perms: String = ops.collect();
        if op == '-' {
            continue;
        }
        let everyone = who.is_empty() || who.contains('a') || who.contains('o');
        if everyone && perms.contains('w') && !who.is_empty() {
            m.world_writable = true;
        }
        if perms.contains('s') {
            m.setuid = true;
        }
    }
    m
}

pub(super) fn chmod(inv: &Invocation) -> Option<RiskAssessment> {
    let a = &inv.args;
    let mode_arg = a
        .iter()
        .find_map(|x| x.strip_prefix("--mode="))
        .or_else(|| positional(inv.name, a).first().copied())
        .unwrap_or_default();
    let targets: Vec<&str> = positional(inv.name, a)
        .into_iter()
        .filter(|t| *t != mode_arg)
        .collect();
    let mode = chmod_mode(mode_arg);
    if mode.world_writable {
        return high("makes files writable by every user (chmod 777)");
    }
    if mode.setuid {
        return high("sets the setuid/setgid bit (privilege escalation)");
    }
    if (short(a, 'R') || long(a, "--recursive"))
        && let Some(what) = targets
            .iter()
            .filter(|t| inv.place(t) != Some(Place::Ancestor(Ancestor::Project)))
            .find_map(|t| inv.sweeping(t))
    {
        return high(&format!("changes permissions of {what}"));
    }
    medium("changes file permissions")
}

pub(super) fn chown(inv: &Invocation) -> Option<RiskAssessment> {
    let a = &inv.args;
    if (short(a, 'R') || long(a, "--recursive"))
        && let Some(what) = positional(inv.name, a)
            .iter()
            .skip(1)
            .find_map(|t| inv.sweeping(t))
    {
        return high(&format!("changes ownership of {what}"));
    }
    if positional(inv.name, a)
        .first()
        .is_some_and(|o| *o == "root" || o.starts_with("root:"))
    {
        return high("gives files to root");
    }
    medium("changes file ownership")
}

pub(super) fn dd(inv: &Invocation) -> Option<RiskAssessment> {
    if let Some(of) = inv.args.iter().find_map(|x| x.strip_prefix("of=")) {
        if of.starts_with("/dev/") && !matches!(inv.place(of), Some(Place::Harmless)) {
            return high("writes a raw device (destroys the disk's contents)");
        }
        return medium("writes a file with dd");
    }
    medium("copies raw data")
}

pub(super) fn rsync(inv: &Invocation) -> Option<RiskAssessment> {
    let a = &inv.args;
    if !a.iter().any(|x| x.starts_with("--delete")) {
        return medium("copies files");
    }
    let dest = positional(inv.name, a).last().copied().unwrap_or_default();
    match inv.sweeping(dest) {
        Some(what) if !dest.contains(':') => high(&format!(
            "deletes files in {what} to mirror another directory"
        )),
        _ => medium("mirrors files, deleting extra ones at the destination"),
    }
}

/// `perl -i` / `-pi`: in-place edits (inline code is judged elsewhere).
pub(super) fn perl(inv: &Invocation) -> Option<RiskAssessment> {
    let in_place = inv
        .args
        .iter()
        .take_while(|a| a.starts_with('-'))
        .any(|a| !a.starts_with("--") && a[1..].contains('i'));
    in_place.then(|| RiskAssessment::medium("changes files in place"))
}

pub(super) fn kill(inv: &Invocation) -> Option<RiskAssessment> {
    let a = &inv.args;
    let mut pids = Vec::new();
    let mut signal_seen = false;
    let mut it = a.iter();
    while let Some(x) = it.next() {
        if *x == "--" {
            pids.extend(it.by_ref().copied());
        } else if !signal_seen && (*x == "-s" || *x == "-n") {
            it.next();
            signal_seen = true;
        } else if !signal_seen
            && x.starts_with('-')
            && x.len() > 1
            && !(pids.is_empty() && *x == "-1" && a.len() == 1)
        {
            signal_seen = true;
        } else {
            pids.push(x);
        }
    }
    if pids.contains(&"-1") {
        return high("kills every process");
    }
    if inv.args_from_input && inv.producer.as_deref() == Some("ps") {
        return high("kills every process listed by ps");
    }
    if inv.args.iter().zip(&inv.dynamic).any(|(a, d)| {
        *d && (a.contains("ps -e")
            || a.contains("ps -A")
            || a.contains("ps ax")
            || a.contains("ps aux")
            || a.contains("pgrep ."))
    }) {
        return high("kills every process");
    }
    if pids.contains(&"1") {
        return high("kills init (process 1)");
    }
    medium("sends a signal to a process")
}

pub(super) fn pkill(inv: &Invocation) -> Option<RiskAssessment> {
    let pattern = positional(inv.name, &inv.args);
    if pattern
        .iter()
        .any(|p| matches!(*p, "init" | "systemd" | "launchd" | "^init$" | "^systemd$"))
    {
        return high("kills init (process 1)");
    }
    if pattern.iter().any(|p| matches!(*p, "." | ".*" | "-1"))
        || (inv.name == "killall" && long(&inv.args, "--user"))
    {
        return high("kills every process");
    }
    medium("kills processes")
}

fn history_off(assignment: &str) -> bool {
    let (name, value) = assignment.split_once('=').unwrap_or((assignment, ""));
    matches!(name, "HISTFILE" if value.is_empty() || value == "/dev/null")
        || matches!(name, "HISTSIZE" | "HISTFILESIZE" | "SAVEHIST" if value == "0")
}

/// Whether an assignment (`HISTFILE=/dev/null`) disables history.
pub fn assignment_disables_history(assignment: &str) -> bool {
    history_off(assignment)
}

/// `export`, `declare`, `local`...: history switched off, or variables
/// set (their names can carry subscripts bash evaluates).
pub(super) fn declaration(inv: &Invocation) -> Option<RiskAssessment> {
    if inv.args.iter().any(|x| history_off(x)) {
        return high("disables shell history");
    }
    if let Some(name) = inv
        .args
        .iter()
        .filter_map(|x| x.split_once('=').map(|(n, _)| n.trim_end_matches('+')))
        .find(|n| crate::shell::variables::runs_code(n))
    {
        return Some(RiskAssessment::medium(format!(
            "sets `{name}`, which changes which programs run or what they load"
        )));
    }
    low("sets shell variables")
}
