//! `edit`: exact string replacement with three modes (an empty `old_string`
//! creates a file, an empty `new_string` deletes the match, otherwise
//! replace). `old_string` must be unique unless `replace_all`; a match that
//! differs only in indentation or trailing whitespace is applied
//! re-indented, and said so. The matching lives here; `multiedit` reuses it.

use schemars::JsonSchema;
use serde::Deserialize;

use super::files::{self, Original};
use super::{Effect, Tool, ToolContext, ToolError, render};
use crate::permission::{CallFacts, RiskAssessment, Scope, Subjects};

pub struct Edit;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct EditArgs {
    /// File to change, relative to the project root.
    pub path: String,
    /// The exact text to replace, copied from `view` output without line numbers. Empty: create a new file.
    pub old_string: String,
    /// The replacement. Empty: delete `old_string`.
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    pub replace_all: Option<bool>,
    #[serde(skip)]
    #[schemars(skip)]
    pub cache: PlanCache,
}

/// The result of applying one replacement to a text.
#[derive(Debug)]
pub struct Applied {
    pub text: String,
    pub count: usize,
    /// Set when the match needed whitespace to be ignored.
    pub note: Option<String>,
}

/// Applies `old → new` to `text`. Errors say what to do next.
pub fn apply(text: &str, old: &str, new: &str, replace_all: bool) -> Result<Applied, String> {
    if old == new {
        return Err("old_string and new_string are identical; there is nothing to change".into());
    }
    let count = text.matches(old).count();
    if count == 1 || (count > 1 && replace_all) {
        let text = if replace_all {
            text.replace(old, new)
        } else {
            text.replacen(old, new, 1)
        };
        return Ok(Applied {
            text,
            count,
            note: None,
        });
    }
    if count > 1 {
        return Err(format!(
            "old_string occurs {count} times; add a few surrounding lines to old_string so it matches exactly one place, or set replace_all to change all {count}"
        ));
    }
    loose(text, old, new).ok_or_else(|| not_found(text, old))
}

/// A unique match that ignores indentation and trailing whitespace, applied
/// with the file's indentation.
fn loose(text: &str, old: &str, new: &str) -> Option<Applied> {
    let old_lines: Vec<&str> = old.trim_end_matches('\n').split('\n').collect();
    if old_lines.iter().all(|l| l.trim().is_empty()) {
        return None;
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let fits = |start: usize| {
        old_lines
            .iter()
            .enumerate()
            .all(|(i, o)| lines.get(start + i).is_some_and(|l| l.trim() == o.trim()))
    };
    let starts: Vec<usize> = (0..lines.len()).filter(|&s| fits(s)).collect();
    let [start] = starts[..] else { return None };
    let indent = |s: &str| s[..s.len() - s.trim_start().len()].to_string();
    let file_indent = indent(lines[start]);
    let old_indent = indent(old_lines[0]);
    let reindented: Vec<String> = new
        .trim_end_matches('\n')
        .split('\n')
        .map(|l| {
            if l.trim().is_empty() {
                String::new()
            } else {
                format!(
                    "{file_indent}{}",
                    l.strip_prefix(old_indent.as_str())
                        .unwrap_or(l.trim_start())
                )
            }
        })
        .collect();
    let mut out: Vec<String> = lines[..start].iter().map(|s| s.to_string()).collect();
    if !new.is_empty() {
        out.extend(reindented);
    }
    out.extend(
        lines[start + old_lines.len()..]
            .iter()
            .map(|s| s.to_string()),
    );
    Some(Applied {
        text: out.join("\n"),
        count: 1,
        note: Some(format!(
            "old_string matched line {} only after ignoring indentation and trailing whitespace; the change was applied with the file's indentation",
            start + 1
        )),
    })
}

/// The not-found error, with the file's nearest lines and their whitespace made visible.
fn not_found(text: &str, old: &str) -> String {
    let first = old
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .trim();
    let lines: Vec<&str> = text.lines().collect();
    let best = lines
        .iter()
        .enumerate()
        .map(|(i, l)| (strsim::normalized_levenshtein(first, l.trim()), i))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let mut msg = String::from("old_string was not found in the file.");
    if let Some((score, i)) = best.filter(|(s, _)| *s > 0.3) {
        let from = i.saturating_sub(2);
        let to = (i + old.lines().count().max(1) + 2).min(lines.len());
        msg.push_str(&format!(
            " The closest lines (similarity {:.0}%), with tabs shown as → and leading spaces as ·:\n",
            score * 100.0
        ));
        for (n, l) in lines.iter().enumerate().take(to).skip(from) {
            msg.push_str(&format!("{:>6}│{}\n", n + 1, visible(l)));
        }
    } else {
        msg.push('\n');
    }
    msg.push_str("Copy the exact text from `view` output (without the line numbers) and try again; view the file again if it may have changed.");
    msg
}

fn visible(line: &str) -> String {
    let rest = line.trim_start_matches([' ', '\t']);
    let lead: String = line[..line.len() - rest.len()]
        .chars()
        .map(|c| if c == '\t' { '→' } else { '·' })
        .collect();
    format!("{lead}{}", rest.replace('\t', "→"))
}

/// The planned change of a file: new bytes, and what to say about it.
pub struct Plan {
    pub path: std::path::PathBuf,
    pub original: Option<Original>,
    pub new_text: String,
    pub bytes: Vec<u8>,
    pub summary: String,
    pub notes: Vec<String>,
}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plan")
            .field("path", &self.path)
            .field("summary", &self.summary)
            .finish_non_exhaustive()
    }
}

impl Plan {
    /// The gate's facts for this change, keeping the plan for the run.
    /// `scope` is what a session grant covers (the file, or its directory).
    pub fn into_facts(
        self,
        tool: &str,
        description: String,
        base: RiskAssessment,
        scope: Scope,
        ctx: &ToolContext,
        cache: &PlanCache,
    ) -> CallFacts {
        let facts = CallFacts {
            tool: tool.into(),
            description,
            risk: files::change_risk(ctx, &self.path, base),
            scope,
            needs_approval: true,
            // `edit` and `multiedit` read the file they change: read
            // rules apply to them too (`write` replaces it unread).
            subjects: Subjects {
                reads: (self.original.is_some() && tool != "write")
                    .then(|| self.path.clone())
                    .into_iter()
                    .collect(),
                writes: vec![self.path.clone()],
                ..Subjects::default()
            },
            banned: None,
            protected: files::protected(ctx, &self.path),
            outside_sandbox: files::outside_sandbox(ctx, &self.path),
            diff: Some(self.diff(ctx)),
        };
        stash(cache, self);
        facts
    }

    /// "edit src/a.rs: replaced 1 occurrence (+1 −1 lines)".
    pub fn edit_description(&self, ctx: &ToolContext) -> String {
        let what = self
            .summary
            .split_once(": ")
            .map_or(self.summary.as_str(), |(_, w)| w)
            .trim_end_matches('.');
        format!("edit {}: {what}", ctx.workspace.display(&self.path))
    }

    pub fn diff(&self, ctx: &ToolContext) -> String {
        let old = self.original.as_ref().map_or("", |o| o.text.as_str());
        files::unified_diff(&ctx.workspace.display(&self.path), old, &self.new_text)
    }
}

fn plan(args: &EditArgs, ctx: &ToolContext) -> Result<Plan, ToolError> {
    let path = ctx.workspace.absolute(&args.path);
    let shown = ctx.workspace.display(&path);
    if args.old_string.is_empty() {
        if path.exists() {
            return Err(ToolError::new(format!(
                "`{shown}` already exists; to change it, view it and give the text to replace as old_string (an empty old_string only creates new files)"
            )));
        }
        let lines = files::lines(args.new_string.lines().count());
        return Ok(Plan {
            path,
            original: None,
            new_text: args.new_string.clone(),
            bytes: args.new_string.clone().into_bytes(),
            summary: format!("Created `{shown}` ({lines})."),
            notes: Vec::new(),
        });
    }
    let original = files::read_checked(ctx, &path)?;
    let applied = apply(
        &original.text,
        &args.old_string,
        &args.new_string,
        args.replace_all.unwrap_or(false),
    )
    .map_err(|e| ToolError::new(format!("cannot edit `{shown}`: {e}")))?;
    let (added, removed) = files::line_counts(&original.text, &applied.text);
    let what = if args.new_string.is_empty() {
        "deleted"
    } else {
        "replaced"
    };
    let times = if applied.count == 1 {
        "1 occurrence".to_string()
    } else {
        format!("{} occurrences", applied.count)
    };
    Ok(Plan {
        bytes: original.encode(&applied.text),
        path,
        summary: format!("Edited `{shown}`: {what} {times} (+{added} −{removed} lines)."),
        notes: applied.note.into_iter().collect(),
        new_text: applied.text,
        original: Some(original),
    })
}

/// A plan made while judging the call, reused when it runs.
pub type PlanCache = std::sync::Mutex<Option<Plan>>;

pub fn stash(cache: &PlanCache, plan: Plan) {
    *cache.lock().unwrap_or_else(|p| p.into_inner()) = Some(plan);
}

/// Writes a plan under the file's lock. The plan made for the approval is
/// used if the file is still as it was then; otherwise the call fails and
/// says so (the person approved that change, not another).
pub async fn execute(
    ctx: &ToolContext,
    cache: &PlanCache,
    plan_now: impl FnOnce() -> Result<Plan, ToolError>,
) -> Result<String, ToolError> {
    let cached = cache.lock().unwrap_or_else(|p| p.into_inner()).take();
    let plan = match cached {
        Some(p) => p,
        None => plan_now()?,
    };
    let shown = ctx.workspace.display(&plan.path);
    let _guard = ctx.locks.lock(&plan.path).await;
    match &plan.original {
        Some(o) => {
            let now = std::fs::read(&plan.path)
                .map_err(|e| ToolError::new(format!("cannot read `{shown}`: {e}")))?;
            // Content decides: a touch while the dialog was open is no conflict.
            if xxhash_rust::xxh3::xxh3_128(&now) != o.stamp.hash {
                return Err(ToolError::new(format!(
                    "`{shown}` changed while this call waited; view it again before changing it"
                )));
            }
        }
        None if plan.path.exists() => {
            return Err(ToolError::new(format!(
                "`{shown}` appeared while this call waited; view it first"
            )));
        }
        None => {}
    }
    files::commit(ctx, &plan.path, plan.original.as_ref(), &plan.bytes)?;
    let mut out = plan.summary.clone();
    for n in &plan.notes {
        out.push_str("\nNote: ");
        out.push_str(n);
    }
    Ok(out)
}

impl Tool for Edit {
    type Args = EditArgs;
    const NAME: &'static str = "edit";

    fn description(&self, _ctx: &ToolContext) -> String {
        render(include_str!("../../templates/edit.md"), &[])
    }

    fn effect(&self) -> Effect {
        Effect::Write
    }

    fn after(&self) -> super::After {
        super::After::Diagnose
    }

    fn paths(args: &EditArgs) -> Vec<&str> {
        vec![&args.path]
    }

    fn facts(&self, args: &EditArgs, ctx: &ToolContext) -> Result<CallFacts, ToolError> {
        let p = plan(args, ctx)?;
        let base = if p.original.is_none() {
            RiskAssessment::low("creates a new file")
        } else {
            RiskAssessment::medium("changes an existing file")
        };
        let description = p.edit_description(ctx);
        let scope = Scope::Files {
            paths: vec![p.path.clone()],
        };
        Ok(p.into_facts(Self::NAME, description, base, scope, ctx, &args.cache))
    }

    async fn run(&self, args: EditArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        execute(ctx, &args.cache, || plan(&args, ctx)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_replace_and_delete() {
        assert_eq!(apply("a b c", "b", "x", false).unwrap().text, "a x c");
        assert_eq!(apply("a b c", " b", "", false).unwrap().text, "a c");
        assert_eq!(apply("x x x", "x", "y", true).unwrap().count, 3);
    }

    #[test]
    fn errors_say_what_to_do() {
        let e = apply("x x x", "x", "y", false).unwrap_err();
        assert_eq!(
            e,
            "old_string occurs 3 times; add a few surrounding lines to old_string so it matches exactly one place, or set replace_all to change all 3"
        );
        assert_eq!(
            apply("a", "a", "a", false).unwrap_err(),
            "old_string and new_string are identical; there is nothing to change"
        );
    }

    #[test]
    fn whitespace_only_mismatch_is_applied_reindented() {
        let text = "fn f() {\n\tif x {\n\t\ty();\n\t}\n}\n";
        let a = apply(text, "if x {\n    y();   \n}", "if x {\n    z();\n}", false).unwrap();
        assert_eq!(a.text, "fn f() {\n\tif x {\n\t    z();\n\t}\n}\n");
        assert!(
            a.note
                .unwrap()
                .contains("line 2 only after ignoring indentation")
        );
    }

    #[test]
    fn not_found_shows_nearest_lines_with_visible_whitespace() {
        let text = "fn main() {\n\tlet x = 1;\n    let y = 2;\n}\n";
        let e = apply(text, "let y = 3;", "let y = 4;", false).unwrap_err();
        assert!(
            e.starts_with("old_string was not found in the file. The closest lines"),
            "{e}"
        );
        assert!(
            e.contains("     2│→let x = 1;\n     3│····let y = 2;\n"),
            "{e}"
        );
        assert!(
            e.ends_with("view the file again if it may have changed."),
            "{e}"
        );
    }
}
