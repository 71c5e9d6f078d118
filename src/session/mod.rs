//! Sessions on disk: the append-only log of each session (`store.rs`),
//! finding and listing them (`list.rs`), and the warning log (`agent.log`).

pub mod list;
pub mod store;

use std::io::Write;
use std::path::{Path, PathBuf};

pub use list::{FindError, Summary};
pub use store::{Entry, Header, Loaded, Replay, SessionLog, log_path};

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
