//! The non-interactive runner: `agent -p PROMPT` runs one turn to completion
//! and prints the answer as text, one JSON object, or one JSON event per line.
//! It never waits for a person.

use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::agent::{AgentEvent, Session, TurnError, system_prompt};
use crate::cli::OutputFormat;
use crate::config::Config;
use crate::llm::Provider;
use crate::tools::{ReadTracker, Surface, ToolContext, Workspace};

/// Exit code for a run stopped by Ctrl-C, as shells report SIGINT.
pub const EXIT_CANCELLED: u8 = 130;

/// Builds the session the binary uses: one Surface over the workspace.
pub fn new_session(
    config: &Config,
    provider: Arc<dyn Provider>,
    cancel: &CancellationToken,
) -> Session {
    let ctx = ToolContext {
        workspace: Arc::new(Workspace::new(config.workspace.clone())),
        tracker: Arc::new(ReadTracker::default()),
        cancel: cancel.clone(),
    };
    let surface = Arc::new(Surface::new(ctx));
    Session::new(
        provider,
        surface,
        system_prompt(&config.workspace),
        config.max_steps,
    )
}

/// Runs `prompt` and prints the outcome; returns the process exit code.
pub async fn run(
    config: &Config,
    provider: Arc<dyn Provider>,
    prompt: &str,
    format: OutputFormat,
) -> u8 {
    let started = Instant::now();
    let cancel = CancellationToken::new();
    let on_interrupt = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_interrupt.cancel();
        }
    });
    let mut session = new_session(config, provider, &cancel);
    let (provider_id, model) = {
        let (p, m) = session.provider().describe();
        (p.to_string(), m.to_string())
    };
    let emit = |v: serde_json::Value| {
        let mut out = std::io::stdout().lock();
        // A closed stdout (e.g. `| head`) must not crash the run.
        let _ = writeln!(out, "{v}");
        let _ = out.flush();
    };
    if format == OutputFormat::StreamJson {
        emit(json!({
            "type": "init", "session_id": session.id, "provider": provider_id, "model": model,
            "cwd": config.workspace, "tools": session.tool_names(),
        }));
    }
    let on_event = |ev: AgentEvent| {
        if format == OutputFormat::StreamJson {
            emit(serde_json::to_value(&ev).unwrap_or_default());
        }
    };
    let outcome = session.run_turn(prompt, &on_event, &cancel).await;

    let transcript = crate::session::Transcript {
        id: &session.id,
        provider: &provider_id,
        model: &model,
        cwd: &config.workspace,
        usage: session.usage(),
        messages: session.messages(),
    };
    if let Err(e) = crate::session::save(&config.paths.data_dir, &transcript) {
        eprintln!(
            "agent: warning: could not save the transcript under {}: {e}",
            config.paths.data_dir.display()
        );
    }

    let usage = session.usage();
    let (code, result, error) = match &outcome {
        Ok(text) => (0, text.clone(), None),
        Err(TurnError::Cancelled) => (
            EXIT_CANCELLED,
            String::new(),
            Some("cancelled by the user".to_string()),
        ),
        Err(e) => (1, String::new(), Some(e.to_string())),
    };
    match format {
        OutputFormat::Text => {
            if error.is_none() {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{}", result.trim_end());
                let _ = out.flush();
            }
        }
        OutputFormat::Json | OutputFormat::StreamJson => emit(json!({
            "type": "result",
            "is_error": error.is_some(),
            "result": result,
            "error": error,
            "session_id": session.id,
            "provider": provider_id,
            "model": model,
            "usage": usage,
            "tool_calls": session.tool_calls(),
            "duration_ms": started.elapsed().as_millis() as u64,
        })),
    }
    if let Some(e) = error {
        eprintln!("agent: {}", one_line(&e));
    }
    code
}

/// Error messages can quote a server's multi-line text; the exit line is one.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
