//! The full-screen interface (ratatui + crossterm). One front end over the
//! agent: it talks to the session through events and commands, and answers
//! approvals as the `Approver`; nothing in `agent/` depends on it.

// A front end: it owns standard output and error.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod app;
mod attach;
mod cells;
mod composer;
mod custom;
mod dialog;
mod highlight;
mod markdown;
mod mention;
mod replay;
mod session_task;
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

pub use app::{App, Request, Status, UiEvent};

/// How the interface starts: a first prompt, a session to continue, or the
/// list of sessions to pick from.
pub struct Start {
    pub first: Option<String>,
    pub resume: Option<crate::transcript::Loaded>,
    pub pick: bool,
}
pub use cells::Theme;

use crate::config::Config;
use crate::llm::Provider;
use crate::permission::{ApprovalRequest, Approver, Responder};
use crate::wiring::ModelFacts;
use session_task::agent_task;

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
    let (cmd_tx, cmd_rx) = mpsc::unbounded_channel::<Request>();
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
    // The project's files for the `@` picker, listed off the UI thread.
    {
        let (root, rules, tx) = (config.workspace.clone(), config.rule_set(), ui_tx.clone());
        tokio::task::spawn_blocking(move || {
            let files = mention::list(&root, &|p| rules.denies_read(p));
            let _ = tx.send(UiEvent::Files(files));
        });
    }
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
                Request::Editor => {
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
                Request::Quit => {
                    let _ = cmd_tx.send(Request::Quit);
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
    let _ = cmd_tx.send(Request::Quit);
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

#[cfg(test)]
mod tests;
