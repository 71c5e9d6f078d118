//! The read tracker: which files this session has read, and what they looked
//! like then (modification time with nanoseconds, size, content hash). Edit
//! tools consult it so the model never edits a file blind or over someone
//! else's change; a timestamp change with identical content is no conflict.

use std::collections::HashMap;
use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    pub modified: Option<SystemTime>,
    pub size: u64,
    pub hash: u128,
    /// `Some(n)`: only the first `n` bytes were read (a file too large to
    /// read whole for a `view` of part of it); `hash` is theirs.
    pub prefix: Option<u64>,
}

impl FileStamp {
    pub fn of(meta: &Metadata, content: &[u8]) -> FileStamp {
        FileStamp {
            modified: meta.modified().ok(),
            size: meta.len(),
            hash: xxhash_rust::xxh3::xxh3_128(content),
            prefix: None,
        }
    }

    /// Whether `now` (of the whole file) shows the file as it was seen:
    /// the same content, or for a partial read the same size, time and
    /// first bytes.
    pub fn unchanged(&self, now: &FileStamp, content: &[u8]) -> bool {
        match self.prefix {
            None => self.hash == now.hash,
            Some(n) => {
                self.size == now.size
                    && self.modified == now.modified
                    && content.len() as u64 >= n
                    && xxhash_rust::xxh3::xxh3_128(&content[..n as usize]) == self.hash
            }
        }
    }
}

#[derive(Debug, Default)]
pub struct ReadTracker {
    reads: Mutex<Reads>,
}

#[derive(Debug, Default)]
struct Reads {
    /// Each file's stamp and the version at which it was recorded.
    files: HashMap<PathBuf, (FileStamp, u64)>,
    version: u64,
}

impl ReadTracker {
    /// Records a read of `path` (canonical).
    pub fn record(&self, path: &Path, stamp: FileStamp) {
        let mut r = self.lock();
        r.version += 1;
        let v = r.version;
        r.files.insert(path.to_path_buf(), (stamp, v));
    }

    pub fn last_read(&self, path: &Path) -> Option<FileStamp> {
        self.lock().files.get(path).map(|(s, _)| *s)
    }

    /// The model must read `path` again before changing it.
    pub fn forget(&self, path: &Path) {
        self.lock().files.remove(path);
    }

    /// Files recorded after version `since`, newest first, and the
    /// version now.
    pub fn since(&self, since: u64) -> (Vec<(PathBuf, FileStamp)>, u64) {
        let r = self.lock();
        let mut newer: Vec<(&PathBuf, &(FileStamp, u64))> =
            r.files.iter().filter(|(_, (_, v))| *v > since).collect();
        newer.sort_by_key(|(_, (_, v))| std::cmp::Reverse(*v));
        (
            newer
                .into_iter()
                .map(|(p, (s, _))| (p.clone(), *s))
                .collect(),
            r.version,
        )
    }

    /// Keeps only the files `keep` says yes to.
    pub fn retain(&self, keep: &dyn Fn(&Path) -> bool) {
        self.lock().files.retain(|p, _| keep(p));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Reads> {
        // A panic while holding this lock cannot leave the map half-updated
        // (single insert/get), so a poisoned lock is still consistent.
        self.reads.lock().unwrap_or_else(|p| p.into_inner())
    }
}
