//! Word wrapping of styled lines to a width, by display width.

use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

/// A finished line, without the space it broke at.
fn finish(mut spans: Vec<Span<'static>>, line: &Line<'static>) -> Line<'static> {
    if let Some(last) = spans.last_mut() {
        let trimmed = last.content.trim_end().to_string();
        last.content = trimmed.into();
    }
    Line::from(spans).style(line.style)
}

/// Columns between tab stops when a tab is drawn (a terminal draws none:
/// it would vanish, and `view`'s line numbers would run into the text).
const TAB: usize = 4;

/// `line` with each tab turned into the spaces that reach the next stop,
/// counted across its spans.
fn expand_tabs(line: &Line<'static>) -> Line<'static> {
    if !line.spans.iter().any(|s| s.content.contains('\t')) {
        return line.clone();
    }
    let mut column = 0usize;
    let spans = line
        .spans
        .iter()
        .map(|s| {
            let mut text = String::with_capacity(s.content.len());
            for c in s.content.chars() {
                if c == '\t' {
                    let n = TAB - column % TAB;
                    text.extend(std::iter::repeat_n(' ', n));
                    column += n;
                } else {
                    text.push(c);
                    column += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
                }
            }
            Span::styled(text, s.style)
        })
        .collect::<Vec<_>>();
    Line::from(spans).style(line.style)
}

/// Wraps `line` to `width` columns; words longer than a line are split;
/// tabs become spaces to the next stop.
pub fn wrap(line: &Line<'static>, width: usize) -> Vec<Line<'static>> {
    let line = &expand_tabs(line);
    let width = width.max(1);
    let mut out: Vec<Line<'static>> = Vec::new();
    let mut current: Vec<Span<'static>> = Vec::new();
    let mut used = 0usize;
    for span in &line.spans {
        for word in span.content.split_inclusive(' ') {
            let mut word = word.to_string();
            loop {
                let w = word.width();
                if used + w <= width {
                    used += w;
                    current.push(Span::styled(word, span.style));
                    break;
                }
                // Trailing spaces may hang past the edge.
                if used + word.trim_end().width() <= width {
                    used = width;
                    current.push(Span::styled(word.trim_end().to_string(), span.style));
                    break;
                }
                if used > 0 && w <= width {
                    out.push(finish(std::mem::take(&mut current), line));
                    used = 0;
                    continue;
                }
                // Hard split a word wider than the remaining space.
                let room = width - used;
                let mut cut = 0;
                let mut taken = 0;
                for (i, c) in word.char_indices() {
                    let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
                    if taken + cw > room {
                        break;
                    }
                    taken += cw;
                    cut = i + c.len_utf8();
                }
                if cut == 0 {
                    out.push(finish(std::mem::take(&mut current), line));
                    used = 0;
                    continue;
                }
                current.push(Span::styled(word[..cut].to_string(), span.style));
                out.push(finish(std::mem::take(&mut current), line));
                used = 0;
                word = word[cut..].to_string();
                if word.is_empty() {
                    break;
                }
            }
        }
    }
    if !current.is_empty() || out.is_empty() {
        out.push(Line::from(current).style(line.style));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn wraps_words_and_splits_long_ones() {
        let l = Line::from("the quick brown fox jumps");
        assert_eq!(
            texts(&wrap(&l, 10)),
            vec!["the quick", "brown fox", "jumps"]
        );
        let l = Line::from("abcdefghijkl xy");
        assert_eq!(texts(&wrap(&l, 5)), vec!["abcde", "fghij", "kl xy"]);
        assert_eq!(texts(&wrap(&Line::from(""), 5)), vec![""]);
        assert_eq!(
            texts(&wrap(&Line::from("世界世界世界"), 4)),
            vec!["世界", "世界", "世界"]
        );
    }
}
