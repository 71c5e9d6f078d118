//! The system prompt: `templates/system.md` with the environment filled in,
//! plus the project's own `AGENTS.md` when it has one.

use std::path::Path;

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

/// The project's `AGENTS.md`, if it is a regular file inside the workspace
/// once symlinks are resolved and no deny rule covers it: a cloned
/// repository's `AGENTS.md -> ~/.ssh/id_rsa` (or a FIFO that never ends)
/// must not reach the prompt. At most what is shown is read.
fn project_notes(workspace: &Path, denied: &dyn Fn(&Path) -> bool) -> Option<String> {
    let root = workspace.canonicalize().ok()?;
    let path = root.join("AGENTS.md").canonicalize().ok()?;
    if !path.starts_with(&root) || denied(&path) || denied(&root.join("AGENTS.md")) {
        return None;
    }
    let bytes =
        crate::tools::read_project_file(&path, (MAX_PROJECT_NOTES * 4 + 4) as u64).ok()??;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

pub fn system_prompt(workspace: &Path, denied: &dyn Fn(&Path) -> bool) -> String {
    let mut prompt = render(
        include_str!("../../templates/system.md"),
        &environment(workspace),
    );
    if let Some(notes) = project_notes(workspace, denied) {
        let notes = match notes.char_indices().nth(MAX_PROJECT_NOTES) {
            Some((i, _)) => format!(
                "{}\n[AGENTS.md cut at {MAX_PROJECT_NOTES} characters]",
                &notes[..i]
            ),
            None => notes,
        };
        prompt.push_str("\n\n# Project instructions (AGENTS.md)\n\n");
        prompt.push_str(notes.trim());
    }
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_environment_and_appends_agents_md() {
        let d = tempfile::tempdir().unwrap();
        let p = system_prompt(d.path(), &|_| false);
        assert!(p.contains(&format!(
            "Working directory (project root): {}",
            d.path().display()
        )));
        assert!(p.contains(&format!("Platform: {}", std::env::consts::OS)));
        assert!(!p.contains("{{"), "unfilled placeholder in {p}");
        assert!(!p.contains("Project instructions"));
        std::fs::write(d.path().join("AGENTS.md"), "Always use tabs.").unwrap();
        assert!(
            system_prompt(d.path(), &|_| false)
                .ends_with("# Project instructions (AGENTS.md)\n\nAlways use tabs.")
        );
        // A deny rule covers it like a `view`.
        assert!(!system_prompt(d.path(), &|p| p.ends_with("AGENTS.md")).contains("tabs"));
    }

    #[test]
    fn agents_md_must_be_a_regular_file_inside_the_project() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("id_rsa"), "PRIVATE KEY").unwrap();
        let d = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path().join("id_rsa"), d.path().join("AGENTS.md"))
            .unwrap();
        let p = system_prompt(d.path(), &|_| false);
        assert!(!p.contains("PRIVATE KEY"), "{p}");
        assert!(!p.contains("Project instructions"));
        // A link to a file inside the project is followed.
        std::fs::remove_file(d.path().join("AGENTS.md")).unwrap();
        std::fs::write(d.path().join("NOTES.md"), "Use tabs.").unwrap();
        std::os::unix::fs::symlink("NOTES.md", d.path().join("AGENTS.md")).unwrap();
        assert!(system_prompt(d.path(), &|_| false).ends_with("Use tabs."));
        // A FIFO is never read (it would block the start forever).
        std::fs::remove_file(d.path().join("AGENTS.md")).unwrap();
        let fifo = std::ffi::CString::new(d.path().join("AGENTS.md").to_str().unwrap()).unwrap();
        // SAFETY: creates a FIFO at a path we own.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        assert!(!system_prompt(d.path(), &|_| false).contains("Project instructions"));
    }
}
