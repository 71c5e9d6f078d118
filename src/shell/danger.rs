//! Command-specific danger rules: what makes one simple command high or
//! medium risk beyond the generic path rules. Each rule names the category
//! from the design (irreversible deletion, history destruction, privilege
//! escalation, persistence, secrets, infrastructure, publishing...).

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use super::paths::{PathEnv, Place};
use crate::permission::RiskAssessment;

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
}

fn short(args: &[&str], c: char) -> bool {
    args.iter()
        .any(|a| a.starts_with('-') && !a.starts_with("--") && a[1..].contains(c))
}

fn long(args: &[&str], l: &str) -> bool {
    args.iter()
        .any(|a| *a == l || a.starts_with(&format!("{l}=")))
}

fn positional<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut after_dashes = false;
    for a in args {
        if !after_dashes && *a == "--" {
            after_dashes = true;
        } else if after_dashes || !a.starts_with('-') || *a == "-" {
            out.push(*a);
        }
    }
    out
}

impl Invocation<'_> {
    fn place(&self, word: &str) -> Option<Place> {
        self.env.resolve(word, self.cwd).map(|p| self.env.place(&p))
    }

    fn is_dynamic(&self, word: &str) -> bool {
        self.args
            .iter()
            .zip(&self.dynamic)
            .any(|(a, d)| *a == word && *d)
    }

    /// The place a deletion would wipe out wholesale: an ancestor, a system
    /// directory, or a wildcard over one.
    fn sweeping(&self, target: &str) -> Option<String> {
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

    /// A specific judgment, when a rule knows this command.
    pub fn judge(&self) -> Option<RiskAssessment> {
        let a = &self.args;
        let high = |r: &str| Some(RiskAssessment::high(r));
        let medium = |r: &str| Some(RiskAssessment::medium(r));
        match self.name {
            "rm" | "rmdir" | "unlink" | "shred" | "srm" | "wipe" => {
                let recursive =
                    short(a, 'r') || short(a, 'R') || long(a, "--recursive") || self.name != "rm";
                if long(a, "--no-preserve-root") {
                    return high("recursive deletion with --no-preserve-root");
                }
                for t in positional(a) {
                    if let Some(Place::Secret("shell history")) = self.place(t) {
                        return high("clears shell history");
                    }
                    if recursive && let Some(what) = self.sweeping(t) {
                        return high(&format!("recursive deletion of {what}"));
                    }
                    if matches!(self.place(t), Some(Place::System)) {
                        return high(&format!("deletes the system file {t}"));
                    }
                }
                if recursive && self.args_from_input {
                    return high("recursive deletion of paths read from input");
                }
                medium("deletes files")
            }
            "find" if a.contains(&"-delete") => {
                let starts: Vec<&str> = a
                    .iter()
                    .take_while(|x| !x.starts_with('-') && !matches!(**x, "(" | "!"))
                    .copied()
                    .collect();
                let starts = if starts.is_empty() { vec!["."] } else { starts };
                for s in starts {
                    if let Some(Place::Ancestor(what)) = self.place(s).filter(|_| s != ".") {
                        return high(&format!("deletes files under {what}"));
                    }
                    if matches!(self.place(s), Some(Place::System)) {
                        return high(&format!("deletes files under the system directory {s}"));
                    }
                }
                medium("deletes the files it finds")
            }
            "mv" => {
                for t in positional(a).iter().rev().skip(1) {
                    if let Some(Place::Ancestor(what)) = self.place(t) {
                        return high(&format!("moves {what} away"));
                    }
                }
                medium("moves files")
            }
            "git" => git(a),
            "chmod" => {
                let mode = positional(a).first().copied().unwrap_or_default();
                let targets: Vec<&str> = positional(a).into_iter().skip(1).collect();
                if mode.contains("777")
                    || mode.contains("666")
                    || ["a+rwx", "ugo+rwx", "o+w", "a+w", "o+rwx", "+w"]
                        .iter()
                        .any(|m| mode.contains(m))
                        && !mode.contains("go-")
                {
                    return high("makes files writable by every user (chmod 777)");
                }
                if mode.contains("+s")
                    || (mode.len() == 4
                        && mode.starts_with(['2', '4', '6', '7'])
                        && mode.chars().all(|c| c.is_ascii_digit()))
                {
                    return high("sets the setuid/setgid bit (privilege escalation)");
                }
                if (short(a, 'R') || long(a, "--recursive"))
                    && let Some(what) = targets.iter().find_map(|t| self.sweeping(t))
                {
                    return high(&format!("changes permissions of {what}"));
                }
                medium("changes file permissions")
            }
            "chown" | "chgrp" => {
                if (short(a, 'R') || long(a, "--recursive"))
                    && let Some(what) = positional(a).iter().skip(1).find_map(|t| self.sweeping(t))
                {
                    return high(&format!("changes ownership of {what}"));
                }
                if positional(a)
                    .first()
                    .is_some_and(|o| *o == "root" || o.starts_with("root:"))
                {
                    return high("gives files to root");
                }
                medium("changes file ownership")
            }
            "dd" => {
                if let Some(of) = a.iter().find_map(|x| x.strip_prefix("of=")) {
                    if of.starts_with("/dev/") && !matches!(self.place(of), Some(Place::Harmless)) {
                        return high("writes a raw device (destroys the disk's contents)");
                    }
                    return medium("writes a file with dd");
                }
                medium("copies raw data")
            }
            n if n.starts_with("mkfs")
                || matches!(
                    n,
                    "mke2fs"
                        | "mkswap"
                        | "fdisk"
                        | "sfdisk"
                        | "cfdisk"
                        | "gdisk"
                        | "sgdisk"
                        | "parted"
                        | "wipefs"
                        | "blkdiscard"
                ) =>
            {
                high("formats or partitions a disk")
            }
            "mount" | "umount" | "swapon" | "swapoff" | "losetup" | "cryptsetup" => {
                high("mounts or unmounts file systems")
            }
            "shutdown" | "reboot" | "halt" | "poweroff" => {
                high("shuts down or restarts the machine")
            }
            "init" | "telinit" if a.iter().any(|x| matches!(*x, "0" | "6")) => {
                high("shuts down or restarts the machine")
            }
            "systemctl" => {
                let sub = positional(a).first().copied().unwrap_or_default();
                match sub {
                    "poweroff" | "reboot" | "halt" | "kexec" | "suspend" | "hibernate"
                    | "rescue" | "emergency" | "soft-reboot" => {
                        high("shuts down or restarts the machine")
                    }
                    "enable" | "link" | "edit" => {
                        high("installs a service that starts by itself (persistence)")
                    }
                    "status" | "show" | "list-units" | "list-unit-files" | "is-active"
                    | "is-enabled" | "cat" => None,
                    _ => medium("changes system services"),
                }
            }
            "kill" => {
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
                if pids.contains(&"1") {
                    return high("kills init (process 1)");
                }
                medium("sends a signal to a process")
            }
            "killall5" => high("kills every process"),
            "pkill" | "killall" => {
                let pattern = positional(a);
                if pattern.iter().any(|p| matches!(*p, "." | ".*" | "-1"))
                    || (self.name == "killall" && long(a, "--user"))
                {
                    return high("kills every process");
                }
                medium("kills processes")
            }
            "history" if short(a, 'c') || short(a, 'w') && a.contains(&"/dev/null") => {
                high("clears shell history")
            }
            "unset" if a.iter().any(|x| x.starts_with("HIST")) => high("disables shell history"),
            "export" | "declare" | "typeset" | "readonly" if a.iter().any(|x| history_off(x)) => {
                high("disables shell history")
            }
            "set" if a.windows(2).any(|w| w == ["+o", "history"]) => high("disables shell history"),
            "crontab" => {
                if short(a, 'r') {
                    high("removes every cron job")
                } else if short(a, 'l') {
                    None
                } else {
                    high("installs cron jobs that run commands later (persistence)")
                }
            }
            "setcap" => high("grants capabilities to a program (privilege escalation)"),
            "useradd" | "userdel" | "usermod" | "passwd" | "chpasswd" | "visudo" | "groupadd"
            | "groupdel" | "adduser" | "deluser" => high("changes user accounts"),
            "iptables" | "ip6tables" | "nft" | "ufw" | "firewall-cmd"
                if !(short(a, 'L') || a.contains(&"status") || a.contains(&"list")) =>
            {
                high("changes the firewall")
            }
            "curl" | "wget" | "aria2c" | "http" | "https" | "xh" => medium("uses the network"),
            "ssh" | "scp" | "sftp" | "rsync" | "nc" | "ncat" | "netcat" | "socat" | "telnet"
            | "ftp" => medium("connects to another machine"),
            "docker" | "podman" | "nerdctl" => container(a),
            "kubectl" | "oc" => {
                let sub = positional(a).first().copied().unwrap_or_default();
                if matches!(sub, "delete" | "drain") || (sub == "replace" && long(a, "--force")) {
                    high("deletes Kubernetes resources")
                } else {
                    medium("changes a Kubernetes cluster")
                }
            }
            "helm"
                if matches!(
                    positional(a).first(),
                    Some(&("uninstall" | "delete" | "del"))
                ) =>
            {
                high("deletes a Helm release")
            }
            "helm" if matches!(positional(a).first(), Some(&"push")) => high("publishes a package"),
            "terraform" | "tofu" | "terragrunt" => {
                let sub = positional(a).first().copied().unwrap_or_default();
                if sub == "destroy"
                    || (sub == "apply"
                        && (long(a, "-auto-approve")
                            || long(a, "--auto-approve")
                            || long(a, "-destroy")))
                    || (sub == "state" && a.contains(&"rm"))
                {
                    high("destroys or changes infrastructure without review")
                } else {
                    medium("changes infrastructure")
                }
            }
            "pulumi" => {
                let sub = positional(a).first().copied().unwrap_or_default();
                if sub == "destroy" || (sub == "up" && (short(a, 'y') || long(a, "--yes"))) {
                    high("destroys or changes infrastructure without review")
                } else {
                    medium("changes infrastructure")
                }
            }
            "cdk" | "sls" | "serverless"
                if matches!(positional(a).first(), Some(&("destroy" | "remove"))) =>
            {
                high("destroys cloud infrastructure")
            }
            "dropdb" | "dropuser" => high("drops a database"),
            "mysqladmin" if a.iter().any(|x| x.eq_ignore_ascii_case("drop")) => {
                high("drops a database")
            }
            "psql" | "mysql" | "mariadb" | "sqlite3" | "mongosh" | "mongo"
            | "clickhouse-client" | "cqlsh" | "cockroach" | "duckdb" => {
                let inline: String = a
                    .iter()
                    .filter(|x| !x.starts_with('-'))
                    .copied()
                    .collect::<Vec<_>>()
                    .join(" ");
                let code = format!(
                    "{inline} {}",
                    self.stdin_text.as_deref().unwrap_or_default()
                );
                if destructive_sql(&code) {
                    high("drops or wipes database data")
                } else {
                    medium("talks to a database")
                }
            }
            "redis-cli" => {
                let code = format!(
                    "{} {}",
                    a.join(" "),
                    self.stdin_text.as_deref().unwrap_or_default()
                )
                .to_lowercase();
                if code.contains("flushall") || code.contains("flushdb") {
                    high("flushes a Redis database")
                } else {
                    medium("talks to a database")
                }
            }
            "aws" => {
                let p = positional(a);
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
                } else {
                    medium("changes cloud resources")
                }
            }
            "gsutil" => {
                let p = positional(a);
                if (p.contains(&"rm") && (short(a, 'r') || short(a, 'R'))) || p.contains(&"rb") {
                    high("deletes cloud storage recursively")
                } else {
                    medium("changes cloud storage")
                }
            }
            "gcloud" | "az" => {
                let p = positional(a);
                if p.iter()
                    .any(|w| matches!(*w, "delete" | "delete-batch" | "purge" | "destroy"))
                    || (p.contains(&"rm") && (short(a, 'r') || long(a, "--recursive")))
                {
                    high("deletes cloud resources")
                } else {
                    medium("changes cloud resources")
                }
            }
            "npm" | "pnpm" | "yarn" | "bun"
                if matches!(positional(a).first(), Some(&("publish" | "unpublish"))) =>
            {
                high("publishes a package")
            }
            "cargo" if matches!(positional(a).first(), Some(&("publish" | "yank" | "owner"))) => {
                high("publishes a package")
            }
            "gem" if matches!(positional(a).first(), Some(&("push" | "yank"))) => {
                high("publishes a package")
            }
            "twine" if matches!(positional(a).first(), Some(&"upload")) => {
                high("publishes a package")
            }
            "poetry" | "uv" | "hatch" | "flit"
                if matches!(positional(a).first(), Some(&"publish")) =>
            {
                high("publishes a package")
            }
            "mvn" if a.contains(&"deploy") => high("publishes a package"),
            "gradle" | "./gradlew" | "gradlew" if a.iter().any(|x| x.starts_with("publish")) => {
                high("publishes a package")
            }
            "dotnet" if a.windows(2).any(|w| w == ["nuget", "push"]) => high("publishes a package"),
            "vsce" | "ovsx" if matches!(positional(a).first(), Some(&"publish")) => {
                high("publishes a package")
            }
            "pod" if a.windows(2).any(|w| w == ["trunk", "push"]) => high("publishes a package"),
            _ => None,
        }
    }
}

fn history_off(assignment: &str) -> bool {
    let (name, value) = assignment.split_once('=').unwrap_or((assignment, ""));
    matches!(name, "HISTFILE" if value.is_empty() || value == "/dev/null")
        || matches!(name, "HISTSIZE" | "HISTFILESIZE" | "SAVEHIST" if value == "0")
}

/// Whether a standalone assignment (`HISTFILE=/dev/null`) disables history.
pub fn assignment_disables_history(assignment: &str) -> bool {
    history_off(assignment)
}

fn git(a: &[&str]) -> Option<RiskAssessment> {
    let mut i = 0;
    while i < a.len() && a[i].starts_with('-') {
        if matches!(a[i], "-C" | "-c" | "--git-dir" | "--work-tree") {
            i += 1;
        }
        i += 1;
    }
    let sub = a.get(i).copied().unwrap_or_default();
    let rest = if i < a.len() { &a[i + 1..] } else { &[] };
    let high = |r: &str| Some(RiskAssessment::high(r));
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
                Some(RiskAssessment::medium("pushes commits to a remote"))
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
        "checkout"
            if short(rest, 'f')
                || long(rest, "--force")
                || (rest.contains(&"--") && pathspec_all())
                || rest == ["."] =>
        {
            high("discards uncommitted changes (git checkout)")
        }
        "restore" if !long(rest, "--staged") && pathspec_all() => {
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
        "config"
            if rest
                .iter()
                .any(|x| x.eq_ignore_ascii_case("core.hooksPath")) =>
        {
            high("redirects git hooks (persistence)")
        }
        "" => None,
        _ => None,
    }
}

fn container(a: &[&str]) -> Option<RiskAssessment> {
    let p = positional(a);
    let sub = p.first().copied().unwrap_or_default();
    let second = p.get(1).copied().unwrap_or_default();
    let high = |r: &str| Some(RiskAssessment::high(r));
    if second == "prune"
        && matches!(
            sub,
            "system" | "container" | "image" | "volume" | "network" | "builder" | "buildx"
        )
    {
        return high("prunes Docker data for good");
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
    Some(RiskAssessment::medium("runs containers"))
}

static DESTRUCTIVE_SQL: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\bdrop\s+(database|schema|table|collection|user|role)\b|\btruncate\s+(table\s+)?\w|\bdelete\s+from\s+[\w.`\x22]+\s*(;|$|\))|\bdropdatabase\s*\(|\.drop\s*\(|\bflushall\b|\bflushdb\b|\bdeletemany\s*\(\s*\{\s*\}\s*\)",
    )
    .ok()
});

/// SQL (or a database shell's code) that drops or wipes data.
pub fn destructive_sql(code: &str) -> bool {
    DESTRUCTIVE_SQL.as_ref().is_some_and(|r| r.is_match(code))
}
