//! The full-screen interface (ratatui + crossterm). One front end over the
//! agent: it talks to the session through events and commands, and answers
//! approvals as the `Approver`; nothing in `agent/` depends on it.

mod app;
mod cells;
mod composer;
mod dialog;
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
pub use cells::Theme;

use crate::agent::{Session, TurnError};
use crate::config::Config;
use crate::headless::new_session_with;
use crate::llm::Provider;
use crate::permission::{ApprovalRequest, Approver, Responder};

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
    prices: Option<(f64, f64)>,
    first: Option<String>,
) -> anyhow::Result<u8> {
    let (ui_tx, mut ui_rx) = mpsc::unbounded_channel::<UiEvent>();
    let (cmd_tx, cmd_rx) = mpsc::unbounded_channel::<Command>();
    let (provider_id, model) = {
        let (p, m) = provider.describe();
        (p.to_string(), m.to_string())
    };
    let agent = tokio::spawn(agent_task(config.clone(), provider, ui_tx.clone(), cmd_rx));

    // A panic's message goes to the log, not over the screen; a panic that
    // escapes unwinds through the guard, which restores the terminal. A
    // panic caught inside a tool call leaves the screen alone.
    std::panic::set_hook(Box::new(|info| {
        crate::session::log(&format!("panic: {info}"));
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
        prices,
        servers: Vec::new(),
        yolo: config.yolo(),
        sandbox: config.sandbox().mode.to_string(),
        cwd,
    };
    let theme = Theme {
        colors: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    };
    let mut app = App::new(status, theme);
    if let Some(p) = first {
        app.submit(p);
    }
    let mut events = Some(EventStream::new());
    let stop = crate::headless::stop_signal_terminal();
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
                    terminal.clear()?;
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
    let _ = tokio::time::timeout(Duration::from_secs(3), agent).await;
    Ok(0)
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

/// Language servers and MCP servers with their state, for the status line.
async fn server_status(surface: &crate::tools::Surface) -> Vec<(String, String)> {
    let mut list = match &surface.context().lsp {
        Some(lsp) => lsp.status().await,
        None => Vec::new(),
    };
    if let Some(mcp) = &surface.context().mcp {
        list.extend(mcp.status());
    }
    list
}

/// Keeps the status line current while MCP servers start, fail or exit in
/// the background; cancel the token when the session goes.
fn watch_servers(session: &Session, ui: &mpsc::UnboundedSender<UiEvent>) -> CancellationToken {
    let stop = CancellationToken::new();
    let surface = Arc::clone(session.surface());
    if surface.context().mcp.is_some() {
        let (tx, stop) = (ui.clone(), stop.clone());
        tokio::spawn(async move {
            loop {
                let _ = tx.send(UiEvent::Servers(server_status(&surface).await));
                let Some(mcp) = &surface.context().mcp else {
                    break;
                };
                tokio::select! {
                    _ = stop.cancelled() => break,
                    _ = mcp.changed() => {}
                }
            }
        });
    }
    stop
}

/// Owns the session: runs one turn at a time as the UI asks.
async fn agent_task(
    config: Config,
    provider: Arc<dyn Provider>,
    ui: mpsc::UnboundedSender<UiEvent>,
    mut commands: mpsc::UnboundedReceiver<Command>,
) {
    let root_cancel = CancellationToken::new();
    let approver = Arc::new(TuiApprover { tx: ui.clone() });
    let new_session = |provider: Arc<dyn Provider>| {
        new_session_with(&config, provider, approver.clone(), &root_cancel)
    };
    let mut session = new_session(provider.clone());
    let mut watching = watch_servers(&session, &ui);
    // Changes made outside the agent show up as notices.
    if let Some(lsp) = &session.surface().context().lsp {
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
                let turn = CancellationToken::new();
                let tx = ui.clone();
                let on_event = move |ev| {
                    let _ = tx.send(UiEvent::Agent(ev));
                };
                let surface = Arc::clone(session.surface());
                let result = {
                    let run = session.run_turn(&prompt, &on_event, &turn);
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
                save(&config, &session);
                let _ = ui.send(UiEvent::Servers(server_status(session.surface()).await));
                let done = match result {
                    Ok(_) | Err(TurnError::Cancelled) => Ok(()),
                    Err(e) => Err(e.to_string()),
                };
                let _ = ui.send(UiEvent::TurnDone(done));
            }
            Command::Clear => {
                save(&config, &session);
                // The old session's MCP servers stop with it.
                watching.cancel();
                session = new_session(provider.clone());
                watching = watch_servers(&session, &ui);
            }
            Command::SetYolo(on) => session.surface().gate().set_yolo(on),
            Command::SetModel(model) => {
                let mut overrides = crate::config::Overrides {
                    model: Some(model.clone()),
                    ..Default::default()
                };
                overrides.provider = Some(session.provider().describe().0.to_string());
                let switched = config
                    .with_overrides(overrides)
                    .resolve_provider(&|n| std::env::var(n).ok())
                    .map_err(|e| e.to_string())
                    .and_then(|p| crate::llm::connect(&p, &config.llm).map_err(|e| e.to_string()));
                match switched {
                    Ok(p) => session.set_provider(p),
                    Err(e) => {
                        let _ = ui.send(UiEvent::Notice(
                            format!("cannot switch to model {model}: {e}"),
                            true,
                        ));
                    }
                }
            }
            Command::Interrupt | Command::Editor => {}
            Command::Quit => break,
        }
    }
    save(&config, &session);
    watching.cancel();
    if let Some(lsp) = session.surface().context().lsp.clone() {
        let _ = tokio::time::timeout(Duration::from_secs(2), lsp.shutdown_all()).await;
    }
    if let Some(mcp) = session.surface().context().mcp.clone() {
        let _ = tokio::time::timeout(Duration::from_secs(2), mcp.shutdown()).await;
    }
    root_cancel.cancel();
}

fn save(config: &Config, session: &Session) {
    if session.messages().is_empty() {
        return;
    }
    let (provider, model) = session.provider().describe();
    let t = crate::session::Transcript {
        id: &session.id,
        provider,
        model,
        cwd: &config.workspace,
        usage: session.usage(),
        messages: session.messages(),
    };
    // The screen is not the place for this; the transcript is best effort.
    let _ = crate::session::save(&config.paths.data_dir, &t);
}

#[cfg(test)]
mod tests;
