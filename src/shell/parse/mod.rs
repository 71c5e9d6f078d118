//! Shell text → simple commands, with tree-sitter-bash.
//!
//! Every `command` node anywhere in the tree (pipelines, lists, subshells,
//! `$(...)`, backticks, process substitution, function bodies, conditions,
//! unquoted here-documents) becomes a [`SimpleCommand`] with its words after
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

mod expansions;
mod heredoc;
#[cfg(test)]
mod tests;

use std::time::Instant;

use tree_sitter::{Node, Parser};

use super::words::{escape_all, has_brace, has_glob};

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
pub struct SimpleCommand {
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
    pub commands: Vec<SimpleCommand>,
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
    parse_until(text, None)
}

/// [`parse`], giving up at `deadline`: what was not parsed by then counts
/// as text that could not be parsed.
pub fn parse_until(text: &str, deadline: Option<Instant>) -> Script {
    let mut script = Script::default();
    let Some(tree) = tree(text, deadline) else {
        script.errors = true;
        return script;
    };
    let root = tree.root_node();
    script.errors = root.has_error();
    let mut w = Walker {
        src: text.as_bytes(),
        script,
        depth: 0,
        deadline,
    };
    w.statement(root, false);
    w.script
}

/// The syntax tree of `text`, or `None` when it cannot be had by `deadline`.
pub(super) fn tree(text: &str, deadline: Option<Instant>) -> Option<tree_sitter::Tree> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .ok()?;
    let bytes = text.as_bytes();
    let mut input = |at: usize, _: tree_sitter::Point| bytes.get(at..).unwrap_or_default();
    let mut past = |_: &tree_sitter::ParseState| deadline.is_some_and(|d| Instant::now() >= d);
    let options = tree_sitter::ParseOptions::new().progress_callback(&mut past);
    parser.parse_with_options(&mut input, None, Some(options))
}

struct Walker<'s> {
    src: &'s [u8],
    script: Script,
    /// Nodes being walked, outermost first: the walk stops (and the text
    /// counts as unparsed) past [`MAX_NESTING`], so no input exhausts the
    /// stack.
    depth: usize,
    /// When parsing more text (a heredoc body) must stop.
    deadline: Option<Instant>,
}

/// Syntax nested deeper than this is not followed.
const MAX_NESTING: usize = 150;
/// Simple commands collected from one text; past this the text counts
/// as not fully parsed (the analysis then judges it unknown).
const MAX_COMMANDS: usize = 20_000;

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
    pub(super) fn text(&self, node: Node<'_>) -> String {
        node.utf8_text(self.src).unwrap_or_default().to_string()
    }

    /// Walks any node, collecting commands. Returns the indexes of the
    /// commands it produced, first to last.
    pub(super) fn statement(&mut self, node: Node<'_>, substituted: bool) -> Vec<usize> {
        self.nested(|_| Vec::new(), |w| w.statement_at(node, substituted))
    }

    /// Runs `f` one level deeper, or gives `default` (and marks the text
    /// as not fully parsed) past the nesting limit.
    pub(super) fn nested<T>(
        &mut self,
        default: impl FnOnce(&Self) -> T,
        f: impl FnOnce(&mut Self) -> T,
    ) -> T {
        if self.depth >= MAX_NESTING || self.script.commands.len() >= MAX_COMMANDS {
            self.script.errors = true;
            return default(self);
        }
        self.depth += 1;
        let out = f(self);
        self.depth -= 1;
        out
    }

    fn statement_at(&mut self, node: Node<'_>, substituted: bool) -> Vec<usize> {
        match node.kind() {
            // `a && b && c` nests to the left: walked in a loop, so a long
            // chain costs no stack.
            "list" => {
                let mut chain = Vec::new();
                let mut at = node;
                while at.kind() == "list" {
                    let children = named_children(at);
                    let Some((first, rest)) = children.split_first() else {
                        break;
                    };
                    chain.extend(rest.iter().rev().copied());
                    at = *first;
                }
                chain.push(at);
                let mut made = Vec::new();
                for child in chain.into_iter().rev() {
                    made.extend(self.statement(child, substituted));
                }
                made
            }
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
                            vec![self.push(SimpleCommand {
                                redirects,
                                substituted,
                                ..SimpleCommand::default()
                            })]
                        } else {
                            made
                        }
                    }
                    // `> ~/.bashrc` alone still writes its target.
                    None => vec![self.push(SimpleCommand {
                        redirects,
                        substituted,
                        ..SimpleCommand::default()
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
                made.push(self.push(SimpleCommand {
                    assignments: vec![a],
                    substituted,
                    ..SimpleCommand::default()
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
                made.push(self.push(SimpleCommand {
                    words,
                    substituted,
                    ..SimpleCommand::default()
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

    pub(super) fn push(&mut self, c: SimpleCommand) -> usize {
        if self.script.commands.len() >= MAX_COMMANDS {
            // More than anyone writes by hand: the rest is not read.
            self.script.errors = true;
        } else {
            self.script.commands.push(c);
        }
        self.script.commands.len() - 1
    }

    /// `NAME=value`, `NAME[i]=value`, `NAME+=value`; recorded as assigned.
    pub(super) fn assignment(&mut self, node: Node<'_>) -> Assignment {
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

    pub(super) fn command(
        &mut self,
        node: Node<'_>,
        mut redirects: Vec<Redirect>,
        substituted: bool,
    ) -> usize {
        let mut cmd = SimpleCommand {
            substituted,
            ..SimpleCommand::default()
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
                _ => {
                    // `{NAME}<file`: bash opens the file and sets NAME to
                    // the descriptor (`: {PATH}<f; ls`).
                    let text = self.text(child);
                    let named_fd = text
                        .strip_prefix('{')
                        .and_then(|t| t.strip_suffix('}'))
                        .filter(|n| {
                            n.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                                && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                        })
                        .filter(|_| matches!(self.src.get(child.end_byte()), Some(b'<' | b'>')));
                    if let Some(name) = named_fd {
                        self.script.assigned.push((
                            name.to_string(),
                            Word {
                                dynamic: true,
                                ..Word::literal(&text)
                            },
                        ));
                        continue;
                    }
                    cmd.words.push(self.word(child));
                }
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
    pub(super) fn redirect(&mut self, node: Node<'_>) -> Vec<Redirect> {
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
                let mut body_node = None;
                let mut quoted = false;
                let mut more = Vec::new();
                // `<<-` strips leading tabs, and tree-sitter then drops the
                // body's substitutions: that body is parsed again.
                let dash = self.text(node).starts_with("<<-");
                for c in named_children(node) {
                    match c.kind() {
                        "heredoc_start" => {
                            quoted = self.text(c).contains(['\'', '"', '\\']);
                        }
                        "heredoc_body" => {
                            body.push_str(&self.text(c));
                            body_node = Some(c);
                        }
                        "file_redirect" | "herestring_redirect" => more.extend(self.redirect(c)),
                        "pipeline" | "command" | "redirected_statement" | "list" => {
                            self.statement(c, false);
                        }
                        _ => {}
                    }
                }
                if !quoted && (body.contains('$') || body.contains('`')) {
                    match body_node.filter(|_| !dash) {
                        Some(n) => {
                            let before = self.script.commands.len();
                            self.heredoc_body(n);
                            for c in &mut self.script.commands[before..] {
                                c.substituted = true;
                            }
                            self.heredoc_backticks(&body);
                        }
                        None => self.heredoc_expansions(&body),
                    }
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
}
