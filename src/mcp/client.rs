//! One connection to an MCP server. A stdio server is our own child in its
//! own process group (stdin and stdout are the protocol, stderr goes to
//! `<data_dir>/mcp-<name>.log`); the group is killed when the connection
//! is dropped or the server exits, so nothing it started is left behind.
//! An HTTP server is reached with rmcp's streamable HTTP client over the
//! same reqwest and rustls as the LLM clients.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    JsonObject, Tool,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceError, ServiceExt};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::text::error_chain;

use super::ServerConfig;

/// Lines of a server's stderr quoted when it dies.
const TAIL_LINES: usize = 10;
const TAIL_BYTES: u64 = 4096;

/// A stdio server's process group.
pub(super) struct Process {
    pgid: i32,
    /// How it exited, once it did.
    exit: watch::Receiver<Option<String>>,
    log: PathBuf,
    /// Where this run's part of the log starts.
    log_start: u64,
}

impl Process {
    fn spawn(
        name: &str,
        config: &ServerConfig,
        command: &str,
        workspace: &Path,
        log_dir: &Path,
    ) -> Result<
        (
            Process,
            tokio::process::ChildStdout,
            tokio::process::ChildStdin,
        ),
        String,
    > {
        let _ = std::fs::create_dir_all(log_dir);
        let log = log_dir.join(format!("mcp-{name}.log"));
        // The server's stderr goes to its log, never to the screen.
        let (stderr, log_start) = match std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
        {
            Ok(mut f) => {
                let _ = writeln!(f, "--- agent: starting {}", config.describe());
                let start = f.metadata().map(|m| m.len()).unwrap_or(0);
                (Stdio::from(f), start)
            }
            Err(_) => (Stdio::null(), 0),
        };
        let mut cmd = tokio::process::Command::new(command);
        for var in &config.withheld_env {
            cmd.env_remove(var);
        }
        let mut child = cmd
            .args(&config.args)
            .envs(&config.env)
            .current_dir(workspace)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .process_group(0)
            .kill_on_drop(false)
            .spawn()
            .map_err(|e| format!("cannot run `{command}`: {e}"))?;
        let pgid = child.id().map_or(0, |p| p as i32);
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("no pipes to the server".into());
        };
        let (tx, exit) = watch::channel(None);
        tokio::spawn(async move {
            let how = match child.wait().await {
                Ok(status) => match (
                    status.code(),
                    std::os::unix::process::ExitStatusExt::signal(&status),
                ) {
                    (Some(code), _) => format!("exit code {code}"),
                    (None, Some(sig)) => format!("killed by signal {sig}"),
                    (None, None) => "exited".to_string(),
                },
                Err(e) => format!("lost ({e})"),
            };
            // Whatever it started in its group goes with it.
            if pgid > 0 {
                // SAFETY: kill(2) with a negative pid signals our child's group.
                unsafe { libc::kill(-pgid, libc::SIGKILL) };
            }
            let _ = tx.send(Some(how));
        });
        Ok((
            Process {
                pgid,
                exit,
                log,
                log_start,
            },
            stdout,
            stdin,
        ))
    }

    /// How it exited, if it did.
    pub fn exited(&self) -> Option<String> {
        self.exit.borrow().clone()
    }

    /// Says how it exited, once it did.
    pub fn exit_watch(&self) -> watch::Receiver<Option<String>> {
        self.exit.clone()
    }

    /// Waits until it exits; how it did.
    pub async fn exit(&self) -> String {
        let mut exit = self.exit.clone();
        match exit.wait_for(Option::is_some).await {
            Ok(how) => how.clone().unwrap_or_default(),
            // The watcher is gone only when the runtime shuts down.
            Err(_) => "lost".into(),
        }
    }

    /// Waits up to `limit` for the exit.
    pub async fn wait_exit(&self, limit: Duration) -> Option<String> {
        tokio::time::timeout(limit, self.exit()).await.ok()
    }

    /// Kills the group now and waits (briefly) until it is reaped.
    pub async fn kill(&self) {
        self.kill_now();
        let _ = self.wait_exit(Duration::from_secs(1)).await;
    }

    fn kill_now(&self) {
        // An exited group may have had its id reused: leave it alone.
        if self.pgid > 0 && self.exited().is_none() {
            // SAFETY: kill(2) with a negative pid signals our child's group.
            unsafe { libc::kill(-self.pgid, libc::SIGKILL) };
        }
    }

    /// The last lines this run wrote to stderr, and the log's path.
    pub fn stderr_tail(&self) -> (Vec<String>, &Path) {
        let mut text = String::new();
        if let Ok(mut f) = std::fs::File::open(&self.log) {
            let len = f.metadata().map(|m| m.len()).unwrap_or(0);
            let from = self.log_start.max(len.saturating_sub(TAIL_BYTES));
            if f.seek(SeekFrom::Start(from)).is_ok() {
                let mut bytes = Vec::new();
                let _ = f.read_to_end(&mut bytes);
                text = String::from_utf8_lossy(&bytes).into_owned();
            }
        }
        let lines: Vec<String> = text
            .lines()
            .map(str::trim_end)
            .filter(|l| !l.is_empty())
            .map(|l| crate::text::cut_line(l, 300))
            .collect();
        let skip = lines.len().saturating_sub(TAIL_LINES);
        (lines[skip..].to_vec(), &self.log)
    }
}

/// A connection dropped while the server may run takes its group with it.
impl Drop for Process {
    fn drop(&mut self) {
        self.kill_now();
    }
}

/// Why a call produced no result.
pub(super) enum CallError {
    Cancelled,
    TimedOut,
    /// The server answered with a protocol error (unknown tool, bad arguments).
    Refused(String),
    /// The connection is gone (the process exited, the HTTP session broke).
    Lost(String),
}

pub(super) struct Connection {
    service: RunningService<RoleClient, ClientConfig>,
    pub tools: Vec<Tool>,
    pub instructions: Option<String>,
    /// The child process of a stdio server.
    pub process: Option<Process>,
}

fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("agent", env!("CARGO_PKG_VERSION")),
    )
}

impl Connection {
    /// Starts (or reaches) the server, shakes hands and lists its tools.
    /// Dropping the future on a timeout kills what it started.
    pub async fn open(
        name: &str,
        config: &ServerConfig,
        workspace: &Path,
        log_dir: &Path,
    ) -> Result<Connection, String> {
        let (service, process) = match (&config.command, &config.url) {
            (Some(command), _) => {
                let (process, stdout, stdin) =
                    Process::spawn(name, config, command, workspace, log_dir)?;
                let service = tokio::select! {
                    s = client_config().serve((stdout, stdin)) => s,
                    how = process.exit() => return Err(exit_reason(&process, Some(&how))),
                };
                match service {
                    Ok(s) => (s, Some(process)),
                    Err(e) => {
                        let how = process.wait_exit(Duration::from_millis(500)).await;
                        return Err(match how {
                            Some(how) => exit_reason(&process, Some(&how)),
                            None => format!("the handshake failed: {e}"),
                        });
                    }
                }
            }
            (None, Some(url)) => {
                let mut headers = HashMap::new();
                for (k, v) in &config.headers {
                    let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
                        .map_err(|e| format!("header `{k}`: {e}"))?;
                    let value =
                        reqwest::header::HeaderValue::from_str(&expand_env(v, &config.sealed_env)?)
                            .map_err(|e| format!("header `{k}`: {e}"))?;
                    headers.insert(name, value);
                }
                crate::tls::install();
                let transport = StreamableHttpClientTransport::<reqwest::Client>::from_config(
                    StreamableHttpClientTransportConfig::with_uri(url.as_str())
                        .custom_headers(headers),
                );
                let service = client_config()
                    .serve(transport)
                    .await
                    .map_err(|e| format!("cannot reach {url}: {}", readable(&error_chain(&e))))?;
                (service, None)
            }
            (None, None) => return Err("neither `command` nor `url` is set".into()),
        };
        let info = service.peer_info();
        let instructions = info
            .as_ref()
            .and_then(|i| i.instructions.clone())
            .filter(|i| !i.trim().is_empty());
        // A server without the tools capability (prompts or resources only)
        // has none to offer.
        let tools = if info.is_some_and(|i| i.capabilities.tools.is_none()) {
            Vec::new()
        } else {
            service
                .list_all_tools()
                .await
                .map_err(|e| format!("listing its tools failed: {}", readable(&e.to_string())))?
        };
        Ok(Connection {
            service,
            tools,
            instructions,
            process,
        })
    }

    /// Whether it can still take calls, as far as we know.
    pub fn alive(&self) -> bool {
        !self.service.is_closed() && self.process.as_ref().is_none_or(|p| p.exited().is_none())
    }

    /// Calls `tool`; the call is abandoned (and the server told so) on
    /// timeout or cancellation.
    pub async fn call(
        &self,
        tool: &str,
        args: JsonObject,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult, CallError> {
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = Some(args);
        let call = tokio::time::timeout(timeout, self.service.call_tool(params));
        let died = async {
            match &self.process {
                Some(p) => p.exit().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(CallError::Cancelled),
            how = died => Err(CallError::Lost(how)),
            r = call => match r {
                Err(_) => Err(CallError::TimedOut),
                Ok(Ok(result)) => Ok(result),
                Ok(Err(ServiceError::McpError(e))) => Err(CallError::Refused(e.message.to_string())),
                Ok(Err(e)) => Err(CallError::Lost(readable(&e.to_string()))),
            },
        }
    }

    /// Closes the session: stdin closed (a stdio server exits), then the
    /// group killed if it has not exited within a second.
    pub async fn close(&self) {
        self.service.cancellation_token().cancel();
        if let Some(p) = &self.process
            && p.wait_exit(Duration::from_secs(1)).await.is_none()
        {
            p.kill().await;
        }
    }
}

/// "exited (exit code 3)" with the last lines of its stderr.
pub(super) fn exit_reason(process: &Process, how: Option<&str>) -> String {
    let mut out = format!("it exited ({})", how.unwrap_or("exited"));
    let (tail, log) = process.stderr_tail();
    if tail.is_empty() {
        out.push_str(&format!("; it wrote nothing to stderr ({})", log.display()));
    } else {
        out.push_str(&format!(
            ". The end of its stderr ({}):\n{}",
            log.display(),
            tail.iter()
                .map(|l| format!("  {l}"))
                .collect::<Vec<_>>()
                .join("\n")
        ));
    }
    out
}

/// `${NAME}` in a header value is the environment variable NAME, unless
/// NAME is `sealed` (a provider key, in a server a project defined).
fn expand_env(value: &str, sealed: &[String]) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("`{value}` opens `${{` without a closing `}}`"));
        };
        let name = &after[..end];
        if sealed.iter().any(|s| s == name) {
            return Err(format!(
                "the header uses ${{{name}}}, your provider key, in a server the project defined; only a server in your own config can send it"
            ));
        }
        let v = std::env::var(name).map_err(|_| {
            format!("the environment variable {name} (used in a header) is not set")
        })?;
        out.push_str(&v);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// rmcp's transport errors name the worker's Rust type
/// ("Transport [rmcp::transport::worker::…] error: …"); people need the rest.
fn readable(message: &str) -> String {
    match message.rfind("] error: ") {
        Some(i) => message[i + "] error: ".len()..].to_string(),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transport_type_names_are_left_out() {
        assert_eq!(
            readable(
                "Send message error Transport [rmcp::transport::worker::WorkerTransport<X<y::Z>>] error: Client error: refused"
            ),
            "Client error: refused"
        );
        assert_eq!(readable("plain"), "plain");
    }

    #[test]
    fn header_values_expand_the_environment() {
        // PATH is set in every test environment.
        let path = std::env::var("PATH").unwrap();
        assert_eq!(
            expand_env("a ${PATH} b", &[]).unwrap(),
            format!("a {path} b")
        );
        assert_eq!(expand_env("plain", &[]).unwrap(), "plain");
        assert!(
            expand_env("${AGENT_TEST_SURELY_UNSET_VAR}", &[])
                .unwrap_err()
                .contains("AGENT_TEST_SURELY_UNSET_VAR")
        );
        assert!(expand_env("${OPEN", &[]).is_err());
        let e = expand_env("Bearer ${PATH}", &["PATH".into()]).unwrap_err();
        assert!(e.contains("only a server in your own config"), "{e}");
    }
}
