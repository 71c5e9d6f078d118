//! The procedural danger checks: programs whose risk depends on where
//! their paths lead (rm, find, mv, cp, chmod, chown, dd, rsync), on a
//! subcommand grammar too rich for a row (git, docker, cloud CLIs), or on
//! code they carry (SQL, Redis). Rows in `danger` point here.

use std::sync::LazyLock;

use regex::Regex;

use super::danger::{Invocation, long, positional, short};
use super::paths::{Ancestor, Place, Secret};
use crate::permission::RiskAssessment;

fn high(r: &str) -> Option<RiskAssessment> {
    Some(RiskAssessment::high(r))
}

fn medium(r: &str) -> Option<RiskAssessment> {
    Some(RiskAssessment::medium(r))
}

fn low(r: &str) -> Option<RiskAssessment> {
    Some(RiskAssessment::low(r))
}

impl Invocation<'_> {
    /// The place a deletion would wipe out wholesale: an ancestor, a system
    /// directory, or a wildcard over one.
    pub(super) fn sweeping(&self, target: &str) -> Option<String> {
        // `{/,}` and friends: brace expansion yields several targets.
        if let Some(words) = super::words::expand_braces(target)
            && words.len() > 1
        {
            return words.iter().find_map(|t| {
                let t = super::words::pattern_text(t);
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
pub(super) fn find_filters(a: &[&str]) -> bool {
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
pub(super) fn find_starts<'a>(a: &[&'a str]) -> Vec<&'a str> {
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
    low("sets shell variables")
}

/// A git option (key and value) that makes git run a command later.
fn runs_commands(key: &str, value: &str) -> bool {
    let key = key.to_lowercase();
    matches!(
        key.as_str(),
        "core.hookspath"
            | "core.fsmonitor"
            | "core.pager"
            | "core.editor"
            | "core.sshcommand"
            | "core.askpass"
            | "core.gitproxy"
            | "core.alternaterefscommand"
            | "credential.helper"
            | "diff.external"
            | "sequence.editor"
            | "gpg.program"
            | "gpg.ssh.program"
            | "uploadpack.packobjectshook"
            | "protocol.ext.allow"
            | "include.path"
    ) || (key.starts_with("alias.") && value.trim_start().starts_with('!'))
        || key.starts_with("includeif.")
        || (key.starts_with("filter.")
            && (key.ends_with(".clean") || key.ends_with(".smudge") || key.ends_with(".process")))
        || (key.starts_with("diff.") && key.ends_with(".command"))
        || (key.starts_with("merge.") && key.ends_with(".driver"))
        || key.ends_with(".textconv")
}

/// `git config KEY VALUE` or `git -c KEY=VALUE` setting such an option.
fn sets_command_option(a: &[&str]) -> bool {
    let dash_c = a.windows(2).any(|w| {
        w[0] == "-c"
            && w[1]
                .split_once('=')
                .is_none_or(|(k, v)| runs_commands(k, v))
    }) || a
        .iter()
        .any(|x| x.starts_with("--config-env") || x.starts_with("--exec-path"));
    let config = a.iter().position(|x| *x == "config").is_some_and(|i| {
        let rest: Vec<&str> = a[i + 1..]
            .iter()
            .filter(|x| !x.starts_with('-') && !matches!(**x, "set" | "--add"))
            .copied()
            .collect();
        rest.windows(2).any(|w| runs_commands(w[0], w[1]))
            || rest
                .first()
                .is_some_and(|k| runs_commands(k, "!") && !a.contains(&"--get"))
    });
    dash_c || config
}

/// Subcommands that change the repository, without losing anything.
const GIT_CHANGES: &[&str] = &[
    "add",
    "commit",
    "merge",
    "rebase",
    "cherry-pick",
    "revert",
    "stash",
    "am",
    "apply",
    "mv",
    "rm",
    "tag",
    "branch",
    "checkout",
    "switch",
    "restore",
    "reset",
    "pull",
    "fetch",
    "clone",
    "submodule",
    "worktree",
    "notes",
    "init",
    "remote",
    "config",
    "gc",
    "repack",
    "update-index",
    "bisect",
    "sparse-checkout",
    "lfs",
    "maintenance",
];

pub(super) fn git(inv: &Invocation) -> Option<RiskAssessment> {
    let a = &inv.args;
    if sets_command_option(a) {
        return high("sets a git option that runs commands (persistence)");
    }
    if a.iter().any(|x| x.contains("ext::")) {
        return high("runs a command through git's ext:: transport");
    }
    let p = positional("git", a);
    let sub = p.first().copied().unwrap_or_default();
    let i = a.iter().position(|x| *x == sub).map_or(a.len(), |i| i + 1);
    let rest = &a[i.min(a.len())..];
    let pathspec_all = || {
        rest.iter()
            .any(|x| matches!(*x, "." | "*" | ":/" | "./" | "-A"))
    };
    match sub {
        "push" => {
            if short(rest, 'f')
                || long(rest, "--force")
                || long(rest, "--force-with-lease")
                || long(rest, "--force-if-includes")
                || long(rest, "--mirror")
                || long(rest, "--prune")
                || rest.iter().any(|x| x.starts_with('+') && x.len() > 1)
            {
                high("force-push: rewrites remote history, others' commits can be lost")
            } else if short(rest, 'd')
                || long(rest, "--delete")
                || rest.iter().any(|x| x.starts_with(':') && x.len() > 1)
            {
                high("deletes a remote branch or tag")
            } else {
                medium("pushes commits to a remote")
            }
        }
        "reset" if long(rest, "--hard") || long(rest, "--merge") || long(rest, "--keep") => {
            high("discards uncommitted changes (git reset --hard)")
        }
        "clean"
            if !(short(rest, 'n') || long(rest, "--dry-run"))
                && (short(rest, 'f') || long(rest, "--force")) =>
        {
            high("deletes untracked files for good (git clean)")
        }
        "checkout" if short(rest, 'f') || long(rest, "--force") || pathspec_all() => {
            high("discards uncommitted changes (git checkout)")
        }
        "restore"
            if (!long(rest, "--staged") || long(rest, "--worktree") || short(rest, 'W'))
                && pathspec_all() =>
        {
            high("discards uncommitted changes (git restore)")
        }
        "switch"
            if long(rest, "--discard-changes") || short(rest, 'f') || long(rest, "--force") =>
        {
            high("discards uncommitted changes (git switch --discard-changes)")
        }
        "branch"
            if rest.contains(&"-D")
                || ((short(rest, 'd') || long(rest, "--delete"))
                    && (short(rest, 'f') || long(rest, "--force"))) =>
        {
            high("force-deletes a branch: unmerged commits are lost")
        }
        "stash" if matches!(rest.first(), Some(&("drop" | "clear"))) => {
            high("deletes stashed changes")
        }
        "reflog" if matches!(rest.first(), Some(&("expire" | "delete"))) => {
            high("destroys the reflog (local history)")
        }
        "gc" if rest
            .iter()
            .any(|x| x.starts_with("--prune=now") || *x == "--prune=all") =>
        {
            high("prunes unreachable commits for good")
        }
        "filter-branch" | "filter-repo" => high("rewrites the whole history"),
        "update-ref" if short(rest, 'd') => high("deletes a ref"),
        "rm" if (short(rest, 'r') || short(rest, 'R')) && pathspec_all() => {
            high("removes every tracked file")
        }
        "prune" => high("prunes unreachable commits for good"),
        "read-tree" if long(rest, "--reset") && short(rest, 'u') => {
            high("discards uncommitted changes (git read-tree --reset -u)")
        }
        "checkout-index"
            if (short(rest, 'f') || long(rest, "--force"))
                && (short(rest, 'a') || long(rest, "--all")) =>
        {
            high("discards uncommitted changes (git checkout-index -a -f)")
        }
        "pull" | "fetch" | "clone" | "ls-remote" => {
            medium("uses the network and changes the repository")
        }
        "init" => low("creates a repository"),
        _ if super::readonly::is_read_only("git", a) => None,
        s if GIT_CHANGES.contains(&s) => Some(RiskAssessment::medium(format!(
            "changes the repository (git {s})"
        ))),
        _ => None,
    }
}

pub(super) fn container(inv: &Invocation) -> Option<RiskAssessment> {
    let a = &inv.args;
    let p = positional("docker", a);
    let sub = p.first().copied().unwrap_or_default();
    let second = p.get(1).copied().unwrap_or_default();
    if second == "prune"
        && matches!(
            sub,
            "system" | "container" | "image" | "volume" | "network" | "builder" | "buildx"
        )
    {
        return high("prunes Docker data for good");
    }
    if sub == "compose" && a.contains(&"down") && (a.contains(&"-v") || a.contains(&"--volumes")) {
        return high("deletes the project's Docker volumes (their data is lost)");
    }
    if sub == "buildx" && a.contains(&"--push") {
        return high("publishes an image to a registry");
    }
    if sub == "volume" && matches!(second, "rm" | "remove") {
        return high("deletes Docker volumes (their data is lost)");
    }
    if sub == "push" || (sub == "image" && second == "push") {
        return high("publishes an image to a registry");
    }
    if matches!(sub, "run" | "create" | "exec") {
        let escalates = a.iter().any(|x| {
            *x == "--privileged" || x.starts_with("--pid=host") || x.starts_with("--cap-add")
        }) || a.windows(2).any(|w| {
            matches!(w[0], "-v" | "--volume" | "--mount")
                && (w[1].starts_with("/:")
                    || w[1].contains("docker.sock")
                    || w[1].starts_with("/etc")
                    || w[1].contains("source=/,"))
        });
        if escalates {
            return high("gives a container control of the host (privilege escalation)");
        }
    }
    medium("runs containers")
}

pub(super) fn aws(inv: &Invocation) -> Option<RiskAssessment> {
    let a = &inv.args;
    if a.contains(&"configure")
        && (a.contains(&"export-credentials")
            || a.iter()
                .any(|x| x.contains("secret") || x.contains("session_token")))
    {
        return high("prints cloud credentials");
    }
    let p = positional("aws", a);
    let svc = p.first().copied().unwrap_or_default();
    let op = p.get(1).copied().unwrap_or_default();
    if svc == "s3"
        && ((op == "rm" && long(a, "--recursive"))
            || (op == "rb" && long(a, "--force"))
            || (op == "sync" && long(a, "--delete")))
    {
        high("deletes cloud storage recursively")
    } else if ["delete", "terminate", "remove", "purge", "destroy"]
        .iter()
        .any(|w| op.starts_with(w))
        || op.contains("-delete")
    {
        high("deletes cloud resources")
    } else if svc == "s3" && op == "ls" {
        low("lists cloud storage")
    } else {
        medium("changes cloud resources")
    }
}

pub(super) fn gcloud(inv: &Invocation) -> Option<RiskAssessment> {
    let a = &inv.args;
    if a.contains(&"auth")
        && a.iter()
            .any(|x| x.starts_with("print-") && x.ends_with("-token"))
    {
        return high("prints a cloud access token");
    }
    if a.windows(2).any(|w| w == ["account", "get-access-token"]) {
        return high("prints a cloud access token");
    }
    let p = positional(inv.name, a);
    if p.iter()
        .any(|w| matches!(*w, "delete" | "delete-batch" | "purge" | "destroy"))
        || (p.contains(&"rm") && (short(a, 'r') || long(a, "--recursive")))
    {
        high("deletes cloud resources")
    } else {
        medium("changes cloud resources")
    }
}

pub(super) fn gsutil(inv: &Invocation) -> Option<RiskAssessment> {
    let a = &inv.args;
    let p = positional(inv.name, a);
    let wildcard = a.iter().any(|x| x.contains("**") || x.ends_with("/*"));
    if (p.contains(&"rm") && (short(a, 'r') || short(a, 'R') || wildcard)) || p.contains(&"rb") {
        high("deletes cloud storage recursively")
    } else {
        medium("changes cloud storage")
    }
}

static DESTRUCTIVE_SQL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\bdrop\s+(database|schema|table|collection|user|role)\b|\btruncate\s+(table\s+)?\w|\bdelete\s+from\s+[\w.`\x22]+\s*(;|$|\))|\bdropdatabase\s*\(|\.drop\s*\(|\bflushall\b|\bflushdb\b|\bdeletemany\s*\(\s*\{\s*\}\s*\)",
    )
    .expect("a constant pattern, covered by the SQL tests")
});

/// SQL (or a database shell's code) that drops or wipes data.
pub fn destructive_sql(code: &str) -> bool {
    DESTRUCTIVE_SQL.is_match(code)
}

pub(super) fn sql(inv: &Invocation) -> Option<RiskAssessment> {
    let inline: String = inv
        .args
        .iter()
        .filter(|x| !x.starts_with('-'))
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    let code = format!("{inline} {}", inv.stdin_text.as_deref().unwrap_or_default());
    if destructive_sql(&code) {
        high("drops or wipes database data")
    } else {
        medium("talks to a database")
    }
}

pub(super) fn redis(inv: &Invocation) -> Option<RiskAssessment> {
    let code = format!(
        "{} {}",
        inv.args.join(" "),
        inv.stdin_text.as_deref().unwrap_or_default()
    )
    .to_lowercase();
    if code.contains("flushall") || code.contains("flushdb") {
        high("flushes a Redis database")
    } else {
        medium("talks to a database")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sql_patterns() {
        assert!(destructive_sql("DROP TABLE users;"));
        assert!(destructive_sql("delete from users"));
        assert!(!destructive_sql("select 1"));
    }
}
