//! Transcript entries. Each kind is its own type behind one [`Cell`]
//! trait: it knows how to turn itself into lines at a width, and caches the
//! result per width so a long transcript scrolls as fast as a short one.

use std::cell::RefCell;
use std::time::Instant;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::{markdown, wrap::wrap};
use crate::tools::Preview;

pub trait Cell: std::any::Any {
    /// The cell's lines, wrapped to `width`.
    fn lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>>;
}

/// Colours, or none (`NO_COLOR`).
#[derive(Debug, Clone, Copy)]
pub struct Theme {
    pub colors: bool,
}

impl Theme {
    pub fn fg(&self, c: Color) -> Style {
        if self.colors {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    }
}

/// A cell plus its wrapped lines for the last width it was drawn at.
pub struct Cached {
    pub cell: Box<dyn Cell>,
    cache: RefCell<Option<(u16, Vec<Line<'static>>)>>,
}

impl Cached {
    pub fn new(cell: Box<dyn Cell>) -> Cached {
        Cached {
            cell,
            cache: RefCell::new(None),
        }
    }

    pub fn invalidate(&self) {
        self.cache.replace(None);
    }

    pub fn lines(&self, width: u16, theme: &Theme) -> std::cell::Ref<'_, Vec<Line<'static>>> {
        let stale = !matches!(&*self.cache.borrow(), Some((w, _)) if *w == width);
        if stale {
            let lines = self.cell.lines(width, theme);
            self.cache.replace(Some((width, lines)));
        }
        std::cell::Ref::map(self.cache.borrow(), |c| {
            c.as_ref()
                .map(|(_, l)| l)
                .unwrap_or_else(|| unreachable!("filled above"))
        })
    }
}

fn wrapped(lines: impl IntoIterator<Item = Line<'static>>, width: u16) -> Vec<Line<'static>> {
    lines
        .into_iter()
        .flat_map(|l| wrap(&l, width as usize))
        .collect()
}

/// Prefixes the first line with `first` and the rest with spaces of its width.
fn gutter(lines: Vec<Line<'static>>, first: Span<'static>) -> Vec<Line<'static>> {
    let pad = " ".repeat(unicode_width::UnicodeWidthStr::width(
        first.content.as_ref(),
    ));
    lines
        .into_iter()
        .enumerate()
        .map(|(i, mut l)| {
            l.spans.insert(
                0,
                if i == 0 {
                    first.clone()
                } else {
                    Span::raw(pad.clone())
                },
            );
            l
        })
        .collect()
}

pub struct UserCell {
    pub text: String,
    pub queued: bool,
}

impl Cell for UserCell {
    fn lines(&self, width: u16, t: &Theme) -> Vec<Line<'static>> {
        let style = t.fg(Color::Cyan).add_modifier(Modifier::BOLD);
        let body = wrapped(
            self.text
                .lines()
                .map(|l| Line::from(Span::styled(l.to_string(), style))),
            width.saturating_sub(2),
        );
        let mut out = gutter(body, Span::styled("› ", style));
        if self.queued {
            out.push(Line::from(Span::styled(
                "  (queued: sent when the current turn ends)",
                t.fg(Color::DarkGray),
            )));
        }
        out.push(Line::default());
        out
    }
}

pub struct AssistantCell {
    pub text: String,
}

impl Cell for AssistantCell {
    fn lines(&self, width: u16, t: &Theme) -> Vec<Line<'static>> {
        let mut out = wrapped(
            markdown::render(&self.text, t.colors),
            width.saturating_sub(2),
        );
        out = gutter(out, Span::raw("  "));
        out.push(Line::default());
        out
    }
}

pub struct ThinkingCell {
    pub text: String,
}

impl Cell for ThinkingCell {
    fn lines(&self, width: u16, t: &Theme) -> Vec<Line<'static>> {
        let last = self
            .text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default();
        let style = t.fg(Color::DarkGray).add_modifier(Modifier::ITALIC);
        wrapped(
            [Line::from(Span::styled(
                format!("  thinking: {last}"),
                style,
            ))],
            width,
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum ToolState {
    WaitingApproval,
    Running(Instant),
    Done,
    Failed,
    Denied,
}

pub struct ToolCell {
    pub name: String,
    pub summary: String,
    pub preview: Preview,
    pub state: ToolState,
    pub output: String,
    pub diff: Option<String>,
    pub expanded: bool,
}

/// Lines of output shown while a cell is collapsed.
const PREVIEW_LINES: usize = 5;

impl Cell for ToolCell {
    fn lines(&self, width: u16, t: &Theme) -> Vec<Line<'static>> {
        let (mark, color, state) = match &self.state {
            ToolState::WaitingApproval => ("?", Color::Yellow, "waiting for approval".to_string()),
            ToolState::Running(since) => (
                "…",
                Color::Blue,
                format!("running {}s", since.elapsed().as_secs()),
            ),
            ToolState::Done => ("✓", Color::Green, String::new()),
            ToolState::Failed => ("✗", Color::Red, "failed".into()),
            ToolState::Denied => ("⊘", Color::Magenta, "denied".into()),
        };
        let mut head = vec![
            Span::styled(format!("{mark} "), t.fg(color).add_modifier(Modifier::BOLD)),
            Span::styled(
                self.name.clone(),
                Style::default().add_modifier(Modifier::BOLD),
            ),
            Span::raw(" "),
            Span::raw(self.summary.lines().next().unwrap_or_default().to_string()),
        ];
        if !state.is_empty() {
            head.push(Span::styled(format!("  ({state})"), t.fg(Color::DarkGray)));
        }
        let mut out = wrapped([Line::from(head)], width);
        let body: Vec<Line<'static>> = match &self.diff {
            Some(diff) => numbered_diff(diff, t),
            None if self.is_task_list() => self.output.lines().map(|l| task_line(l, t)).collect(),
            None if self.preview == Preview::Numbered && t.colors => {
                numbered_code(&self.output, &self.summary, t).unwrap_or_else(|| {
                    self.output
                        .lines()
                        .map(|l| Line::from(Span::styled(l.to_string(), t.fg(Color::Gray))))
                        .collect()
                })
            }
            None => self
                .output
                .lines()
                .map(|l| Line::from(Span::styled(l.to_string(), t.fg(Color::Gray))))
                .collect(),
        };
        let total = body.len();
        // The task list is the plan the person follows: always whole.
        let expanded = self.expanded || self.is_task_list();
        let shown: Vec<Line<'static>> = if expanded || total <= PREVIEW_LINES {
            body
        } else if self.diff.is_none()
            && (self.preview == Preview::Tail || matches!(self.state, ToolState::Running(_)))
        {
            // While it runs, the output is a progress log: its end is news.
            body.into_iter().skip(total - PREVIEW_LINES).collect()
        } else {
            body.into_iter().take(PREVIEW_LINES).collect()
        };
        out.extend(
            wrapped(shown, width.saturating_sub(4))
                .into_iter()
                .map(|mut l| {
                    l.spans
                        .insert(0, Span::styled("  │ ", t.fg(Color::DarkGray)));
                    l
                }),
        );
        if !expanded && total > PREVIEW_LINES {
            out.push(Line::from(Span::styled(
                format!(
                    "    … {} more lines (Ctrl+O expands)",
                    total - PREVIEW_LINES
                ),
                t.fg(Color::DarkGray),
            )));
        }
        out
    }
}

impl ToolCell {
    fn is_task_list(&self) -> bool {
        self.preview == Preview::Checklist && self.state == ToolState::Done
    }
}

/// A file's numbered lines (`N<tab>text`) with the text highlighted by the
/// language of `path`'s extension; `None` when it has no known language.
fn numbered_code(output: &str, path: &str, t: &Theme) -> Option<Vec<Line<'static>>> {
    let ext = std::path::Path::new(path.split_whitespace().next()?)
        .extension()?
        .to_str()?;
    let rows: Vec<(&str, &str)> = output
        .lines()
        .map(|l| l.split_once('\t').unwrap_or(("", l)))
        .collect();
    let code: String = rows.iter().map(|(_, c)| format!("{c}\n")).collect();
    let lit = super::highlight::highlight(&code, ext, Style::default())?;
    Some(
        rows.iter()
            .zip(lit)
            .map(|((num, _), pieces)| {
                let mut spans = vec![Span::styled(format!("{num}\t"), t.fg(Color::DarkGray))];
                spans.extend(pieces.into_iter().map(|(s, text)| Span::styled(text, s)));
                Line::from(spans)
            })
            .collect(),
    )
}

/// One line of a `todos` result: done dimmed and struck through, the task
/// in progress bold.
fn task_line(l: &str, t: &Theme) -> Line<'static> {
    let style = if l.starts_with("  [x]") {
        t.fg(Color::DarkGray).add_modifier(Modifier::CROSSED_OUT)
    } else if l.starts_with("  [>]") {
        t.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    } else {
        t.fg(Color::Gray)
    };
    Line::from(Span::styled(l.to_string(), style))
}

/// Diffs larger than this are not highlighted (a model can write a file of
/// any size; highlighting it would hold up the interface).
const MAX_HIGHLIGHT_BYTES: usize = 256 * 1024;

/// A unified diff with the file's line numbers in a gutter (the new number
/// for added and context lines, the old one for removed lines). The sign
/// and the gutter say red or green; the code is highlighted by the
/// language of the file (`+++ b/<path>`), each side of the change as one
/// text so a construct spanning lines keeps its colour.
fn numbered_diff(diff: &str, t: &Theme) -> Vec<Line<'static>> {
    let ext = diff
        .lines()
        .find_map(|l| l.strip_prefix("+++ "))
        .and_then(|p| std::path::Path::new(p.trim()).extension())
        .and_then(|e| e.to_str())
        .map(str::to_string);
    // The file header is what comes before the first hunk: a removed
    // `-- comment` or an added `++x` is a line of the change.
    let lines: Vec<&str> = diff.lines().skip_while(|l| !l.starts_with("@@")).collect();
    // A change too large to highlight at a frame's pace is drawn plain.
    let mut sides = ext
        .filter(|_| t.colors && diff.len() <= MAX_HIGHLIGHT_BYTES)
        .and_then(|ext| DiffSides::highlight(&lines, &ext));
    let (mut old, mut new) = (0usize, 0usize);
    let mut out = Vec::new();
    for l in lines {
        if let Some(rest) = l.strip_prefix("@@ ") {
            // "@@ -a,b +c,d @@"
            let nums: Vec<usize> = rest
                .split([' ', ',', '-', '+', '@'])
                .filter_map(|n| n.parse().ok())
                .collect();
            old = nums.first().copied().unwrap_or(1);
            new = nums.get(2).copied().unwrap_or(1);
            out.push(Line::from(Span::styled(l.to_string(), t.fg(Color::Cyan))));
            continue;
        }
        let (num, style) = match l.chars().next() {
            Some('+') => {
                new += 1;
                (new - 1, t.fg(Color::Green))
            }
            Some('-') => {
                old += 1;
                (old - 1, t.fg(Color::Red))
            }
            _ => {
                old += 1;
                new += 1;
                (new - 1, Style::default())
            }
        };
        let gutter = Span::styled(format!("{num:>4} "), t.fg(Color::DarkGray));
        match sides.as_mut().and_then(|s| s.next(l)) {
            Some(pieces) => {
                let (sign, _) = l.split_at(l.chars().next().map_or(0, char::len_utf8));
                let mut spans = vec![gutter, Span::styled(sign.to_string(), style)];
                spans.extend(pieces.into_iter().map(|(s, text)| Span::styled(text, s)));
                out.push(Line::from(spans));
            }
            None => out.push(Line::from(vec![gutter, Span::styled(l.to_string(), style)])),
        }
    }
    out
}

/// The two sides of a diff (context and removed lines; context and added
/// lines), each highlighted as one text, handed out line by line.
struct DiffSides {
    old: std::vec::IntoIter<Vec<(Style, String)>>,
    new: std::vec::IntoIter<Vec<(Style, String)>>,
}

impl DiffSides {
    fn highlight(lines: &[&str], ext: &str) -> Option<DiffSides> {
        let side = |keep: char| -> String {
            lines
                .iter()
                .filter(|l| l.starts_with(' ') || l.starts_with(keep))
                .map(|l| format!("{}\n", &l[1..]))
                .collect()
        };
        let lit = |text: String| super::highlight::highlight(&text, ext, Style::default());
        Some(DiffSides {
            old: lit(side('-'))?.into_iter(),
            new: lit(side('+'))?.into_iter(),
        })
    }

    /// The highlighted text of diff line `l` (without its sign).
    fn next(&mut self, l: &str) -> Option<Vec<(Style, String)>> {
        match l.chars().next()? {
            '+' => self.new.next(),
            '-' => self.old.next(),
            ' ' => {
                self.old.next();
                self.new.next()
            }
            _ => None,
        }
    }
}

/// The first screen: what this agent is, where, under which rules, and
/// what to type first.
pub struct WelcomeCell {
    pub title: String,
    pub cwd: String,
    pub instructions: Vec<String>,
    pub sandbox: String,
    pub trusted: bool,
    pub yolo: bool,
}

impl Cell for WelcomeCell {
    fn lines(&self, width: u16, t: &Theme) -> Vec<Line<'static>> {
        let dim = t.fg(Color::DarkGray);
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let instructions = if self.instructions.is_empty() {
            "no AGENTS.md here (/init writes one)".to_string()
        } else {
            self.instructions.join(" · ")
        };
        let trust = if self.trusted {
            "project trusted"
        } else {
            "project not trusted: its hooks, servers and allow rules are off"
        };
        let mode = if self.yolo {
            " · --yolo: calls run without asking"
        } else {
            ""
        };
        let rows = vec![
            Line::from(Span::styled(self.title.clone(), bold)),
            Line::from(Span::raw(self.cwd.clone())),
            Line::from(vec![
                Span::styled("instructions: ", dim),
                Span::raw(instructions),
            ]),
            Line::from(vec![
                Span::styled("sandbox: ", dim),
                Span::raw(format!("{} · {trust}{mode}", self.sandbox)),
            ]),
            Line::from(Span::styled(
                "/help for commands · @ mentions a file · !cmd runs a command yourself · Ctrl+G edits in $EDITOR · Esc interrupts",
                dim,
            )),
        ];
        let mut out = gutter(
            wrapped(rows, width.saturating_sub(2)),
            Span::styled("▌ ", t.fg(Color::Cyan)),
        );
        out.push(Line::default());
        out
    }
}

pub struct NoticeCell {
    pub text: String,
    pub error: bool,
}

impl Cell for NoticeCell {
    fn lines(&self, width: u16, t: &Theme) -> Vec<Line<'static>> {
        let style = if self.error {
            t.fg(Color::Red).add_modifier(Modifier::BOLD)
        } else {
            t.fg(Color::DarkGray)
        };
        let mark = if self.error { "! " } else { "· " };
        let mut out = gutter(
            wrapped(
                self.text
                    .lines()
                    .map(|l| Line::from(Span::styled(l.to_string(), style))),
                width.saturating_sub(2),
            ),
            Span::styled(mark, style),
        );
        out.push(Line::default());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_is_highlighted_by_its_files_language_and_keeps_its_signs() {
        let diff = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,2 +1,2 @@\n /* a comment\n-   still */ let x = 1;\n+   still */ fn y() {}\n";
        let colors = Theme { colors: true };
        let lines = numbered_diff(diff, &colors);
        let text = |l: &Line<'_>| {
            l.spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>()
        };
        assert_eq!(text(&lines[0]), "@@ -1,2 +1,2 @@");
        assert_eq!(text(&lines[1]), "   1  /* a comment");
        assert_eq!(text(&lines[2]), "   2 -   still */ let x = 1;");
        assert_eq!(text(&lines[3]), "   2 +   still */ fn y() {}");
        let fg = |l: &Line<'_>, piece: &str| {
            l.spans
                .iter()
                .find(|s| s.content.contains(piece))
                .and_then(|s| s.style.fg)
        };
        // The signs stay red and green; the code takes the language's colours,
        // and a comment opened on a context line goes on over both sides.
        assert_eq!(fg(&lines[2], "-"), Some(Color::Red));
        assert_eq!(fg(&lines[3], "+"), Some(Color::Green));
        assert_eq!(fg(&lines[3], "still"), Some(Color::DarkGray));
        assert_eq!(fg(&lines[2], "still"), Some(Color::DarkGray));
        assert_eq!(fg(&lines[3], "fn"), Some(Color::Blue));
        assert_eq!(fg(&lines[2], "let"), Some(Color::Blue));
        // Without colours, or for a file of no known language: plain lines.
        let plain = numbered_diff(diff, &Theme { colors: false });
        assert!(
            plain
                .iter()
                .all(|l| l.spans.iter().all(|s| s.style.fg.is_none()))
        );
        let unknown = numbered_diff(&diff.replace("lib.rs", "notes.zz"), &colors);
        assert_eq!(unknown[3].spans.len(), 2, "{:?}", unknown[3]);
        assert_eq!(text(&unknown[3]), "   2 +   still */ fn y() {}");
        // Too large to highlight at a frame's pace: plain.
        let big = format!("{diff}{}", "+let x = 1;\n".repeat(30_000));
        let lines = numbered_diff(&big, &colors);
        assert_eq!(lines.len(), 4 + 30_000);
        assert_eq!(lines[3].spans.len(), 2, "{:?}", lines[3]);
    }

    #[test]
    fn lines_that_look_like_a_diff_header_inside_a_hunk_are_kept() {
        let diff = "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,2 @@\n--- a comment\n+++x\n keep\n";
        let lines = numbered_diff(diff, &Theme { colors: false });
        let text: Vec<String> = lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        assert_eq!(
            text,
            [
                "@@ -1,2 +1,2 @@",
                "   1 --- a comment",
                "   1 +++x",
                "   2  keep"
            ]
        );
    }
}
