//! Programs with a language of their own: find's expressions, sed scripts,
//! awk programs, git's subcommands. Each is inert only in the part of its
//! language this module can read completely.

use super::super::scripts::{awk_program_inert, sed_script_inert};
use super::{Spec, operands, spec};

/// Predicates that only test or print (with how many words they take).
pub(super) const FIND_PREDICATES: &[(&str, usize)] = &[
    ("-name", 1),
    ("-iname", 1),
    ("-path", 1),
    ("-ipath", 1),
    ("-wholename", 1),
    ("-iwholename", 1),
    ("-regex", 1),
    ("-iregex", 1),
    ("-regextype", 1),
    ("-lname", 1),
    ("-ilname", 1),
    ("-type", 1),
    ("-xtype", 1),
    ("-size", 1),
    ("-empty", 0),
    ("-newer", 1),
    ("-anewer", 1),
    ("-cnewer", 1),
    ("-mtime", 1),
    ("-mmin", 1),
    ("-atime", 1),
    ("-amin", 1),
    ("-ctime", 1),
    ("-cmin", 1),
    ("-used", 1),
    ("-user", 1),
    ("-group", 1),
    ("-uid", 1),
    ("-gid", 1),
    ("-nouser", 0),
    ("-nogroup", 0),
    ("-perm", 1),
    ("-links", 1),
    ("-inum", 1),
    ("-samefile", 1),
    ("-fstype", 1),
    ("-readable", 0),
    ("-writable", 0),
    ("-executable", 0),
    ("-maxdepth", 1),
    ("-mindepth", 1),
    ("-depth", 0),
    ("-d", 0),
    ("-prune", 0),
    ("-quit", 0),
    ("-mount", 0),
    ("-xdev", 0),
    ("-noleaf", 0),
    ("-daystart", 0),
    ("-ignore_readdir_race", 0),
    ("-noignore_readdir_race", 0),
    ("-nowarn", 0),
    ("-warn", 0),
    ("-print", 0),
    ("-print0", 0),
    ("-printf", 1),
    ("-ls", 0),
    ("-true", 0),
    ("-false", 0),
    ("-not", 0),
    ("-a", 0),
    ("-and", 0),
    ("-o", 0),
    ("-or", 0),
    ("!", 0),
    ("(", 0),
    (")", 0),
    (",", 0),
];

/// Not `-exec*`/`-ok*` (run programs), `-delete`, `-fprint*`/`-fls`
/// (write files), `-L`/`-follow` (follow symlinks out of the tree),
/// `-files0-from`.
pub(super) fn find(args: &[&str]) -> bool {
    let mut i = 0;
    // Leading options, then start points.
    while let Some(a) = args.get(i) {
        match *a {
            "-P" | "-H" => i += 1,
            "-D" | "-O" => i += 2,
            s if s.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    while let Some(a) = args.get(i) {
        if a.starts_with('-') || matches!(*a, "(" | "!" | ")" | ",") {
            break;
        }
        i += 1;
    }
    while let Some(a) = args.get(i) {
        let Some((_, arity)) = FIND_PREDICATES.iter().find(|(p, _)| p == a) else {
            return false;
        };
        i += 1 + arity;
    }
    true
}

/// Not `-x`/`-X` (run programs), `-L`/`--follow`.
pub(super) fn fd(args: &[&str]) -> bool {
    const FD: Spec = spec(
        "HIuisFagpl01",
        "dEetSjcoC",
        &[
            "hidden",
            "no-hidden",
            "no-ignore",
            "no-ignore-vcs",
            "no-ignore-parent",
            "no-global-ignore-file",
            "unrestricted",
            "case-sensitive",
            "ignore-case",
            "glob",
            "regex",
            "fixed-strings",
            "absolute-path",
            "relative-path",
            "list-details",
            "full-path",
            "print0",
            "one-file-system",
            "prune",
            "show-errors",
            "strip-cwd-prefix",
            "quiet",
            "has-results",
        ],
        &[
            "max-depth",
            "min-depth",
            "exact-depth",
            "type",
            "extension",
            "exclude",
            "ignore-file",
            "size",
            "changed-within",
            "changed-before",
            "change-newer-than",
            "change-older-than",
            "owner",
            "color",
            "threads",
            "max-results",
            "max-buffer-time",
            "base-directory",
            "search-path",
            "path-separator",
            "format",
            "strip-cwd-prefix",
        ],
    );
    operands(&FD, args).is_some()
}

/// Not `-i` (in place, any spelling), `-f` (a script from a file); the
/// script itself must be inert (no `w`, `W`, `e`, `r`, `R` commands or
/// flags): see `scripts`.
pub(super) fn sed(args: &[&str]) -> bool {
    const SED: Spec = spec(
        "nErsuz",
        "el",
        &[
            "quiet",
            "silent",
            "regexp-extended",
            "separate",
            "unbuffered",
            "null-data",
            "posix",
            "debug",
            "sandbox",
        ],
        &["expression", "line-length"],
    );
    let Some(operands) = operands(&SED, args) else {
        return false;
    };
    let mut scripts: Vec<&str> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if *a == "-e" || *a == "--expression" {
            scripts.extend(it.next());
        } else if let Some(s) = a.strip_prefix("--expression=") {
            scripts.push(s);
        } else if a.starts_with('-')
            && !a.starts_with("--")
            && let Some(pos) = a.find('e')
        {
            let rest = &a[pos + 1..];
            if rest.is_empty() {
                scripts.extend(it.next());
            } else {
                scripts.push(rest);
            }
        }
    }
    if scripts.is_empty() {
        match operands.first() {
            Some(s) => scripts.push(s),
            None => return false,
        }
    }
    scripts.iter().all(|s| sed_script_inert(s))
}

/// Not `-f` (program from a file), `-i`/`-l` (load code), `-o`/`-p`/`-d`
/// (write files); the program must be inert (see `scripts`).
pub(super) fn awk(args: &[&str]) -> bool {
    const AWK: Spec = spec(
        "bcPrStnN",
        "Fve",
        &[
            "characters-as-bytes",
            "traditional",
            "posix",
            "re-interval",
            "sandbox",
            "non-decimal-data",
            "use-lc-numeric",
            "lint",
        ],
        &["field-separator", "assign", "source"],
    );
    let Some(operands) = operands(&AWK, args) else {
        return false;
    };
    let mut programs: Vec<&str> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if *a == "-e" || *a == "--source" {
            programs.extend(it.next());
        } else if let Some(p) = a.strip_prefix("--source=") {
            programs.push(p);
        }
    }
    if programs.is_empty() {
        match operands.first() {
            Some(p) => programs.push(p),
            None => return false,
        }
    }
    programs.iter().all(|p| awk_program_inert(p))
}

/// Subcommands that only read, with the global options that keep git inert
/// (not `-c`, `--exec-path`, `--git-dir`/`--work-tree`, which run or load
/// another configuration), and no subcommand option that writes a file
/// (`--output`), runs a program (`--ext-diff`, `-O`/`--open-files-in-pager`,
/// `--upload-pack`, `--exec`) or names an `ext::` transport. Network
/// subcommands (`ls-remote`, `fetch`, `remote show`) are not here.
pub(super) fn git(args: &[&str]) -> bool {
    let mut i = 0;
    while let Some(a) = args.get(i).filter(|a| a.starts_with('-')) {
        match *a {
            "-C" => i += 2,
            "--no-pager"
            | "-P"
            | "--no-optional-locks"
            | "--literal-pathspecs"
            | "--glob-pathspecs"
            | "--noglob-pathspecs"
            | "--icase-pathspecs"
            | "--no-replace-objects"
            | "--version"
            | "--help"
            | "-h" => i += 1,
            _ => return false,
        }
    }
    let Some(&sub) = args.get(i) else {
        return true; // plain `git`, `git --version`
    };
    let rest = &args[i + 1..];
    const BANNED: &[&str] = &[
        "--output",
        "--ext-diff",
        "--open-files-in-pager",
        "--exec",
        "--upload-pack",
        "--receive-pack",
        "--web",
    ];
    let banned = rest.iter().any(|a| {
        let name = a.split('=').next().unwrap_or(a);
        (name.len() >= 4 && name.starts_with("--") && BANNED.iter().any(|b| b.starts_with(name)))
            // `-O` also inside a cluster: `git grep -iOcmd`.
            || (a.starts_with('-') && !a.starts_with("--") && a.contains('O'))
            || a.contains("ext::")
    });
    if banned {
        return false;
    }
    match sub {
        "status" | "log" | "diff" | "show" | "blame" | "shortlog" | "describe" | "rev-parse"
        | "rev-list" | "ls-files" | "ls-tree" | "cat-file" | "grep" | "show-ref"
        | "for-each-ref" | "merge-base" | "name-rev" | "whatchanged" | "check-ignore"
        | "count-objects" | "var" | "version" | "annotate" | "range-diff" | "cherry"
        | "verify-commit" | "diff-tree" | "diff-files" | "diff-index" | "check-attr"
        | "symbolic-ref" | "show-branch" => {
            // `var -l` lists the person's global config (tokens) too.
            !(sub == "var" && rest.iter().any(|a| a.starts_with('-')))
            // `symbolic-ref NAME REF` sets it, `-d` deletes it.
            && !(sub == "symbolic-ref"
                && (rest.iter().filter(|a| !a.starts_with('-')).count() > 1
                    || rest.iter().any(|a| {
                        a.starts_with('-') && !matches!(*a, "-q" | "--quiet" | "--short")
                    })))
        }
        "help" => rest.iter().all(|a| !a.starts_with('-')),
        "branch" => rest.iter().all(|a| {
            matches!(
                *a,
                "-a" | "-r"
                    | "-v"
                    | "-vv"
                    | "--list"
                    | "-l"
                    | "--show-current"
                    | "--all"
                    | "--remotes"
                    | "--no-color"
                    | "--color"
            ) || a.starts_with("--contains")
                || a.starts_with("--no-contains")
                || a.starts_with("--merged")
                || a.starts_with("--no-merged")
                || a.starts_with("--format")
                || a.starts_with("--sort")
                || a.starts_with("--points-at")
        }),
        "tag" => {
            rest.is_empty()
                || (rest.iter().any(|a| matches!(*a, "-l" | "--list"))
                    && rest.iter().all(|a| {
                        !a.starts_with('-')
                            || matches!(*a, "-l" | "--list" | "-n")
                            || a.starts_with("--sort")
                            || a.starts_with("--contains")
                            || a.starts_with("--format")
                            || a.starts_with("--points-at")
                    }))
        }
        "remote" => {
            rest.is_empty() || matches!(rest, ["-v"] | ["get-url", ..] | ["show", "-n", ..])
        }
        "config" => config_read(rest),
        "stash" => matches!(rest.first(), Some(&("list" | "show"))),
        "worktree" => matches!(rest.first(), Some(&"list")),
        "submodule" => rest.is_empty() || matches!(rest.first(), Some(&("status" | "summary"))),
        "reflog" => rest.is_empty() || matches!(rest.first(), Some(&"show")),
        _ => false,
    }
}

/// `git config` that only reads the repository's own settings: one of
/// `--get NAME [RE]`, `--get-all NAME [RE]`, `--get-regexp RE [RE]`,
/// `--list`, `get NAME`, `list`, with display options. Not `--global`,
/// `--system`, `--file` (other files), not `--` (after it, `--list` is a
/// value to write).
fn config_read(rest: &[&str]) -> bool {
    const DISPLAY: &[&str] = &[
        "--name-only",
        "--show-origin",
        "--show-scope",
        "--null",
        "-z",
        "--bool",
        "--int",
        "--path",
        "--local",
        "--worktree",
        "--no-includes",
    ];
    let mut action: Option<&str> = None;
    let mut operands = 0;
    for a in rest {
        match *a {
            "--get" | "--get-all" | "--get-regexp" | "--list" | "-l" | "get" | "list"
                if action.is_none() && operands == 0 =>
            {
                action = Some(a);
            }
            o if DISPLAY.contains(&o)
                || o.starts_with("--type=")
                || o.starts_with("--default=") => {}
            o if o.starts_with('-') => return false,
            _ => operands += 1,
        }
    }
    // Listing everything reads the person's `~/.gitconfig` too, where
    // tokens live (`url.…insteadOf`, `http.extraHeader`): only the
    // repository's own file may be listed, and single keys not of that kind.
    let own = rest.iter().any(|a| matches!(*a, "--local" | "--worktree"));
    let name = rest
        .iter()
        .find(|a| !a.starts_with('-') && !matches!(**a, "get" | "list"))
        .map(|n| n.to_lowercase())
        .unwrap_or_default();
    let secret = [
        "url.",
        "http",
        "credential",
        "token",
        "password",
        "secret",
        "auth",
        "header",
    ]
    .iter()
    .any(|s| name.contains(s));
    match action {
        Some("--list" | "-l" | "list") => operands == 0 && own,
        Some("--get-regexp") => (1..=2).contains(&operands) && own,
        Some("--get" | "--get-all" | "get") => (1..=2).contains(&operands) && (own || !secret),
        // `git config NAME` reads it; `git config NAME VALUE` sets it.
        None => operands == 1 && (own || !secret),
        _ => false,
    }
}
