//! The object-safe face every tool has inside the Surface: a [`Tool`] with
//! typed arguments, or an external tool (`external.rs`), looked up by name,
//! given the model's JSON once and turned into a validated call.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::{After, Effect, Preview, Tool, ToolContext, ToolError, schema};
use crate::llm::ToolSpec;
use crate::permission::CallFacts;

/// Object-safe face of a [`Tool`] (and of an external tool, see `external.rs`).
pub(super) trait DynTool: Send + Sync {
    fn spec(&self, ctx: &ToolContext) -> ToolSpec;
    fn effect(&self) -> Effect;
    fn after(&self) -> After;
    fn preview(&self) -> Preview;
    fn prepare(self: Arc<Self>, args: Value) -> Result<Box<dyn PreparedCall>, ToolError>;
}

/// A call whose arguments passed validation.
pub(super) trait PreparedCall: Send {
    fn facts(&self, ctx: &ToolContext) -> Result<CallFacts, ToolError>;
    fn run(self: Box<Self>, ctx: ToolContext) -> BoxFuture<'static, Result<String, ToolError>>;
    fn summary(&self) -> String;
}

struct Typed<T: Tool> {
    tool: Arc<T>,
    args: T::Args,
}

impl<T: Tool> DynTool for T {
    fn spec(&self, ctx: &ToolContext) -> ToolSpec {
        ToolSpec {
            name: T::NAME.to_string(),
            description: self.description(ctx),
            parameters: schema::for_args::<T::Args>(),
        }
    }

    fn effect(&self) -> Effect {
        Tool::effect(self)
    }

    fn after(&self) -> After {
        Tool::after(self)
    }

    fn preview(&self) -> Preview {
        Tool::preview(self)
    }

    fn prepare(self: Arc<Self>, args: Value) -> Result<Box<dyn PreparedCall>, ToolError> {
        let args = serde_json::from_value::<T::Args>(args).map_err(|e| {
            ToolError::new(format!(
                "invalid arguments for `{}`: {e}.{SCHEMA_HINT}",
                T::NAME
            ))
        })?;
        Ok(Box::new(Typed { tool: self, args }))
    }
}

impl<T: Tool> PreparedCall for Typed<T> {
    fn facts(&self, ctx: &ToolContext) -> Result<CallFacts, ToolError> {
        self.tool.facts(&self.args, ctx)
    }

    fn run(self: Box<Self>, ctx: ToolContext) -> BoxFuture<'static, Result<String, ToolError>> {
        Box::pin(async move { self.tool.run(self.args, &ctx).await })
    }

    fn summary(&self) -> String {
        T::summary(&self.args)
    }
}

/// How an invalid-arguments message ends when the model can fix it.
pub(super) const SCHEMA_HINT: &str = " Call it again with arguments that match its schema.";

pub(super) fn parse_arguments(tool: &str, raw: &str) -> Result<Value, ToolError> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(other) => Err(ToolError::new(format!(
            "arguments for `{tool}` must be a JSON object, not {other}; call it again with an object matching its schema"
        ))),
        Err(e) => {
            let shown = crate::text::cut_line(raw, 300);
            Err(ToolError::new(format!(
                "arguments for `{tool}` are not valid JSON ({e}): {shown}\nCall it again with a valid JSON object matching its schema."
            )))
        }
    }
}
