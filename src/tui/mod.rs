//! The full-screen interface (ratatui + crossterm). One front end over the
//! agent: it talks to the session through events and commands, and answers
//! approvals as the `Approver`; nothing in `agent/` depends on it.

mod app;
mod cells;
mod composer;
mod custom;
mod dialog;
mod highlight;
mod markdown;
mod wrap;

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    EventStream,
};
use futures_util::StreamExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub use app::{App, Command, Status, UiEvent};

/// How the interface starts: a first prompt, a session to continue, or the
/// list of sessions to pick from.
pub struct Start {
    pub first: Option<String>,
    pub resume: Option<crate::session::Loaded>,
    pub pick: bool,
}
pub use cells::Theme;

use crate::agent::{Session, TurnError};
use crate::config::Config;
use crate::llm::Provider;
use crate::permission::{ApprovalRequest, Approver, Responder};
use crate::session::Entry;
use crate::wiring::{Live, ModelFacts};

/// At most one frame per this long.
const FRAME: Duration = Duration::from_millis(16);

/// The TUI's approver: each question goes to the event loop as a dialog.
/// If the UI is gone, the responder is dropped, which denies.
struct TuiApprover {
    tx: mpsc::UnboundedSender<UiEvent>,
}

impl Approver for TuiApprover {
    fn request(&self, request: ApprovalRequest, responder: Responder) {
        let _ = self.tx.send(UiEvent::Approval(request, responder));
    }
}

/// Puts the terminal back however we leave: normal exit, error or panic.
struct TerminalGuard;

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
        if std::thread::panicking() {
            eprintln!(
                "agent: the interface crashed; the details are in agent.log in the data directory"
            );
        }
    }
}

type Term = ratatui::Terminal<ratatui::backend::CrosstermBackend<std::io::Stdout>>;

/// The transcript printed into the scrollback on exit: its last lines.
const SCROLLBACK_LINES: usize = 5000;

/// Raw mode, alternate screen, bracketed paste and mouse reports.
fn enter() -> std::io::Result<Term> {
    crossterm::terminal::enable_raw_mode()?;
    crossterm::execute!(
        std::io::stdout(),
        crossterm::terminal::EnterAlternateScreen,
        EnableBracketedPaste,
        EnableMouseCapture
    )?;
    ratatui::Terminal::new(ratatui::backend::CrosstermBackend::new(std::io::stdout()))
}

fn restore() {
    let _ = crossterm::execute!(
        std::io::stdout(),
        DisableBracketedPaste,
        DisableMouseCapture,
        crossterm::terminal::LeaveAlternateScreen,
        crossterm::cursor::Show
    );
    let _ = crossterm::terminal::disable_raw_mode();
    let _ = std::io::stdout().flush();
}

pub async fn run(
    config: &Config,
    provider: Arc<dyn Provider>,
    facts: ModelFacts,
    start: Start,
) -> anyhow::Result<u8> {
    let (ui_tx, mut ui_rx) = mpsc::unbounded_channel::<UiEvent>();
    let (cmd_tx, cmd_rx) = mpsc::unbounded_channel::<Command>();
    let (provider_id, model) = {
        let (p, m) = provider.describe();
        (p.to_string(), m.to_string())
    };
    let first = start.first.clone();
    let agent = tokio::spawn(agent_task(
        config.clone(),
        provider,
        facts,
        start,
        ui_tx.clone(),
        cmd_rx,
    ));

    // A panic's message goes to the log, not over the screen; a panic that
    // escapes unwinds through the guard, which restores the terminal. A
    // panic caught inside a tool call leaves the screen alone.
    std::panic::set_hook(Box::new(|info| {
        crate::log::log(&format!("panic: {info}"));
    }));
    let mut terminal = enter()?;
    let _guard = TerminalGuard;

    let home = std::env::var("HOME").unwrap_or_default();
    let cwd = config.workspace.display().to_string();
    let cwd = match cwd.strip_prefix(&home) {
        Some(rest) if !home.is_empty() => format!("~{rest}"),
        _ => cwd,
    };
    let status = Status {
        provider: provider_id,
        model,
        prices: facts.prices,
        context: None,
        session: String::new(),
        servers: Vec::new(),
        yolo: config.yolo(),
        sandbox: config.sandbox().mode.to_string(),
        cwd,
    };
    let theme = Theme {
        colors: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    };
    let mut app = App::new(status, theme);
    if theme.colors {
        highlight::warm();
    }
    let rules = config.rule_set();
    let shown = |p: &std::path::Path| {
        if let Ok(rel) = p.strip_prefix(&config.workspace) {
            return rel.display().to_string();
        }
        let d = p.display().to_string();
        match d.strip_prefix(&home) {
            Some(rest) if !home.is_empty() => format!("~{rest}"),
            _ => d,
        }
    };
    app.welcome(cells::WelcomeCell {
        title: format!(
            "agent v{} · {} · {}",
            env!("CARGO_PKG_VERSION"),
            app.status.provider,
            app.status.model
        ),
        cwd: app.status.cwd.clone(),
        instructions: crate::agent::instructions_files(
            &config.workspace,
            Some(&crate::wiring::global_instructions(config)),
            &|p| rules.denies_read(p),
        )
        .iter()
        .map(|(p, _)| shown(p))
        .collect(),
        sandbox: app.status.sandbox.clone(),
        trusted: config.project_trusted,
        yolo: config.yolo(),
    });
    // The person's own slash commands (later directories win).
    let config_dir = config
        .paths
        .user_config
        .parent()
        .map(std::path::Path::to_path_buf);
    let mut dirs: Vec<std::path::PathBuf> = config_dir.iter().map(|d| d.join("commands")).collect();
    if !home.is_empty() {
        dirs.push(std::path::Path::new(&home).join(".claude/commands"));
    }
    dirs.push(config.workspace.join(".claude/commands"));
    dirs.push(config.workspace.join(".agent/commands"));
    app.custom = custom::load(&dirs);
    if let Some(p) = first {
        app.submit(p);
    }
    let mut events = Some(EventStream::new());
    let stop = crate::wiring::stop_signal_terminal();
    tokio::pin!(stop);
    let mut dirty = true;
    let mut last_draw = Instant::now() - FRAME;
    loop {
        for c in std::mem::take(&mut app.commands) {
            match c {
                Command::Editor => {
                    // Stop reading keys and give the terminal to the editor;
                    // the agent keeps running meanwhile.
                    drop(events.take());
                    restore();
                    let draft = app.composer.text.clone();
                    let edited = tokio::task::spawn_blocking(move || edit_in_editor(&draft))
                        .await
                        .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())));
                    terminal = enter()?;
                    events = Some(EventStream::new());
                    // Not `terminal.clear()`: it asks the terminal where
                    // the cursor is, and an answer lost while the editor
                    // had the terminal ended the agent. The new terminal
                    // draws every cell; the screen is cleared first.
                    crossterm::execute!(
                        std::io::stdout(),
                        crossterm::terminal::Clear(crossterm::terminal::ClearType::All)
                    )?;
                    match edited {
                        Ok(text) => {
                            app.composer.clear();
                            app.composer.insert(text.trim_end_matches('\n'));
                        }
                        Err(e) => app.notice(
                            &format!("could not run the editor: {e}; set $VISUAL or $EDITOR"),
                            true,
                        ),
                    }
                    dirty = true;
                }
                Command::Quit => {
                    let _ = cmd_tx.send(Command::Quit);
                    app.quit = true;
                }
                other => {
                    let _ = cmd_tx.send(other);
                }
            }
        }
        if app.quit {
            break;
        }
        if dirty && last_draw.elapsed() >= FRAME {
            terminal.draw(|f| app.draw(f, Instant::now()))?;
            dirty = false;
            last_draw = Instant::now();
        }
        let frame_wait = FRAME.saturating_sub(last_draw.elapsed());
        // A clock only while something on screen changes with time.
        let ticking = app.working() || app.dialog_open();
        tokio::select! {
            ev = async {
                match events.as_mut() {
                    Some(e) => e.next().await,
                    None => std::future::pending().await,
                }
            } => match ev {
                Some(Ok(ev)) => { app.on_event(ev, Instant::now()); dirty = true; }
                Some(Err(e)) => return Err(e.into()),
                None => break,
            },
            ui = ui_rx.recv() => if let Some(ui) = ui { app.apply(ui); dirty = true; },
            _ = &mut stop => app.quit = true,
            _ = tokio::time::sleep(frame_wait), if dirty => {}
            _ = tokio::time::sleep(Duration::from_millis(250)), if ticking && !dirty => { dirty = true; }
        }
    }
    let _ = cmd_tx.send(Command::Quit);
    drop(terminal);
    drop(_guard);
    // Quitting is immediate: a clean stop of the turn and the servers gets
    // a moment, no more (the sandbox's keepers end what is left, and the
    // session log was written as it went).
    let _ = tokio::time::timeout(Duration::from_millis(50), agent).await;
    // The alternate screen took the transcript away: it goes into the
    // terminal's scrollback, and how to get back into the session.
    let id = &app.status.session;
    if app.talked {
        let width = crossterm::terminal::size().map_or(100, |(w, _)| w.max(20));
        let mut out = std::io::stdout().lock();
        for line in app.transcript_text(width, SCROLLBACK_LINES) {
            let _ = writeln!(out, "{line}");
        }
        let _ = out.flush();
    }
    if app.talked && !id.is_empty() {
        println!(
            "agent: session {id} is saved; `agent --resume {id}` (or `agent -c` here) continues it."
        );
    }
    Ok(0)
}

/// `/permissions`: the rules in effect, where each came from, and what
/// this session's answers allowed.
fn permissions_text(config: &Config, session: &Session) -> String {
    let mut out = String::from("Rules in effect (deny wins over ask over allow):\n");
    if config.rules.is_empty() {
        out.push_str("  none: every side effect is asked about\n");
    }
    for (list, text, source) in &config.rules {
        out.push_str(&format!("  {list:<5} {text}   ({})\n", source.display()));
    }
    let grants = session.surface().gate().session_grants();
    if grants.is_empty() {
        out.push_str("This session's grants: none.");
    } else {
        out.push_str("This session's grants (from `a` answers; they end with the session):\n");
        for g in grants {
            out.push_str(&format!("  {g}\n"));
        }
    }
    if config.yolo() {
        out.push_str("\n--yolo: calls no rule denies or asks about run without a question.");
    }
    out.trim_end().to_string()
}

/// Longest a command the person runs with `!` may take.
const OWN_COMMAND_TIMEOUT: Duration = Duration::from_secs(120);
/// Output of such a command kept for the conversation.
const OWN_COMMAND_OUTPUT: usize = 30_000;

/// Runs a command the person typed (`!cmd`) in the project, as their own
/// shell would (it is theirs, not the model's: no question, no sandbox).
/// Returns what to show and what the model is told with the next prompt.
async fn run_own_command(workspace: &std::path::Path, cmd: &str) -> (String, String) {
    let ran = tokio::time::timeout(
        OWN_COMMAND_TIMEOUT,
        tokio::process::Command::new("bash")
            .arg("-c")
            .arg(cmd)
            .current_dir(workspace)
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await;
    let (output, status) = match ran {
        Ok(Ok(o)) => {
            let mut text = String::from_utf8_lossy(&o.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&o.stderr));
            (text, o.status.to_string())
        }
        Ok(Err(e)) => (format!("could not run it: {e}"), "not run".to_string()),
        Err(_) => (
            String::new(),
            format!("stopped after {} s", OWN_COMMAND_TIMEOUT.as_secs()),
        ),
    };
    let output = crate::text::cut_line(output.trim_end(), OWN_COMMAND_OUTPUT);
    let shown = if output.is_empty() {
        format!("({status})")
    } else {
        format!("{output}\n({status})")
    };
    let context =
        format!("The person ran this command themselves ({status}):\n$ {cmd}\n```\n{output}\n```");
    (shown, context)
}

/// `@path` in a prompt: the current content of that file of the project is
/// attached. Files outside the project (a command file's text could name
/// one; the model can still ask to `view` it, through the gate), files the
/// read rules deny, directories and files over 256 KiB are not; the
/// mention stays as it was typed.
fn expand_mentions(prompt: &str, config: &Config) -> String {
    const MAX: u64 = 256 * 1024;
    let rules = config.rule_set();
    let mut attached = Vec::new();
    for word in prompt.split_whitespace() {
        let Some(name) = word.strip_prefix('@') else {
            continue;
        };
        let name = name.trim_end_matches([',', '.', ';', ':', ')', '?', '!']);
        if name.is_empty() {
            continue;
        }
        let path = config.workspace.join(name);
        let Ok(real) = path.canonicalize() else {
            continue;
        };
        let fits = std::fs::metadata(&real).is_ok_and(|m| m.is_file() && m.len() <= MAX);
        if !fits
            || !real.starts_with(&config.workspace)
            || rules.denies_read(&real)
            || attached.iter().any(|(n, _)| n == name)
        {
            continue;
        }
        if let Ok(text) = std::fs::read_to_string(&real) {
            attached.push((name.to_string(), text));
        }
    }
    if attached.is_empty() {
        return prompt.to_string();
    }
    let mut out = prompt.to_string();
    for (name, text) in attached {
        out.push_str(&format!(
            "\n\n<file path=\"{name}\">\n{}\n</file>",
            text.trim_end()
        ));
    }
    out
}

/// Opens the draft in `$VISUAL` or `$EDITOR` (vi when neither is set) and
/// returns what was saved.
fn edit_in_editor(draft: &str) -> std::io::Result<String> {
    let mut file = tempfile::Builder::new()
        .prefix("agent-draft-")
        .suffix(".md")
        .tempfile()?;
    file.write_all(draft.as_bytes())?;
    file.flush()?;
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".into());
    let mut parts = editor.split_whitespace();
    let program = parts.next().unwrap_or("vi");
    let status = std::process::Command::new(program)
        .args(parts)
        .arg(file.path())
        .status()?;
    if !status.success() {
        return Err(std::io::Error::other(format!(
            "{editor} exited with {status}"
        )));
    }
    std::fs::read_to_string(file.path())
}

/// Keeps the status line current while MCP servers start, fail or exit in
/// the background; cancel the token when the session goes.
fn watch_servers(live: &Live, ui: &mpsc::UnboundedSender<UiEvent>) -> CancellationToken {
    let stop = CancellationToken::new();
    if let Some(mcp) = live.mcp.clone() {
        let (tx, stop) = (ui.clone(), stop.clone());
        let lsp = live.session.surface().context().lsp.clone();
        tokio::spawn(async move {
            loop {
                let mut list = match &lsp {
                    Some(lsp) => lsp.status().await,
                    None => Vec::new(),
                };
                list.extend(mcp.status());
                let _ = tx.send(UiEvent::Servers(list));
                tokio::select! {
                    _ = stop.cancelled() => break,
                    _ = mcp.changed() => {}
                }
            }
        });
    }
    stop
}

/// Draws a resumed session: its transcript, what could not be read, and
/// where it stands.
fn show_resumed(
    ui: &mpsc::UnboundedSender<UiEvent>,
    session: &Session,
    loaded: &crate::session::Loaded,
) {
    for ev in replay(session, &loaded.entries) {
        let _ = ui.send(ev);
    }
    for w in &loaded.warnings {
        let _ = ui.send(UiEvent::Notice(w.clone(), true));
    }
    let _ = ui.send(UiEvent::Notice(
        format!(
            "Resumed session {} ({} turns).",
            session.id,
            session.turns()
        ),
        false,
    ));
}

/// The transcript of a resumed session as the UI draws a live one.
fn replay(session: &Session, entries: &[Entry]) -> Vec<UiEvent> {
    let surface = session.surface();
    let mut out = Vec::new();
    for e in entries {
        match e {
            Entry::User {
                text, auto: false, ..
            } => out.push(UiEvent::User(text.clone())),
            Entry::Assistant { message } => {
                let text = message.text();
                if !text.is_empty() {
                    out.push(UiEvent::Agent(crate::agent::AgentEvent::TextDelta { text }));
                }
                for c in &message.content {
                    if let crate::llm::Content::ToolCall {
                        id,
                        name,
                        arguments,
                    } = c
                    {
                        let call = crate::tools::ToolCall {
                            id: id.clone(),
                            name: name.clone(),
                            arguments: arguments.clone(),
                        };
                        out.push(UiEvent::Agent(crate::agent::AgentEvent::ToolCall {
                            summary: surface.summary(&call),
                            preview: surface.preview(name),
                            id: id.clone(),
                            name: name.clone(),
                            arguments: arguments.clone(),
                        }));
                    }
                }
            }
            Entry::ToolResult {
                call_id,
                name,
                content,
                is_error,
                diff,
                denied,
            } => out.push(UiEvent::Agent(crate::agent::AgentEvent::ToolResult {
                id: call_id.clone(),
                name: name.clone(),
                content: content.clone(),
                is_error: *is_error,
                diff: diff.clone(),
                denied: *denied,
                notices: Vec::new(),
            })),
            Entry::Compaction {
                before,
                after,
                truncated,
                ..
            } => out.push(UiEvent::Agent(crate::agent::AgentEvent::Compacted {
                before: *before,
                after: *after,
                truncated: *truncated,
                reason: String::new(),
            })),
            Entry::Undo { files, redo, .. } => out.push(UiEvent::Notice(
                format!(
                    "{} {} file(s)",
                    if *redo { "Redid" } else { "Undid" },
                    files.len()
                ),
                false,
            )),
            Entry::TurnEnd { outcome, .. } if outcome != "done" => {
                out.push(UiEvent::Notice(outcome.clone(), true))
            }
            _ => {}
        }
    }
    out
}

/// Owns the session: runs one turn at a time as the UI asks. Returns the
/// session's id when it has something saved.
async fn agent_task(
    config: Config,
    provider: Arc<dyn Provider>,
    facts: ModelFacts,
    start: Start,
    ui: mpsc::UnboundedSender<UiEvent>,
    mut commands: mpsc::UnboundedReceiver<Command>,
) -> Option<String> {
    let root_cancel = CancellationToken::new();
    let approver = Arc::new(TuiApprover { tx: ui.clone() });
    let mut facts = facts;
    let new_session = |provider: Arc<dyn Provider>,
                       facts: ModelFacts,
                       resume: Option<&crate::session::Loaded>| {
        crate::wiring::session(
            &config,
            provider,
            facts,
            approver.clone(),
            &root_cancel,
            resume,
        )
    };
    let mut live = new_session(provider.clone(), facts, start.resume.as_ref());
    let _ = ui.send(UiEvent::Session(live.session.id.clone()));
    if let Some(loaded) = &start.resume {
        show_resumed(&ui, &live.session, loaded);
    }
    if start.pick {
        let _ = ui.send(UiEvent::Picker(session_items(&config)));
    }
    let mut watching = watch_servers(&live, &ui);
    // Changes made outside the agent show up as notices.
    if let Some(lsp) = &live.session.surface().context().lsp {
        let mut changes = lsp.external_changes.subscribe();
        let tx = ui.clone();
        let root = config.workspace.clone();
        tokio::spawn(async move {
            while let Ok(paths) = changes.recv().await {
                let shown: Vec<String> = paths
                    .iter()
                    .take(5)
                    .map(|p| p.strip_prefix(&root).unwrap_or(p).display().to_string())
                    .collect();
                let more = if paths.len() > 5 {
                    format!(" and {} more", paths.len() - 5)
                } else {
                    String::new()
                };
                if tx
                    .send(UiEvent::Notice(
                        format!("changed outside the agent: {}{more}", shown.join(", ")),
                        false,
                    ))
                    .is_err()
                {
                    break;
                }
            }
        });
    }
    // Commands that arrived during a turn and wait for its end.
    let mut deferred: std::collections::VecDeque<Command> = std::collections::VecDeque::new();
    // Context the person gave for the next prompt (`!cmd` output).
    let mut pending: Vec<String> = Vec::new();
    loop {
        let cmd = match deferred.pop_front() {
            Some(c) => c,
            None => match commands.recv().await {
                Some(c) => c,
                None => break,
            },
        };
        match cmd {
            Command::Send(prompt) => {
                // What the person ran (`!cmd`) and the files they named
                // (`@path`) go with the prompt.
                let mut prompt = expand_mentions(&prompt, &config);
                if !pending.is_empty() {
                    prompt = format!("{}\n\n{prompt}", std::mem::take(&mut pending).join("\n\n"));
                }
                let turn = CancellationToken::new();
                let tx = ui.clone();
                let on_event = move |ev| {
                    let _ = tx.send(UiEvent::Agent(ev));
                };
                let surface = Arc::clone(live.session.surface());
                let result = {
                    let run = live.session.run_turn(&prompt, &on_event, &turn);
                    tokio::pin!(run);
                    // Interrupts arrive while the turn runs.
                    loop {
                        tokio::select! {
                            r = &mut run => break r,
                            c = commands.recv() => match c {
                                Some(Command::Interrupt) => turn.cancel(),
                                Some(Command::SetYolo(on)) => surface.gate().set_yolo(on),
                                Some(Command::Quit) | None => turn.cancel(),
                                Some(other) => deferred.push_back(other),
                            },
                        }
                    }
                };
                let _ = ui.send(UiEvent::Servers(live.server_status().await));
                let done = match result {
                    Ok(_) | Err(TurnError::Cancelled) => Ok(()),
                    Err(e) => Err(e.to_string()),
                };
                let _ = ui.send(UiEvent::TurnDone(done));
            }
            Command::Clear => {
                // The old session's MCP servers stop with it.
                watching.cancel();
                live = new_session(provider.clone(), facts, None);
                let _ = ui.send(UiEvent::Session(live.session.id.clone()));
                watching = watch_servers(&live, &ui);
            }
            Command::Resume(id) => {
                let found = crate::session::list::find(&config.paths.data_dir, &id)
                    .map_err(|e| e.to_string())
                    .and_then(|s| crate::session::store::load(&s.path).map_err(|e| e.to_string()));
                match found {
                    Ok(loaded) => {
                        watching.cancel();
                        live = new_session(provider.clone(), facts, Some(&loaded));
                        let _ = ui.send(UiEvent::Reset);
                        let _ = ui.send(UiEvent::Session(live.session.id.clone()));
                        show_resumed(&ui, &live.session, &loaded);
                        watching = watch_servers(&live, &ui);
                    }
                    Err(e) => {
                        let _ = ui.send(UiEvent::Notice(format!("cannot resume: {e}"), true));
                    }
                }
            }
            Command::ListSessions => {
                let _ = ui.send(UiEvent::Picker(session_items(&config)));
            }
            Command::Compact(focus) => {
                let tx = ui.clone();
                let on_event = move |ev| {
                    let _ = tx.send(UiEvent::Agent(ev));
                };
                let turn = CancellationToken::new();
                let r = live
                    .session
                    .compact_now(focus.as_deref(), &on_event, &turn)
                    .await
                    .map_err(|e| e.to_string());
                let (tokens, window, known) = live.session.context();
                let _ = ui.send(UiEvent::Agent(crate::agent::AgentEvent::Context {
                    tokens,
                    window,
                    known,
                }));
                let _ = ui.send(UiEvent::TurnDone(r));
            }
            Command::Undo { redo, force } => {
                let (text, error) = undo(&config, &live.session, None, redo, force);
                // Files changed since: the person decides, with `y`.
                let _ = ui.send(if error && text.contains(CONFLICT) {
                    UiEvent::Confirm(text, Command::Undo { redo, force: true })
                } else {
                    UiEvent::Notice(text, error)
                });
            }
            Command::Rewind(None) => {
                let points = live.session.rewind_points();
                let text = if points.is_empty() {
                    "No turn to rewind to (turns before a compaction or a resume cannot be rewound).".to_string()
                } else {
                    let mut t =
                        String::from("Rewind with /rewind N [code|chat|both] (default both):\n");
                    for (n, prompt) in points {
                        t.push_str(&format!(
                            "  {n}  {}\n",
                            crate::session::list::title(&prompt)
                        ));
                    }
                    t
                };
                let _ = ui.send(UiEvent::Notice(text, false));
            }
            Command::Rewind(Some((n, what))) => {
                let mut notes = Vec::new();
                let mut failed = false;
                if what != "chat" {
                    let (text, err) = undo(&config, &live.session, Some(n), false, false);
                    failed = err;
                    notes.push(text);
                }
                if what != "code" && !failed {
                    match live.session.rewind(n) {
                        Some(prompt) => {
                            notes.push(format!("The conversation is back to before turn {n}; its prompt was:\n{prompt}"));
                        }
                        None => notes.push(format!(
                            "Turn {n} cannot be rewound to (/rewind lists the turns that can)."
                        )),
                    }
                }
                let _ = ui.send(UiEvent::Notice(notes.join("\n"), failed));
            }
            Command::Status => {
                let (p, m) = live.session.provider().describe();
                let (tokens, window, known) = live.session.context();
                let rules = config.rule_set();
                let files = crate::agent::instructions_files(
                    &config.workspace,
                    Some(&crate::wiring::global_instructions(&config)),
                    &|p| rules.denies_read(p),
                );
                let mut t = format!(
                    "session {}\nlog {}\nmodel {p} · {m}\ncontext ~{tokens} tokens{}\nturns {}, tool calls {}\ninstructions: {}",
                    live.session.id,
                    crate::session::log_path(&config.paths.data_dir, &live.session.id).display(),
                    if known {
                        format!(" of {window} ({}%)", tokens * 100 / window.max(1))
                    } else {
                        " (the model's window is not known: set `context_window` in [providers.<id>] to compact before it is full)".to_string()
                    },
                    live.session.turns(),
                    live.session.tool_calls(),
                    if files.is_empty() {
                        "none".to_string()
                    } else {
                        files
                            .iter()
                            .map(|(p, _)| p.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                );
                if let Some(e) = live.transcript_problem() {
                    t.push_str(&format!("\n{e}"));
                }
                let _ = ui.send(UiEvent::Notice(t, false));
            }
            Command::Cost => {
                let mut t = String::from("Cost of this session (sub-agents included):\n");
                for m in live.session.usage_by_model() {
                    let u = m.usage;
                    t.push_str(&format!(
                        "  {} · {}: {} in, {} out, {} cache read, {} cache write: {}\n",
                        m.provider,
                        m.model,
                        u.input_tokens,
                        u.output_tokens,
                        u.cache_read_tokens,
                        u.cache_write_tokens,
                        m.cost.map(|c| format!("${c:.4}")).unwrap_or_else(|| {
                            "price unknown (set input_price/output_price in [providers.<id>])"
                                .into()
                        })
                    ));
                }
                if let Some(c) = live.session.cost() {
                    t.push_str(&format!("  total: ${c:.4}"));
                }
                let _ = ui.send(UiEvent::Notice(t, false));
            }
            Command::SetYolo(on) => live.session.surface().gate().set_yolo(on),
            Command::ListModels => {
                let (_, now) = live.session.provider().describe();
                let now = now.to_string();
                let text = match live.session.provider().models().await {
                    Ok(list) if !list.is_empty() => format!(
                        "The model is {now}. {} offers: {}. Switch with /model NAME.",
                        live.session.provider().describe().0,
                        list.join(", ")
                    ),
                    Ok(_) | Err(_) => format!("The model is {now}; switch with /model NAME."),
                };
                let _ = ui.send(UiEvent::Notice(text, false));
            }
            Command::SetModel(model) => {
                // A name the provider's list does not have is refused, with
                // the names nearest to it; no list, no check.
                if let Ok(list) = live.session.provider().models().await
                    && !list.is_empty()
                    && !list.contains(&model)
                {
                    let mut near: Vec<(f64, &String)> = list
                        .iter()
                        .map(|m| (strsim::jaro_winkler(m, &model), m))
                        .collect();
                    near.sort_by(|a, b| b.0.total_cmp(&a.0));
                    let near: Vec<&str> = near.iter().take(3).map(|(_, m)| m.as_str()).collect();
                    let _ = ui.send(UiEvent::Notice(
                        format!(
                            "{} has no model `{model}`; the nearest are: {}. /model lists them all.",
                            live.session.provider().describe().0,
                            near.join(", ")
                        ),
                        true,
                    ));
                    continue;
                }
                let mut overrides = crate::config::Overrides {
                    model: Some(model.clone()),
                    ..Default::default()
                };
                overrides.provider = Some(live.session.provider().describe().0.to_string());
                let switched = config
                    .with_overrides(overrides)
                    .resolve_provider(&|n| std::env::var(n).ok())
                    .map_err(|e| e.to_string())
                    .and_then(|p| {
                        crate::llm::connect(&p, &config.llm)
                            .map(|c| (c, ModelFacts::of(&p)))
                            .map_err(|e| e.to_string())
                    });
                match switched {
                    Ok((p, f)) => {
                        facts = f;
                        live.session.set_provider(p, f.window, f.prices);
                        let _ = ui.send(UiEvent::Model(model, f.prices));
                    }
                    Err(e) => {
                        let _ = ui.send(UiEvent::Notice(
                            format!("cannot switch to model {model}: {e}"),
                            true,
                        ));
                    }
                }
            }
            Command::Diff => {
                let history = &live.session.surface().context().history;
                let text = match history.plan_since(1) {
                    Ok(Some(plan)) if !plan.files.is_empty() => plan
                        .files
                        .iter()
                        .map(|f| {
                            let shown = f
                                .path
                                .strip_prefix(&config.workspace)
                                .unwrap_or(&f.path)
                                .display()
                                .to_string();
                            f.net_diff(&shown)
                        })
                        .collect::<Vec<_>>()
                        .join("\n"),
                    Ok(_) => "This session has changed no file (that undo could restore).".into(),
                    Err(e) => format!("cannot read the file history: {e}"),
                };
                let _ = ui.send(UiEvent::Notice(text, false));
            }
            Command::Permissions => {
                let _ = ui.send(UiEvent::Notice(
                    permissions_text(&config, &live.session),
                    false,
                ));
            }
            Command::Shell(cmd) => {
                let (shown, context) = run_own_command(&config.workspace, &cmd).await;
                let _ = ui.send(UiEvent::Notice(shown, false));
                pending.push(context);
            }
            Command::Interrupt | Command::Editor => {}
            Command::Quit => break,
        }
    }
    watching.cancel();
    live.shutdown().await;
    root_cancel.cancel();
    (!live.session.messages().is_empty()).then(|| live.session.id.clone())
}

/// This project's sessions for the picker: (id, "time · turns · title").
fn session_items(config: &Config) -> Vec<(String, String)> {
    let root = crate::session::store::project_root(&config.workspace);
    crate::session::list::list(&config.paths.data_dir, Some(&root))
        .into_iter()
        .map(|s| {
            let when = time::OffsetDateTime::from_unix_timestamp(s.updated)
                .map(|t| {
                    format!(
                        "{:02}-{:02} {:02}:{:02}",
                        t.month() as u8,
                        t.day(),
                        t.hour(),
                        t.minute()
                    )
                })
                .unwrap_or_default();
            let label = format!(
                "{when}  {:>3} turns  {}  {}",
                s.turns,
                s.title,
                s.id.chars().take(8).collect::<String>()
            );
            (s.id, label)
        })
        .collect()
}

/// How an undo that stopped at files changed since says so.
const CONFLICT: &str = "Nothing was changed";

/// `/undo`, `/redo`, the code part of `/rewind`: the notice to show and
/// whether it is an error. Files changed since are never overwritten
/// without `force`.
fn undo(
    config: &Config,
    session: &Session,
    since: Option<u32>,
    redo: bool,
    force: bool,
) -> (String, bool) {
    let history = &session.surface().context().history;
    let what = if redo { "redo" } else { "undo" };
    let planned = match since {
        Some(turn) => history.plan_since(turn),
        None => history.plan(1, redo),
    };
    let plan = match planned {
        Ok(Some(p)) => p,
        Ok(None) => return (format!("Nothing to {what}."), false),
        Err(e) => return (format!("cannot read the file history: {e}"), true),
    };
    let mut text = crate::commands::describe(&plan, &config.workspace);
    let conflicts = plan.conflicts().count();
    if conflicts > 0 && !force {
        text.push_str(&format!(
            "{CONFLICT}: {conflicts} file(s) changed since the agent's change (diffs above). /{what} force overwrites them."
        ));
        return (text, true);
    }
    match history.apply(&plan, &config.workspace, force) {
        Ok(files) => {
            session.note_undo(
                plan.targets.first().map_or("", String::as_str),
                redo,
                &files,
            );
            text.push_str(&format!(
                "{} {} file(s); /{} reverses it.",
                if redo { "Redid" } else { "Undid" },
                files.len(),
                if redo { "undo" } else { "redo" }
            ));
            (text, false)
        }
        Err(e) => (format!("{text}{e}"), true),
    }
}

#[cfg(test)]
mod tests;
