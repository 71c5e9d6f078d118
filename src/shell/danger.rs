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
    /// The program whose output is piped in.
    pub producer: Option<String>,
}

fn short(args: &[&str], c: char) -> bool {
    args.iter()
        .any(|a| a.starts_with('-') && !a.starts_with("--") && a[1..].contains(c))
}

fn long(args: &[&str], l: &str) -> bool {
    args.iter()
        .any(|a| *a == l || a.starts_with(&format!("{l}=")))
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
        let Some(op) = rest.chars().next() else {
            continue;
        };
        let perms = &rest[1..];
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
        _ => &[],
    }
}

/// Positional words of `name args`, skipping options and their values.
fn positional_for<'a>(name: &str, args: &[&'a str]) -> Vec<&'a str> {
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
        // `{/,}` and friends: brace expansion yields several targets.
        if let (Some(open), Some(close)) = (target.find('{'), target.find('}'))
            && open < close
            && target[open..close].contains(',')
        {
            let (head, tail) = (&target[..open], &target[close + 1..]);
            return target[open + 1..close].split(',').find_map(|alt| {
                let t = format!("{head}{alt}{tail}");
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

    /// A specific judgment, when a rule knows this command.
    pub fn judge(&self) -> Option<RiskAssessment> {
        let a = &self.args;
        let high = |r: &str| Some(RiskAssessment::high(r));
        let medium = |r: &str| Some(RiskAssessment::medium(r));
        match self.name {
            "aws"
                if a.contains(&"configure")
                    && (a.contains(&"export-credentials")
                        || a.iter()
                            .any(|x| x.contains("secret") || x.contains("session_token"))) =>
            {
                high("prints cloud credentials")
            }
            "kubectl"
                if a.windows(2).any(|w| w == ["config", "view"])
                    && (long(a, "--raw") || long(a, "--flatten")) =>
            {
                high("prints cluster credentials")
            }
            "gcloud"
                if a.contains(&"auth")
                    && a.iter()
                        .any(|x| x.starts_with("print-") && x.ends_with("-token")) =>
            {
                high("prints a cloud access token")
            }
            "az" if a.windows(2).any(|w| w == ["account", "get-access-token"]) => {
                high("prints a cloud access token")
            }
            "terraform" | "tofu" | "terragrunt"
                if positional_for(self.name, a).contains(&"destroy") =>
            {
                high("destroys infrastructure")
            }
            "python" | "python3"
                if a.iter().any(|x| x.ends_with("manage.py"))
                    && a.iter()
                        .any(|x| matches!(*x, "flush" | "reset_db" | "sqlflush")) =>
            {
                high("drops or wipes database data")
            }
            "gsutil"
                if a.contains(&"rm") && a.iter().any(|x| x.contains("**") || x.ends_with("/*")) =>
            {
                high("deletes cloud storage recursively")
            }
            "yarn" | "pnpm" if positional_for(self.name, a).contains(&"publish") => publish(a),
            "rm" | "rmdir" | "unlink" | "shred" | "srm" | "wipe" => {
                let recursive =
                    short(a, 'r') || short(a, 'R') || long(a, "--recursive") || self.name != "rm";
                if long(a, "--no-preserve-root") {
                    return high("recursive deletion with --no-preserve-root");
                }
                for t in positional_for(self.name, a) {
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
                    if !find_filters(a) && matches!(self.place(s), Some(Place::Ancestor(_))) {
                        return high("deletes everything in the project directory");
                    }
                }
                medium("deletes the files it finds")
            }
            "mv" => {
                for t in positional_for(self.name, a).iter().rev().skip(1) {
                    if let Some(Place::Ancestor(what)) = self.place(t) {
                        return high(&format!("moves {what} away"));
                    }
                }
                medium("moves files")
            }
            "git" => git(a),
            "chmod" => {
                let mode_arg = a
                    .iter()
                    .find_map(|x| x.strip_prefix("--mode="))
                    .or_else(|| positional_for(self.name, a).first().copied())
                    .unwrap_or_default();
                let targets: Vec<&str> = positional_for(self.name, a)
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
                        .filter(|t| {
                            self.place(t) != Some(Place::Ancestor("the whole project directory"))
                        })
                        .find_map(|t| self.sweeping(t))
                {
                    return high(&format!("changes permissions of {what}"));
                }
                medium("changes file permissions")
            }
            "chown" | "chgrp" => {
                if (short(a, 'R') || long(a, "--recursive"))
                    && let Some(what) = positional_for(self.name, a)
                        .iter()
                        .skip(1)
                        .find_map(|t| self.sweeping(t))
                {
                    return high(&format!("changes ownership of {what}"));
                }
                if positional_for(self.name, a)
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
            "shutdown" if a.contains(&"-c") => medium("cancels a pending shutdown"),
            "shutdown" | "reboot" | "halt" | "poweroff" => {
                high("shuts down or restarts the machine")
            }
            "init" | "telinit" if a.iter().any(|x| matches!(*x, "0" | "6")) => {
                high("shuts down or restarts the machine")
            }
            "systemctl" => {
                let sub = positional_for(self.name, a)
                    .first()
                    .copied()
                    .unwrap_or_default();
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
                if self.args_from_input && self.producer.as_deref() == Some("ps") {
                    return high("kills every process listed by ps");
                }
                if self.args.iter().zip(&self.dynamic).any(|(a, d)| {
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
            "killall5" => high("kills every process"),
            "pkill" | "killall" => {
                let pattern = positional_for(self.name, a);
                if pattern
                    .iter()
                    .any(|p| matches!(*p, "init" | "systemd" | "launchd" | "^init$" | "^systemd$"))
                {
                    return high("kills init (process 1)");
                }
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
            "ssh" | "scp" | "sftp" | "nc" | "ncat" | "netcat" | "socat" | "telnet" | "ftp" => {
                medium("connects to another machine")
            }
            "docker" | "podman" | "nerdctl" => container(a),
            "kubectl" | "oc" => {
                let sub = positional_for(self.name, a)
                    .first()
                    .copied()
                    .unwrap_or_default();
                if matches!(sub, "delete" | "drain") || (sub == "replace" && long(a, "--force")) {
                    high("deletes Kubernetes resources")
                } else {
                    medium("changes a Kubernetes cluster")
                }
            }
            "helm"
                if matches!(
                    positional_for(self.name, a).first(),
                    Some(&("uninstall" | "delete" | "del"))
                ) =>
            {
                high("deletes a Helm release")
            }
            "helm" if matches!(positional_for(self.name, a).first(), Some(&"push")) => publish(a),
            "terraform" | "tofu" | "terragrunt" => {
                let sub = positional_for(self.name, a)
                    .first()
                    .copied()
                    .unwrap_or_default();
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
                let sub = positional_for(self.name, a)
                    .first()
                    .copied()
                    .unwrap_or_default();
                if sub == "destroy" || (sub == "up" && (short(a, 'y') || long(a, "--yes"))) {
                    high("destroys or changes infrastructure without review")
                } else {
                    medium("changes infrastructure")
                }
            }
            "cdk" | "sls" | "serverless"
                if matches!(
                    positional_for(self.name, a).first(),
                    Some(&("destroy" | "remove"))
                ) =>
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
                let p = positional_for(self.name, a);
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
                let p = positional_for(self.name, a);
                if (p.contains(&"rm") && (short(a, 'r') || short(a, 'R'))) || p.contains(&"rb") {
                    high("deletes cloud storage recursively")
                } else {
                    medium("changes cloud storage")
                }
            }
            "gcloud" | "az" => {
                let p = positional_for(self.name, a);
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
                if matches!(
                    positional_for(self.name, a).first(),
                    Some(&("publish" | "unpublish"))
                ) =>
            {
                publish(a)
            }
            "cargo"
                if matches!(
                    positional_for(self.name, a).first(),
                    Some(&("publish" | "yank" | "owner"))
                ) =>
            {
                publish(a)
            }
            "gem"
                if matches!(
                    positional_for(self.name, a).first(),
                    Some(&("push" | "yank"))
                ) =>
            {
                publish(a)
            }
            "twine" if matches!(positional_for(self.name, a).first(), Some(&"upload")) => {
                publish(a)
            }
            "poetry" | "uv" | "hatch" | "flit"
                if matches!(positional_for(self.name, a).first(), Some(&"publish")) =>
            {
                publish(a)
            }
            "mvn" if a.contains(&"deploy") => publish(a),
            "gradle" | "./gradlew" | "gradlew" if a.iter().any(|x| x.starts_with("publish")) => {
                publish(a)
            }
            "dotnet" if a.windows(2).any(|w| w == ["nuget", "push"]) => publish(a),
            "vsce" | "ovsx" if matches!(positional_for(self.name, a).first(), Some(&"publish")) => {
                publish(a)
            }
            "pod" if a.windows(2).any(|w| w == ["trunk", "push"]) => publish(a),
            "rsync" if a.iter().any(|x| x.starts_with("--delete")) => {
                let dest = positional_for(self.name, a)
                    .last()
                    .copied()
                    .unwrap_or_default();
                match self.sweeping(dest) {
                    Some(what) if !dest.contains(':') => high(&format!(
                        "deletes files in {what} to mirror another directory"
                    )),
                    _ => medium("mirrors files, deleting extra ones at the destination"),
                }
            }
            "rsync" => medium("copies files"),
            "loginctl"
                if matches!(
                    positional_for(self.name, a).first(),
                    Some(&("poweroff" | "reboot" | "halt" | "suspend" | "hibernate"))
                ) =>
            {
                high("shuts down or restarts the machine")
            }
            "kexec" => high("boots another kernel"),
            "at" | "batch" if !short(a, 'l') && !a.contains(&"-c") => {
                high("schedules commands to run later (persistence)")
            }
            "gh" if a.windows(2).any(|w| w == ["auth", "token"]) => high("prints a GitHub token"),
            "gpg" | "gpg2" if a.iter().any(|x| x.starts_with("--export-secret")) => {
                high("exports secret keys")
            }
            "security"
                if a.iter()
                    .any(|x| x.starts_with("find-") && x.ends_with("-password"))
                    && a.contains(&"-w") =>
            {
                high("prints a stored password")
            }
            "zpool" | "zfs"
                if matches!(
                    positional_for(self.name, a).first(),
                    Some(&("destroy" | "labelclear"))
                ) =>
            {
                high("destroys a storage pool or data set")
            }
            "diskutil"
                if a.iter().any(|x| {
                    x.starts_with("erase")
                        || x.starts_with("partition")
                        || *x == "zeroDisk"
                        || *x == "secureErase"
                }) =>
            {
                high("formats or partitions a disk")
            }
            "docker-compose" | "podman-compose"
                if (a.contains(&"down") && (short(a, 'v') || long(a, "--volumes"))) =>
            {
                high("deletes the project's Docker volumes (their data is lost)")
            }
            "s3cmd"
                if a.iter().any(|x| matches!(*x, "del" | "rm" | "rb"))
                    && (long(a, "--recursive") || short(a, 'r') || long(a, "--force")) =>
            {
                high("deletes cloud storage recursively")
            }
            "mc" if a.contains(&"rm") && (long(a, "--recursive") || long(a, "--force")) => {
                high("deletes cloud storage recursively")
            }
            "mc" if a.contains(&"rb") => high("deletes a storage bucket"),
            "rclone"
                if matches!(
                    positional_for(self.name, a).first(),
                    Some(&("purge" | "delete" | "deletefile" | "rmdirs"))
                ) =>
            {
                high("deletes cloud storage")
            }
            "rclone" if matches!(positional_for(self.name, a).first(), Some(&"sync")) => {
                medium("mirrors files, deleting extra ones at the destination")
            }
            "rails" | "rake" | "bin/rails" | "./bin/rails"
                if a.iter().any(|x| {
                    matches!(
                        *x,
                        "db:drop" | "db:reset" | "db:purge" | "db:schema:load" | "db:drop:all"
                    )
                }) =>
            {
                high("drops or wipes database data")
            }
            "prisma"
                if a.windows(2).any(|w| w == ["migrate", "reset"])
                    || a.windows(2).any(|w| w == ["db", "push"]) && long(a, "--force-reset") =>
            {
                high("drops or wipes database data")
            }
            "lerna" | "changeset" | "semantic-release" | "release-it" | "np"
                if a.contains(&"publish")
                    || self.name == "semantic-release"
                    || self.name == "release-it"
                    || self.name == "np" =>
            {
                publish(a)
            }
            "goreleaser" if a.contains(&"release") && !long(a, "--snapshot") => publish(a),
            "mix" if a.iter().any(|x| x.starts_with("hex.publish")) => publish(a),
            "dart" | "flutter" if a.windows(2).any(|w| w == ["pub", "publish"]) => publish(a),
            "cabal" if a.contains(&"upload") => publish(a),
            "buildah" | "skopeo"
                if matches!(
                    positional_for(self.name, a).first(),
                    Some(&("push" | "copy"))
                ) =>
            {
                publish(a)
            }
            _ => None,
        }
    }
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

/// Publishing, unless it is a dry run.
fn publish(a: &[&str]) -> Option<RiskAssessment> {
    if a.iter()
        .any(|x| *x == "--dry-run" || x.starts_with("--dry-run="))
    {
        Some(RiskAssessment::low("a dry run of publishing"))
    } else {
        Some(RiskAssessment::high("publishes a package"))
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
            | "credential.helper"
            | "diff.external"
            | "sequence.editor"
            | "gpg.program"
    ) || (key.starts_with("alias.") && value.trim_start().starts_with('!'))
        || (key.starts_with("filter.")
            && (key.ends_with(".clean") || key.ends_with(".smudge") || key.ends_with(".process")))
        || key.ends_with(".textconv")
}

/// `git config KEY VALUE` or `git -c KEY=VALUE` setting such an option.
fn sets_command_option(a: &[&str]) -> bool {
    let dash_c = a.windows(2).any(|w| {
        w[0] == "-c"
            && w[1]
                .split_once('=')
                .is_some_and(|(k, v)| runs_commands(k, v))
    });
    let config = a.iter().position(|x| *x == "config").is_some_and(|i| {
        let rest: Vec<&str> = a[i + 1..]
            .iter()
            .filter(|x| !x.starts_with('-'))
            .copied()
            .collect();
        rest.windows(2).any(|w| runs_commands(w[0], w[1]))
            || rest
                .first()
                .is_some_and(|k| k.eq_ignore_ascii_case("core.hooksPath"))
    });
    dash_c || config
}

fn git(a: &[&str]) -> Option<RiskAssessment> {
    if sets_command_option(a) {
        return Some(RiskAssessment::high(
            "sets a git option that runs commands (persistence)",
        ));
    }
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
        "reset" if long(rest, "--hard") || long(rest, "--merge") => {
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
        "" => None,
        _ => None,
    }
}

fn container(a: &[&str]) -> Option<RiskAssessment> {
    let p = positional_for("docker", a);
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
