//! The project directory and the rule for paths the model names: they resolve
//! against the workspace root, are normalised (`.`, `..`, symlinks of the
//! existing part), and must stay inside it.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    home: Option<PathBuf>,
    /// agent's own settings and records (see `Config::agent_files`).
    protected: Vec<PathBuf>,
}

impl Workspace {
    /// `root` must be canonical (the config layer canonicalises it).
    pub fn new(root: PathBuf) -> Workspace {
        // Canonical, like the workspace: paths are compared as resolved.
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .map(|h| h.canonicalize().unwrap_or(h));
        Workspace {
            root,
            home,
            protected: Vec::new(),
        }
    }

    /// Marks agent's own files: writing them is protected.
    pub fn protecting(mut self, paths: Vec<PathBuf>) -> Workspace {
        self.protected = paths;
        self
    }

    /// What the shell analysis and the risk rules need to place paths.
    pub fn path_env(&self) -> crate::shell::PathEnv {
        crate::shell::PathEnv::new(self.root.clone(), self.home.clone())
            .protecting(self.protected.clone())
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The absolute, normalised form of a path the model gave. Symlinks in
    /// the part that exists are resolved, so a link pointing outside is seen
    /// as the outside path it is (the gate then asks).
    pub fn absolute(&self, path: &str) -> PathBuf {
        let path = path.trim();
        let joined = if let Some(rest) = path.strip_prefix("~/") {
            std::env::var_os("HOME")
                .map_or_else(|| self.root.join(path), |h| PathBuf::from(h).join(rest))
        } else if path.is_empty() {
            self.root.clone()
        } else {
            self.root.join(path)
        };
        let normal = crate::shell::paths::normalize(&joined);
        // Canonicalise the longest existing ancestor and re-attach the rest.
        let mut existing = normal.as_path();
        let mut rest = Vec::new();
        loop {
            if let Ok(canonical) = existing.canonicalize() {
                return rest.iter().rev().fold(canonical, |p, c| p.join(c));
            }
            match (existing.parent(), existing.file_name()) {
                (Some(parent), Some(name)) => {
                    rest.push(name.to_os_string());
                    existing = parent;
                }
                _ => return normal,
            }
        }
    }

    /// How to show a path to the model and the person: relative when inside.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }

    /// Up to three existing files whose names look like `missing`'s, for a
    /// "did you mean" hint.
    pub fn similar_files(&self, missing: &Path) -> Vec<String> {
        const MAX_SCANNED: usize = 20_000;
        let Some(want) = missing
            .file_name()
            .map(|n| n.to_string_lossy().to_lowercase())
        else {
            return Vec::new();
        };
        let want_rel = self.display(missing).to_lowercase();
        let mut scored: Vec<(f64, String)> = walker(&self.root)
            .build()
            .filter_map(Result::ok)
            .take(MAX_SCANNED)
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().to_lowercase();
                let rel = self.display(e.path());
                // The name decides; the rest of the path only breaks ties.
                let score = strsim::normalized_levenshtein(&want, &name)
                    + strsim::normalized_levenshtein(&want_rel, &rel.to_lowercase()) * 0.01;
                (score >= 0.6).then_some((score, rel))
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        scored.into_iter().take(3).map(|(_, p)| p).collect()
    }
}

/// A directory walker with the project's rules: ignore files are honoured even
/// outside a git repository, and `.git` itself is never entered.
pub fn walker(path: &Path) -> ignore::WalkBuilder {
    let mut w = ignore::WalkBuilder::new(path);
    w.require_git(false)
        .filter_entry(|e| !skipped(e.file_name()));
    w
}

/// What no walk shows: `.git`, and the temporary file of a write in
/// progress (or of one a crash interrupted, until the next start removes it).
pub fn skipped(name: &std::ffi::OsStr) -> bool {
    name == ".git" || super::files::temp_writer(name).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/main.rs"), "fn main() {}").unwrap();
        (dir, Workspace::new(root))
    }

    #[test]
    fn relative_and_dotted_paths_stay_inside() {
        let (_d, w) = ws();
        assert_eq!(
            w.absolute("src/../src/./main.rs"),
            w.root().join("src/main.rs")
        );
        assert_eq!(w.absolute(""), w.root());
        assert_eq!(
            w.absolute("new/dir/file.txt"),
            w.root().join("new/dir/file.txt")
        );
    }

    #[test]
    fn escapes_resolve_outside() {
        let (_d, w) = ws();
        for p in ["../x", "/etc/passwd", "src/../../x"] {
            assert!(!w.absolute(p).starts_with(w.root()), "{p}");
        }
    }

    #[test]
    fn symlink_pointing_outside_resolves_to_its_target() {
        let (_d, w) = ws();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), w.root().join("link")).unwrap();
        let target = outside.path().canonicalize().unwrap().join("secret");
        assert_eq!(w.absolute("link/secret"), target);
    }

    #[test]
    fn similar_files_suggests_near_names() {
        let (_d, w) = ws();
        assert_eq!(
            w.similar_files(&w.root().join("src/mian.rs")),
            vec!["src/main.rs".to_string()]
        );
    }
}
