//! Word-level shell rules the parser and the analysis share: quote removal,
//! `$'...'` escapes, and the two expansions bash performs on unquoted text
//! that change which paths a word names: braces (`{a,b}`, `{1..3}`) and
//! globs (`*`, `?`, `[...]`).
//!
//! A word's *pattern* is its text with every quoted character escaped by a
//! backslash, so only the metacharacters bash would act on stay active.

/// Brace expansion stops here: more alternatives than this is not a path
/// anyone names by hand, and the analysis treats the word as unknown.
pub const MAX_BRACE_WORDS: usize = 256;

/// Removes backslash escapes of an unquoted word (`\rm` → `rm`).
pub fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(n) => out.push(n),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Inside double quotes only `\$ \` \" \\` and newline are escapes.
pub fn unescape_double(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && matches!(chars.peek(), Some('$' | '`' | '"' | '\\' | '\n')) {
            if let Some(n) = chars.next()
                && n != '\n'
            {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The escapes of `$'...'`.
pub fn ansi_c(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else { break };
        let radix_digits = |chars: &mut std::iter::Peekable<std::str::Chars>, radix, max| {
            let mut v = String::new();
            while v.len() < max
                && let Some(d) = chars.peek().filter(|d| d.is_digit(radix))
            {
                v.push(*d);
                chars.next();
            }
            u32::from_str_radix(&v, radix).ok().and_then(char::from_u32)
        };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'e' | 'E' => out.push('\u{1b}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            'x' => out.extend(radix_digits(&mut chars, 16, 2)),
            'u' => out.extend(radix_digits(&mut chars, 16, 4)),
            'U' => out.extend(radix_digits(&mut chars, 16, 8)),
            '0'..='7' => {
                let mut v = e.to_string();
                while v.len() < 3
                    && let Some(d) = chars.peek().filter(|d| d.is_digit(8))
                {
                    v.push(*d);
                    chars.next();
                }
                out.extend(u32::from_str_radix(&v, 8).ok().and_then(char::from_u32));
            }
            'c' => {
                if let Some(x) = chars.next() {
                    out.extend(char::from_u32(x as u32 & 0x1f));
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// `text` as a pattern in which nothing is active (it was quoted).
pub fn escape_all(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | ',' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Characters of a pattern with whether each is escaped (inactive).
fn chars(pattern: &str) -> Vec<(char, bool)> {
    let mut out = Vec::with_capacity(pattern.len());
    let mut it = pattern.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            if let Some(n) = it.next() {
                out.push((n, true));
            }
        } else {
            out.push((c, false));
        }
    }
    out
}

fn render(chars: &[(char, bool)]) -> String {
    let mut out = String::with_capacity(chars.len());
    for &(c, escaped) in chars {
        if escaped {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Unquoted `*`, `?` or `[` that makes bash match file names.
pub fn has_glob(pattern: &str) -> bool {
    chars(pattern)
        .iter()
        .any(|&(c, esc)| !esc && matches!(c, '*' | '?' | '['))
}

/// Whether bash would expand braces in this pattern.
pub fn has_brace(pattern: &str) -> bool {
    let cs = chars(pattern);
    first_brace(&cs).is_some()
}

/// The first brace expression `{...}` with a top-level `,` or `..`:
/// (open, close, positions of the top-level commas).
fn first_brace(cs: &[(char, bool)]) -> Option<(usize, usize, Vec<usize>)> {
    for open in 0..cs.len() {
        if cs[open] != ('{', false) {
            continue;
        }
        let mut depth = 0;
        let mut commas = Vec::new();
        for (i, &(c, esc)) in cs.iter().enumerate().skip(open + 1) {
            if esc {
                continue;
            }
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    let inner: String = cs[open + 1..i].iter().map(|(c, _)| *c).collect();
                    if !commas.is_empty() || sequence_shape(&inner) {
                        return Some((open, i, commas));
                    }
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => commas.push(i),
                _ => {}
            }
        }
    }
    None
}

/// `1..5`, `a..e`, `1..10..2`: a sequence bash expands, whatever its size.
fn sequence_shape(inner: &str) -> bool {
    let parts: Vec<&str> = inner.split("..").collect();
    let number = |s: &str| {
        s.trim_start_matches(['-', '+'])
            .chars()
            .all(|c| c.is_ascii_digit())
            && !s.is_empty()
    };
    let letter = |s: &str| s.chars().count() == 1 && s.chars().all(|c| c.is_ascii_alphabetic());
    match parts.as_slice() {
        [a, b] => (number(a) && number(b)) || (letter(a) && letter(b)),
        [a, b, step] => number(step) && ((number(a) && number(b)) || (letter(a) && letter(b))),
        _ => false,
    }
}

/// `{1..5}`, `{a..e}`, `{1..10..2}` as its words.
fn sequence(inner: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = inner.split("..").collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    let step: i64 = match parts.get(2) {
        Some(s) => s.parse::<i64>().ok()?.unsigned_abs().max(1) as i64,
        None => 1,
    };
    let range = |a: i64, b: i64| -> Option<Vec<i64>> {
        let n = (a - b).unsigned_abs() / step as u64 + 1;
        if n > MAX_BRACE_WORDS as u64 {
            return None;
        }
        let dir = if b >= a { step } else { -step };
        Some((0..n as i64).map(|k| a + k * dir).collect())
    };
    if let (Ok(a), Ok(b)) = (parts[0].parse::<i64>(), parts[1].parse::<i64>()) {
        return Some(range(a, b)?.iter().map(i64::to_string).collect());
    }
    let (mut a, mut b) = (parts[0].chars(), parts[1].chars());
    match (a.next(), a.next(), b.next(), b.next()) {
        (Some(x), None, Some(y), None) if x.is_ascii_alphabetic() && y.is_ascii_alphabetic() => {
            Some(
                range(x as i64, y as i64)?
                    .into_iter()
                    .filter_map(|c| char::from_u32(c as u32).map(String::from))
                    .collect(),
            )
        }
        _ => None,
    }
}

/// Brace expansion of a pattern, as bash does it (left to right, nested).
/// `None` when it would yield more than [`MAX_BRACE_WORDS`] words.
pub fn expand_braces(pattern: &str) -> Option<Vec<String>> {
    let mut done = Vec::new();
    let mut todo = vec![chars(pattern)];
    while let Some(cs) = todo.pop() {
        let Some((open, close, commas)) = first_brace(&cs) else {
            done.push(render(&cs));
            if done.len() > MAX_BRACE_WORDS {
                return None;
            }
            continue;
        };
        let (head, tail) = (&cs[..open], &cs[close + 1..]);
        let alternatives: Vec<Vec<(char, bool)>> = if commas.is_empty() {
            let inner: String = cs[open + 1..close].iter().map(|(c, _)| *c).collect();
            sequence(&inner)?
                .into_iter()
                .map(|w| w.chars().map(|c| (c, false)).collect())
                .collect()
        } else {
            let mut bounds = vec![open];
            bounds.extend(&commas);
            bounds.push(close);
            bounds
                .windows(2)
                .map(|w| cs[w[0] + 1..w[1]].to_vec())
                .collect()
        };
        if done.len() + todo.len() + alternatives.len() > MAX_BRACE_WORDS {
            return None;
        }
        for alt in alternatives.into_iter().rev() {
            let mut next = head.to_vec();
            next.extend(alt);
            next.extend_from_slice(tail);
            todo.push(next);
        }
    }
    Some(done)
}

/// The text a pattern stands for once escapes are removed.
pub fn pattern_text(pattern: &str) -> String {
    chars(pattern).into_iter().map(|(c, _)| c).collect()
}

/// The literal directory part of a glob pattern (before the first
/// component with an active metacharacter) and the rest.
pub fn glob_split(pattern: &str) -> (String, String) {
    let mut literal = String::new();
    let mut component = String::new();
    let mut active = false;
    let cs = chars(pattern);
    let mut i = 0;
    while i < cs.len() {
        let (c, esc) = cs[i];
        if c == '/' && !esc {
            if active {
                break;
            }
            literal.push_str(&component);
            literal.push('/');
            component.clear();
        } else {
            if !esc && matches!(c, '*' | '?' | '[') {
                active = true;
            }
            component.push(c);
        }
        i += 1;
    }
    if !active {
        literal.push_str(&component);
        return (literal, String::new());
    }
    let start = i - component.chars().count();
    (literal, render(&cs[start..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces_expand_like_bash() {
        let e = |p: &str| expand_braces(p).unwrap();
        assert_eq!(e("{..,x}/secret"), ["../secret", "x/secret"]);
        assert_eq!(e("a{b,c{d,e}}f"), ["abf", "acdf", "acef"]);
        assert_eq!(e("{1..3}"), ["1", "2", "3"]);
        assert_eq!(e("x{a..c}"), ["xa", "xb", "xc"]);
        assert_eq!(e("{rm,-f,x}"), ["rm", "-f", "x"]);
        assert_eq!(e("{a}"), ["{a}"]);
        assert_eq!(e(r"\{a,b}"), [r"\{a,b}"]);
        assert!(expand_braces("{1..100000}").is_none());
        assert!(expand_braces(&"{a,b}".repeat(12)).is_none());
        assert!(has_brace("{a,b}") && !has_brace(r"\{a,b\}") && !has_brace("{}"));
    }

    #[test]
    fn globs_and_escapes() {
        assert!(has_glob("*.rs") && has_glob("src/?.rs") && has_glob("[ab]"));
        assert!(!has_glob(&escape_all("*.rs")));
        assert_eq!(pattern_text(&escape_all("a*{b}")), "a*{b}");
        assert_eq!(
            glob_split("src/a*/b.rs"),
            ("src/".to_string(), "a*/b.rs".to_string())
        );
        assert_eq!(
            glob_split("src/a.rs"),
            ("src/a.rs".to_string(), String::new())
        );
        assert_eq!(ansi_c(r"r\x6d \101\u00e9\cA"), "rm A\u{e9}\u{1}");
    }
}
