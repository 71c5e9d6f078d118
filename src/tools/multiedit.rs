//! `multiedit`: several replacements in one file, applied in order to the
//! text in memory; all or nothing. One approval covers the combined diff.

use schemars::JsonSchema;
use serde::Deserialize;

use super::edit::{Plan, PlanCache, apply, execute};
use super::files;
use super::{Effect, Tool, ToolContext, ToolError, render};
use crate::permission::{CallFacts, RiskAssessment, Scope};

pub struct MultiEdit;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct OneEdit {
    /// Exact text to replace (after the previous edits were applied).
    old_string: String,
    /// The replacement; empty deletes.
    new_string: String,
    /// Replace every occurrence.
    replace_all: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct MultiEditArgs {
    /// File to change, relative to the project root.
    path: String,
    /// Replacements, applied in order.
    edits: Vec<OneEdit>,
    #[serde(skip)]
    #[schemars(skip)]
    cache: PlanCache,
}

fn plan(args: &MultiEditArgs, ctx: &ToolContext) -> Result<Plan, ToolError> {
    let path = ctx.workspace.absolute(&args.path);
    let shown = ctx.workspace.display(&path);
    if args.edits.is_empty() {
        return Err(ToolError::new(
            "`edits` is empty; give at least one {old_string, new_string}",
        ));
    }
    let original = files::read_checked(ctx, &path)?;
    let mut text = original.text.clone();
    let mut notes = Vec::new();
    let n = args.edits.len();
    for (i, e) in args.edits.iter().enumerate() {
        if e.old_string.is_empty() {
            return Err(ToolError::new(format!(
                "edit {} of {n} has an empty old_string; multiedit changes existing text only (use `write` or `edit` to create a file). Nothing was written.",
                i + 1
            )));
        }
        let applied = apply(&text, &e.old_string, &e.new_string, e.replace_all.unwrap_or(false)).map_err(|why| {
            ToolError::new(format!("edit {} of {n} failed: {why}\nNothing was written to `{shown}`; fix that edit and send them all again.", i + 1))
        })?;
        if let Some(note) = applied.note {
            notes.push(format!("edit {}: {note}", i + 1));
        }
        text = applied.text;
    }
    let (added, removed) = files::line_counts(&original.text, &text);
    Ok(Plan {
        bytes: original.encode(&text),
        path,
        summary: format!(
            "Edited `{shown}`: applied {n} edit{} (+{added} −{removed} lines).",
            if n == 1 { "" } else { "s" }
        ),
        notes,
        new_text: text,
        original: Some(original),
    })
}

impl Tool for MultiEdit {
    type Args = MultiEditArgs;
    const NAME: &'static str = "multiedit";

    fn description(&self, _ctx: &ToolContext) -> String {
        render(include_str!("../../templates/multiedit.md"), &[])
    }

    fn effect(&self) -> Effect {
        Effect::Write
    }

    fn after(&self) -> super::After {
        super::After::Diagnose
    }

    fn paths(args: &MultiEditArgs) -> Vec<&str> {
        vec![&args.path]
    }

    fn facts(&self, args: &MultiEditArgs, ctx: &ToolContext) -> Result<CallFacts, ToolError> {
        let p = plan(args, ctx)?;
        let description = p.edit_description(ctx);
        let scope = Scope::Files {
            paths: vec![p.path.clone()],
        };
        Ok(p.into_facts(
            Self::NAME,
            description,
            RiskAssessment::medium("changes an existing file"),
            scope,
            ctx,
            &args.cache,
        ))
    }

    async fn run(&self, args: MultiEditArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        execute(ctx, &args.cache, || plan(&args, ctx)).await
    }
}
