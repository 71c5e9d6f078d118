//! Programs in other languages that a read-only command carries: sed
//! scripts and awk programs. Each scanner accepts only what it can read
//! completely and knows to be inert; anything it does not understand
//! makes the program not inert. Where the scanner and the real program
//! could disagree on where a regex ends, the scanner ends it earlier, so
//! the rest is judged as code (stricter), never skipped.

/// A sed script without `w`/`W` (write a file), `e` (run a command),
/// `r`/`R` (read a file named in the script), nor `s///w` and `s///e`.
pub fn sed_script_inert(script: &str) -> bool {
    let b: Vec<char> = script.chars().collect();
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while *i < b.len() && matches!(b[*i], ' ' | '\t') {
            *i += 1;
        }
    };
    // A regex or text delimited by `delim`, with `\` escapes; returns the
    // index after the closing delimiter.
    let delimited = |mut i: usize, delim: char| -> Option<usize> {
        while i < b.len() {
            match b[i] {
                '\\' => i += 2,
                c if c == delim => return Some(i + 1),
                '\n' if delim != '\n' => return None,
                _ => i += 1,
            }
        }
        None
    };
    loop {
        while i < b.len() && matches!(b[i], ' ' | '\t' | '\n' | ';') {
            i += 1;
        }
        if i >= b.len() {
            return true;
        }
        // Addresses: `N`, `$`, `/re/`, `\cREc`, `first~step`, `addr,+N`.
        for _ in 0..2 {
            skip_ws(&mut i);
            match b.get(i) {
                Some(c) if c.is_ascii_digit() => {
                    while i < b.len() && (b[i].is_ascii_digit() || b[i] == '~') {
                        i += 1;
                    }
                }
                Some('$') => i += 1,
                Some('/') => match delimited(i + 1, '/') {
                    Some(n) => i = n,
                    None => return false,
                },
                Some('\\') => {
                    let Some(&d) = b.get(i + 1) else {
                        return false;
                    };
                    match delimited(i + 2, d) {
                        Some(n) => i = n,
                        None => return false,
                    }
                }
                Some('+' | '~') => {
                    i += 1;
                    while i < b.len() && b[i].is_ascii_digit() {
                        i += 1;
                    }
                }
                _ => {}
            }
            while i < b.len() && matches!(b[i], 'I' | 'M') && b.get(i + 1) != Some(&'\n') {
                // Regex address flags (only right after an address).
                if i > 0 && matches!(b[i - 1], '/' | 'I' | 'M') {
                    i += 1;
                } else {
                    break;
                }
            }
            skip_ws(&mut i);
            if b.get(i) == Some(&',') {
                i += 1;
                continue;
            }
            break;
        }
        skip_ws(&mut i);
        while b.get(i) == Some(&'!') {
            i += 1;
            skip_ws(&mut i);
        }
        let Some(&cmd) = b.get(i) else {
            return false;
        };
        i += 1;
        if cmd == '{' {
            continue;
        }
        match cmd {
            '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z'
            | 'F' => {}
            'l' | 'q' | 'Q' | 'L' => {
                skip_ws(&mut i);
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            // A comment, a label, a branch, text to append: to the end of
            // the line (labels and branches also end at `;`).
            '#' | 'a' | 'i' | 'c' => {
                while i < b.len() && b[i] != '\n' {
                    if b[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            // GNU sed ends a label at whitespace as well.
            ':' | 'b' | 't' | 'T' | 'v' => {
                skip_ws(&mut i);
                while i < b.len() && !matches!(b[i], '\n' | ';' | '}' | ' ' | '\t') {
                    i += 1;
                }
            }
            's' => {
                let Some(&d) = b.get(i) else {
                    return false;
                };
                if d == '\n' || d == '\\' {
                    return false;
                }
                let Some(after_re) = delimited(i + 1, d) else {
                    return false;
                };
                let Some(after) = delimited(after_re, d) else {
                    return false;
                };
                i = after;
                while i < b.len()
                    && (matches!(b[i], 'g' | 'p' | 'i' | 'I' | 'm' | 'M') || b[i].is_ascii_digit())
                {
                    i += 1;
                }
            }
            'y' => {
                let Some(&d) = b.get(i) else {
                    return false;
                };
                let Some(mid) = delimited(i + 1, d) else {
                    return false;
                };
                let Some(after) = delimited(mid, d) else {
                    return false;
                };
                i = after;
            }
            // `e`, `r`, `R`, `w`, `W`, and anything unknown.
            _ => return false,
        }
        skip_ws(&mut i);
        match b.get(i) {
            None => return true,
            Some(';' | '\n' | '}' | '#') => {}
            Some(_) => return false,
        }
    }
}

/// How a scan reads a `/`: awk decides between division and a regex by
/// context, and a wrong guess could hide code inside a "string" or a
/// "regex"; the program is inert only if every reading finds it inert.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slash {
    /// A regex only where division is impossible (no left operand).
    AfterOperators,
    /// awk's own rule: also after `print`, `return`, `in`...
    ByContext,
    /// A regex wherever one could start.
    Always,
}

/// An awk program that cannot run a command (`system`, pipes, `getline`,
/// gawk's `@` indirect calls and `@load`) or write a file (`print >`).
/// Every way of reading its slashes that leaves no string or regex open
/// must find it inert, and the reading by context (awk's own) must be one
/// of those.
pub fn awk_program_inert(program: &str) -> bool {
    // A backslash-newline joins lines (it must not end a statement).
    let program = program.replace("\\\n", " ");
    let by_context = awk_reading(&program, Slash::ByContext);
    by_context == Some(true)
        && [Slash::AfterOperators, Slash::Always]
            .iter()
            .all(|s| awk_reading(&program, *s) != Some(false))
}

/// Where the string or regex opened before `from` closes with `close` on
/// the same line (escapes skipped); `None` if it does not.
fn closing(b: &[char], mut from: usize, close: char) -> Option<usize> {
    while from < b.len() && b[from] != close {
        if b[from] == '\n' {
            return None;
        }
        if b[from] == '\\' {
            from += 1;
        }
        from += 1;
    }
    (from < b.len()).then_some(from)
}

/// One reading: inert, not inert, or `None` when strings or regexes stay
/// open (awk would not read it so).
fn awk_reading(program: &str, slash: Slash) -> Option<bool> {
    let b: Vec<char> = program.chars().collect();
    let mut i = 0;
    let mut code = String::with_capacity(b.len());
    // The previous significant character and word, to tell a regex from
    // a division.
    let mut prev = '\n';
    let mut word = String::new();
    while i < b.len() {
        let c = b[i];
        let no_operand = matches!(
            prev,
            '\n' | '(' | ',' | '{' | '}' | ';' | '!' | '~' | '&' | '|' | '=' | '?' | ':'
        );
        let regex_here = match slash {
            Slash::AfterOperators => no_operand,
            Slash::Always => true,
            Slash::ByContext => {
                no_operand || matches!(word.as_str(), "print" | "printf" | "return" | "in" | "case")
            }
        };
        match c {
            // A string or a regex: its text is data, replaced by an empty one.
            '"' | '/' if c == '"' || regex_here => {
                i = closing(&b, i + 1, c)? + 1;
                code.push(c);
                code.push(c);
                prev = c;
                word.clear();
                continue;
            }
            '#' => {
                while i < b.len() && b[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            _ => {}
        }
        code.push(c);
        if c.is_ascii_alphanumeric() || c == '_' {
            if !(prev.is_ascii_alphanumeric() || prev == '_') {
                word.clear();
            }
            word.push(c);
        } else if !c.is_whitespace() || c == '\n' {
            word.clear();
        }
        if !c.is_whitespace() || c == '\n' {
            prev = c;
        }
        i += 1;
    }
    let words = code
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .collect::<Vec<_>>();
    // `ARGV[1] = "/etc/passwd"` (or `ARGC`) makes awk read another file.
    if words
        .iter()
        .any(|w| matches!(*w, "system" | "getline" | "ARGV" | "ARGC"))
        || code.contains('@')
    {
        return Some(false);
    }
    if code.replace("||", "").contains('|') {
        return Some(false);
    }
    // `>` inside a print statement (outside parentheses) redirects it. A
    // newline after `,`, `&&`, `||` or `(` continues the statement.
    let mut in_print = false;
    let mut depth = 0i32;
    let chars: Vec<char> = code.chars().collect();
    let mut k = 0;
    let mut last = '\n';
    while k < chars.len() {
        let c = chars[k];
        let continues = matches!(last, ',' | '&' | '|' | '(');
        if !c.is_whitespace() {
            last = c;
        }
        if c.is_ascii_alphabetic() {
            let start = k;
            while k < chars.len() && (chars[k].is_ascii_alphanumeric() || chars[k] == '_') {
                k += 1;
            }
            let word: String = chars[start..k].iter().collect();
            if word == "print" || word == "printf" {
                in_print = true;
                depth = 0;
            }
            continue;
        }
        match c {
            ';' | '{' | '}' => in_print = false,
            '\n' if !continues => in_print = false,
            '(' => depth += 1,
            ')' => depth -= 1,
            '>' if in_print && depth <= 0 => return Some(false),
            _ => {}
        }
        k += 1;
    }
    Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sed_scripts() {
        for ok in [
            "s/a/b/g",
            "1,5p",
            "-n",
            "/re/d",
            "$d",
            "s|a/b|c|2",
            "y/abc/xyz/",
            "1~2p;3q",
            "/start/,/end/{s/x/y/;p}",
            "s/\\//x/",
            ":a;N;$!ba;s/\\n/ /g",
            "a hello world",
            "10q",
            "s/x/y/I",
        ]
        .iter()
        .filter(|s| **s != "-n")
        {
            assert!(sed_script_inert(ok), "{ok}");
        }
        for bad in [
            "w out",
            "1w out",
            "s/a/b/w out",
            "s/a/b/gw out",
            "s/a/id/e",
            "e id",
            "1e id",
            "r /etc/passwd",
            "R ~/.ssh/id_rsa",
            "W x",
            "s/a/b/;w x",
            "/x/{w out\n}",
            "s/[/]/x/w out",
            "s/a/b",
            "1!w x",
            ":a w out",
            "b x w out\n:x",
        ] {
            assert!(!sed_script_inert(bad), "{bad}");
        }
    }

    #[test]
    fn awk_programs() {
        for ok in [
            "{print $1}",
            "$3 > 100 {print}",
            "{ if ($1 > 5) print $1 }",
            "/a|b/ {print}",
            "BEGIN{FS=\",\"} {s+=$2} END{print s}",
            "{print \"a > b | c\"}",
            "NR==1 || NR==3",
            "{ x = $1 / 2; print x }",
        ] {
            assert!(awk_program_inert(ok), "{ok}");
        }
        for bad in [
            "BEGIN{print \"a\",\n\"b\" > \"f\"}",
            "BEGIN{print \"a\" &&\n\"b\" > \"f\"}",
            "BEGIN{ARGV[1]=\"/etc/passwd\";ARGC=2}{print}",
            "{system(\"id\")}",
            "{print > \"out\"}",
            "{print $1 > 5}",
            "{printf \"%s\" , $1 >> \"f\"}",
            "{print | \"sh\"}",
            "{\"id\" | getline x}",
            "{getline line < \"/etc/passwd\"}",
            "@load \"x\"",
            "{f=\"system\"; @f(\"id\")}",
            "{print |& \"cat\"}",
            "{ x = a / 2; system(\"id\") }",
            "BEGIN { print /\"/; print 1 > \"out\" }",
            "BEGIN{print \"x\" \\\n> \"out\"}",
        ] {
            assert!(!awk_program_inert(bad), "{bad}");
        }
    }
}
