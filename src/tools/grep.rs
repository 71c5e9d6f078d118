//! `grep`: regex search over the project with ripgrep's own crates:
//! `ignore`'s parallel walker, `grep-regex` and `grep-searcher`, results
//! grouped by file and capped.

use crate::text::cut_line;
use std::sync::Mutex;

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, SearcherBuilder, sinks::Lossy};
use ignore::WalkState;
use schemars::JsonSchema;
use serde::Deserialize;

use super::glob::{Flush, PathPattern};
use super::{Effect, Tool, ToolContext, ToolError, blocking, render};

pub const MAX_LINES: usize = 200;
pub const MAX_LINE_CHARS: usize = 300;

pub struct Grep;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct GrepArgs {
    /// Regular expression to search for.
    pattern: String,
    /// Directory or file to search, relative to the project root. Default: the root.
    path: Option<String>,
    /// Only search files matching this glob, e.g. `*.rs`.
    include: Option<String>,
    /// Case-insensitive search. Default false.
    ignore_case: Option<bool>,
}

impl Tool for Grep {
    type Args = GrepArgs;
    const NAME: &'static str = "grep";

    fn description(&self, _ctx: &ToolContext) -> String {
        render(
            include_str!("../../templates/grep.md"),
            &[
                ("max_lines", MAX_LINES.to_string()),
                ("max_line_chars", MAX_LINE_CHARS.to_string()),
            ],
        )
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    fn paths(args: &GrepArgs) -> Vec<&str> {
        args.path.as_deref().into_iter().collect()
    }

    fn summary(args: &GrepArgs) -> String {
        match &args.path {
            Some(p) => format!("{} in {p}", args.pattern),
            None => args.pattern.clone(),
        }
    }

    async fn run(&self, args: GrepArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let ctx = ctx.clone();
        blocking(move || grep(&args, &ctx)).await
    }
}

/// Matches of one file: the first lines (up to the display cap) and a count.
struct FileMatches {
    path: String,
    lines: Vec<(u64, String)>,
    count: usize,
}

pub fn grep(args: &GrepArgs, ctx: &ToolContext) -> Result<String, ToolError> {
    let ws = &ctx.workspace;
    let root = ws.absolute(args.path.as_deref().unwrap_or("."));
    if !root.exists() {
        return Err(ToolError::new(format!(
            "path not found: `{}`; use `ls` or `glob` to find it",
            ws.display(&root)
        )));
    }
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(args.ignore_case.unwrap_or(false))
        .build(&args.pattern)
        .map_err(|e| {
            ToolError::new(format!(
                "invalid regex `{}`: {e}\nEscape special characters such as ( [ {{ . * + ? | with \\ to match them literally.",
                args.pattern
            ))
        })?;
    let include = args.include.as_deref().map(PathPattern::new).transpose()?;
    let found: Mutex<Vec<FileMatches>> = Mutex::new(Vec::new());
    let dir = if root.is_dir() {
        root.clone()
    } else {
        root.parent().map(|p| p.to_path_buf()).unwrap_or_default()
    };
    ctx.walker(&root)
        .hidden(!include.as_ref().is_some_and(|p| p.wants_hidden))
        .build_parallel()
        .run(|| {
            let (matcher, include, dir) = (matcher.clone(), &include, &dir);
            let mut searcher = SearcherBuilder::new()
                .binary_detection(BinaryDetection::quit(0))
                .line_number(true)
                .build();
            let mut flush = Flush {
                local: Vec::new(),
                into: &found,
            };
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                if let Some(include) = include
                    && !entry
                        .path()
                        .strip_prefix(dir)
                        .is_ok_and(|rel| include.matches(rel))
                {
                    return WalkState::Continue;
                }
                let mut lines = Vec::new();
                let mut count = 0usize;
                let sink = Lossy(|line_number, line: &str| {
                    count += 1;
                    if lines.len() < MAX_LINES {
                        let line = line.trim_end_matches(['\n', '\r']);
                        lines.push((line_number, cut_line(line, MAX_LINE_CHARS)));
                    }
                    Ok(true)
                });
                // Unreadable files are skipped, as ripgrep does.
                if searcher.search_path(&matcher, entry.path(), sink).is_ok() && count > 0 {
                    flush.local.push(FileMatches {
                        path: ws.display(entry.path()),
                        lines,
                        count,
                    });
                }
                WalkState::Continue
            })
        });
    let mut files = found.into_inner().unwrap_or_else(|p| p.into_inner());
    if files.is_empty() {
        return Ok(format!(
            "No matches for `{}` in `{}`.",
            args.pattern,
            ws.display(&root)
        ));
    }
    files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    let total: usize = files.iter().map(|f| f.count).sum();
    let mut out = format!(
        "Found {total} matching line{} in {} file{}:\n",
        if total == 1 { "" } else { "s" },
        files.len(),
        if files.len() == 1 { "" } else { "s" }
    );
    let mut shown = 0;
    for f in &files {
        if shown == MAX_LINES {
            break;
        }
        out.push_str(&format!("{}:\n", f.path));
        for (n, line) in f.lines.iter().take(MAX_LINES - shown) {
            out.push_str(&format!("  {n}: {line}\n"));
            shown += 1;
        }
    }
    if shown < total {
        out.push_str(&format!(
            "(showing {shown} of {total} matching lines; narrow the pattern, `path` or `include`)\n"
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Workspace;

    fn setup() -> (tempfile::TempDir, ToolContext) {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        std::fs::create_dir_all(r.join("src")).unwrap();
        std::fs::write(
            r.join("src/a.rs"),
            "fn main() {\n    println!(\"Hello\");\n}\n",
        )
        .unwrap();
        std::fs::write(r.join("src/b.py"), "def main():\n    print('hello')\n").unwrap();
        std::fs::write(r.join("bin.dat"), b"hello\0world").unwrap();
        std::fs::write(r.join(".hidden"), "hello").unwrap();
        let ctx = ToolContext::new(
            Workspace::new(r.canonicalize().unwrap()),
            Vec::new(),
            Default::default(),
        );
        (d, ctx)
    }

    fn args(pattern: &str) -> GrepArgs {
        GrepArgs {
            pattern: pattern.into(),
            path: None,
            include: None,
            ignore_case: None,
        }
    }

    #[test]
    fn grouped_by_file_with_line_numbers() {
        let (_d, c) = setup();
        let out = grep(
            &GrepArgs {
                ignore_case: Some(true),
                ..args("hello")
            },
            &c,
        )
        .unwrap();
        assert_eq!(
            out,
            "Found 2 matching lines in 2 files:\nsrc/a.rs:\n  2:     println!(\"Hello\");\nsrc/b.py:\n  2:     print('hello')\n"
        );
    }

    #[test]
    fn include_and_path_narrow_the_search() {
        let (_d, c) = setup();
        let out = grep(
            &GrepArgs {
                include: Some("*.py".into()),
                ..args("main")
            },
            &c,
        )
        .unwrap();
        assert_eq!(
            out,
            "Found 1 matching line in 1 file:\nsrc/b.py:\n  1: def main():\n"
        );
        let out = grep(
            &GrepArgs {
                path: Some("src/a.rs".into()),
                ..args("main")
            },
            &c,
        )
        .unwrap();
        assert_eq!(
            out,
            "Found 1 matching line in 1 file:\nsrc/a.rs:\n  1: fn main() {\n"
        );
    }

    #[test]
    fn errors_and_no_match() {
        let (_d, c) = setup();
        assert!(
            grep(&args("fn("), &c)
                .unwrap_err()
                .0
                .contains("invalid regex `fn(`")
        );
        assert_eq!(
            grep(&args("zzz"), &c).unwrap(),
            "No matches for `zzz` in `.`."
        );
        assert!(
            grep(
                &GrepArgs {
                    path: Some("nope".into()),
                    ..args("x")
                },
                &c
            )
            .unwrap_err()
            .0
            .contains("path not found")
        );
    }

    #[test]
    fn caps_lines_and_cuts_long_lines() {
        let (d, c) = setup();
        let body: String = (0..MAX_LINES + 50)
            .map(|i| format!("needle {i} {}\n", "z".repeat(400)))
            .collect();
        std::fs::write(d.path().join("many.txt"), body).unwrap();
        let out = grep(&args("needle"), &c).unwrap();
        assert!(out.starts_with(&format!(
            "Found {} matching lines in 1 file:\n",
            MAX_LINES + 50
        )));
        assert!(out.contains("more characters cut]"));
        assert!(out.ends_with(&format!(
            "(showing {MAX_LINES} of {} matching lines; narrow the pattern, `path` or `include`)\n",
            MAX_LINES + 50
        )));
    }
}
