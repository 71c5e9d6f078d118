//! The system prompt: `templates/system.md` with the environment filled in,
//! plus the project's own `AGENTS.md` when it has one.

use std::path::{Path, PathBuf};

use crate::tools::render;

/// More than this of a project's AGENTS.md is cut, to keep the prompt small.
const MAX_PROJECT_NOTES: usize = 32 * 1024;

/// What every prompt says about where the agent runs: `{cwd}`,
/// `{platform}`, `{date}`.
pub(super) fn environment(workspace: &Path) -> Vec<(&'static str, String)> {
    vec![
        ("cwd", workspace.display().to_string()),
        (
            "platform",
            format!("{} ({})", std::env::consts::OS, std::env::consts::ARCH),
        ),
        ("date", time::OffsetDateTime::now_utc().date().to_string()),
    ]
}

/// A file of instructions, if it is a regular file inside `root` once
/// symlinks are resolved and no deny rule covers it: a cloned repository's
/// `AGENTS.md -> ~/.ssh/id_rsa` (or a FIFO that never ends) must not reach
/// the prompt. At most what is shown is read.
fn notes(path: &Path, root: &Path, denied: &dyn Fn(&Path) -> bool) -> Option<(PathBuf, String)> {
    let real = path.canonicalize().ok()?;
    if !real.starts_with(root) || denied(&real) || denied(path) {
        return None;
    }
    let bytes =
        crate::tools::read_project_file(&real, (MAX_PROJECT_NOTES * 4 + 4) as u64).ok()??;
    Some((
        path.to_path_buf(),
        String::from_utf8_lossy(&bytes).into_owned(),
    ))
}

/// The instruction files a session in `workspace` loads, in order: the
/// person's own (`global`, e.g. `~/.config/agent/AGENTS.md`), then from the
/// project root (git root or the directory with `.agent/`) down to the
/// working directory, nearer ones later. In a directory without an
/// `AGENTS.md`, a `CLAUDE.md` is read instead.
pub fn instructions_files(
    workspace: &Path,
    global: Option<&Path>,
    denied: &dyn Fn(&Path) -> bool,
) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    if let Some(g) = global
        && let Some(dir) = g.parent().and_then(|d| d.canonicalize().ok())
        && let Some(found) = notes(g, &dir, &|_| false)
    {
        out.push(found);
    }
    let Ok(workspace) = workspace.canonicalize() else {
        return out;
    };
    let root = crate::transcript::store::project_root(&workspace);
    let mut dirs: Vec<&Path> = workspace
        .ancestors()
        .take_while(|d| d.starts_with(&root))
        .collect();
    dirs.reverse();
    for dir in dirs {
        let found = notes(&dir.join("AGENTS.md"), &root, denied)
            .or_else(|| notes(&dir.join("CLAUDE.md"), &root, denied));
        out.extend(found);
    }
    out
}

/// The system prompt and the instruction files it includes.
pub fn system_prompt(
    workspace: &Path,
    global: Option<&Path>,
    denied: &dyn Fn(&Path) -> bool,
) -> (String, Vec<PathBuf>) {
    let mut prompt = render(
        include_str!("../../templates/system.md"),
        &environment(workspace),
    );
    let files = instructions_files(workspace, global, denied);
    for (path, notes) in &files {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let notes = match notes.char_indices().nth(MAX_PROJECT_NOTES) {
            Some((i, _)) => format!(
                "{}\n[{name} cut at {MAX_PROJECT_NOTES} characters]",
                &notes[..i]
            ),
            None => notes.clone(),
        };
        let place = match global {
            Some(g) if g == path => "your own instructions, for every project".to_string(),
            _ => path.display().to_string(),
        };
        prompt.push_str(&format!("\n\n# Instructions ({name}: {place})\n\n"));
        prompt.push_str(notes.trim());
    }
    (prompt, files.into_iter().map(|(p, _)| p).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_environment_and_appends_agents_md() {
        let d = tempfile::tempdir().unwrap();
        let p = system_prompt(d.path(), None, &|_| false).0;
        assert!(p.contains(&format!(
            "Working directory (project root): {}",
            d.path().display()
        )));
        assert!(p.contains(&format!("Platform: {}", std::env::consts::OS)));
        assert!(!p.contains("{{"), "unfilled placeholder in {p}");
        assert!(!p.contains("# Instructions"));
        std::fs::write(d.path().join("AGENTS.md"), "Always use tabs.").unwrap();
        assert!(
            system_prompt(d.path(), None, &|_| false)
                .0
                .ends_with("AGENTS.md)\n\nAlways use tabs.")
        );
        // A deny rule covers it like a `view`.
        assert!(
            !system_prompt(d.path(), None, &|p| p.ends_with("AGENTS.md"))
                .0
                .contains("tabs")
        );
    }

    #[test]
    fn loads_global_then_root_down_to_cwd_with_claude_md_as_fallback() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("pkg/sub")).unwrap();
        std::fs::write(root.join("AGENTS.md"), "root rules").unwrap();
        std::fs::write(root.join("CLAUDE.md"), "not read: AGENTS.md is here").unwrap();
        std::fs::write(root.join("pkg/CLAUDE.md"), "pkg rules").unwrap();
        std::fs::write(root.join("pkg/sub/AGENTS.md"), "sub rules").unwrap();
        let home = tempfile::tempdir().unwrap();
        let global = home.path().join("AGENTS.md");
        std::fs::write(&global, "my rules").unwrap();
        let (p, files) = system_prompt(&root.join("pkg/sub"), Some(&global), &|_| false);
        assert_eq!(
            files,
            vec![
                global.clone(),
                root.join("AGENTS.md"),
                root.join("pkg/CLAUDE.md"),
                root.join("pkg/sub/AGENTS.md")
            ]
        );
        let at = |s: &str| p.find(s).unwrap_or_else(|| panic!("{s} missing in {p}"));
        assert!(at("my rules") < at("root rules"));
        assert!(at("root rules") < at("pkg rules") && at("pkg rules") < at("sub rules"));
        assert!(!p.contains("not read"));
    }

    #[test]
    fn agents_md_must_be_a_regular_file_inside_the_project() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("id_rsa"), "PRIVATE KEY").unwrap();
        let d = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path().join("id_rsa"), d.path().join("AGENTS.md"))
            .unwrap();
        let p = system_prompt(d.path(), None, &|_| false).0;
        assert!(!p.contains("PRIVATE KEY"), "{p}");
        assert!(!p.contains("# Instructions"));
        // A link to a file inside the project is followed.
        std::fs::remove_file(d.path().join("AGENTS.md")).unwrap();
        std::fs::write(d.path().join("NOTES.md"), "Use tabs.").unwrap();
        std::os::unix::fs::symlink("NOTES.md", d.path().join("AGENTS.md")).unwrap();
        assert!(
            system_prompt(d.path(), None, &|_| false)
                .0
                .ends_with("Use tabs.")
        );
        // A FIFO is never read (it would block the start forever).
        std::fs::remove_file(d.path().join("AGENTS.md")).unwrap();
        let fifo = std::ffi::CString::new(d.path().join("AGENTS.md").to_str().unwrap()).unwrap();
        // SAFETY: creates a FIFO at a path we own.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        assert!(
            !system_prompt(d.path(), None, &|_| false)
                .0
                .contains("# Instructions")
        );
    }
}
