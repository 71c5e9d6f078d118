//! Tools from outside the binary (MCP servers): named at run time, described
//! by the schema their source gives, judged from the facts their adapter
//! computes. The [`Surface`](super::Surface) holds one [`ExternalTools`]
//! registry and dispatches these tools like its own, through the same gate.
//! Sources join and leave while a session runs (a server becomes ready,
//! restarts with other tools); a generation counter lets a session refresh
//! its tool list only when something changed.
//!
//! This module owns the registry; it knows nothing about MCP.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Instant;

use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::dyn_tool::{DynTool, PreparedCall};
use super::{After, Effect, Preview, ToolContext, ToolError};
use crate::llm::ToolSpec;
use crate::permission::CallFacts;

/// One tool of an outside source. Arguments arrive as the JSON object the
/// model sent; the source validates them against its own schema.
pub trait ExternalTool: Send + Sync + 'static {
    /// Name (unique in the Surface), description and schema, built once.
    fn spec(&self) -> &ToolSpec;
    /// `Read` lets calls run concurrently and skip approval inside the gate's rules.
    fn effect(&self) -> Effect;
    /// One line for a person.
    fn summary(&self, args: &Value) -> String;
    /// What the permission gate needs to know about a call.
    fn facts(&self, args: &Value, ctx: &ToolContext) -> Result<CallFacts, ToolError>;
    fn run(
        self: Arc<Self>,
        args: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<String, ToolError>>;
}

/// A source's contribution: its tools, and text for the system prompt
/// saying how to use them.
struct Source {
    /// Every tool name of the source starts with this.
    prefix: String,
    tools: Vec<Arc<dyn ExternalTool>>,
    notes: Option<String>,
    /// Still starting until then: calls to unknown names with the prefix
    /// wait for it instead of failing at once.
    starting_until: Option<Instant>,
}

#[derive(Default)]
struct State {
    sources: BTreeMap<String, Source>,
    /// Every tool of every source, by name.
    by_name: BTreeMap<String, Arc<dyn DynTool>>,
}

/// The tools that joined a Surface from outside, by source.
pub struct ExternalTools {
    state: RwLock<State>,
    /// Bumped when the set of tools or their notes change.
    generation: AtomicU64,
    /// Bumped on every change, for callers waiting on a starting source.
    changed: watch::Sender<u64>,
}

impl Default for ExternalTools {
    fn default() -> Self {
        ExternalTools {
            state: RwLock::default(),
            generation: AtomicU64::new(0),
            changed: watch::Sender::new(0),
        }
    }
}

impl ExternalTools {
    fn read(&self) -> RwLockReadGuard<'_, State> {
        // Every write leaves the maps consistent, so a poisoned lock is usable.
        self.state.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Changes whenever tools or notes join or leave.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// `source` is starting: until `until`, a call to an unknown tool whose
    /// name starts with `prefix` waits for it ([`ExternalTools::settle`]).
    pub fn starting(&self, source: &str, prefix: &str, until: Instant) {
        let mut state = self.write();
        let entry = state
            .sources
            .entry(source.to_string())
            .or_insert_with(|| Source {
                prefix: prefix.to_string(),
                tools: Vec::new(),
                notes: None,
                starting_until: None,
            });
        entry.starting_until = Some(until);
        drop(state);
        self.changed.send_modify(|n| *n += 1);
    }

    /// `source` is ready with these tools and notes, replacing what it had.
    /// A tool whose name is taken (by a built-in or another source) is
    /// left out and its name returned.
    pub fn publish(
        &self,
        source: &str,
        prefix: &str,
        tools: Vec<Arc<dyn ExternalTool>>,
        notes: Option<String>,
        reserved: &dyn Fn(&str) -> bool,
    ) -> Vec<String> {
        let mut state = self.write();
        let old = state.sources.remove(source);
        let unchanged = old.as_ref().is_some_and(|o| {
            o.notes == notes
                && o.tools.len() == tools.len()
                && o.tools
                    .iter()
                    .zip(&tools)
                    .all(|(a, b)| a.spec() == b.spec())
        });
        if let Some(old) = &old {
            for t in &old.tools {
                state.by_name.remove(&t.spec().name);
            }
        }
        let mut kept = Vec::with_capacity(tools.len());
        let mut refused = Vec::new();
        for t in tools {
            let name = t.spec().name.clone();
            if reserved(&name) || state.by_name.contains_key(&name) {
                refused.push(name);
                continue;
            }
            state
                .by_name
                .insert(name, Arc::new(Adapter(Arc::clone(&t))) as Arc<dyn DynTool>);
            kept.push(t);
        }
        state.sources.insert(
            source.to_string(),
            Source {
                prefix: prefix.to_string(),
                tools: kept,
                notes,
                starting_until: None,
            },
        );
        drop(state);
        if !unchanged {
            self.generation.fetch_add(1, Ordering::AcqRel);
        }
        self.changed.send_modify(|n| *n += 1);
        refused
    }

    /// `source` stopped starting without (new) tools; what it had stays, so
    /// a call can still reach it and start it again.
    pub fn stopped_starting(&self, source: &str) {
        if let Some(s) = self.write().sources.get_mut(source) {
            s.starting_until = None;
        }
        self.changed.send_modify(|n| *n += 1);
    }

    pub(super) fn get(&self, name: &str) -> Option<Arc<dyn DynTool>> {
        self.read().by_name.get(name).cloned()
    }

    pub(super) fn names(&self) -> Vec<String> {
        self.read().by_name.keys().cloned().collect()
    }

    pub(super) fn specs(&self, ctx: &ToolContext) -> Vec<ToolSpec> {
        self.read().by_name.values().map(|t| t.spec(ctx)).collect()
    }

    /// The sources' notes for the system prompt, in source order.
    pub fn notes(&self) -> Vec<String> {
        self.read()
            .sources
            .values()
            .filter_map(|s| s.notes.clone())
            .collect()
    }

    /// Waits while `name` is unknown and a source that may provide it is
    /// still starting (each until its own deadline), or until `cancel`.
    pub async fn settle(&self, name: &str, cancel: &CancellationToken) {
        let mut changes = self.changed.subscribe();
        loop {
            let until = {
                let state = self.read();
                if state.by_name.contains_key(name) {
                    return;
                }
                let now = Instant::now();
                state
                    .sources
                    .values()
                    .filter(|s| name.starts_with(&s.prefix))
                    .filter_map(|s| s.starting_until)
                    .filter(|u| *u > now)
                    .max()
            };
            let Some(until) = until else { return };
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = tokio::time::sleep_until(until.into()) => return,
                r = changes.changed() => if r.is_err() { return },
            }
        }
    }
}

/// An external tool as the Surface's object-safe tool.
struct Adapter(Arc<dyn ExternalTool>);

struct Prepared {
    tool: Arc<dyn ExternalTool>,
    args: Value,
}

impl DynTool for Adapter {
    fn spec(&self, _ctx: &ToolContext) -> ToolSpec {
        self.0.spec().clone()
    }

    fn effect(&self) -> Effect {
        self.0.effect()
    }

    fn after(&self) -> After {
        After::Nothing
    }

    fn preview(&self) -> Preview {
        Preview::Head
    }

    fn prepare(self: Arc<Self>, args: Value) -> Result<Box<dyn PreparedCall>, ToolError> {
        Ok(Box::new(Prepared {
            tool: Arc::clone(&self.0),
            args,
        }))
    }
}

impl PreparedCall for Prepared {
    fn facts(&self, ctx: &ToolContext) -> Result<CallFacts, ToolError> {
        self.tool.facts(&self.args, ctx)
    }

    fn run(self: Box<Self>, ctx: ToolContext) -> BoxFuture<'static, Result<String, ToolError>> {
        let Prepared { tool, args } = *self;
        tool.run(args, ctx)
    }

    fn summary(&self) -> String {
        self.tool.summary(&self.args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permission::{RiskAssessment, Scope, Subjects};

    /// An outside tool that asks unless `read_only`, and echoes its arguments.
    struct Fake(ToolSpec, bool);

    impl ExternalTool for Fake {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        fn effect(&self) -> Effect {
            if self.1 {
                Effect::Read
            } else {
                Effect::Execute
            }
        }
        fn summary(&self, _: &Value) -> String {
            String::new()
        }
        fn facts(&self, _: &Value, _: &ToolContext) -> Result<CallFacts, ToolError> {
            Ok(CallFacts {
                tool: self.0.name.clone(),
                description: String::new(),
                risk: RiskAssessment::medium("it is a test"),
                scope: Scope::Tool {
                    tool: self.0.name.clone(),
                },
                needs_approval: !self.1,
                subjects: Subjects::default(),
                banned: None,
                protected: None,
                outside_sandbox: None,
                diff: None,
            })
        }
        fn run(
            self: Arc<Self>,
            args: Value,
            _: ToolContext,
        ) -> BoxFuture<'static, Result<String, ToolError>> {
            Box::pin(async move { Ok(format!("ran {args}")) })
        }
    }

    fn fake_rw(name: &str, read_only: bool) -> Arc<dyn ExternalTool> {
        Arc::new(Fake(
            ToolSpec {
                name: name.into(),
                description: "d".into(),
                parameters: serde_json::json!({"type": "object"}),
            },
            read_only,
        ))
    }

    fn fake(name: &str) -> Arc<dyn ExternalTool> {
        fake_rw(name, true)
    }

    /// A Surface whose gate can ask nobody, with `allow` rules.
    fn surface(allow: &[&str]) -> crate::tools::Surface {
        let dir = std::env::temp_dir();
        let mut rules = crate::permission::RuleSet::default();
        for r in allow {
            rules.push(
                crate::permission::Rule::parse(
                    r,
                    crate::permission::RuleList::Allow,
                    "test",
                    &dir,
                    None,
                )
                .unwrap(),
            );
        }
        let gate = crate::permission::Gate::new(
            crate::permission::GateConfig {
                rules,
                yolo: false,
                workspace: dir.clone(),
                always_file: dir.join("agent-external-test-unused.toml"),
            },
            Arc::new(crate::headless::HeadlessApprover),
        );
        let ctx = ToolContext::new(
            crate::tools::Workspace::new(dir),
            Vec::new(),
            CancellationToken::new(),
        );
        crate::tools::Surface::new(ctx, Arc::new(gate))
    }

    fn tool_call(name: &str) -> crate::tools::ToolCall {
        crate::tools::ToolCall {
            id: "c1".into(),
            name: name.into(),
            arguments: r#"{"n": 1}"#.into(),
        }
    }

    #[tokio::test]
    async fn outside_tools_go_through_the_surface_and_its_gate() {
        let cancel = CancellationToken::new();
        let s = surface(&[]);
        let g0 = s.generation();
        s.external().publish(
            "src",
            "mcp_x_",
            vec![fake_rw("mcp_x_read", true), fake_rw("mcp_x_write", false)],
            Some("how to use x".into()),
            &|n| n == "view",
        );
        assert_ne!(s.generation(), g0);
        assert_eq!(s.notes(), vec!["how to use x".to_string()]);
        let names: Vec<String> = s.specs().into_iter().map(|t| t.name).collect();
        assert!(names.contains(&"view".to_string()) && names.contains(&"mcp_x_write".to_string()));
        let concurrent = |name| s.prepare(&tool_call(name)).concurrent();
        assert!(concurrent("mcp_x_read") && !concurrent("mcp_x_write"));
        let r = s.call(&tool_call("mcp_x_read"), &cancel).await;
        assert_eq!((r.content.as_str(), r.is_error), (r#"ran {"n":1}"#, false));
        // Asked about, and nobody can answer: refused before it runs.
        let r = s.call(&tool_call("mcp_x_write"), &cancel).await;
        assert!(r.denied, "{}", r.content);
        assert!(
            r.content
                .contains("add `mcp_x_write` to [permissions] allow in their own config"),
            "{}",
            r.content
        );
        // An allow rule naming it lets it run.
        let s = surface(&["mcp_x_*"]);
        s.external().publish(
            "src",
            "mcp_x_",
            vec![fake_rw("mcp_x_write", false)],
            None,
            &|_| false,
        );
        let r = s.call(&tool_call("mcp_x_write"), &cancel).await;
        assert_eq!(r.content, r#"ran {"n":1}"#);
        let r = s.call(&tool_call("mcp_x_gone"), &cancel).await;
        assert!(
            r.content.starts_with("unknown tool `mcp_x_gone`"),
            "{}",
            r.content
        );
        assert!(r.content.ends_with(", write, mcp_x_write"), "{}", r.content);
    }

    #[test]
    fn generation_moves_only_on_change() {
        let reg = ExternalTools::default();
        let none = |_: &str| false;
        let g0 = reg.generation();
        reg.publish("s", "mcp_x_", vec![fake("mcp_x_a")], None, &none);
        let g1 = reg.generation();
        assert_ne!(g0, g1);
        reg.publish("s", "mcp_x_", vec![fake("mcp_x_a")], None, &none);
        assert_eq!(reg.generation(), g1, "same tools again: no change");
        reg.publish(
            "s",
            "mcp_x_",
            vec![fake("mcp_x_a")],
            Some("n".into()),
            &none,
        );
        assert_ne!(reg.generation(), g1, "notes changed");
        assert_eq!(reg.notes(), vec!["n".to_string()]);
    }

    #[test]
    fn taken_names_are_refused() {
        let reg = ExternalTools::default();
        let refused = reg.publish(
            "s",
            "mcp_x_",
            vec![fake("view"), fake("mcp_x_a"), fake("mcp_x_a")],
            None,
            &|n| n == "view",
        );
        assert_eq!(refused, vec!["view".to_string(), "mcp_x_a".to_string()]);
        assert_eq!(reg.names(), vec!["mcp_x_a".to_string()]);
    }

    #[tokio::test]
    async fn settle_waits_for_a_starting_source() {
        let reg = Arc::new(ExternalTools::default());
        let cancel = CancellationToken::new();
        // Nothing starting: returns at once.
        reg.settle("mcp_x_a", &cancel).await;
        reg.starting(
            "s",
            "mcp_x_",
            Instant::now() + std::time::Duration::from_secs(60),
        );
        let r = Arc::clone(&reg);
        let publisher = tokio::spawn(async move {
            tokio::task::yield_now().await;
            r.publish("s", "mcp_x_", vec![fake("mcp_x_a")], None, &|_| false);
        });
        reg.settle("mcp_x_a", &cancel).await;
        assert!(reg.get("mcp_x_a").is_some());
        publisher.await.unwrap();
        // Another prefix never waits.
        reg.starting(
            "t",
            "y_",
            Instant::now() + std::time::Duration::from_secs(60),
        );
        reg.settle("z_a", &cancel).await;
    }
}
