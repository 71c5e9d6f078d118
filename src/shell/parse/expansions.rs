//! Words: quote removal, expansions, and what bash evaluates inside them
//! (arithmetic, subscripts, `[[ ]]` comparisons).

use tree_sitter::Node;

use super::{
    ARITHMETIC_TESTS, Evaluation, IFS, SimpleCommand, Walker, Word, is_word_kind, named_children,
};
use crate::shell::words::{ansi_c, escape_all, unescape, unescape_double};

impl Walker<'_> {
    /// A word after quote removal; substitutions inside are walked as commands.
    pub(super) fn word(&mut self, node: Node<'_>) -> Word {
        let unread = |w: &Self| Word {
            dynamic: true,
            ..Word::literal(&w.text(node))
        };
        self.nested(unread, |w| w.word_at(node))
    }

    fn word_at(&mut self, node: Node<'_>) -> Word {
        match node.kind() {
            "word" => {
                let raw = self.text(node);
                Word {
                    text: unescape(&raw),
                    dynamic: false,
                    pattern: raw,
                }
            }
            "number" => Word::literal(&self.text(node)),
            "command_name" => match node.named_child(0) {
                Some(inner) => self.word(inner),
                None => Word::literal(&self.text(node)),
            },
            "raw_string" => {
                let t = self.text(node);
                let inner = t
                    .strip_prefix('\'')
                    .and_then(|s| s.strip_suffix('\''))
                    .unwrap_or(&t);
                Word::literal(inner)
            }
            "ansi_c_string" => {
                let t = self.text(node);
                let inner = t
                    .strip_prefix("$'")
                    .and_then(|s| s.strip_suffix('\''))
                    .unwrap_or(&t);
                Word::literal(&ansi_c(inner))
            }
            "string" | "translated_string" => {
                let mut out = Word::default();
                let mut cursor = node.walk();
                let children: Vec<Node> = node.children(&mut cursor).collect();
                for c in children {
                    let part = match c.kind() {
                        "string_content" => Word::literal(&unescape_double(&self.text(c))),
                        "\"" | "$\"" => continue,
                        _ if !c.is_named() => Word::literal(&self.text(c)),
                        _ => self.word(c),
                    };
                    out.text.push_str(&part.text);
                    out.dynamic |= part.dynamic;
                }
                // Nothing inside double quotes is a glob or a brace.
                out.pattern = escape_all(&out.text);
                out
            }
            "concatenation" => {
                let mut out = Word::default();
                let mut cursor = node.walk();
                let children: Vec<Node> = node.children(&mut cursor).collect();
                for c in children {
                    let part = if c.is_named() {
                        self.word(c)
                    } else {
                        let raw = self.text(c);
                        Word {
                            text: raw.clone(),
                            dynamic: false,
                            pattern: raw,
                        }
                    };
                    out.text.push_str(&part.text);
                    out.pattern.push_str(&part.pattern);
                    out.dynamic |= part.dynamic;
                }
                out
            }
            "simple_expansion" | "expansion" => self.expansion(node),
            "command_substitution" | "process_substitution" => {
                let children = named_children(node);
                // `$(<file)` reads the file.
                if !children.is_empty() && children.iter().all(|c| c.kind() == "file_redirect") {
                    let redirects = children
                        .into_iter()
                        .flat_map(|c| self.redirect(c))
                        .collect();
                    self.push(SimpleCommand {
                        redirects,
                        substituted: true,
                        ..SimpleCommand::default()
                    });
                } else {
                    for c in children {
                        self.statement(c, true);
                    }
                }
                self.dynamic_word(node)
            }
            "arithmetic_expansion" => {
                let mut vars = Vec::new();
                for c in named_children(node) {
                    self.arithmetic(c, &mut vars);
                }
                self.script.evaluations.push(Evaluation::Arithmetic(vars));
                self.dynamic_word(node)
            }
            "array" => {
                let children = named_children(node);
                for c in &children {
                    // `([x]=1)`: the key of an indexed array is arithmetic.
                    let t = self.text(*c);
                    if let Some(key) = t.strip_prefix('[').and_then(|k| k.split_once("]=")) {
                        self.script
                            .evaluations
                            .push(Evaluation::Arithmetic(identifiers(key.0)));
                    }
                }
                let parts: Vec<Word> = children.into_iter().map(|c| self.word(c)).collect();
                let text = parts
                    .iter()
                    .map(|p| p.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                Word {
                    dynamic: parts.iter().any(|p| p.dynamic),
                    ..Word::literal(&text)
                }
            }
            _ => {
                let text = self.text(node);
                // Walk anything nested (e.g. substitutions in odd places).
                for c in named_children(node) {
                    if is_word_kind(c.kind()) {
                        self.word(c);
                    } else {
                        self.statement(c, true);
                    }
                }
                Word {
                    dynamic: text.contains('$') || text.contains('`'),
                    ..Word::literal(&text)
                }
            }
        }
    }

    pub(super) fn dynamic_word(&self, node: Node<'_>) -> Word {
        let text = self.text(node);
        Word {
            text: text.clone(),
            dynamic: true,
            pattern: escape_all(&text),
        }
    }

    /// `$x`, `${x}`, `${x:-$(cmd)}`, `${!x}`, `${x@P}`, `${a[i]}`.
    pub(super) fn expansion(&mut self, node: Node<'_>) -> Word {
        let raw = self.text(node);
        let mut name = String::new();
        for c in named_children(node) {
            match c.kind() {
                "variable_name" | "special_variable_name" if name.is_empty() => {
                    name = self.text(c);
                }
                "subscript" => {
                    if name.is_empty() {
                        name = c
                            .child_by_field_name("name")
                            .map(|n| self.text(n))
                            .unwrap_or_default();
                    }
                    if let Some(i) = c.child_by_field_name("index") {
                        self.subscript(i);
                    }
                }
                kind if is_word_kind(kind) => {
                    self.word(c);
                }
                _ => {
                    self.statement(c, true);
                }
            }
        }
        if raw.starts_with("${!") {
            let listing = raw.ends_with("[@]}")
                || raw.ends_with("[*]}")
                || raw.ends_with("*}")
                || raw.ends_with("@}");
            if !listing {
                self.script
                    .evaluations
                    .push(Evaluation::Indirect(name.clone()));
            }
        }
        if raw.ends_with("@P}") {
            self.script
                .evaluations
                .push(Evaluation::Prompt(name.clone()));
        }
        if assigns(&raw) {
            // `${X:=value}`, `${X=value}` set X.
            self.script.assigned.push((
                name.clone(),
                Word {
                    dynamic: true,
                    ..Word::literal(&raw)
                },
            ));
        }
        if let Some(offsets) = substring_offsets(&raw) {
            // `${s:x}`, `${a[@]:x:y}`: offset and length are arithmetic.
            self.script
                .evaluations
                .push(Evaluation::Arithmetic(identifiers(offsets)));
        }
        let known = |text: &str| Word {
            text: text.to_string(),
            dynamic: false,
            pattern: escape_all(text),
        };
        match raw
            .trim_start_matches('$')
            .trim_start_matches('{')
            .trim_end_matches('}')
        {
            "IFS" => Word {
                text: IFS.to_string(),
                dynamic: false,
                pattern: IFS.to_string(),
            },
            // Known to the path rules, which expand them.
            "HOME" => known("$HOME"),
            "PWD" => known("."),
            _ => Word {
                text: raw.clone(),
                dynamic: true,
                pattern: escape_all(&raw),
            },
        }
    }

    /// An array subscript: bash evaluates it as arithmetic.
    pub(super) fn subscript(&mut self, index: Node<'_>) {
        if matches!(self.text(index).as_str(), "@" | "*") {
            return;
        }
        let mut vars = Vec::new();
        self.arithmetic(index, &mut vars);
        self.script.evaluations.push(Evaluation::Arithmetic(vars));
    }

    /// The variables an arithmetic expression reads; substitutions inside
    /// are walked as commands.
    pub(super) fn arithmetic(&mut self, node: Node<'_>, vars: &mut Vec<String>) {
        // `$((PATH=10))`, `(( HOME++ ))`, `${a[IFS=1]}`: arithmetic sets
        // variables too, with values only known at run time.
        for name in arithmetic_assignments(&self.text(node)) {
            if !self.script.assigned.iter().any(|(n, _)| *n == name) {
                self.script.assigned.push((
                    name.clone(),
                    Word {
                        dynamic: true,
                        ..Word::literal(&format!("$(({name}))"))
                    },
                ));
            }
        }
        self.nested(|_| (), |w| w.arithmetic_at(node, vars))
    }

    fn arithmetic_at(&mut self, node: Node<'_>, vars: &mut Vec<String>) {
        match node.kind() {
            "number" => {}
            "variable_name" => vars.push(self.text(node)),
            "word" => {
                let t = self.text(node);
                let ident = t
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
                if ident {
                    vars.push(t.split(['[', '+', '-']).next().unwrap_or("").to_string());
                } else if !t.chars().all(|c| c.is_ascii_alphanumeric() || c == '#') {
                    vars.push(t);
                }
            }
            "simple_expansion" | "expansion" => {
                let w = self.expansion(node);
                vars.push(w.text);
            }
            // The output of `$(cat f)` is evaluated as arithmetic too.
            "command_substitution" | "process_substitution" => {
                self.word(node);
                vars.push("$(".into());
            }
            "arithmetic_expansion" => {
                self.word(node);
            }
            "subscript" => {
                if let Some(n) = node.child_by_field_name("name") {
                    vars.push(self.text(n));
                }
                if let Some(i) = node.child_by_field_name("index") {
                    self.arithmetic(i, vars);
                }
            }
            "string" | "raw_string" => {
                let w = self.word(node);
                self.script.evaluations.push(Evaluation::Code(w.text));
            }
            _ => {
                for c in named_children(node) {
                    self.arithmetic(c, vars);
                }
            }
        }
    }

    /// Inside `[[ ]]`: arithmetic comparisons and `-v name[i]` evaluate.
    pub(super) fn test_expression(&mut self, node: Node<'_>) {
        self.nested(|_| (), |w| w.test_expression_at(node))
    }

    fn test_expression_at(&mut self, node: Node<'_>) {
        let operator = node
            .child_by_field_name("operator")
            .map(|o| self.text(o))
            .unwrap_or_default();
        match node.kind() {
            "binary_expression" if ARITHMETIC_TESTS.contains(&operator.as_str()) => {
                let mut vars = Vec::new();
                for c in named_children(node) {
                    if Some(c) != node.child_by_field_name("operator") {
                        self.arithmetic(c, &mut vars);
                    }
                }
                self.script.evaluations.push(Evaluation::Arithmetic(vars));
            }
            "unary_expression" if operator == "-v" || operator == "-R" => {
                for c in named_children(node) {
                    if Some(c) != node.child_by_field_name("operator") {
                        let w = self.word(c);
                        self.script.evaluations.push(Evaluation::Code(w.text));
                    }
                }
            }
            kind if is_word_kind(kind) => {
                self.word(node);
            }
            _ => {
                for c in named_children(node) {
                    self.test_expression(c);
                }
            }
        }
    }
}

/// The offset (and length) part of `${name:offset:length}`, if the
/// expansion is a substring one (not `${x:-default}` and friends).
fn substring_offsets(raw: &str) -> Option<&str> {
    let body = raw.strip_prefix("${")?.strip_suffix('}')?;
    let name_end = if let Some(rest) = body.strip_prefix(['@', '*', '#', '?', '$', '!', '-']) {
        body.len() - rest.len()
    } else {
        body.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(body.len())
    };
    let mut rest = &body[name_end..];
    if rest.starts_with('[') {
        rest = &rest[rest.find(']')? + 1..];
    }
    let offsets = rest.strip_prefix(':')?;
    (!offsets.starts_with(['-', '=', '?', '+'])).then_some(offsets)
}

/// Names in arithmetic text (`i+1` → `i`; `a[j]` → `a`, `j`).
fn identifiers(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| {
            w.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        })
        .map(str::to_string)
        .collect()
}

/// The variables an arithmetic text assigns: `x=1`, `x[i]+=2`, `x++`,
/// `--x` (not `x==1`, `x<=1`).
pub(super) fn arithmetic_assignments(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = (b[i].is_ascii_alphabetic() || b[i] == b'_')
            && (i == 0 || !(ident(b[i - 1]) || b[i - 1] == b'$'));
        if !starts {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && ident(b[i]) {
            i += 1;
        }
        let name = &text[start..i];
        let before = text[..start].trim_end();
        let prefixed = before.ends_with("++") || before.ends_with("--");
        let mut j = i;
        while j < b.len() && b[j].is_ascii_whitespace() {
            j += 1;
        }
        if j < b.len() && b[j] == b'[' {
            let mut depth = 0;
            while j < b.len() {
                match b[j] {
                    b'[' => depth += 1,
                    b']' => {
                        depth -= 1;
                        if depth == 0 {
                            j += 1;
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            while j < b.len() && b[j].is_ascii_whitespace() {
                j += 1;
            }
        }
        let rest = &text[j.min(text.len())..];
        let assigns = (rest.starts_with('=') && !rest.starts_with("=="))
            || [
                "+=", "-=", "*=", "/=", "%=", "&=", "^=", "|=", "<<=", ">>=", "++", "--",
            ]
            .iter()
            .any(|op| rest.starts_with(op));
        if (assigns || prefixed) && !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    }
    out
}

/// Whether `${name:=v}` or `${name=v}` (which set `name`).
fn assigns(raw: &str) -> bool {
    let Some(body) = raw.strip_prefix("${").and_then(|b| b.strip_suffix('}')) else {
        return false;
    };
    let end = body
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(body.len());
    let rest = &body[end..];
    end > 0 && (rest.starts_with(":=") || rest.starts_with('='))
}
