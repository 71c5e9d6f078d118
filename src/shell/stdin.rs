//! What a command reads on standard input (known text, a file, a
//! download, decoded text, another command's output), and whether the
//! arguments `xargs` reads there can be known.

use super::analyze::{Analyzer, Stdin};
use super::inline::DOWNLOADERS;
use super::parse::{Script, SimpleCommand};
use super::readonly::is_read_only;
use super::wrappers::{self, basename};

impl Analyzer<'_> {
    /// Under `xargs`, arguments are whatever the previous command printed:
    /// inert only for programs that take no paths, or when the producer
    /// can only print regular files under the project (`find . -type f`).
    pub(super) fn input_args_inert(
        &self,
        name: &str,
        u: &wrappers::Unwrapped,
        cmd: &SimpleCommand,
        script: &Script,
    ) -> bool {
        if u.args_from_file {
            return false;
        }
        if matches!(
            name,
            "echo" | "printf" | "true" | "false" | "basename" | "dirname"
        ) {
            return true;
        }
        let Some(producer) = cmd.piped_from.map(|i| &script.commands[i]) else {
            return false;
        };
        let p = wrappers::unwrap(&producer.words);
        let words: Vec<&str> = p.words.iter().map(|w| w.text.as_str()).collect();
        let regular_files = words
            .windows(2)
            .any(|w| matches!(w[0], "-type" | "-t" | "--type") && matches!(w[1], "f" | "file"));
        let follows = words
            .iter()
            .any(|w| matches!(*w, "-L" | "-follow" | "--follow"));
        let lister = matches!(words.first(), Some(&("find" | "fd" | "fdfind")));
        let starts_inside = super::danger::find_starts(&words[1.min(words.len())..])
            .iter()
            .all(|s| {
                self.env
                    .resolve(s, Some(&self.env.workspace))
                    .is_some_and(|p| p.starts_with(&self.env.workspace))
            });
        lister
            && regular_files
            && !follows
            && starts_inside
            && p.words.iter().all(|w| !w.dynamic)
            && is_read_only(words[0], &words[1..])
    }

    /// What the command reads on standard input.
    pub(super) fn stdin(&self, cmd: &SimpleCommand, script: &Script) -> Stdin {
        for r in &cmd.redirects {
            if let Some(h) = &r.heredoc {
                return if h.contains("$(") || h.contains('`') {
                    Stdin::Unknown
                } else {
                    Stdin::Text(h.clone())
                };
            }
            if r.op == "<<<" {
                return if !r.target.dynamic {
                    Stdin::Text(r.target.text.clone())
                } else if mentions_downloader(&r.target.text) {
                    Stdin::Downloaded
                } else {
                    Stdin::Unknown
                };
            }
            if r.op == "<" {
                return if r.target.text.starts_with("<(") {
                    if mentions_downloader(&r.target.text) {
                        Stdin::Downloaded
                    } else {
                        Stdin::Unknown
                    }
                } else if r.target.dynamic {
                    Stdin::Unknown
                } else {
                    Stdin::File(r.target.text.clone())
                };
            }
        }
        let Some(first) = cmd.piped_from else {
            return Stdin::Terminal;
        };
        // Every stage upstream: a download or a decoder anywhere taints it.
        let mut at = Some(first);
        let mut hops = 0;
        while let Some(i) = at {
            let stage = wrappers::unwrap(&script.commands[i].words);
            let words: Vec<&str> = stage.words.iter().map(|w| w.text.as_str()).collect();
            let name = words.first().map(|w| basename(w)).unwrap_or_default();
            if DOWNLOADERS.contains(&name) {
                return Stdin::Downloaded;
            }
            if decodes(name, &words[1.min(words.len())..]) {
                return Stdin::Decoded;
            }
            at = script.commands[i].piped_from;
            hops += 1;
            if hops > 64 {
                return Stdin::Unknown;
            }
        }
        let producer = wrappers::unwrap(&script.commands[first].words);
        let words = &producer.words;
        let Some(name) = words.first().map(|w| basename(&w.text)) else {
            return Stdin::Unknown;
        };
        let all_static = words[1..].iter().all(|w| !w.dynamic);
        match name {
            "echo" | "printf" if all_static => {
                let text: Vec<&str> = words[1..]
                    .iter()
                    .map(|w| w.text.as_str())
                    .skip_while(|w| w.starts_with('-'))
                    .collect();
                let text = text.join(" ");
                let escapes =
                    name == "printf" || words[1..].iter().any(|w| w.text.starts_with("-e"));
                if escapes && (text.contains('\\') || text.contains('%')) {
                    Stdin::Decoded
                } else {
                    Stdin::Text(text)
                }
            }
            "cat" if all_static && words.len() == 2 => Stdin::File(words[1].text.clone()),
            _ => Stdin::Unknown,
        }
    }
}

/// A program that decodes or unscrambles its input.
pub(super) fn decodes(name: &str, args: &[&str]) -> bool {
    let flag = |f: &str| {
        args.iter().any(|a| {
            *a == f
                || (a.starts_with('-')
                    && !a.starts_with("--")
                    && f.len() == 2
                    && a.contains(&f[1..]))
        })
    };
    match name {
        "base64" | "base32" | "basenc" => flag("-d") || args.contains(&"--decode"),
        "xxd" => flag("-r") || args.contains(&"-revert"),
        "openssl" => flag("-d") || args.contains(&"base64"),
        "uudecode" | "gunzip" | "zcat" | "bunzip2" | "unxz" | "xzcat" | "bzcat" | "zstdcat"
        | "rev" => true,
        "gzip" | "bzip2" | "xz" | "zstd" => flag("-d") || args.contains(&"--decompress"),
        "python" | "python3" | "perl" | "ruby" | "node" => true,
        _ => false,
    }
}

/// Whether `text` has `word` as a whole word.
pub(super) fn mentions(text: &str, word: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric() && c != '-' && c != '_')
        .any(|w| w == word)
}

pub(super) fn mentions_downloader(text: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric() && c != '-')
        .any(|w| DOWNLOADERS.contains(&w))
}
