//! Tools the model can call, and the one [`Surface`] that registers, looks up
//! and dispatches them. A tool declares facts about itself (name, schema,
//! [`Effect`], the paths a call touches) and does its work; validation, the
//! workspace boundary and (later) permission are steps of `Surface::call`,
//! never inside a tool.

mod glob;
mod grep;
mod ls;
mod schema;
mod surface;
mod tracker;
mod view;
pub mod workspace;

use std::future::Future;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

pub use surface::{Surface, ToolCall, ToolResult};
pub use tracker::{FileStamp, ReadTracker};
pub use workspace::Workspace;

/// What a tool does to the world. Only `Read` tools may run concurrently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    Read,
    Write,
    Execute,
    Network,
}

/// An error the model can act on. The message says what to do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError(pub String);

impl ToolError {
    pub fn new(message: impl Into<String>) -> ToolError {
        ToolError(message.into())
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What every tool call can use.
#[derive(Clone)]
pub struct ToolContext {
    pub workspace: Arc<Workspace>,
    pub tracker: Arc<ReadTracker>,
    pub cancel: CancellationToken,
}

/// A tool, with typed arguments. `Surface` turns it into a [`DynTool`].
pub trait Tool: Send + Sync + 'static {
    /// Arguments as the model sends them; their JSON schema is what the model sees.
    type Args: DeserializeOwned + schemars::JsonSchema + Send + 'static;
    const NAME: &'static str;

    /// The text the model reads, with limits filled in from the code.
    fn description(&self) -> String;
    fn effect(&self) -> Effect;
    /// Paths this call reads or writes, as the model gave them.
    fn paths(args: &Self::Args) -> Vec<&str>;
    fn run(
        &self,
        args: Self::Args,
        ctx: &ToolContext,
    ) -> impl Future<Output = Result<String, ToolError>> + Send;
}

/// Fills `{{name}}` placeholders of a description template.
pub(crate) fn render(template: &str, values: &[(&str, String)]) -> String {
    let mut out = template.trim().to_string();
    for (name, value) in values {
        out = out.replace(&format!("{{{{{name}}}}}"), value);
    }
    out
}

/// Cuts `s` to at most `max` characters, saying how much was cut.
pub(crate) fn cut_line(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => {
            let rest = s[i..].chars().count();
            format!("{}… [{rest} more characters cut]", &s[..i])
        }
        None => s.to_string(),
    }
}

/// Runs blocking file-system work off the async threads.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::new(format!("the tool stopped unexpectedly: {e}")))?
}
