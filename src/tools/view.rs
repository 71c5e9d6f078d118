//! `view`: numbered lines of a text file, with offset/limit, line and byte
//! caps, binary refusal, lossy decoding of non-UTF-8 text, and "did you mean"
//! for a missing file. Records the read in the read tracker.

use crate::text::cut_line;
use std::io::Read;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Effect, FileStamp, Preview, Tool, ToolContext, ToolError, blocking, render};

pub const MAX_LINES: usize = 2000;
pub const MAX_LINE_CHARS: usize = 2000;
pub const MAX_BYTES: usize = 256 * 1024;
/// Bytes inspected for a NUL to call a file binary (as git and ripgrep do).
const BINARY_PROBE: usize = 8000;
/// Files up to this size are read whole (exact line count, full hash for
/// the read tracker); a larger one is read only as far as what is shown.
const WHOLE_READ_MAX: u64 = 8 * 1024 * 1024;
/// Bytes read between checks for cancellation.
const CHUNK: usize = 256 * 1024;

pub struct View;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ViewArgs {
    /// Path of the file, relative to the project root.
    path: String,
    /// First line to show, 1-based. Default 1.
    offset: Option<usize>,
    /// How many lines to show. Default 2000.
    limit: Option<usize>,
}

impl Tool for View {
    type Args = ViewArgs;
    const NAME: &'static str = "view";

    fn preview(&self) -> Preview {
        Preview::Numbered
    }

    fn description(&self, _ctx: &ToolContext) -> String {
        render(
            include_str!("../../templates/view.md"),
            &[
                ("max_lines", MAX_LINES.to_string()),
                ("max_line_chars", MAX_LINE_CHARS.to_string()),
                ("max_bytes", MAX_BYTES.to_string()),
            ],
        )
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    fn after(&self) -> super::After {
        super::After::Open
    }

    fn paths(args: &ViewArgs) -> Vec<&str> {
        vec![&args.path]
    }

    async fn run(&self, args: ViewArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let ctx = ctx.clone();
        blocking(move || view(&args, &ctx)).await
    }
}

fn view(args: &ViewArgs, ctx: &ToolContext) -> Result<String, ToolError> {
    let ws = &ctx.workspace;
    let path = ws.absolute(&args.path);
    let shown = ws.display(&path);
    if path.is_dir() {
        return Err(ToolError::new(format!(
            "`{shown}` is a directory; use `ls` to list it"
        )));
    }
    // Resolved already: the last component is no link (O_NOFOLLOW keeps
    // it so), and a FIFO must not block the open (O_NONBLOCK).
    let opened = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&path)
    };
    let file = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let similar = ws.similar_files(&path);
            let hint = if similar.is_empty() {
                "use `glob` or `ls` to find the right path".to_string()
            } else {
                format!("did you mean: {}?", similar.join(", "))
            };
            return Err(ToolError::new(format!("file not found: `{shown}`; {hint}")));
        }
        Err(e) => return Err(ToolError::new(format!("cannot read `{shown}`: {e}"))),
    };
    let meta = file
        .metadata()
        .map_err(|e| ToolError::new(format!("cannot read `{shown}`: {e}")))?;
    if !meta.is_file() {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        let kind = if t.is_fifo() {
            "a FIFO (named pipe)"
        } else if t.is_char_device() {
            "a character device"
        } else if t.is_block_device() {
            "a block device"
        } else if t.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        };
        return Err(ToolError::new(format!(
            "`{shown}` is {kind}; `view` reads regular files only (reading it could block or never end)"
        )));
    }
    if meta.len() > WHOLE_READ_MAX {
        return view_part(args, ctx, file, &meta, &path, &shown);
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    read_cancellable(&file, &mut bytes, u64::MAX, ctx, &shown)?;
    if bytes[..bytes.len().min(BINARY_PROBE)].contains(&0) {
        return Err(ToolError::new(format!(
            "`{shown}` is a binary file ({} bytes); `view` shows text files only",
            bytes.len()
        )));
    }
    ctx.tracker.record(&path, FileStamp::of(&meta, &bytes));

    let (text, lossy) = match String::from_utf8(bytes) {
        Ok(t) => (t, false),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
    };
    if text.is_empty() {
        return Ok(format!("(`{shown}` is empty)"));
    }
    let lines: Vec<&str> = text
        .strip_suffix('\n')
        .unwrap_or(&text)
        .split('\n')
        .collect();
    let total = lines.len();
    let start = args.offset.unwrap_or(1).max(1);
    if start > total {
        return Err(ToolError::new(format!(
            "`{shown}` has {total} lines; offset {start} is past the end. Use an offset between 1 and {total}."
        )));
    }
    let limit = args.limit.unwrap_or(MAX_LINES).max(1);
    let mut out = String::new();
    let mut last = start - 1;
    for (i, line) in lines.iter().enumerate().skip(start - 1).take(limit) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let numbered = format!("{:>6}\t{}\n", i + 1, cut_line(line, MAX_LINE_CHARS));
        if out.len() + numbered.len() > MAX_BYTES {
            break;
        }
        out.push_str(&numbered);
        last = i + 1;
    }
    if last < total {
        let why = if last - (start - 1) < limit {
            format!("output reached {MAX_BYTES} bytes")
        } else {
            "line limit".to_string()
        };
        out.push_str(&format!(
            "({why}: showing lines {start}-{last} of {total}; continue with offset={})\n",
            last + 1
        ));
    }
    if lossy {
        out.push_str("(note: the file is not valid UTF-8; invalid bytes are shown as �)\n");
    }
    Ok(out)
}

/// Reads up to `max` bytes, checking for cancellation between chunks.
fn read_cancellable(
    mut file: &std::fs::File,
    into: &mut Vec<u8>,
    max: u64,
    ctx: &ToolContext,
    shown: &str,
) -> Result<(), ToolError> {
    let mut chunk = vec![0u8; CHUNK];
    while (into.len() as u64) < max {
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::new(format!(
                "Cancelled while reading `{shown}`."
            )));
        }
        let want = CHUNK.min((max - into.len() as u64) as usize);
        match file.read(&mut chunk[..want]) {
            Ok(0) => break,
            Ok(n) => into.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ToolError::new(format!("cannot read `{shown}`: {e}"))),
        }
    }
    Ok(())
}

/// A file too large to read whole: only as far as the lines shown (and one
/// more, to know there is more), never the rest.
fn view_part(
    args: &ViewArgs,
    ctx: &ToolContext,
    file: std::fs::File,
    meta: &std::fs::Metadata,
    path: &std::path::Path,
    shown: &str,
) -> Result<String, ToolError> {
    use std::io::BufRead;
    let start = args.offset.unwrap_or(1).max(1);
    let limit = args.limit.unwrap_or(MAX_LINES).max(1);
    let mut reader = std::io::BufReader::with_capacity(CHUNK, &file);
    let probe = reader
        .fill_buf()
        .map_err(|e| ToolError::new(format!("cannot read `{shown}`: {e}")))?;
    if probe[..probe.len().min(BINARY_PROBE)].contains(&0) {
        return Err(ToolError::new(format!(
            "`{shown}` is a binary file ({} bytes); `view` shows text files only",
            meta.len()
        )));
    }
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    let mut consumed: u64 = 0;
    let mut line = Vec::new();
    let mut out = String::new();
    let (mut number, mut last, mut lossy, mut more) = (0usize, start - 1, false, false);
    loop {
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::new(format!(
                "Cancelled while reading `{shown}`."
            )));
        }
        line.clear();
        let n = reader
            .by_ref()
            .take(MAX_BYTES as u64 * 4)
            .read_until(b'\n', &mut line)
            .map_err(|e| ToolError::new(format!("cannot read `{shown}`: {e}")))?;
        if n == 0 {
            break;
        }
        hasher.update(&line);
        consumed += n as u64;
        if line.last() != Some(&b'\n') && n == MAX_BYTES * 4 {
            // The start of a line longer than anything shown: its end
            // (cut to size) stands for it.
            continue;
        }
        number += 1;
        if number < start {
            continue;
        }
        if number >= start + limit {
            more = true;
            break;
        }
        let bytes = line.strip_suffix(b"\n").unwrap_or(&line);
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        let text = String::from_utf8_lossy(bytes);
        lossy |= matches!(text, std::borrow::Cow::Owned(_));
        let numbered = format!("{:>6}\t{}\n", number, cut_line(&text, MAX_LINE_CHARS));
        if out.len() + numbered.len() > MAX_BYTES {
            more = true;
            break;
        }
        out.push_str(&numbered);
        last = number;
    }
    ctx.tracker.record(
        path,
        FileStamp {
            modified: meta.modified().ok(),
            size: meta.len(),
            hash: hasher.digest128(),
            prefix: Some(consumed),
        },
    );
    if number < start {
        return Err(ToolError::new(format!(
            "`{shown}` has {number} lines; offset {start} is past the end. Use an offset between 1 and {number}."
        )));
    }
    if more {
        out.push_str(&format!(
            "(showing lines {start}-{last} of a {} byte file, read only this far; continue with offset={})\n",
            meta.len(),
            last + 1
        ));
    }
    if lossy {
        out.push_str("(note: the file is not valid UTF-8; invalid bytes are shown as �)\n");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Workspace;

    fn ctx() -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ctx = ToolContext::new(Workspace::new(root), Vec::new(), Default::default());
        (dir, ctx)
    }

    fn args(path: &str, offset: Option<usize>, limit: Option<usize>) -> ViewArgs {
        ViewArgs {
            path: path.into(),
            offset,
            limit,
        }
    }

    #[test]
    fn special_files_are_refused_without_reading() {
        let (_d, c) = ctx();
        let fifo = c.workspace.root().join("pipe");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: creates a FIFO at a path we own.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let e = view(&args("pipe", None, None), &c).unwrap_err().0;
        assert!(
            e.contains("is a FIFO (named pipe); `view` reads regular files only"),
            "{e}"
        );
        for (dev, kind) in [
            ("/dev/zero", "a character device"),
            ("/dev/urandom", "a character device"),
        ] {
            let e = view(&args(dev, None, None), &c).unwrap_err().0;
            assert!(e.contains(kind), "{dev}: {e}");
        }
    }

    #[test]
    fn a_huge_file_is_read_only_as_far_as_shown() {
        let (_d, c) = ctx();
        let p = c.workspace.root().join("big.log");
        let line = format!("{}\n", "z".repeat(99));
        let text = line.repeat((WHOLE_READ_MAX as usize / 100) + 50_000);
        std::fs::write(&p, &text).unwrap();
        let out = view(&args("big.log", Some(3), Some(2)), &c).unwrap();
        assert_eq!(
            out,
            format!(
                "     3\t{}\n     4\t{}\n(showing lines 3-4 of a {} byte file, read only this far; continue with offset=5)\n",
                "z".repeat(99),
                "z".repeat(99),
                text.len()
            )
        );
        let stamp = c.tracker.last_read(&p).unwrap();
        assert_eq!(
            stamp.prefix,
            Some(500),
            "read five lines, not {:?}",
            stamp.prefix
        );
        // The partial read still guards an edit: unchanged passes, a change
        // in what was read does not.
        let now = FileStamp::of(&std::fs::metadata(&p).unwrap(), text.as_bytes());
        assert!(stamp.unchanged(&now, text.as_bytes()));
        let mut changed = text.clone().into_bytes();
        changed[10] = b'y';
        assert!(!stamp.unchanged(&now, &changed));
    }

    #[test]
    fn a_read_stops_when_cancelled() {
        let (_d, c) = ctx();
        std::fs::write(c.workspace.root().join("a.txt"), "x\n").unwrap();
        c.cancel.cancel();
        let e = view(&args("a.txt", None, None), &c).unwrap_err().0;
        assert_eq!(e, "Cancelled while reading `a.txt`.");
    }

    #[test]
    fn numbers_lines_and_records_the_read() {
        let (_d, c) = ctx();
        let p = c.workspace.root().join("a.txt");
        std::fs::write(&p, "one\r\ntwo\n").unwrap();
        assert_eq!(
            view(&args("a.txt", None, None), &c).unwrap(),
            "     1\tone\n     2\ttwo\n"
        );
        let stamp = c.tracker.last_read(&p).unwrap();
        assert_eq!(stamp.size, 9);
    }

    #[test]
    fn offset_limit_and_continuation_note() {
        let (_d, c) = ctx();
        let text: String = (1..=10).map(|i| format!("l{i}\n")).collect();
        std::fs::write(c.workspace.root().join("a.txt"), text).unwrap();
        let out = view(&args("a.txt", Some(3), Some(2)), &c).unwrap();
        assert_eq!(
            out,
            "     3\tl3\n     4\tl4\n(line limit: showing lines 3-4 of 10; continue with offset=5)\n"
        );
        let e = view(&args("a.txt", Some(11), None), &c).unwrap_err().0;
        assert!(e.contains("has 10 lines; offset 11 is past the end"), "{e}");
    }

    #[test]
    fn default_limit_is_max_lines() {
        let (_d, c) = ctx();
        let text: String = (1..=MAX_LINES + 5).map(|i| format!("{i}\n")).collect();
        std::fs::write(c.workspace.root().join("big.txt"), text).unwrap();
        let out = view(&args("big.txt", None, None), &c).unwrap();
        assert_eq!(out.lines().count(), MAX_LINES + 1);
        assert!(
            out.ends_with(&format!(
                "showing lines 1-{MAX_LINES} of {}; continue with offset={})\n",
                MAX_LINES + 5,
                MAX_LINES + 1
            )),
            "{}",
            &out[out.len() - 120..]
        );
    }

    #[test]
    fn long_lines_are_cut_and_bytes_capped() {
        let (_d, c) = ctx();
        let long = "x".repeat(MAX_LINE_CHARS + 10);
        std::fs::write(c.workspace.root().join("l.txt"), format!("{long}\n")).unwrap();
        let out = view(&args("l.txt", None, None), &c).unwrap();
        assert!(out.contains("… [10 more characters cut]"), "{out}");
        let many: String = (0..400)
            .map(|_| format!("{}\n", "y".repeat(1000)))
            .collect();
        std::fs::write(c.workspace.root().join("m.txt"), many).unwrap();
        let out = view(&args("m.txt", None, None), &c).unwrap();
        assert!(out.len() <= MAX_BYTES + 200);
        assert!(
            out.contains(&format!("output reached {MAX_BYTES} bytes")),
            "{}",
            &out[out.len() - 150..]
        );
    }

    #[test]
    fn binary_missing_directory_and_lossy() {
        let (_d, c) = ctx();
        let root = c.workspace.root().to_path_buf();
        std::fs::write(root.join("b.bin"), [1u8, 0, 2]).unwrap();
        assert!(
            view(&args("b.bin", None, None), &c)
                .unwrap_err()
                .0
                .contains("is a binary file (3 bytes)")
        );
        std::fs::write(root.join("config.toml"), "x").unwrap();
        let e = view(&args("confg.toml", None, None), &c).unwrap_err().0;
        assert_eq!(
            e,
            "file not found: `confg.toml`; did you mean: config.toml?"
        );
        std::fs::create_dir(root.join("d")).unwrap();
        assert!(
            view(&args("d", None, None), &c)
                .unwrap_err()
                .0
                .contains("is a directory; use `ls`")
        );
        std::fs::write(root.join("latin1.txt"), b"caf\xe9\n").unwrap();
        let out = view(&args("latin1.txt", None, None), &c).unwrap();
        assert!(
            out.starts_with("     1\tcaf\u{fffd}\n") && out.contains("not valid UTF-8"),
            "{out}"
        );
        std::fs::write(root.join("empty.txt"), "").unwrap();
        assert_eq!(
            view(&args("empty.txt", None, None), &c).unwrap(),
            "(`empty.txt` is empty)"
        );
    }
}
