//! Paths named in a command: normalised (`~`, `$HOME`, `//`, `/tmp/../`,
//! relative to the directory the command runs in) and placed: inside the
//! workspace, a harmless device, a secret, a file that persists or escalates,
//! a system directory...

use std::path::{Component, Path, PathBuf};

#[derive(Debug, Clone)]
pub struct PathEnv {
    pub workspace: PathBuf,
    pub home: Option<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// `/dev/null` and friends.
    Harmless,
    Workspace,
    Temp,
    /// Credentials and keys: reading them is high risk.
    Secret(&'static str),
    /// Shell start-up files, SSH keys that grant access, git hooks, cron:
    /// writing them runs code later.
    Persistence(&'static str),
    /// `/`, the home directory, or a directory containing the workspace.
    Ancestor(&'static str),
    System,
    Outside,
}

const HARMLESS: &[&str] = &[
    "/dev/null",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/stdin",
    "/dev/tty",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
];

const SYSTEM: &[&str] = &[
    "/etc",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/boot",
    "/sys",
    "/proc",
    "/dev",
    "/var",
    "/opt",
    "/root",
    "/srv",
    "/snap",
    "/System",
    "/Library",
    "/Applications",
    "/private",
];

/// Relative to the home directory.
const SECRETS_IN_HOME: &[(&str, &str)] = &[
    (".ssh", "SSH keys"),
    (".aws", "AWS credentials"),
    (".config/gcloud", "Google Cloud credentials"),
    (".azure", "Azure credentials"),
    (".kube", "Kubernetes credentials"),
    (".docker/config.json", "Docker registry credentials"),
    (".netrc", "stored passwords"),
    (".git-credentials", "git credentials"),
    (".npmrc", "npm tokens"),
    (".pypirc", "PyPI tokens"),
    (".cargo/credentials", "crates.io token"),
    (".cargo/credentials.toml", "crates.io token"),
    (".gnupg", "GPG keys"),
    (".password-store", "the password store"),
    (".config/gh/hosts.yml", "GitHub CLI token"),
    (".vault-token", "Vault token"),
    (".bash_history", "shell history"),
    (".pgpass", "PostgreSQL passwords"),
    (".my.cnf", "MySQL passwords"),
    (".config/rclone", "rclone credentials"),
    (".zsh_history", "shell history"),
];

const SECRETS_ABSOLUTE: &[(&str, &str)] = &[
    ("/etc/shadow", "password hashes"),
    ("/etc/gshadow", "password hashes"),
    ("/etc/sudoers", "sudo rules"),
    ("/etc/ssl/private", "TLS private keys"),
    ("/etc/ssh/ssh_host_", "the machine's SSH host keys"),
];

const PERSISTENCE_IN_HOME: &[(&str, &str)] = &[
    (".bashrc", "a shell start-up file"),
    (".bash_profile", "a shell start-up file"),
    (".bash_login", "a shell start-up file"),
    (".bash_logout", "a shell start-up file"),
    (".profile", "a shell start-up file"),
    (".zshrc", "a shell start-up file"),
    (".zshenv", "a shell start-up file"),
    (".zprofile", "a shell start-up file"),
    (".zlogin", "a shell start-up file"),
    (".config/fish", "a shell start-up file"),
    (".ssh/authorized_keys", "SSH access keys"),
    (".ssh/rc", "SSH start-up commands"),
    (".config/systemd/user", "a systemd user service"),
    (".config/autostart", "a desktop autostart entry"),
    ("Library/LaunchAgents", "a launchd agent"),
];

const PERSISTENCE_ABSOLUTE: &[(&str, &str)] = &[
    ("/etc/cron", "a cron job"),
    ("/etc/crontab", "a cron job"),
    ("/var/spool/cron", "a cron job"),
    ("/etc/profile", "a shell start-up file"),
    ("/etc/bash.bashrc", "a shell start-up file"),
    ("/etc/environment", "the system environment"),
    ("/etc/ld.so.preload", "a preloaded library"),
    ("/etc/systemd", "a systemd service"),
    ("/etc/sudoers", "sudo rules"),
];

impl PathEnv {
    /// The absolute, normalised path a word names, relative to `cwd`
    /// (`None` when the directory is unknown and the word is relative).
    pub fn resolve(&self, word: &str, cwd: Option<&Path>) -> Option<PathBuf> {
        let home = self.home.as_deref();
        let expanded: PathBuf = if word == "~" || word == "$HOME" {
            home?.to_path_buf()
        } else if let Some(rest) = word
            .strip_prefix("~/")
            .or_else(|| word.strip_prefix("$HOME/"))
        {
            home?.join(rest)
        } else if word == "~+" || word.starts_with("~+/") {
            cwd?.join(word.trim_start_matches("~+").trim_start_matches('/'))
        } else if word == "~-" || word.starts_with("~-/") {
            return None; // the previous directory: unknown here
        } else if let Some(user) = word.strip_prefix('~') {
            // `~name`: another user's home, next to ours (or /root).
            let (name, rest) = user.split_once('/').unwrap_or((user, ""));
            let base = if name == "root" {
                PathBuf::from("/root")
            } else {
                home.and_then(Path::parent)
                    .unwrap_or(Path::new("/home"))
                    .join(name)
            };
            base.join(rest)
        } else if word.starts_with('/') {
            PathBuf::from(word)
        } else {
            cwd?.join(word)
        };
        Some(normalize(&expanded))
    }

    pub fn place(&self, path: &Path) -> Place {
        let s = path.to_string_lossy();
        if HARMLESS.contains(&s.as_ref()) || s.starts_with("/dev/fd/") {
            return Place::Harmless;
        }
        if let Some(rel) = self.home_relative(path) {
            if let Some((_, why)) = PERSISTENCE_IN_HOME.iter().find(|(p, _)| rel.starts_with(p)) {
                return Place::Persistence(why);
            }
            if let Some((_, why)) = SECRETS_IN_HOME.iter().find(|(p, _)| rel.starts_with(p)) {
                let public = rel.extension().is_some_and(|e| e == "pub")
                    || rel
                        .file_name()
                        .is_some_and(|n| n == "known_hosts" || n == "config");
                if !(rel.starts_with(".ssh") && public) {
                    return Place::Secret(why);
                }
            }
        }
        if path.components().any(|c| c.as_os_str() == ".git")
            && path.components().any(|c| c.as_os_str() == "hooks")
        {
            return Place::Persistence("a git hook");
        }
        if let Some((_, why)) = PERSISTENCE_ABSOLUTE.iter().find(|(p, _)| s.starts_with(p)) {
            return Place::Persistence(why);
        }
        if let Some((_, why)) = SECRETS_ABSOLUTE.iter().find(|(p, _)| s.starts_with(p)) {
            return Place::Secret(why);
        }
        if path == Path::new("/") {
            return Place::Ancestor("the root directory");
        }
        if self.home.as_deref() == Some(path) {
            return Place::Ancestor("the home directory");
        }
        if self.home.as_deref().is_some_and(|h| h.starts_with(path)) {
            return Place::Ancestor("a directory containing the home directory");
        }
        if path == self.workspace {
            return Place::Ancestor("the whole project directory");
        }
        if self.workspace.starts_with(path) {
            return Place::Ancestor("a directory containing the project");
        }
        if path.starts_with(&self.workspace) {
            return Place::Workspace;
        }
        if ["/tmp", "/var/tmp"].iter().any(|t| path.starts_with(t))
            || path.starts_with(std::env::temp_dir())
        {
            return Place::Temp;
        }
        if SYSTEM.iter().any(|d| path.starts_with(d)) {
            return Place::System;
        }
        Place::Outside
    }
}

impl PathEnv {
    /// The part of `path` below a home directory: ours, root's, or any
    /// user's under the directory that holds ours (`/home/*`).
    fn home_relative<'p>(&self, path: &'p Path) -> Option<&'p Path> {
        if let Some(h) = &self.home
            && let Ok(rel) = path.strip_prefix(h)
        {
            return Some(rel);
        }
        if let Ok(rel) = path.strip_prefix("/root") {
            return Some(rel);
        }
        let homes = self
            .home
            .as_deref()
            .and_then(Path::parent)
            .unwrap_or(Path::new("/home"));
        let rel = path.strip_prefix(homes).ok()?;
        let mut parts = rel.components();
        parts.next()?;
        Some(parts.as_path())
    }
}

/// Lexical normalisation: `.` dropped, `..` applied, `//` collapsed.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    if out.as_os_str().is_empty() {
        out.push("/");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> PathEnv {
        PathEnv {
            workspace: PathBuf::from("/home/u/proj"),
            home: Some(PathBuf::from("/home/u")),
        }
    }

    #[test]
    fn resolves_home_parents_and_slashes() {
        let e = env();
        let cwd = Some(Path::new("/home/u/proj"));
        assert_eq!(
            e.resolve("~/.ssh/id_rsa", cwd).unwrap(),
            Path::new("/home/u/.ssh/id_rsa")
        );
        assert_eq!(e.resolve("$HOME", cwd).unwrap(), Path::new("/home/u"));
        assert_eq!(
            e.resolve("/tmp/../etc//passwd", cwd).unwrap(),
            Path::new("/etc/passwd")
        );
        assert_eq!(e.resolve("../..", cwd).unwrap(), Path::new("/home"));
        assert_eq!(e.resolve("src/a.rs", None), None);
    }

    #[test]
    fn places() {
        let e = env();
        let p = |s: &str| e.place(Path::new(s));
        assert_eq!(p("/dev/null"), Place::Harmless);
        assert_eq!(p("/home/u/proj/src"), Place::Workspace);
        assert_eq!(
            p("/home/u/proj"),
            Place::Ancestor("the whole project directory")
        );
        assert_eq!(p("/home/u"), Place::Ancestor("the home directory"));
        assert_eq!(p("/"), Place::Ancestor("the root directory"));
        assert_eq!(p("/home/u/.ssh/id_ed25519"), Place::Secret("SSH keys"));
        assert_eq!(p("/home/u/.ssh/id_ed25519.pub"), Place::Outside);
        assert_eq!(
            p("/home/u/.ssh/authorized_keys"),
            Place::Persistence("SSH access keys")
        );
        assert_eq!(
            p("/home/u/.bashrc"),
            Place::Persistence("a shell start-up file")
        );
        assert_eq!(
            p("/home/u/proj/.git/hooks/pre-commit"),
            Place::Persistence("a git hook")
        );
        assert_eq!(p("/usr/local/bin/x"), Place::System);
        assert_eq!(p("/tmp/x"), Place::Temp);
        assert_eq!(p("/mnt/data"), Place::Outside);
    }
}
