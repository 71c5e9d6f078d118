//! `glob`: files matching a glob pattern (`globset`), found with `ignore`'s
//! parallel walker, newest first, capped.

use std::path::Path;
use std::sync::Mutex;
use std::time::SystemTime;

use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkState;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Effect, Tool, ToolContext, ToolError, blocking, render};

pub const MAX_RESULTS: usize = 100;

pub struct Glob;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct GlobArgs {
    /// Glob pattern, e.g. `*.rs` or `src/**/*.ts`.
    pattern: String,
    /// Directory to search, relative to the project root. Default: the root.
    path: Option<String>,
}

impl Tool for Glob {
    type Args = GlobArgs;
    const NAME: &'static str = "glob";

    fn description(&self, _ctx: &ToolContext) -> String {
        render(
            include_str!("../../templates/glob.md"),
            &[("max_results", MAX_RESULTS.to_string())],
        )
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    fn paths(args: &GlobArgs) -> Vec<&str> {
        args.path.as_deref().into_iter().collect()
    }

    fn summary(args: &GlobArgs) -> String {
        args.pattern.clone()
    }

    async fn run(&self, args: GlobArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let ctx = ctx.clone();
        blocking(move || glob(&args, &ctx)).await
    }
}

/// A compiled file-name or path pattern, shared with `grep`'s `include`.
pub(crate) struct PathPattern {
    matcher: GlobMatcher,
    /// Without a `/`, the pattern is matched against the file name only.
    name_only: bool,
    /// The pattern names a hidden component, so hidden files are walked.
    pub wants_hidden: bool,
}

impl PathPattern {
    pub fn new(pattern: &str) -> Result<PathPattern, ToolError> {
        let pattern = pattern.trim().trim_start_matches("./");
        let matcher = GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| ToolError::new(format!("invalid glob pattern `{pattern}`: {e}")))?
            .compile_matcher();
        Ok(PathPattern {
            matcher,
            name_only: !pattern.contains('/'),
            wants_hidden: pattern
                .split('/')
                .any(|c| c.starts_with('.') && c != "." && c != ".."),
        })
    }

    /// `rel` is the path relative to the search root.
    pub fn matches(&self, rel: &Path) -> bool {
        if self.name_only {
            rel.file_name().is_some_and(|n| self.matcher.is_match(n))
        } else {
            self.matcher.is_match(rel)
        }
    }
}

fn glob(args: &GlobArgs, ctx: &ToolContext) -> Result<String, ToolError> {
    let ws = &ctx.workspace;
    let dir = ws.absolute(args.path.as_deref().unwrap_or("."));
    if !dir.is_dir() {
        return Err(ToolError::new(format!(
            "`{}` is not a directory; give `path` as a directory to search in",
            ws.display(&dir)
        )));
    }
    let pattern = PathPattern::new(&args.pattern)?;
    let found: Mutex<Vec<(SystemTime, String)>> = Mutex::new(Vec::new());
    ctx.walker(&dir)
        .hidden(!pattern.wants_hidden)
        .build_parallel()
        .run(|| {
            let (pattern, dir) = (&pattern, &dir);
            // Each worker keeps its matches and hands them over when it ends
            // (on drop), so the walk itself never takes the lock.
            let mut flush = Flush {
                local: Vec::new(),
                into: &found,
            };
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if entry.file_type().is_some_and(|t| t.is_file())
                    && let Ok(rel) = entry.path().strip_prefix(dir)
                    && pattern.matches(rel)
                {
                    let modified = entry
                        .metadata()
                        .ok()
                        .and_then(|m| m.modified().ok())
                        .unwrap_or(SystemTime::UNIX_EPOCH);
                    flush.local.push((modified, ws.display(entry.path())));
                }
                WalkState::Continue
            })
        });
    let mut found = found.into_inner().unwrap_or_else(|p| p.into_inner());
    if found.is_empty() {
        return Ok(format!(
            "No files match `{}` in `{}`.",
            args.pattern,
            ws.display(&dir)
        ));
    }
    found.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let total = found.len();
    let mut out: String = found
        .iter()
        .take(MAX_RESULTS)
        .map(|(_, p)| format!("{p}\n"))
        .collect();
    if total > MAX_RESULTS {
        out.push_str(&format!("(showing {MAX_RESULTS} of {total} files, newest first; use a narrower pattern or path)\n"));
    }
    Ok(out)
}

/// Moves a worker's matches into the shared list when the worker ends.
pub(crate) struct Flush<'a, T> {
    pub local: Vec<T>,
    pub into: &'a Mutex<Vec<T>>,
}

impl<T> Drop for Flush<'_, T> {
    fn drop(&mut self) {
        let mut shared = self.into.lock().unwrap_or_else(|p| p.into_inner());
        shared.append(&mut self.local);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::tools::Workspace;

    fn setup() -> (tempfile::TempDir, ToolContext) {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        for f in [
            "src/a.rs",
            "src/b/c.rs",
            "README.md",
            "target/x.rs",
            ".github/ci.yml",
        ] {
            std::fs::create_dir_all(r.join(f).parent().unwrap()).unwrap();
            std::fs::write(r.join(f), "").unwrap();
        }
        std::fs::write(r.join(".gitignore"), "target/\n").unwrap();
        let old = SystemTime::now() - Duration::from_secs(100);
        std::fs::File::options()
            .write(true)
            .open(r.join("src/b/c.rs"))
            .unwrap()
            .set_modified(old)
            .unwrap();
        let ctx = ToolContext::new(
            Workspace::new(r.canonicalize().unwrap()),
            Vec::new(),
            Default::default(),
        );
        (d, ctx)
    }

    fn run(c: &ToolContext, pattern: &str, path: Option<&str>) -> Result<String, ToolError> {
        glob(
            &GlobArgs {
                pattern: pattern.into(),
                path: path.map(Into::into),
            },
            c,
        )
    }

    #[test]
    fn name_patterns_match_anywhere_newest_first() {
        let (_d, c) = setup();
        assert_eq!(run(&c, "*.rs", None).unwrap(), "src/a.rs\nsrc/b/c.rs\n");
    }

    #[test]
    fn path_patterns_are_relative_to_path() {
        let (_d, c) = setup();
        assert_eq!(run(&c, "b/*.rs", Some("src")).unwrap(), "src/b/c.rs\n");
        assert_eq!(run(&c, "src/*.rs", None).unwrap(), "src/a.rs\n");
        assert_eq!(run(&c, ".github/*.yml", None).unwrap(), ".github/ci.yml\n");
    }

    #[test]
    fn no_match_bad_pattern_and_cap() {
        let (d, c) = setup();
        assert_eq!(
            run(&c, "*.zig", None).unwrap(),
            "No files match `*.zig` in `.`."
        );
        assert!(
            run(&c, "a[", None)
                .unwrap_err()
                .0
                .contains("invalid glob pattern")
        );
        for i in 0..MAX_RESULTS + 1 {
            std::fs::write(d.path().join(format!("n{i}.txt")), "").unwrap();
        }
        let out = run(&c, "*.txt", None).unwrap();
        assert!(out.ends_with(&format!("(showing {MAX_RESULTS} of {} files, newest first; use a narrower pattern or path)\n", MAX_RESULTS + 1)), "{out}");
    }
}
