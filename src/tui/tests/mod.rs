//! Tests of the TUI through its [`App`]: what it draws (ratatui's
//! TestBackend, insta snapshots) and what keys do. The fixtures are here;
//! the tests are in `transcript` (cells, the status line, scrolling),
//! `dialog` (the approval dialog) and `keys` (the composer, `/` commands,
//! the session picker).

mod dialog;
mod keys;
mod transcript;

use std::time::Instant;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::app::{App, Status, UiEvent};
use super::cells::Theme;
use crate::agent::AgentEvent;

fn app() -> App {
    App::new(
        Status {
            provider: "anthropic".into(),
            model: "claude-x".into(),
            prices: Some(crate::llm::Prices {
                input: 3.0,
                output: 15.0,
                cache_read: 0.3,
                cache_write: 3.75,
            }),
            context: None,
            session: String::new(),
            servers: Vec::new(),
            yolo: false,
            sandbox: "workspace-write".into(),
            cwd: "~/proj".into(),
        },
        Theme { colors: false },
    )
}

fn screen(app: &mut App, width: u16, height: u16, now: Instant) -> String {
    let mut t = Terminal::new(TestBackend::new(width, height)).unwrap();
    t.draw(|f| app.draw(f, now)).unwrap();
    t.backend().to_string()
}

fn ev(app: &mut App, e: AgentEvent) {
    app.apply(UiEvent::Agent(e));
}

fn key(c: char) -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

fn code(c: KeyCode) -> Event {
    Event::Key(KeyEvent::new(c, KeyModifiers::NONE))
}
