//! The file history and undo without git. Before a tool changes a file, its
//! previous content is kept as `<dir>/<seq>.prev` (a hard link, or a copy
//! across file systems) with a line in `<dir>/index.jsonl`; after the change
//! landed (the rename succeeded), a second line records the new content's
//! hash. A change that never landed has no second line and undo ignores it.
//!
//! Every turn is a checkpoint (`turn-N`). Undo restores each file a set of
//! checkpoints touched to its content before the first of them, removes
//! files they created, and is itself a checkpoint (`undo-K`); a redo undoes
//! the last undo that stands and is a checkpoint too (`redo-K`), which
//! makes what that undo reversed stand again. A file whose content is not what the agent left (someone
//! changed it since) is a conflict: nothing is written unless forced.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// One line of `index.jsonl`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "k", rename_all = "snake_case")]
enum Line {
    /// `path`'s content before change `seq` is in `<seq>.prev` (when it
    /// existed).
    Prev {
        seq: u64,
        cp: String,
        path: PathBuf,
        existed: bool,
        time: i64,
    },
    /// Change `seq` landed; the file now hashes to `hash` (absent: `None`).
    Landed { seq: u64, hash: Option<String> },
    /// Checkpoint `cp` undid the checkpoints `of`.
    Undo { cp: String, of: Vec<String> },
}

/// The content hash the history compares (xxh3-128, hex).
pub fn hash(bytes: &[u8]) -> String {
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(bytes))
}

pub struct FileHistory {
    dir: Option<PathBuf>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The next sequence number, read from the index on first use (a
    /// resumed session appends to the same history).
    next: Option<u64>,
    checkpoint: String,
}

impl FileHistory {
    pub fn new(dir: Option<PathBuf>) -> FileHistory {
        FileHistory {
            dir,
            state: Mutex::new(State {
                next: None,
                checkpoint: "turn-0".into(),
            }),
        }
    }

    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Changes from now on belong to turn `turn`.
    pub fn begin_turn(&self, turn: u32) {
        self.lock().checkpoint = format!("turn-{turn}");
    }

    fn append(&self, line: &Line) -> std::io::Result<()> {
        let Some(dir) = &self.dir else { return Ok(()) };
        let mut text = serde_json::to_vec(line).map_err(std::io::Error::other)?;
        text.push(b'\n');
        let mut index = std::fs::OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(dir.join("index.jsonl"))?;
        crate::transcript::store::end_line(&mut index)?;
        index.write_all(&text)
    }

    /// Keeps `path`'s current content, if it exists, before it is replaced;
    /// returns the change's sequence number for [`FileHistory::landed`].
    /// A hard link costs nothing and stays valid because every write here
    /// renames a new file over the old one; across file systems, a copy.
    pub fn record(&self, path: &Path, existed: bool) -> std::io::Result<u64> {
        let cp = self.lock().checkpoint.clone();
        self.record_in(&cp, path, existed, false)
    }

    /// [`FileHistory::record`] for a change that may write the file in
    /// place (a command's `>>` or `>`): a copy, never a link to the inode
    /// the change will alter.
    pub fn record_copy(&self, path: &Path, existed: bool) -> std::io::Result<u64> {
        let cp = self.lock().checkpoint.clone();
        self.record_in(&cp, path, existed, true)
    }

    fn record_in(&self, cp: &str, path: &Path, existed: bool, copy: bool) -> std::io::Result<u64> {
        let Some(dir) = &self.dir else { return Ok(0) };
        std::fs::create_dir_all(dir)?;
        let mut state = self.lock();
        let mut seq = match state.next {
            Some(n) => n,
            None => Index::read(dir).max_seq + 1,
        };
        // A file with other hard links may be changed in place through
        // them: the kept content must be a copy of its own then.
        let copy = copy
            || std::fs::metadata(path).is_ok_and(|m| std::os::unix::fs::MetadataExt::nlink(&m) > 1);
        if existed {
            // Another process on the same history (`agent undo` beside a
            // session) may have taken a number: the link's O_EXCL decides.
            loop {
                let keep = dir.join(format!("{seq}.prev"));
                let linked = if copy {
                    copy_new(path, &keep)
                } else {
                    std::fs::hard_link(path, &keep)
                };
                match linked {
                    Ok(()) => break,
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => seq += 1,
                    Err(_) if !copy => match copy_new(path, &keep) {
                        Ok(()) => break,
                        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => seq += 1,
                        Err(e) => return Err(e),
                    },
                    Err(e) => return Err(e),
                }
            }
        }
        state.next = Some(seq + 1);
        drop(state);
        self.append(&Line::Prev {
            seq,
            cp: cp.to_string(),
            path: path.to_path_buf(),
            existed,
            time: time::OffsetDateTime::now_utc().unix_timestamp(),
        })?;
        Ok(seq)
    }

    /// Change `seq` landed: `path` now holds `bytes` (`None`: removed).
    pub fn landed(&self, seq: u64, bytes: Option<&[u8]>) -> std::io::Result<()> {
        self.append(&Line::Landed {
            seq,
            hash: bytes.map(hash),
        })
    }

    /// What undoing the last `turns` turns (or, with `redo`, undoing the
    /// last undo) would do. `Ok(None)`: nothing to undo.
    pub fn plan(&self, turns: u32, redo: bool) -> std::io::Result<Option<Plan>> {
        self.plan_of(redo, &|targets| {
            targets.truncate(if redo { 1 } else { turns.max(1) as usize })
        })
    }

    /// What undoing every turn from `turn` on (the code part of a rewind
    /// to before it) would do.
    pub fn plan_since(&self, turn: u32) -> std::io::Result<Option<Plan>> {
        self.plan_of(false, &|targets| {
            targets.retain(|cp| {
                cp.strip_prefix("turn-")
                    .and_then(|n| n.parse::<u32>().ok())
                    .is_some_and(|n| n >= turn)
            })
        })
    }

    /// The plan for the standing checkpoints of the kind (`turn-*`, or
    /// `undo-*` for a redo) that changed files, newest first, as `pick`
    /// narrows them.
    fn plan_of(
        &self,
        redo: bool,
        pick: &dyn Fn(&mut Vec<String>),
    ) -> std::io::Result<Option<Plan>> {
        let Some(dir) = &self.dir else {
            return Ok(None);
        };
        let index = Index::read(dir);
        let live = index.live();
        let mut targets: Vec<String> = index
            .checkpoints
            .iter()
            .rev()
            .filter(|cp| live.contains(*cp) && cp.starts_with(if redo { "undo-" } else { "turn-" }))
            .filter(|cp| {
                index
                    .changes
                    .iter()
                    .any(|c| &c.cp == *cp && c.landed.is_some())
            })
            .cloned()
            .collect();
        pick(&mut targets);
        if targets.is_empty() {
            return Ok(None);
        }
        // Per file: the content before the first change, the hash after
        // the last one.
        let mut files: BTreeMap<PathBuf, FilePlan> = BTreeMap::new();
        for c in index
            .changes
            .iter()
            .filter(|c| targets.contains(&c.cp) && c.landed.is_some())
        {
            let restore = if c.existed {
                Restore::Content(dir.join(format!("{}.prev", c.seq)))
            } else {
                Restore::Remove
            };
            let f = files.entry(c.path.clone()).or_insert(FilePlan {
                path: c.path.clone(),
                restore,
                expected: None,
                conflict: None,
            });
            f.expected = c.landed.clone().unwrap_or(None);
        }
        let mut plan = Plan {
            targets,
            redo,
            files: files.into_values().collect(),
        };
        for f in &mut plan.files {
            f.conflict = f.check();
        }
        plan.files.retain(|f| !f.already_restored());
        Ok(Some(plan))
    }

    /// Carries out `plan`: writes atomically, removes created files, and
    /// records it all as checkpoint `undo-K`. Conflicts stop it unless
    /// `force`. Returns the files changed.
    pub fn apply(&self, plan: &Plan, root: &Path, force: bool) -> Result<Vec<PathBuf>, UndoError> {
        let Some(dir) = &self.dir else {
            return Ok(Vec::new());
        };
        // Checked again: the plan may have been shown a while ago.
        let conflicts: Vec<PathBuf> = plan
            .files
            .iter()
            .filter(|f| f.check().is_some())
            .map(|f| f.path.clone())
            .collect();
        if !conflicts.is_empty() && !force {
            return Err(UndoError::Conflicts(conflicts));
        }
        let index = Index::read(dir);
        // Numbered after every undo and redo so far, also one that failed
        // half-way (it has changes but no closing line).
        let earlier = index
            .checkpoints
            .iter()
            .filter(|c| c.starts_with("undo-") || c.starts_with("redo-"))
            .count()
            .max(index.undos as usize);
        let cp = format!(
            "{}-{}",
            if plan.redo { "redo" } else { "undo" },
            earlier + 1
        );
        let mut done = Vec::new();
        let result = self.restore_all(plan, root, &cp, &mut done);
        // What was restored is recorded as this undo even when a later file
        // failed, so it can be redone.
        if !done.is_empty() || result.is_ok() {
            self.append(&Line::Undo {
                cp,
                of: plan.targets.clone(),
            })
            .map_err(|e| UndoError::Io {
                path: dir.join("index.jsonl"),
                source: e,
            })?;
        }
        result.map(|()| done)
    }

    fn restore_all(
        &self,
        plan: &Plan,
        root: &Path,
        cp: &str,
        done: &mut Vec<PathBuf>,
    ) -> Result<(), UndoError> {
        for f in &plan.files {
            let existed = f.path.exists();
            let seq = self
                .record_in(cp, &f.path, existed, false)
                .map_err(|e| UndoError::Io {
                    path: f.path.clone(),
                    source: e,
                })?;
            let io = |source| UndoError::Io {
                path: f.path.clone(),
                source,
            };
            match &f.restore {
                Restore::Content(prev) => {
                    let bytes = std::fs::read(prev).map_err(io)?;
                    let mode = std::fs::metadata(prev)
                        .map(|m| m.permissions().mode() & 0o7777)
                        .ok();
                    super::files::write_atomic(Some(root), &f.path, &bytes, mode).map_err(io)?;
                    self.landed(seq, Some(&bytes)).map_err(io)?;
                }
                Restore::Remove => {
                    match super::files::remove_file(Some(root), &f.path) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => return Err(io(e)),
                    }
                    self.landed(seq, None).map_err(io)?;
                }
            }
            done.push(f.path.clone());
        }
        Ok(())
    }
}

/// Copies `from` to a new file `to` (never over an existing one), with
/// its permissions.
fn copy_new(from: &Path, to: &Path) -> std::io::Result<()> {
    let mut src = std::fs::File::open(from)?;
    let mut dst = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(to)?;
    std::io::copy(&mut src, &mut dst)?;
    dst.set_permissions(src.metadata()?.permissions())
}

#[derive(Debug, thiserror::Error)]
pub enum UndoError {
    #[error("changed since the agent's change: {}", .0.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    Conflicts(Vec<PathBuf>),
    #[error("could not restore {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What an undo would do.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The checkpoints it undoes, newest first (`turn-3`, or `undo-1` for a redo).
    pub targets: Vec<String>,
    pub redo: bool,
    pub files: Vec<FilePlan>,
}

impl Plan {
    pub fn conflicts(&self) -> impl Iterator<Item = &FilePlan> {
        self.files.iter().filter(|f| f.conflict.is_some())
    }
}

#[derive(Debug, Clone)]
pub struct FilePlan {
    pub path: PathBuf,
    pub restore: Restore,
    /// The hash the agent's last change left (`None`: it removed the file).
    expected: Option<String>,
    /// Someone changed the file since: the diff from its content now to
    /// what undo would write.
    pub conflict: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Restore {
    /// Write back this kept content.
    Content(PathBuf),
    /// The file did not exist: remove it.
    Remove,
}

impl FilePlan {
    fn now(&self) -> Option<Vec<u8>> {
        std::fs::read(&self.path).ok()
    }

    fn target(&self) -> Option<Vec<u8>> {
        match &self.restore {
            Restore::Content(p) => std::fs::read(p).ok(),
            Restore::Remove => None,
        }
    }

    /// The file already holds what undo would write (nothing to do).
    fn already_restored(&self) -> bool {
        self.now().map(|b| hash(&b)) == self.target().map(|b| hash(&b)) && self.conflict.is_none()
    }

    /// `Some(diff)` when the file is not as the agent left it.
    fn check(&self) -> Option<String> {
        let now = self.now();
        if now.as_deref().map(hash) == self.expected {
            return None;
        }
        let text = |b: &Option<Vec<u8>>| {
            b.as_deref()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default()
        };
        let shown = self.path.display().to_string();
        let mut diff = super::files::unified_diff(&shown, &text(&now), &text(&self.target()));
        if now.is_none() {
            diff.insert_str(0, "(deleted since the agent's change)\n");
        }
        Some(diff)
    }

    /// From the content before the first change to the content now: what
    /// the changes amount to (`shown` names the file).
    pub fn net_diff(&self, shown: &str) -> String {
        let text = |b: Option<Vec<u8>>| {
            b.map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default()
        };
        super::files::unified_diff(shown, &text(self.target()), &text(self.now()))
    }

    /// What the undo does to this file, in a word.
    pub fn action(&self) -> &'static str {
        match (&self.restore, self.path.exists()) {
            (Restore::Remove, _) => "remove",
            (Restore::Content(_), true) => "restore",
            (Restore::Content(_), false) => "recreate",
        }
    }
}

struct Change {
    seq: u64,
    cp: String,
    path: PathBuf,
    existed: bool,
    /// `Some(hash)` once it landed (`Some(None)`: the file was removed).
    landed: Option<Option<String>>,
}

#[derive(Default)]
struct Index {
    changes: Vec<Change>,
    /// Checkpoints in the order they first appear.
    checkpoints: Vec<String>,
    undos_of: HashMap<String, Vec<String>>,
    undos: u32,
    max_seq: u64,
}

impl Index {
    /// Reads the index; lines it cannot read are skipped (a torn line
    /// after a crash).
    fn read(dir: &Path) -> Index {
        let mut index = Index::default();
        let Ok(text) = std::fs::read_to_string(dir.join("index.jsonl")) else {
            return index;
        };
        let mut by_seq: HashMap<u64, usize> = HashMap::new();
        for line in text.lines() {
            let Ok(line) = serde_json::from_str::<Line>(line) else {
                continue;
            };
            match line {
                Line::Prev {
                    seq,
                    cp,
                    path,
                    existed,
                    ..
                } => {
                    index.max_seq = index.max_seq.max(seq);
                    if !index.checkpoints.contains(&cp) {
                        index.checkpoints.push(cp.clone());
                    }
                    by_seq.insert(seq, index.changes.len());
                    index.changes.push(Change {
                        seq,
                        cp,
                        path,
                        existed,
                        landed: None,
                    });
                }
                Line::Landed { seq, hash } => {
                    if let Some(&i) = by_seq.get(&seq) {
                        index.changes[i].landed = Some(hash);
                    }
                }
                Line::Undo { cp, of } => {
                    index.undos += 1;
                    if !index.checkpoints.contains(&cp) {
                        index.checkpoints.push(cp.clone());
                    }
                    index.undos_of.insert(cp, of);
                }
            }
        }
        index
    }

    /// Checkpoints whose changes stand: not undone by an undo that itself
    /// stands.
    fn live(&self) -> std::collections::HashSet<String> {
        let mut live: std::collections::HashSet<String> =
            self.checkpoints.iter().cloned().collect();
        // Newest first: an undo's standing is settled before what it undid.
        for cp in self.checkpoints.iter().rev() {
            if live.contains(cp)
                && let Some(of) = self.undos_of.get(cp)
            {
                for o in of {
                    live.remove(o);
                }
            }
        }
        live
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A change as the tools make it: record, write, landed.
    fn change(h: &FileHistory, path: &Path, content: Option<&str>) {
        let seq = h.record(path, path.exists()).unwrap();
        match content {
            Some(c) => super::super::files::write_atomic(None, path, c.as_bytes(), None).unwrap(),
            None => std::fs::remove_file(path).unwrap(),
        }
        h.landed(seq, content.map(str::as_bytes)).unwrap();
    }

    #[test]
    fn undo_restores_changed_removes_created_and_redo_reverses_it() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let h = FileHistory::new(Some(root.join(".hist")));
        let (a, b) = (root.join("a.txt"), root.join("b.txt"));
        std::fs::write(&a, "one\n").unwrap();
        h.begin_turn(1);
        change(&h, &a, Some("two\n"));
        h.begin_turn(2);
        change(&h, &a, Some("three\n"));
        change(&h, &b, Some("new\n"));
        // A write that never landed (the agent died before the rename).
        h.record(&a, true).unwrap();

        let plan = h.plan(1, false).unwrap().unwrap();
        assert_eq!(plan.targets, vec!["turn-2"]);
        assert_eq!(plan.files.len(), 2);
        assert_eq!(plan.conflicts().count(), 0);
        h.apply(&plan, &root, false).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "two\n");
        assert!(!b.exists());

        // Undo again: turn 1.
        let plan = h.plan(1, false).unwrap().unwrap();
        assert_eq!(plan.targets, vec!["turn-1"]);
        h.apply(&plan, &root, false).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "one\n");

        // Redo: the last undo is undone.
        let plan = h.plan(1, true).unwrap().unwrap();
        assert_eq!(plan.targets, vec!["undo-2"]);
        h.apply(&plan, &root, false).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "two\n");
        let plan = h.plan(1, true).unwrap().unwrap();
        assert_eq!(plan.targets, vec!["undo-1"]);
        assert_eq!(plan.files.len(), 2);
        h.apply(&plan, &root, false).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "three\n");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "new\n");
        // Nothing left to redo; turn 2 stands again and can be undone.
        assert!(h.plan(1, true).unwrap().is_none());
        assert_eq!(h.plan(1, false).unwrap().unwrap().targets, vec!["turn-2"]);
    }

    #[test]
    fn a_file_changed_since_is_a_conflict_and_never_overwritten_silently() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let h = FileHistory::new(Some(root.join(".hist")));
        let a = root.join("a.txt");
        std::fs::write(&a, "mine\n").unwrap();
        h.begin_turn(1);
        change(&h, &a, Some("agent\n"));
        std::fs::write(&a, "person\n").unwrap();
        let plan = h.plan(1, false).unwrap().unwrap();
        let c: Vec<&FilePlan> = plan.conflicts().collect();
        assert_eq!(c.len(), 1);
        let diff = c[0].conflict.as_deref().unwrap();
        assert!(diff.contains("-person") && diff.contains("+mine"), "{diff}");
        let e = h.apply(&plan, &root, false).unwrap_err();
        assert!(matches!(e, UndoError::Conflicts(ref p) if p == &vec![a.clone()]));
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "person\n");
        h.apply(&plan, &root, true).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "mine\n");
        // The forced undo is itself undoable: the person's text comes back.
        let plan = h.plan(1, true).unwrap().unwrap();
        h.apply(&plan, &root, false).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "person\n");
    }

    #[test]
    fn a_second_history_on_the_same_directory_continues_the_numbers() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let a = root.join("a.txt");
        std::fs::write(&a, "1").unwrap();
        let h = FileHistory::new(Some(root.join(".hist")));
        h.begin_turn(1);
        change(&h, &a, Some("2"));
        let again = FileHistory::new(Some(root.join(".hist")));
        again.begin_turn(2);
        change(&again, &a, Some("3"));
        assert_eq!(
            std::fs::read_to_string(root.join(".hist/1.prev")).unwrap(),
            "1"
        );
        assert_eq!(
            std::fs::read_to_string(root.join(".hist/2.prev")).unwrap(),
            "2"
        );
    }
}
