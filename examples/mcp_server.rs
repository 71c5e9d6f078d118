//! A small stdio MCP server for the tests (rmcp's server side):
//! - `echo` (read-only): returns its text;
//! - `add_note`: appends a line to the file named by `MCP_NOTES`;
//! - `crash`: writes to stderr and exits with code 3, mid-call;
//! - `picture`: text and an image, to show how other contents read;
//! - `fail`: a result marked as an error;
//! - `sleep`: waits `secs` seconds (timeouts, cancellation);
//! - `whoami`: the Authorization header of the HTTP request, if any.
//!
//! `MCP_SERVER_DELAY_MS` delays the start; `MCP_SERVER_PIDS` gets one line
//! per start with the process id. Its instructions say how to use it.
//! `mcp_server --http PORT_FILE` serves streamable HTTP on 127.0.0.1 at
//! `/mcp` instead, and writes the port it got to PORT_FILE.

// A test fixture: it may unwrap and print; a failure is the test's report.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::io::Write;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

pub const INSTRUCTIONS: &str =
    "Use echo to repeat text back. Notes added with add_note are kept in the notes file.";

struct TestServer;

fn schema(v: Value) -> Arc<JsonObject> {
    match v {
        Value::Object(map) => Arc::new(map),
        _ => Arc::default(),
    }
}

fn text_schema(about: &str) -> Arc<JsonObject> {
    schema(json!({
        "type": "object",
        "properties": {"text": {"type": "string", "description": about}},
        "required": ["text"]
    }))
}

fn tools() -> Vec<Tool> {
    let empty = schema(json!({"type": "object", "properties": {}}));
    let mut echo = Tool::new(
        "echo",
        "Returns the text it is given.",
        text_schema("What to echo."),
    );
    echo.annotations = Some(ToolAnnotations::new().read_only(true));
    let add_note = Tool::new(
        "add_note",
        "Appends one line to the notes file.",
        text_schema("The line to add."),
    );
    let mut crash = Tool::new("crash", "Makes the server exit.", empty.clone());
    crash.annotations = Some(ToolAnnotations::new().destructive(true));
    let mut picture = Tool::new("picture", "Returns a caption and an image.", empty.clone());
    picture.annotations = Some(ToolAnnotations::new().read_only(true));
    let mut fail = Tool::new("fail", "Always fails.", empty);
    fail.annotations = Some(ToolAnnotations::new().read_only(true));
    let mut sleep = Tool::new(
        "sleep",
        "Waits some seconds.",
        schema(json!({
            "type": "object",
            "properties": {"secs": {"type": "number"}},
            "required": ["secs"]
        })),
    );
    sleep.annotations = Some(ToolAnnotations::new().read_only(true));
    let mut whoami = Tool::new(
        "whoami",
        "Says which Authorization header the request carried.",
        schema(json!({"type": "object", "properties": {}})),
    );
    whoami.annotations = Some(ToolAnnotations::new().read_only(true));
    vec![echo, add_note, crash, picture, fail, sleep, whoami]
}

fn text(args: &Option<JsonObject>) -> String {
    args.as_ref()
        .and_then(|a| a.get("text"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let ok = |t: String| Ok(CallToolResult::success(vec![ContentBlock::text(t)]).into());
        match request.name.as_ref() {
            // `$NAME` echoes that environment variable, so tests can see
            // what the agent passed to its servers.
            "echo" => match text(&request.arguments).strip_prefix('$') {
                Some(var) => ok(format!(
                    "echo: ${var}={}",
                    std::env::var(var).unwrap_or_else(|_| "(unset)".into())
                )),
                None => ok(format!("echo: {}", text(&request.arguments))),
            },
            "add_note" => {
                let path = std::env::var("MCP_NOTES")
                    .map_err(|_| ErrorData::internal_error("MCP_NOTES is not set", None))?;
                let mut f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                writeln!(f, "{}", text(&request.arguments))
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                ok("noted".into())
            }
            "crash" => {
                eprintln!("about to crash on purpose");
                std::process::exit(3);
            }
            "picture" => Ok(CallToolResult::success(vec![
                ContentBlock::text("a red dot"),
                ContentBlock::image("iVBORw0KGgo=", "image/png"),
            ])
            .into()),
            "fail" => Ok(CallToolResult::error(vec![ContentBlock::text(
                "the fail tool failed, as it always does",
            )])
            .into()),
            "sleep" => {
                let secs = request
                    .arguments
                    .as_ref()
                    .and_then(|a| a.get("secs"))
                    .and_then(Value::as_f64)
                    .unwrap_or(1.0);
                eprintln!("sleeping {secs} s");
                tokio::time::sleep(std::time::Duration::from_secs_f64(secs)).await;
                ok(format!("slept {secs} s"))
            }
            "whoami" => {
                let auth = context
                    .extensions
                    .get::<http::request::Parts>()
                    .and_then(|p| p.headers.get("authorization"))
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("none");
                ok(format!("Authorization: {auth}"))
            }
            other => Err(ErrorData::invalid_params(
                format!("no tool named {other}"),
                None,
            )),
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if let Ok(path) = std::env::var("MCP_SERVER_PIDS") {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        writeln!(f, "{}", std::process::id())?;
    }
    // Fails its first start only: the file marks that it did.
    if let Ok(marker) = std::env::var("MCP_FAIL_FIRST")
        && !std::path::Path::new(&marker).exists()
    {
        std::fs::write(&marker, "failed once\n")?;
        eprintln!("failing the first start on purpose");
        std::process::exit(1);
    }
    if let Some(ms) = std::env::var("MCP_SERVER_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    }
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--http") {
        return serve_http(args.get(i + 1).ok_or("--http needs a port file")?).await;
    }
    eprintln!("test server ready");
    let service = TestServer.serve(rmcp::transport::stdio()).await?;
    service.waiting().await?;
    Ok(())
}

/// Streamable HTTP at `/mcp` on a free port of 127.0.0.1, until killed.
async fn serve_http(port_file: &str) -> Result<(), Box<dyn std::error::Error>> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let service = StreamableHttpService::new(
        || Ok(TestServer),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    // Written whole after binding, so a reader of the file can connect at once.
    let tmp = format!("{port_file}.tmp");
    std::fs::write(&tmp, listener.local_addr()?.port().to_string())?;
    std::fs::rename(&tmp, port_file)?;
    loop {
        let (stream, _) = listener.accept().await?;
        let service = service.clone();
        tokio::spawn(async move {
            let handler =
                hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let mut service = service.clone();
                    async move {
                        if req.uri().path() != "/mcp" {
                            return Err("only /mcp is served".to_string());
                        }
                        tower_service::Service::call(&mut service, req)
                            .await
                            .map_err(|e| e.to_string())
                    }
                });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), handler)
                .await;
        });
    }
}
