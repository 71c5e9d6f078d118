//! Procedural danger checks on services: git's history and remotes,
//! containers, cloud CLIs, databases.

use std::sync::LazyLock;

use regex::Regex;

use super::{Invocation, high, long, low, medium, positional, short};
use crate::permission::RiskAssessment;

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
    // git's own options come before the subcommand (`git switch -c x` is
    // a branch name, not a setting).
    let mut dash_c = false;
    let mut i = 0;
    while let Some(x) = a.get(i) {
        match *x {
            "-c" => {
                dash_c |= a
                    .get(i + 1)
                    .is_none_or(|kv| kv.split_once('=').is_none_or(|(k, v)| runs_commands(k, v)));
                i += 2;
            }
            "-C" | "--git-dir" | "--work-tree" | "--namespace" => i += 2,
            x if x.starts_with("--config-env") || x.starts_with("--exec-path") => {
                dash_c = true;
                i += 1;
            }
            x if x.starts_with('-') => i += 1,
            _ => break,
        }
    }
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
    "symbolic-ref",
    "replace",
    "update-ref",
    "hash-object",
    "commit-tree",
    "mktag",
    "mktree",
    "fast-import",
    "pack-refs",
    "rerere",
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
        _ if crate::shell::readonly::is_read_only("git", a) => None,
        // `git config --global --list`: a read of the person's settings.
        "config"
            if rest.iter().any(|x| {
                matches!(
                    *x,
                    "--list" | "-l" | "list" | "--get" | "--get-all" | "--get-regexp" | "get"
                )
            }) =>
        {
            low("reads git settings, the person's own included")
        }
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
    if matches!(
        sub,
        "ps" | "images" | "version" | "info" | "inspect" | "logs" | "top" | "stats"
    ) || (matches!(sub, "container" | "image" | "volume" | "network")
        && matches!(second, "ls" | "list" | "inspect"))
    {
        return Some(RiskAssessment::low(
            "reads container state from the Docker daemon",
        ));
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

#[allow(clippy::expect_used)]
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
