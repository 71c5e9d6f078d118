//! Running one hook command: `bash -c COMMAND` in its own process group,
//! the event as JSON on standard input, stdout and stderr read concurrently
//! (a chatty hook cannot deadlock), and the whole group killed when the
//! timeout passes or the turn is cancelled.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// Bytes kept of each output stream; the rest is read and dropped.
const OUTPUT_CAP: usize = 1 << 20;
/// After the hook exits, how long what it left running may hold its output.
const DRAIN_GRACE: Duration = Duration::from_millis(300);

pub(super) enum Ran {
    Exited {
        code: Option<i32>,
        stdout: String,
        stderr: String,
    },
    TimedOut,
    Cancelled,
    /// It could not be started.
    Failed(String),
}

pub(super) async fn run(
    command: &str,
    cwd: &Path,
    input: &[u8],
    env: &[(&str, String)],
    sandbox: &crate::shell::Sandbox,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Ran {
    let mut cmd = tokio::process::Command::new(crate::shell::run::shell());
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    // A hook runs in the project (its scripts, a `cargo fmt` the project
    // can alias): in the sandbox like a command, in its own session and
    // process group, without the provider keys.
    if let Err(e) = sandbox.apply(&mut cmd) {
        return Ran::Failed(format!("cannot sandbox it: {e}"));
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Ran::Failed(format!("cannot start it: {e}")),
    };
    let pid = child.id();
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Ran::Failed("its pipes could not be opened".into());
    };
    let input = input.to_vec();
    let (out_buf, err_buf) = (Buf::default(), Buf::default());
    // Readers fill shared buffers, so what a hook printed counts even if
    // something it left behind holds the pipe open; they are aborted on
    // every way out, so none outlives the call.
    let out = tokio::spawn(read(stdout, Arc::clone(&out_buf)));
    let err = tokio::spawn(read(stderr, Arc::clone(&err_buf)));
    let _readers = AbortOnDrop(vec![out.abort_handle(), err.abort_handle()]);
    let work = async {
        // A hook that never reads its input must not block us: the write
        // runs beside the wait, and a closed pipe is not an error.
        let write = async move {
            let _ = stdin.write_all(&input).await;
            drop(stdin);
        };
        let (_, status) = tokio::join!(write, child.wait());
        let drained = async {
            let _ = out.await;
            let _ = err.await;
        };
        tokio::pin!(drained);
        // Whatever it left running must not hold the pipes open: its group
        // is killed; a process that left the group is given up on.
        if tokio::time::timeout(DRAIN_GRACE, &mut drained)
            .await
            .is_err()
        {
            kill_group(pid);
            let _ = tokio::time::timeout(DRAIN_GRACE, &mut drained).await;
        }
        status
    };
    let outcome = tokio::select! {
        r = tokio::time::timeout(timeout, work) => r.ok(),
        _ = cancel.cancelled() => {
            kill_group(pid);
            return Ran::Cancelled;
        }
    };
    match outcome {
        Some(Ok(status)) => Ran::Exited {
            code: status.code(),
            stdout: text(&out_buf),
            stderr: text(&err_buf),
        },
        Some(Err(e)) => Ran::Failed(format!("waiting for it failed: {e}")),
        None => {
            kill_group(pid);
            Ran::TimedOut
        }
    }
}

type Buf = Arc<Mutex<Vec<u8>>>;

struct AbortOnDrop(Vec<tokio::task::AbortHandle>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        for h in &self.0 {
            h.abort();
        }
    }
}

fn text(buf: &Buf) -> String {
    String::from_utf8_lossy(&buf.lock().unwrap_or_else(|p| p.into_inner())).into_owned()
}

/// Reads to the end, keeping the first [`OUTPUT_CAP`] bytes.
async fn read(mut stream: impl AsyncRead + Unpin, buf: Buf) {
    let mut chunk = [0u8; 8192];
    while let Ok(n @ 1..) = stream.read(&mut chunk).await {
        let mut b = buf.lock().unwrap_or_else(|p| p.into_inner());
        let room = OUTPUT_CAP.saturating_sub(b.len());
        b.extend_from_slice(&chunk[..n.min(room)]);
    }
}

/// The hook and everything it started. The child itself is also killed
/// and reaped when its handle drops (`kill_on_drop`).
fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: killpg only sends a signal; the group id is our child's
        // pid, which it leads (its own session) and which we have not reaped.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
}
