//! Running one shell command as its own process group: standard input from
//! `/dev/null`, stdout and stderr through one pipe (so they keep their
//! arrival order) read concurrently (no deadlock at any output size), the
//! output capped keeping head and tail, and the whole group killed on
//! timeout, cancellation or when its job ends. The child is always reaped.

use std::collections::VecDeque;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::sync::watch;

use super::sandbox::Sandbox;

/// Bytes kept from the start and the end of a command's output.
pub const HEAD_BYTES: usize = 10_000;
pub const TAIL_BYTES: usize = 20_000;
/// After the shell exits, how long to wait for processes it left holding
/// the output open before stopping them.
const DRAIN_GRACE: Duration = Duration::from_millis(300);
/// Between SIGTERM and SIGKILL.
const KILL_GRACE: Duration = Duration::from_millis(500);

/// Output captured since the last [`Process::take_output`]: head and tail.
#[derive(Debug, Default)]
struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    cut: u64,
}

impl Capture {
    fn push(&mut self, mut data: &[u8]) {
        if self.head.len() < HEAD_BYTES {
            let n = (HEAD_BYTES - self.head.len()).min(data.len());
            self.head.extend_from_slice(&data[..n]);
            data = &data[n..];
        }
        self.tail.extend(data);
        let over = self.tail.len().saturating_sub(TAIL_BYTES);
        if over > 0 {
            self.tail.drain(..over);
            self.cut += over as u64;
        }
    }

    fn render(self) -> String {
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        if self.cut > 0 {
            out.push_str(&format!("\n… [{} bytes of output cut] …\n", self.cut));
        }
        let tail: Vec<u8> = self.tail.into();
        out.push_str(&String::from_utf8_lossy(&tail));
        out
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(c) => write!(f, "exit code {c}"),
            Exit::Signal(s) => write!(f, "killed by signal {s}"),
        }
    }
}

struct Shared {
    capture: Mutex<Capture>,
    total: Mutex<u64>,
}

/// A running (or finished) command.
pub struct Process {
    pgid: i32,
    /// It runs in its own PID namespace: when it ends, so does everything
    /// it started, in its group or not.
    contained: bool,
    /// Its init found processes still running after it ended (and the
    /// namespace ended them).
    leftovers: Arc<std::sync::atomic::AtomicBool>,
    shared: Arc<Shared>,
    exit: watch::Receiver<Option<Exit>>,
    eof: watch::Receiver<bool>,
}

/// How long `kill` waits to see that what it killed is gone.
const VERIFY_WAIT: Duration = Duration::from_secs(2);

/// What [`Process::kill`] found afterwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// The command and everything it started (its PID namespace) are gone.
    All,
    /// Its process group is gone; without namespaces, a process that left
    /// the group (`setsid`) cannot be followed.
    Group,
    /// Something was still there after SIGKILL and a wait.
    NotConfirmed,
    /// It never started.
    Unknown,
}

impl Stopped {
    /// "the command and everything it started were stopped", or what is
    /// true instead.
    pub fn describe(self) -> &'static str {
        match self {
            Stopped::All => "the command and everything it started were stopped",
            Stopped::Group => {
                "the command and its process group were stopped (this system has no user namespaces, so a process that left the group, e.g. with setsid, may still run)"
            }
            Stopped::NotConfirmed => {
                "agent sent SIGKILL to the command, but some of its processes were still there 2 s later"
            }
            Stopped::Unknown => "the command had not started",
        }
    }
}

/// The environment every command gets: nothing waits for a person.
const QUIET_ENV: &[(&str, &str)] = &[
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("GIT_EDITOR", "true"),
    ("EDITOR", "true"),
    ("VISUAL", "true"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("NO_COLOR", "1"),
    ("AGENT", "1"),
];

/// Longest command passed to bash as an argument (the kernel's limit for
/// one is 128 KiB, with its terminating NUL).
const MAX_ARGUMENT: usize = 100 * 1024;

/// The shell to run commands with: bash when present.
pub fn shell() -> &'static str {
    if Path::new("/bin/bash").exists() {
        "/bin/bash"
    } else {
        "/bin/sh"
    }
}

fn set_nonblocking(fd: &impl std::os::fd::AsRawFd) -> std::io::Result<()> {
    let fd = fd.as_raw_fd();
    // SAFETY: fcntl on a descriptor we own.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Plain data behind these locks stays consistent even after a panic.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Process {
    pub fn spawn(command: &str, cwd: &Path, sandbox: &Sandbox) -> std::io::Result<Process> {
        let (reader, writer) = std::io::pipe()?;
        let mut cmd = tokio::process::Command::new(shell());
        // The kernel refuses one argument over 128 KiB (E2BIG): a longer
        // command reaches bash through a pipe it inherits instead, with the
        // same sandbox and process group.
        let script = if command.len() > MAX_ARGUMENT {
            let (r, w) = std::io::pipe()?;
            let fd = std::os::fd::AsRawFd::as_raw_fd(&r);
            cmd.arg("-c").arg(format!(
                "__agent_command=$(cat <&{fd}) && exec {fd}<&- && eval \"$__agent_command\""
            ));
            // SAFETY: in the child between fork and exec, one fcntl on a
            // descriptor it inherited: only this command gets the pipe.
            unsafe {
                cmd.pre_exec(move || {
                    if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
            Some((r, w))
        } else {
            cmd.arg("-c").arg(command);
            None
        };
        cmd.current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(writer.try_clone()?)
            .stderr(writer)
            // Its own session and process group: `Sandbox::apply`.
            .kill_on_drop(false);
        for (k, v) in QUIET_ENV {
            cmd.env(k, v);
        }
        // What the command's init reports: leftovers, a killing signal.
        let (mut report_r, report_w) = std::io::pipe()?;
        sandbox.apply_reporting(&mut cmd, std::os::fd::AsRawFd::as_raw_fd(&report_w))?;
        let contained = super::contain::namespaces_available();
        let mut child = cmd.spawn()?;
        // `cmd` holds the parent's copies of the write end; drop it so EOF
        // arrives when the last child process closes its copy.
        drop(cmd);
        if let Some((r, mut w)) = script {
            drop(r);
            let text = command.to_string();
            // Blocks until bash has read it all (or exited: EPIPE).
            std::thread::spawn(move || {
                let _ = std::io::Write::write_all(&mut w, text.as_bytes());
            });
        }
        drop(report_w);
        let pgid = child.id().map(|p| p as i32).unwrap_or(0);
        let shared = Arc::new(Shared {
            capture: Mutex::new(Capture::default()),
            total: Mutex::new(0),
        });
        let (exit_tx, exit) = watch::channel(None);
        let (eof_tx, eof) = watch::channel(false);
        let leftovers = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let left = Arc::clone(&leftovers);
        tokio::spawn(async move {
            let status = child.wait().await;
            let mut exit = match status {
                Ok(s) => match (s.code(), std::os::unix::process::ExitStatusExt::signal(&s)) {
                    (Some(c), _) => Exit::Code(c),
                    (None, Some(sig)) => Exit::Signal(sig),
                    (None, None) => Exit::Code(-1),
                },
                Err(_) => Exit::Code(-1),
            };
            // Written before the init exited, so already in the pipe.
            let mut report = Vec::new();
            let _ = set_nonblocking(&report_r);
            let _ = std::io::Read::read_to_end(&mut report_r, &mut report);
            if report.contains(&b'L') {
                left.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            if let Some(i) = report.iter().position(|b| *b == b'S')
                && let Some(sig) = report.get(i + 1)
            {
                exit = Exit::Signal(i32::from(*sig));
            }
            let _ = exit_tx.send(Some(exit));
        });
        let reader_shared = Arc::clone(&shared);
        let fd: OwnedFd = reader.into();
        let mut pipe = tokio::net::unix::pipe::Receiver::from_owned_fd(fd)?;
        tokio::spawn(async move {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match pipe.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        lock(&reader_shared.capture).push(&buf[..n]);
                        *lock(&reader_shared.total) += n as u64;
                    }
                }
            }
            let _ = eof_tx.send(true);
        });
        Ok(Process {
            pgid,
            contained,
            leftovers,
            shared,
            exit,
            eof,
        })
    }

    /// Waits until the command exits (and its output is drained), or until
    /// `limit` passes; `None` means still running.
    pub async fn wait(&self, limit: Option<Duration>) -> Option<(Exit, bool)> {
        let mut exit = self.exit.clone();
        let done = async {
            let status = match exit.wait_for(Option::is_some).await {
                Ok(s) => s.clone().unwrap_or(Exit::Code(-1)),
                Err(_) => Exit::Code(-1),
            };
            let mut eof = self.eof.clone();
            let drained = tokio::time::timeout(DRAIN_GRACE, eof.wait_for(|e| *e))
                .await
                .is_ok();
            if !drained {
                // Something it started in the background still holds the
                // output open: stop the whole group (no orphans).
                self.kill().await;
            }
            let left = self.leftovers.load(std::sync::atomic::Ordering::Relaxed);
            (status, !drained || left)
        };
        match limit {
            Some(l) => tokio::time::timeout(l, done).await.ok(),
            None => Some(done.await),
        }
    }

    pub fn exit(&self) -> Option<Exit> {
        self.exit.borrow().clone()
    }

    /// SIGTERM to the whole group, then SIGKILL to whatever is left; then
    /// checks, and says what it found (see [`Stopped::describe`]).
    pub async fn kill(&self) -> Stopped {
        if self.pgid <= 0 {
            return Stopped::Unknown;
        }
        // SAFETY: kill(2) with a negative pid signals our child's process group.
        unsafe { libc::kill(-self.pgid, libc::SIGTERM) };
        let mut exit = self.exit.clone();
        let _ = tokio::time::timeout(KILL_GRACE, exit.wait_for(Option::is_some)).await;
        // SAFETY: as above; a group that is already gone makes this a no-op.
        unsafe { libc::kill(-self.pgid, libc::SIGKILL) };
        // The keeper is reaped only after the command, and (in its own PID
        // namespace) everything the command started, is gone.
        let reaped = tokio::time::timeout(VERIFY_WAIT, exit.wait_for(Option::is_some))
            .await
            .is_ok();
        let deadline = tokio::time::Instant::now() + VERIFY_WAIT;
        loop {
            // SAFETY: signal 0 only asks whether the group has members.
            let members = unsafe { libc::kill(-self.pgid, 0) } == 0;
            if !members && reaped {
                return if self.contained {
                    Stopped::All
                } else {
                    Stopped::Group
                };
            }
            if tokio::time::Instant::now() >= deadline {
                return Stopped::NotConfirmed;
            }
            // SAFETY: as above.
            unsafe { libc::kill(-self.pgid, libc::SIGKILL) };
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Whether the command exited and its output was read to the end.
    fn finished(&self) -> bool {
        *self.eof.borrow() && self.exit.borrow().is_some()
    }

    /// Kills the group without waiting (for `Drop` paths).
    pub fn kill_now(&self) {
        if self.finished() {
            // Its group is gone; the id may belong to someone else by now.
            return;
        }
        if self.pgid > 0 {
            // SAFETY: signals our child's process group.
            unsafe { libc::kill(-self.pgid, libc::SIGKILL) };
        }
    }

    /// Output since the last call, head and tail kept.
    pub fn take_output(&self) -> String {
        std::mem::take(&mut *lock(&self.shared.capture)).render()
    }

    pub fn total_bytes(&self) -> u64 {
        *lock(&self.shared.total)
    }
}

/// A process dropped while it may still run (a cancelled call, a job at
/// the end of a session) takes its whole group with it: no orphans.
impl Drop for Process {
    fn drop(&mut self) {
        self.kill_now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn contained() -> bool {
        crate::testing::prerequisite(
            crate::shell::Sandbox::supported() && crate::shell::contain::namespaces_available(),
            "there is no Landlock or no user namespaces here",
        )
    }

    #[tokio::test]
    async fn protected_places_stay_read_only_and_git_stays_put() {
        if !contained() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        for (f, text) in [
            (".git/hooks/keep", ""),
            (".git/config", "[core]\n"),
            (".agent/config.toml", "# mine\n"),
            (".gitmodules", ""),
        ] {
            std::fs::create_dir_all(ws.join(f).parent().unwrap()).unwrap();
            std::fs::write(ws.join(f), text).unwrap();
        }
        let sb = Sandbox::new(crate::shell::SandboxMode::WorkspaceWrite, &ws, None, &[]);
        let p = Process::spawn(
            "echo x > .git/hooks/pre-commit; echo y >> .git/config; echo z > .agent/config.toml; \
             echo w >> .gitmodules; mv .git .g2; rm -rf .git/hooks; touch .git/index.test && echo inside-git-ok",
            &ws,
            &sb,
        )
        .unwrap();
        p.wait(Some(Duration::from_secs(10))).await.unwrap();
        let out = p.take_output();
        assert!(out.contains("Read-only file system"), "{out}");
        assert!(
            out.contains("inside-git-ok"),
            "git's own files stay writable: {out}"
        );
        assert!(!ws.join(".git/hooks/pre-commit").exists());
        assert!(ws.join(".git/hooks/keep").exists());
        assert_eq!(
            std::fs::read_to_string(ws.join(".git/config")).unwrap(),
            "[core]\n"
        );
        assert_eq!(
            std::fs::read_to_string(ws.join(".agent/config.toml")).unwrap(),
            "# mine\n"
        );
        assert_eq!(std::fs::read_to_string(ws.join(".gitmodules")).unwrap(), "");
        assert!(!ws.join(".g2").exists());
    }

    #[tokio::test]
    async fn a_command_has_its_own_session_and_sees_no_one_elses_processes() {
        if !contained() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let records = tempfile::tempdir().unwrap();
        std::fs::write(records.path().join("session.json"), "secret").unwrap();
        let sb = Sandbox::new(
            crate::shell::SandboxMode::WorkspaceWrite,
            dir.path(),
            None,
            &[],
        )
        .hiding(vec![records.path().to_path_buf()]);
        let me = std::process::id();
        let p = Process::spawn(
            &format!(
                "sleep 0.3 & test -e /proc/{me} && echo sees-agent; ls {} ; exec 3</dev/tty && echo has-tty; wait",
                records.path().display()
            ),
            dir.path(),
            &sb,
        )
        .unwrap();
        // Its session is its own (no controlling terminal to type into).
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", p.pgid)).unwrap();
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .unwrap()
            .1
            .split_whitespace()
            .collect();
        assert_eq!(fields[3], p.pgid.to_string(), "session id: {stat}");
        p.wait(Some(Duration::from_secs(10))).await.unwrap();
        let out = p.take_output();
        assert!(!out.contains("sees-agent"), "{out}");
        assert!(!out.contains("session.json"), "{out}");
        assert!(!out.contains("has-tty"), "{out}");
    }

    #[tokio::test]
    async fn the_persons_session_servers_are_out_of_reach() {
        if !contained() {
            return;
        }
        // SAFETY: getuid cannot fail.
        let uid = unsafe { libc::getuid() };
        let tmux = PathBuf::from(format!("/tmp/tmux-{uid}"));
        if tmux.exists() {
            eprintln!("skipped: a real tmux server directory is there");
            return;
        }
        std::fs::create_dir(&tmux).unwrap();
        std::fs::write(tmux.join("default"), "").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let sb = Sandbox::new(
            crate::shell::SandboxMode::WorkspaceWrite,
            dir.path(),
            None,
            &[],
        );
        let p = Process::spawn(
            &format!("ls -A {}; echo \"tmux=[$TMUX]\"", tmux.display()),
            dir.path(),
            &sb,
        );
        let out = match p {
            Ok(p) => {
                p.wait(Some(Duration::from_secs(10))).await;
                p.take_output()
            }
            Err(e) => e.to_string(),
        };
        std::fs::remove_dir_all(&tmux).unwrap();
        assert_eq!(out, "tmux=[]\n");
    }

    #[tokio::test]
    async fn what_a_command_leaves_running_ends_with_it() {
        if !contained() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let marker = format!("{}.{}", 400_000 + std::process::id() % 500_000, 17);
        let sb = Sandbox::new(
            crate::shell::SandboxMode::WorkspaceWrite,
            dir.path(),
            None,
            &[],
        );
        let p = Process::spawn(
            &format!("setsid sleep {marker} & nohup sleep {marker} >/dev/null 2>&1 & echo started"),
            dir.path(),
            &sb,
        )
        .unwrap();
        let (exit, leftovers) = p.wait(Some(Duration::from_secs(10))).await.unwrap();
        assert_eq!(exit, Exit::Code(0));
        assert!(leftovers, "the leftovers were not reported");
        let alive = std::process::Command::new("pgrep")
            .args(["-f", &format!("sleep {marker}")])
            .status()
            .unwrap()
            .success();
        assert!(!alive, "a process the command left is still running");
    }

    #[test]
    fn capture_keeps_head_and_tail() {
        let mut c = Capture::default();
        c.push(&vec![b'a'; HEAD_BYTES]);
        c.push(&[b'b'; 5]);
        c.push(&vec![b'c'; TAIL_BYTES]);
        let out = c.render();
        assert!(out.starts_with(&"a".repeat(HEAD_BYTES)));
        assert!(out.contains("\n… [5 bytes of output cut] …\n"));
        assert!(out.ends_with(&"c".repeat(TAIL_BYTES)));
    }
}
