//! What `write`, `edit` and `multiedit` share: the staleness guard over the
//! read tracker, per-file locks, atomic writes that keep permissions, the
//! session's file history, line-ending and BOM handling, and diffs.

use std::collections::HashMap;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use similar::{ChangeTag, TextDiff};

use super::{FileStamp, ToolContext, ToolError};
use crate::permission::RiskAssessment;
use crate::shell::paths::Place;

/// A file as read for a change, with its encoding details.
pub struct Original {
    pub bytes: Vec<u8>,
    /// Text with a BOM removed and CRLF line ends turned into LF.
    pub text: String,
    pub bom: bool,
    pub crlf: bool,
    pub mode: Option<u32>,
    /// Modification time, size and hash when it was read.
    pub stamp: FileStamp,
}

impl Original {
    fn decode(
        bytes: Vec<u8>,
        mode: Option<u32>,
        stamp: FileStamp,
        shown: &str,
    ) -> Result<Original, ToolError> {
        let text = std::str::from_utf8(&bytes).map_err(|_| {
            ToolError::new(format!(
                "`{shown}` is not valid UTF-8 text; it cannot be edited with this tool"
            ))
        })?;
        let (bom, text) = match text.strip_prefix('\u{feff}') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        // Only a file whose every line end is CRLF is converted (and restored).
        let lf = text.matches('\n').count();
        let crlf = lf > 0 && text.matches("\r\n").count() == lf;
        let text = if crlf {
            text.replace("\r\n", "\n")
        } else {
            text.to_string()
        };
        Ok(Original {
            text,
            bom,
            crlf,
            bytes,
            mode,
            stamp,
        })
    }

    /// `new` in the file's own encoding: BOM and line ends as they were.
    pub fn encode(&self, new: &str) -> Vec<u8> {
        let mut out = String::with_capacity(new.len() + 3);
        if self.bom {
            out.push('\u{feff}');
        }
        if self.crlf {
            out.push_str(&new.replace('\n', "\r\n"));
        } else {
            out.push_str(new);
        }
        out.into_bytes()
    }
}

/// A file the project supplies that agent reads by itself (`AGENTS.md`,
/// `.agent/config.toml`): only a regular file (a FIFO would block, a link
/// to `/dev/zero` never end), opened without following a final link, and
/// at most `max` bytes of it (`Ok(None)`: not there). Callers resolve the
/// path and check it is inside the project first.
pub fn read_project_file(path: &Path, max: u64) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("it is not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes)?;
    Ok(Some(bytes))
}

/// Reads `path` for a change: it must have been read in this session and
/// not changed since (content compared by hash, so a touch is no conflict).
pub fn read_checked(ctx: &ToolContext, path: &Path) -> Result<Original, ToolError> {
    let (bytes, mode, now) = read_fresh(ctx, path)?;
    Original::decode(bytes, Some(mode), now, &ctx.workspace.display(path))
}

/// The bytes, mode and stamp of `path`, if it was read in this session and
/// has not changed since.
fn read_fresh(ctx: &ToolContext, path: &Path) -> Result<(Vec<u8>, u32, FileStamp), ToolError> {
    let shown = ctx.workspace.display(path);
    let Some(seen) = ctx.tracker.last_read(path) else {
        return Err(ToolError::new(format!(
            "you must read `{shown}` before editing it; use `view` first"
        )));
    };
    let meta = std::fs::metadata(path)
        .map_err(|e| ToolError::new(format!("cannot read `{shown}`: {e}")))?;
    let bytes =
        std::fs::read(path).map_err(|e| ToolError::new(format!("cannot read `{shown}`: {e}")))?;
    let now = FileStamp::of(&meta, &bytes);
    if !seen.unchanged(&now, &bytes) {
        return Err(ToolError::new(format!(
            "`{shown}` was modified since you last read it ({} bytes then, {} bytes now); view it again before changing it",
            seen.size, now.size
        )));
    }
    Ok((bytes, meta.permissions().mode(), now))
}

/// Reads a file that may not exist yet (for `write`): `None` when it does not.
pub fn read_existing(ctx: &ToolContext, path: &Path) -> Result<Option<Original>, ToolError> {
    let shown = ctx.workspace.display(path);
    if std::fs::symlink_metadata(path).is_err() {
        // Read once, gone now: someone (or a command) deleted it. Writing it
        // back blind could undo their deletion; the next `write` is taken
        // as meaning it.
        if ctx.tracker.last_read(path).is_some() {
            ctx.tracker.forget(path);
            return Err(ToolError::new(format!(
                "`{shown}` was deleted since you read it (by the person or a command); nothing was written. \
                 If you mean to create it again, call `write` again: it will create it"
            )));
        }
        return Ok(None);
    }
    if path.is_dir() {
        return Err(ToolError::new(format!("`{shown}` is a directory")));
    }
    let (bytes, mode, now) = read_fresh(ctx, path)?;
    // `write` replaces the whole content, so a file that is not UTF-8 text
    // (which `edit` cannot change) may be overwritten once it was read.
    if std::str::from_utf8(&bytes).is_err() {
        return Ok(Some(Original {
            text: String::new(),
            bom: false,
            crlf: false,
            bytes,
            mode: Some(mode),
            stamp: now,
        }));
    }
    Original::decode(bytes, Some(mode), now, &shown).map(Some)
}

/// One lock per file, so a check and its write cannot interleave with
/// another call's.
#[derive(Default)]
pub struct FileLocks {
    locks: Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>,
}

impl FileLocks {
    pub async fn lock(&self, path: &Path) -> tokio::sync::OwnedMutexGuard<()> {
        let lock = {
            // Only inserts and clones happen under this lock.
            let mut map = self.locks.lock().unwrap_or_else(|p| p.into_inner());
            Arc::clone(map.entry(path.to_path_buf()).or_default())
        };
        lock.lock_owned().await
    }
}

/// How the temporary file of every write starts (then the writer's pid).
pub const TEMP_PREFIX: &str = ".agent-write-";

static JOURNAL: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Writes in progress, one small file each under `<data>/writes/`, named
/// `<pid>-<uuid>` and holding the temporary file's path: a process killed
/// mid-write (even by `kill -9`) leaves its entry, and the next start
/// removes the temporary file it names. Scanning the project instead would
/// cost every start a walk of the whole tree.
pub struct Journal(Option<PathBuf>);

impl Journal {
    /// Where entries go; set once at start.
    pub fn set_dir(dir: PathBuf) {
        let _ = JOURNAL.set(dir);
    }

    fn note(tmp: &Path) -> Journal {
        let Some(dir) = JOURNAL.get() else {
            return Journal(None);
        };
        let entry = dir.join(format!(
            "{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        let written = std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(&entry, tmp.as_os_str().as_encoded_bytes()));
        Journal(written.is_ok().then_some(entry))
    }

    /// Removes the temporary files of writes whose process is gone;
    /// returns how many.
    pub fn clean(dir: &Path) -> usize {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return 0;
        };
        let mut removed = 0;
        for e in entries.filter_map(Result::ok) {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name.split('-').next().and_then(|p| p.parse::<i32>().ok()) else {
                continue;
            };
            if alive(pid) {
                continue;
            }
            if let Ok(bytes) = std::fs::read(e.path()) {
                let tmp = PathBuf::from(std::ffi::OsString::from(
                    String::from_utf8_lossy(&bytes).into_owned(),
                ));
                let ours = tmp
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(TEMP_PREFIX));
                // Never through a link: only the regular file we created.
                if ours
                    && std::fs::symlink_metadata(&tmp).is_ok_and(|m| m.file_type().is_file())
                    && std::fs::remove_file(&tmp).is_ok()
                {
                    removed += 1;
                }
            }
            let _ = std::fs::remove_file(e.path());
        }
        removed
    }
}

/// Removes, under `root` (not in what git ignores), the temporary files of
/// writes whose process is gone: what a crash left when the journal was
/// elsewhere (another data directory). Returns how many.
pub fn clean_project(root: &Path) -> usize {
    let mut removed = 0;
    let mut walk = ignore::WalkBuilder::new(root);
    walk.require_git(false)
        .hidden(false)
        .filter_entry(|e| e.file_name() != ".git");
    for entry in walk.build().filter_map(Result::ok) {
        let Some(pid) = temp_writer(entry.file_name()) else {
            continue;
        };
        if !alive(pid)
            && entry.file_type().is_some_and(|t| t.is_file())
            && std::fs::remove_file(entry.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// The writer's pid when `name` is exactly what `write_atomic` names its
/// temporary file (`.agent-write-<pid>-<32 hex digits>`): a file of the
/// project's that merely starts the same is not ours to hide or remove.
pub fn temp_writer(name: &std::ffi::OsStr) -> Option<i32> {
    let (pid, id) = name.to_str()?.strip_prefix(TEMP_PREFIX)?.split_once('-')?;
    (id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| pid.parse().ok())
        .flatten()
}

/// Whether process `pid` exists (a reused pid counts: its file is kept).
fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let sent = unsafe { libc::kill(pid, 0) };
    sent == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

impl Drop for Journal {
    fn drop(&mut self) {
        if let Some(entry) = &self.0 {
            let _ = std::fs::remove_file(entry);
        }
    }
}

/// Writes `bytes` to `path` atomically: a temporary file in the same
/// directory, flushed and synced, renamed over the target, with the old
/// file's permissions. A crash leaves the old file or the new, never a mix.
///
/// No time-of-check/time-of-use gap: the path was judged as resolved
/// (inside `root`, or as the absolute path the person approved), so it is
/// walked again from there one directory at a time by descriptor, refusing
/// to follow a link (`O_NOFOLLOW`), and the file is created and renamed
/// relative to the last directory's descriptor. A directory swapped for a
/// link meanwhile makes the write fail; it never lands elsewhere. Written
/// with `openat`/`renameat` by hand: std has no descriptor-relative API and
/// `cap-std` would be a second file-system layer for this one function.
pub fn write_atomic(
    root: Option<&Path>,
    path: &Path,
    bytes: &[u8],
    mode: Option<u32>,
) -> std::io::Result<()> {
    let (dir, file_name, reached) = open_parent(root, path, true)?;
    write_in(&dir, &file_name, &reached, bytes, mode)
}

/// Removes the file at `path` (a resolved path, inside `root` or absolute)
/// by the same descriptor walk as [`write_atomic`]: never through a link
/// that replaced a directory on the way, never a directory.
pub fn remove_file(root: Option<&Path>, path: &Path) -> std::io::Result<()> {
    let (dir, file_name, _) = open_parent(root, path, false)?;
    // SAFETY: unlinkat of a name relative to a directory descriptor we own.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), file_name.as_ptr(), 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The directory holding `path`, opened one component at a time from
/// `root` (or `/`) without following links (creating missing ones when
/// `create`), the file's name, and where the directory really is.
fn open_parent(
    root: Option<&Path>,
    path: &Path,
    create: bool,
) -> std::io::Result<(std::fs::File, std::ffi::CString, PathBuf)> {
    use std::os::unix::ffi::OsStrExt;
    let (anchor, rel) = match root.and_then(|r| path.strip_prefix(r).ok().map(|rel| (r, rel))) {
        Some(found) => found,
        None => (Path::new("/"), path.strip_prefix("/").unwrap_or(path)),
    };
    let names: Vec<std::ffi::CString> = rel
        .components()
        .map(|c| match c {
            std::path::Component::Normal(n) => std::ffi::CString::new(n.as_bytes())
                .map_err(|_| std::io::Error::other("a NUL in the path")),
            _ => Err(std::io::Error::other(
                "the path is not in resolved form (`..`, `.`)",
            )),
        })
        .collect::<std::io::Result<_>>()?;
    let Some((file_name, dirs)) = names.split_last() else {
        return Err(std::io::Error::other("the path names no file"));
    };
    let mut dir = open_dir(
        None,
        &std::ffi::CString::new(anchor.as_os_str().as_bytes())?,
    )?;
    for name in dirs {
        dir = match open_dir(Some(&dir), name) {
            Ok(d) => d,
            Err(e) if create && e.raw_os_error() == Some(libc::ENOENT) => {
                // SAFETY: mkdirat relative to a directory descriptor we own.
                let made = unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o777) };
                if made != 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST)
                {
                    return Err(std::io::Error::last_os_error());
                }
                open_dir(Some(&dir), name)?
            }
            Err(e) => return Err(swapped(e, name)),
        };
    }
    // The directory reached is where it was judged to be.
    let reached = std::fs::read_link(format!("/proc/self/fd/{}", dir.as_raw_fd()))?;
    if root.is_some_and(|r| path.starts_with(r)) && !reached.starts_with(anchor) {
        return Err(std::io::Error::other(format!(
            "the directory was moved out of the project while writing (it is now {}); nothing was written",
            reached.display()
        )));
    }
    Ok((dir, file_name.clone(), reached))
}

/// The temp file, fsync and rename of [`write_atomic`], in `dir`.
fn write_in(
    dir: &std::fs::File,
    file_name: &std::ffi::CStr,
    reached: &Path,
    bytes: &[u8],
    mode: Option<u32>,
) -> std::io::Result<()> {
    let tmp = format!(
        "{TEMP_PREFIX}{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    );
    let tmp_name = std::ffi::CString::new(tmp.as_str())?;
    // Where it is, for the next start to remove if this process dies first.
    let journal = Journal::note(&reached.join(&tmp));
    // New files get the usual 0666 minus umask.
    // SAFETY: openat relative to a directory descriptor we own.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            tmp_name.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0o666 as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened, owned by nothing else.
    let mut tmp = unsafe { std::fs::File::from_raw_fd(fd) };
    let written = (|| {
        tmp.write_all(bytes)?;
        tmp.sync_all()?;
        if let Some(mode) = mode {
            tmp.set_permissions(std::fs::Permissions::from_mode(mode))?;
        }
        // SAFETY: renameat between names relative to our directory descriptor.
        let r = unsafe {
            libc::renameat(
                dir.as_raw_fd(),
                tmp_name.as_ptr(),
                dir.as_raw_fd(),
                file_name.as_ptr(),
            )
        };
        if r != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    })();
    if let Err(e) = written {
        // SAFETY: removes our own temporary file, relative to its directory.
        unsafe { libc::unlinkat(dir.as_raw_fd(), tmp_name.as_ptr(), 0) };
        drop(journal);
        return Err(e);
    }
    drop(journal);
    // Make the rename itself durable.
    let _ = dir.sync_all();
    Ok(())
}

/// A directory opened by descriptor, relative to `parent` (or absolute),
/// never through a link.
fn open_dir(
    parent: Option<&std::fs::File>,
    name: &std::ffi::CStr,
) -> std::io::Result<std::fs::File> {
    let base = parent.map_or(libc::AT_FDCWD, |p| p.as_raw_fd());
    let flags = libc::O_RDONLY
        | libc::O_DIRECTORY
        | libc::O_CLOEXEC
        | if parent.is_some() {
            libc::O_NOFOLLOW
        } else {
            0
        };
    // SAFETY: openat with a NUL-terminated name and a descriptor we own.
    let fd = unsafe { libc::openat(base, name.as_ptr(), flags) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened, owned by nothing else.
    Ok(unsafe { std::fs::File::from_raw_fd(fd) })
}

/// A link (or a file) where a directory was: the path changed under us.
fn swapped(e: std::io::Error, name: &std::ffi::CStr) -> std::io::Error {
    match e.raw_os_error() {
        Some(libc::ELOOP) | Some(libc::ENOTDIR) => std::io::Error::other(format!(
            "`{}` on the path is no longer a directory (it was replaced, by a link perhaps) while writing; nothing was written",
            name.to_string_lossy()
        )),
        _ => e,
    }
}

/// Saves the previous content, writes, and records the new read stamp.
pub fn commit(
    ctx: &ToolContext,
    path: &Path,
    previous: Option<&Original>,
    bytes: &[u8],
) -> Result<(), ToolError> {
    let shown = ctx.workspace.display(path);
    let seq = match ctx.history.record(path, previous.is_some()) {
        Ok(seq) => seq,
        Err(e) => {
            return Err(ToolError::new(format!(
                "could not save the previous content of `{shown}` to the file history ({e}); nothing was written"
            )));
        }
    };
    write_atomic(
        Some(ctx.workspace.root()),
        path,
        bytes,
        previous.and_then(|o| o.mode),
    )
    .map_err(|e| ToolError::new(format!("could not write `{shown}`: {e}")))?;
    // Only a change that landed is one undo may reverse.
    if let Err(e) = ctx.history.landed(seq, Some(bytes)) {
        crate::log::log(&format!(
            "could not record a change of {shown} in the file history: {e}"
        ));
    }
    if let Ok(meta) = std::fs::metadata(path) {
        ctx.tracker.record(path, FileStamp::of(&meta, bytes));
    }
    if let Some(lsp) = &ctx.lsp {
        lsp.own_writes.note(path);
    }
    Ok(())
}

/// Risk of changing `path`: `base` inside the workspace, at least medium
/// outside, high where a change persists or escalates.
pub fn change_risk(ctx: &ToolContext, path: &Path, base: RiskAssessment) -> RiskAssessment {
    let mut risk = base;
    match ctx.workspace.path_env().place(path) {
        Place::Workspace => {}
        Place::Agent => risk.raise(RiskAssessment::high(
            protected(ctx, path).unwrap_or_default(),
        )),
        Place::Persistence(why) => risk.raise(RiskAssessment::high(format!(
            "changes {why} ({}), which runs code later",
            path.display()
        ))),
        Place::Secret(why) => risk.raise(RiskAssessment::high(format!(
            "changes {why} ({})",
            path.display()
        ))),
        Place::System => risk.raise(RiskAssessment::high(format!(
            "changes the system path {}",
            path.display()
        ))),
        _ => risk.raise(RiskAssessment::medium(format!(
            "changes a file outside the project ({})",
            path.display()
        ))),
    }
    risk
}

/// Why changing `path` is for the person alone: it is agent's own.
pub fn protected(ctx: &ToolContext, path: &Path) -> Option<String> {
    matches!(ctx.workspace.path_env().place(path), Place::Agent).then(|| {
        format!(
            "changes agent's own settings or records ({}), which decide what agent allows",
            path.display()
        )
    })
}

/// Why --yolo does not stretch to changing `path`: the OS sandbox lets no
/// command write there.
pub fn outside_sandbox(ctx: &ToolContext, path: &Path) -> Option<String> {
    (!ctx.sandbox.allows_write(path)).then(|| ctx.sandbox.refusal(path))
}

/// The changed region of `old` → `new` as whole lines: the common prefix
/// and suffix are found by comparing bytes, so a one-line edit of a 50 MB
/// file costs two linear scans, not a diff of a million lines.
struct Region<'a> {
    /// 0-based line number where the region starts.
    first_line: usize,
    old: &'a str,
    new: &'a str,
}

fn region<'a>(old: &'a str, new: &'a str, context: usize) -> Region<'a> {
    let (ob, nb) = (old.as_bytes(), new.as_bytes());
    let common = ob.iter().zip(nb).take_while(|(a, b)| a == b).count();
    let max_suffix = ob.len().min(nb.len()) - common;
    let suffix = ob
        .iter()
        .rev()
        .zip(nb.iter().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    // Widen to whole lines plus context lines on each side.
    let mut start = ob[..common]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    for _ in 0..context {
        if start == 0 {
            break;
        }
        start = ob[..start - 1]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
    }
    let widen_end = |bytes: &[u8], end: usize| {
        let mut e = bytes[end..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| end + i + 1);
        for _ in 0..context {
            if e >= bytes.len() {
                break;
            }
            e = bytes[e..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |i| e + i + 1);
        }
        e
    };
    let old_end = widen_end(ob, ob.len() - suffix);
    let new_end = widen_end(nb, nb.len() - suffix);
    let first_line = ob[..start].iter().filter(|&&b| b == b'\n').count();
    // `start` and the ends sit on line boundaries, so they are char boundaries.
    Region {
        first_line,
        old: &old[start..old_end.max(start)],
        new: &new[start..new_end.max(start)],
    }
}

/// Lines added and removed between two texts.
pub fn line_counts(old: &str, new: &str) -> (usize, usize) {
    let r = region(old, new, 0);
    let diff = TextDiff::from_lines(r.old, r.new);
    let mut added = 0;
    let mut removed = 0;
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    (added, removed)
}

/// A unified diff of `old` → `new` over the changed region, with the
/// file's real line numbers.
pub fn unified_diff(shown: &str, old: &str, new: &str) -> String {
    const CONTEXT: usize = 3;
    let r = region(old, new, CONTEXT);
    let diff = TextDiff::from_lines(r.old, r.new);
    let mut out = format!("--- a/{shown}\n+++ b/{shown}\n");
    for group in diff.grouped_ops(CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_range = first.old_range().start..last.old_range().end;
        let new_range = first.new_range().start..last.new_range().end;
        out.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            r.first_line + old_range.start + 1,
            old_range.len(),
            r.first_line + new_range.start + 1,
            new_range.len()
        ));
        for op in &group {
            for change in diff.iter_changes(op) {
                let sign = match change.tag() {
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                    ChangeTag::Equal => ' ',
                };
                out.push(sign);
                out.push_str(change.value().trim_end_matches('\n'));
                out.push('\n');
            }
        }
    }
    out
}

/// "1 line", "3 lines".
pub fn lines(n: usize) -> String {
    if n == 1 {
        "1 line".into()
    } else {
        format!("{n} lines")
    }
}

/// Thousands separators, for descriptions a person reads.
pub fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests;
