//! Drawing the [`App`]: the transcript (only what is visible), the
//! composer, the status line, the `/` popup, the session picker and the
//! dialog; and the transcript as plain text for the scrollback.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use super::App;
use crate::tui::cells::{Cached, Theme, UserCell};

impl App {
    pub fn draw(&mut self, f: &mut Frame<'_>, now: Instant) {
        let area = f.area();
        let composer_height = (self.composer.lines().len() as u16).clamp(1, 8) + 2;
        let [transcript, input, status] = Layout::vertical([
            Constraint::Min(1),
            Constraint::Length(composer_height),
            Constraint::Length(1),
        ])
        .areas(area);
        self.draw_transcript(f, transcript);
        let title = if self.working.is_some() {
            " working — Esc interrupts; messages you send now are queued "
        } else {
            " message — Enter sends, /help "
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(self.theme.fg(Color::DarkGray))
            .title(Span::styled(title, self.theme.fg(Color::DarkGray)));
        let (row, col) = self.composer.cursor_position();
        let visible_rows = composer_height.saturating_sub(2) as usize;
        let top = row.saturating_sub(visible_rows.saturating_sub(1));
        f.render_widget(
            Paragraph::new(self.composer.lines())
                .block(block)
                .scroll((top as u16, 0)),
            input,
        );
        if self.dialog.is_none() {
            f.set_cursor_position((input.x + 1 + col as u16, input.y + 1 + (row - top) as u16));
        }
        f.render_widget(Paragraph::new(self.status_line(now)), status);
        self.draw_picker(f, transcript);
        if self.dialog.is_none() && self.picker.is_none() {
            self.draw_slash_popup(f, transcript);
            self.draw_mention_popup(f, transcript);
        }
        if let Some(d) = &self.dialog {
            d.draw(f, transcript, &self.theme, self.approvals.len(), now);
        }
    }

    fn draw_picker(&self, f: &mut Frame<'_>, area: Rect) {
        let Some(p) = &self.picker else { return };
        let shown = p.shown();
        let height = (shown.len() as u16 + 3).min(area.height);
        let rect = Rect {
            x: area.x,
            y: area.y + area.height - height,
            width: area.width,
            height,
        };
        let rows = height.saturating_sub(3) as usize;
        let first = p.selected.saturating_sub(rows.saturating_sub(1));
        let mut lines = vec![Line::from(format!("filter: {}", p.filter))];
        for (i, (_, label)) in shown.iter().enumerate().skip(first).take(rows) {
            let style = if i == p.selected {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
            };
            lines.push(Line::from(Span::styled(label.clone(), style)));
        }
        f.render_widget(ratatui::widgets::Clear, rect);
        f.render_widget(
            Paragraph::new(lines).block(
                Block::default()
                    .borders(Borders::ALL)
                    .title(" resume a session — type to filter, Enter resumes, Esc closes "),
            ),
            rect,
        );
    }

    /// The `/` popup above the composer: matching commands, filtered as
    /// one types; Tab takes the first.
    fn draw_slash_popup(&self, f: &mut Frame<'_>, area: Rect) {
        let matches = self.slash_matches();
        let lines: Vec<Line<'static>> = matches
            .iter()
            .map(|(n, d)| {
                Line::from(vec![
                    Span::styled(
                        format!("{:<16}", n.trim_end()),
                        Style::default().add_modifier(Modifier::BOLD),
                    ),
                    Span::styled(d.clone(), self.theme.fg(Color::DarkGray)),
                ])
            })
            .collect();
        self.draw_popup(f, area, lines, "commands (Tab completes)");
    }

    /// The `@` popup above the composer: the project's files that match
    /// the `@word` being typed, best first; Tab inserts the first.
    fn draw_mention_popup(&self, f: &mut Frame<'_>, area: Rect) {
        let lines: Vec<Line<'static>> = self
            .mention_matches()
            .iter()
            .enumerate()
            .map(|(i, path)| {
                let style = if i == 0 {
                    Style::default().add_modifier(Modifier::BOLD)
                } else {
                    Style::default()
                };
                Line::from(Span::styled(path.clone(), style))
            })
            .collect();
        self.draw_popup(f, area, lines, "files (Tab inserts)");
    }

    /// A list above the composer, at most 8 lines, over the transcript.
    fn draw_popup(&self, f: &mut Frame<'_>, area: Rect, lines: Vec<Line<'static>>, title: &str) {
        if lines.is_empty() || area.height < 4 {
            return;
        }
        let shown = lines.len().min(8).min(area.height as usize - 2);
        let rect = Rect {
            x: area.x,
            y: area.y + area.height - (shown as u16 + 2),
            width: area.width.min(72),
            height: shown as u16 + 2,
        };
        let more = lines.len() - shown;
        let title = if more > 0 {
            format!(" {title} · {more} more ")
        } else {
            format!(" {title} ")
        };
        let lines: Vec<Line<'static>> = lines.into_iter().take(shown).collect();
        f.render_widget(ratatui::widgets::Clear, rect);
        f.render_widget(
            Paragraph::new(lines).block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_style(self.theme.fg(Color::DarkGray))
                    .title(title),
            ),
            rect,
        );
    }

    /// The transcript as plain text at `width`, its last `max` lines: what
    /// is printed into the terminal's scrollback on exit.
    pub fn transcript_text(&self, width: u16, max: usize) -> Vec<String> {
        let plain = Theme { colors: false };
        let mut out: Vec<String> = Vec::new();
        for cell in &self.cells {
            for line in cell.cell.lines(width, &plain) {
                let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
                out.push(text.trim_end().to_string());
            }
        }
        if out.len() > max {
            let cut = out.len() - max;
            out.drain(..cut);
            out.insert(0, format!("… {cut} earlier lines"));
        }
        out
    }

    /// Renders only the cells that are visible, from the bottom up.
    fn draw_transcript(&mut self, f: &mut Frame<'_>, area: Rect) {
        let width = area.width;
        let height = area.height as usize;
        if self.scroll > 0 {
            // Cached per cell, so this is a sum of lengths after the first time.
            let total: usize = self
                .cells
                .iter()
                .map(|c| c.lines(width, &self.theme).len())
                .sum();
            if self.last_total.0 == width && total > self.last_total.1 {
                self.scroll += total - self.last_total.1;
            }
            self.last_total = (width, total);
        } else {
            self.last_total = (0, 0);
        }
        let needed = height + self.scroll;
        let mut chunks: Vec<Vec<Line<'static>>> = Vec::new();
        let mut count = 0;
        // Messages waiting for the turn to end, below everything else.
        for text in self.queued.iter().rev() {
            let cell = UserCell {
                text: text.clone(),
                queued: true,
            };
            let lines = Cached::new(Box::new(cell))
                .lines(width, &self.theme)
                .clone();
            count += lines.len();
            chunks.push(lines);
        }
        for cell in self.cells.iter().rev() {
            let cl = cell.lines(width, &self.theme);
            count += cl.len();
            chunks.push(cl.clone());
            if count >= needed {
                break;
            }
        }
        let lines: Vec<Line<'static>> = chunks.into_iter().rev().flatten().collect();
        let max_scroll = lines.len().saturating_sub(height);
        self.scroll = self.scroll.min(max_scroll);
        let end = lines.len() - self.scroll;
        let start = end.saturating_sub(height);
        let visible: Vec<Line<'static>> = lines[start..end].to_vec();
        f.render_widget(Paragraph::new(visible), area);
    }

    fn status_line(&self, now: Instant) -> Line<'static> {
        let t = &self.theme;
        let k = |n: u64| {
            if n >= 10_000 {
                format!("{:.1}k", n as f64 / 1000.0)
            } else {
                n.to_string()
            }
        };
        // Most important first: a narrow terminal cuts the end.
        let mut spans = vec![Span::styled(
            format!(" {} · {} ", self.status.provider, self.status.model),
            Style::default().add_modifier(Modifier::BOLD),
        )];
        match self.working {
            Some(since) => spans.push(Span::styled(
                format!("working {}s ", now.duration_since(since).as_secs()),
                t.fg(Color::Blue),
            )),
            None => spans.push(Span::styled("ready ", t.fg(Color::Green))),
        }
        if !self.queued.is_empty() {
            spans.push(Span::raw(format!("({} queued) ", self.queued.len())));
        }
        if self.status.yolo {
            spans.push(Span::styled(
                " YOLO ",
                t.fg(Color::Red)
                    .add_modifier(Modifier::BOLD | Modifier::REVERSED),
            ));
            spans.push(Span::raw(" "));
        }
        let u = &self.usage;
        spans.push(Span::raw(format!(
            "↑{} ↓{} ",
            k(u.input_tokens + u.cache_read_tokens + u.cache_write_tokens),
            k(u.output_tokens)
        )));
        if let Some(prices) = self.status.prices {
            spans.push(Span::raw(format!("${:.4} ", prices.cost(u))));
        }
        match self.status.context {
            Some((tokens, Some(window))) => {
                let pct = (tokens * 100 / window.max(1)).min(999);
                let color = if pct >= 80 {
                    Color::Yellow
                } else {
                    Color::DarkGray
                };
                spans.push(Span::styled(format!("context {pct}% "), t.fg(color)));
            }
            Some((tokens, None)) => spans.push(Span::styled(
                format!("context ~{} ", k(tokens)),
                t.fg(Color::DarkGray),
            )),
            None => {}
        }
        for (name, state) in &self.status.servers {
            let (mark, color) = if state == "running" {
                ("✓", Color::Green)
            } else if state.starts_with("failed") {
                ("✗", Color::Red)
            } else {
                ("…", Color::Yellow)
            };
            spans.push(Span::styled(format!("{name} {mark} "), t.fg(color)));
        }
        spans.push(Span::styled(
            format!("· sandbox: {} · {}", self.status.sandbox, self.status.cwd),
            t.fg(Color::DarkGray),
        ));
        if !self.status.session.is_empty() {
            let short: String = self.status.session.chars().take(8).collect();
            spans.push(Span::styled(
                format!(" · session {short}"),
                t.fg(Color::DarkGray),
            ));
        }
        Line::from(spans)
    }
}
