//! File watching: changes made outside the agent (the person's editor, a
//! build, a command) are forwarded to the running servers as
//! `workspace/didChangeWatchedFiles`, debounced, ignoring `.git` and ignored
//! paths, and announced to front ends that listen.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use notify::{EventKind, RecursiveMode, Watcher};

use super::LspManager;

/// Changes closer together than this are sent as one batch.
const DEBOUNCE: Duration = Duration::from_millis(200);
/// A change to a file the agent itself wrote this recently is its own.
const OWN_WRITE: Duration = Duration::from_secs(2);

/// What happened to a file, as LSP numbers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Created = 1,
    Changed = 2,
    Deleted = 3,
}

#[derive(Default)]
pub struct OwnWrites {
    /// Written by the file tools, which told the servers themselves.
    recent: Mutex<HashMap<PathBuf, Instant>>,
    /// Written by the agent's commands: the servers still need to hear of
    /// them, but the person is not told of a change "outside the agent".
    commands: Mutex<HashMap<PathBuf, Instant>>,
}

impl OwnWrites {
    pub fn note(&self, path: &Path) {
        note_in(&self.recent, path);
    }

    /// A file an agent's command writes.
    pub fn note_command(&self, path: &Path) {
        note_in(&self.commands, path);
    }

    fn is_own(&self, path: &Path) -> bool {
        seen_in(&self.recent, path)
    }

    fn by_command(&self, path: &Path) -> bool {
        seen_in(&self.commands, path)
    }
}

fn note_in(map: &Mutex<HashMap<PathBuf, Instant>>, path: &Path) {
    let mut m = map.lock().unwrap_or_else(|p| p.into_inner());
    m.retain(|_, t| t.elapsed() < OWN_WRITE);
    m.insert(path.to_path_buf(), Instant::now());
}

fn seen_in(map: &Mutex<HashMap<PathBuf, Instant>>, path: &Path) -> bool {
    let m = map.lock().unwrap_or_else(|p| p.into_inner());
    m.get(path).is_some_and(|t| t.elapsed() < OWN_WRITE)
}

/// Starts watching `root`; the watcher lives as long as the returned handle.
pub fn start(
    manager: Weak<LspManager>,
    root: &Path,
    own: Arc<OwnWrites>,
) -> Option<notify::RecommendedWatcher> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<notify::Event>();
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if let Ok(ev) = res {
            let _ = tx.send(ev);
        }
    })
    .ok()?;
    watcher.watch(root, RecursiveMode::Recursive).ok()?;
    let ignore = {
        let mut b = ignore::gitignore::GitignoreBuilder::new(root);
        b.add(root.join(".gitignore"));
        b.build().ok()
    };
    let root = root.to_path_buf();
    tokio::spawn(async move {
        while let Some(first) = rx.recv().await {
            let mut batch: BTreeMap<PathBuf, Change> = BTreeMap::new();
            let mut take = |ev: notify::Event| {
                let kind = match ev.kind {
                    EventKind::Create(_) => Change::Created,
                    EventKind::Remove(_) => Change::Deleted,
                    EventKind::Modify(_) => Change::Changed,
                    _ => return,
                };
                for p in ev.paths {
                    let skip = p.components().any(|c| c.as_os_str() == ".git")
                        || p.file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with(".agent-write-"))
                        || ignore.as_ref().is_some_and(|g| {
                            g.matched_path_or_any_parents(&p, p.is_dir()).is_ignore()
                        })
                        || !p.starts_with(&root);
                    if !skip {
                        batch.insert(p, kind);
                    }
                }
            };
            take(first);
            let deadline = tokio::time::Instant::now() + DEBOUNCE;
            while let Ok(Some(ev)) = tokio::time::timeout_at(deadline, rx.recv()).await {
                take(ev);
            }
            let Some(manager) = manager.upgrade() else {
                break;
            };
            let changes: Vec<(PathBuf, Change)> = batch.into_iter().collect();
            // The agent's own writes reached the servers as didChange already.
            let external: Vec<(PathBuf, Change)> = changes
                .into_iter()
                .filter(|(p, _)| !own.is_own(p))
                .collect();
            if external.is_empty() {
                continue;
            }
            manager.forward_watched(&external).await;
            let outside: Vec<PathBuf> = external
                .into_iter()
                .map(|(p, _)| p)
                .filter(|p| !own.by_command(p))
                .collect();
            if !outside.is_empty() {
                let _ = manager.external_changes.send(outside);
            }
        }
    });
    Some(watcher)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn outside_changes_are_announced_and_ignored_paths_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join(".gitignore"), "skip.txt\n").unwrap();
        let m = Arc::new(LspManager::new(
            Default::default(),
            root.clone(),
            root.join("data"),
            Default::default(),
        ));
        m.watch();
        let mut rx = m.external_changes.subscribe();
        tokio::time::sleep(Duration::from_millis(100)).await;
        std::fs::write(root.join("skip.txt"), "x").unwrap();
        m.own_writes.note(&root.join("mine.txt"));
        std::fs::write(root.join("mine.txt"), "x").unwrap();
        std::fs::write(root.join("theirs.txt"), "x").unwrap();
        let got = tokio::time::timeout(Duration::from_secs(3), rx.recv())
            .await
            .expect("no change announced")
            .unwrap();
        assert_eq!(got, vec![root.join("theirs.txt")]);
    }
}

#[cfg(test)]
mod fake_server_tests {
    use super::*;

    #[tokio::test]
    async fn watched_changes_reach_a_running_server() {
        let Some(fake) = crate::testing::example("fake_lsp") else {
            crate::testing::prerequisite(
                false,
                "examples/fake_lsp is not built (`cargo build --examples`)",
            );
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let server = crate::lsp::ServerConfig {
            command: fake.display().to_string(),
            extensions: vec!["txt".into()],
            ..Default::default()
        };
        let make = || {
            LspManager::new(
                [("fake".to_string(), server.clone())].into(),
                root.clone(),
                root.join("data"),
                Default::default(),
            )
        };
        std::fs::write(root.join("a.txt"), "ok\n").unwrap();
        let d = |p: &Path| p.display().to_string();
        // In a project nobody trusted, no server starts: it runs their code.
        let untrusted = Arc::new(make()).after_change(&root.join("a.txt"), &d).await;
        assert_eq!(
            untrusted.as_deref(),
            Some(
                format!(
                    "Diagnostics: unavailable ({}).",
                    super::super::manager::UNTRUSTED
                )
                .as_str()
            )
        );
        let sandbox =
            crate::shell::Sandbox::new(crate::shell::SandboxMode::WorkspaceWrite, &root, None, &[]);
        let m = Arc::new(make().trusted(sandbox));
        m.watch();
        let r = m.after_change(&root.join("a.txt"), &d).await;
        assert!(r.is_some());
        std::fs::write(root.join("other.txt"), "hi\n").unwrap();
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let all = m.diagnostics(None, &d).await;
        assert!(all.contains("watched change"), "{all}");
    }
}
