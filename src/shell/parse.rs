//! Shell text → simple commands, with tree-sitter-bash.
//!
//! Every `command` node anywhere in the tree (pipelines, lists, subshells,
//! `$(...)`, backticks, process substitution, function bodies, conditions,
//! unquoted here-documents) becomes a [`Command`] with its words after
//! quote removal: `"rm"`, `r''m` and `\rm` all read `rm`. Text that is only
//! data (a quoted argument, a comment, a quoted here-document) never
//! becomes a command here; the analysis decides when data is really code
//! (`bash -c`, `eval`, a script piped into a shell).
//!
//! Besides commands, the parser reports what bash *evaluates* on its own:
//! arithmetic, array subscripts, indirect and prompt expansions. Their
//! variables' values are code to bash (`x='a[$(rm -rf ~)]'; echo $((x))`),
//! so the analysis needs to know where values come from: every assignment
//! is reported too.

use tree_sitter::{Node, Parser};

use super::words::{ansi_c, escape_all, has_brace, has_glob, unescape, unescape_double};

/// `${IFS}` inside a word splits it at run time; marked, then split.
const IFS: char = '\u{1f}';

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Word {
    /// After quote removal.
    pub text: String,
    /// Contains an expansion or substitution whose value is unknown here.
    pub dynamic: bool,
    /// The text with quoted characters escaped: only unquoted glob and
    /// brace characters are active (see `words`).
    pub pattern: String,
}

impl Word {
    pub fn literal(text: &str) -> Word {
        Word {
            text: text.to_string(),
            dynamic: false,
            pattern: escape_all(text),
        }
    }

    /// Bash matches it against file names (`*.rs`).
    pub fn is_glob(&self) -> bool {
        has_glob(&self.pattern)
    }

    /// Bash expands braces in it (`{a,b}`, `{1..3}`).
    pub fn is_brace(&self) -> bool {
        has_brace(&self.pattern)
    }
}

/// `NAME=value` or `NAME[index]=value`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Assignment {
    pub name: String,
    pub index: Option<String>,
    pub value: Word,
}

impl Assignment {
    pub fn text(&self) -> String {
        match &self.index {
            Some(i) => format!("{}[{i}]={}", self.name, self.value.text),
            None => format!("{}={}", self.name, self.value.text),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// `>`, `>>`, `<`, `&>`, `>&`, `<<<`, `<<`...
    pub op: String,
    pub target: Word,
    /// The heredoc's text, for `<<`.
    pub heredoc: Option<String>,
}

impl Redirect {
    /// A redirection that writes to a file (not a descriptor duplication).
    pub fn writes(&self) -> bool {
        let dup = self.op.ends_with('&')
            && self
                .target
                .text
                .chars()
                .all(|c| c.is_ascii_digit() || c == '-');
        self.op == "<>" || (self.op.contains('>') && !dup)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Command {
    /// Leading `NAME=value` words.
    pub assignments: Vec<Assignment>,
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
    /// Index (in the same script) of the command whose output this one reads.
    pub piped_from: Option<usize>,
    /// Runs inside `$(...)`, backticks or `<(...)`.
    pub substituted: bool,
}

/// Something bash evaluates as code by itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evaluation {
    /// Arithmetic (`$(( ))`, `(( ))`, `[[ -eq ]]`, an array subscript)
    /// reading these variables: a value like `a[$(cmd)]` runs `cmd`.
    Arithmetic(Vec<String>),
    /// `${!name}`: the value of `name` names another variable (subscript
    /// included).
    Indirect(String),
    /// `${name@P}`: the value is expanded like a prompt, `$(...)` and all.
    Prompt(String),
    /// Literal text bash evaluates as a subscript or arithmetic
    /// (`[[ -v 'a[$(cmd)]' ]]`).
    Code(String),
}

#[derive(Debug, Clone, Default)]
pub struct Script {
    pub commands: Vec<Command>,
    /// Parts of the text could not be parsed.
    pub errors: bool,
    /// Names of functions that call themselves (`:(){ :|:& };:`).
    pub self_recursive: Vec<String>,
    /// Functions the text defines.
    pub functions: Vec<String>,
    /// Every variable the text assigns, with its value (for-loop
    /// variables included, once per value).
    pub assigned: Vec<(String, Word)>,
    pub evaluations: Vec<Evaluation>,
}

pub fn parse(text: &str) -> Script {
    let mut parser = Parser::new();
    let mut script = Script::default();
    if parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .is_err()
    {
        script.errors = true;
        return script;
    }
    let Some(tree) = parser.parse(text, None) else {
        script.errors = true;
        return script;
    };
    let root = tree.root_node();
    script.errors = root.has_error();
    let mut w = Walker {
        src: text.as_bytes(),
        script,
    };
    w.statement(root, false);
    w.script
}

struct Walker<'s> {
    src: &'s [u8],
    script: Script,
}

fn named_children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

/// Node kinds that are words (arguments, values), not statements.
fn is_word_kind(kind: &str) -> bool {
    matches!(
        kind,
        "word"
            | "number"
            | "string"
            | "raw_string"
            | "ansi_c_string"
            | "translated_string"
            | "concatenation"
            | "simple_expansion"
            | "expansion"
            | "command_substitution"
            | "process_substitution"
            | "arithmetic_expansion"
            | "array"
    )
}

/// `[[ a OP b ]]` operators that evaluate their operands as arithmetic.
const ARITHMETIC_TESTS: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];

/// A here-document's body, parsed again on its own: tree-sitter drops the
/// substitutions of `<<-` bodies, and they run all the same.
const HEREDOC_DELIMITER: &str = "AGENT_HEREDOC_END_5f0c";

impl Walker<'_> {
    fn text(&self, node: Node<'_>) -> String {
        node.utf8_text(self.src).unwrap_or_default().to_string()
    }

    /// Walks any node, collecting commands. Returns the indexes of the
    /// commands it produced, first to last.
    fn statement(&mut self, node: Node<'_>, substituted: bool) -> Vec<usize> {
        match node.kind() {
            "command" => vec![self.command(node, Vec::new(), substituted)],
            "redirected_statement" => {
                let body_node = node.child_by_field_name("body");
                let redirects: Vec<Redirect> = named_children(node)
                    .into_iter()
                    .filter(|c| body_node != Some(*c))
                    .flat_map(|c| self.redirect(c))
                    .collect();
                match body_node {
                    Some(body) if body.kind() == "command" => {
                        vec![self.command(body, redirects, substituted)]
                    }
                    Some(body) => {
                        let made = self.statement(body, substituted);
                        for &i in &made {
                            self.script.commands[i]
                                .redirects
                                .extend(redirects.iter().cloned());
                        }
                        if made.is_empty() {
                            vec![self.push(Command {
                                redirects,
                                substituted,
                                ..Command::default()
                            })]
                        } else {
                            made
                        }
                    }
                    // `> ~/.bashrc` alone still writes its target.
                    None => vec![self.push(Command {
                        redirects,
                        substituted,
                        ..Command::default()
                    })],
                }
            }
            "pipeline" => {
                let mut made = Vec::new();
                let mut last: Option<usize> = None;
                for child in named_children(node) {
                    let produced = self.statement(child, substituted);
                    if let (Some(prev), Some(&first)) = (last, produced.first())
                        && self.script.commands[first].piped_from.is_none()
                    {
                        self.script.commands[first].piped_from = Some(prev);
                    }
                    if let Some(&l) = produced.last() {
                        last = Some(l);
                    }
                    made.extend(produced);
                }
                made
            }
            "function_definition" => {
                let name = node
                    .child_by_field_name("name")
                    .map(|n| self.text(n))
                    .unwrap_or_default();
                let made = match node.child_by_field_name("body") {
                    Some(body) => self.statement(body, substituted),
                    None => Vec::new(),
                };
                if made.iter().any(|&i| {
                    self.script.commands[i]
                        .words
                        .first()
                        .is_some_and(|w| w.text == name)
                }) {
                    self.script.self_recursive.push(name.clone());
                }
                self.script.functions.push(name);
                made
            }
            "variable_assignment" => {
                // A standalone assignment: only its value's substitutions run.
                let before = self.script.commands.len();
                let a = self.assignment(node);
                let mut made: Vec<usize> = (before..self.script.commands.len()).collect();
                made.push(self.push(Command {
                    assignments: vec![a],
                    substituted,
                    ..Command::default()
                }));
                made
            }
            "declaration_command" | "unset_command" => {
                let before = self.script.commands.len();
                let mut words = Vec::new();
                let mut cursor = node.walk();
                let children: Vec<Node> = node.children(&mut cursor).collect();
                for c in children {
                    if c.kind() == "variable_assignment" {
                        let a = self.assignment(c);
                        words.push(Word {
                            text: a.text(),
                            dynamic: a.value.dynamic,
                            pattern: escape_all(&a.text()),
                        });
                    } else if c.is_named() {
                        words.push(self.word(c));
                    } else {
                        words.push(Word::literal(&self.text(c)));
                    }
                }
                let mut made: Vec<usize> = (before..self.script.commands.len()).collect();
                made.push(self.push(Command {
                    words,
                    substituted,
                    ..Command::default()
                }));
                made
            }
            "for_statement" | "select_statement" => {
                let before = self.script.commands.len();
                let var = node
                    .child_by_field_name("variable")
                    .map(|v| self.text(v))
                    .unwrap_or_default();
                let mut cursor = node.walk();
                let values: Vec<Node> = node.children_by_field_name("value", &mut cursor).collect();
                if values.is_empty() {
                    // `for x; do`: the positional parameters.
                    self.script.assigned.push((
                        var.clone(),
                        Word {
                            text: "$@".into(),
                            dynamic: true,
                            pattern: "$@".into(),
                        },
                    ));
                }
                for v in values {
                    let w = self.word(v);
                    self.script.assigned.push((var.clone(), w));
                }
                if let Some(body) = node.child_by_field_name("body") {
                    self.statement(body, substituted);
                }
                (before..self.script.commands.len()).collect()
            }
            "c_style_for_statement" => {
                let before = self.script.commands.len();
                for field in ["initializer", "condition", "update"] {
                    let mut cursor = node.walk();
                    let parts: Vec<Node> =
                        node.children_by_field_name(field, &mut cursor).collect();
                    for p in parts {
                        if p.kind() == "variable_assignment" {
                            let a = self.assignment(p);
                            let mut vars = Vec::new();
                            self.arithmetic(p.child_by_field_name("value").unwrap_or(p), &mut vars);
                            vars.push(a.name);
                            self.script.evaluations.push(Evaluation::Arithmetic(vars));
                        } else {
                            let mut vars = Vec::new();
                            self.arithmetic(p, &mut vars);
                            self.script.evaluations.push(Evaluation::Arithmetic(vars));
                        }
                    }
                }
                if let Some(body) = node.child_by_field_name("body") {
                    self.statement(body, substituted);
                }
                (before..self.script.commands.len()).collect()
            }
            "compound_statement" if self.text(node).starts_with("((") => {
                let before = self.script.commands.len();
                let mut vars = Vec::new();
                for c in named_children(node) {
                    self.arithmetic(c, &mut vars);
                }
                self.script.evaluations.push(Evaluation::Arithmetic(vars));
                (before..self.script.commands.len()).collect()
            }
            "test_command" => {
                let before = self.script.commands.len();
                for c in named_children(node) {
                    self.test_expression(c);
                }
                (before..self.script.commands.len()).collect()
            }
            "comment" | "heredoc_body" => Vec::new(),
            kind if is_word_kind(kind) => {
                let before = self.script.commands.len();
                self.word(node);
                (before..self.script.commands.len()).collect()
            }
            _ => {
                let mut made = Vec::new();
                for child in named_children(node) {
                    made.extend(self.statement(child, substituted));
                }
                made
            }
        }
    }

    fn push(&mut self, c: Command) -> usize {
        self.script.commands.push(c);
        self.script.commands.len() - 1
    }

    /// `NAME=value`, `NAME[i]=value`, `NAME+=value`; recorded as assigned.
    fn assignment(&mut self, node: Node<'_>) -> Assignment {
        let value = node
            .child_by_field_name("value")
            .map(|v| self.word(v))
            .unwrap_or_else(|| Word::literal(""));
        let (name, index) = match node.child_by_field_name("name") {
            Some(n) if n.kind() == "subscript" => {
                let base = n
                    .child_by_field_name("name")
                    .map(|b| self.text(b))
                    .unwrap_or_default();
                let index = n.child_by_field_name("index");
                if let Some(i) = index {
                    self.subscript(i);
                }
                (base, index.map(|i| self.text(i)))
            }
            Some(n) => (self.text(n), None),
            None => (String::new(), None),
        };
        self.script.assigned.push((name.clone(), value.clone()));
        Assignment { name, index, value }
    }

    fn command(
        &mut self,
        node: Node<'_>,
        mut redirects: Vec<Redirect>,
        substituted: bool,
    ) -> usize {
        let mut cmd = Command {
            substituted,
            ..Command::default()
        };
        for child in named_children(node) {
            match child.kind() {
                "variable_assignment" => {
                    let a = self.assignment(child);
                    cmd.assignments.push(a);
                }
                "file_redirect" | "herestring_redirect" | "heredoc_redirect" => {
                    let found = self.redirect(child);
                    cmd.redirects.extend(found);
                }
                "command_name" => {
                    let inner = child.named_child(0).unwrap_or(child);
                    cmd.words.push(self.word(inner));
                }
                "subshell" => {
                    self.statement(child, substituted);
                }
                _ => cmd.words.push(self.word(child)),
            }
        }
        cmd.redirects.append(&mut redirects);
        // `rm${IFS}-rf${IFS}/` is three words at run time.
        if cmd.words.iter().any(|w| w.text.contains(IFS)) {
            cmd.words = cmd
                .words
                .into_iter()
                .flat_map(|w| {
                    let dynamic = w.dynamic;
                    w.text
                        .split(IFS)
                        .filter(|s| !s.is_empty())
                        .map(|s| Word {
                            dynamic,
                            ..Word::literal(s)
                        })
                        .collect::<Vec<_>>()
                })
                .collect();
        }
        self.push(cmd)
    }

    /// A redirection node; a heredoc may carry further redirections.
    fn redirect(&mut self, node: Node<'_>) -> Vec<Redirect> {
        match node.kind() {
            "file_redirect" => {
                let mut op = String::new();
                let mut cursor = node.walk();
                for c in node.children(&mut cursor) {
                    if !c.is_named() {
                        op.push_str(&self.text(c));
                    }
                }
                let target = node
                    .child_by_field_name("destination")
                    .map(|d| self.word(d))
                    .unwrap_or_default();
                vec![Redirect {
                    op,
                    target,
                    heredoc: None,
                }]
            }
            "herestring_redirect" => {
                let target = node
                    .named_child(node.named_child_count().saturating_sub(1))
                    .map(|d| self.word(d))
                    .unwrap_or_default();
                vec![Redirect {
                    op: "<<<".into(),
                    target,
                    heredoc: None,
                }]
            }
            "heredoc_redirect" => {
                let mut body = String::new();
                let mut quoted = false;
                let mut more = Vec::new();
                for c in named_children(node) {
                    match c.kind() {
                        "heredoc_start" => {
                            quoted = self.text(c).contains(['\'', '"', '\\']);
                        }
                        "heredoc_body" => body.push_str(&self.text(c)),
                        "file_redirect" | "herestring_redirect" => more.extend(self.redirect(c)),
                        "pipeline" | "command" | "redirected_statement" | "list" => {
                            self.statement(c, false);
                        }
                        _ => {}
                    }
                }
                if !quoted && (body.contains('$') || body.contains('`')) {
                    self.heredoc_expansions(&body);
                }
                more.insert(
                    0,
                    Redirect {
                        op: "<<".into(),
                        target: Word::default(),
                        heredoc: Some(body),
                    },
                );
                more
            }
            _ => Vec::new(),
        }
    }

    /// The substitutions and expansions of an unquoted here-document body,
    /// which bash performs before the command reads it.
    fn heredoc_expansions(&mut self, body: &str) {
        let stripped: Vec<&str> = body.lines().map(|l| l.trim_start_matches('\t')).collect();
        if stripped.iter().any(|l| l.trim() == HEREDOC_DELIMITER) {
            self.script.errors = true;
            return;
        }
        let synthetic = format!(
            ": <<{HEREDOC_DELIMITER}\n{}\n{HEREDOC_DELIMITER}\n",
            stripped.join("\n")
        );
        let inner = parse_heredoc(&synthetic);
        let base = self.script.commands.len();
        for mut c in inner.commands {
            // The synthetic `:` itself is not part of the script.
            if !c.substituted && c.words.first().is_some_and(|w| w.text == ":") {
                continue;
            }
            c.piped_from = c.piped_from.map(|p| p + base);
            c.substituted = true;
            self.script.commands.push(c);
        }
        self.script.errors |= inner.errors;
        self.script.assigned.extend(inner.assigned);
        self.script.evaluations.extend(inner.evaluations);
        self.script.functions.extend(inner.functions);
        // tree-sitter leaves backticks in a heredoc body unparsed.
        for code in backticks(body) {
            let inner = parse(&code);
            let base = self.script.commands.len();
            for mut c in inner.commands {
                c.piped_from = c.piped_from.map(|p| p + base);
                c.substituted = true;
                self.script.commands.push(c);
            }
            self.script.errors |= inner.errors;
            self.script.assigned.extend(inner.assigned);
            self.script.evaluations.extend(inner.evaluations);
        }
    }

    /// A heredoc body's nodes (of a synthetic `:` command).
    fn heredoc_body(&mut self, node: Node<'_>) {
        for c in named_children(node) {
            match c.kind() {
                "heredoc_content" | "heredoc_start" | "heredoc_end" => {}
                "heredoc_body" => self.heredoc_body(c),
                _ if is_word_kind(c.kind()) => {
                    self.word(c);
                }
                _ => self.heredoc_body(c),
            }
        }
    }

    /// A word after quote removal; substitutions inside are walked as commands.
    fn word(&mut self, node: Node<'_>) -> Word {
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
                    self.push(Command {
                        redirects,
                        substituted: true,
                        ..Command::default()
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
                let parts: Vec<Word> = named_children(node)
                    .into_iter()
                    .map(|c| self.word(c))
                    .collect();
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

    fn dynamic_word(&self, node: Node<'_>) -> Word {
        let text = self.text(node);
        Word {
            text: text.clone(),
            dynamic: true,
            pattern: escape_all(&text),
        }
    }

    /// `$x`, `${x}`, `${x:-$(cmd)}`, `${!x}`, `${x@P}`, `${a[i]}`.
    fn expansion(&mut self, node: Node<'_>) -> Word {
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
    fn subscript(&mut self, index: Node<'_>) {
        if matches!(self.text(index).as_str(), "@" | "*") {
            return;
        }
        let mut vars = Vec::new();
        self.arithmetic(index, &mut vars);
        self.script.evaluations.push(Evaluation::Arithmetic(vars));
    }

    /// The variables an arithmetic expression reads; substitutions inside
    /// are walked as commands.
    fn arithmetic(&mut self, node: Node<'_>, vars: &mut Vec<String>) {
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
            "command_substitution" | "process_substitution" | "arithmetic_expansion" => {
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
    fn test_expression(&mut self, node: Node<'_>) {
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

/// The code of each `` `...` `` in unquoted text (`\`` escapes a backtick).
fn backticks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let next = chars.next();
                if let (Some(code), Some(n)) = (current.as_mut(), next) {
                    // Inside backticks, `\`` is a nested backtick.
                    code.push(n);
                }
            }
            '`' => match current.take() {
                Some(code) => out.push(code),
                None => current = Some(String::new()),
            },
            _ => {
                if let Some(code) = current.as_mut() {
                    code.push(c);
                }
            }
        }
    }
    if let Some(code) = current {
        out.push(code);
    }
    out
}

/// Parses the synthetic text of [`Walker::heredoc_expansions`].
fn parse_heredoc(text: &str) -> Script {
    let mut parser = Parser::new();
    let mut script = Script::default();
    let tree = parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .ok()
        .and_then(|_| parser.parse(text, None));
    let Some(tree) = tree else {
        script.errors = true;
        return script;
    };
    script.errors = tree.root_node().has_error();
    let mut w = Walker {
        src: text.as_bytes(),
        script,
    };
    fn find(w: &mut Walker<'_>, node: Node<'_>) {
        for c in named_children(node) {
            if c.kind() == "heredoc_body" {
                w.heredoc_body(c);
            } else {
                find(w, c);
            }
        }
    }
    find(&mut w, tree.root_node());
    w.script
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argvs(text: &str) -> Vec<Vec<String>> {
        parse(text)
            .commands
            .iter()
            .filter(|c| !c.words.is_empty())
            .map(|c| c.words.iter().map(|w| w.text.clone()).collect())
            .collect()
    }

    #[test]
    fn lists_pipelines_and_subshells() {
        assert_eq!(
            argvs("a 1 && b 2 || (c; d) | e & f"),
            vec![
                vec!["a", "1"],
                vec!["b", "2"],
                vec!["c"],
                vec!["d"],
                vec!["e"],
                vec!["f"]
            ]
        );
    }

    #[test]
    fn quoting_and_escapes_are_removed() {
        assert_eq!(
            argvs(r#""rm" r''m \rm $'r\x6d' -"rf""#),
            vec![vec!["rm", "rm", "rm", "rm", "-rf"]]
        );
    }

    #[test]
    fn substitutions_are_commands_strings_are_data() {
        let s = parse(r#"echo "rm -rf /" $(whoami) `id` <(ls) # rm -rf /"#);
        let names: Vec<&str> = s
            .commands
            .iter()
            .map(|c| c.words[0].text.as_str())
            .collect();
        assert_eq!(names, ["whoami", "id", "ls", "echo"]);
        assert!(s.commands[0].substituted && !s.commands[3].substituted);
        assert_eq!(s.commands[3].words[1].text, "rm -rf /");
        assert!(s.commands[3].words[2].dynamic);
    }

    #[test]
    fn ifs_splits_words() {
        assert_eq!(argvs("rm${IFS}-rf${IFS}/"), vec![vec!["rm", "-rf", "/"]]);
    }

    #[test]
    fn redirects_pipes_and_assignments() {
        let s = parse("FOO=1 cat < in.txt 2>&1 | tee out.txt > /dev/null");
        let cat = &s.commands[0];
        assert_eq!(cat.assignments[0].text(), "FOO=1");
        assert_eq!(cat.redirects[0].op, "<");
        assert!(!cat.redirects[0].writes());
        assert!(!cat.redirects[1].writes(), "2>&1 is a duplication");
        let tee = &s.commands[1];
        assert_eq!(tee.piped_from, Some(0));
        assert!(tee.redirects[0].writes());
        assert_eq!(tee.redirects[0].target.text, "/dev/null");
        assert_eq!(s.assigned[0].0, "FOO");
    }

    #[test]
    fn fork_bomb_is_self_recursive() {
        assert_eq!(parse(":(){ :|:& };:").self_recursive, vec![":"]);
    }

    #[test]
    fn quoted_heredoc_body_is_data_unquoted_body_runs() {
        let s = parse("cat <<'EOF' > f.txt\nrm -rf / $(id)\nEOF\n");
        assert_eq!(
            argvs("cat <<'EOF' > f.txt\nrm -rf / $(id)\nEOF\n"),
            [["cat"]]
        );
        let r = &s.commands[0].redirects;
        assert!(
            r.iter()
                .any(|r| r.heredoc.as_deref().is_some_and(|h| h.contains("rm -rf /")))
        );
        assert!(r.iter().any(|r| r.writes() && r.target.text == "f.txt"));
        for text in [
            "cat <<EOF\n$(rm -rf ~) `id`\nEOF\n",
            "cat <<-EOF\n\t$(rm -rf ~)\n\t`id`\n\tEOF\n",
        ] {
            let names: Vec<String> = argvs(text).into_iter().map(|a| a[0].clone()).collect();
            assert!(names.contains(&"rm".to_string()), "{text:?}: {names:?}");
            assert!(names.contains(&"id".to_string()), "{text:?}: {names:?}");
        }
    }

    #[test]
    fn evaluations_and_their_variables() {
        let ev = |t: &str| parse(t).evaluations;
        assert_eq!(
            ev("echo $((x + 1))"),
            [Evaluation::Arithmetic(vec!["x".into()])]
        );
        assert_eq!(ev("echo $((1 + 2))"), [Evaluation::Arithmetic(vec![])]);
        assert!(ev("(( a[i]++ ))").contains(&Evaluation::Arithmetic(vec!["a".into(), "i".into()])));
        assert_eq!(
            ev("[[ $n -lt 3 ]]"),
            [Evaluation::Arithmetic(vec!["$n".into()])]
        );
        assert_eq!(
            ev("echo ${!x} ${y@P}"),
            [
                Evaluation::Indirect("x".into()),
                Evaluation::Prompt("y".into())
            ]
        );
        assert!(ev("echo ${!arr[@]}").is_empty());
        assert!(
            matches!(&ev("[[ -v 'a[$(id)]' ]]")[0], Evaluation::Code(c) if c.contains("$(id)"))
        );
        let s = parse("x='a[$(id)]'; for i in 1 $(ls); do :; done");
        let names: Vec<&str> = s.assigned.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["x", "i", "i"]);
        assert!(s.assigned[2].1.dynamic);
        // `$(...)` inside a subscript is a command.
        assert!(argvs("echo ${a[$(id)]}").iter().any(|a| a[0] == "id"));
        assert!(argvs("echo \"$(<~/.ssh/id_rsa)\"").len() == 1);
        assert!(
            parse("echo \"$(<~/.ssh/id_rsa)\"").commands[0].redirects[0]
                .target
                .text
                == "~/.ssh/id_rsa"
        );
    }

    #[test]
    fn globs_and_braces_only_when_unquoted() {
        let w = |t: &str| parse(t).commands[0].words[1].clone();
        assert!(w("ls *.rs").is_glob());
        assert!(!w("ls '*.rs'").is_glob());
        assert!(!w("ls \"*.rs\"").is_glob());
        assert!(w("cat {..,x}/secret").is_brace());
        assert!(!w("cat '{..,x}'/secret").is_brace());
        assert_eq!(w("cat {..,x}/secret").text, "{..,x}/secret");
    }

    #[test]
    fn broken_text_is_flagged() {
        assert!(parse("echo 'unterminated").errors);
        assert!(!parse("echo fine").errors);
    }
}
