//! The warning log: `<data>/agent.log`, never the screen (the TUI owns it).
//! Every layer may write to it; it imports nothing of the crate.

use std::io::Write;
use std::path::{Path, PathBuf};

static LOG: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Where warnings go: `<data>/agent.log`, never the screen (the TUI owns it).
pub fn set_log_dir(data_dir: &Path) {
    let _ = LOG.set(data_dir.join("agent.log"));
}

/// Appends a warning to the log file, best effort.
pub fn log(line: &str) {
    let Some(path) = LOG.get() else { return };
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let _ = writeln!(f, "{now} {line}");
    }
}
