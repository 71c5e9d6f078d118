//! Programs with a few options, subcommands or operands that would make
//! them write, run or connect: each function says which keep them inert.

use super::{Spec, operands, spec};

pub(super) fn bat(args: &[&str]) -> bool {
    const BAT: Spec = spec(
        "npAPu",
        "lrHm",
        &[
            "plain",
            "number",
            "show-all",
            "unbuffered",
            "list-languages",
            "list-themes",
            "diff",
        ],
        &[
            "language",
            "line-range",
            "highlight-line",
            "style",
            "color",
            "theme",
            "decorations",
            "wrap",
            "tabs",
            "italic-text",
            "file-name",
            "map-syntax",
        ],
    );
    let paging_ok = args.iter().all(|a| match a.strip_prefix("--paging") {
        Some(rest) => rest == "=never",
        None => true,
    });
    let rest: Vec<&str> = args
        .iter()
        .copied()
        .filter(|a| *a != "--paging=never")
        .collect();
    paging_ok && operands(&BAT, &rest).is_some()
}

/// GNU diff follows symlinks when it recurses, unless told not to.
pub(super) fn diff(args: &[&str]) -> bool {
    const DIFF: Spec = spec(
        "abBcdeEfHiNnpqrsStTuvwyZ",
        "CDFILSUWxX",
        &[
            "brief",
            "report-identical-files",
            "context",
            "unified",
            "ed",
            "normal",
            "rcs",
            "side-by-side",
            "left-column",
            "suppress-common-lines",
            "show-c-function",
            "expand-tabs",
            "initial-tab",
            "suppress-blank-empty",
            "new-file",
            "unidirectional-new-file",
            "ignore-case",
            "ignore-file-name-case",
            "no-ignore-file-name-case",
            "ignore-tab-expansion",
            "ignore-trailing-space",
            "ignore-space-change",
            "ignore-all-space",
            "ignore-blank-lines",
            "text",
            "strip-trailing-cr",
            "minimal",
            "speed-large-files",
            "color",
            "no-dereference",
            "recursive",
            "version",
            "help",
        ],
        &[
            "context",
            "unified",
            "show-function-line",
            "label",
            "tabsize",
            "ignore-matching-lines",
            "horizon-lines",
            "color",
            "palette",
            "exclude",
            "exclude-from",
            "starting-file",
            "from-file",
            "to-file",
            "width",
            "line-format",
            "old-line-format",
            "new-line-format",
            "unchanged-line-format",
            "old-group-format",
            "new-group-format",
            "unchanged-group-format",
            "changed-group-format",
        ],
    );
    let recursive = args.iter().any(|a| {
        *a == "--recursive" || (a.starts_with('-') && !a.starts_with("--") && a.contains('r'))
    });
    operands(&DIFF, args).is_some() && (!recursive || args.contains(&"--no-dereference"))
}

/// A second operand is an output file.
pub(super) fn uniq(args: &[&str]) -> bool {
    const UNIQ: Spec = spec(
        "cdDiuz",
        "fsw",
        &[
            "count",
            "repeated",
            "all-repeated",
            "ignore-case",
            "unique",
            "zero-terminated",
            "group",
        ],
        &[
            "skip-fields",
            "skip-chars",
            "check-chars",
            "all-repeated",
            "group",
        ],
    );
    operands(&UNIQ, args).is_some_and(|o| o.len() <= 1)
}

/// A second operand is an output file; `-r` turns a dump back into bytes.
/// xxd matches options by prefix (`-ps` is `-postscript`), so each option
/// must be one of these spellings exactly; a second operand is an output
/// file; `-r` turns a dump back into bytes.
pub(super) fn xxd(args: &[&str]) -> bool {
    const FLAGS: &[&str] = &[
        "-a",
        "-autoskip",
        "-b",
        "-bits",
        "-C",
        "-capitalize",
        "-E",
        "-EBCDIC",
        "-e",
        "-i",
        "-include",
        "-p",
        "-ps",
        "-postscript",
        "-plain",
        "-u",
        "-d",
    ];
    const VALUED: &[&str] = &[
        "-c",
        "-cols",
        "-g",
        "-groupsize",
        "-l",
        "-len",
        "-o",
        "-offset",
        "-s",
        "-seek",
        "-n",
        "-name",
    ];
    let mut operands = 0;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if FLAGS.contains(a) {
            continue;
        }
        if VALUED.contains(a) {
            it.next();
            continue;
        }
        if a.starts_with('-') && *a != "-" {
            return false;
        }
        operands += 1;
    }
    operands <= 1
}

pub(super) fn base64(args: &[&str]) -> bool {
    const B64: Spec = spec(
        "diw",
        "",
        &[
            "decode",
            "ignore-garbage",
            "base64",
            "base64url",
            "base32",
            "base32hex",
            "base16",
            "base2msbf",
            "base2lsbf",
            "z85",
        ],
        &["wrap"],
    );
    operands(&B64, args).is_some_and(|o| o.len() <= 1)
}

/// BSD-style `e` shows other processes' environments (their secrets).
pub(super) fn ps(args: &[&str]) -> bool {
    const VALUED: &[&str] = &[
        "-o", "-O", "-p", "-u", "-U", "-g", "-G", "-t", "-C", "-q", "--sort", "--pid", "--ppid",
        "--user", "--format", "-s", "--sid",
    ];
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if VALUED.contains(a) {
            it.next();
        } else if a.starts_with('-') {
            if matches!(*a, "-E") || a.starts_with("--env") {
                return false;
            }
        } else if a.contains('e') && !a.chars().all(|c| c.is_ascii_digit() || c == ',') {
            // BSD `e` (with anything around it) shows other processes'
            // environments.
            return false;
        }
    }
    true
}

/// Only formats: `-s`/`--set` or an operand not starting with `+` sets
/// the clock.
pub(super) fn date(args: &[&str]) -> bool {
    const DATE: Spec = spec(
        "uRI",
        "dfr",
        &[
            "utc",
            "universal",
            "rfc-email",
            "debug",
            "iso-8601",
            "rfc-2822",
        ],
        &[
            "date",
            "file",
            "reference",
            "rfc-3339",
            "iso-8601",
            "resolution",
        ],
    );
    operands(&DATE, args).is_some_and(|o| o.iter().all(|a| a.starts_with('+')))
}

/// Printing the environment, not running a command with it.
pub(super) fn env(args: &[&str]) -> bool {
    const ENV: Spec = spec(
        "0iv",
        "u",
        &["null", "ignore-environment", "debug"],
        &["unset"],
    );
    operands(&ENV, args).is_some_and(|o| o.is_empty())
}

/// `hostname NAME`, `-F file` and `-b` set the name.
pub(super) fn hostname(args: &[&str]) -> bool {
    const HOSTNAME: Spec = spec(
        "adfiIsAy",
        "",
        &[
            "alias",
            "domain",
            "fqdn",
            "long",
            "ip-address",
            "all-ip-addresses",
            "short",
            "all-fqdns",
        ],
        &[],
    );
    operands(&HOSTNAME, args).is_some_and(|o| o.is_empty())
}

/// `history -c` clears it, `-w`/`-a` write a file, `-d`/`-s` change it.
pub(super) fn history(args: &[&str]) -> bool {
    args.iter().all(|a| a.parse::<u32>().is_ok())
}

/// Page names only: not `-P`/`-H` (run a pager or browser), not a local
/// file (`-l`, a path) whose troff could be anything.
pub(super) fn man(args: &[&str]) -> bool {
    const MAN: Spec = spec("kfwaW", "", &["apropos", "whatis", "where", "all"], &[]);
    operands(&MAN, args).is_some_and(|o| o.iter().all(|a| !a.contains('/')))
}

/// Not `-o`/`--output` or `--dribble` (write files), not a file (`-f`).
pub(super) fn info(args: &[&str]) -> bool {
    const INFO: Spec = spec(
        "aw",
        "k",
        &["all", "where", "location"],
        &["apropos", "index-search"],
    );
    operands(&INFO, args).is_some_and(|o| o.iter().all(|a| !a.contains('/')))
}

/// `command -v x` looks a program up; anything else runs it (the
/// analysis unwraps that form).
pub(super) fn command(args: &[&str]) -> bool {
    matches!(args.first(), Some(&("-v" | "-V")))
}

/// `test -v 'a[$(cmd)]'` evaluates the subscript.
pub(super) fn test(args: &[&str]) -> bool {
    !args.iter().any(|a| matches!(*a, "-v" | "-R"))
}

/// `printf -v 'a[$(cmd)]'` evaluates the subscript (and assigns).
pub(super) fn printf(args: &[&str]) -> bool {
    !args.first().is_some_and(|a| a.starts_with("-v"))
}

/// Options that only make the script stricter or louder; not `-a`
/// (exports every later assignment) or `-k` (assignments anywhere).
pub(super) fn set(args: &[&str]) -> bool {
    const OPTIONS: &[&str] = &[
        "pipefail",
        "errexit",
        "nounset",
        "xtrace",
        "verbose",
        "errtrace",
        "noclobber",
        "posix",
    ];
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if *a == "--" {
            return true;
        }
        let Some(flags) = a.strip_prefix('-').or_else(|| a.strip_prefix('+')) else {
            return false;
        };
        // `-euo pipefail`: the `o` takes the next word.
        let (letters, named) = match flags.strip_suffix('o') {
            Some(rest) => (rest, true),
            None => (flags, false),
        };
        if flags.is_empty() || !letters.chars().all(|c| "euxvEC".contains(c)) {
            return false;
        }
        if named && !it.next().is_some_and(|o| OPTIONS.contains(o)) {
            return false;
        }
    }
    true
}

/// Plain variable names only: a subscript (`a[$(cmd)]`) is evaluated.
/// Plain variable names only: a subscript (`a[$(cmd)]`) is evaluated, and
/// a name like `PATH` or `IFS` changes what later words mean.
/// `nm`/`objdump --plugin x.so` loads code; `objdump -S` prints "source"
/// lines from whatever files the object's debug information names, and
/// `--dwarf=follow-links` opens the files it links to.
pub(super) fn binutils(args: &[&str]) -> bool {
    !args.iter().any(|a| {
        a.starts_with("--plugin")
            || a.starts_with("--source")
            || a.starts_with("--dwarf=follow")
            || a.starts_with("--debug-file-directory")
            || a.starts_with("-W") && a.contains('K')
            || (a.starts_with('-') && !a.starts_with("--") && a.contains('S'))
    })
}

/// A variable a builtin may set without changing what later words mean.
fn plain(a: &str) -> bool {
    !a.is_empty()
        && a.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !crate::shell::variables::runs_code(a)
        && !crate::shell::variables::exported(a)
}

/// `wait -p NAME` sets (or unsets) NAME: `wait -p PATH -n`.
pub(super) fn wait(args: &[&str]) -> bool {
    const WAIT: Spec = spec("nf", "p", &[], &[]);
    let named = args
        .iter()
        .position(|a| a.starts_with('-') && !a.starts_with("--") && a.ends_with('p'))
        .map(|p| args.get(p + 1).copied().unwrap_or(""));
    let glued = args
        .iter()
        .filter(|a| a.starts_with('-') && a.contains('p'))
        .any(|a| !a.ends_with('p'));
    !glued && named.is_none_or(plain) && operands(&WAIT, args).is_some()
}

pub(super) fn read(args: &[&str]) -> bool {
    const READ: Spec = spec("rse", "adnNptui", &[], &[]);
    let array = args
        .iter()
        .position(|a| *a == "-a")
        .and_then(|p| args.get(p + 1));
    operands(&READ, args).is_some_and(|o| o.iter().chain(array).all(|a| plain(a)))
}

/// `jobs -x CMD` runs CMD.
pub(super) fn jobs(args: &[&str]) -> bool {
    args.iter()
        .all(|a| matches!(*a, "-l" | "-n" | "-p" | "-r" | "-s" | "-lp" | "-pl"))
        || args.iter().all(|a| !a.starts_with('-'))
}

pub(super) fn umask(args: &[&str]) -> bool {
    args.iter().all(|a| matches!(*a, "-S" | "-p"))
}

/// Not `-i`/`--inplace`, `--from-file`, or `load`/`env` in the expression.
pub(super) fn yq(args: &[&str]) -> bool {
    const YQ: Spec = spec(
        "rCMPeNj",
        "opI",
        &["no-colors", "colors", "exit-status", "null-input"],
        &["output-format", "input-format", "indent"],
    );
    let Some(ops) = operands(&YQ, args) else {
        return false;
    };
    let ops: Vec<&str> = ops
        .into_iter()
        .skip_while(|o| matches!(*o, "eval" | "e" | "eval-all" | "ea"))
        .collect();
    ops.first().is_none_or(|expr| jq_program_inert(expr))
}

/// A jq (or yq) program that reads nothing but its input: no modules
/// (`import`, `include` read files, `../` and all), no environment, no
/// files by name, no `eval`.
pub(super) fn jq_program_inert(program: &str) -> bool {
    ![
        "import",
        "include",
        "env",
        "load",
        "eval",
        "input_filename",
        "$__loc__",
        "getpath",
        "file",
        "modulemeta",
        "get_search_list",
    ]
    .iter()
    .any(|w| program.contains(w))
}

/// jq: only options known to be inert (an unknown one, `-f FILE` in any
/// cluster, `-L DIR` are not); the program, the first operand even after
/// `--args`, must be inert too (see [`jq_program_inert`]).
pub(super) fn jq(args: &[&str]) -> bool {
    const FLAGS: &str = "nrjascCMSeh0";
    const LONG: &[&str] = &[
        "null-input",
        "raw-input",
        "slurp",
        "compact-output",
        "raw-output",
        "raw-output0",
        "join-output",
        "ascii-output",
        "sort-keys",
        "color-output",
        "monochrome-output",
        "tab",
        "seq",
        "stream",
        "stream-errors",
        "exit-status",
        "unbuffered",
        "args",
        "jsonargs",
        "help",
        "version",
    ];
    let mut i = 0;
    let mut program: Option<&str> = None;
    let mut operands_only = false;
    while let Some(a) = args.get(i) {
        if !operands_only && a.starts_with("--") && a.len() > 2 {
            let (name, glued) = match a[2..].split_once('=') {
                Some((n, _)) => (n, true),
                None => (&a[2..], false),
            };
            match name {
                // NAME VALUE: two words (the file ones are read as paths).
                "arg" | "argjson" | "slurpfile" | "rawfile" | "argfile" if !glued => i += 2,
                "indent" if !glued => i += 1,
                n if LONG.contains(&n) && !glued => {}
                _ => return false,
            }
        } else if *a == "--" {
            operands_only = true;
        } else if !operands_only && a.starts_with('-') && a.len() > 1 {
            if !a[1..].chars().all(|c| FLAGS.contains(c)) {
                return false;
            }
        } else if program.is_none() {
            program = Some(a);
        }
        i += 1;
    }
    program.is_none_or(jq_program_inert)
}

/// Listing only: no extraction or creation, no program (`-I`,
/// `--use-compress-program`, `--to-command`, `--checkpoint-action`,
/// `--info-script`), no remote archive (`host:file`).
pub(super) fn tar(args: &[&str]) -> bool {
    const TAR: Spec = spec(
        "tvzjJZaOw",
        "fCX",
        &[
            "list",
            "verbose",
            "gzip",
            "bzip2",
            "xz",
            "zstd",
            "lzma",
            "auto-compress",
            "to-stdout",
            "wildcards",
            "no-wildcards",
            "numeric-owner",
            "full-time",
        ],
        &[
            "file",
            "exclude",
            "directory",
            "exclude-from",
            "blocking-factor",
        ],
    );
    let (first, rest) = match args.split_first() {
        // `tar tvf x.tar`: the first word's letters are options.
        Some((f, r)) if !f.starts_with('-') => (format!("-{f}"), r),
        Some((f, r)) => (f.to_string(), r),
        None => return false,
    };
    let mut all: Vec<&str> = vec![first.as_str()];
    all.extend(rest);
    let listing = all
        .iter()
        .any(|a| *a == "--list" || (a.starts_with('-') && !a.starts_with("--") && a.contains('t')));
    // `host:file` (also glued: `-tfhost:x`, `--file=host:x`) runs rsh.
    let remote = all.iter().any(|a| a.contains(':')) && !all.contains(&"--force-local");
    listing && !remote && operands(&TAR, &all).is_some()
}

/// Listing, testing or printing to standard output only.
pub(super) fn unzip(args: &[&str]) -> bool {
    const UNZIP: Spec = spec("lvZtpqcz", "x", &[], &[]);
    let shows = args
        .iter()
        .any(|a| a.starts_with('-') && a.contains(['l', 'v', 'Z', 't', 'p', 'c', 'z']));
    shows && operands(&UNZIP, args).is_some()
}

/// Installed packages only: not `--outdated`/`--uptodate` (the index),
/// `--log` (writes), other indexes or caches.
pub(super) fn pip(args: &[&str]) -> bool {
    const PIP: Spec = spec(
        "lfvq",
        "",
        &[
            "local",
            "user",
            "not-required",
            "exclude-editable",
            "include-editable",
            "files",
            "verbose",
            "quiet",
            "no-color",
            "disable-pip-version-check",
            "editable",
        ],
        &["format", "exclude"],
    );
    match args.split_first() {
        Some((&("--version" | "-V"), [])) => true,
        Some((&("list" | "show" | "freeze"), rest)) => operands(&PIP, rest).is_some(),
        _ => false,
    }
}

/// Local queries only (`view`, `outdated` reach the registry); no option
/// that writes (`--logs-dir`, `--cache`) or reads other configuration.
pub(super) fn npm(args: &[&str]) -> bool {
    const NPM: Spec = spec(
        "alp",
        "",
        &[
            "all",
            "json",
            "long",
            "parseable",
            "link",
            "prod",
            "dev",
            "production",
            "unicode",
        ],
        &["depth", "omit", "include"],
    );
    match args.split_first() {
        Some((&("--version" | "-v"), [])) => true,
        Some((&("ls" | "list" | "why" | "explain"), rest)) => operands(&NPM, rest).is_some(),
        _ => false,
    }
}

pub(super) fn docker(args: &[&str]) -> bool {
    matches!(
        args.first(),
        // Not `inspect` or `logs`: containers' environments and logs hold secrets.
        Some(&("ps" | "images" | "version" | "info"))
    )
}

/// Not other credentials (`--kubeconfig`, `--token`, `--server`), not
/// secrets (`get secret`).
pub(super) fn kubectl(args: &[&str]) -> bool {
    let reads = matches!(
        args.first(),
        Some(&("get" | "describe" | "logs" | "version" | "explain" | "top"))
    );
    let other_cluster = args.iter().any(|a| {
        ["--kubeconfig", "--token", "--server", "-s", "--as", "--raw"]
            .iter()
            .any(|o| a == o || a.starts_with(&format!("{o}=")))
    });
    // `get secret`, `get pods,secrets`, `get Secret/x`.
    let secrets = args.iter().any(|a| a.to_lowercase().contains("secret"));
    reads && !other_cluster && !secrets
}

/// `--version` and nothing else: any other use runs the project's code.
pub(super) fn version_only(args: &[&str]) -> bool {
    matches!(
        args,
        ["--version"] | ["-V"] | ["-v"] | ["version"] | ["-version"]
    )
}

/// ls lists; with `-R` and `-L` together it follows links out of the tree.
pub(super) fn ls(args: &[&str]) -> bool {
    let has = |short: char, long: &str| {
        args.iter().any(|a| {
            *a == long || (a.starts_with('-') && !a.starts_with("--") && a.contains(short))
        })
    };
    !(has('R', "--recursive") && has('L', "--dereference"))
}
