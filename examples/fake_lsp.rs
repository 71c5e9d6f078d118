//! A fake language server for the tests (built with tower-lsp): every line
//! containing `ERROR` is an error diagnostic. `FAKE_LSP_MODE` picks how it
//! publishes: `versioned` (default), `noversion`, `stale` (first re-sends the
//! previous version's diagnostics), `late` (waits 1.5 s), `crash` (exits on
//! the first change), `pull` (never pushes; answers `textDocument/diagnostic`),
//! `loading` (pull, answering "clean" while an "Indexing" progress runs for
//! 1.5 s, then asking for a refresh), `cancel` (pull, cancelling the first
//! two requests with `retriggerRequest`), `quiet` (versioned, but sends
//! nothing for a document that was clean and stays clean) and `hang` (never
//! answers `initialize`). It registers for watched `*.txt` changes.

// A test fixture: it may unwrap and print; a failure is the test's report.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::sync::Mutex;
use std::time::Duration;

use tower_lsp::jsonrpc::Result;
use tower_lsp::lsp_types::*;
use tower_lsp::{Client, LanguageServer, LspService, Server};

struct Fake {
    client: Client,
    mode: String,
    /// The latest text of each open document, for `references`.
    texts: Mutex<std::collections::HashMap<Url, String>>,
    previous: Mutex<Option<(Vec<Diagnostic>, i32)>>,
    /// `loading` mode: still indexing.
    indexing: std::sync::Arc<std::sync::atomic::AtomicBool>,
    announced: std::sync::atomic::AtomicBool,
    /// `cancel` mode: pulls cancelled so far.
    cancelled: std::sync::atomic::AtomicU32,
    /// `quiet` mode: documents whose last publication was empty.
    clean: Mutex<std::collections::HashSet<Url>>,
}

fn diagnose(text: &str) -> Vec<Diagnostic> {
    text.lines()
        .enumerate()
        .filter_map(|(n, l)| {
            let col = l.find("ERROR")?;
            Some(Diagnostic {
                range: Range::new(
                    Position::new(n as u32, col as u32),
                    Position::new(n as u32, col as u32 + 5),
                ),
                severity: Some(DiagnosticSeverity::ERROR),
                code: Some(NumberOrString::String("E1".into())),
                source: Some("fake".into()),
                message: "ERROR found".into(),
                ..Diagnostic::default()
            })
        })
        .collect()
}

impl Fake {
    /// `loading` mode: announces "Indexing" (once, before any answer) and
    /// ends it 1.5 s later with a request to pull again.
    async fn start_loading(&self) {
        use std::sync::atomic::Ordering;
        if self.mode != "loading" || self.announced.swap(true, Ordering::SeqCst) {
            return;
        }
        self.indexing.store(true, Ordering::SeqCst);
        let progress = |value| ProgressParams {
            token: NumberOrString::String("idx".into()),
            value: ProgressParamsValue::WorkDone(value),
        };
        self.client
            .send_notification::<notification::Progress>(progress(WorkDoneProgress::Begin(
                WorkDoneProgressBegin {
                    title: "Indexing".into(),
                    ..WorkDoneProgressBegin::default()
                },
            )))
            .await;
        let (client, indexing) = (self.client.clone(), self.indexing.clone());
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            indexing.store(false, Ordering::SeqCst);
            client
                .send_notification::<notification::Progress>(progress(WorkDoneProgress::End(
                    WorkDoneProgressEnd::default(),
                )))
                .await;
            let _ = client.workspace_diagnostic_refresh().await;
        });
    }

    async fn publish(&self, uri: Url, text: &str, version: i32) {
        let diags = diagnose(text);
        match self.mode.as_str() {
            // Pull modes answer `textDocument/diagnostic` and never push.
            "pull" | "loading" | "cancel" => {}
            "quiet" => {
                let was_clean = {
                    let mut clean = self.clean.lock().unwrap();
                    let was = clean.contains(&uri);
                    if diags.is_empty() {
                        clean.insert(uri.clone());
                    } else {
                        clean.remove(&uri);
                    }
                    was
                };
                if !(was_clean && diags.is_empty()) {
                    self.client
                        .publish_diagnostics(uri, diags, Some(version))
                        .await;
                }
            }
            "noversion" => self.client.publish_diagnostics(uri, diags, None).await,
            "late" => {
                tokio::time::sleep(Duration::from_millis(1500)).await;
                self.client
                    .publish_diagnostics(uri, diags, Some(version))
                    .await;
            }
            "stale" => {
                let prev = self
                    .previous
                    .lock()
                    .unwrap()
                    .replace((diags.clone(), version));
                if let Some((old, v)) = prev {
                    self.client
                        .publish_diagnostics(uri.clone(), old, Some(v))
                        .await;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                self.client
                    .publish_diagnostics(uri, diags, Some(version))
                    .await;
            }
            _ => {
                self.client
                    .publish_diagnostics(uri, diags, Some(version))
                    .await
            }
        }
    }
}

#[tower_lsp::async_trait]
impl LanguageServer for Fake {
    async fn diagnostic(
        &self,
        p: DocumentDiagnosticParams,
    ) -> Result<DocumentDiagnosticReportResult> {
        use std::sync::atomic::Ordering;
        self.start_loading().await;
        if self.mode == "cancel" && self.cancelled.fetch_add(1, Ordering::SeqCst) < 2 {
            return Err(tower_lsp::jsonrpc::Error {
                code: tower_lsp::jsonrpc::ErrorCode::ServerError(-32802),
                message: "cancelled".into(),
                data: Some(serde_json::json!({"retriggerRequest": true})),
            });
        }
        let indexing = self.indexing.load(Ordering::SeqCst);
        let text = self
            .texts
            .lock()
            .unwrap()
            .get(&p.text_document.uri)
            .cloned()
            .unwrap_or_default();
        Ok(DocumentDiagnosticReportResult::Report(
            DocumentDiagnosticReport::Full(RelatedFullDocumentDiagnosticReport {
                related_documents: None,
                full_document_diagnostic_report: FullDocumentDiagnosticReport {
                    result_id: None,
                    // What a loading server says: nothing, for want of knowing.
                    items: if indexing {
                        Vec::new()
                    } else {
                        diagnose(&text)
                    },
                },
            }),
        ))
    }

    /// `let NAME` in any open document.
    #[allow(deprecated)]
    async fn symbol(&self, p: WorkspaceSymbolParams) -> Result<Option<Vec<SymbolInformation>>> {
        let texts = self.texts.lock().unwrap().clone();
        let mut found = Vec::new();
        for (uri, text) in texts {
            for (n, l) in text.lines().enumerate() {
                if let Some(col) = l.find(&format!("let {}", p.query)) {
                    let start = Position::new(n as u32, (col + 4) as u32);
                    found.push(SymbolInformation {
                        name: p.query.clone(),
                        kind: SymbolKind::VARIABLE,
                        tags: None,
                        deprecated: None,
                        location: Location::new(uri.clone(), Range::new(start, start)),
                        container_name: None,
                    });
                }
            }
        }
        Ok(Some(found))
    }

    async fn initialize(&self, _: InitializeParams) -> Result<InitializeResult> {
        if self.mode == "hang" {
            std::future::pending::<()>().await;
        }
        let pull = ["pull", "loading", "cancel"]
            .contains(&self.mode.as_str())
            .then(|| {
                DiagnosticServerCapabilities::Options(DiagnosticOptions {
                    identifier: Some("fake".into()),
                    ..DiagnosticOptions::default()
                })
            });
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                text_document_sync: Some(TextDocumentSyncCapability::Kind(
                    TextDocumentSyncKind::FULL,
                )),
                diagnostic_provider: pull,
                workspace_symbol_provider: Some(OneOf::Left(true)),
                references_provider: Some(OneOf::Left(true)),
                ..ServerCapabilities::default()
            },
            ..InitializeResult::default()
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        self.start_loading().await;
        let watch = DidChangeWatchedFilesRegistrationOptions {
            watchers: vec![FileSystemWatcher {
                glob_pattern: GlobPattern::String("**/*.txt".into()),
                kind: None,
            }],
        };
        let _ = self
            .client
            .register_capability(vec![Registration {
                id: "watch".into(),
                method: "workspace/didChangeWatchedFiles".into(),
                register_options: serde_json::to_value(watch).ok(),
            }])
            .await;
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    /// Every occurrence of the word under the cursor in the document.
    async fn references(&self, p: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let uri = p.text_document_position.text_document.uri;
        let pos = p.text_document_position.position;
        let text = self
            .texts
            .lock()
            .unwrap()
            .get(&uri)
            .cloned()
            .unwrap_or_default();
        let Some(line) = text.lines().nth(pos.line as usize) else {
            return Ok(None);
        };
        let is_word = |c: char| c.is_alphanumeric() || c == '_';
        let at = pos.character as usize;
        let start = line[..at.min(line.len())]
            .rfind(|c: char| !is_word(c))
            .map_or(0, |i| i + 1);
        let end = line[at.min(line.len())..]
            .find(|c: char| !is_word(c))
            .map_or(line.len(), |i| at + i);
        let word = &line[start..end];
        if word.is_empty() {
            return Ok(None);
        }
        let mut found = Vec::new();
        for (n, l) in text.lines().enumerate() {
            for (col, _) in l.match_indices(word) {
                found.push(Location::new(
                    uri.clone(),
                    Range::new(
                        Position::new(n as u32, col as u32),
                        Position::new(n as u32, (col + word.len()) as u32),
                    ),
                ));
            }
        }
        Ok(Some(found))
    }

    async fn did_open(&self, p: DidOpenTextDocumentParams) {
        self.texts
            .lock()
            .unwrap()
            .insert(p.text_document.uri.clone(), p.text_document.text.clone());
        self.publish(
            p.text_document.uri,
            &p.text_document.text,
            p.text_document.version,
        )
        .await;
    }

    async fn did_change_watched_files(&self, p: DidChangeWatchedFilesParams) {
        // Reports each watched change, so tests can see it arrived.
        for c in p.changes {
            let d = Diagnostic {
                severity: Some(DiagnosticSeverity::ERROR),
                code: Some(NumberOrString::String("W".into())),
                source: Some("fake".into()),
                message: "watched change".into(),
                ..Diagnostic::default()
            };
            self.client.publish_diagnostics(c.uri, vec![d], None).await;
        }
    }

    async fn did_change(&self, p: DidChangeTextDocumentParams) {
        if self.mode == "crash" {
            std::process::exit(1);
        }
        if let Some(change) = p.content_changes.last() {
            self.texts
                .lock()
                .unwrap()
                .insert(p.text_document.uri.clone(), change.text.clone());
            self.publish(p.text_document.uri, &change.text, p.text_document.version)
                .await;
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mode = std::env::var("FAKE_LSP_MODE").unwrap_or_else(|_| "versioned".into());
    let (service, socket) = LspService::new(|client| Fake {
        client,
        mode,
        previous: Mutex::new(None),
        texts: Mutex::default(),
        indexing: Default::default(),
        announced: Default::default(),
        cancelled: Default::default(),
        clean: Mutex::default(),
    });
    Server::new(tokio::io::stdin(), tokio::io::stdout(), socket)
        .serve(service)
        .await;
}
