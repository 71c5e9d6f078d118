//! The assistant's Markdown as styled lines: headings (styled, without
//! their `#`), emphasis, nested lists, block quotes, tables as aligned
//! columns, links, inline code and fenced code with a visible language
//! label.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

pub fn render(text: &str, colors: bool) -> Vec<Line<'static>> {
    let mut lines: Vec<Line<'static>> = Vec::new();
    let mut current: Vec<Span<'static>> = Vec::new();
    let mut styles: Vec<Style> = vec![Style::default()];
    let mut lists: Vec<Option<u64>> = Vec::new();
    let mut in_code = false;
    // The fenced block's language, for highlighting.
    let mut code_lang = String::new();
    let mut links: Vec<String> = Vec::new();
    let color = |c: Color| {
        if colors {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    };
    // Block quotes: each line inside gets a bar per level.
    let mut quotes = 0usize;
    let flush =
        |current: &mut Vec<Span<'static>>, lines: &mut Vec<Line<'static>>, quotes: usize| {
            let mut spans = std::mem::take(current);
            if quotes > 0 {
                spans.insert(
                    0,
                    Span::styled(
                        "│ ".repeat(quotes),
                        Style::default().add_modifier(Modifier::DIM),
                    ),
                );
            }
            lines.push(Line::from(spans));
        };
    // A table's rows (cells as text), laid out when it ends.
    let mut table: Vec<Vec<String>> = Vec::new();
    let mut in_table = false;
    let mut cell = String::new();
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for event in Parser::new_ext(text, options) {
        let style = *styles.last().unwrap_or(&Style::default());
        if in_table {
            match event {
                Event::Text(t) | Event::Code(t) => cell.push_str(&t),
                Event::SoftBreak | Event::HardBreak => cell.push(' '),
                Event::Start(Tag::TableRow | Tag::TableHead) => table.push(Vec::new()),
                Event::End(TagEnd::TableCell) => {
                    if let Some(row) = table.last_mut() {
                        row.push(std::mem::take(&mut cell).trim().to_string());
                    }
                }
                Event::End(TagEnd::Table) => {
                    in_table = false;
                    lines.extend(layout_table(&std::mem::take(&mut table), colors));
                    lines.push(Line::default());
                }
                _ => {}
            }
            continue;
        }
        match event {
            Event::Start(Tag::Table(_)) => {
                if !current.is_empty() {
                    flush(&mut current, &mut lines, quotes);
                }
                in_table = true;
            }
            Event::Start(Tag::BlockQuote(_)) => quotes += 1,
            Event::End(TagEnd::BlockQuote(_)) => quotes = quotes.saturating_sub(1),
            Event::Start(Tag::Heading { level, .. }) => {
                // Styled by level instead of showing the `#` marks.
                let heading = match level {
                    HeadingLevel::H1 => color(Color::Cyan)
                        .add_modifier(Modifier::BOLD)
                        .add_modifier(Modifier::UNDERLINED),
                    HeadingLevel::H2 => color(Color::Cyan).add_modifier(Modifier::BOLD),
                    _ => style.add_modifier(Modifier::BOLD),
                };
                styles.push(heading);
            }
            Event::End(TagEnd::Heading(_)) => {
                styles.pop();
                flush(&mut current, &mut lines, quotes);
            }
            Event::Start(Tag::Emphasis) => styles.push(style.add_modifier(Modifier::ITALIC)),
            Event::Start(Tag::Strong) => styles.push(style.add_modifier(Modifier::BOLD)),
            Event::Start(Tag::Link { dest_url, .. }) => {
                links.push(dest_url.to_string());
                styles.push(style.add_modifier(Modifier::UNDERLINED));
            }
            Event::End(TagEnd::Link) => {
                styles.pop();
                if let Some(url) = links.pop() {
                    current.push(Span::styled(format!(" ({url})"), color(Color::DarkGray)));
                }
            }
            Event::End(TagEnd::Emphasis | TagEnd::Strong) => {
                styles.pop();
            }
            Event::Start(Tag::List(start)) => {
                // A nested list starts below its parent item's text.
                if !current.is_empty() {
                    flush(&mut current, &mut lines, quotes);
                }
                lists.push(start)
            }
            Event::End(TagEnd::List(_)) => {
                lists.pop();
            }
            Event::Start(Tag::Item) => {
                let indent = "  ".repeat(lists.len().saturating_sub(1));
                let bullet = match lists.last_mut() {
                    Some(Some(n)) => {
                        *n += 1;
                        format!("{indent}{}. ", *n - 1)
                    }
                    _ => format!("{indent}• "),
                };
                current.push(Span::raw(bullet));
            }
            Event::End(TagEnd::Item) if !current.is_empty() => {
                flush(&mut current, &mut lines, quotes)
            }
            Event::Start(Tag::CodeBlock(kind)) => {
                if !current.is_empty() {
                    flush(&mut current, &mut lines, quotes);
                }
                let lang = match kind {
                    CodeBlockKind::Fenced(l) if !l.is_empty() => l.to_string(),
                    _ => "code".to_string(),
                };
                code_lang = lang
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_string();
                lines.push(Line::from(Span::styled(
                    format!("─── {lang}"),
                    color(Color::DarkGray).add_modifier(Modifier::DIM),
                )));
                in_code = true;
            }
            Event::End(TagEnd::CodeBlock) => {
                in_code = false;
                lines.push(Line::from(Span::styled(
                    "───",
                    color(Color::DarkGray).add_modifier(Modifier::DIM),
                )));
            }
            Event::Text(t) if in_code => {
                let highlighted = colors
                    .then(|| super::highlight::highlight(&t, &code_lang, Style::default()))
                    .flatten();
                match highlighted {
                    Some(hl) => {
                        for pieces in hl {
                            let mut spans = vec![Span::raw("  ")];
                            spans.extend(pieces.into_iter().map(|(s, t)| Span::styled(t, s)));
                            lines.push(Line::from(spans));
                        }
                    }
                    None => {
                        for l in t.lines() {
                            lines.push(Line::from(Span::styled(
                                format!("  {l}"),
                                color(Color::Cyan),
                            )));
                        }
                    }
                }
            }
            Event::Text(t) => current.push(Span::styled(t.to_string(), style)),
            Event::Code(t) => current.push(Span::styled(t.to_string(), color(Color::Yellow))),
            Event::SoftBreak => current.push(Span::raw(" ")),
            Event::HardBreak => flush(&mut current, &mut lines, quotes),
            Event::End(TagEnd::Paragraph) => {
                flush(&mut current, &mut lines, quotes);
                if lists.is_empty() {
                    lines.push(Line::default());
                }
            }
            Event::Start(Tag::Strikethrough) => {
                styles.push(style.add_modifier(Modifier::CROSSED_OUT))
            }
            Event::End(TagEnd::Strikethrough) => {
                styles.pop();
            }
            Event::Rule => lines.push(Line::from("────────")),
            _ => {}
        }
    }
    if !current.is_empty() {
        lines.push(Line::from(current));
    }
    while lines
        .last()
        .is_some_and(|l| l.spans.iter().all(|s| s.content.trim().is_empty()))
    {
        lines.pop();
    }
    lines
}

/// A table as aligned columns: the header bold, a rule under it.
fn layout_table(rows: &[Vec<String>], colors: bool) -> Vec<Line<'static>> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|t| t.width())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let text = (0..columns)
            .map(|c| {
                let t = row.get(c).map(String::as_str).unwrap_or("");
                format!("{t}{}", " ".repeat(widths[c].saturating_sub(t.width())))
            })
            .collect::<Vec<_>>()
            .join("  ");
        let style = if i == 0 {
            Style::default().add_modifier(Modifier::BOLD)
        } else {
            Style::default()
        };
        out.push(Line::from(Span::styled(text.trim_end().to_string(), style)));
        if i == 0 {
            let rule = widths
                .iter()
                .map(|w| "─".repeat(*w))
                .collect::<Vec<_>>()
                .join("  ");
            let dim = if colors {
                Style::default().fg(Color::DarkGray)
            } else {
                Style::default()
            };
            out.push(Line::from(Span::styled(rule, dim)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str) -> Vec<String> {
        render(text, false)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn headings_lists_and_code() {
        assert_eq!(
            plain(
                "# Title\n\nSome *text* with `code`.\n\n- one\n- two\n\n```rust\nfn main() {}\n```\n"
            ),
            vec![
                "Title",
                "Some text with code.",
                "",
                "• one",
                "• two",
                "─── rust",
                "  fn main() {}",
                "───"
            ]
        );
        assert_eq!(plain("1. a\n2. b"), vec!["1. a", "2. b"]);
    }

    #[test]
    fn tables_quotes_and_nested_lists() {
        assert_eq!(
            plain("| name | size |\n|---|---:|\n| a.rs | 10 |\n| longer.rs | 2000 |\n"),
            vec![
                "name       size",
                "─────────  ────",
                "a.rs       10",
                "longer.rs  2000"
            ]
        );
        assert_eq!(plain("> quoted\n> text"), vec!["│ quoted text"]);
        assert_eq!(
            plain("- one\n  - inner\n- two"),
            vec!["• one", "  • inner", "• two"]
        );
        assert_eq!(plain("## Section"), vec!["Section"]);
    }
}
