//! `@` mentions: the project's files as walks see them (`.gitignore`
//! respected, files deny rules forbid reading left out), matched fuzzily
//! against what follows the `@` under the cursor with nucleo (Helix's
//! matcher, scored for paths), for the popup above the composer.

use std::path::Path;

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher};

/// Files listed at most: a larger project shows the first ones walked.
pub const MAX_FILES: usize = 50_000;

/// Matches shown in the popup.
pub const SHOWN: usize = 8;

/// The project's files under `root`, relative to it, in walk order.
pub fn list(root: &Path, denied: &dyn Fn(&Path) -> bool) -> Vec<String> {
    crate::tools::workspace::walker(root)
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()) && !denied(e.path()))
        .filter_map(|e| {
            e.path()
                .strip_prefix(root)
                .ok()
                .map(|p| p.to_string_lossy().into_owned())
        })
        // `@path` ends at whitespace, so such a path could not be attached.
        .filter(|p| !p.contains(char::is_whitespace))
        .take(MAX_FILES)
        .collect()
}

/// The `@word` the cursor ends: where its `@` is, and what follows it.
pub fn query(text: &str, cursor: usize) -> Option<(usize, &str)> {
    let before = text.get(..cursor)?;
    let start = before.rfind(char::is_whitespace).map_or(0, |i| {
        i + before[i..].chars().next().map_or(1, char::len_utf8)
    });
    before[start..].strip_prefix('@').map(|q| (start, q))
}

pub struct Mentions {
    files: Vec<String>,
    matcher: Matcher,
}

impl Default for Mentions {
    fn default() -> Self {
        Mentions {
            files: Vec::new(),
            matcher: Matcher::new(Config::DEFAULT.match_paths()),
        }
    }
}

impl Mentions {
    pub fn set_files(&mut self, files: Vec<String>) {
        self.files = files;
    }

    /// The best [`SHOWN`] files for `query`, best first; the first files
    /// for an empty one.
    pub fn matches(&mut self, query: &str) -> Vec<String> {
        if query.is_empty() {
            return self.files.iter().take(SHOWN).cloned().collect();
        }
        let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
        pattern
            .match_list(self.files.iter(), &mut self.matcher)
            .into_iter()
            .take(SHOWN)
            .map(|(f, _)| f.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_under_the_cursor_is_the_query() {
        assert_eq!(query("see @src/ma", 11), Some((4, "src/ma")));
        assert_eq!(query("@", 1), Some((0, "")));
        assert_eq!(query("see @a and b", 12), None);
        assert_eq!(query("mail me@x", 9), None);
        assert_eq!(query("é @x", 5), Some((3, "x")));
    }

    #[test]
    fn files_are_matched_fuzzily_and_ignored_ones_are_not_listed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/tui")).unwrap();
        std::fs::create_dir_all(root.join("target")).unwrap();
        for f in [
            "src/main.rs",
            "src/tui/mod.rs",
            "README.md",
            "target/big.bin",
            "secret.env",
            "my notes.txt",
        ] {
            std::fs::write(root.join(f), "x").unwrap();
        }
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        let files = list(root, &|p| p.ends_with("secret.env"));
        assert!(files.contains(&"src/tui/mod.rs".to_string()), "{files:?}");
        assert!(!files.iter().any(|f| f.starts_with("target")), "{files:?}");
        assert!(!files.iter().any(|f| f.contains("secret")), "{files:?}");
        assert!(!files.iter().any(|f| f.contains("notes")), "{files:?}");
        let mut m = Mentions::default();
        m.set_files(files);
        assert_eq!(
            m.matches("tuimod").first().map(String::as_str),
            Some("src/tui/mod.rs")
        );
        assert_eq!(
            m.matches("srcmain").first().map(String::as_str),
            Some("src/main.rs")
        );
        assert!(m.matches("zzz").is_empty());
        assert!(!m.matches("").is_empty());
    }
}
