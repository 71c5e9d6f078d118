//! The session log: `<data>/sessions/<id>.jsonl`, one JSON object per line,
//! appended as things happen. The first line is a [`Header`]; every other
//! line is an [`Entry`]. Appends are single `write` calls on a file opened
//! with `O_APPEND`, synced at the end of every step, so a crash loses at
//! most the step in flight and leaves at worst a torn last line, which
//! [`load`] skips with a warning. Nothing here rewrites a line: compaction,
//! undo and rewind are entries too, so the whole history stays on disk.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::llm::{Content, Message, Role, Usage};

/// Version of the line format, in every header.
pub const FORMAT: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub v: u32,
    pub id: String,
    /// Unix seconds.
    pub created: i64,
    pub cwd: PathBuf,
    /// The project root sessions are grouped by (git root, or the
    /// directory with `.agent/`, else the working directory).
    pub project: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_root: Option<PathBuf>,
    pub provider: String,
    pub model: String,
    pub agent_version: String,
    /// A sub-agent's session names its parent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
}

/// One thing that happened, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum Entry {
    /// The person's prompt opening turn `turn` (or, `auto`, a prompt the
    /// agent sent for them: "continue where you were cut off").
    User {
        turn: u32,
        text: String,
        time: i64,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        auto: bool,
    },
    /// A whole assistant message (text, thinking, tool calls).
    Assistant { message: Message },
    /// A tool's result as the model received it.
    ToolResult {
        call_id: String,
        name: String,
        content: String,
        is_error: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        diff: Option<String>,
        #[serde(default)]
        denied: bool,
    },
    /// The gate's decision on a call: who decided and what it covers.
    Approval {
        call_id: String,
        tool: String,
        decision: String,
        by: String,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        scope: String,
    },
    /// Token usage of one request.
    Usage {
        provider: String,
        model: String,
        usage: Usage,
    },
    /// The conversation the model sees from here on (a summary plus the
    /// most recent messages); what came before stays above in the log.
    Compaction {
        messages: Vec<Message>,
        /// Estimated tokens before and after.
        before: u64,
        after: u64,
        /// The summary request failed: the oldest turns were dropped.
        #[serde(default)]
        truncated: bool,
        /// The files that still count as read (their content is in the
        /// conversation); every other file must be viewed again.
        #[serde(default)]
        reads: Vec<(PathBuf, String)>,
    },
    /// Files restored to their content before a checkpoint (or, for a
    /// redo, after it).
    Undo {
        checkpoint: u32,
        redo: bool,
        files: Vec<PathBuf>,
    },
    /// The conversation cut back to its first `keep` messages, and of
    /// message `keep` its first `keep_blocks` blocks (a prompt that joined
    /// a user message).
    Rewind {
        keep: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        keep_blocks: Option<usize>,
    },
    /// Talks to another model from here on.
    Model { provider: String, model: String },
    /// Files the read tracker knows, with the content hash seen (hex).
    Reads { files: Vec<(PathBuf, String)> },
    /// A turn ended: how.
    TurnEnd {
        turn: u32,
        outcome: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop: Option<String>,
    },
}

/// Where the log of session `id` is (or will be) written.
pub fn log_path(data_dir: &Path, id: &str) -> PathBuf {
    data_dir.join("sessions").join(format!("{id}.jsonl"))
}

/// An open session log. Appends are best effort for the session (a full
/// disk must not end the turn) but never silent: the first failure is kept
/// for the front end to show, and logged.
pub struct SessionLog {
    path: PathBuf,
    state: std::sync::Arc<Mutex<LogState>>,
    /// Syncs run on a thread of their own: a step does not wait the few
    /// milliseconds an `fdatasync` takes; [`SessionLog::flush`] does.
    syncer: Mutex<Option<std::sync::mpsc::Sender<std::fs::File>>>,
}

struct LogState {
    file: Option<std::fs::File>,
    /// Written with the first entry, so a session that never sent a prompt
    /// leaves no file.
    header: Option<Header>,
    error: Option<String>,
    dirty: bool,
}

impl SessionLog {
    /// A log that starts with `header` at the first append.
    pub fn create(data_dir: &Path, header: Header) -> SessionLog {
        SessionLog {
            path: log_path(data_dir, &header.id),
            state: std::sync::Arc::new(Mutex::new(LogState {
                file: None,
                header: Some(header),
                error: None,
                dirty: false,
            })),
            syncer: Mutex::new(None),
        }
    }

    /// Appends to an existing log (a resumed session).
    pub fn reopen(path: PathBuf) -> SessionLog {
        SessionLog {
            path,
            state: std::sync::Arc::new(Mutex::new(LogState {
                file: None,
                header: None,
                error: None,
                dirty: false,
            })),
            syncer: Mutex::new(None),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The first write error, if any.
    pub fn error(&self) -> Option<String> {
        self.lock().error.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LogState> {
        lock(&self.state)
    }

    /// Appends one entry as one line, in one write.
    pub fn append(&self, entry: &Entry) {
        let mut line = match serde_json::to_vec(entry) {
            Ok(l) => l,
            Err(e) => return self.fail(&mut self.lock(), &e.to_string()),
        };
        line.push(b'\n');
        let mut state = self.lock();
        if state.error.is_some() && state.file.is_none() {
            return;
        }
        if state.file.is_none() {
            match self.open(&mut state) {
                Ok(f) => state.file = Some(f),
                Err(e) => return self.fail(&mut state, &e.to_string()),
            }
        }
        let Some(file) = state.file.as_mut() else {
            return;
        };
        if let Err(e) = file.write_all(&line) {
            self.fail(&mut state, &e.to_string());
            return;
        }
        state.dirty = true;
    }

    fn open(&self, state: &mut LogState) -> std::io::Result<std::fs::File> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(&self.path)?;
        end_line(&mut file)?;
        if let Some(header) = state.header.take() {
            let mut line = serde_json::to_vec(&header).map_err(std::io::Error::other)?;
            line.push(b'\n');
            file.write_all(&line)?;
        }
        Ok(file)
    }

    fn fail(&self, state: &mut LogState, e: &str) {
        fail(&self.path, state, e);
    }

    /// Makes what was appended durable (end of a step), on the syncer
    /// thread: the step goes on meanwhile.
    pub fn sync(&self) {
        let file = {
            let mut state = self.lock();
            if !state.dirty {
                return;
            }
            state.dirty = false;
            match state.file.as_ref().map(std::fs::File::try_clone) {
                Some(Ok(f)) => f,
                _ => return,
            }
        };
        let mut syncer = self.syncer.lock().unwrap_or_else(|p| p.into_inner());
        let tx = syncer.get_or_insert_with(|| {
            let (tx, rx) = std::sync::mpsc::channel::<std::fs::File>();
            let (state, path) = (std::sync::Arc::clone(&self.state), self.path.clone());
            std::thread::spawn(move || {
                while let Ok(f) = rx.recv() {
                    // Later requests are the same file: one sync covers them.
                    while rx.try_recv().is_ok() {}
                    if let Err(e) = f.sync_data() {
                        fail(&path, &mut lock(&state), &e.to_string());
                    }
                }
            });
            tx
        });
        let _ = tx.send(file);
    }

    /// Makes what was appended durable now (the end of a turn, of a run).
    pub fn flush(&self) {
        let mut state = self.lock();
        state.dirty = false;
        if let Some(f) = &state.file
            && let Err(e) = f.sync_data()
        {
            let e = e.to_string();
            self.fail(&mut state, &e);
        }
    }
}

/// A file a crash left with a torn last line gets a line end first, so the
/// next line appended is whole (the torn one stays unreadable, and skipped).
pub fn end_line(file: &mut std::fs::File) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let len = file.metadata()?.len();
    let mut last = [0u8; 1];
    if len > 0 && file.read_at(&mut last, len - 1)? == 1 && last[0] != b'\n' {
        file.write_all(b"\n")?;
    }
    Ok(())
}

fn lock(state: &Mutex<LogState>) -> std::sync::MutexGuard<'_, LogState> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

fn fail(path: &Path, state: &mut LogState, e: &str) {
    if state.error.is_none() {
        let msg = format!(
            "could not write the session log {}: {e}; this session may not be resumable",
            path.display()
        );
        crate::log::log(&msg);
        state.error = Some(msg);
    }
}

/// A session read back from disk.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub header: Header,
    pub entries: Vec<Entry>,
    /// Lines that could not be read (a torn last line after a crash).
    pub warnings: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read the session log {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a session log: {why}")]
    NotALog { path: PathBuf, why: String },
}

/// Reads a session log; unreadable lines are skipped with a warning.
/// A `.json` transcript of the earlier format loads too.
pub fn load(path: &Path) -> Result<Loaded, LoadError> {
    let bytes = std::fs::read(path).map_err(|source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if path.extension().is_some_and(|e| e == "json") {
        return legacy(path, &bytes);
    }
    let mut lines = bytes.split(|b| *b == b'\n').enumerate().peekable();
    let header: Header = loop {
        let Some((n, line)) = lines.next() else {
            return Err(LoadError::NotALog {
                path: path.to_path_buf(),
                why: "it is empty".into(),
            });
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice(line) {
            Ok(h) => break h,
            Err(e) => {
                return Err(LoadError::NotALog {
                    path: path.to_path_buf(),
                    why: format!("line {} is not a session header ({e})", n + 1),
                });
            }
        }
    };
    let mut header = header;
    let mut warnings = Vec::new();
    checked_id(path, &mut header, &mut warnings)?;
    let mut entries = Vec::new();
    while let Some((n, line)) = lines.next() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Entry>(line) {
            Ok(e) => entries.push(e),
            Err(e) => {
                let last = lines.peek().is_none_or(|(_, rest)| rest.is_empty());
                warnings.push(if last && !bytes.ends_with(b"\n") {
                    format!(
                        "{}: skipped a torn last line (the session was interrupted while writing it)",
                        path.display()
                    )
                } else {
                    format!("{}: skipped line {} ({e})", path.display(), n + 1)
                });
            }
        }
    }
    Ok(Loaded {
        header,
        entries,
        warnings,
    })
}

/// A session's id names files (`sessions/<id>.jsonl`, `history/<id>/`):
/// the file's own name is the id, and it must look like one.
fn checked_id(
    path: &Path,
    header: &mut Header,
    warnings: &mut Vec<String>,
) -> Result<(), LoadError> {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let valid = |s: &str| {
        !s.is_empty()
            && s.len() <= 64
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    if !valid(&stem) {
        return Err(LoadError::NotALog {
            path: path.to_path_buf(),
            why: "its name is not a session id (letters, digits and dashes)".into(),
        });
    }
    if header.id != stem {
        warnings.push(format!(
            "{}: its header names session `{}`; the file's name, `{stem}`, is used",
            path.display(),
            header.id.escape_debug()
        ));
        header.id = stem;
    }
    Ok(())
}

/// The earlier format: one JSON object with the whole conversation.
fn legacy(path: &Path, bytes: &[u8]) -> Result<Loaded, LoadError> {
    #[derive(Deserialize)]
    struct Transcript {
        id: String,
        provider: String,
        model: String,
        cwd: PathBuf,
        #[serde(default)]
        usage: Usage,
        messages: Vec<Message>,
    }
    let t: Transcript = serde_json::from_slice(bytes).map_err(|e| LoadError::NotALog {
        path: path.to_path_buf(),
        why: e.to_string(),
    })?;
    let mut t = t;
    let mut warnings = Vec::new();
    let mut id_header = Header {
        v: 0,
        id: t.id.clone(),
        created: 0,
        cwd: PathBuf::new(),
        project: PathBuf::new(),
        git_root: None,
        provider: String::new(),
        model: String::new(),
        agent_version: String::new(),
        parent: None,
    };
    checked_id(path, &mut id_header, &mut warnings)?;
    t.id = id_header.id;
    let created = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs() as i64);
    let mut entries = Vec::new();
    let mut turn = 0;
    for m in t.messages {
        match m.role {
            Role::Assistant => entries.push(Entry::Assistant { message: m }),
            Role::User => {
                for c in m.content {
                    match c {
                        Content::Text { text } => {
                            turn += 1;
                            entries.push(Entry::User {
                                turn,
                                text,
                                time: created,
                                auto: false,
                            })
                        }
                        Content::ToolResult {
                            call_id,
                            content,
                            is_error,
                        } => entries.push(Entry::ToolResult {
                            call_id,
                            name: String::new(),
                            content,
                            is_error,
                            diff: None,
                            denied: false,
                        }),
                        _ => {}
                    }
                }
            }
        }
    }
    entries.push(Entry::Usage {
        provider: t.provider.clone(),
        model: t.model.clone(),
        usage: t.usage,
    });
    Ok(Loaded {
        header: Header {
            v: 0,
            id: t.id,
            created,
            project: project_root(&t.cwd),
            git_root: None,
            cwd: t.cwd,
            provider: t.provider,
            model: t.model,
            agent_version: String::new(),
            parent: None,
        },
        entries,
        warnings,
    })
}

/// What a log adds up to: the conversation the model sees now, and the
/// figures around it.
#[derive(Debug, Clone, Default)]
pub struct Replay {
    pub messages: Vec<Message>,
    /// Usage per (provider, model).
    pub usage: Vec<((String, String), Usage)>,
    pub turns: u32,
    pub reads: Vec<(PathBuf, String)>,
    /// The model in use at the end, when the log switched.
    pub model: Option<(String, String)>,
    pub compactions: u32,
}

impl Replay {
    pub fn of(entries: &[Entry]) -> Replay {
        let mut r = Replay::default();
        for e in entries {
            match e {
                Entry::User { turn, text, .. } => {
                    r.turns = r.turns.max(*turn);
                    push_user(&mut r.messages, Content::Text { text: text.clone() });
                }
                Entry::Assistant { message } => r.messages.push(message.clone()),
                Entry::ToolResult {
                    call_id,
                    content,
                    is_error,
                    ..
                } => push_user(
                    &mut r.messages,
                    Content::ToolResult {
                        call_id: call_id.clone(),
                        content: content.clone(),
                        is_error: *is_error,
                    },
                ),
                Entry::Usage {
                    provider,
                    model,
                    usage,
                } => {
                    let key = (provider.clone(), model.clone());
                    match r.usage.iter_mut().find(|(k, _)| *k == key) {
                        Some((_, u)) => *u += *usage,
                        None => r.usage.push((key, *usage)),
                    }
                }
                Entry::Compaction {
                    messages, reads, ..
                } => {
                    r.messages = messages.clone();
                    r.reads = reads.clone();
                    r.compactions += 1;
                }
                Entry::Undo { files, .. } => r.reads.retain(|(p, _)| !files.contains(p)),
                Entry::Rewind { keep, keep_blocks } => {
                    r.messages.truncate(keep + 1);
                    match (r.messages.get_mut(*keep), keep_blocks) {
                        (Some(m), Some(b)) => m.content.truncate(*b),
                        _ => r.messages.truncate(*keep),
                    }
                }
                Entry::Model { provider, model } => {
                    r.model = Some((provider.clone(), model.clone()))
                }
                Entry::Reads { files } => {
                    for (path, hash) in files {
                        match r.reads.iter_mut().find(|(p, _)| p == path) {
                            Some(slot) => slot.1 = hash.clone(),
                            None => r.reads.push((path.clone(), hash.clone())),
                        }
                    }
                }
                Entry::Approval { .. } | Entry::TurnEnd { .. } => {}
            }
        }
        r.messages.retain(|m| !m.content.is_empty());
        answer_open_calls(&mut r.messages);
        r
    }

    pub fn total_usage(&self) -> Usage {
        let mut t = Usage::default();
        for (_, u) in &self.usage {
            t += *u;
        }
        t
    }
}

/// Tool calls without a result (the session ended while they ran: a
/// crash, a kill, a quit) get one saying so, since the APIs refuse a
/// conversation with a call left open.
fn answer_open_calls(messages: &mut Vec<Message>) {
    let mut i = 0;
    while i < messages.len() {
        if messages[i].role == Role::Assistant {
            let calls: Vec<String> = messages[i]
                .content
                .iter()
                .filter_map(|c| match c {
                    Content::ToolCall { id, .. } => Some(id.clone()),
                    _ => None,
                })
                .collect();
            if !calls.is_empty() {
                if messages.get(i + 1).is_none_or(|m| m.role != Role::User) {
                    messages.insert(
                        i + 1,
                        Message {
                            role: Role::User,
                            content: Vec::new(),
                        },
                    );
                }
                let next = &mut messages[i + 1];
                let mut missing = Vec::new();
                for id in calls {
                    let answered = next.content.iter().any(
                        |c| matches!(c, Content::ToolResult { call_id, .. } if *call_id == id),
                    );
                    if !answered {
                        missing.push(Content::ToolResult {
                            call_id: id,
                            content: "The session ended before this call finished (the agent was stopped or crashed); its outcome is unknown. Check before relying on it.".into(),
                            is_error: true,
                        });
                    }
                }
                // Results open the user message, before any text.
                for (k, c) in missing.into_iter().enumerate() {
                    next.content.insert(k, c);
                }
            }
        }
        i += 1;
    }
}

/// Appends to the last user message when there is one (tool results and a
/// following prompt belong to one user turn), else starts one. The session
/// and its replay share this rule, so a replay is the conversation sent.
pub fn push_user(messages: &mut Vec<Message>, content: Content) {
    match messages.last_mut() {
        Some(m) if m.role == Role::User => m.content.push(content),
        _ => messages.push(Message {
            role: Role::User,
            content: vec![content],
        }),
    }
}

/// The root sessions are grouped by: the nearest directory at or above
/// `cwd` with a `.git` (file or directory) or an `.agent` directory, else
/// `cwd` itself. The person's home directory is never a project root by
/// its `.agent` alone.
pub fn project_root(cwd: &Path) -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    for dir in cwd.ancestors() {
        if dir.join(".git").exists() {
            return dir.to_path_buf();
        }
        if dir.join(".agent").is_dir() && home.as_deref() != Some(dir) {
            return dir.to_path_buf();
        }
    }
    cwd.to_path_buf()
}

/// The nearest git root at or above `cwd`.
pub fn git_root(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests;
