//! One configuration file as written by a person: every field optional, unknown
//! keys refused. Parsing errors name the file, line, column and key.

use crate::llm::ProviderKind;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ConfigError;

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Default provider id.
    pub provider: Option<String>,
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderFile>,
    pub agent: Option<AgentFile>,
    pub llm: Option<LlmFile>,
    pub permissions: Option<PermissionsFile>,
    pub bash: Option<BashFile>,
    pub sandbox: Option<SandboxFile>,
    pub lsp: Option<LspFile>,
    pub hooks: Option<crate::hooks::HooksFile>,
    /// `[mcp.<name>]`: MCP servers (the user's file only).
    #[serde(default)]
    pub mcp: BTreeMap<String, crate::mcp::ServerConfig>,
    /// `[projects."<root>"]`: the person's own rules for one project, where
    /// "always" answers are saved (the user's file only: a repository must
    /// not be able to forge them).
    /// Each is a `[permissions]` table (its `banned` adds to the list).
    #[serde(default)]
    pub projects: BTreeMap<String, PermissionsFile>,
}

/// `[lsp]`: timing, and one `[lsp.<name>]` table per server.
#[derive(Debug, Default, Clone, Deserialize)]
pub struct LspFile {
    /// Quiet time after the last publication before diagnostics count.
    pub settle_ms: Option<u64>,
    /// Longest wait for diagnostics after a change.
    pub wait_secs: Option<f64>,
    /// Longest wait for a server to answer `initialize`.
    pub start_secs: Option<f64>,
    #[serde(flatten)]
    pub servers: BTreeMap<String, crate::lsp::ServerConfig>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BashFile {
    pub timeout_secs: Option<u64>,
    pub max_timeout_secs: Option<u64>,
    pub background_after_secs: Option<u64>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxFile {
    pub mode: Option<crate::shell::SandboxMode>,
    /// Extra directories bash commands may write (user config only).
    #[serde(default)]
    pub writable_roots: Vec<String>,
    /// Provider key variables that commands, hooks and language servers
    /// still get (user config only; by default they are withheld).
    #[serde(default)]
    pub pass_env: Vec<String>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermissionsFile {
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub ask: Vec<String>,
    #[serde(default)]
    pub deny: Vec<String>,
    /// Commands never run. In the user's file this replaces the default
    /// list; a project's file can only add to it.
    pub banned: Option<Vec<String>>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderFile {
    pub kind: Option<ProviderKind>,
    pub base_url: Option<String>,
    pub api_key_env: Option<String>,
    pub model: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Anthropic only: output token cap per response.
    pub max_tokens: Option<u32>,
    /// Anthropic only: enable extended thinking with this token budget.
    pub thinking_budget: Option<u32>,
    /// Responses API only: `reasoning.effort` (`minimal`, `low`, `medium`,
    /// `high`); the model's reasoning is then carried across turns.
    pub reasoning_effort: Option<String>,
    /// USD per million input tokens, for the cost in the status line.
    pub input_price: Option<f64>,
    /// USD per million output tokens.
    pub output_price: Option<f64>,
    /// USD per million input tokens read from the prompt cache (default:
    /// a tenth of `input_price`).
    pub cache_read_price: Option<f64>,
    /// USD per million input tokens written to the prompt cache (default:
    /// 1.25 × `input_price` for Anthropic, nothing for OpenAI).
    pub cache_write_price: Option<f64>,
    /// The model's context window in tokens; the conversation is compacted
    /// before a request would outgrow it.
    pub context_window: Option<u64>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentFile {
    pub max_steps: Option<u32>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmFile {
    pub max_retries: Option<u32>,
    pub retry_base_ms: Option<u64>,
    pub retry_max_secs: Option<f64>,
    pub idle_timeout_secs: Option<f64>,
    pub connect_timeout_secs: Option<f64>,
    pub first_byte_timeout_secs: Option<f64>,
    pub first_byte_retries: Option<u32>,
    pub request_timeout_secs: Option<f64>,
    pub max_retry_wait_secs: Option<f64>,
}

impl ConfigFile {
    /// Reads `path` if it exists; a missing file is an empty layer.
    pub fn load(path: &Path) -> Result<Option<ConfigFile>, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(ConfigError::Io {
                    file: path.to_path_buf(),
                    source,
                });
            }
        };
        Self::parse(&text, path).map(Some)
    }

    pub fn parse(text: &str, path: &Path) -> Result<ConfigFile, ConfigError> {
        let deserializer =
            toml::Deserializer::parse(text).map_err(|e| parse_error(path, text, &e, None))?;
        serde_path_to_error::deserialize(deserializer).map_err(|e| {
            let key = e.path().to_string();
            let key = (key != ".").then_some(key);
            parse_error(path, text, e.inner(), key)
        })
    }
}

fn parse_error(path: &Path, text: &str, e: &toml::de::Error, key: Option<String>) -> ConfigError {
    let (line, column) = match e.span() {
        Some(span) => line_col(text, span.start),
        None => (1, 1),
    };
    ConfigError::Parse {
        file: PathBuf::from(path),
        line,
        column,
        key,
        message: e.message().trim().to_string(),
    }
}

/// 1-based line and column of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rfind('\n')
        .map_or(before.len(), |nl| before.len() - nl - 1)
        + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        ConfigFile::parse(text, Path::new("/p/config.toml"))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn syntax_error_names_file_and_line() {
        let e = err("provider = \"a\"\n[providers.x\nkind = 1\n");
        assert!(e.starts_with("/p/config.toml:2:"), "{e}");
    }

    #[test]
    fn wrong_type_names_key_and_line() {
        let e = err("[providers.mine]\nkind = \"openai\"\nmodel = 5\n");
        assert!(e.starts_with("/p/config.toml:3:"), "{e}");
        assert!(e.contains("providers.mine.model"), "{e}");
    }

    #[test]
    fn unknown_key_is_refused() {
        let e = err("[providers.mine]\nmodle = \"x\"\n");
        assert!(e.contains("/p/config.toml:2:"), "{e}");
        assert!(e.contains("modle"), "{e}");
    }

    #[test]
    fn unknown_kind_is_refused() {
        let e = err("[providers.mine]\nkind = \"gemini\"\n");
        assert!(e.contains(":2:"), "{e}");
        assert!(e.contains("gemini"), "{e}");
    }

    #[test]
    fn full_file_parses() {
        let f = ConfigFile::parse(
            "provider = \"mine\"\n[agent]\nmax_steps = 9\n[llm]\nmax_retries = 1\nidle_timeout_secs = 0.5\n\
             [providers.mine]\nkind = \"anthropic\"\nbase_url = \"http://h\"\nheaders = { x-a = \"1\" }\n",
            Path::new("c.toml"),
        )
        .unwrap();
        assert_eq!(f.provider.as_deref(), Some("mine"));
        assert_eq!(f.agent.unwrap().max_steps, Some(9));
        assert_eq!(f.llm.unwrap().idle_timeout_secs, Some(0.5));
        let p = &f.providers["mine"];
        assert_eq!(p.kind, Some(ProviderKind::Anthropic));
        assert_eq!(p.headers["x-a"], "1");
    }
}
