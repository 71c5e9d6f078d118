//! Running one response's tool calls: each distinct call once, runs of
//! read-only calls concurrently, every other call alone, results in the
//! model's order.

use std::sync::Arc;

use futures_util::future::join_all;
use tokio_util::sync::CancellationToken;

use super::{AgentEvent, EventSink, Session};
use crate::tools::{Prepared, ProgressEvent, ToolCall, ToolResult};

impl Session {
    /// Runs the calls of one response, each distinct call once: a call
    /// identical to an earlier one in the same response (same tool, same
    /// arguments) is answered with a pointer to that one's result.
    pub(super) async fn run_unique(
        &mut self,
        calls: &[ToolCall],
        on_event: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> Vec<ToolResult> {
        let first: Vec<Option<usize>> = calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                calls[..i]
                    .iter()
                    .position(|e| e.name == c.name && e.arguments == c.arguments)
            })
            .collect();
        if first.iter().all(Option::is_none) {
            return self.run_calls(calls, on_event, cancel).await;
        }
        let unique: Vec<ToolCall> = calls
            .iter()
            .zip(&first)
            .filter(|(_, f)| f.is_none())
            .map(|(c, _)| c.clone())
            .collect();
        let mut ran = self.run_calls(&unique, on_event, cancel).await.into_iter();
        let mut results: Vec<ToolResult> = Vec::with_capacity(calls.len());
        for (c, f) in calls.iter().zip(&first) {
            match f {
                None => results.extend(ran.next()),
                Some(j) => {
                    let original = &calls[*j];
                    let r = ToolResult {
                        call_id: c.id.clone(),
                        content: format!(
                            "Not run: this call is identical to call `{}` earlier in this response (same tool, same arguments); its result is the result of this one too.",
                            original.id
                        ),
                        is_error: false,
                        diff: None,
                        denied: false,
                        notices: Vec::new(),
                        halt: None,
                    };
                    let prepared = self.surface.prepare(c);
                    on_event(AgentEvent::ToolCall {
                        id: c.id.clone(),
                        name: c.name.clone(),
                        arguments: c.arguments.clone(),
                        summary: prepared.summary(),
                        preview: prepared.preview(),
                    });
                    on_event(AgentEvent::ToolResult {
                        id: c.id.clone(),
                        name: c.name.clone(),
                        content: r.content.clone(),
                        is_error: false,
                        diff: None,
                        denied: false,
                        notices: Vec::new(),
                    });
                    results.push(r);
                }
            }
        }
        results
    }

    /// Runs calls in the model's order: each run of consecutive read-only
    /// calls concurrently, every other call alone. Results keep call order.
    async fn run_calls(
        &mut self,
        calls: &[ToolCall],
        on_event: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> Vec<ToolResult> {
        let mut results = Vec::with_capacity(calls.len());
        // Each call's arguments are parsed once, here, for everything after.
        let mut prepared: Vec<Option<Prepared>> = calls
            .iter()
            .map(|c| Some(self.surface.prepare(c)))
            .collect();
        let concurrent = |p: &Option<Prepared>| p.as_ref().is_some_and(Prepared::concurrent);
        let mut i = 0;
        while i < calls.len() {
            let mut end = i + 1;
            if concurrent(&prepared[i]) {
                while end < calls.len() && concurrent(&prepared[end]) {
                    end += 1;
                }
            }
            let batch = &calls[i..end];
            let ready: Vec<Prepared> = prepared[i..end]
                .iter_mut()
                .filter_map(Option::take)
                .collect();
            for (c, p) in batch.iter().zip(&ready) {
                on_event(AgentEvent::ToolCall {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    arguments: c.arguments.clone(),
                    summary: p.summary(),
                    preview: p.preview(),
                });
            }
            let surface = Arc::clone(&self.surface);
            // Sub-agents report steps and token usage while they run.
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let running = join_all(
                ready
                    .into_iter()
                    .map(|p| surface.run(p, cancel, Some(tx.clone()))),
            );
            drop(tx);
            tokio::pin!(running);
            let mut usage = self.usage;
            let mut steps = Vec::new();
            let mut report = |(id, ev): (String, ProgressEvent)| match ev {
                ProgressEvent::Step(text) => on_event(AgentEvent::ToolProgress { id, text }),
                ProgressEvent::Usage(step) => {
                    usage += step;
                    steps.push(step);
                    on_event(AgentEvent::Usage { step, total: usage });
                }
            };
            let done = loop {
                tokio::select! {
                    done = &mut running => break done,
                    Some(p) = rx.recv() => report(p),
                }
            };
            while let Ok(p) = rx.try_recv() {
                report(p);
            }
            // Sub-agents' usage counts, per model, in the log too.
            for step in steps {
                self.add_usage(step);
            }
            for (c, r) in batch.iter().zip(done) {
                on_event(AgentEvent::ToolResult {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    content: r.content.clone(),
                    is_error: r.is_error,
                    diff: r.diff.clone(),
                    denied: r.denied,
                    notices: r.notices.clone(),
                });
                results.push(r);
            }
            self.tool_calls += batch.len() as u64;
            i = end;
            // A hook ended the turn: the rest are answered, not run, so the
            // conversation stays well formed.
            if results.iter().any(|r| r.halt.is_some()) {
                for c in &calls[i..] {
                    results.push(ToolResult {
                        call_id: c.id.clone(),
                        content: "Not run: a hook stopped the turn before this call.".into(),
                        is_error: true,
                        diff: None,
                        denied: true,
                        notices: Vec::new(),
                        halt: None,
                    });
                }
                break;
            }
        }
        results
    }
}
