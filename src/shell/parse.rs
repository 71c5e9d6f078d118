//! Shell text → simple commands, with tree-sitter-bash.
//!
//! Every `command` node anywhere in the tree (pipelines, lists, subshells,
//! `$(...)`, backticks, process substitution, function bodies, conditions)
//! becomes a [`Command`] with its words after quote removal: `"rm"`, `r''m`
//! and `\rm` all read `rm`. Text that is only data (a string argument, a
//! comment, a heredoc body) never becomes a command here; the analysis decides
//! when data is really code (`bash -c`, `eval`, a script piped into a shell).

use tree_sitter::{Node, Parser};

/// `${IFS}` inside a word splits it at run time; marked, then split.
const IFS: char = '\u{1f}';

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    /// Contains an expansion or substitution whose value is unknown here.
    pub dynamic: bool,
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
    pub assignments: Vec<Word>,
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
    /// Index (in the same script) of the command whose output this one reads.
    pub piped_from: Option<usize>,
    /// Runs inside `$(...)`, backticks or `<(...)`.
    pub substituted: bool,
}

#[derive(Debug, Clone, Default)]
pub struct Script {
    pub commands: Vec<Command>,
    /// Parts of the text could not be parsed.
    pub errors: bool,
    /// Names of functions that call themselves (`:(){ :|:& };:`).
    pub self_recursive: Vec<String>,
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
                let redirects: Vec<Redirect> = named_children(node)
                    .into_iter()
                    .filter(|c| node.child_by_field_name("body") != Some(*c))
                    .flat_map(|c| self.redirect(c))
                    .collect();
                match node.child_by_field_name("body") {
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
                        made
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
                    self.script.self_recursive.push(name);
                }
                made
            }
            "variable_assignment" => {
                // A standalone assignment: only its value's substitutions run.
                let mut made = Vec::new();
                if let Some(v) = node.child_by_field_name("value") {
                    let before = self.script.commands.len();
                    let word = self.word(v);
                    made.extend(before..self.script.commands.len());
                    let name = node
                        .child_by_field_name("name")
                        .map(|n| self.text(n))
                        .unwrap_or_default();
                    made.push(self.push(Command {
                        assignments: vec![Word {
                            text: format!("{name}={}", word.text),
                            dynamic: word.dynamic,
                        }],
                        substituted,
                        ..Command::default()
                    }));
                }
                made
            }
            "declaration_command" | "unset_command" => {
                let mut words = Vec::new();
                let mut cursor = node.walk();
                for c in node.children(&mut cursor) {
                    if c.is_named() {
                        words.push(self.word(c));
                    } else {
                        words.push(Word {
                            text: self.text(c),
                            dynamic: false,
                        });
                    }
                }
                vec![self.push(Command {
                    words,
                    substituted,
                    ..Command::default()
                })]
            }
            "comment" | "heredoc_body" => Vec::new(),
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
                    let name = child
                        .child_by_field_name("name")
                        .map(|n| self.text(n))
                        .unwrap_or_default();
                    let value = child
                        .child_by_field_name("value")
                        .map(|v| self.word(v))
                        .unwrap_or_default();
                    cmd.assignments.push(Word {
                        text: format!("{name}={}", value.text),
                        dynamic: value.dynamic,
                    });
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
                            text: s.to_string(),
                            dynamic,
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
                let mut more = Vec::new();
                for c in named_children(node) {
                    match c.kind() {
                        "heredoc_body" => body.push_str(&self.text(c)),
                        "file_redirect" | "herestring_redirect" => more.extend(self.redirect(c)),
                        "pipeline" | "command" | "redirected_statement" | "list" => {
                            self.statement(c, false);
                        }
                        _ => {}
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

    /// A word after quote removal; substitutions inside are walked as commands.
    fn word(&mut self, node: Node<'_>) -> Word {
        match node.kind() {
            "word" | "number" | "command_name" => Word {
                text: unescape(&self.text(node)),
                dynamic: false,
            },
            "raw_string" => {
                let t = self.text(node);
                Word {
                    text: t
                        .trim_start_matches('\'')
                        .trim_end_matches('\'')
                        .to_string(),
                    dynamic: false,
                }
            }
            "ansi_c_string" => {
                let t = self.text(node);
                let inner = t
                    .strip_prefix("$'")
                    .and_then(|s| s.strip_suffix('\''))
                    .unwrap_or(&t);
                Word {
                    text: ansi_c(inner),
                    dynamic: false,
                }
            }
            "string" | "translated_string" | "concatenation" => {
                let mut out = Word::default();
                let mut cursor = node.walk();
                for c in node.children(&mut cursor) {
                    let part = match c.kind() {
                        "string_content" => Word {
                            text: unescape_double(&self.text(c)),
                            dynamic: false,
                        },
                        "\"" | "$\"" => continue,
                        _ if !c.is_named() => Word {
                            text: self.text(c),
                            dynamic: false,
                        },
                        _ => self.word(c),
                    };
                    out.text.push_str(&part.text);
                    out.dynamic |= part.dynamic;
                }
                out
            }
            "simple_expansion" | "expansion" => {
                let raw = self.text(node);
                let name: String = raw
                    .trim_start_matches('$')
                    .trim_start_matches('{')
                    .trim_end_matches('}')
                    .to_string();
                for c in named_children(node) {
                    if c.kind() == "command_substitution" {
                        self.statement(c, true);
                    }
                }
                match name.as_str() {
                    "IFS" => Word {
                        text: IFS.to_string(),
                        dynamic: false,
                    },
                    // Known to the path rules, which expand them.
                    "HOME" => Word {
                        text: "$HOME".into(),
                        dynamic: false,
                    },
                    "PWD" => Word {
                        text: ".".into(),
                        dynamic: false,
                    },
                    _ => Word {
                        text: raw,
                        dynamic: true,
                    },
                }
            }
            "command_substitution" | "process_substitution" => {
                for c in named_children(node) {
                    self.statement(c, true);
                }
                Word {
                    text: self.text(node),
                    dynamic: true,
                }
            }
            "arithmetic_expansion" => Word {
                text: self.text(node),
                dynamic: true,
            },
            _ => {
                let text = self.text(node);
                // Walk anything nested (e.g. substitutions in odd places).
                for c in named_children(node) {
                    if matches!(c.kind(), "command_substitution" | "process_substitution") {
                        self.statement(c, true);
                    }
                }
                Word {
                    dynamic: text.contains('$') || text.contains('`'),
                    text,
                }
            }
        }
    }
}

/// Removes backslash escapes of an unquoted word (`\rm` → `rm`).
fn unescape(s: &str) -> String {
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
fn unescape_double(s: &str) -> String {
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

/// The common escapes of `$'...'`.
fn ansi_c(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('x') => {
                let hex: String = chars
                    .clone()
                    .take(2)
                    .take_while(|c| c.is_ascii_hexdigit())
                    .collect();
                for _ in 0..hex.len() {
                    chars.next();
                }
                if let Some(ch) = u8::from_str_radix(&hex, 16).ok().map(char::from) {
                    out.push(ch);
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
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
        assert_eq!(cat.assignments[0].text, "FOO=1");
        assert_eq!(cat.redirects[0].op, "<");
        assert!(!cat.redirects[0].writes());
        assert!(!cat.redirects[1].writes(), "2>&1 is a duplication");
        let tee = &s.commands[1];
        assert_eq!(tee.piped_from, Some(0));
        assert!(tee.redirects[0].writes());
        assert_eq!(tee.redirects[0].target.text, "/dev/null");
    }

    #[test]
    fn fork_bomb_is_self_recursive() {
        assert_eq!(parse(":(){ :|:& };:").self_recursive, vec![":"]);
    }

    #[test]
    fn heredoc_body_is_kept_as_data() {
        let s = parse("cat <<EOF > f.txt\nrm -rf /\nEOF\n");
        assert_eq!(s.commands.len(), 1);
        let r = &s.commands[0].redirects;
        assert!(
            r.iter()
                .any(|r| r.heredoc.as_deref().is_some_and(|h| h.contains("rm -rf /")))
        );
        assert!(r.iter().any(|r| r.writes() && r.target.text == "f.txt"));
    }

    #[test]
    fn broken_text_is_flagged() {
        assert!(parse("echo 'unterminated").errors);
        assert!(!parse("echo fine").errors);
    }
}
