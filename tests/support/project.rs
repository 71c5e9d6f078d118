//! A temporary project and agent home, and running the real `agent` binary in
//! it against the mock LLM server, with a clean environment.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use super::mock_llm::{MockLlm, Recorded, Reply, Step, call};

/// Which wire protocol a test drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    OpenAi,
    Anthropic,
}

pub const BOTH: [Wire; 2] = [Wire::OpenAi, Wire::Anthropic];

/// Fast retries and a short idle timeout, so fault tests take milliseconds.
pub const FAST_LLM: &str =
    "[llm]\nretry_base_ms = 5\nretry_max_secs = 0.05\nidle_timeout_secs = 1.0\nmax_retries = 3\n";

pub struct Project {
    dir: tempfile::TempDir,
    home: tempfile::TempDir,
    scratch: tempfile::TempDir,
}

impl Project {
    pub fn new() -> Project {
        let p = Project {
            dir: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
            scratch: tempfile::tempdir().unwrap(),
        };
        p.user_config(FAST_LLM);
        p
    }

    /// The project root (canonical).
    pub fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// A directory outside the project and agent's home, where hooks and
    /// commands may leave marks (agent's home is read-only to them).
    #[allow(dead_code)]
    pub fn scratch(&self) -> &Path {
        self.scratch.path()
    }

    pub fn file(&self, rel: &str, content: &str) -> &Project {
        let path = self.dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
        self
    }

    /// Replaces the user config file (`$AGENT_HOME/config.toml`).
    pub fn user_config(&self, toml: &str) {
        std::fs::write(self.home.path().join("config.toml"), toml).unwrap();
    }

    /// `agent` with a clean environment: only AGENT_HOME, HOME and PATH.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_agent"));
        cmd.current_dir(self.dir.path())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("AGENT_HOME", self.home.path())
            .stdin(Stdio::null());
        cmd
    }

    /// `agent -p PROMPT` against `mock` over `wire`, with that vendor's key set.
    pub fn run(&self, mock: &MockLlm, wire: Wire, prompt: &str, extra: &[&str]) -> Run {
        Run::of(
            self.command_for(mock, wire, prompt, extra)
                .output()
                .unwrap(),
        )
    }

    /// The command [`Project::run`] runs.
    pub fn command_for(&self, mock: &MockLlm, wire: Wire, prompt: &str, extra: &[&str]) -> Command {
        let mut cmd = self.command();
        match wire {
            Wire::OpenAi => cmd
                .args(["--provider", "openai", "--base-url", &mock.openai_base()])
                .env("OPENAI_API_KEY", "sk-test"),
            Wire::Anthropic => cmd
                .args([
                    "--provider",
                    "anthropic",
                    "--base-url",
                    &mock.anthropic_base(),
                ])
                .env("ANTHROPIC_API_KEY", "ak-test"),
        };
        cmd.args(["--model", "mock-1", "-p", prompt]).args(extra);
        cmd
    }
}

#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn of(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    pub fn assert_ok(&self) -> &Run {
        assert_eq!(
            self.code, 0,
            "agent failed.\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// stdout as JSON lines.
    pub fn json_lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// A stream-json run's lines with each `stream_event` (from
    /// `--include-partial-messages`) replaced by the event it carries.
    pub fn events(&self) -> Vec<Value> {
        self.json_lines()
            .into_iter()
            .map(|l| {
                if l["type"] == "stream_event" {
                    l["event"].clone()
                } else {
                    l
                }
            })
            .collect()
    }
}

/// A tool result as the model received it.
#[derive(Debug, Clone, PartialEq)]
pub struct SentResult {
    pub call_id: String,
    pub content: String,
    pub is_error: bool,
}

/// The tool results carried by the newest user turn of a recorded request,
/// read from either wire format. (OpenAI has no error flag: `is_error` is
/// false there.)
pub fn sent_results(r: &Recorded) -> Vec<SentResult> {
    let messages = r.body["messages"].as_array().expect("messages");
    if r.path.ends_with("/chat/completions") {
        let tail: Vec<&Value> = messages
            .iter()
            .rev()
            .take_while(|m| m["role"] != "assistant")
            .collect();
        tail.into_iter()
            .rev()
            .filter(|m| m["role"] == "tool")
            .map(|m| SentResult {
                call_id: m["tool_call_id"].as_str().unwrap().to_string(),
                content: m["content"].as_str().unwrap().to_string(),
                is_error: false,
            })
            .collect()
    } else {
        let last = messages.last().expect("a message");
        last["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["type"] == "tool_result")
            .map(|b| SentResult {
                call_id: b["tool_use_id"].as_str().unwrap().to_string(),
                content: b["content"].as_str().unwrap().to_string(),
                is_error: b["is_error"].as_bool().unwrap_or(false),
            })
            .collect()
    }
}

/// The contents of the results, in order.
pub fn result_texts(r: &Recorded) -> Vec<String> {
    sent_results(r).into_iter().map(|s| s.content).collect()
}

/// `agent -p go` for rounds of one tool call each, then a final answer;
/// returns the mock and each call's result as the model received it.
pub fn rounds(
    p: &Project,
    wire: Wire,
    calls: Vec<(&str, Value)>,
    flags: &[&str],
) -> (MockLlm, Vec<String>) {
    rounds_with_env(p, wire, calls, flags, &[])
}

/// [`rounds`] with more environment variables for the run.
pub fn rounds_with_env(
    p: &Project,
    wire: Wire,
    calls: Vec<(&str, Value)>,
    flags: &[&str],
    env: &[(String, std::ffi::OsString)],
) -> (MockLlm, Vec<String>) {
    let n = calls.len();
    let mut script: Vec<Step> = calls
        .into_iter()
        .enumerate()
        .map(|(i, (name, args))| {
            Step::Reply(Reply::tools(vec![call(&format!("c{i}"), name, args)]))
        })
        .collect();
    script.push(Step::Reply(Reply::text("done")));
    let mock = MockLlm::start(script);
    let mut cmd = p.command_for(&mock, wire, "go", flags);
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    Run::of(cmd.output().unwrap()).assert_ok();
    let results = (1..=n)
        .map(|i| result_texts(&mock.requests()[i]).remove(0))
        .collect();
    (mock, results)
}
