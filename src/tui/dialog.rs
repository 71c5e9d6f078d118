//! The approval dialog: one request at a time, over the transcript. Keys
//! are ignored for a short grace period after it opens and while a typing
//! burst goes on, so text meant for the composer can never approve anything.

use std::time::{Duration, Instant};

use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::cells::Theme;
use super::wrap::wrap;
use crate::permission::{Answer, ApprovalRequest, Choice, Responder, Risk};

/// Keys are ignored this long after the dialog opens.
pub const GRACE: Duration = Duration::from_millis(500);
/// Keys closer together than this are a typing burst, not a decision.
pub const BURST: Duration = Duration::from_millis(150);

pub struct Dialog {
    pub request: ApprovalRequest,
    responder: Option<Responder>,
    opened: Instant,
    /// Set once a key came in after the burst ended and the grace passed.
    last_key: Option<Instant>,
    /// Typing a reason for a denial.
    pub reason: Option<String>,
    pub scroll: u16,
}

pub enum Outcome {
    /// Still open.
    Open,
    /// Answered; closed.
    Closed,
}

impl Dialog {
    pub fn new(
        request: ApprovalRequest,
        responder: Responder,
        last_key: Option<Instant>,
    ) -> Dialog {
        Dialog {
            request,
            responder: Some(responder),
            opened: Instant::now(),
            last_key,
            reason: None,
            scroll: 0,
        }
    }

    /// Whether keys are live yet (for drawing the key hints).
    pub fn armed(&self, now: Instant) -> bool {
        now.duration_since(self.opened) >= GRACE
            && self.last_key.is_none_or(|k| now.duration_since(k) >= BURST)
    }

    fn answer(&mut self, a: Answer) -> Outcome {
        if let Some(r) = self.responder.take() {
            r.answer(a);
        }
        Outcome::Closed
    }

    pub fn on_key(&mut self, key: crossterm::event::KeyEvent, now: Instant) -> Outcome {
        use crossterm::event::KeyCode;
        let armed = self.armed(now);
        self.last_key = Some(now);
        if let Some(reason) = &mut self.reason {
            match key.code {
                KeyCode::Enter => {
                    let r = std::mem::take(reason);
                    return self.answer(Answer::Deny { reason: Some(r) });
                }
                KeyCode::Esc => return self.answer(Answer::Deny { reason: None }),
                KeyCode::Backspace => {
                    reason.pop();
                }
                KeyCode::Char(c) => reason.push(c),
                _ => {}
            }
            return Outcome::Open;
        }
        match key.code {
            KeyCode::Up => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::Down => self.scroll = self.scroll.saturating_add(1),
            _ if !armed => {}
            KeyCode::Char('y') => return self.answer(Answer::AllowOnce),
            KeyCode::Char('a') if self.request.choices.contains(&Choice::Session) => {
                return self.answer(Answer::AllowSession);
            }
            KeyCode::Char('p') if self.request.choices.contains(&Choice::Always) => {
                return self.answer(Answer::AllowAlways);
            }
            KeyCode::Char('n') => self.reason = Some(String::new()),
            _ => {}
        }
        Outcome::Open
    }

    pub fn draw(
        &self,
        f: &mut ratatui::Frame<'_>,
        area: Rect,
        theme: &Theme,
        waiting: usize,
        now: Instant,
    ) {
        let r = &self.request;
        let width = area.width.saturating_sub(4).clamp(20, 100);
        let inner = width.saturating_sub(2) as usize;
        let risk_color = match r.risk.level {
            Risk::Low => Color::Green,
            Risk::Medium => Color::Yellow,
            Risk::High => Color::Red,
        };
        let wrapped = |l: Line<'static>| wrap(&l, inner);
        // The head: what is asked, its risk, what a session grant covers.
        let mut head: Vec<Line<'static>> = wrapped(Line::from(vec![Span::styled(
            r.description.clone(),
            Style::default().add_modifier(Modifier::BOLD),
        )]));
        head.extend(wrapped(Line::from(vec![
            Span::raw("risk: "),
            Span::styled(
                r.risk.level.to_string(),
                theme.fg(risk_color).add_modifier(Modifier::BOLD),
            ),
            Span::raw(format!(" ({})", r.risk.reason)),
        ])));
        if r.choices.contains(&Choice::Session) {
            head.extend(wrapped(Line::from(Span::styled(
                format!("for this session: {}", r.scope),
                theme.fg(Color::DarkGray),
            ))));
        }
        let diff: Vec<Line<'static>> = r
            .diff
            .iter()
            .flat_map(|d| d.lines())
            .filter(|l| !l.starts_with("---") && !l.starts_with("+++"))
            .skip(self.scroll as usize)
            .take(12)
            .flat_map(|l| {
                let style = match l.chars().next() {
                    Some('+') => theme.fg(Color::Green),
                    Some('-') => theme.fg(Color::Red),
                    Some('@') => theme.fg(Color::Cyan),
                    _ => Style::default(),
                };
                wrapped(Line::from(Span::styled(l.to_string(), style)))
            })
            .collect();
        let keys = match (&self.reason, self.armed(now)) {
            (Some(reason), _) => {
                format!("reason for denying (Enter sends, Esc sends none): {reason}▏")
            }
            (None, false) => "…".to_string(),
            (None, true) => r
                .choices
                .iter()
                .map(|c| match c {
                    Choice::Once => "[y] allow once",
                    Choice::Session => "[a] allow for this session",
                    Choice::Always => "[p] always (project config)",
                    Choice::Deny => "[n] deny",
                })
                .collect::<Vec<_>>()
                .join("   "),
        };
        let mut tail: Vec<Line<'static>> = wrapped(Line::from(Span::styled(
            keys,
            Style::default().add_modifier(Modifier::BOLD),
        )));
        if waiting > 0 {
            tail.extend(wrapped(Line::from(Span::styled(
                format!("{waiting} more waiting"),
                theme.fg(Color::DarkGray),
            ))));
        }
        // The keys always show, then the head's first line; the diff takes
        // what room is left and says how much it leaves out.
        let room = area.height.saturating_sub(2) as usize;
        let for_head = room.saturating_sub(tail.len()).max(1).min(head.len());
        let mut lines: Vec<Line<'static>> = head.into_iter().take(for_head).collect();
        let left = room.saturating_sub(tail.len() + lines.len());
        if !diff.is_empty() && left >= 3 {
            let shown = diff.len().min(left - 2);
            lines.push(Line::default());
            lines.extend(diff.iter().take(shown).cloned());
            if shown < diff.len() {
                lines.push(Line::from(Span::styled(
                    format!("… {} more lines (↑/↓ scroll)", diff.len() - shown),
                    theme.fg(Color::DarkGray),
                )));
            }
        }
        if room > lines.len() + tail.len() {
            lines.push(Line::default());
        }
        lines.extend(tail);
        let height = (lines.len() as u16 + 2).min(area.height);
        let rect = Rect {
            x: area.x + (area.width.saturating_sub(width)) / 2,
            y: area.y + area.height.saturating_sub(height) / 2,
            width: width.min(area.width),
            height,
        };
        f.render_widget(Clear, rect);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.fg(risk_color))
            .title(Span::styled(
                format!(" Allow {}? ", r.tool),
                Style::default().add_modifier(Modifier::BOLD),
            ));
        f.render_widget(Paragraph::new(lines).block(block), rect);
    }
}
