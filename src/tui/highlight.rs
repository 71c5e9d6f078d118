//! Syntax highlighting of fenced code, by syntect's grammars (the bundled
//! set, parsed without themes): scopes are mapped to the few colours the
//! interface uses, so it reads the same in every terminal and `NO_COLOR`
//! turns it off. The grammars load once, in the background at start.

use std::sync::OnceLock;

use ratatui::style::{Color, Style};
use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxSet};

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// Loads the grammars ahead of the first code block.
pub fn warm() {
    std::thread::spawn(|| {
        let _ = syntaxes();
    });
}

/// The colour of a scope stack: the innermost scope that has one.
fn color_of(stack: &ScopeStack) -> Option<Color> {
    const MAP: [(&str, Color); 8] = [
        ("comment", Color::DarkGray),
        ("string", Color::Green),
        ("constant.numeric", Color::Magenta),
        ("constant.language", Color::Magenta),
        ("entity.name.function", Color::Yellow),
        ("support.function", Color::Yellow),
        ("keyword", Color::Blue),
        ("storage", Color::Blue),
    ];
    stack.as_slice().iter().rev().find_map(|s: &Scope| {
        let name = s.build_string();
        MAP.iter()
            .find(|(prefix, _)| name.starts_with(prefix))
            .map(|(_, c)| *c)
    })
}

/// Each line of `code` as (style, text) pieces, or `None` when the
/// language is not known (the caller shows it plain).
pub fn highlight(code: &str, lang: &str, base: Style) -> Option<Vec<Vec<(Style, String)>>> {
    let set = syntaxes();
    let syntax = set
        .find_syntax_by_token(lang)
        .or_else(|| set.find_syntax_by_extension(lang))?;
    let mut state = ParseState::new(syntax);
    let mut stack = ScopeStack::new();
    let mut out = Vec::new();
    for line in code.lines() {
        let with_end = format!("{line}\n");
        let ops = state.parse_line(&with_end, set).ok()?;
        let mut pieces: Vec<(Style, String)> = Vec::new();
        let mut at = 0;
        let mut push = |from: usize, to: usize, stack: &ScopeStack| {
            let to = to.min(line.len());
            if from < to {
                let style = color_of(stack).map_or(base, |c| base.fg(c));
                pieces.push((style, line[from..to].to_string()));
            }
        };
        for (i, op) in ops {
            push(at, i, &stack);
            at = at.max(i);
            stack.apply(&op).ok()?;
        }
        push(at, line.len(), &stack);
        out.push(pieces);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_is_coloured_by_scope_and_unknown_languages_are_not() {
        let lines = highlight(
            "fn main() { let s = \"hi\"; } // done",
            "rust",
            Style::default(),
        )
        .unwrap();
        let color = |text: &str| {
            lines[0]
                .iter()
                .find(|(_, t)| t.contains(text))
                .and_then(|(s, _)| s.fg)
        };
        assert_eq!(color("fn"), Some(Color::Blue));
        assert_eq!(color("hi"), Some(Color::Green));
        assert_eq!(color("done"), Some(Color::DarkGray));
        let joined: String = lines[0].iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(joined, "fn main() { let s = \"hi\"; } // done");
        assert!(highlight("x", "no-such-language", Style::default()).is_none());
    }
}
