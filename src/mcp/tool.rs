//! A server's tool as the Surface sees it: `mcp_<server>_<tool>` with the
//! server's description and schema. Facts come from its annotations: a tool
//! the server marks read-only is not asked about; any other is medium risk
//! (destructive ones say so), and "allow for this session" covers that one
//! tool. Results are the text contents joined, other contents described,
//! capped like every tool's.

use crate::text::cut_line;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents, Tool};
use serde_json::Value;

use super::client::CallError;
use super::manager::Server;
use crate::llm::ToolSpec;
use crate::permission::{CallFacts, RiskAssessment, Scope, Subjects};
use crate::tools::{Effect, ExternalTool, ToolContext, ToolError};

/// Providers accept function names of at most this many characters.
const MAX_NAME: usize = 64;

/// `mcp_<server>_<tool>`, with characters providers refuse made `_`.
pub fn tool_name(server: &str, tool: &str) -> String {
    let name: String = format!("mcp_{server}_{tool}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_NAME)
        .collect();
    name
}

pub(super) struct McpTool {
    spec: ToolSpec,
    server: Arc<Server>,
    /// The name on the server.
    remote: String,
    read_only: bool,
    destructive: bool,
}

impl McpTool {
    pub fn new(server: Arc<Server>, tool: &Tool) -> McpTool {
        let annotations = tool.annotations.clone().unwrap_or_default();
        let read_only = annotations.read_only_hint == Some(true);
        let mut parameters = Value::Object((*tool.input_schema).clone());
        if let Some(obj) = parameters.as_object_mut() {
            obj.entry("type")
                .or_insert_with(|| Value::String("object".into()));
        }
        let description = tool
            .description
            .as_deref()
            .filter(|d| !d.trim().is_empty())
            .map(str::to_string)
            .or_else(|| tool.title.clone())
            .unwrap_or_else(|| {
                format!(
                    "The tool `{}` of the MCP server `{}`.",
                    tool.name, server.name
                )
            });
        McpTool {
            spec: ToolSpec {
                name: tool_name(&server.name, &tool.name),
                description,
                parameters,
            },
            remote: tool.name.to_string(),
            read_only,
            // The MCP default: a tool that may write is destructive unless it says not.
            destructive: !read_only && annotations.destructive_hint != Some(false),
            server,
        }
    }

    fn risk(&self) -> RiskAssessment {
        let server = &self.server.name;
        if self.read_only {
            RiskAssessment::low(format!("the MCP server `{server}` marks it read-only"))
        } else if self.destructive {
            RiskAssessment::medium(format!(
                "the MCP server `{server}` says it may change or delete data"
            ))
        } else {
            RiskAssessment::medium(format!(
                "the MCP server `{server}` does not mark it read-only"
            ))
        }
    }
}

impl ExternalTool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn effect(&self) -> Effect {
        if self.read_only {
            Effect::Read
        } else {
            Effect::Execute
        }
    }

    fn summary(&self, args: &Value) -> String {
        format!(
            "{} {}",
            self.remote,
            cut_line(&args.to_string(), 120 - self.remote.len().min(60))
        )
    }

    fn facts(&self, args: &Value, _: &ToolContext) -> Result<CallFacts, ToolError> {
        Ok(CallFacts {
            tool: self.spec.name.clone(),
            description: format!(
                "MCP server `{}`: {} {}",
                self.server.name,
                self.remote,
                cut_line(&args.to_string(), 500)
            ),
            risk: self.risk(),
            scope: Scope::Tool {
                tool: self.spec.name.clone(),
            },
            needs_approval: !self.read_only,
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
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<String, ToolError>> {
        Box::pin(async move {
            let Value::Object(args) = args else {
                return Err(ToolError::new(
                    "arguments must be a JSON object matching the tool's schema",
                ));
            };
            let server = &self.server;
            let conn = server.connection(&ctx.cancel).await?;
            let timeout = server.config.tool_timeout();
            match conn.call(&self.remote, args, timeout, &ctx.cancel).await {
                Ok(result) => render_result(result),
                Err(CallError::Cancelled) => Err(ToolError::new("cancelled")),
                Err(CallError::TimedOut) => Err(ToolError::new(format!(
                    "`{}` on the MCP server `{}` did not finish within {} s (tool_timeout_secs) and was cancelled. \
                     Try a smaller request, or finish without it; the person can raise [mcp.{}] tool_timeout_secs.",
                    self.remote,
                    server.name,
                    timeout.as_secs_f64(),
                    server.name
                ))),
                Err(CallError::Refused(why)) => Err(ToolError::new(format!(
                    "The MCP server `{}` refused the call to `{}`: {why}\nCheck the arguments against the tool's schema and call it again, or choose another way.",
                    server.name, self.remote
                ))),
                Err(CallError::Lost(why)) => {
                    let reason = server.lost(&conn, why).await;
                    Err(ToolError::new(format!(
                        "The MCP server `{}` stopped while running `{}`: {reason}\n\
                         It will be restarted on the next call to one of its tools. Do not repeat this call unchanged unless you expect a different outcome.",
                        server.name, self.remote
                    )))
                }
            }
        })
    }
}

/// The model's text: text contents joined, others described, capped; a
/// result the server marks as an error is a tool error.
fn render_result(result: CallToolResult) -> Result<String, ToolError> {
    let mut parts: Vec<String> = result.content.iter().map(describe).collect();
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    let mut text = parts.join("\n");
    if text.trim().is_empty() {
        text = "(the tool returned no content)".into();
    }
    crate::text::cap_result(&mut text);
    if result.is_error == Some(true) {
        Err(ToolError::new(text))
    } else {
        Ok(text)
    }
}

fn describe(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => {
            format!("[image: {}, {} bytes]", i.mime_type, decoded_len(&i.data))
        }
        ContentBlock::Audio(a) => {
            format!("[audio: {}, {} bytes]", a.mime_type, decoded_len(&a.data))
        }
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                format!("[resource: {uri}]\n{text}")
            }
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => format!(
                "[resource: {uri}, {}, {} bytes]",
                mime_type.as_deref().unwrap_or("binary"),
                decoded_len(blob)
            ),
            _ => "[resource]".into(),
        },
        ContentBlock::ResourceLink(l) => format!("[resource link: {} ({})]", l.uri, l.name),
        _ => "[content of an unknown kind]".into(),
    }
}

/// Bytes of base64 data, without decoding it.
fn decoded_len(b64: &str) -> usize {
    let s = b64.trim_end();
    let pad = s.chars().rev().take_while(|c| *c == '=').count();
    (s.len() * 3 / 4).saturating_sub(pad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ImageContent, TextContent};

    #[test]
    fn names_are_safe_for_providers() {
        assert_eq!(tool_name("git", "log"), "mcp_git_log");
        assert_eq!(tool_name("fs", "read.file/v2"), "mcp_fs_read_file_v2");
        assert_eq!(tool_name("s", &"x".repeat(100)).len(), MAX_NAME);
    }

    #[test]
    fn results_join_text_and_describe_the_rest() {
        let r = CallToolResult::success(vec![
            ContentBlock::Text(TextContent::new("one")),
            ContentBlock::Image(ImageContent::new("aGVsbG8=", "image/png")),
            ContentBlock::Text(TextContent::new("two")),
        ]);
        assert_eq!(
            render_result(r).unwrap(),
            "one\n[image: image/png, 5 bytes]\ntwo"
        );
        let e = CallToolResult::error(vec![ContentBlock::Text(TextContent::new("no such row"))]);
        assert_eq!(render_result(e).unwrap_err().0, "no such row");
        let empty = CallToolResult::success(vec![]);
        assert_eq!(
            render_result(empty).unwrap(),
            "(the tool returned no content)"
        );
        let big = CallToolResult::success(vec![ContentBlock::Text(TextContent::new(
            "é".repeat(crate::text::MAX_RESULT_CHARS + 5),
        ))]);
        let text = render_result(big).unwrap();
        assert!(
            text.ends_with("\n… 5 more characters not shown"),
            "{}",
            &text[text.len() - 60..]
        );
    }
}
