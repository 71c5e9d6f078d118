//! The assistant's Markdown as styled lines: headings, emphasis, lists,
//! links, inline code and fenced code with a visible language label.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Parser, Tag, TagEnd};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

pub fn render(text: &str, colors: bool) -> Vec<Line<'static>> {
    let mut lines: Vec<Line<'static>> = Vec::new();
    let mut current: Vec<Span<'static>> = Vec::new();
    let mut styles: Vec<Style> = vec![Style::default()];
    let mut lists: Vec<Option<u64>> = Vec::new();
    let mut in_code = false;
    let mut links: Vec<String> = Vec::new();
    let color = |c: Color| {
        if colors {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    };
    let flush = |current: &mut Vec<Span<'static>>, lines: &mut Vec<Line<'static>>| {
        lines.push(Line::from(std::mem::take(current)));
    };
    for event in Parser::new(text) {
        let style = *styles.last().unwrap_or(&Style::default());
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                let marks = match level {
                    HeadingLevel::H1 => "# ",
                    HeadingLevel::H2 => "## ",
                    _ => "### ",
                };
                current.push(Span::styled(marks, style.add_modifier(Modifier::BOLD)));
                styles.push(style.add_modifier(Modifier::BOLD));
            }
            Event::End(TagEnd::Heading(_)) => {
                styles.pop();
                flush(&mut current, &mut lines);
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
            Event::Start(Tag::List(start)) => lists.push(start),
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
            Event::End(TagEnd::Item) if !current.is_empty() => flush(&mut current, &mut lines),
            Event::Start(Tag::CodeBlock(kind)) => {
                if !current.is_empty() {
                    flush(&mut current, &mut lines);
                }
                let lang = match kind {
                    CodeBlockKind::Fenced(l) if !l.is_empty() => l.to_string(),
                    _ => "code".to_string(),
                };
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
                for l in t.lines() {
                    lines.push(Line::from(Span::styled(
                        format!("  {l}"),
                        color(Color::Cyan),
                    )));
                }
            }
            Event::Text(t) => current.push(Span::styled(t.to_string(), style)),
            Event::Code(t) => current.push(Span::styled(t.to_string(), color(Color::Yellow))),
            Event::SoftBreak => current.push(Span::raw(" ")),
            Event::HardBreak => flush(&mut current, &mut lines),
            Event::End(TagEnd::Paragraph) => {
                flush(&mut current, &mut lines);
                if lists.is_empty() {
                    lines.push(Line::default());
                }
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
                "# Title",
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
}
