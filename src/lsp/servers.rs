//! Which language servers there are and which serves a file: the
//! `[lsp.<name>]` settings, the built-in table (used when the command is on
//! PATH), how long a change waits, a file's language, and the project root
//! a server is started for.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::manager::LspManager;

/// A server as configured (`[lsp.<name>]`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// File extensions it serves, without dots.
    #[serde(default)]
    pub extensions: Vec<String>,
    /// Or the languages it serves (`python`, `rust`, `typescript`...).
    #[serde(default)]
    pub languages: Vec<String>,
    /// Files that mark a project root (`Cargo.toml`, `pyproject.toml`).
    #[serde(default)]
    pub root_markers: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub initialization_options: Option<toml::Value>,
    /// The server does not republish a document that stays clean, so
    /// silence after a clean report means "still clean".
    #[serde(default)]
    pub quiet_when_clean: bool,
}

/// Built-in servers, used when the command is on PATH.
pub fn builtin() -> BTreeMap<String, ServerConfig> {
    let s = |command: &str, args: &[&str], ext: &[&str], markers: &[&str]| ServerConfig {
        command: command.into(),
        args: args.iter().map(|a| a.to_string()).collect(),
        extensions: ext.iter().map(|e| e.to_string()).collect(),
        root_markers: markers.iter().map(|m| m.to_string()).collect(),
        ..ServerConfig::default()
    };
    BTreeMap::from([
        (
            "rust-analyzer".into(),
            s("rust-analyzer", &[], &["rs"], &["Cargo.toml"]),
        ),
        (
            "pyright".into(),
            s(
                "pyright-langserver",
                &["--stdio"],
                &["py", "pyi"],
                &[
                    "pyproject.toml",
                    "setup.py",
                    "pyrightconfig.json",
                    "requirements.txt",
                ],
            ),
        ),
        (
            "typescript".into(),
            ServerConfig {
                // It sends nothing for a document that was clean and stays so.
                quiet_when_clean: true,
                ..s(
                    "typescript-language-server",
                    &["--stdio"],
                    &["ts", "tsx", "js", "jsx", "mjs", "cjs"],
                    &["tsconfig.json", "package.json"],
                )
            },
        ),
        ("gopls".into(), s("gopls", &[], &["go"], &["go.mod"])),
        (
            "clangd".into(),
            s(
                "clangd",
                &[],
                &["c", "h", "cc", "cpp", "hpp", "cxx"],
                &["compile_commands.json", "CMakeLists.txt"],
            ),
        ),
    ])
}

/// How long a change waits for diagnostics.
#[derive(Debug, Clone)]
pub struct Timing {
    /// Quiet after a publication before it is taken as the answer.
    pub settle: Duration,
    /// All an edit waits, the server's start included (`wait_secs`).
    pub cap: Duration,
    /// How long a server may take to answer `initialize` (`start_secs`).
    pub start: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            settle: Duration::from_millis(300),
            cap: Duration::from_secs(5),
            start: Duration::from_secs(10),
        }
    }
}

pub fn on_path(command: &str) -> bool {
    if command.contains('/') {
        return Path::new(command).exists();
    }
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(command).is_file()))
}

pub(super) fn language_id(path: &Path) -> &'static str {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
    {
        "rs" => "rust",
        "py" | "pyi" => "python",
        "ts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "go" => "go",
        "c" | "h" => "c",
        "cc" | "cpp" | "hpp" | "cxx" => "cpp",
        _ => "plaintext",
    }
}

impl LspManager {
    pub(super) fn server_for(&self, path: &Path) -> Option<(&String, &ServerConfig)> {
        let ext = path.extension()?.to_str()?;
        let lang = language_id(path);
        self.servers.iter().find(|(_, s)| {
            s.extensions.iter().any(|e| e == ext) || s.languages.iter().any(|l| l == lang)
        })
    }

    /// The nearest directory at or above the file (inside the workspace)
    /// holding one of the server's root markers; else the workspace.
    pub(super) fn root_for(&self, path: &Path, server: &ServerConfig) -> PathBuf {
        let mut dir = path.parent();
        while let Some(d) = dir {
            if !d.starts_with(&self.workspace) {
                break;
            }
            if server.root_markers.iter().any(|m| d.join(m).exists()) {
                return d.to_path_buf();
            }
            dir = d.parent();
        }
        self.workspace.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manager_with(server: ServerConfig) -> LspManager {
        let dir = std::env::temp_dir();
        LspManager::new(
            BTreeMap::from([("mine".to_string(), server)]),
            dir.clone(),
            dir,
            Timing::default(),
        )
    }

    #[test]
    fn a_server_is_chosen_by_language_or_by_extension() {
        let by_language = manager_with(ServerConfig {
            command: "mine-ls".into(),
            languages: vec!["python".into()],
            ..ServerConfig::default()
        });
        let chosen = |m: &LspManager, p: &str| m.server_for(Path::new(p)).map(|(n, _)| n.clone());
        assert_eq!(chosen(&by_language, "/w/m.py").as_deref(), Some("mine"));
        assert_eq!(
            chosen(&by_language, "/w/stubs.pyi").as_deref(),
            Some("mine")
        );
        assert_eq!(chosen(&by_language, "/w/a.txt"), None);

        let by_extension = manager_with(ServerConfig {
            command: "mine-ls".into(),
            extensions: vec!["txt".into()],
            ..ServerConfig::default()
        });
        assert_eq!(chosen(&by_extension, "/w/a.txt").as_deref(), Some("mine"));
        // (A built-in pyright may serve it when installed; ours must not.)
        assert_ne!(chosen(&by_extension, "/w/m.py").as_deref(), Some("mine"));
    }
}
