//! Which projects the person trusted to run their hooks. A cloned repository
//! must not run commands on its own, so a project's hooks run only after the
//! person said yes once, and again whenever the hooks change: the record
//! keeps a fingerprint of the hook commands that were trusted.
//!
//! Stored as `<data>/trusted-projects.json`: `{"/abs/project": "fingerprint"}`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

fn store(data_dir: &Path) -> PathBuf {
    data_dir.join("trusted-projects.json")
}

fn load(data_dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(store(data_dir))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// Whether `workspace` was trusted with exactly these hooks.
pub fn is_trusted(data_dir: &Path, workspace: &Path, fingerprint: &str) -> bool {
    load(data_dir)
        .get(&workspace.display().to_string())
        .is_some_and(|f| f == fingerprint)
}

/// Records the person's trust, atomically (a crash leaves the old record).
pub fn record(data_dir: &Path, workspace: &Path, fingerprint: &str) -> std::io::Result<()> {
    let mut all = load(data_dir);
    all.insert(workspace.display().to_string(), fingerprint.to_string());
    std::fs::create_dir_all(data_dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(data_dir)?;
    serde_json::to_writer_pretty(&mut tmp, &all)?;
    tmp.write_all(b"\n")?;
    tmp.as_file().sync_all()?;
    tmp.persist(store(data_dir)).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_is_per_project_and_per_fingerprint() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (Path::new("/p/a"), Path::new("/p/b"));
        assert!(!is_trusted(d.path(), a, "f1"));
        record(d.path(), a, "f1").unwrap();
        assert!(is_trusted(d.path(), a, "f1"));
        assert!(!is_trusted(d.path(), a, "f2"), "changed hooks ask again");
        assert!(!is_trusted(d.path(), b, "f1"));
        record(d.path(), b, "f1").unwrap();
        assert!(is_trusted(d.path(), a, "f1"), "other records are kept");
    }
}
