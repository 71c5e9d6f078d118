//! Running one hook command: `bash -c COMMAND` in its own process group,
//! the event as JSON on standard input, stdout and stderr read concurrently
//! (a chatty hook cannot deadlock), and the whole group killed when the
//! timeout passes or the turn is cancelled.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// Bytes kept of each output stream; the rest is read and dropped.
const OUTPUT_CAP: u64 = 1 << 20;
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
        .process_group(0)
        .kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
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
    let work = async {
        // A hook that never reads its input must not block us: the write
        // runs beside the reads, and a closed pipe is not an error.
        let write = async move {
            let _ = stdin.write_all(&input).await;
            drop(stdin);
        };
        let out = tokio::spawn(read(stdout));
        let err = tokio::spawn(read(stderr));
        let (_, status) = tokio::join!(write, child.wait());
        // Whatever it left running must not hold the pipes open.
        let outputs = async { (out.await.unwrap_or_default(), err.await.unwrap_or_default()) };
        tokio::pin!(outputs);
        let (out, err) = match tokio::time::timeout(DRAIN_GRACE, &mut outputs).await {
            Ok(o) => o,
            Err(_) => {
                kill_group(pid);
                outputs.await
            }
        };
        (out, err, status)
    };
    let outcome = tokio::select! {
        r = tokio::time::timeout(timeout, work) => r.ok(),
        _ = cancel.cancelled() => {
            kill_group(pid);
            return Ran::Cancelled;
        }
    };
    match outcome {
        Some((stdout, stderr, Ok(status))) => Ran::Exited {
            code: status.code(),
            stdout,
            stderr,
        },
        Some((_, _, Err(e))) => Ran::Failed(format!("waiting for it failed: {e}")),
        None => {
            kill_group(pid);
            Ran::TimedOut
        }
    }
}

async fn read(stream: impl AsyncRead + Unpin) -> String {
    let mut kept = Vec::new();
    let mut limited = stream.take(OUTPUT_CAP);
    let _ = limited.read_to_end(&mut kept).await;
    let _ = tokio::io::copy(&mut limited.into_inner(), &mut tokio::io::sink()).await;
    String::from_utf8_lossy(&kept).into_owned()
}

/// The hook and everything it started. The child itself is also killed
/// and reaped when its handle drops (`kill_on_drop`).
fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: killpg only sends a signal; the group id is our child's
        // pid, which it leads (process_group(0)) and which we have not reaped.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
}
