//! The non-interactive runner: `agent -p PROMPT` runs one turn to completion
//! and prints the answer as text, one JSON object, or one JSON event per line.
//! It never waits for a person.

// A front end: it owns standard output and error.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::agent::{AgentEvent, Session, TurnError};
use crate::cli::{InputFormat, OutputFormat};
use crate::config::Config;
use crate::llm::Provider;
use crate::permission::{Answer, ApprovalRequest, Approver, Responder, Risk};
use crate::wiring::{self, Live, ModelFacts, global_instructions};

/// How a headless run reads and writes.
#[derive(Debug, Clone, Copy)]
pub struct Io {
    pub output: OutputFormat,
    /// `--include-partial-messages`.
    pub partial: bool,
    pub input: InputFormat,
}

/// Exit code for a run stopped by Ctrl-C, as shells report SIGINT.
pub const EXIT_CANCELLED: u8 = 130;

/// The headless session: nobody to ask.
pub fn new_session(
    config: &Config,
    provider: Arc<dyn Provider>,
    facts: ModelFacts,
    cancel: &CancellationToken,
    resume: Option<&crate::transcript::Loaded>,
) -> Live {
    wiring::session(
        config,
        provider,
        facts,
        Arc::new(HeadlessApprover),
        cancel,
        resume,
    )
}

/// The approver of a run with nobody to ask: every question is answered at
/// once with what the person can do instead, so a headless run never hangs.
pub struct HeadlessApprover;

impl Approver for HeadlessApprover {
    fn request(&self, r: ApprovalRequest, responder: Responder) {
        let how = if r.protected {
            "High-risk calls always need a person, and this one changes agent's own settings or records: only the person can approve it, one call at a time, in an interactive session (--yolo does not cover it).".to_string()
        } else if r.risk.level == Risk::High {
            "High-risk calls always need a person: they can run the task interactively, or with --yolo.".to_string()
        } else {
            let rules: Vec<String> = r.rules.iter().map(|x| format!("`{x}`")).collect();
            if rules.is_empty() {
                "No allow rule can name this call; the person can run the task interactively, or with --yolo.".to_string()
            } else {
                format!(
                    "To allow such calls, the person can add {} to [permissions] allow in their own config (or in .agent/config.toml of a project they trust), or run with --yolo.",
                    rules.join(", ")
                )
            }
        };
        let explanation = format!(
            "This `{}` call needs the person's approval ({} risk: {}), and this run cannot ask: it is headless (-p) without --yolo. \
             Do not retry it; finish what you can without it and tell the person what you could not do. {how}",
            r.tool, r.risk.level, r.risk.reason
        );
        responder.answer(Answer::Unavailable { explanation });
    }
}

/// Runs `prompt` and prints the outcome; returns the process exit code.
pub async fn run(
    config: &Config,
    provider: Arc<dyn Provider>,
    facts: ModelFacts,
    prompt: &str,
    io: Io,
    resume: Option<crate::transcript::Loaded>,
) -> u8 {
    let Io {
        output: format,
        partial,
        input,
    } = io;
    let started = Instant::now();
    let cancel = CancellationToken::new();
    let on_interrupt = cancel.clone();
    tokio::spawn(async move {
        wiring::stop_signal().await;
        on_interrupt.cancel();
    });
    let sandbox = config.sandbox();
    if sandbox.mode != crate::shell::SandboxMode::Off && !crate::shell::Sandbox::supported() {
        eprintln!(
            "agent: note: this kernel has no Landlock, so bash commands run without the OS sandbox"
        );
    }
    let mut live = new_session(config, provider, facts, &cancel, resume.as_ref());
    let (provider_id, model) = {
        let (p, m) = live.session.provider().describe();
        (p.to_string(), m.to_string())
    };
    if let Some(l) = &resume {
        let (was_p, was_m) = crate::transcript::Replay::of(&l.entries)
            .model
            .unwrap_or((l.header.provider.clone(), l.header.model.clone()));
        if (was_p.as_str(), was_m.as_str()) != (provider_id.as_str(), model.as_str()) {
            eprintln!(
                "agent: note: session {} was talking to {was_p} · {was_m}; it continues with {provider_id} · {model}",
                live.session.id
            );
        }
    }
    let emit = |v: serde_json::Value| {
        let mut out = std::io::stdout().lock();
        // A closed stdout (e.g. `| head`) must not crash the run.
        let _ = writeln!(out, "{v}");
        let _ = out.flush();
    };
    if format == OutputFormat::StreamJson {
        let rules = config.rule_set();
        let instructions: Vec<std::path::PathBuf> = crate::agent::instructions_files(
            &config.workspace,
            Some(&global_instructions(config)),
            &|p| rules.denies_read(p),
        )
        .into_iter()
        .map(|(p, _)| p)
        .collect();
        // Claude Code's first message; fields of ours follow.
        emit(json!({
            "type": "system",
            "subtype": "init",
            "cwd": config.workspace,
            "session_id": live.session.id,
            "tools": live.session.tool_names(),
            "mcp_servers": [],
            "model": model,
            "permissionMode": if config.yolo() { "bypassPermissions" } else { "default" },
            "slash_commands": [],
            "apiKeySource": "environment",
            "output_style": "default",
            "provider": provider_id,
            "instructions_files": instructions,
            "resumed": resume.is_some(),
            "context_window": live.session.context().1,
            "context_window_known": live.session.context().2,
        }));
    }
    let envelopes = std::sync::Mutex::new(Envelopes::new(&emit, &live.session.id, &model, partial));
    // Calls the gate refused, as Claude Code's `permission_denials` lists them.
    let calls = std::sync::Mutex::new(std::collections::HashMap::<String, (String, String)>::new());
    let denials = std::sync::Mutex::new(Vec::<serde_json::Value>::new());
    let on_event = |ev: AgentEvent| {
        match &ev {
            AgentEvent::ToolCall {
                id,
                name,
                arguments,
                ..
            } => {
                if let Ok(mut c) = calls.lock() {
                    c.insert(id.clone(), (name.clone(), arguments.clone()));
                }
            }
            AgentEvent::ToolResult {
                id, denied: true, ..
            } => {
                let call = calls.lock().ok().and_then(|c| c.get(id).cloned());
                if let (Some((name, arguments)), Ok(mut d)) = (call, denials.lock()) {
                    d.push(json!({
                        "tool_name": name,
                        "tool_use_id": id,
                        "tool_input": serde_json::from_str::<serde_json::Value>(&arguments)
                            .unwrap_or(serde_json::Value::String(arguments)),
                    }));
                }
            }
            _ => {}
        }
        if format == OutputFormat::StreamJson {
            if let Ok(mut e) = envelopes.lock() {
                e.on(&ev);
            }
        } else if let AgentEvent::ToolResult { notices, .. } = &ev {
            // Hooks that failed: the person hears of it, the answer stays clean.
            for n in notices {
                eprintln!("agent: {n}");
            }
        } else if let AgentEvent::Compacted {
            before,
            after,
            truncated,
            reason,
        } = &ev
        {
            if *truncated {
                eprintln!(
                    "agent: note: the context window was full: the oldest turns were dropped (~{before} → ~{after} tokens); no summary: {reason}"
                );
            } else {
                eprintln!(
                    "agent: note: compacted the conversation to fit the context window (~{before} → ~{after} tokens)"
                );
            }
        }
    };
    // One turn, or one per user message read from stdin (stream-json).
    let mut prompts = Prompts::new(prompt, input);
    let mut code = 0;
    while let Some(next) = prompts.next().await {
        let prompt = match next {
            Ok(p) => p,
            Err(e) => {
                eprintln!("agent: {e}");
                code = 1;
                break;
            }
        };
        let outcome = live.session.run_turn(&prompt, &on_event, &cancel).await;
        if let Ok(mut e) = envelopes.lock() {
            e.flush();
        }
        if let Some(e) = live.transcript_problem() {
            eprintln!("agent: warning: {e}");
        }
        let denials = std::mem::take(&mut *denials.lock().unwrap_or_else(|p| p.into_inner()));
        code = report(&live.session, &outcome, format, denials, started, &emit);
        if matches!(outcome, Err(TurnError::Cancelled)) {
            break;
        }
    }

    // Language servers and MCP servers get a clean shutdown (and are
    // killed if they hang).
    live.shutdown().await;
    code
}

/// The result of one turn, printed as `format` asks; its exit code.
fn report(
    session: &Session,
    outcome: &Result<String, TurnError>,
    format: OutputFormat,
    denials: Vec<serde_json::Value>,
    started: Instant,
    emit: &dyn Fn(serde_json::Value),
) -> u8 {
    let (provider_id, model) = {
        let (p, m) = session.provider().describe();
        (p.to_string(), m.to_string())
    };
    let usage = session.usage();
    // Claude Code's names: `success`, `error_max_turns`, `error_during_execution`.
    let subtype = match outcome {
        Ok(_) => "success",
        Err(TurnError::StepLimit(_)) => "error_max_turns",
        Err(_) => "error_during_execution",
    };
    let (code, result, error) = match outcome {
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
        // Claude Code's result object first, then fields of ours.
        OutputFormat::Json | OutputFormat::StreamJson => emit(json!({
            "type": "result",
            "subtype": subtype,
            "is_error": error.is_some(),
            "duration_ms": started.elapsed().as_millis() as u64,
            "duration_api_ms": session.api_time().as_millis() as u64,
            "num_turns": session.steps(),
            "result": result,
            "session_id": session.id,
            "total_cost_usd": session.cost().unwrap_or(0.0),
            "usage": {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cache_creation_input_tokens": usage.cache_write_tokens,
                "cache_read_input_tokens": usage.cache_read_tokens,
            },
            "permission_denials": denials,
            "error": error,
            "provider": provider_id,
            "model": model,
            "cost_known": session.cost().is_some(),
            "cost_by_model": session.usage_by_model(),
            "session_turns": session.turns(),
            "stop_reason": session.stop_reason(),
            "tool_calls": session.tool_calls(),
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

/// Claude Code's stream-json messages, assembled from the turn's events:
/// an `assistant` message per stretch of the model's output (text,
/// thinking, tool calls; one id per response), a `user` message per batch
/// of tool results, `system`/`compact_boundary` when the conversation is
/// compacted. With `partial`, every event also goes out as it happens, in
/// a `stream_event` envelope.
struct Envelopes<'a> {
    emit: &'a (dyn Fn(serde_json::Value) + Sync),
    session_id: String,
    model: String,
    partial: bool,
    /// The current response's id, and how many there were.
    message: String,
    responses: u64,
    thinking: String,
    text: String,
    tool_uses: Vec<serde_json::Value>,
    results: Vec<serde_json::Value>,
    /// The latest response's usage.
    usage: Option<crate::llm::Usage>,
}

impl<'a> Envelopes<'a> {
    fn new(
        emit: &'a (dyn Fn(serde_json::Value) + Sync),
        session_id: &str,
        model: &str,
        partial: bool,
    ) -> Self {
        Envelopes {
            emit,
            session_id: session_id.to_string(),
            model: model.to_string(),
            partial,
            message: String::new(),
            responses: 0,
            thinking: String::new(),
            text: String::new(),
            tool_uses: Vec::new(),
            results: Vec::new(),
            usage: None,
        }
    }

    fn on(&mut self, ev: &AgentEvent) {
        if self.partial {
            (self.emit)(json!({
                "type": "stream_event",
                "event": serde_json::to_value(ev).unwrap_or_default(),
                "session_id": self.session_id,
                "parent_tool_use_id": null,
            }));
        }
        match ev {
            AgentEvent::TextDelta { text } => {
                self.output_begins();
                self.text.push_str(text);
            }
            AgentEvent::ThinkingDelta { text } => {
                self.output_begins();
                self.thinking.push_str(text);
            }
            // A broken response is asked for again: what it said is void.
            AgentEvent::Withdrawn { .. } => {
                self.text.clear();
                self.thinking.clear();
            }
            // The response's own (a sub-agent's come while tools run).
            AgentEvent::Usage { step, .. } if self.tool_uses.is_empty() => self.usage = Some(*step),
            AgentEvent::Usage { .. } => {}
            AgentEvent::ToolCall {
                id,
                name,
                arguments,
                ..
            } => {
                self.output_begins();
                self.tool_uses.push(json!({
                    "type": "tool_use",
                    "id": id,
                    "name": name,
                    "input": serde_json::from_str::<serde_json::Value>(arguments)
                        .unwrap_or_else(|_| serde_json::Value::String(arguments.clone())),
                }));
            }
            AgentEvent::ToolResult {
                id,
                content,
                is_error,
                ..
            } => {
                self.flush_assistant();
                self.results.push(json!({
                    "type": "tool_result",
                    "tool_use_id": id,
                    "content": content,
                    "is_error": is_error,
                }));
            }
            AgentEvent::Compacted {
                before,
                after,
                truncated,
                reason,
            } => {
                self.flush();
                (self.emit)(json!({
                    "type": "system",
                    "subtype": "compact_boundary",
                    "session_id": self.session_id,
                    "compact_metadata": {
                        "trigger": if reason.contains("/compact") { "manual" } else { "auto" },
                        "pre_tokens": before,
                        "post_tokens": after,
                        "truncated": truncated,
                    },
                }));
            }
            AgentEvent::Retrying { .. }
            | AgentEvent::ToolProgress { .. }
            | AgentEvent::Context { .. } => {}
        }
    }

    /// The model says something: a new response if results came between.
    fn output_begins(&mut self) {
        if !self.results.is_empty() || self.message.is_empty() {
            self.flush_user();
            self.responses += 1;
            self.message = format!("msg_{}_{}", self.session_id, self.responses);
        }
    }

    fn flush_assistant(&mut self) {
        let mut content = Vec::new();
        if !self.thinking.is_empty() {
            content
                .push(json!({"type": "thinking", "thinking": std::mem::take(&mut self.thinking)}));
        }
        if !self.text.is_empty() {
            content.push(json!({"type": "text", "text": std::mem::take(&mut self.text)}));
        }
        content.append(&mut self.tool_uses);
        if content.is_empty() {
            return;
        }
        let usage = self.usage.unwrap_or_default();
        (self.emit)(json!({
            "type": "assistant",
            "message": {
                "id": self.message,
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": content,
                "stop_reason": null,
                "stop_sequence": null,
                "usage": {
                    "input_tokens": usage.input_tokens,
                    "output_tokens": usage.output_tokens,
                    "cache_creation_input_tokens": usage.cache_write_tokens,
                    "cache_read_input_tokens": usage.cache_read_tokens,
                },
            },
            "parent_tool_use_id": null,
            "session_id": self.session_id,
        }));
    }

    fn flush_user(&mut self) {
        if self.results.is_empty() {
            return;
        }
        (self.emit)(json!({
            "type": "user",
            "message": {"role": "user", "content": std::mem::take(&mut self.results)},
            "parent_tool_use_id": null,
            "session_id": self.session_id,
        }));
    }

    /// The turn ended (or compaction replaced it): what is held goes out.
    fn flush(&mut self) {
        self.flush_assistant();
        self.flush_user();
    }
}

/// Where a headless run's prompts come from: the one it was given, or
/// (`--input-format stream-json`) one per user message on stdin, as
/// Claude Code reads them: `{"type":"user","message":{"role":"user",
/// "content": "..." or [{"type":"text","text":"..."}]}}`.
enum Prompts {
    One(Option<String>),
    Stream(tokio::io::Lines<tokio::io::BufReader<tokio::io::Stdin>>),
}

impl Prompts {
    fn new(prompt: &str, input: InputFormat) -> Prompts {
        use tokio::io::AsyncBufReadExt;
        match input {
            InputFormat::Text => Prompts::One(Some(prompt.to_string())),
            InputFormat::StreamJson => {
                Prompts::Stream(tokio::io::BufReader::new(tokio::io::stdin()).lines())
            }
        }
    }

    async fn next(&mut self) -> Option<Result<String, String>> {
        match self {
            Prompts::One(p) => p.take().map(Ok),
            Prompts::Stream(lines) => loop {
                let line = match lines.next_line().await {
                    Ok(Some(l)) => l,
                    Ok(None) => return None,
                    Err(e) => return Some(Err(format!("cannot read standard input: {e}"))),
                };
                if line.trim().is_empty() {
                    continue;
                }
                return Some(user_message(&line));
            },
        }
    }
}

/// The text of one stream-json user message.
fn user_message(line: &str) -> Result<String, String> {
    let bad = |why: &str| {
        format!(
            "{why} in the input (--input-format stream-json): each line must be {{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"...\"}}}}; got: {}",
            crate::text::cut_line(line, 200)
        )
    };
    let v: serde_json::Value =
        serde_json::from_str(line).map_err(|e| bad(&format!("not JSON ({e})")))?;
    if v["type"] != "user" {
        return Err(bad("a message that is not of type `user`"));
    }
    let text = match &v["message"]["content"] {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return Err(bad("a user message without content")),
    };
    if text.trim().is_empty() {
        return Err(bad("an empty user message"));
    }
    Ok(text)
}
