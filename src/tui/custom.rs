//! Custom slash commands: Markdown files whose text becomes the prompt,
//! from `~/.config/agent/commands/` (next to the user config),
//! `~/.claude/commands/`, and the project's `.claude/commands/` and
//! `.agent/commands/` (later ones win over earlier ones of the same name;
//! the built-in commands win over all). `commands/git/log.md` is
//! `/git:log`. A YAML front matter's `description` is shown in `/help`.
//! `$ARGUMENTS` is what follows the command; `$1`…`$9` its words. Only
//! text: a command file runs nothing by itself, so a project's are loaded
//! whether or not it is trusted (what it asks goes through the gate).

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq)]
pub struct Custom {
    pub name: String,
    pub description: String,
    template: String,
}

/// Command files larger than this are skipped.
const MAX_BYTES: u64 = 64 * 1024;

/// The commands found in `dirs`, in order (a later one replaces an
/// earlier one of the same name).
pub fn load(dirs: &[PathBuf]) -> Vec<Custom> {
    let mut found: Vec<Custom> = Vec::new();
    for dir in dirs {
        for (name, path) in files(dir) {
            let Some(custom) = read(&name, &path) else {
                continue;
            };
            found.retain(|c| c.name != custom.name);
            found.push(custom);
        }
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    found
}

/// `name.md` and `group/name.md` (as `group:name`), sorted.
fn files(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let path = e.path();
        let Some(stem) = path
            .file_stem()
            .and_then(|s| s.to_str())
            .map(str::to_string)
        else {
            continue;
        };
        if path.is_dir() {
            for (inner, p) in files(&path) {
                if !inner.contains(':') {
                    out.push((format!("{stem}:{inner}"), p));
                }
            }
        } else if path.extension().is_some_and(|x| x == "md") {
            out.push((stem, path));
        }
    }
    out.sort();
    out
}

fn read(name: &str, path: &Path) -> Option<Custom> {
    let valid = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':'));
    if !valid || std::fs::metadata(path).ok()?.len() > MAX_BYTES {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let (front, body) = match text.strip_prefix("---\n") {
        Some(rest) => match rest.split_once("\n---") {
            Some((front, body)) => (
                front,
                body.trim_start_matches(['-']).trim_start_matches('\n'),
            ),
            None => ("", text.as_str()),
        },
        None => ("", text.as_str()),
    };
    let description = front
        .lines()
        .find_map(|l| l.strip_prefix("description:"))
        .map(|d| d.trim().trim_matches('"').to_string())
        .unwrap_or_else(|| {
            body.lines()
                .find(|l| !l.trim().is_empty())
                .map(|l| crate::text::cut_line(l.trim_start_matches('#').trim(), 60))
                .unwrap_or_default()
        });
    Some(Custom {
        name: name.to_string(),
        description,
        template: body.trim().to_string(),
    })
}

impl Custom {
    /// The prompt for `/name ARGS`.
    pub fn expand(&self, args: &str) -> String {
        let args = args.trim();
        let words: Vec<&str> = args.split_whitespace().collect();
        let mut out = self.template.replace("$ARGUMENTS", args);
        for i in (1..=9).rev() {
            out = out.replace(&format!("${i}"), words.get(i - 1).copied().unwrap_or(""));
        }
        if !self.template.contains("$ARGUMENTS")
            && !self.template.contains("$1")
            && !args.is_empty()
        {
            out.push_str("\n\n");
            out.push_str(args);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_load_in_order_with_arguments_and_groups() {
        let user = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        std::fs::write(user.path().join("review.md"), "Review it.\n").unwrap();
        std::fs::write(
            project.path().join("review.md"),
            "---\ndescription: Review a file carefully\n---\nReview $ARGUMENTS for bugs; start with $1.\n",
        )
        .unwrap();
        std::fs::create_dir(project.path().join("git")).unwrap();
        std::fs::write(
            project.path().join("git/log.md"),
            "# Summarize the log\nSummarize git log.\n",
        )
        .unwrap();
        std::fs::write(project.path().join("bad name.md"), "x").unwrap();
        let all = load(&[user.path().to_path_buf(), project.path().to_path_buf()]);
        let names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["git:log", "review"]);
        let review = &all[1];
        assert_eq!(review.description, "Review a file carefully");
        assert_eq!(
            review.expand("a.rs b.rs"),
            "Review a.rs b.rs for bugs; start with a.rs."
        );
        assert_eq!(all[0].description, "Summarize the log");
        assert_eq!(
            all[0].expand("since monday"),
            "# Summarize the log\nSummarize git log.\n\nsince monday"
        );
    }
}
