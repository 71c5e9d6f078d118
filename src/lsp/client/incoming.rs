//! What a server sends on its own, and how it updates what the client
//! knows: publications (and how long they took), progress (loading,
//! checks), its status, errors it showed, and the files it registered to
//! watch.

use std::time::Duration;

use lsp_types::PublishDiagnosticsParams;
use serde_json::Value;

use super::{Published, State, WatchRule, canonical, path_of};

/// Work whose results come as publications later (rust-analyzer's
/// `cargo check` after a save).
fn is_check(title: &str) -> bool {
    let t = title.to_lowercase();
    t.contains("check") || t.contains("flycheck")
}

impl State {
    fn note_progress(&mut self, token: String, title: Option<&str>) {
        match title {
            Some(title) => {
                if is_check(title) {
                    self.checks_begun += 1;
                    self.checking += 1;
                }
                self.progress.insert(token, title.to_string());
            }
            None => {
                if self.progress.remove(&token).is_some_and(|t| is_check(&t)) {
                    self.checking = self.checking.saturating_sub(1);
                }
            }
        }
    }
}

/// How a server said what it registered to watch.
fn watch_rules(registration: &Value) -> Vec<WatchRule> {
    let Some(list) = registration
        .pointer("/registerOptions/watchers")
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|w| {
            let kinds = w.get("kind").and_then(Value::as_u64).unwrap_or(7) as u8;
            let (pattern, base) = match w.get("globPattern")? {
                Value::String(p) => (p.clone(), None),
                rel => {
                    let base = rel.get("baseUri").and_then(|b| match b {
                        Value::String(u) => path_of(u),
                        o => o.get("uri").and_then(Value::as_str).and_then(path_of),
                    })?;
                    (rel.get("pattern")?.as_str()?.to_string(), Some(base))
                }
            };
            let glob = globset::GlobBuilder::new(&pattern)
                .literal_separator(true)
                .build()
                .ok()?
                .compile_matcher();
            Some(WatchRule { glob, base, kinds })
        })
        .collect()
}

pub(super) fn on_message(st: &mut State, method: &str, params: Value) {
    match method {
        "textDocument/publishDiagnostics" => {
            let Ok(p) = serde_json::from_value::<PublishDiagnosticsParams>(params) else {
                return;
            };
            st.seq += 1;
            let seq = st.seq;
            let uri = canonical(p.uri.as_str());
            if let Some(sent) = st.docs.get_mut(&uri).and_then(|d| d.sent_at.take()) {
                // Older samples fade, so one slow answer does not last.
                let sample = sent.elapsed();
                let old = st.latency.map_or(Duration::ZERO, |l| l.mul_f64(0.8));
                st.latency = Some(sample.max(old));
            }
            st.pushed.insert(
                uri,
                Published {
                    version: p.version,
                    diagnostics: p.diagnostics,
                    seq,
                },
            );
        }
        "$/progress" => {
            let token = params
                .get("token")
                .map(Value::to_string)
                .unwrap_or_default();
            match params.pointer("/value/kind").and_then(Value::as_str) {
                Some("begin") => {
                    let title = params
                        .pointer("/value/title")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    st.note_progress(token, Some(title));
                }
                Some("end") => st.note_progress(token, None),
                _ => {}
            }
        }
        "window/showMessage" => {
            if params.get("type").and_then(Value::as_u64) == Some(1)
                && let Some(m) = params.get("message").and_then(Value::as_str)
            {
                let m = m.split_whitespace().collect::<Vec<_>>().join(" ");
                st.last_error = Some(crate::text::cut_line(&m, 300));
            }
        }
        "experimental/serverStatus" => {
            st.busy = params.get("quiescent").and_then(Value::as_bool) == Some(false);
        }
        "workspace/diagnostic/refresh" => st.refreshes += 1,
        "client/registerCapability" => {
            for r in params
                .get("registrations")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if r["method"] == "workspace/didChangeWatchedFiles" {
                    let id = r["id"].as_str().unwrap_or_default().to_string();
                    st.watchers.insert(id, watch_rules(r));
                }
            }
        }
        "client/unregisterCapability" => {
            for r in params
                .get("unregisterations")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(id) = r["id"].as_str() {
                    st.watchers.remove(id);
                }
            }
        }
        _ => {}
    }
}
