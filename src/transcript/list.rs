//! Finding sessions on disk: every log's header and title, the newest of a
//! project, an id or a unique prefix of one.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::store::{self, Entry, Header};

/// One session, as `agent sessions` and the picker show it.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub id: String,
    #[serde(skip)]
    pub path: PathBuf,
    /// Unix seconds.
    pub created: i64,
    /// Unix seconds of the last write.
    pub updated: i64,
    #[serde(skip)]
    modified: Option<std::time::SystemTime>,
    /// The first prompt, on one line.
    pub title: String,
    pub turns: u32,
    pub cwd: PathBuf,
    pub project: PathBuf,
    pub provider: String,
    pub model: String,
}

/// A title from the first prompt: its first non-empty line, cut.
pub fn title(prompt: &str) -> String {
    let line = prompt
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    match line.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    }
}

fn summarize(path: &Path) -> Option<Summary> {
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let updated = modified
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs() as i64);
    let (header, title, turns) = if path.extension().is_some_and(|e| e == "jsonl") {
        let text = std::fs::read(path).ok()?;
        let mut lines = text.split(|b| *b == b'\n');
        let mut header: Header = serde_json::from_slice(lines.next()?).ok()?;
        // The file's name is the id (see `store::load`).
        header.id = path.file_stem()?.to_string_lossy().into_owned();
        let (mut title, mut turns) = (None, 0);
        // Only prompt lines are parsed: listing stays fast for long logs.
        for line in lines.filter(|l| l.starts_with(br#"{"t":"user""#)) {
            if let Ok(Entry::User {
                text, auto: false, ..
            }) = serde_json::from_slice(line)
            {
                turns += 1;
                title.get_or_insert(text);
            }
        }
        (header, title, turns)
    } else {
        let loaded = store::load(path).ok()?;
        let mut title = None;
        let mut turns = 0;
        for e in &loaded.entries {
            if let Entry::User {
                text, auto: false, ..
            } = e
            {
                turns += 1;
                title.get_or_insert(text.clone());
            }
        }
        (loaded.header, title, turns)
    };
    if header.parent.is_some() {
        return None;
    }
    Some(Summary {
        id: header.id,
        path: path.to_path_buf(),
        created: header.created,
        updated,
        modified,
        title: title.as_deref().map(self::title).unwrap_or_default(),
        turns,
        cwd: header.cwd,
        project: header.project,
        provider: header.provider,
        model: header.model,
    })
}

/// Every session (not sub-agents'), newest first; in `project` only when given.
pub fn list(data_dir: &Path, project: Option<&Path>) -> Vec<Summary> {
    let Ok(dir) = std::fs::read_dir(data_dir.join("sessions")) else {
        return Vec::new();
    };
    let mut all: Vec<Summary> = dir
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl" || e == "json"))
        .filter_map(|p| summarize(&p))
        .filter(|s| project.is_none_or(|p| s.project == p))
        .collect();
    // A legacy .json beside its converted .jsonl is one session.
    all.sort_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then(b.path.extension().cmp(&a.path.extension()))
    });
    let mut seen = std::collections::HashSet::new();
    all.retain(|s| seen.insert(s.id.clone()));
    all
}

#[derive(Debug, thiserror::Error)]
pub enum FindError {
    #[error("no session has an id starting with `{0}`; `agent sessions --all` lists them")]
    Unknown(String),
    #[error("`{query}` is the start of {n} session ids ({ids}); give more of the id")]
    Ambiguous {
        query: String,
        n: usize,
        ids: String,
    },
    #[error(
        "no earlier session in {0}; start one with `agent`, or list every project's with `agent sessions --all`"
    )]
    NoneHere(PathBuf),
    #[error("{0}")]
    Unreadable(String),
}

/// The session whose id is `query` or starts with it.
pub fn find(data_dir: &Path, query: &str) -> Result<Summary, FindError> {
    let query = query.trim();
    let all = list(data_dir, None);
    if let Some(s) = all.iter().find(|s| s.id == query) {
        return Ok(s.clone());
    }
    let hits: Vec<&Summary> = all
        .iter()
        .filter(|s| !query.is_empty() && s.id.starts_with(query))
        .collect();
    match hits.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(unreadable(data_dir, query).unwrap_or(FindError::Unknown(query.to_string()))),
        many => Err(FindError::Ambiguous {
            query: query.to_string(),
            n: many.len(),
            ids: many
                .iter()
                .take(4)
                .map(|s| s.id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// A log named like `query` that is not listed because it cannot be read
/// says why, rather than "no such session".
fn unreadable(data_dir: &Path, query: &str) -> Option<FindError> {
    let dir = std::fs::read_dir(data_dir.join("sessions")).ok()?;
    for e in dir.filter_map(Result::ok) {
        let path = e.path();
        let stem = path.file_stem()?.to_string_lossy().into_owned();
        if !query.is_empty() && stem.starts_with(query) {
            let why = match store::load(&path) {
                Err(e) => e.to_string(),
                Ok(_) => continue,
            };
            return Some(FindError::Unreadable(format!(
                "session {stem} cannot be resumed: {why}"
            )));
        }
    }
    None
}

/// The newest session of `project`.
pub fn latest(data_dir: &Path, project: &Path) -> Result<Summary, FindError> {
    list(data_dir, Some(project))
        .into_iter()
        .next()
        .ok_or_else(|| FindError::NoneHere(project.to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::store::{FORMAT, SessionLog};

    fn session(data: &Path, id: &str, project: &str, prompt: &str) {
        let log = SessionLog::create(
            data,
            Header {
                v: FORMAT,
                id: id.into(),
                created: 1,
                cwd: project.into(),
                project: project.into(),
                git_root: None,
                provider: "p".into(),
                model: "m".into(),
                agent_version: "0".into(),
                parent: None,
            },
        );
        log.append(&Entry::User {
            turn: 1,
            text: prompt.into(),
            time: 1,
            auto: false,
        });
    }

    #[test]
    fn lists_finds_by_prefix_and_picks_the_newest_of_a_project() {
        let d = tempfile::tempdir().unwrap();
        session(d.path(), "abc1", "/a", "\n  fix the build\nsecond line");
        std::thread::sleep(std::time::Duration::from_millis(20));
        session(d.path(), "abd2", "/a", "two");
        session(d.path(), "xyz3", "/b", "three");
        let a = list(d.path(), Some(Path::new("/a")));
        assert_eq!(a.len(), 2);
        assert_eq!(a[1].title, "fix the build");
        assert_eq!(a[1].turns, 1);
        assert_eq!(latest(d.path(), Path::new("/a")).unwrap().id, "abd2");
        assert_eq!(find(d.path(), "xy").unwrap().id, "xyz3");
        let e = find(d.path(), "ab").unwrap_err().to_string();
        assert!(e.contains("start of 2 session ids"), "{e}");
        let e = find(d.path(), "q").unwrap_err().to_string();
        assert!(e.contains("no session has an id starting with `q`"), "{e}");
        std::fs::write(d.path().join("sessions/broken9.jsonl"), "not json\n").unwrap();
        let e = find(d.path(), "broken").unwrap_err().to_string();
        assert!(
            e.contains("session broken9 cannot be resumed") && e.contains("not a session header"),
            "{e}"
        );
        let e = latest(d.path(), Path::new("/c")).unwrap_err().to_string();
        assert!(e.contains("no earlier session in /c"), "{e}");
    }

    #[test]
    fn titles_are_one_line() {
        assert_eq!(title("  \nhello\nworld"), "hello");
        assert_eq!(title(&"x".repeat(100)).chars().count(), 81);
    }
}
