//! The read-only allow list: programs that run without a prompt when every
//! word of the call is known to be inert (and no other rule objects).
//!
//! The rule, for auditing: **an entry says which options keep the program
//! inert; anything else asks.** "Inert" means it cannot write a file, run
//! another program, or reach the network, whatever files it is given
//! (which files it reads is the path rules' business, not this table's).
//! Entries were checked option by option against the program's manual and
//! the GTFOBins catalogue; where a program's options are all inert the
//! entry says [`Options::Any`] and the comment says why.
//!
//! GNU programs accept unambiguous abbreviations of long options
//! (`--out` for `--output`); allow lists compare whole names, so an
//! abbreviation asks, which is the safe direction.

use super::scripts::{awk_program_inert, sed_script_inert};

/// The options a program may be given and stay inert.
#[derive(Clone, Copy)]
pub(super) struct Spec {
    /// Short options without a value.
    short: &'static str,
    /// Short options that take a value (rest of the cluster or next word).
    short_valued: &'static str,
    long: &'static [&'static str],
    /// Long options that take a value (`--x=v` or `--x v`).
    long_valued: &'static [&'static str],
    /// `-5` (a count, for head/tail/grep) is an option.
    numeric: bool,
}

const fn spec(
    short: &'static str,
    short_valued: &'static str,
    long: &'static [&'static str],
    long_valued: &'static [&'static str],
) -> Spec {
    Spec {
        short,
        short_valued,
        long,
        long_valued,
        numeric: false,
    }
}

const fn numeric(s: Spec) -> Spec {
    Spec { numeric: true, ..s }
}

enum Options {
    /// No option of the program writes, runs or connects (audited).
    Any,
    Only(Spec),
    /// Rules of their own, below.
    Custom(fn(&[&str]) -> bool),
}

struct Entry {
    programs: &'static [&'static str],
    options: Options,
}

const fn any(programs: &'static [&'static str]) -> Entry {
    Entry {
        programs,
        options: Options::Any,
    }
}

const fn only(programs: &'static [&'static str], s: Spec) -> Entry {
    Entry {
        programs,
        options: Options::Only(s),
    }
}

const fn custom(programs: &'static [&'static str], f: fn(&[&str]) -> bool) -> Entry {
    Entry {
        programs,
        options: Options::Custom(f),
    }
}

const GREP: Spec = numeric(spec(
    "EFGPiyvwxczLlmoqsbHhnTZUarIV",
    "efmABCdD",
    &[
        "extended-regexp",
        "fixed-strings",
        "basic-regexp",
        "perl-regexp",
        "ignore-case",
        "no-ignore-case",
        "invert-match",
        "word-regexp",
        "line-regexp",
        "count",
        "color",
        "colour",
        "files-without-match",
        "files-with-matches",
        "only-matching",
        "quiet",
        "silent",
        "no-messages",
        "byte-offset",
        "with-filename",
        "no-filename",
        "line-number",
        "line-buffered",
        "initial-tab",
        "null",
        "null-data",
        "text",
        "recursive",
        "version",
        "help",
    ],
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
        "color",
        "colour",
    ],
));

const RG: Spec = numeric(spec(
    "iIsSwxvcClnNHoqaFUPuz0",
    "eEfgtTABCmjMrd",
    &[
        "files",
        "files-with-matches",
        "files-without-match",
        "count",
        "count-matches",
        "ignore-case",
        "smart-case",
        "case-sensitive",
        "word-regexp",
        "line-regexp",
        "invert-match",
        "fixed-strings",
        "hidden",
        "no-hidden",
        "no-ignore",
        "no-ignore-vcs",
        "no-ignore-parent",
        "no-ignore-dot",
        "no-ignore-global",
        "no-ignore-files",
        "no-ignore-exclude",
        "unrestricted",
        "line-number",
        "no-line-number",
        "with-filename",
        "no-filename",
        "heading",
        "no-heading",
        "only-matching",
        "quiet",
        "json",
        "vimgrep",
        "column",
        "no-column",
        "byte-offset",
        "trim",
        "null",
        "null-data",
        "multiline",
        "multiline-dotall",
        "pcre2",
        "text",
        "binary",
        "search-zip",
        "stats",
        "no-messages",
        "passthru",
        "crlf",
        "type-list",
        "one-file-system",
        "include-zero",
        "no-unicode",
        "pretty",
        "max-columns-preview",
        "no-config",
        "version",
        "help",
    ],
    &[
        "regexp",
        "file",
        "glob",
        "iglob",
        "type",
        "type-not",
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
        "color",
        "colors",
        "encoding",
        "engine",
        "ignore-file",
        "path-separator",
        "context-separator",
        "field-match-separator",
        "max-columns",
    ],
));

const SUMS: Spec = spec(
    "btz",
    "la",
    &["binary", "text", "tag", "zero", "untagged"],
    &["length", "algorithm"],
);

const LIST: &[Entry] = &[
    // Listing, metadata and plain reading: no option of these writes,
    // runs a program or connects (GNU coreutils and util-linux manuals).
    any(&[
        "ls", "dir", "vdir", "cat", "tac", "nl", "cut", "paste", "join", "expand", "unexpand",
        "fold", "fmt", "rev", "column", "comm", "cmp", "od", "hexdump", "strings", "basename",
        "dirname", "realpath", "readlink", "pwd", "whoami", "id", "groups", "uname", "nproc",
        "arch", "tty", "locale", "cal", "uptime", "free", "lscpu", "lsblk", "df", "stat", "echo",
        "seq", "factor", "numfmt", "expr", "yes", "true", "false", "sleep", "printenv", "getconf",
        "look", "tr", "type", "which", "whereis", "w", "who", "vmstat", "pgrep", "lsof", "nm",
        "readelf", "objdump", "size", "zcat", "bzcat", "xzcat", "jq",
    ]),
    // Shell builtins that change nothing (`cd` is followed by the analysis).
    any(&[
        "cd", "pushd", "popd", "dirs", "wait", "jobs", "times", "caller", ":", "break", "continue",
        "return", "exit", "shift", "help",
    ]),
    only(
        &["head"],
        numeric(spec(
            "qvz",
            "cn",
            &["quiet", "silent", "verbose", "zero-terminated"],
            &["bytes", "lines"],
        )),
    ),
    only(
        &["tail"],
        numeric(spec(
            "fFqvz",
            "cns",
            &[
                "follow",
                "retry",
                "quiet",
                "silent",
                "verbose",
                "zero-terminated",
            ],
            &[
                "bytes",
                "lines",
                "follow",
                "pid",
                "sleep-interval",
                "max-unchanged-stats",
            ],
        )),
    ),
    // Not `--files0-from`: the paths it reads come from a file.
    only(
        &["wc"],
        spec(
            "cmlLw",
            "",
            &["bytes", "chars", "lines", "max-line-length", "words"],
            &["total"],
        ),
    ),
    // Not `-R`/`--dereference-recursive`: it follows symlinks out of the tree.
    only(&["grep", "egrep", "fgrep", "zgrep"], GREP),
    // Not `--pre`/`--pre-glob` (run a program on each file), `-L`/`--follow`,
    // `--hostname-bin` (runs a program).
    only(&["rg"], RG),
    // Not `--pager` (runs a program) or `-f`/`--follow`.
    only(
        &["ag"],
        numeric(spec(
            "iQwvcClLnoSsUuat",
            "GgABCm",
            &[
                "ignore-case",
                "literal",
                "word-regexp",
                "invert-match",
                "count",
                "files-with-matches",
                "files-without-matches",
                "line-numbers",
                "only-matching",
                "smart-case",
                "case-sensitive",
                "hidden",
                "unrestricted",
                "all-text",
                "nocolor",
                "noheading",
                "vimgrep",
                "stats",
            ],
            &[
                "file-search-regex",
                "after",
                "before",
                "context",
                "max-count",
                "depth",
            ],
        )),
    ),
    // Not `--pager`, `--output` (a Perl expression), `--follow`.
    only(
        &["ack"],
        numeric(spec(
            "iIwvclLnohHfgsQ",
            "ABCmt",
            &[
                "ignore-case",
                "smart-case",
                "word-regexp",
                "invert-match",
                "count",
                "files-with-matches",
                "files-without-matches",
                "literal",
                "nocolor",
                "noheading",
                "nofilter",
                "nopager",
                "sort-files",
            ],
            &[
                "type",
                "after-context",
                "before-context",
                "context",
                "max-count",
            ],
        )),
    ),
    // Not `--pager`; `--paging` only as `never`.
    custom(&["bat", "batcat"], bat),
    // Not `-o`/`-O` (log to a file), `-k` (key file), `+cmd` (commands).
    only(
        &["less"],
        spec(
            "NRSXFiIMmnrsq",
            "x",
            &[
                "LINE-NUMBERS",
                "RAW-CONTROL-CHARS",
                "chop-long-lines",
                "no-init",
                "quit-if-one-screen",
                "ignore-case",
                "quiet",
            ],
            &["tabs"],
        ),
    ),
    only(&["more"], spec("dlfpcsu", "n", &[], &["lines"])),
    // Not `-o` (writes its output to a file), `-R` (runs itself with
    // `-o` in every directory), `-l` (follows symlinks).
    only(
        &["tree"],
        spec(
            "adfixpsugDFvtcrUNQCAShJX",
            "LPI",
            &[
                "noreport",
                "dirsfirst",
                "filesfirst",
                "gitignore",
                "prune",
                "du",
                "si",
                "matchdirs",
                "ignore-case",
                "info",
                "version",
                "help",
            ],
            &["charset", "filelimit", "timefmt", "sort"],
        ),
    ),
    // Not `-C` (compiles a magic file, writing it), `-f` (names from a
    // file), `-p` (resets access times).
    only(
        &["file"],
        spec(
            "bcEhiklLNnrsvzZ0",
            "eFmP",
            &[
                "brief",
                "mime",
                "mime-type",
                "mime-encoding",
                "dereference",
                "no-dereference",
                "uncompress",
                "uncompress-noreport",
                "keep-going",
                "special-files",
                "no-pad",
                "print0",
                "extension",
                "apple",
                "raw",
            ],
            &[
                "separator",
                "exclude",
                "exclude-quiet",
                "magic-file",
                "parameter",
            ],
        ),
    ),
    // Not `-L`/`--dereference` (follows symlinks out of the tree) or
    // `--files0-from`.
    only(
        &["du"],
        spec(
            "0abcDhHklmsSxP",
            "BdtX",
            &[
                "null",
                "all",
                "apparent-size",
                "bytes",
                "total",
                "dereference-args",
                "human-readable",
                "inodes",
                "no-dereference",
                "separate-dirs",
                "si",
                "summarize",
                "one-file-system",
                "count-links",
            ],
            &[
                "max-depth",
                "threshold",
                "time",
                "time-style",
                "exclude",
                "exclude-from",
                "block-size",
            ],
        ),
    ),
    custom(&["diff"], diff),
    // Not `-o`/`--output`, `-T` (temporary files elsewhere),
    // `--compress-program` (runs a program), `--files0-from`.
    only(
        &["sort"],
        spec(
            "bdfgiMhnRrVcCmsuz",
            "ktS",
            &[
                "ignore-leading-blanks",
                "dictionary-order",
                "ignore-case",
                "general-numeric-sort",
                "ignore-nonprinting",
                "month-sort",
                "human-numeric-sort",
                "numeric-sort",
                "random-sort",
                "reverse",
                "version-sort",
                "check",
                "merge",
                "stable",
                "unique",
                "zero-terminated",
                "debug",
            ],
            &[
                "key",
                "field-separator",
                "buffer-size",
                "parallel",
                "sort",
                "random-source",
                "check",
            ],
        ),
    ),
    custom(&["uniq"], uniq),
    custom(&["xxd"], xxd),
    custom(&["base64", "base32", "basenc"], base64),
    // Not `-c`/`--check`: the files it reads are named inside a file.
    only(
        &[
            "md5sum",
            "sha1sum",
            "sha224sum",
            "sha256sum",
            "sha384sum",
            "sha512sum",
            "b2sum",
            "cksum",
            "sum",
            "shasum",
        ],
        SUMS,
    ),
    custom(&["ps"], ps),
    custom(&["date"], date),
    custom(&["env"], env),
    custom(&["hostname"], hostname),
    custom(&["history"], history),
    custom(&["man"], man),
    custom(&["info"], info),
    custom(&["command"], command),
    custom(&["test", "["], test),
    custom(&["printf"], printf),
    custom(&["umask"], umask),
    custom(&["set"], set),
    custom(&["read"], read),
    custom(&["find"], find),
    custom(&["fd", "fdfind"], fd),
    custom(&["sed"], sed),
    custom(&["awk", "gawk", "mawk", "nawk"], awk),
    custom(&["yq"], yq),
    custom(&["git"], git),
    custom(&["tar"], tar),
    custom(&["unzip"], unzip),
    custom(&["pip", "pip3"], pip),
    custom(&["npm"], npm),
    custom(&["docker", "podman"], docker),
    custom(&["kubectl"], kubectl),
    custom(
        &[
            "python", "python3", "node", "ruby", "perl", "rustc", "cargo", "java", "gcc", "clang",
            "make", "cmake", "deno", "bun",
        ],
        version_only,
    ),
];

/// Whether `name args` is inert. `args` excludes the command name.
pub fn is_read_only(name: &str, args: &[&str]) -> bool {
    let Some(entry) = LIST.iter().find(|e| e.programs.contains(&name)) else {
        return false;
    };
    match &entry.options {
        Options::Any => true,
        Options::Only(spec) => operands(spec, args).is_some(),
        Options::Custom(f) => f(args),
    }
}

/// Programs on the list (for the test that no program has two entries).
#[cfg(test)]
pub(super) fn programs() -> Vec<&'static str> {
    LIST.iter()
        .flat_map(|e| e.programs.iter().copied())
        .collect()
}

/// The operands of `args` when every option is in `spec`; `None` when an
/// option is not.
pub(super) fn operands<'a>(spec: &Spec, args: &[&'a str]) -> Option<Vec<&'a str>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        i += 1;
        if a == "--" {
            out.extend(&args[i..]);
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            if spec.long_valued.contains(&name) {
                if !inline && !spec.long.contains(&name) {
                    i += 1; // the value
                }
            } else if !spec.long.contains(&name) || inline {
                return None;
            }
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            let cluster = &a[1..];
            if spec.numeric && cluster.chars().all(|c| c.is_ascii_digit()) {
                continue;
            }
            for (k, c) in cluster.char_indices() {
                if spec.short_valued.contains(c) {
                    if k + c.len_utf8() == cluster.len() {
                        i += 1; // the value is the next word
                    }
                    break;
                }
                if !spec.short.contains(c) {
                    return None;
                }
            }
            continue;
        }
        out.push(a);
    }
    Some(out)
}

fn bat(args: &[&str]) -> bool {
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
fn diff(args: &[&str]) -> bool {
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
fn uniq(args: &[&str]) -> bool {
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
fn xxd(args: &[&str]) -> bool {
    const XXD: Spec = spec("bCeEipsuda", "clgosnR", &[], &[]);
    operands(&XXD, args).is_some_and(|o| o.len() <= 1)
}

fn base64(args: &[&str]) -> bool {
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
fn ps(args: &[&str]) -> bool {
    args.iter().all(|a| {
        if a.starts_with('-') {
            !matches!(*a, "-E") && !a.starts_with("--env")
        } else {
            !a.contains('e') || a.chars().any(|c| !c.is_ascii_alphabetic())
        }
    })
}

/// Only formats: `-s`/`--set` or an operand not starting with `+` sets
/// the clock.
fn date(args: &[&str]) -> bool {
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
fn env(args: &[&str]) -> bool {
    const ENV: Spec = spec(
        "0iv",
        "u",
        &["null", "ignore-environment", "debug"],
        &["unset"],
    );
    operands(&ENV, args).is_some_and(|o| o.is_empty())
}

/// `hostname NAME`, `-F file` and `-b` set the name.
fn hostname(args: &[&str]) -> bool {
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
fn history(args: &[&str]) -> bool {
    args.iter().all(|a| a.parse::<u32>().is_ok())
}

/// Page names only: not `-P`/`-H` (run a pager or browser), not a local
/// file (`-l`, a path) whose troff could be anything.
fn man(args: &[&str]) -> bool {
    const MAN: Spec = spec("kfwaW", "", &["apropos", "whatis", "where", "all"], &[]);
    operands(&MAN, args).is_some_and(|o| o.iter().all(|a| !a.contains('/')))
}

/// Not `-o`/`--output` or `--dribble` (write files), not a file (`-f`).
fn info(args: &[&str]) -> bool {
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
fn command(args: &[&str]) -> bool {
    matches!(args.first(), Some(&("-v" | "-V")))
}

/// `test -v 'a[$(cmd)]'` evaluates the subscript.
fn test(args: &[&str]) -> bool {
    !args.iter().any(|a| matches!(*a, "-v" | "-R"))
}

/// `printf -v 'a[$(cmd)]'` evaluates the subscript (and assigns).
fn printf(args: &[&str]) -> bool {
    !args.first().is_some_and(|a| a.starts_with("-v"))
}

/// Options that only make the script stricter or louder; not `-a`
/// (exports every later assignment) or `-k` (assignments anywhere).
fn set(args: &[&str]) -> bool {
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
fn read(args: &[&str]) -> bool {
    const READ: Spec = spec("rsea", "dnNptui", &[], &[]);
    let identifier =
        |a: &str| !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    operands(&READ, args).is_some_and(|o| o.iter().all(|a| identifier(a)))
}

fn umask(args: &[&str]) -> bool {
    args.iter().all(|a| matches!(*a, "-S" | "-p"))
}

/// Predicates that only test or print (with how many words they take).
const FIND_PREDICATES: &[(&str, usize)] = &[
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
fn find(args: &[&str]) -> bool {
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
fn fd(args: &[&str]) -> bool {
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
fn sed(args: &[&str]) -> bool {
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
fn awk(args: &[&str]) -> bool {
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

/// Not `-i`/`--inplace`, `--from-file`, or `load`/`env` in the expression.
fn yq(args: &[&str]) -> bool {
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
    ops.first()
        .is_none_or(|expr| !expr.contains("load") && !expr.contains("env"))
}

/// Subcommands that only read, with the global options that keep git inert
/// (not `-c`, `--exec-path`, `--git-dir`/`--work-tree`, which run or load
/// another configuration), and no subcommand option that writes a file
/// (`--output`), runs a program (`--ext-diff`, `-O`/`--open-files-in-pager`,
/// `--upload-pack`, `--exec`) or names an `ext::` transport. Network
/// subcommands (`ls-remote`, `fetch`, `remote show`) are not here.
fn git(args: &[&str]) -> bool {
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
            || a.starts_with("-O")
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
            // `symbolic-ref NAME REF` sets it.
            !(sub == "symbolic-ref" && rest.iter().filter(|a| !a.starts_with('-')).count() > 1)
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
        "config" => {
            let reads = rest.iter().any(|a| {
                matches!(
                    *a,
                    "--get"
                        | "--get-all"
                        | "--list"
                        | "-l"
                        | "--get-regexp"
                        | "--get-urlmatch"
                        | "get"
                        | "list"
                )
            });
            let writes = rest.iter().any(|a| {
                matches!(
                    *a,
                    "--add"
                        | "--unset"
                        | "--unset-all"
                        | "--replace-all"
                        | "--rename-section"
                        | "--remove-section"
                        | "-e"
                        | "--edit"
                        | "set"
                        | "unset"
                        | "edit"
                        | "rename-section"
                        | "remove-section"
                )
            });
            reads && !writes
        }
        "stash" => matches!(rest.first(), Some(&("list" | "show"))),
        "worktree" => matches!(rest.first(), Some(&"list")),
        "submodule" => rest.is_empty() || matches!(rest.first(), Some(&("status" | "summary"))),
        "reflog" => rest.is_empty() || matches!(rest.first(), Some(&"show")),
        _ => false,
    }
}

/// Listing only: no extraction or creation, no program (`-I`,
/// `--use-compress-program`, `--to-command`, `--checkpoint-action`,
/// `--info-script`), no remote archive (`host:file`).
fn tar(args: &[&str]) -> bool {
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
    let remote = all.iter().any(|a| a.contains(':') && !a.starts_with('-'));
    listing && !remote && operands(&TAR, &all).is_some()
}

/// Listing, testing or printing to standard output only.
fn unzip(args: &[&str]) -> bool {
    const UNZIP: Spec = spec("lvZtpqcz", "x", &[], &[]);
    let shows = args
        .iter()
        .any(|a| a.starts_with('-') && a.contains(['l', 'v', 'Z', 't', 'p', 'c', 'z']));
    shows && operands(&UNZIP, args).is_some()
}

fn pip(args: &[&str]) -> bool {
    matches!(
        args.first(),
        Some(&("list" | "show" | "freeze" | "--version" | "-V"))
    ) && !args
        .iter()
        .any(|a| a.starts_with("--python") || *a == "--require-virtualenv")
}

/// Local queries only (`view`, `outdated` reach the registry).
fn npm(args: &[&str]) -> bool {
    matches!(
        args.first(),
        Some(&("ls" | "list" | "why" | "explain" | "--version" | "-v"))
    ) && !args
        .iter()
        .any(|a| a.starts_with("--registry") || a.starts_with("--userconfig"))
}

fn docker(args: &[&str]) -> bool {
    matches!(
        args.first(),
        Some(&("ps" | "images" | "version" | "info" | "inspect" | "logs"))
    )
}

/// Not other credentials (`--kubeconfig`, `--token`, `--server`), not
/// secrets (`get secret`).
fn kubectl(args: &[&str]) -> bool {
    let reads = matches!(
        args.first(),
        Some(&("get" | "describe" | "logs" | "version" | "explain" | "top"))
    );
    let other_cluster = args.iter().any(|a| {
        ["--kubeconfig", "--token", "--server", "-s", "--as", "--raw"]
            .iter()
            .any(|o| a == o || a.starts_with(&format!("{o}=")))
    });
    let secrets = args.iter().any(|a| a.starts_with("secret"));
    reads && !other_cluster && !secrets
}

/// `--version` and nothing else: any other use runs the project's code.
fn version_only(args: &[&str]) -> bool {
    matches!(
        args,
        ["--version"] | ["-V"] | ["-v"] | ["version"] | ["-version"]
    )
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
            "find . -type f -name *.rs -print",
            "sed -n 1,5p f",
            "sed -e s/a/b/ -e 3q f",
            "sort -u f",
            "sort -k 2 -t , f",
            "head -5 f",
            "grep -rn x src",
            "rg -n --hidden x",
            "git",
            "env",
            "awk {print} f",
            "tar tzf x.tgz",
            "tar -tvf x.tar",
            "date +%s",
            "wc -l f",
            "unzip -l x.zip",
            "xargs",
        ]
        .iter()
        .filter(|c| !c.starts_with("xargs"))
        {
            assert!(ro(yes), "{yes}");
        }
        for no in [
            "rm x",
            "git commit -m x",
            "git branch -D x",
            "find . -delete",
            "find . -fprint out",
            "find -L . -name x",
            "find . -exec cat {} ;",
            "sed -i s/a/b/ f",
            "sed -Ei s/a/b/ f",
            "sed --in-place=.bak s/a/b/ f",
            "sed 1w out f",
            "sed s/a/b/w out f",
            "sed s/a/id/e f",
            "sed -f script.sed f",
            "sort -o out f",
            "sort -uo out f",
            "sort --output=out f",
            "sort --out=x f",
            "sort --compress-program=sh f",
            "uniq a b",
            "cargo build",
            "cargo metadata",
            "history -c",
            "git diff --output=x",
            "git diff --outp=x",
            "git -c core.pager=sh log",
            "git grep --open-files-in-pager=sh x",
            "git grep -Osh x",
            "git ls-remote --upload-pack=sh origin",
            "git ls-remote origin",
            "git clone ext::sh",
            "date -s 2020",
            "date 0101",
            "npm install",
            "npm view x",
            "env rm x",
            "rg --pre sh x",
            "rg -L x",
            "grep -R x .",
            "fd -x rm",
            "fd --exec rm",
            "tar xzf x.tgz",
            "tar -tf x.tar --to-command=sh",
            "tar -tf host:x.tar",
            "tar -t -I sh -f x",
            "info -o out x",
            "man -P sh ls",
            "less -o log f",
            "wc --files0-from=list",
            "sha256sum -c sums",
            "tree -o out",
            "file -C -m x",
            "awk {system(\"id\")} f",
            "printf -v x %s y",
            "test -v x",
            "ps eww",
            "set -a",
            "set -o allexport",
            "read 'a[$(id)]'",
            "declare x=1",
            "alias ls=rm",
            "go version",
            "yarn --version",
        ] {
            assert!(!ro(no), "{no}");
        }
    }

    #[test]
    fn no_program_has_two_entries() {
        let mut all = programs();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "a program is listed twice");
    }
}
