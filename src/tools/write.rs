//! `write`: a whole file. Creates parent directories; overwriting needs a
//! prior read of the current content; content is capped.

use schemars::JsonSchema;
use serde::Deserialize;

use super::edit::{Plan, PlanCache, execute};
use super::files::{self, thousands};
use super::{Effect, Tool, ToolContext, ToolError, render};
use crate::permission::{CallFacts, RiskAssessment, Scope};

pub const MAX_CONTENT: usize = 1024 * 1024;

pub struct Write;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WriteArgs {
    /// File to write, relative to the project root.
    path: String,
    /// The complete content of the file.
    content: String,
    #[serde(skip)]
    #[schemars(skip)]
    cache: PlanCache,
}

fn plan(args: &WriteArgs, ctx: &ToolContext) -> Result<Plan, ToolError> {
    let path = ctx.workspace.absolute(&args.path);
    let shown = ctx.workspace.display(&path);
    if args.content.len() > MAX_CONTENT {
        return Err(ToolError::new(format!(
            "the content is {} bytes; `write` takes at most {} bytes. Write a smaller file, or build it up with `edit`",
            thousands(args.content.len()),
            thousands(MAX_CONTENT)
        )));
    }
    let original = files::read_existing(ctx, &path)?;
    let lines = files::lines(args.content.lines().count());
    let bytes_now = args.content.len();
    let summary = match &original {
        None => format!(
            "Created `{shown}` ({} bytes, {lines}).",
            thousands(bytes_now)
        ),
        Some(o) => format!(
            "Overwrote `{shown}` ({} bytes → {} bytes, {lines}).",
            thousands(o.bytes.len()),
            thousands(bytes_now)
        ),
    };
    // Keep the file's line endings and BOM when the content has none of its own.
    let bytes = match &original {
        Some(o)
            if (o.crlf && !args.content.contains('\r'))
                || (o.bom && !args.content.starts_with('\u{feff}')) =>
        {
            let mut text = if o.crlf && !args.content.contains('\r') {
                args.content.replace('\n', "\r\n")
            } else {
                args.content.clone()
            };
            if o.bom && !text.starts_with('\u{feff}') {
                text.insert(0, '\u{feff}');
            }
            text.into_bytes()
        }
        _ => args.content.clone().into_bytes(),
    };
    Ok(Plan {
        path,
        bytes,
        new_text: args.content.clone(),
        original,
        summary,
        notes: Vec::new(),
    })
}

impl Tool for Write {
    type Args = WriteArgs;
    const NAME: &'static str = "write";

    fn description(&self, _ctx: &ToolContext) -> String {
        render(
            include_str!("../../templates/write.md"),
            &[("max_bytes", thousands(MAX_CONTENT))],
        )
    }

    fn effect(&self) -> Effect {
        Effect::Write
    }

    fn after(&self) -> super::After {
        super::After::Diagnose
    }

    fn paths(args: &WriteArgs) -> Vec<&str> {
        vec![&args.path]
    }

    fn facts(&self, args: &WriteArgs, ctx: &ToolContext) -> Result<CallFacts, ToolError> {
        let p = plan(args, ctx)?;
        let shown = ctx.workspace.display(&p.path);
        let (description, base) = match &p.original {
            None => (
                format!(
                    "create {shown} ({} bytes, {})",
                    thousands(p.bytes.len()),
                    files::lines(p.new_text.lines().count())
                ),
                RiskAssessment::low("creates a new file"),
            ),
            Some(o) => (
                format!(
                    "overwrite {shown}: {} bytes → {} bytes, original content lost",
                    thousands(o.bytes.len()),
                    thousands(p.bytes.len())
                ),
                RiskAssessment::medium("overwrites an existing file"),
            ),
        };
        let dir = p
            .path
            .parent()
            .map(|d| d.to_path_buf())
            .unwrap_or_else(|| p.path.clone());
        let scope = Scope::Dirs { paths: vec![dir] };
        Ok(p.into_facts(Self::NAME, description, base, scope, ctx, &args.cache))
    }

    async fn run(&self, args: WriteArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        execute(ctx, &args.cache, || plan(&args, ctx)).await
    }
}
