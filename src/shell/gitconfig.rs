//! What a repository's own git configuration makes git run. A read such as
//! `git status`, `git log -p` or `git show` runs `core.fsmonitor`, a diff
//! driver's `textconv`, `diff.external`, a `post-index-change` hook...
//! when the repository says so, and a repository that came as files (a
//! tarball, a bare repository committed inside the project) says what its
//! author wants. Such a git command is not a read.

use std::path::{Path, PathBuf};

/// Keys that name a program git may run (lower case; `*` is a subsection).
const RUNS: &[&str] = &[
    "core.fsmonitor",
    "core.sshcommand",
    "core.pager",
    "core.editor",
    "core.askpass",
    "core.hookspath",
    "core.gitproxy",
    "diff.external",
    "diff.*.textconv",
    "diff.*.command",
    "filter.*.clean",
    "filter.*.smudge",
    "filter.*.process",
    "merge.*.driver",
    "credential.helper",
    "credential.*.helper",
    "gpg.program",
    "gpg.*.program",
    "sequence.editor",
    "include.path",
    "includeif.*.path",
    "uploadpack.packobjectshook",
    "remote.*.uploadpack",
    "remote.*.receivepack",
    "remote.*.vcs",
    "pager.*",
    "interactive.difffilter",
];

/// The git directory a command in `start` uses: `.git` (a directory, or
/// a file saying `gitdir: …`) in `start` or above, or `start` or a parent
/// that is itself a bare repository (git's default `safe.bareRepository`).
pub fn git_dir(start: &Path) -> Option<PathBuf> {
    let mut dir = Some(start);
    while let Some(d) = dir {
        let dot = d.join(".git");
        if dot.is_dir() {
            return Some(dot);
        }
        if dot.is_file() {
            let text = std::fs::read_to_string(&dot).ok()?;
            let target = text.trim().strip_prefix("gitdir:")?.trim();
            return Some(d.join(target));
        }
        if d.join("HEAD").is_file() && d.join("objects").is_dir() && d.join("refs").is_dir() {
            return Some(d.to_path_buf());
        }
        dir = d.parent();
    }
    None
}

/// Why git in `start` (with `git_dir`, from `--git-dir`, when given) may
/// run a program the repository chose: the first such setting found.
pub fn runs_programs(start: &Path, git_dir_option: Option<&Path>) -> Option<String> {
    let dir = match git_dir_option {
        Some(d) => d.to_path_buf(),
        None => git_dir(start)?,
    };
    // A linked worktree keeps most settings in the common directory.
    let mut dirs = vec![dir.clone()];
    if let Ok(common) = std::fs::read_to_string(dir.join("commondir")) {
        dirs.push(dir.join(common.trim()));
    }
    for d in &dirs {
        for file in ["config", "config.worktree"] {
            if let Some(key) = std::fs::read_to_string(d.join(file))
                .ok()
                .and_then(|t| program_key(&t))
            {
                return Some(format!(
                    "the repository's git config sets `{key}` ({}), which makes git run a program",
                    d.join(file).display()
                ));
            }
        }
        let hook = d.join("hooks/post-index-change");
        if hook.is_file() {
            return Some(format!(
                "the repository has a `post-index-change` hook ({}), which git runs when it refreshes the index",
                hook.display()
            ));
        }
    }
    None
}

/// The first key in a git config text that names a program.
fn program_key(text: &str) -> Option<String> {
    let mut section = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with(['#', ';']) || line.is_empty() {
            continue;
        }
        let rest = if let Some(header) = line.strip_prefix('[') {
            let (head, after) = header.split_once(']').unwrap_or((header, ""));
            section = match head.split_once(char::is_whitespace) {
                // `[diff "x"]`: the subsection keeps its case but is one word here.
                Some((name, sub)) => {
                    format!("{}.{}", name.to_lowercase(), sub.trim().trim_matches('"'))
                }
                None => head.to_lowercase(),
            };
            after.trim()
        } else {
            line
        };
        if rest.is_empty() || rest.starts_with(['#', ';']) {
            continue;
        }
        let name = rest
            .split(['=', ' ', '\t'])
            .next()
            .unwrap_or_default()
            .to_lowercase();
        let value = rest
            .split_once('=')
            .map(|(_, v)| v.trim())
            .unwrap_or("true");
        let key = format!("{section}.{name}");
        if key == "core.fsmonitor"
            && matches!(
                value.to_lowercase().as_str(),
                "false" | "0" | "no" | "off" | ""
            )
        {
            continue;
        }
        if RUNS.iter().any(|pattern| matches_key(pattern, &key)) {
            return Some(key);
        }
    }
    None
}

/// `diff.*.textconv` matches `diff.x.textconv` (and `diff.a.b.textconv`).
fn matches_key(pattern: &str, key: &str) -> bool {
    match pattern.split_once(".*.") {
        Some((head, tail)) => {
            key.starts_with(&format!("{head}."))
                && key.ends_with(&format!(".{tail}"))
                && key.len() > head.len() + tail.len() + 2
        }
        None => match pattern.strip_suffix(".*") {
            Some(head) => key.starts_with(&format!("{head}.")),
            None => key == pattern,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_that_run_programs_are_found() {
        assert_eq!(
            program_key("[core]\n\tfsmonitor = touch x\n").as_deref(),
            Some("core.fsmonitor")
        );
        assert_eq!(program_key("[core]\n\tfsmonitor = false\n"), None);
        assert_eq!(
            program_key("[diff \"X\"]\ntextconv = sh\n").as_deref(),
            Some("diff.X.textconv")
        );
        assert_eq!(
            program_key("[Diff]\nExternal = sh\n").as_deref(),
            Some("diff.external")
        );
        assert_eq!(program_key("[core.fsMonitor]\n"), None);
        assert_eq!(
            program_key("[includeIf \"gitdir:/x\"]\npath = y\n").as_deref(),
            Some("includeif.gitdir:/x.path")
        );
        assert_eq!(
            program_key(
                "[core]\nrepositoryformatversion = 0\nbare = false\n[remote \"origin\"]\nurl = x\nfetch = +refs/*\n[branch \"main\"]\nremote = origin\n"
            ),
            None
        );
    }

    #[test]
    fn a_bare_repository_inside_the_project_is_found() {
        let d = tempfile::tempdir().unwrap();
        let bare = d.path().join("vendor/evil");
        std::fs::create_dir_all(bare.join("objects")).unwrap();
        std::fs::create_dir_all(bare.join("refs")).unwrap();
        std::fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(bare.join("config"), "[diff]\n\texternal = touch pwned\n").unwrap();
        assert_eq!(git_dir(&bare), Some(bare.clone()));
        let why = runs_programs(&bare, None).unwrap();
        assert!(why.contains("diff.external"), "{why}");
        assert!(runs_programs(d.path(), None).is_none());
    }
}
