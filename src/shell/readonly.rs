//! Commands that only read: the allow list that lets a bash call run without
//! a prompt (when nothing else about it needs one).

/// Never change anything, whatever their arguments (short of redirection,
/// which is judged separately).
const ALWAYS: &[&str] = &[
    "ls",
    "ll",
    "la",
    "dir",
    "cat",
    "bat",
    "head",
    "tail",
    "less",
    "more",
    "wc",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ack",
    "tree",
    "pwd",
    "echo",
    "printf",
    "which",
    "whereis",
    "type",
    "file",
    "stat",
    "du",
    "df",
    "cut",
    "tr",
    "diff",
    "cmp",
    "comm",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "whoami",
    "id",
    "groups",
    "uname",
    "true",
    "false",
    "test",
    "[",
    "seq",
    "nl",
    "od",
    "hexdump",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "md5sum",
    "b2sum",
    "cksum",
    "sum",
    "column",
    "fold",
    "rev",
    "tac",
    "paste",
    "join",
    "expand",
    "unexpand",
    "fmt",
    "strings",
    "ps",
    "pgrep",
    "uptime",
    "free",
    "lscpu",
    "lsblk",
    "nproc",
    "arch",
    "tty",
    "locale",
    "cal",
    "sleep",
    "jq",
    "cd",
    "pushd",
    "popd",
    "wait",
    "printenv",
    "hostname",
    "lsof",
    "vmstat",
    "w",
    "who",
    "last",
    "getconf",
    "ldd",
    "nm",
    "objdump",
    "readelf",
    "size",
    "look",
    "apropos",
    "man",
    "info",
    "help",
    "history",
    "zcat",
    "zgrep",
    "bzcat",
    "xzcat",
    "shasum",
    "numfmt",
    "factor",
    "expr",
    "yes",
    "tldr",
    // Shell builtins that only change the shell's own state.
    "set",
    "shopt",
    "local",
    "declare",
    "typeset",
    "export",
    "read",
    "readonly",
    "alias",
    "unalias",
    "let",
    ":",
    "break",
    "continue",
    "return",
    "exit",
    "shift",
    "getopts",
    "hash",
];

/// Read-only git subcommands.
const GIT: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "blame",
    "shortlog",
    "describe",
    "rev-parse",
    "rev-list",
    "ls-files",
    "ls-tree",
    "ls-remote",
    "cat-file",
    "grep",
    "show-ref",
    "for-each-ref",
    "merge-base",
    "name-rev",
    "whatchanged",
    "check-ignore",
    "count-objects",
    "var",
    "help",
    "version",
    "annotate",
    "range-diff",
    "cherry",
    "verify-commit",
];

/// Whether `name args` only reads. `args` excludes the command name.
pub fn is_read_only(name: &str, args: &[&str]) -> bool {
    if ALWAYS.contains(&name) {
        return match name {
            // `history -c` clears; `date -s` sets; `hostname NAME` renames.
            "history" => args.is_empty() || args.iter().all(|a| a.parse::<u32>().is_ok()),
            "hostname" => args
                .iter()
                .all(|a| a.starts_with('-') && !a.contains('F') && *a != "-b" && *a != "--boot"),
            _ => true,
        };
    }
    let positional = || args.iter().filter(|a| !a.starts_with('-')).count();
    match name {
        "date" => !args.iter().any(|a| *a == "-s" || a.starts_with("--set")),
        "env" => args
            .iter()
            .all(|a| a.starts_with('-') && !matches!(*a, "-S" | "--split-string")),
        // A second operand is an output file.
        "sort" => !args.iter().any(|a| {
            *a == "-o" || a.starts_with("--output") || (a.starts_with("-o") && a.len() > 2)
        }),
        "uniq" | "xxd" | "base64" | "base32" => positional() <= 1 && !args.contains(&"-r"),
        "find" => !args.iter().any(|a| {
            matches!(
                *a,
                "-delete"
                    | "-exec"
                    | "-execdir"
                    | "-ok"
                    | "-okdir"
                    | "-fprint"
                    | "-fprint0"
                    | "-fprintf"
                    | "-fls"
            )
        }),
        "fd" | "fdfind" => !args
            .iter()
            .any(|a| matches!(*a, "-x" | "--exec" | "-X" | "--exec-batch")),
        "sed" => {
            !args.iter().any(|a| {
                *a == "-i"
                    || a.starts_with("--in-place")
                    || (a.starts_with("-i") && !a.starts_with("--"))
            }) && !args.iter().any(|a| sed_writes(a))
        }
        "awk" | "gawk" | "mawk" => !args.iter().any(|a| {
            a.contains("system(") || a.contains('>') || a.contains("| getline") || a.contains("|&")
        }),
        "yq" => !args.iter().any(|a| *a == "-i" || *a == "--inplace"),
        "git" => git_read_only(args),
        "tar" => {
            args.contains(&"--list")
                || args.first().is_some_and(|a| {
                    !a.starts_with("--")
                        && a.contains('t')
                        && !a.contains('x')
                        && !a.contains('c')
                        && !a.contains('r')
                        && !a.contains('u')
                })
        }
        "unzip" => args.contains(&"-l") || args.contains(&"-Z") || args.contains(&"-v"),
        "pip" | "pip3" => matches!(
            args.first(),
            Some(&("list" | "show" | "freeze" | "--version"))
        ),
        "cargo" => matches!(
            args.first(),
            Some(
                &("metadata"
                    | "tree"
                    | "--version"
                    | "-V"
                    | "version"
                    | "search"
                    | "locate-project"
                    | "pkgid"
                    | "verify-project")
            )
        ),
        "npm" | "pnpm" | "yarn" => matches!(
            args.first(),
            Some(
                &("ls"
                    | "list"
                    | "view"
                    | "info"
                    | "outdated"
                    | "--version"
                    | "-v"
                    | "why"
                    | "explain")
            )
        ),
        "go" => matches!(args.first(), Some(&("version" | "env" | "list" | "doc"))),
        "python" | "python3" | "node" | "ruby" | "perl" | "rustc" | "java" | "gcc" | "clang"
        | "make" | "cmake" | "deno" | "bun" => {
            matches!(args, ["--version"] | ["-V"] | ["-v"] | ["version"])
        }
        "docker" | "podman" => matches!(
            args.first(),
            Some(&("ps" | "images" | "version" | "info" | "inspect" | "logs"))
        ),
        "kubectl" => matches!(
            args.first(),
            Some(&("get" | "describe" | "logs" | "version" | "explain" | "top"))
        ),
        "command" => args.first().is_some_and(|a| *a == "-v" || *a == "-V"),
        _ => false,
    }
}

/// A sed script with `w`/`W` (write a file) or `e` (run a command).
fn sed_writes(arg: &str) -> bool {
    if arg.starts_with('-') {
        return false;
    }
    let b = arg.as_bytes();
    (0..b.len()).any(|i| {
        matches!(b[i], b'w' | b'W' | b'e')
            && (i == 0
                || matches!(
                    b[i - 1],
                    b';' | b'/' | b'}' | b'\n' | b' ' | b'0'..=b'9' | b'$'
                ))
            && (i + 1 == b.len() || matches!(b[i + 1], b' ' | b'\n' | b';'))
    })
}

fn git_read_only(args: &[&str]) -> bool {
    // Skip global options; `-C dir` and `-c k=v` take a value.
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') {
        if matches!(
            args[i],
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace"
        ) {
            i += 1;
        }
        i += 1;
    }
    let Some(&sub) = args.get(i) else {
        return true; // plain `git`, `git --version`
    };
    let rest = &args[i + 1..];
    if rest
        .iter()
        .any(|a| a.starts_with("--output") || *a == "--ext-diff")
    {
        return false;
    }
    match sub {
        s if GIT.contains(&s) => true,
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
            ) || a.starts_with("--contains")
                || a.starts_with("--merged")
                || a.starts_with("--no-merged")
                || a.starts_with("--format")
                || a.starts_with("--sort")
        }),
        "tag" => {
            rest.is_empty()
                || rest.iter().all(|a| {
                    *a == "-l"
                        || *a == "--list"
                        || a.starts_with("--sort")
                        || a.starts_with("--contains")
                })
        }
        "remote" => rest.is_empty() || matches!(rest, ["-v"] | ["show", ..] | ["get-url", ..]),
        "config" => rest
            .iter()
            .any(|a| matches!(*a, "--get" | "--get-all" | "--list" | "-l" | "--get-regexp")),
        "stash" => matches!(rest.first(), Some(&("list" | "show"))),
        "worktree" => matches!(rest.first(), Some(&"list")),
        "submodule" => matches!(rest.first(), Some(&("status" | "summary"))) || rest.is_empty(),
        "reflog" => rest.is_empty() || matches!(rest.first(), Some(&"show")),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_judgments() {
        let ro = |cmd: &str| {
            let w: Vec<&str> = cmd.split_whitespace().collect();
            is_read_only(w[0], &w[1..])
        };
        for yes in [
            "ls -la",
            "git status",
            "git log --oneline",
            "git -C sub diff",
            "git branch -a",
            "find . -name x",
            "sed -n 1,5p f",
            "sort f",
            "cargo tree",
            "git",
            "env",
        ] {
            assert!(ro(yes), "{yes}");
        }
        for no in [
            "rm x",
            "git commit -m x",
            "git branch -D x",
            "find . -delete",
            "sed -i s/a/b/ f",
            "sort -o out f",
            "uniq a b",
            "cargo build",
            "history -c",
            "git diff --output=x",
            "date -s 2020",
            "sed 1w out f",
            "npm install",
            "env rm x",
        ] {
            assert!(!ro(no), "{no}");
        }
    }
}
