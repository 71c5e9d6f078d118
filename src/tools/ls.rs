//! `ls`: a directory as an indented tree, honouring ignore files, capped.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Effect, Tool, ToolContext, ToolError, blocking, render};

pub const DEFAULT_DEPTH: usize = 3;
pub const MAX_ENTRIES: usize = 1000;

pub struct Ls;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct LsArgs {
    /// Directory to list, relative to the project root. Default: the root.
    path: Option<String>,
    /// Levels to descend. Default 3.
    depth: Option<usize>,
}

impl Tool for Ls {
    type Args = LsArgs;
    const NAME: &'static str = "ls";

    fn description(&self, _ctx: &ToolContext) -> String {
        render(
            include_str!("../../templates/ls.md"),
            &[
                ("default_depth", DEFAULT_DEPTH.to_string()),
                ("max_entries", MAX_ENTRIES.to_string()),
            ],
        )
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    fn paths(args: &LsArgs) -> Vec<&str> {
        args.path.as_deref().into_iter().collect()
    }

    async fn run(&self, args: LsArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let ctx = ctx.clone();
        blocking(move || ls(&args, &ctx)).await
    }
}

fn ls(args: &LsArgs, ctx: &ToolContext) -> Result<String, ToolError> {
    let ws = &ctx.workspace;
    let dir = ws.absolute(args.path.as_deref().unwrap_or("."));
    let shown = ws.display(&dir);
    if !dir.exists() {
        return Err(ToolError::new(format!(
            "directory not found: `{shown}`; use `ls` on its parent or `glob` to find it"
        )));
    }
    if !dir.is_dir() {
        return Err(ToolError::new(format!(
            "`{shown}` is a file, not a directory; use `view` to read it"
        )));
    }
    let depth = args.depth.unwrap_or(DEFAULT_DEPTH).max(1);
    let walker = ctx
        .walker(&dir)
        .hidden(false)
        .max_depth(Some(depth))
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();
    let mut out = format!(
        "{}/\n",
        if shown == "." {
            ws.root().display().to_string()
        } else {
            shown.clone()
        }
    );
    let mut count = 0usize;
    let mut truncated = false;
    for entry in walker.filter_map(Result::ok) {
        if entry.depth() == 0 {
            continue;
        }
        if count == MAX_ENTRIES {
            truncated = true;
            break;
        }
        count += 1;
        let indent = "  ".repeat(entry.depth());
        let name = entry.file_name().to_string_lossy();
        let slash = if entry.file_type().is_some_and(|t| t.is_dir()) {
            "/"
        } else {
            ""
        };
        out.push_str(&format!("{indent}{name}{slash}\n"));
    }
    if count == 0 {
        out.push_str("  (empty)\n");
    }
    if truncated {
        out.push_str(&format!(
            "(stopped at {MAX_ENTRIES} entries; list a subdirectory or lower `depth`)\n"
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Workspace;

    fn ctx(dir: &std::path::Path) -> ToolContext {
        ToolContext::new(
            Workspace::new(dir.canonicalize().unwrap()),
            Vec::new(),
            Default::default(),
        )
    }

    #[test]
    fn tree_honours_gitignore_and_depth() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        std::fs::create_dir_all(r.join("src/deep/deeper")).unwrap();
        std::fs::create_dir_all(r.join(".git")).unwrap();
        std::fs::create_dir_all(r.join("target")).unwrap();
        std::fs::write(r.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(r.join("src/main.rs"), "").unwrap();
        std::fs::write(r.join("src/deep/deeper/x.rs"), "").unwrap();
        std::fs::write(r.join("target/junk"), "").unwrap();
        let c = ctx(r);
        let out = ls(
            &LsArgs {
                path: None,
                depth: Some(2),
            },
            &c,
        )
        .unwrap();
        let body: Vec<&str> = out.lines().skip(1).collect();
        assert_eq!(
            body,
            vec!["  .gitignore", "  src/", "    deep/", "    main.rs"]
        );
        let out = ls(
            &LsArgs {
                path: Some("src/deep".into()),
                depth: None,
            },
            &c,
        )
        .unwrap();
        assert_eq!(out, "src/deep/\n  deeper/\n    x.rs\n");
    }

    #[test]
    fn cap_and_errors() {
        let d = tempfile::tempdir().unwrap();
        for i in 0..MAX_ENTRIES + 3 {
            std::fs::write(d.path().join(format!("f{i:05}")), "").unwrap();
        }
        let c = ctx(d.path());
        let out = ls(
            &LsArgs {
                path: None,
                depth: None,
            },
            &c,
        )
        .unwrap();
        assert_eq!(out.lines().count(), MAX_ENTRIES + 2);
        assert!(out.ends_with("(stopped at 1000 entries; list a subdirectory or lower `depth`)\n"));
        assert!(
            ls(
                &LsArgs {
                    path: Some("f00001".into()),
                    depth: None
                },
                &c
            )
            .unwrap_err()
            .0
            .contains("is a file")
        );
        assert!(
            ls(
                &LsArgs {
                    path: Some("nope".into()),
                    depth: None
                },
                &c
            )
            .unwrap_err()
            .0
            .contains("directory not found")
        );
    }
}
