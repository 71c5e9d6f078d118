//! `todos`: the model's task list for this session. Each call sends the
//! whole list (as Claude Code's TodoWrite and Codex's update_plan do), so a
//! list can never drift from what the model believes it is.

use std::sync::Mutex;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Effect, Preview, Tool, ToolContext, ToolError, render};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pending,
    InProgress,
    Done,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Item {
    /// What to do, as one short imperative line.
    content: String,
    status: Status,
}

/// The session's list, replaced whole by each call.
#[derive(Debug, Default)]
pub struct TodoList(Mutex<Vec<Item>>);

pub struct Todos;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct TodosArgs {
    /// The whole list, in order; it replaces the previous one.
    items: Vec<Item>,
}

fn render_list(items: &[Item]) -> String {
    if items.is_empty() {
        return "The task list is empty.".into();
    }
    let done = items.iter().filter(|i| i.status == Status::Done).count();
    let mut out = format!("Tasks ({done} of {} done):", items.len());
    for item in items {
        let mark = match item.status {
            Status::Pending => "[ ]",
            Status::InProgress => "[>]",
            Status::Done => "[x]",
        };
        out.push_str(&format!("\n  {mark} {}", item.content));
    }
    out
}

impl Tool for Todos {
    type Args = TodosArgs;
    const NAME: &'static str = "todos";

    fn preview(&self) -> Preview {
        Preview::Checklist
    }

    fn description(&self, _ctx: &ToolContext) -> String {
        render(include_str!("../../templates/todos.md"), &[])
    }

    fn effect(&self) -> Effect {
        // Session state only: nothing outside the agent changes.
        Effect::Session
    }

    fn paths(_: &TodosArgs) -> Vec<&str> {
        Vec::new()
    }

    async fn run(&self, args: TodosArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let mut items = args.items;
        for item in &mut items {
            item.content = item.content.trim().to_string();
        }
        if let Some(n) = items.iter().position(|i| i.content.is_empty()) {
            return Err(ToolError::new(format!(
                "item {} has no content; give each task a short line of text",
                n + 1
            )));
        }
        let active = items
            .iter()
            .filter(|i| i.status == Status::InProgress)
            .count();
        if active > 1 {
            return Err(ToolError::new(format!(
                "{active} items are in_progress; keep exactly one in progress at a time and mark the others pending or done"
            )));
        }
        let text = render_list(&items);
        *ctx.todos.0.lock().unwrap_or_else(|e| e.into_inner()) = items;
        Ok(text)
    }
}
