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
    path_beneath_rules,
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

/// Tool caches under the home directory that builds write to.
const HOME_CACHES: &[&str] = &[
    ".cache",
    ".cargo",
    ".rustup",
    ".npm",
    ".pnpm-store",
    ".yarn",
    ".bun",
    ".deno",
    ".local/share/pnpm",
    "go",
    ".gradle",
    ".m2",
    ".nuget",
    ".cache/pip",
    ".local/share/virtualenvs",
    ".pyenv",
    ".sbt",
    ".ivy2",
    ".stack",
    ".cabal",
    ".ghcup",
];

/// Devices any command may write.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/tty",
    "/dev/full",
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
}

impl Sandbox {
    pub fn off() -> Sandbox {
        Sandbox {
            mode: SandboxMode::Off,
            writable: Vec::new(),
            withheld_env: Vec::new(),
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
            writable.extend(HOME_CACHES.iter().map(|c| h.join(c)));
        }
        writable.extend(extra.iter().cloned());
        Sandbox {
            mode,
            writable,
            withheld_env: Vec::new(),
        }
    }

    pub fn withholding(mut self, vars: &[String]) -> Sandbox {
        self.withheld_env = vars.to_vec();
        self
    }

    /// Whether this kernel enforces Landlock.
    pub fn supported() -> bool {
        // SAFETY: landlock_create_ruleset(NULL, 0, VERSION) only returns the ABI version.
        let abi = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<u8>(),
                0usize,
                1u32,
            )
        };
        abi >= 1
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

    /// Makes the command restrict itself before it starts.
    pub fn apply(&self, cmd: &mut tokio::process::Command) -> std::io::Result<()> {
        for var in &self.withheld_env {
            cmd.env_remove(var);
        }
        if !self.active() {
            return Ok(());
        }
        let abi = ABI::V5;
        let mut writable: Vec<PathBuf> = Self::temp_dirs();
        writable.extend(DEVICES.iter().map(PathBuf::from));
        if self.mode == SandboxMode::WorkspaceWrite {
            writable.extend(self.writable.iter().cloned());
        }
        // Only roots that exist can be opened for a rule.
        writable.retain(|p| p.exists());
        let ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessFs::from_all(abi))
            .and_then(|r| r.create())
            .and_then(|r| r.add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi))))
            .and_then(|r| r.add_rules(path_beneath_rules(&writable, AccessFs::from_all(abi))))
            .map_err(std::io::Error::other)?;
        let mut ruleset = Some(ruleset);
        // SAFETY: the closure runs in the child between fork and exec; it only
        // makes the prctl and landlock_restrict_self system calls on a ruleset
        // built (and its file descriptor opened) in the parent.
        unsafe {
            cmd.pre_exec(move || {
                if let Some(r) = ruleset.take() {
                    r.restrict_self().map_err(std::io::Error::other)?;
                }
                Ok(())
            });
        }
        Ok(())
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
                "inside the project, the temp directory and tool caches (~/.cache, ~/.cargo, ~/.npm, ...)"
            }
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        if !Sandbox::supported() {
            return;
        }
        let ws = tempfile::tempdir().unwrap();
        let Some(outside) = scratch_outside_temp() else {
            eprintln!("skipped: no writable directory outside the temp directories");
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
}
