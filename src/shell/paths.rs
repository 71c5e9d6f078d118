//! Paths named in a command: expanded (`~`, `~+`, `$HOME`), made absolute
//! relative to the directory the command runs in, resolved the way the
//! kernel will open them (symlinks of the part that exists are followed, so
//! a link inside the project that points at `~/.ssh` is seen as `~/.ssh`),
//! and placed: inside the workspace, a harmless device, a secret, a file
//! that runs code later, a system directory...
//!
//! It does not know which words of a command are paths; the analysis asks.

use std::path::{Path, PathBuf};

pub use crate::realpath::{normalize, physical};

#[derive(Debug, Clone)]
pub struct PathEnv {
    pub workspace: PathBuf,
    pub home: Option<PathBuf>,
    /// agent's own settings and records ([`Place::Agent`]).
    pub protected: Vec<PathBuf>,
    /// Paths already resolved in this analysis (a long compound names
    /// the same paths again and again).
    resolved: std::cell::RefCell<std::collections::HashMap<PathBuf, Option<PathBuf>>>,
    /// Whether names exist (a word is a path when it names a file).
    existing: std::cell::RefCell<std::collections::HashMap<PathBuf, bool>>,
}

/// Credentials and keys: reading them is high risk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Secret {
    SshKeys,
    Aws,
    GoogleCloud,
    Azure,
    Kubernetes,
    DockerRegistry,
    StoredPasswords,
    GitCredentials,
    NpmTokens,
    PypiTokens,
    CratesToken,
    GpgKeys,
    PasswordStore,
    GithubToken,
    VaultToken,
    ShellHistory,
    PostgresPasswords,
    MysqlPasswords,
    Rclone,
    PasswordHashes,
    SudoRules,
    TlsKeys,
    HostKeys,
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Secret::SshKeys => "SSH keys",
            Secret::Aws => "AWS credentials",
            Secret::GoogleCloud => "Google Cloud credentials",
            Secret::Azure => "Azure credentials",
            Secret::Kubernetes => "Kubernetes credentials",
            Secret::DockerRegistry => "Docker registry credentials",
            Secret::StoredPasswords => "stored passwords",
            Secret::GitCredentials => "git credentials",
            Secret::NpmTokens => "npm tokens",
            Secret::PypiTokens => "PyPI tokens",
            Secret::CratesToken => "crates.io token",
            Secret::GpgKeys => "GPG keys",
            Secret::PasswordStore => "the password store",
            Secret::GithubToken => "GitHub CLI token",
            Secret::VaultToken => "Vault token",
            Secret::ShellHistory => "shell history",
            Secret::PostgresPasswords => "PostgreSQL passwords",
            Secret::MysqlPasswords => "MySQL passwords",
            Secret::Rclone => "rclone credentials",
            Secret::PasswordHashes => "password hashes",
            Secret::SudoRules => "sudo rules",
            Secret::TlsKeys => "TLS private keys",
            Secret::HostKeys => "the machine's SSH host keys",
        })
    }
}

/// Files that run code later when written: start-up files, access keys,
/// hooks, services, scheduled jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Persistence {
    ShellStartup,
    SshAccessKeys,
    SshStartup,
    SystemdService,
    Autostart,
    LaunchAgent,
    GitHook,
    GitConfig,
    GitInternals,
    CronJob,
    SystemEnvironment,
    PreloadedLibrary,
    SudoRules,
}

impl std::fmt::Display for Persistence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Persistence::ShellStartup => "a shell start-up file",
            Persistence::SshAccessKeys => "SSH access keys",
            Persistence::SshStartup => "SSH start-up commands",
            Persistence::SystemdService => "a systemd service",
            Persistence::Autostart => "a desktop autostart entry",
            Persistence::LaunchAgent => "a launchd agent",
            Persistence::GitHook => "a git hook",
            Persistence::GitConfig => "git's configuration (it can name programs git runs)",
            Persistence::GitInternals => {
                "git's internal files (a `commondir`, an index entry or a module there can make git run programs)"
            }
            Persistence::CronJob => "a cron job",
            Persistence::SystemEnvironment => "the system environment",
            Persistence::PreloadedLibrary => "a preloaded library",
            Persistence::SudoRules => "sudo rules",
        })
    }
}

/// A directory whose wholesale removal or change is a disaster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ancestor {
    Root,
    Home,
    ContainsHome,
    /// The workspace itself.
    Project,
    ContainsProject,
}

impl std::fmt::Display for Ancestor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Ancestor::Root => "the root directory",
            Ancestor::Home => "the home directory",
            Ancestor::ContainsHome => "a directory containing the home directory",
            Ancestor::Project => "the whole project directory",
            Ancestor::ContainsProject => "a directory containing the project",
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// `/dev/null` and friends.
    Harmless,
    Workspace,
    Temp,
    Secret(Secret),
    Persistence(Persistence),
    Ancestor(Ancestor),
    System,
    Outside,
    /// agent's own settings and records (user config, trust records,
    /// sessions): changing them changes what agent allows next time.
    Agent,
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
    "/run",
    "/System",
    "/Library",
    "/Applications",
    "/private",
];

/// Relative to a home directory.
const SECRETS_IN_HOME: &[(&str, Secret)] = &[
    (".ssh", Secret::SshKeys),
    (".aws", Secret::Aws),
    (".config/gcloud", Secret::GoogleCloud),
    (".azure", Secret::Azure),
    (".kube", Secret::Kubernetes),
    (".docker/config.json", Secret::DockerRegistry),
    (".netrc", Secret::StoredPasswords),
    (".git-credentials", Secret::GitCredentials),
    (".config/git/credentials", Secret::GitCredentials),
    (".npmrc", Secret::NpmTokens),
    (".pypirc", Secret::PypiTokens),
    (".cargo/credentials", Secret::CratesToken),
    (".cargo/credentials.toml", Secret::CratesToken),
    (".gnupg", Secret::GpgKeys),
    (".password-store", Secret::PasswordStore),
    (".config/gh/hosts.yml", Secret::GithubToken),
    (".vault-token", Secret::VaultToken),
    (".bash_history", Secret::ShellHistory),
    (".zsh_history", Secret::ShellHistory),
    (".local/share/fish/fish_history", Secret::ShellHistory),
    (".pgpass", Secret::PostgresPasswords),
    (".my.cnf", Secret::MysqlPasswords),
    (".config/rclone", Secret::Rclone),
];

const SECRETS_ABSOLUTE: &[(&str, Secret)] = &[
    ("/etc/shadow", Secret::PasswordHashes),
    ("/etc/gshadow", Secret::PasswordHashes),
    ("/etc/sudoers", Secret::SudoRules),
    ("/etc/ssl/private", Secret::TlsKeys),
    ("/etc/ssh/ssh_host_", Secret::HostKeys),
];

const PERSISTENCE_IN_HOME: &[(&str, Persistence)] = &[
    (".bashrc", Persistence::ShellStartup),
    (".bash_profile", Persistence::ShellStartup),
    (".bash_login", Persistence::ShellStartup),
    (".bash_logout", Persistence::ShellStartup),
    (".profile", Persistence::ShellStartup),
    (".zshrc", Persistence::ShellStartup),
    (".zshenv", Persistence::ShellStartup),
    (".zprofile", Persistence::ShellStartup),
    (".zlogin", Persistence::ShellStartup),
    (".config/fish", Persistence::ShellStartup),
    (".ssh/authorized_keys", Persistence::SshAccessKeys),
    (".ssh/rc", Persistence::SshStartup),
    (".config/systemd/user", Persistence::SystemdService),
    (".config/autostart", Persistence::Autostart),
    ("Library/LaunchAgents", Persistence::LaunchAgent),
    (".gitconfig", Persistence::GitConfig),
    (".config/git/config", Persistence::GitConfig),
];

const PERSISTENCE_ABSOLUTE: &[(&str, Persistence)] = &[
    ("/etc/cron", Persistence::CronJob),
    ("/etc/crontab", Persistence::CronJob),
    ("/var/spool/cron", Persistence::CronJob),
    ("/etc/profile", Persistence::ShellStartup),
    ("/etc/bash.bashrc", Persistence::ShellStartup),
    ("/etc/environment", Persistence::SystemEnvironment),
    ("/etc/ld.so.preload", Persistence::PreloadedLibrary),
    ("/etc/systemd", Persistence::SystemdService),
    ("/etc/sudoers", Persistence::SudoRules),
    ("/etc/gitconfig", Persistence::GitConfig),
];

impl PathEnv {
    pub fn new(workspace: PathBuf, home: Option<PathBuf>) -> PathEnv {
        PathEnv {
            workspace,
            home,
            protected: Vec::new(),
            resolved: Default::default(),
            existing: Default::default(),
        }
    }

    /// Whether `path` exists (as itself: a dangling link exists).
    pub fn exists(&self, path: &Path) -> bool {
        if let Some(known) = self.existing.borrow().get(path) {
            return *known;
        }
        let found = std::fs::symlink_metadata(path).is_ok();
        let mut cache = self.existing.borrow_mut();
        if cache.len() < 10_000 {
            cache.insert(path.to_path_buf(), found);
        }
        found
    }

    /// The absolute path a word names, relative to `cwd`, as the kernel
    /// would open it. `None` when it cannot be known here: a relative path
    /// in an unknown directory, `~-` (the previous directory), a symlink
    /// loop.
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
            return None;
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
        const MAX_CACHED: usize = 10_000;
        if let Some(known) = self.resolved.borrow().get(&expanded) {
            return known.clone();
        }
        let real = physical(&expanded);
        let mut cache = self.resolved.borrow_mut();
        if cache.len() < MAX_CACHED {
            cache.insert(expanded, real.clone());
        }
        real
    }

    /// agent's own settings and records live under these.
    pub fn protecting(mut self, paths: Vec<PathBuf>) -> PathEnv {
        self.protected = paths;
        self
    }

    pub fn place(&self, path: &Path) -> Place {
        let s = path.to_string_lossy();
        if HARMLESS.contains(&s.as_ref()) || s.starts_with("/dev/fd/") {
            return Place::Harmless;
        }
        if let Some(rel) = self.home_relative(path) {
            if let Some((_, p)) = PERSISTENCE_IN_HOME.iter().find(|(d, _)| rel.starts_with(d)) {
                return Place::Persistence(*p);
            }
            if let Some((_, secret)) = SECRETS_IN_HOME.iter().find(|(d, _)| rel.starts_with(d)) {
                let public = rel.extension().is_some_and(|e| e == "pub")
                    || rel
                        .file_name()
                        .is_some_and(|n| n == "known_hosts" || n == "config");
                if !(rel.starts_with(".ssh") && public) {
                    return Place::Secret(*secret);
                }
            }
        }
        if let Some(p) = git_persistence(path) {
            return Place::Persistence(p);
        }
        if let Some((_, p)) = PERSISTENCE_ABSOLUTE.iter().find(|(d, _)| s.starts_with(d)) {
            return Place::Persistence(*p);
        }
        if let Some((_, secret)) = SECRETS_ABSOLUTE.iter().find(|(d, _)| s.starts_with(d)) {
            return Place::Secret(*secret);
        }
        if path == Path::new("/") {
            return Place::Ancestor(Ancestor::Root);
        }
        if self.home.as_deref() == Some(path) {
            return Place::Ancestor(Ancestor::Home);
        }
        if self.home.as_deref().is_some_and(|h| h.starts_with(path)) {
            return Place::Ancestor(Ancestor::ContainsHome);
        }
        // Everyone's homes, and someone else's.
        if self.homes().iter().any(|h| h == path) {
            return Place::Ancestor(Ancestor::ContainsHome);
        }
        if path
            .parent()
            .is_some_and(|p| self.homes().iter().any(|h| h == p))
            && !self.workspace.starts_with(path)
        {
            return Place::Ancestor(Ancestor::Home);
        }
        if path == self.workspace {
            return Place::Ancestor(Ancestor::Project);
        }
        if self.workspace.starts_with(path) {
            return Place::Ancestor(Ancestor::ContainsProject);
        }
        if self.protected.iter().any(|p| path.starts_with(p)) {
            return Place::Agent;
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

    /// Inside the workspace (or the workspace itself), or a harmless device.
    pub fn is_inside(&self, path: &Path) -> bool {
        path.starts_with(&self.workspace) || matches!(self.place(path), Place::Harmless)
    }
}

/// `.git/hooks/…` and `.git/config` of any repository: git runs what they name.
fn git_persistence(path: &Path) -> Option<Persistence> {
    let parts: Vec<&std::ffi::OsStr> = path.components().map(|c| c.as_os_str()).collect();
    if parts.last().is_some_and(|c| *c == ".gitmodules") {
        // `update = !cmd`, `url = ext::…`: run by `git submodule`.
        return Some(Persistence::GitConfig);
    }
    let git = parts.iter().position(|c| *c == ".git")?;
    match parts.get(git + 1).and_then(|c| c.to_str()) {
        Some("hooks") => Some(Persistence::GitHook),
        Some("config") => Some(Persistence::GitConfig),
        // `commondir`, `index` (a submodule entry), `modules/`, `info/`…:
        // git's own files, which git alone should write.
        Some(_) => Some(Persistence::GitInternals),
        None => None,
    }
}

impl PathEnv {
    /// Directories that hold people's homes.
    fn homes(&self) -> Vec<PathBuf> {
        let mut out = vec![PathBuf::from("/home"), PathBuf::from("/Users")];
        if let Some(parent) = self.home.as_deref().and_then(Path::parent)
            && parent != Path::new("/")
            && !out.iter().any(|h| h == parent)
        {
            out.push(parent.to_path_buf());
        }
        out
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> PathEnv {
        PathEnv::new(
            PathBuf::from("/home/u/proj"),
            Some(PathBuf::from("/home/u")),
        )
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
        assert_eq!(e.resolve("~-/x", cwd), None);
        assert_eq!(e.resolve("~+/../x", cwd).unwrap(), Path::new("/home/u/x"));
    }

    #[test]
    fn symlinks_resolve_to_their_targets_as_the_kernel_does() {
        let ws = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let (ws_p, out_p) = (
            ws.path().canonicalize().unwrap(),
            out.path().canonicalize().unwrap(),
        );
        std::fs::create_dir(out_p.join("keys")).unwrap();
        std::os::unix::fs::symlink(out_p.join("keys"), ws_p.join("link")).unwrap();
        std::os::unix::fs::symlink("loop", ws_p.join("loop")).unwrap();
        let e = PathEnv::new(ws_p.clone(), None);
        let cwd = Some(ws_p.as_path());
        assert_eq!(e.resolve("link/id", cwd).unwrap(), out_p.join("keys/id"));
        // `..` after a link is the target's parent, not the workspace.
        assert_eq!(e.resolve("link/../x", cwd).unwrap(), out_p.join("x"));
        assert_eq!(e.resolve("loop/x", cwd), None);
        assert_eq!(e.resolve("new/../a", cwd).unwrap(), ws_p.join("a"));
    }

    #[test]
    fn places() {
        let e = env();
        let p = |s: &str| e.place(Path::new(s));
        assert_eq!(p("/dev/null"), Place::Harmless);
        assert_eq!(p("/home/u/proj/src"), Place::Workspace);
        assert_eq!(p("/home/u/proj"), Place::Ancestor(Ancestor::Project));
        assert_eq!(p("/home/u"), Place::Ancestor(Ancestor::Home));
        assert_eq!(p("/"), Place::Ancestor(Ancestor::Root));
        assert_eq!(p("/home/u/.ssh/id_ed25519"), Place::Secret(Secret::SshKeys));
        assert_eq!(p("/home/u/.ssh/id_ed25519.pub"), Place::Outside);
        assert_eq!(
            p("/home/u/.ssh/authorized_keys"),
            Place::Persistence(Persistence::SshAccessKeys)
        );
        assert_eq!(
            p("/home/u/.bashrc"),
            Place::Persistence(Persistence::ShellStartup)
        );
        assert_eq!(
            p("/home/u/proj/.git/hooks/pre-commit"),
            Place::Persistence(Persistence::GitHook)
        );
        assert_eq!(
            p("/home/u/proj/.git/config"),
            Place::Persistence(Persistence::GitConfig)
        );
        assert_eq!(
            p("/home/u/proj/.git/commondir"),
            Place::Persistence(Persistence::GitInternals)
        );
        assert_eq!(
            p("/home/u/proj/.gitmodules"),
            Place::Persistence(Persistence::GitConfig)
        );
        assert_eq!(p("/home/u/proj/.git"), Place::Workspace);
        assert_eq!(p("/home/u/proj/src/git.rs"), Place::Workspace);
        assert_eq!(p("/usr/local/bin/x"), Place::System);
        assert_eq!(p("/tmp/x"), Place::Temp);
        assert_eq!(p("/mnt/data"), Place::Outside);
    }
}
