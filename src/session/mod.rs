//! Session persistence: each session's transcript is written to
//! `<data>/sessions/<id>.json` after every turn, atomically (a temporary file
//! renamed over the old one), so a crash never leaves a half-written
//! transcript. Resume and file history build on this.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::llm::{Message, Usage};

#[derive(Serialize)]
pub struct Transcript<'a> {
    pub id: &'a str,
    pub provider: &'a str,
    pub model: &'a str,
    pub cwd: &'a Path,
    pub usage: Usage,
    pub messages: &'a [Message],
}

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

/// Where the transcript of session `id` is (or will be) written.
pub fn transcript_path(data_dir: &Path, id: &str) -> PathBuf {
    data_dir.join("sessions").join(format!("{id}.json"))
}

/// Writes the transcript; returns where.
pub fn save(data_dir: &Path, t: &Transcript<'_>) -> std::io::Result<PathBuf> {
    let dir = data_dir.join("sessions");
    std::fs::create_dir_all(&dir)?;
    let path = transcript_path(data_dir, t.id);
    let mut tmp = tempfile::NamedTempFile::new_in(&dir)?;
    serde_json::to_writer_pretty(&mut tmp, t)?;
    tmp.write_all(b"\n")?;
    tmp.as_file().sync_all()?;
    tmp.persist(&path).map_err(|e| e.error)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saves_readable_json() {
        let d = tempfile::tempdir().unwrap();
        let messages = vec![Message::user("hi")];
        let t = Transcript {
            id: "s1",
            provider: "p",
            model: "m",
            cwd: Path::new("/w"),
            usage: Usage::default(),
            messages: &messages,
        };
        let path = save(d.path(), &t).unwrap();
        assert_eq!(path, d.path().join("sessions/s1.json"));
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        assert_eq!(
            v["messages"][0]["content"][0],
            serde_json::json!({"type": "text", "text": "hi"})
        );
    }
}
