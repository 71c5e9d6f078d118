//! Here-documents: an unquoted body is expanded before the command reads
//! it, so its substitutions run. tree-sitter drops some of them (`<<-`
//! bodies, backticks); the body is parsed again here.

use std::time::Instant;

use tree_sitter::Node;

use super::{HEREDOC_DELIMITER, Script, Walker, is_word_kind, named_children, parse_until, tree};

impl Walker<'_> {
    /// The substitutions and expansions of an unquoted here-document body,
    /// which bash performs before the command reads it.
    pub(super) fn heredoc_expansions(&mut self, body: &str) {
        let stripped: Vec<&str> = body.lines().map(|l| l.trim_start_matches('\t')).collect();
        if stripped.iter().any(|l| l.trim() == HEREDOC_DELIMITER) {
            self.script.errors = true;
            return;
        }
        let synthetic = format!(
            ": <<{HEREDOC_DELIMITER}\n{}\n{HEREDOC_DELIMITER}\n",
            stripped.join("\n")
        );
        let inner = parse_heredoc(&synthetic, self.deadline);
        let base = self.script.commands.len();
        for mut c in inner.commands {
            // The synthetic `:` itself is not part of the script.
            if !c.substituted && c.words.first().is_some_and(|w| w.text == ":") {
                continue;
            }
            c.piped_from = c.piped_from.map(|p| p + base);
            c.substituted = true;
            self.push(c);
        }
        self.script.errors |= inner.errors;
        self.script.assigned.extend(inner.assigned);
        self.script.evaluations.extend(inner.evaluations);
        self.script.functions.extend(inner.functions);
        self.heredoc_backticks(body);
    }

    /// tree-sitter leaves backticks in a heredoc body unparsed.
    pub(super) fn heredoc_backticks(&mut self, body: &str) {
        for code in backticks(body) {
            let inner = parse_until(&code, self.deadline);
            let base = self.script.commands.len();
            for mut c in inner.commands {
                c.piped_from = c.piped_from.map(|p| p + base);
                c.substituted = true;
                self.push(c);
            }
            self.script.errors |= inner.errors;
            self.script.assigned.extend(inner.assigned);
            self.script.evaluations.extend(inner.evaluations);
        }
    }

    /// A heredoc body's nodes (of a synthetic `:` command).
    pub(super) fn heredoc_body(&mut self, node: Node<'_>) {
        self.nested(|_| (), |w| w.heredoc_body_at(node))
    }

    fn heredoc_body_at(&mut self, node: Node<'_>) {
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
fn parse_heredoc(text: &str, deadline: Option<Instant>) -> Script {
    let mut script = Script::default();
    let Some(tree) = tree(text, deadline) else {
        script.errors = true;
        return script;
    };
    script.errors = tree.root_node().has_error();
    let mut w = Walker {
        src: text.as_bytes(),
        script,
        depth: 0,
        deadline,
    };
    pub(super) fn find(w: &mut Walker<'_>, node: Node<'_>) {
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
