//! `diagnostics`, `references` and `lsp_restart`: read-only tools over the
//! session's language servers.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{Effect, Tool, ToolContext, ToolError, render};

fn manager(ctx: &ToolContext) -> Result<&std::sync::Arc<crate::lsp::LspManager>, ToolError> {
    ctx.lsp
        .as_ref()
        .ok_or_else(|| ToolError::new("no language servers are configured; add one as [lsp.<name>] in ~/.config/agent/config.toml"))
}

pub struct Diagnostics;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct DiagnosticsArgs {
    /// A file to check; omit for everything the servers have reported.
    path: Option<String>,
}

impl Tool for Diagnostics {
    type Args = DiagnosticsArgs;
    const NAME: &'static str = "diagnostics";

    fn description(&self, _ctx: &ToolContext) -> String {
        render(include_str!("../../templates/diagnostics.md"), &[])
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    fn paths(args: &DiagnosticsArgs) -> Vec<&str> {
        args.path.as_deref().into_iter().collect()
    }

    async fn run(&self, args: DiagnosticsArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let lsp = manager(ctx)?;
        let display = |p: &std::path::Path| ctx.workspace.display(p);
        let path = args.path.as_deref().map(|p| ctx.workspace.absolute(p));
        if let Some(p) = &path
            && !p.exists()
        {
            return Err(ToolError::new(format!(
                "`{}` does not exist; check the path (`glob` finds files by name)",
                display(p)
            )));
        }
        Ok(lsp.diagnostics(path.as_deref(), &display).await)
    }
}

pub struct References;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReferencesArgs {
    /// The file with the symbol (with `line` and `column`), or a file of its
    /// language (with `symbol`).
    path: Option<String>,
    /// Line of the symbol, 1-based.
    line: Option<u32>,
    /// Column of the symbol, 1-based.
    column: Option<u32>,
    /// A symbol's name, instead of a position.
    symbol: Option<String>,
}

impl Tool for References {
    type Args = ReferencesArgs;
    const NAME: &'static str = "references";

    fn description(&self, _ctx: &ToolContext) -> String {
        render(include_str!("../../templates/references.md"), &[])
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    fn paths(args: &ReferencesArgs) -> Vec<&str> {
        args.path.as_deref().into_iter().collect()
    }

    async fn run(&self, args: ReferencesArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let lsp = manager(ctx)?;
        let hint = args.path.as_deref().map(|p| ctx.workspace.absolute(p));
        let (path, line, column) = match (&args.symbol, &hint, args.line, args.column) {
            (Some(name), _, _, _) => match lsp
                .find_symbol(name, hint.as_deref())
                .await
                .map_err(ToolError::new)?
            {
                Some(found) => found,
                None => {
                    return Ok(format!(
                        "No symbol named `{name}` is known to the language servers."
                    ));
                }
            },
            (None, Some(p), Some(l), Some(c)) => {
                (p.clone(), l.saturating_sub(1), c.saturating_sub(1))
            }
            _ => {
                return Err(ToolError::new(
                    "give `path` with `line` and `column` (1-based), or `symbol` (and optionally `path`)",
                ));
            }
        };
        let found = lsp
            .references(&path, line, column)
            .await
            .map_err(ToolError::new)?;
        let locations = found.as_array().cloned().unwrap_or_default();
        if locations.is_empty() {
            return Ok(format!(
                "No references found at {}:{}:{}.",
                ctx.workspace.display(&path),
                line + 1,
                column + 1
            ));
        }
        let mut out = String::new();
        for loc in &locations {
            let (Some(uri), Some(line), Some(col)) = (
                loc["uri"].as_str(),
                loc.pointer("/range/start/line").and_then(Value::as_u64),
                loc.pointer("/range/start/character")
                    .and_then(Value::as_u64),
            ) else {
                continue;
            };
            let Some(file) = crate::lsp::client::path_of(uri) else {
                continue;
            };
            let text = std::fs::read_to_string(&file)
                .ok()
                .and_then(|t| t.lines().nth(line as usize).map(|l| l.trim().to_string()))
                .unwrap_or_default();
            out.push_str(&format!(
                "{}:{}:{}: {}\n",
                ctx.workspace.display(&file),
                line + 1,
                col + 1,
                crate::text::cut_line(&text, 200)
            ));
        }
        Ok(out)
    }
}

pub struct LspRestart;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct LspRestartArgs {
    /// Server name, e.g. `pyright`; omit to restart all.
    name: Option<String>,
}

impl Tool for LspRestart {
    type Args = LspRestartArgs;
    const NAME: &'static str = "lsp_restart";

    fn description(&self, _ctx: &ToolContext) -> String {
        render(include_str!("../../templates/lsp_restart.md"), &[])
    }

    fn effect(&self) -> Effect {
        Effect::Session
    }

    fn paths(_: &LspRestartArgs) -> Vec<&str> {
        Vec::new()
    }

    async fn run(&self, args: LspRestartArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        Ok(manager(ctx)?.restart(args.name.as_deref()).await)
    }
}
