//! MCP client: servers from the user's config (`[mcp.<name>]`, stdio or
//! streamable HTTP) whose tools join the session's Surface as
//! `mcp_<server>_<tool>` and go through the permission gate like any other.
//!
//! - `client`: one connection (the child process and its group, or HTTP),
//!   the handshake, listing and calling tools, the stderr tail.
//! - `manager`: every configured server, started in the background, waited
//!   for by calls, restarted on the next use after it dies.
//! - `tool`: a server's tool as an [`ExternalTool`](crate::tools::ExternalTool):
//!   facts from its annotations, results as text.
//!
//! A project's `.agent/config.toml` never adds servers (`config/mod.rs`): a
//! cloned repository must not start programs on its own.

mod client;
mod manager;
mod tool;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

pub use manager::McpManager;

/// How long a server may take to start, unless configured.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one tool call may take, unless configured.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);

/// A server as configured (`[mcp.<name>]`): `command` (stdio) or `url`
/// (streamable HTTP).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// The program of a stdio server.
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment of a stdio server.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The agent's own provider keys, not passed on unless named in `env`
    /// (filled in when the config loads).
    #[serde(skip)]
    pub withheld_env: Vec<String>,
    /// Variables a header may not name (`${OPENAI_API_KEY}`): the provider
    /// keys, in a server the project's config defined.
    #[serde(skip)]
    pub sealed_env: Vec<String>,
    /// The endpoint of a streamable HTTP server.
    pub url: Option<String>,
    /// HTTP headers; `${NAME}` in a value is the environment variable NAME.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(default = "yes")]
    pub enabled: bool,
    pub startup_timeout_secs: Option<f64>,
    pub tool_timeout_secs: Option<f64>,
    /// Only these tools (names as the server gives them).
    pub enabled_tools: Option<Vec<String>>,
    /// Never these tools.
    #[serde(default)]
    pub disabled_tools: Vec<String>,
}

fn yes() -> bool {
    true
}

impl ServerConfig {
    /// Checks a server entry; `Err((key, message))` names the bad key.
    pub fn validate(&self, name: &str) -> Result<(), (String, String)> {
        let bad = |key: &str, message: String| Err((key.to_string(), message));
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return bad(
                "",
                format!(
                    "the server name `{name}` may only use letters, digits, `_` and `-` (it becomes part of tool names: mcp_<server>_<tool>)"
                ),
            );
        }
        match (&self.command, &self.url) {
            (Some(_), Some(_)) => {
                return bad(
                    "url",
                    "set either `command` (a stdio server) or `url` (an HTTP server), not both"
                        .into(),
                );
            }
            (None, None) => {
                return bad(
                    "command",
                    "set `command` (a stdio server) or `url` (an HTTP server)".into(),
                );
            }
            (Some(c), None) if c.trim().is_empty() => {
                return bad("command", "is empty".into());
            }
            (Some(_), None) if !self.headers.is_empty() => {
                return bad(
                    "headers",
                    "headers are for HTTP servers (`url`); a stdio server takes `env`".into(),
                );
            }
            (None, Some(u)) => {
                let parsed = reqwest::Url::parse(u)
                    .map_err(|e| ("url".to_string(), format!("`{u}` is not a URL: {e}")))?;
                if !matches!(parsed.scheme(), "http" | "https") {
                    return bad("url", format!("`{u}` is not an http:// or https:// URL"));
                }
                if !self.args.is_empty() || !self.env.is_empty() {
                    return bad(
                        "args",
                        "`args` and `env` are for stdio servers (`command`)".into(),
                    );
                }
            }
            _ => {}
        }
        for (key, v) in [
            ("startup_timeout_secs", self.startup_timeout_secs),
            ("tool_timeout_secs", self.tool_timeout_secs),
        ] {
            // Capped at a day: deadlines are `now + timeout`, which must not overflow.
            if let Some(v) = v
                && !(v > 0.0 && v <= 86_400.0)
            {
                return bad(
                    key,
                    format!(
                        "`{v}` is out of range; give a number of seconds above 0, at most 86400"
                    ),
                );
            }
        }
        Ok(())
    }

    pub fn startup_timeout(&self) -> Duration {
        secs(self.startup_timeout_secs).unwrap_or(DEFAULT_STARTUP_TIMEOUT)
    }

    pub fn tool_timeout(&self) -> Duration {
        secs(self.tool_timeout_secs).unwrap_or(DEFAULT_TOOL_TIMEOUT)
    }

    /// Whether the server's tool `name` is offered to the model.
    pub fn offers(&self, name: &str) -> bool {
        self.enabled_tools
            .as_ref()
            .is_none_or(|only| only.iter().any(|t| t == name))
            && !self.disabled_tools.iter().any(|t| t == name)
    }

    /// How it is reached, for people: the command line or the URL.
    pub fn describe(&self) -> String {
        match (&self.command, &self.url) {
            (Some(c), _) => {
                let mut line = c.clone();
                for a in &self.args {
                    line.push(' ');
                    line.push_str(a);
                }
                format!("stdio: {line}")
            }
            (None, Some(u)) => format!("http: {u}"),
            (None, None) => "not configured".into(),
        }
    }
}

fn secs(v: Option<f64>) -> Option<Duration> {
    v.and_then(|v| Duration::try_from_secs_f64(v).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(toml_text: &str) -> ServerConfig {
        toml::from_str(toml_text).unwrap()
    }

    #[test]
    fn validation_names_the_key() {
        let ok = parse("command = \"srv\"\nargs = [\"-v\"]\n");
        assert!(ok.validate("files").is_ok());
        assert_eq!(ok.describe(), "stdio: srv -v");
        let e = ok.validate("my server").unwrap_err();
        assert!(e.1.contains("letters, digits"), "{e:?}");
        let e = parse("command = \"a\"\nurl = \"http://h\"\n")
            .validate("x")
            .unwrap_err();
        assert_eq!(e.0, "url");
        assert_eq!(parse("").validate("x").unwrap_err().0, "command");
        let e = parse("url = \"ftp://h\"\n").validate("x").unwrap_err();
        assert!(e.1.contains("not an http"), "{e:?}");
        let e = parse("command = \"a\"\nheaders = { A = \"b\" }\n")
            .validate("x")
            .unwrap_err();
        assert_eq!(e.0, "headers");
        let e = parse("command = \"a\"\ntool_timeout_secs = -1\n")
            .validate("x")
            .unwrap_err();
        assert_eq!(e.0, "tool_timeout_secs");
        assert!(
            toml::from_str::<ServerConfig>("comand = \"a\"\n").is_err(),
            "unknown keys are refused"
        );
    }

    #[test]
    fn timeouts_and_tool_filters() {
        let c = parse(
            "url = \"http://h/mcp\"\nstartup_timeout_secs = 2.5\nenabled_tools = [\"a\", \"b\"]\ndisabled_tools = [\"b\"]\n",
        );
        assert!(c.enabled);
        assert_eq!(c.startup_timeout(), Duration::from_millis(2500));
        assert_eq!(c.tool_timeout(), DEFAULT_TOOL_TIMEOUT);
        assert!(c.offers("a"));
        assert!(!c.offers("b"), "disabled wins");
        assert!(!c.offers("c"), "not in enabled_tools");
        assert_eq!(c.describe(), "http: http://h/mcp");
    }
}
