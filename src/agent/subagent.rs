//! Sub-agents: the `agent` tool's child sessions. Each child is a fresh
//! [`Session`] on a read-only [`Surface`] (no hooks, no `agent` tool, so no
//! nesting) whose gate has nobody to ask. Only the child's final text goes
//! back to the parent; its steps and token usage are reported as progress,
//! and its log is written like any session's (marked as a sub-agent's, so
//! `agent sessions` does not list it).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::{AgentEvent, Session, TurnError};
use crate::llm::Provider;
use crate::permission::{Answer, ApprovalRequest, Approver, Responder};
use crate::tools::{Delegate, Progress, ProgressEvent, Surface, render};

pub struct SubAgents {
    provider: Mutex<Arc<dyn Provider>>,
    surface: Arc<Surface>,
    system: String,
    max_steps: u32,
    data_dir: PathBuf,
    workspace: PathBuf,
}

impl SubAgents {
    pub fn new(
        provider: Arc<dyn Provider>,
        surface: Arc<Surface>,
        workspace: &Path,
        max_steps: u32,
        data_dir: PathBuf,
    ) -> SubAgents {
        let mut values = super::prompt::environment(workspace);
        values.push(("tools", surface.names().join(", ")));
        let system = render(include_str!("../../templates/subagent.md"), &values);
        SubAgents {
            provider: Mutex::new(provider),
            surface,
            system,
            max_steps,
            data_dir,
            workspace: workspace.to_path_buf(),
        }
    }
}

impl Delegate for SubAgents {
    fn run(
        &self,
        task: String,
        progress: Progress,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<String, String>> {
        let provider = Arc::clone(&self.provider.lock().unwrap_or_else(|p| p.into_inner()));
        let id = uuid::Uuid::new_v4().to_string();
        let (p, m) = provider.describe();
        let log = crate::transcript::SessionLog::create(
            &self.data_dir,
            crate::transcript::Header {
                v: crate::transcript::store::FORMAT,
                id: id.clone(),
                created: time::OffsetDateTime::now_utc().unix_timestamp(),
                cwd: self.workspace.clone(),
                project: crate::transcript::store::project_root(&self.workspace),
                git_root: None,
                provider: p.to_string(),
                model: m.to_string(),
                agent_version: env!("CARGO_PKG_VERSION").into(),
                parent: Some("sub-agent".into()),
            },
        );
        let mut child = Session::new(
            id,
            provider,
            Arc::clone(&self.surface),
            self.system.clone(),
            self.max_steps,
        )
        .with_log(Arc::new(log))
        .within_parent_turn();
        Box::pin(async move {
            let on_event = |ev: AgentEvent| match ev {
                AgentEvent::ToolCall { name, summary, .. } => {
                    progress.send(ProgressEvent::Step(format!("{name} {summary}")))
                }
                AgentEvent::Usage { step, .. } => progress.send(ProgressEvent::Usage(step)),
                _ => {}
            };
            let outcome = child.run_turn(&task, &on_event, &cancel).await;
            match outcome {
                Ok(text) => Ok(text),
                Err(TurnError::Cancelled) => Err("it was cancelled".into()),
                Err(e) => Err(e.to_string()),
            }
        })
    }

    fn set_provider(&self, provider: Arc<dyn Provider>) {
        *self.provider.lock().unwrap_or_else(|p| p.into_inner()) = provider;
    }
}

/// A sub-agent's approver: nobody can be asked, and the explanation tells
/// the child to do without.
pub struct NobodyToAsk;

impl Approver for NobodyToAsk {
    fn request(&self, r: ApprovalRequest, responder: Responder) {
        let explanation = format!(
            "This `{}` call needs the person's approval ({} risk: {}), and a sub-agent cannot ask anyone. \
             Do not retry it; work with what you can read, and say in your report what you could not.",
            r.tool, r.risk.level, r.risk.reason
        );
        responder.answer(Answer::Unavailable { explanation });
    }
}
