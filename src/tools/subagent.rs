//! `agent`: delegate a research task to a read-only sub-agent. The tool only
//! hands the task to a [`Delegate`] (implemented in `agent/`, which owns
//! sessions) and returns the child's final text; tools never depend on the
//! agent loop.

use crate::text::cut_line;
use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::{Effect, Tool, ToolContext, ToolError, render};

/// Runs a child session for one task.
pub trait Delegate: Send + Sync {
    /// The child's final text, or why it failed. `progress` hears about
    /// each step (for the person) and each step's token usage (for the
    /// parent's totals).
    fn run(
        &self,
        task: String,
        progress: super::Progress,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<String, String>>;

    /// Children started from now on talk to this model (`/model`).
    fn set_provider(&self, provider: std::sync::Arc<dyn crate::llm::Provider>);
}

pub struct SubAgent;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SubAgentArgs {
    /// The whole task: the question, what you already know, and what the
    /// report should contain.
    prompt: String,
    /// A few words for the person, e.g. "find the config loader".
    description: Option<String>,
}

impl Tool for SubAgent {
    type Args = SubAgentArgs;
    const NAME: &'static str = "agent";

    fn description(&self, ctx: &ToolContext) -> String {
        render(
            include_str!("../../templates/agent.md"),
            &[("tools", ctx.read_only_tools.join(", "))],
        )
    }

    fn effect(&self) -> Effect {
        // The child only reads, so several run side by side.
        Effect::Delegate
    }

    fn paths(_: &SubAgentArgs) -> Vec<&str> {
        Vec::new()
    }

    fn summary(args: &SubAgentArgs) -> String {
        match args.description.as_deref().map(str::trim) {
            Some(d) if !d.is_empty() => d.to_string(),
            _ => cut_line(args.prompt.trim(), 80),
        }
    }

    async fn run(&self, args: SubAgentArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let Some(delegate) = &ctx.delegate else {
            return Err(ToolError::new(
                "sub-agents are not available here (a sub-agent cannot start another); do the search yourself with grep, glob and view",
            ));
        };
        if args.prompt.trim().is_empty() {
            return Err(ToolError::new(
                "`prompt` is empty; give the sub-agent the whole task: the question, what you know, and what to report",
            ));
        }
        let progress = ctx.progress.clone();
        match delegate
            .run(args.prompt, progress, ctx.cancel.clone())
            .await
        {
            Ok(text) if text.trim().is_empty() => Err(ToolError::new(
                "the sub-agent finished without a report; ask again with a more specific task, or search yourself",
            )),
            Ok(text) => Ok(text),
            Err(e) => Err(ToolError::new(format!(
                "the sub-agent failed: {e}. Its work is lost; try again with a narrower task, or search yourself."
            ))),
        }
    }
}
