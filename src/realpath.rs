//! Paths as the kernel resolves them, and lexical normalisation: what the
//! permission rules and the command analysis both compare paths by.

use std::path::{Component, Path, PathBuf};

/// Symlinks followed while resolving one path (the kernel's limit).
const MAX_LINKS: usize = 40;

/// An absolute path as the kernel resolves it: each existing component that
/// is a symlink is replaced by its target (so `..` after it goes to the
/// target's parent), the part that does not exist is taken as written.
/// `None` for a symlink loop.
pub fn physical(path: &Path) -> Option<PathBuf> {
    let mut todo: std::collections::VecDeque<PathBuf> = path
        .components()
        .map(|c| PathBuf::from(c.as_os_str()))
        .collect();
    let mut real = PathBuf::from("/");
    let mut links = 0;
    // Once a component is missing, nothing below it exists to be a link.
    let mut missing = false;
    while let Some(part) = todo.pop_front() {
        match part.components().next() {
            Some(Component::RootDir) => real = PathBuf::from("/"),
            Some(Component::CurDir) | None | Some(Component::Prefix(_)) => {}
            Some(Component::ParentDir) => {
                real.pop();
            }
            Some(Component::Normal(name)) => {
                let next = real.join(name);
                if missing {
                    real = next;
                    continue;
                }
                match std::fs::symlink_metadata(&next) {
                    Ok(m) if m.file_type().is_symlink() => {
                        links += 1;
                        if links > MAX_LINKS {
                            return None;
                        }
                        let target = std::fs::read_link(&next).ok()?;
                        for c in target.components().rev() {
                            todo.push_front(PathBuf::from(c.as_os_str()));
                        }
                    }
                    Ok(_) => real = next,
                    Err(_) => {
                        missing = true;
                        real = next;
                    }
                }
            }
        }
    }
    Some(real)
}

/// Lexical normalisation: `.` dropped, `..` applied, `//` collapsed.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    if out.as_os_str().is_empty() {
        out.push("/");
    }
    out
}
