//! Whether an interpreter one-liner is a known program or could start any
//! program. A language runtime can reach a process API in endless ways
//! (`os.system`, `vars(os)["sys"+"tem"]`, `[].constructor.constructor`),
//! so the test is an allow list: every name the code uses, outside plain
//! string literals, must be on the list for its language. Python and
//! JavaScript have lists (the one-liners models write: `print(1+1)`,
//! `json.load(sys.stdin)`, `console.log(JSON.parse(s).x)`); code in any
//! other language could start any program.

mod names;

use names::{ATTRIBUTES, DATA_NEVER, JS_NAMES, NEVER_BOUND, PYTHON_NAMES};

#[derive(Debug, PartialEq)]
enum Token {
    /// A name, and whether it follows a `.`.
    Name(String, bool),
    Punct(char),
}

/// The tokens of `code` outside plain string literals; `None` when the code
/// has something that reaches names another way (an f-string, a template
/// literal, a non-ASCII name, `@`, `$`, a backslash) or an unclosed string.
fn tokens(code: &str, js: bool) -> Option<Vec<Token>> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut after_dot = false;
    while i < chars.len() {
        let c = chars[i];
        if !c.is_ascii() {
            return None;
        }
        if c == '"' || c == '\'' || c == '`' {
            let prefix: String = chars[..i]
                .iter()
                .rev()
                .take_while(|p| p.is_ascii_alphabetic())
                .collect();
            // f-strings run what is in their braces; template literals
            // their `${…}`; Python has no backtick strings.
            if c == '`' || (!js && prefix.to_ascii_lowercase().contains('f')) {
                return None;
            }
            let triple = !js && chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c);
            i += if triple { 3 } else { 1 };
            loop {
                match chars.get(i) {
                    None => return None,
                    Some('\\') => i += 2,
                    Some(&q) if q == c => {
                        if !triple {
                            i += 1;
                            break;
                        }
                        if chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c) {
                            i += 3;
                            break;
                        }
                        i += 1;
                    }
                    Some('\n') if !triple => return None,
                    Some(_) => i += 1,
                }
            }
            out.push(Token::Punct('"'));
            after_dot = false;
            continue;
        }
        if c == '#' && !js {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let name: String = chars[start..i].iter().collect();
            // Python string prefixes (`b"…"`, `r'…'`) go with the string.
            let quote_next = chars.get(i).is_some_and(|q| *q == '"' || *q == '\'');
            if !(js || !quote_next || name.len() > 2) {
                continue;
            }
            out.push(Token::Name(name, after_dot));
            after_dot = false;
            continue;
        }
        if c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
            out.push(Token::Punct('0'));
            after_dot = false;
            continue;
        }
        if matches!(c, '@' | '\\' | '$') {
            return None;
        }
        if !c.is_whitespace() || (c == '\n' && !js) {
            out.push(Token::Punct(c));
            after_dot = c == '.';
        }
        i += 1;
    }
    Some(out)
}

/// Names the code binds itself: assignment targets, loop variables,
/// parameters, `as` names, functions and classes it defines.
fn bound(tokens: &[Token]) -> Vec<&str> {
    let name = |k: usize| match tokens.get(k) {
        Some(Token::Name(n, false)) => Some(n.as_str()),
        _ => None,
    };
    let punct = |k: usize, c: char| tokens.get(k) == Some(&Token::Punct(c));
    let mut out = Vec::new();
    for k in 0..tokens.len() {
        let Some(n) = name(k) else { continue };
        // `x = …` (not `==`), also keyword arguments.
        if punct(k + 1, '=') && !punct(k + 2, '=') && !punct(k + 2, '>') {
            out.push(n);
        }
        // JS arrow parameters: `x => …`.
        if punct(k + 1, '=') && punct(k + 2, '>') {
            out.push(n);
        }
        match n {
            "def" | "class" | "function" | "as" | "const" | "let" | "var" | "catch" => {
                let mut j = k + 1;
                while j < tokens.len() && !punct(j, ':') && !punct(j, '=') && !punct(j, '{') {
                    if let Some(p) = name(j) {
                        out.push(p);
                    }
                    if punct(j, ')') || (n == "as" && j > k + 1) {
                        break;
                    }
                    j += 1;
                }
            }
            "for" | "lambda" => {
                let mut j = k + 1;
                while j < tokens.len()
                    && name(j) != Some("in")
                    && name(j) != Some("of")
                    && !punct(j, ':')
                {
                    if let Some(p) = name(j) {
                        out.push(p);
                    }
                    j += 1;
                }
            }
            _ => {}
        }
    }
    // JS `(a, b) => …`: the names in the parentheses before `=>`.
    for k in 0..tokens.len() {
        if punct(k, ')') && punct(k + 1, '=') && punct(k + 2, '>') {
            let mut j = k;
            while j > 0 && !punct(j, '(') {
                j -= 1;
                if let Some(p) = name(j) {
                    out.push(p);
                }
            }
        }
    }
    out
}

/// Whether `code` in `lang` uses only names on its list (or names it binds
/// itself) outside plain string literals: then it is a known program that
/// cannot start others.
pub fn inert_code(lang: &str, code: &str) -> bool {
    let (names, js) = if lang.starts_with("python") || lang.starts_with("pypy") {
        (PYTHON_NAMES, false)
    } else if matches!(lang, "node" | "nodejs" | "bun" | "deno") {
        (JS_NAMES, true)
    } else {
        return false;
    };
    let Some(tokens) = tokens(code, js) else {
        return false;
    };
    let own = bound(&tokens);
    let imports = Imports::of(&tokens);
    // JS `x["constructor"]`: a string used as a property name.
    if js
        && tokens
            .windows(2)
            .any(|w| w[0] == Token::Punct('[') && w[1] == Token::Punct('"'))
    {
        return false;
    }
    tokens.iter().enumerate().all(|(k, t)| match t {
        Token::Punct(_) => true,
        Token::Name(n, _) if n.starts_with('_') => false,
        _ if imports.modules.contains(&k) => {
            matches!(t, Token::Name(n, false) if names.contains(&n.as_str()))
        }
        Token::Name(n, _) if imports.attributes.contains(&k) => ATTRIBUTES.contains(&n.as_str()),
        Token::Name(n, true) => {
            // An attribute of a module or builtin must be on the list; one
            // of data (`d.name`, `f(x).a`) must not reach code.
            let of_global = k >= 2
                && matches!(&tokens[k - 2], Token::Name(root, false)
                    if names.contains(&root.as_str()) || imports.aliases.contains(root));
            if of_global {
                ATTRIBUTES.contains(&n.as_str())
            } else {
                !DATA_NEVER.contains(&n.as_str())
            }
        }
        Token::Name(n, false) => {
            names.contains(&n.as_str())
                || (own.contains(&n.as_str()) && !NEVER_BOUND.contains(&n.as_str()))
        }
    })
}

/// Python's import statements: the modules named must be on the list
/// whatever the code binds (`import os as os`), the names taken from them
/// are attributes (`from json import codecs`), and an alias stands for a
/// module.
#[derive(Default)]
struct Imports {
    modules: Vec<usize>,
    attributes: Vec<usize>,
    aliases: Vec<String>,
}

impl Imports {
    fn of(tokens: &[Token]) -> Imports {
        let mut out = Imports::default();
        let name = |k: usize| match tokens.get(k) {
            Some(Token::Name(n, false)) => Some(n.as_str()),
            _ => None,
        };
        let end = |k: usize| matches!(tokens.get(k), None | Some(Token::Punct('\n' | ';')));
        let mut k = 0;
        while k < tokens.len() {
            let from = name(k) == Some("from");
            if !(from || name(k) == Some("import")) {
                k += 1;
                continue;
            }
            k += 1;
            // `from M import …`: M is a module; after `import`, attributes.
            let mut attributes = false;
            let mut first = true;
            while !end(k) {
                match tokens.get(k) {
                    Some(Token::Name(n, _)) if n == "import" => attributes = true,
                    Some(Token::Name(n, _)) if n == "as" => {
                        if let Some(alias) = name(k + 1) {
                            out.aliases.push(alias.to_string());
                        }
                        k += 1;
                    }
                    Some(Token::Name(_, false)) if first || !from || attributes => {
                        if from && attributes {
                            out.attributes.push(k);
                        } else {
                            out.modules.push(k);
                        }
                    }
                    Some(Token::Punct(',')) => first = true,
                    _ => {}
                }
                if matches!(tokens.get(k), Some(Token::Name(..))) {
                    first = false;
                }
                k += 1;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_one_liners_are_known_programs() {
        for (lang, code) in [
            ("python3", "print(1+1)"),
            (
                "python3",
                "import json,sys; print(json.load(sys.stdin)['name'])",
            ),
            ("python", "import re; print(re.sub(r'a', 'b', 'aaa'))"),
            ("python3", "print(sum(int(x) for x in '1 2 3'.split()))"),
            (
                "python3",
                "import json,sys; d=json.load(sys.stdin); print(d['x'])",
            ),
            ("python3", "f = lambda a, b: a + b\nprint(f(1, 2))"),
            ("node", "console.log(1)"),
            ("node", "console.log(JSON.parse('{\"a\":1}').a)"),
            (
                "node",
                "const a = [1,2,3]; console.log(a.map(x => x * 2).join(','))",
            ),
        ] {
            assert!(inert_code(lang, code), "{lang}: {code}");
        }
    }

    #[test]
    fn code_that_could_start_programs_is_not() {
        for (lang, code) in [
            ("python3", "import os; os.system('rm x')"),
            ("python3", "import os; os.posix_spawnp('rm', ['rm'], {})"),
            ("python3", "import os; vars(os)['sys'+'tem']('rm x')"),
            ("python3", "import os; os.__dict__['system']('x')"),
            ("python3", "from os import *; posix_spawn('x', [], {})"),
            ("python3", "__import__('os').system('x')"),
            ("python3", "import runpy; runpy.run_path('x.py')"),
            ("python3", "import sys; sys.modules['os'].system('x')"),
            ("python3", "print(f\"{__import__('os').system('x')}\")"),
            ("python3", "open('secret/a', 'w').write('x')"),
            ("python3", "import pathlib; pathlib.Path.home()"),
            ("python3", "print(().__class__.__bases__)"),
            ("python3", "exec('print(1)')"),
            ("python3", "print(getattr(json, 'loads'))"),
            ("python3", "ｅｘｅｃ('x')"),
            ("python3", "exec('x'); exec = print"),
            ("python3", "import operator; operator.attrgetter('system')"),
            ("python3", "import uuid; uuid.os.system('x')"),
            (
                "python3",
                "j = json; j.codecs.sys.modules['os'].system('x')",
            ),
            (
                "python3",
                "print((x for x in []).gi_frame.f_builtins['exec']('x'))",
            ),
            (
                "node",
                "Buffer.from('x').constructor.constructor('return 1')()",
            ),
            (
                "python3",
                "import os as os; os.execvpe('rm', ['rm', 'x'], {})",
            ),
            (
                "python3",
                "import subprocess as subprocess; subprocess.run('rm x', shell=True)",
            ),
            ("python3", "for os in []: pass\nimport os; os.system('x')"),
            ("python3", "import shutil as shutil; shutil.copy('a', 'b')"),
            ("python3", "from json import codecs; codecs.open('x', 'w')"),
            ("python3", "import json as j; j.decoder.re.enum"),
            ("node", "[]['filter']['constructor']('return 1')()"),
            ("node", "require('child_process').execSync('rm x')"),
            ("node", "module.constructor._load('child_process')"),
            ("node", "[].constructor.constructor('return process')()"),
            ("node", "process.binding('spawn_sync')"),
            ("node", "console.log(`${process.env.HOME}`)"),
            ("node", "globalThis.process.exit()"),
            ("perl", "print 1"),
            ("ruby", "puts 1"),
            ("php", "echo 1;"),
        ] {
            assert!(!inert_code(lang, code), "{lang}: {code}");
        }
    }
}
