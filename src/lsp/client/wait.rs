//! Waiting for answers that are current: a change's diagnostics (pulled,
//! or published for the version sent, or silence from a server that stays
//! quiet when clean), other open documents after a change, a check the
//! save started, and the end of loading. Each wait ends by its deadline.

use std::time::{Duration, Instant};

use lsp_types::Diagnostic;
use serde_json::json;

use super::super::transport::RpcError;
use super::{Answer, Client, Published, Sent, lock};

/// Other open documents pulled again after a change.
const PULLED_OTHERS: usize = 16;
/// LSP's "content modified" and "server cancelled": ask again.
const RETRY_CODES: [i64; 2] = [-32801, -32802];

impl Client {
    /// After a save: a check the server starts (within `settle`) is waited
    /// for until it ends, or `deadline`; its publications then count.
    /// True when one is still running at the deadline.
    /// Only a server that has run a check before is waited for: others
    /// (most servers) cost nothing here.
    pub async fn until_checked(
        &self,
        begun_before: u64,
        settle: Duration,
        deadline: Instant,
    ) -> bool {
        if lock(&self.state).checks_begun == 0 {
            return false;
        }
        let started = Instant::now();
        loop {
            let notified = self.arrived.notified();
            let (begun, running) = {
                let st = lock(&self.state);
                (st.checks_begun > begun_before, st.checking > 0)
            };
            if begun && !running {
                return false;
            }
            let now = Instant::now();
            if now >= deadline {
                return running;
            }
            let wait = if begun || running {
                deadline - now
            } else if now.duration_since(started) >= settle {
                return false;
            } else {
                (started + settle - now).min(deadline - now)
            };
            let _ = tokio::time::timeout(wait, notified).await;
        }
    }

    /// How many checks have begun so far.
    pub fn checks_begun(&self) -> u64 {
        lock(&self.state).checks_begun
    }

    /// Waits until the server is done loading, or `deadline`.
    pub async fn until_loaded(&self, deadline: Instant) {
        loop {
            let notified = self.arrived.notified();
            if self.loading().is_none() {
                return;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || tokio::time::timeout(left, notified).await.is_err() {
                return;
            }
        }
    }

    /// Diagnostics for what `sent` sent, by `deadline`: pulled from a
    /// server that answers requests (asked again when it says the content
    /// changed, when it asks to be asked again, or while it is loading);
    /// otherwise a publication for that version (or, from a server that
    /// sends no versions, the first one after it), once publications have
    /// been quiet for `settle`.
    pub async fn diagnostics_after(
        &self,
        sent: &Sent,
        settle: Duration,
        deadline: Instant,
    ) -> Answer {
        if self.pull {
            return self.pull_until(&sent.uri, deadline).await;
        }
        if sent.unchanged
            && let Some(d) = self.report_of(&lock(&self.state), &sent.uri)
        {
            // Nothing changed: the current report is the answer.
            return Answer::Current(d);
        }
        let started = Instant::now();
        // How long silence must last to mean "still clean": twice what
        // the server takes to answer a change (1 s until that is known).
        let quiet = lock(&self.state)
            .latency
            .map_or(Duration::from_secs(1), |l| l * 2)
            .min(Duration::from_secs(2))
            .max(settle);
        let mut current: Option<Vec<Diagnostic>> = None;
        loop {
            let notified = self.arrived.notified();
            let loading = {
                let st = lock(&self.state);
                if let Some(p) = st.pushed.get(&sent.uri)
                    && st.current(&sent.uri, p)
                    && (p.version.is_some() || p.seq > sent.seq)
                {
                    current = Some(p.diagnostics.clone());
                }
                st.loading()
            };
            let now = Instant::now();
            if now >= deadline {
                return match (current, loading) {
                    (_, Some(l)) => Answer::Loading(l),
                    (Some(d), None) => Answer::Current(d),
                    (None, None) => Answer::Missing,
                };
            }
            // A server that skips republishing a clean document: silence
            // for the settle time after a clean report is "still clean".
            let quiet_clean = current.is_none()
                && loading.is_none()
                && self.quiet_when_clean
                && sent.was_clean
                && now.duration_since(started) >= quiet;
            if quiet_clean {
                return Answer::Current(Vec::new());
            }
            let wait = if current.is_some() {
                settle
            } else if self.quiet_when_clean && sent.was_clean {
                (started + quiet)
                    .saturating_duration_since(now)
                    .max(Duration::from_millis(1))
            } else {
                deadline - now
            };
            let wait = wait.min(deadline - now);
            if tokio::time::timeout(wait, notified).await.is_err()
                && loading.is_none()
                && let Some(d) = current.take()
            {
                // Quiet for the settle time: that is the answer.
                return Answer::Current(d);
            }
        }
    }

    /// Asks for a document's diagnostics until the answer is one to trust.
    async fn pull_until(&self, uri: &str, deadline: Instant) -> Answer {
        loop {
            let notified = self.arrived.notified();
            let (loading, refreshes, version) = {
                let st = lock(&self.state);
                (
                    st.loading(),
                    st.refreshes,
                    st.docs.get(uri).map(|d| d.version),
                )
            };
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return loading.map_or(Answer::Missing, Answer::Loading);
            }
            if loading.is_some() {
                // Its answer now would be "clean" for want of knowing.
                let _ = tokio::time::timeout(left, notified).await;
                continue;
            }
            let asked = self
                .transport
                .request(
                    "textDocument/diagnostic",
                    json!({"textDocument": {"uri": uri}}),
                    left,
                )
                .await;
            match asked {
                Ok(report) => {
                    let mut st = lock(&self.state);
                    if st.loading().is_some() || st.refreshes != refreshes {
                        continue;
                    }
                    let items = report
                        .get("items")
                        .cloned()
                        .and_then(|i| serde_json::from_value::<Vec<Diagnostic>>(i).ok())
                        .unwrap_or_default();
                    // Kept like a publication for the version asked about.
                    st.seq += 1;
                    let seq = st.seq;
                    st.pulled.insert(
                        uri.to_string(),
                        Published {
                            version,
                            diagnostics: items,
                            seq,
                        },
                    );
                    return Answer::Current(self.report_of(&st, uri).unwrap_or_default());
                }
                Err(RpcError::Server { code, .. }) if RETRY_CODES.contains(&code) => {
                    let pause = Duration::from_millis(100)
                        .min(deadline.saturating_duration_since(Instant::now()));
                    tokio::time::sleep(pause).await;
                }
                Err(_) => return Answer::Missing,
            }
        }
    }

    /// After a change: pull servers are asked again for the other open
    /// documents (what the change broke elsewhere); push servers publish
    /// them on their own. Waits at most until `deadline`.
    pub async fn refresh_others(&self, except: &str, deadline: Instant) {
        if !self.pull {
            return;
        }
        // The most recently used ones: a change rarely breaks more than
        // the files being worked on, and each pull costs the server.
        let mut others: Vec<(u64, String)> = lock(&self.state)
            .docs
            .iter()
            .filter(|(u, _)| *u != except)
            .map(|(u, d)| (d.used, u.clone()))
            .collect();
        others.sort_by_key(|o| std::cmp::Reverse(o.0));
        let others: Vec<String> = others
            .into_iter()
            .take(PULLED_OTHERS)
            .map(|(_, u)| u)
            .collect();
        let asks = others.iter().map(|u| self.pull_until(u, deadline));
        futures_util::future::join_all(asks).await;
    }

    /// Waits until every open document has a current report and
    /// publications have been quiet for `settle`, or `deadline`.
    pub async fn settle_all(&self, settle: Duration, deadline: Instant) {
        if self.pull {
            self.refresh_others("", deadline).await;
            return;
        }
        loop {
            let notified = self.arrived.notified();
            let pending = {
                let st = lock(&self.state);
                // A document sent and not yet published for; but a quiet
                // server's clean document may stay unpublished.
                st.loading().is_some()
                    || st.docs.iter().any(|(u, d)| {
                        let quiet_clean = self.quiet_when_clean
                            && st.pushed.get(u).is_some_and(|p| p.diagnostics.is_empty());
                        d.sent_at.is_some() && !quiet_clean
                    })
            };
            let left = deadline.saturating_duration_since(Instant::now());
            let wait = if pending { left } else { settle.min(left) };
            if wait.is_zero() || (tokio::time::timeout(wait, notified).await.is_err() && !pending) {
                return;
            }
        }
    }
}
