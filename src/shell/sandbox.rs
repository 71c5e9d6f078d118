//! The OS sandbox for bash commands, on Linux with Landlock: by default a
//! command may write only inside the workspace, the temp directory, the
//! person's tool caches and configured extra roots; everything else is
//! read-only to it. It is the backstop for what the risk analysis misses,
//! never a reason to skip asking, and `--yolo` does not turn it off.
//!
//! Landlock can only grant, never carve a read-only hole into a writable
//! tree, so `.git/hooks` inside the workspace stays writable here; writes
//! there are judged high risk by the analysis and always asked.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr,
    Scope, path_beneath_rules,
};
use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Writes only inside the workspace, temp and tool caches.
    WorkspaceWrite,
    /// No writes anywhere (but temp and /dev/null).
    ReadOnly,
    Off,
}

impl std::fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::Off => "off",
        })
    }
}

/// Tool caches under the home directory that builds write to: data only.
/// Never where programs are installed and later run from (`~/.cargo/bin`,
/// `~/go/bin`, `~/.local/bin`, toolchains, shims), and never a directory on
/// the person's PATH (see [`Sandbox::new`]).
const HOME_CACHES: &[&str] = &[
    ".cargo/registry",
    ".cargo/git",
    "go/pkg/mod",
    ".cache/go-build",
    ".npm/_cacache",
    ".npm/_logs",
    ".pnpm-store",
    ".local/share/pnpm/store",
    ".cache/yarn",
    ".yarn/berry/cache",
    ".bun/install/cache",
    ".cache/deno",
    ".cache/pip",
    ".cache/uv",
    ".cache/pypoetry",
    ".cache/sccache",
    ".cache/node-gyp",
    ".cache/typescript",
    ".gradle/caches",
    ".m2/repository",
    ".nuget/packages",
    ".ivy2/cache",
    ".cabal/packages",
];

/// Devices any command may write.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    // Not /dev/tty: a command has no controlling terminal (see contain).
    "/dev/random",
    "/dev/urandom",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
];

#[derive(Debug, Clone)]
pub struct Sandbox {
    pub mode: SandboxMode,
    /// Where writes are allowed (workspace-write) besides temp and devices.
    pub writable: Vec<PathBuf>,
    /// Environment variables a command does not get (the provider keys),
    /// whatever the mode.
    pub withheld_env: Vec<String>,
    /// The project, whose `.git/hooks`, `.git/config`, `.agent/` and
    /// `.gitmodules` stay read-only to commands.
    pub workspace: Option<PathBuf>,
    /// agent's own files: read-only to commands even where they sit in a
    /// writable root (a temp directory).
    pub protected: Vec<PathBuf>,
    /// agent's records (sessions, trust records): not even readable.
    pub hidden: Vec<PathBuf>,
}

impl Sandbox {
    pub fn off() -> Sandbox {
        Sandbox {
            mode: SandboxMode::Off,
            writable: Vec::new(),
            withheld_env: Vec::new(),
            workspace: None,
            protected: Vec::new(),
            hidden: Vec::new(),
        }
    }

    pub fn new(
        mode: SandboxMode,
        workspace: &Path,
        home: Option<&Path>,
        extra: &[PathBuf],
    ) -> Sandbox {
        let mut writable = vec![workspace.to_path_buf()];
        if let Some(h) = home {
            // A cache that holds (or sits in) a PATH directory is left out:
            // what a command writes there would run later, unsandboxed.
            let on_path: Vec<PathBuf> = std::env::var_os("PATH")
                .map(|p| {
                    std::env::split_paths(&p)
                        .filter(|d| d.is_absolute())
                        .collect()
                })
                .unwrap_or_default();
            writable.extend(
                HOME_CACHES
                    .iter()
                    .map(|c| h.join(c))
                    .filter(|c| !on_path.iter().any(|d| d.starts_with(c) || c.starts_with(d))),
            );
        }
        writable.extend(extra.iter().cloned());
        Sandbox {
            mode,
            writable,
            withheld_env: Vec::new(),
            workspace: Some(workspace.to_path_buf()),
            protected: Vec::new(),
            hidden: Vec::new(),
        }
    }

    /// agent's own files, kept read-only to commands.
    pub fn protecting(mut self, paths: Vec<PathBuf>) -> Sandbox {
        self.protected = paths;
        self
    }

    /// agent's records, hidden from commands.
    pub fn hiding(mut self, paths: Vec<PathBuf>) -> Sandbox {
        self.hidden = paths;
        self
    }

    pub fn withholding(mut self, vars: &[String]) -> Sandbox {
        self.withheld_env = vars.to_vec();
        self
    }

    /// Whether this kernel enforces Landlock.
    pub fn supported() -> bool {
        Self::abi() >= 1
    }

    /// The kernel's Landlock ABI version (0: none). 6 adds scopes
    /// (signals, abstract unix sockets).
    pub fn abi() -> i64 {
        // SAFETY: landlock_create_ruleset(NULL, 0, VERSION) only returns the ABI version.
        let abi = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<u8>(),
                0usize,
                1u32,
            )
        };
        abi.max(0)
    }

    pub fn active(&self) -> bool {
        self.mode != SandboxMode::Off && Self::supported()
    }

    fn temp_dirs() -> Vec<PathBuf> {
        let mut t = vec![
            PathBuf::from("/tmp"),
            PathBuf::from("/var/tmp"),
            std::env::temp_dir(),
        ];
        t.dedup();
        t
    }

    /// What stays read-only to commands inside writable roots (when the
    /// kernel gives us mount namespaces), and what is pinned in place.
    pub fn read_only_places(&self) -> (Vec<PathBuf>, Vec<PathBuf>) {
        if !self.active() {
            return (Vec::new(), Vec::new());
        }
        let (mut read_only, pinned) = match &self.workspace {
            Some(w) => super::contain::project_places(w),
            None => (Vec::new(), Vec::new()),
        };
        read_only.extend(self.protected.iter().cloned());
        // A directory on PATH inside a writable root: what a command put
        // there would run later, outside any sandbox.
        let roots = self.writable_roots();
        if let Some(path) = std::env::var_os("PATH") {
            read_only.extend(
                std::env::split_paths(&path)
                    .filter(|d| d.is_absolute() && roots.iter().any(|r| d.starts_with(r))),
            );
        }
        (read_only, pinned)
    }

    fn writable_roots(&self) -> Vec<PathBuf> {
        let mut writable: Vec<PathBuf> = Self::temp_dirs();
        if self.mode == SandboxMode::WorkspaceWrite {
            writable.extend(self.writable.iter().cloned());
        }
        writable
    }

    /// Makes the command restrict and contain itself before it starts:
    /// its own namespaces with protected places read-only, Landlock, and a
    /// keeper that ties its life to the agent's (see `contain`).
    pub fn apply(&self, cmd: &mut tokio::process::Command) -> std::io::Result<()> {
        self.apply_reporting(cmd, -1)
    }

    /// [`Sandbox::apply`], with a descriptor (close-on-exec) for what the
    /// command's init reports (see `contain::Plan::fork_keeper`).
    pub fn apply_reporting(
        &self,
        cmd: &mut tokio::process::Command,
        report: std::os::fd::RawFd,
    ) -> std::io::Result<()> {
        for var in self
            .withheld_env
            .iter()
            .map(String::as_str)
            .chain(super::contain::IPC_ENV.iter().copied())
        {
            cmd.env_remove(var);
        }
        super::contain::lifeline();
        let (read_only, pinned) = self.read_only_places();
        let hidden = if self.active() {
            self.hidden.clone()
        } else {
            Vec::new()
        };
        let plan = super::contain::Plan::new(&read_only, &pinned, &hidden);
        if !plan.namespaces() {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                crate::log::log(
                    "user namespaces are unavailable here: .git/hooks, .git/config and .agent/ stay writable to commands (Landlock alone cannot make them read-only), and a process that leaves a command's process group is not followed; `agent doctor` shows what is enforced",
                )
            });
        }
        let mut ruleset = if self.active() {
            Some(self.ruleset()?)
        } else {
            None
        };
        // SAFETY: the closure runs in the child between fork and exec; it
        // only makes system calls (unshare, mount, prctl,
        // landlock_restrict_self, fork, wait) on data built in the parent.
        unsafe {
            cmd.pre_exec(move || {
                plan.enter()?;
                plan.fork_keeper(report, &mut || match ruleset.take() {
                    Some(r) => r.restrict_self().map(drop).map_err(std::io::Error::other),
                    None => Ok(()),
                })
            });
        }
        Ok(())
    }

    fn ruleset(&self) -> std::io::Result<landlock::RulesetCreated> {
        let abi = ABI::V6;
        let mut writable = self.writable_roots();
        writable.extend(DEVICES.iter().map(PathBuf::from));
        // Only roots that exist can be opened for a rule.
        writable.retain(|p| p.exists());
        // Scoped (ABI 6): no signal to a process outside this sandbox (the
        // agent, other commands' processes), no abstract unix socket outside it.
        Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessFs::from_all(abi))
            .and_then(|r| r.scope(Scope::Signal | Scope::AbstractUnixSocket))
            .and_then(|r| r.create())
            .and_then(|r| r.add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi))))
            .and_then(|r| r.add_rules(path_beneath_rules(&writable, AccessFs::from_all(abi))))
            .map_err(std::io::Error::other)
    }

    /// Whether a command in this sandbox could write `path` (as resolved).
    pub fn allows_write(&self, path: &Path) -> bool {
        if !self.active() {
            return true;
        }
        let path = crate::shell::paths::physical(path).unwrap_or_else(|| path.to_path_buf());
        // What commands find read-only (`.git/hooks`, `.git/config`,
        // `.agent/`...) is not the file tools' to change under --yolo either.
        let (read_only, _) = self.read_only_places();
        if read_only
            .iter()
            .map(|r| r.canonicalize().unwrap_or_else(|_| r.clone()))
            .any(|r| path.starts_with(r))
        {
            return false;
        }
        let mut roots: Vec<PathBuf> = Self::temp_dirs();
        roots.extend(DEVICES.iter().map(PathBuf::from));
        if self.mode == SandboxMode::WorkspaceWrite {
            roots.extend(self.writable.iter().cloned());
        }
        roots
            .iter()
            .map(|r| r.canonicalize().unwrap_or_else(|_| r.clone()))
            .any(|r| path.starts_with(r))
    }

    /// Why a change to `path` is refused under --yolo.
    pub fn refusal(&self, path: &Path) -> String {
        format!(
            "{} is outside what the OS sandbox ({} mode) lets any command write: {}. --yolo skips questions, never the sandbox. \
             Keep changes inside the project; the person can approve this change in an interactive session, add the directory to [sandbox] writable_roots in their config, or run with --sandbox off",
            path.display(),
            self.mode,
            if self.mode == SandboxMode::ReadOnly {
                "the temp directory"
            } else {
                "the project, the temp directory and tool caches"
            }
        )
    }

    /// A note for a failed command whose output looks like a refused write.
    pub fn explain_failure(&self, output: &str) -> Option<String> {
        if !self.active() {
            return None;
        }
        let refused = [
            "Permission denied",
            "Read-only file system",
            "Operation not permitted",
        ];
        if !refused.iter().any(|r| output.contains(r)) {
            return None;
        }
        Some(format!(
            "Note: this looks like the OS sandbox refusing a write. In {} mode, bash commands may write only {}. \
             Keep writes inside the project, or tell the person: they can add a directory to [sandbox] writable_roots in their config, or run with --sandbox off.",
            self.mode,
            if self.mode == SandboxMode::ReadOnly {
                "to the temp directory"
            } else {
                "inside the project, the temp directory and package caches (~/.cargo/registry, ~/.npm/_cacache, ~/.cache/pip, ...)"
            }
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::prerequisite;

    const NO_SCRATCH: &str = "there is no writable directory outside the temp directories";

    /// A scratch directory the sandbox does not allow: not under any temp
    /// directory (the checkout itself may be in /tmp).
    fn scratch_outside_temp() -> Option<tempfile::TempDir> {
        let temps = Sandbox::temp_dirs();
        let candidates = [
            std::env::var_os("HOME").map(std::path::PathBuf::from),
            Some("/root".into()),
            Some("/var/lib".into()),
            Some("/opt".into()),
        ];
        candidates
            .into_iter()
            .flatten()
            .filter(|c| !temps.iter().any(|t| c.starts_with(t)))
            .find_map(|c| tempfile::tempdir_in(c).ok())
    }

    #[tokio::test]
    async fn refuses_writes_outside_the_writable_roots() {
        if !prerequisite(Sandbox::supported(), "this kernel has no Landlock") {
            return;
        }
        let ws = tempfile::tempdir().unwrap();
        let Some(outside) = scratch_outside_temp() else {
            prerequisite(false, NO_SCRATCH);
            return;
        };
        let sb = Sandbox::new(SandboxMode::WorkspaceWrite, ws.path(), None, &[]);
        let target = outside.path().join("x");
        let mut cmd = tokio::process::Command::new("touch");
        cmd.arg(&target);
        sb.apply(&mut cmd).unwrap();
        let out = cmd.output().await.unwrap();
        assert!(!out.status.success(), "touch outside succeeded");
        assert!(String::from_utf8_lossy(&out.stderr).contains("Permission denied"));
        assert!(!target.exists());
        let mut cmd = tokio::process::Command::new("touch");
        cmd.arg(ws.path().join("y"));
        sb.apply(&mut cmd).unwrap();
        assert!(cmd.output().await.unwrap().status.success());
    }

    #[tokio::test]
    async fn caches_are_writable_but_not_where_programs_are_installed() {
        if !prerequisite(Sandbox::supported(), "this kernel has no Landlock") {
            return;
        }
        let ws = tempfile::tempdir().unwrap();
        let Some(home) = scratch_outside_temp() else {
            prerequisite(false, NO_SCRATCH);
            return;
        };
        for d in [".cargo/registry", ".cargo/bin", ".local/bin"] {
            std::fs::create_dir_all(home.path().join(d)).unwrap();
        }
        let sb = Sandbox::new(
            SandboxMode::WorkspaceWrite,
            ws.path(),
            Some(home.path()),
            &[],
        );
        let touch = |p: PathBuf| {
            let mut cmd = tokio::process::Command::new("touch");
            cmd.arg(p);
            sb.apply(&mut cmd).unwrap();
            cmd
        };
        let ok = touch(home.path().join(".cargo/registry/x"))
            .output()
            .await
            .unwrap();
        assert!(ok.status.success(), "{ok:?}");
        for bin in [".cargo/bin/cargo-evil", ".local/bin/ls"] {
            let out = touch(home.path().join(bin)).output().await.unwrap();
            assert!(!out.status.success(), "{bin} was writable");
            assert!(!home.path().join(bin).exists());
        }
        assert!(!sb.allows_write(&home.path().join(".cargo/bin/x")));
        assert!(sb.allows_write(&ws.path().join("x")));
    }

    #[tokio::test]
    async fn a_command_cannot_signal_processes_outside_its_sandbox() {
        if !prerequisite(
            Sandbox::abi() >= 6,
            &format!("Landlock ABI {} has no scopes", Sandbox::abi()),
        ) {
            return;
        }
        let ws = tempfile::tempdir().unwrap();
        let sb = Sandbox::new(SandboxMode::WorkspaceWrite, ws.path(), None, &[]);
        // A process outside: this test's own, and a sleeper it started.
        let mut outside = tokio::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = outside.id().unwrap();
        let mut cmd = tokio::process::Command::new("sh");
        cmd.arg("-c").arg(format!(
            "kill -9 {pid} {}; sleep 0 & kill $!",
            std::process::id()
        ));
        sb.apply(&mut cmd).unwrap();
        let out = cmd.output().await.unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        // Landlock refuses, or (in its own PID namespace) the process
        // cannot even be named.
        assert!(
            err.contains("Operation not permitted") || err.contains("No such process"),
            "{err}"
        );
        assert!(
            outside.try_wait().unwrap().is_none(),
            "the sleeper was killed"
        );
        outside.kill().await.unwrap();
    }
}
