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

pub fn system_prompt(workspace: &Path) -> String {
    let mut prompt = render(
        include_str!("../../templates/system.md"),
        &environment(workspace),
    );
    if let Ok(notes) = std::fs::read_to_string(workspace.join("AGENTS.md")) {
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
        let p = system_prompt(d.path());
        assert!(p.contains(&format!(
            "Working directory (project root): {}",
            d.path().display()
        )));
        assert!(p.contains(&format!("Platform: {}", std::env::consts::OS)));
        assert!(!p.contains("{{"), "unfilled placeholder in {p}");
        assert!(!p.contains("Project instructions"));
        std::fs::write(d.path().join("AGENTS.md"), "Always use tabs.").unwrap();
        assert!(
            system_prompt(d.path())
                .ends_with("# Project instructions (AGENTS.md)\n\nAlways use tabs.")
        );
    }
}
