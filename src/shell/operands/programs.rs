//! What each program does with its operands: which one is a pattern or a
//! program (`grep PATTERN`, `awk PROGRAM`), which options take values that
//! are not paths, whether a path is read or written (`cp SRC DST`), and
//! whether the program walks the directories it is given.

use crate::shell::analyze::Role;
use crate::shell::danger::short;

/// Programs whose first operand is a pattern or a program, not a path
/// (unless the pattern came with `-e`/`-f`).
pub(super) const PATTERN_FIRST: &[&str] = &[
    "grep", "egrep", "fgrep", "rg", "ag", "ack", "sed", "awk", "gawk", "mawk", "nawk", "jq", "yq",
    "zgrep",
];

/// Commands whose arguments are data, never paths.
pub(super) const DATA_ONLY: &[&str] = &[
    "echo", "printf", "true", "false", "seq", "sleep", "yes", "expr", "test", "[", "factor",
    "numfmt", ":", "alias", "trap", "eval", "export", "declare", "local", "typeset", "readonly",
    "unset", "set", "shopt", "let", "read", "kill", "pkill", "pgrep", "killall", "exit", "return",
    "shift", "type", "which", "command", "help", "hash", "wait", "jobs", "ps",
];

/// Options whose value is written (`-o out`, `--output=out`).
const OUTPUT_OPTIONS: &[&str] = &[
    "-o",
    "--output",
    "--output-file",
    "--outfile",
    "--out-file",
    "--log-file",
    "--logfile",
    "-fprint",
    "-fprint0",
    "-fprintf",
    "-fls",
];

/// Options whose values are not paths (patterns, messages, numbers), per
/// program: how many words follow them.
pub(super) fn skipped_values(name: &str, option: &str) -> usize {
    let pattern_first = PATTERN_FIRST.contains(&name);
    match option {
        "-e" | "--regexp" | "--expression" if pattern_first => 1,
        "-v" | "-F" | "--assign" | "--field-separator" if pattern_first => 1,
        "--arg" | "--argjson" if name == "jq" => 2,
        "--slurpfile" | "--rawfile" if name == "jq" => 1,
        "-m" | "--message" | "--grep" | "--author" | "--committer" | "-S" | "-G" | "--format"
        | "--pretty" | "-e"
            if matches!(name, "git" | "hg" | "svn" | "jj") =>
        {
            1
        }
        "-name" | "-iname" | "-path" | "-ipath" | "-wholename" | "-iwholename" | "-regex"
        | "-iregex" | "-regextype" | "-lname" | "-ilname" | "-type" | "-xtype" | "-size"
        | "-mtime" | "-mmin" | "-atime" | "-amin" | "-ctime" | "-cmin" | "-used" | "-user"
        | "-group" | "-uid" | "-gid" | "-perm" | "-links" | "-inum" | "-fstype" | "-maxdepth"
        | "-mindepth" | "-printf"
            if name == "find" =>
        {
            1
        }
        "-subj" if name == "openssl" => 1,
        "--xpath" if name == "xmllint" => 1,
        _ => 0,
    }
}

/// Options that take a value, for programs whose first operand is a
/// pattern or a program: (short letters, long names, long names taking
/// two values). Only used to find that operand; anything else is lenient.
fn valued_options(
    name: &str,
) -> (
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
) {
    match name {
        "grep" | "egrep" | "fgrep" | "zgrep" => (
            "efmABCdDX",
            &[
                "regexp",
                "file",
                "max-count",
                "label",
                "after-context",
                "before-context",
                "context",
                "devices",
                "directories",
                "exclude",
                "include",
                "exclude-from",
                "exclude-dir",
                "binary-files",
            ],
            &[],
        ),
        "rg" => (
            "eEfgtTABCmjMrd",
            &[
                "regexp",
                "file",
                "glob",
                "iglob",
                "type",
                "type-not",
                "type-add",
                "after-context",
                "before-context",
                "context",
                "max-count",
                "max-depth",
                "maxdepth",
                "max-filesize",
                "threads",
                "replace",
                "sort",
                "sortr",
                "colors",
                "encoding",
                "engine",
                "ignore-file",
                "path-separator",
                "context-separator",
                "field-match-separator",
                "max-columns",
                "pre",
                "pre-glob",
                "hostname-bin",
                "hyperlink-format",
                "dfa-size-limit",
                "regex-size-limit",
            ],
            &[],
        ),
        "ag" => (
            "GgABCm",
            &[
                "file-search-regex",
                "after",
                "before",
                "context",
                "max-count",
                "depth",
                "pager",
                "ignore",
                "path-to-ignore",
            ],
            &[],
        ),
        "ack" => (
            "ABCmt",
            &[
                "type",
                "after-context",
                "before-context",
                "context",
                "max-count",
                "output",
                "pager",
                "ignore-dir",
                "ignore-file",
            ],
            &[],
        ),
        "sed" => ("efl", &["expression", "file", "line-length"], &[]),
        "awk" | "gawk" | "mawk" | "nawk" => (
            "fvFeilE",
            &[
                "file",
                "assign",
                "field-separator",
                "source",
                "include",
                "load",
                "exec",
            ],
            &[],
        ),
        "jq" => (
            "fL",
            &["indent", "from-file"],
            &["arg", "argjson", "slurpfile", "rawfile"],
        ),
        "yq" => ("opI", &["output-format", "input-format", "indent"], &[]),
        _ => ("", &[], &[]),
    }
}

/// Where the pattern (or program) of a pattern-first command is: its first
/// operand, past options and their values.
pub(super) fn pattern_index(name: &str, args: &[&str]) -> Option<usize> {
    let (short_valued, long_valued, long_two) = valued_options(name);
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if a == "--" {
            return (i + 1 < args.len()).then_some(i + 1);
        }
        if let Some(long) = a.strip_prefix("--") {
            if !long.contains('=') {
                if long_two.contains(&long) {
                    i += 2;
                } else if long_valued.contains(&long) {
                    i += 1;
                }
            }
        } else if a.len() > 1 && a.starts_with('-') {
            let cluster = &a[1..];
            if let Some((k, c)) = cluster
                .char_indices()
                .find(|(_, c)| short_valued.contains(*c))
                && k + c.len_utf8() == cluster.len()
            {
                i += 1;
            }
        } else {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// The role of the word at `index`: what the program does with the path
/// it names. `prev` is the word before it.
pub(super) fn role(
    name: &str,
    args: &[&str],
    index: usize,
    last: Option<usize>,
    read_only: bool,
) -> Role {
    if read_only {
        return Role::Read;
    }
    let prev = index.checked_sub(1).and_then(|p| args.get(p)).copied();
    let here = args.get(index).copied().unwrap_or_default();
    let option_value = |names: &[&str]| {
        prev.is_some_and(|p| names.contains(&p))
            || names
                .iter()
                .any(|n| n.starts_with("--") && here.starts_with(&format!("{n}=")))
    };
    if option_value(OUTPUT_OPTIONS) {
        return Role::Write;
    }
    // `cp -t DIR SRC…`: DIR is written, the rest read.
    let target_dir = args
        .iter()
        .any(|a| *a == "-t" || a.starts_with("--target-directory"));
    match name {
        "rm" | "rmdir" | "unlink" | "shred" | "touch" | "mkdir" | "truncate" | "chmod"
        | "chown" | "chgrp" | "tee" => Role::Write,
        // What is moved becomes readable where it lands.
        "mv" => Role::Both,
        "cp" | "install" | "ln" | "rsync" | "scp" if target_dir => {
            if option_value(&["-t", "--target-directory"]) {
                Role::Write
            } else {
                Role::Read
            }
        }
        // `ln TARGET LINK`: a link makes its target readable where it is.
        "cp" | "install" | "ln" | "rsync" | "scp" => {
            if Some(index) == last {
                Role::Write
            } else {
                Role::Read
            }
        }
        "tar" => {
            let creates = args
                .first()
                .is_some_and(|a| !a.starts_with("--") && a.contains(['c', 'r', 'u', 'A']))
                || args
                    .iter()
                    .any(|a| matches!(*a, "--create" | "--append" | "--update" | "--concatenate"));
            if option_value(&["-f", "--file"]) && creates {
                Role::Write
            } else if option_value(&["-f", "--file"]) {
                Role::Read
            } else {
                Role::Both
            }
        }
        "sed" | "perl" | "ruby" if short(args, 'i') => Role::Write,
        "cat" | "head" | "tail" | "grep" | "less" | "more" | "wc" | "sort" | "diff" | "base64"
        | "xxd" | "od" | "strings" | "file" | "stat" => Role::Read,
        _ => Role::Both,
    }
}

/// Whether the program walks the directories it is given (for contents).
pub(super) fn recursive(name: &str, args: &[&str]) -> bool {
    match name {
        "grep" | "egrep" | "fgrep" | "zgrep" => {
            short(args, 'r')
                || short(args, 'R')
                || args.iter().any(|a| {
                    a.starts_with("--recursive")
                        || a.starts_with("--dereference-recursive")
                        || *a == "--directories=recurse"
                })
        }
        "rg" | "ag" | "ack" | "find" | "fd" | "fdfind" | "rsync" | "zip" => true,
        "diff" | "cp" | "scp" | "rm" | "chmod" | "chown" | "chgrp" => {
            short(args, 'r')
                || short(args, 'R')
                || short(args, 'a')
                || args.contains(&"--recursive")
        }
        "tar" => args.first().is_some_and(|a| a.contains('c')) || args.contains(&"--create"),
        // Subcommands that print file contents from the repository
        // (`git show HEAD:.env`) read the whole tree, named or not.
        "git" => {
            let p = crate::shell::danger::positional("git", args);
            match p.first() {
                Some(
                    &("show" | "diff" | "grep" | "blame" | "annotate" | "cat-file" | "archive"
                    | "format-patch" | "range-diff" | "whatchanged" | "stash" | "diff-tree"
                    | "difftool"),
                ) => true,
                Some(&"log") => args.iter().any(|a| {
                    matches!(*a, "-p" | "-u" | "--patch" | "--full-diff") || a.starts_with("-L")
                }),
                _ => false,
            }
        }
        _ => false,
    }
}
