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
    shared: Arc<Shared>,
    exit: watch::Receiver<Option<Exit>>,
    eof: watch::Receiver<bool>,
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

/// The shell to run commands with: bash when present.
pub fn shell() -> &'static str {
    if Path::new("/bin/bash").exists() {
        "/bin/bash"
    } else {
        "/bin/sh"
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Plain data behind these locks stays consistent even after a panic.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Process {
    pub fn spawn(command: &str, cwd: &Path, sandbox: &Sandbox) -> std::io::Result<Process> {
        let (reader, writer) = std::io::pipe()?;
        let mut cmd = tokio::process::Command::new(shell());
        cmd.arg("-c")
            .arg(command)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(writer.try_clone()?)
            .stderr(writer)
            .process_group(0)
            .kill_on_drop(false);
        for (k, v) in QUIET_ENV {
            cmd.env(k, v);
        }
        sandbox.apply(&mut cmd)?;
        let mut child = cmd.spawn()?;
        // `cmd` holds the parent's copies of the write end; drop it so EOF
        // arrives when the last child process closes its copy.
        drop(cmd);
        let pgid = child.id().map(|p| p as i32).unwrap_or(0);
        let shared = Arc::new(Shared {
            capture: Mutex::new(Capture::default()),
            total: Mutex::new(0),
        });
        let (exit_tx, exit) = watch::channel(None);
        let (eof_tx, eof) = watch::channel(false);
        tokio::spawn(async move {
            let status = child.wait().await;
            let exit = match status {
                Ok(s) => match (s.code(), std::os::unix::process::ExitStatusExt::signal(&s)) {
                    (Some(c), _) => Exit::Code(c),
                    (None, Some(sig)) => Exit::Signal(sig),
                    (None, None) => Exit::Code(-1),
                },
                Err(_) => Exit::Code(-1),
            };
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
            (status, !drained)
        };
        match limit {
            Some(l) => tokio::time::timeout(l, done).await.ok(),
            None => Some(done.await),
        }
    }

    pub fn exit(&self) -> Option<Exit> {
        self.exit.borrow().clone()
    }

    /// SIGTERM to the whole group, then SIGKILL to whatever is left.
    pub async fn kill(&self) {
        if self.pgid <= 0 {
            return;
        }
        // SAFETY: kill(2) with a negative pid signals our child's process group.
        unsafe { libc::kill(-self.pgid, libc::SIGTERM) };
        let mut exit = self.exit.clone();
        let _ = tokio::time::timeout(KILL_GRACE, exit.wait_for(Option::is_some)).await;
        // SAFETY: as above; a group that is already gone makes this a no-op.
        unsafe { libc::kill(-self.pgid, libc::SIGKILL) };
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
