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

mod programs;
mod rich;
mod table;

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

pub(super) const fn spec(
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

pub(super) const fn numeric(s: Spec) -> Spec {
    Spec { numeric: true, ..s }
}

pub(super) enum Options {
    /// No option of the program writes, runs or connects (audited).
    Any,
    Only(Spec),
    /// Rules of their own, below.
    Custom(fn(&[&str]) -> bool),
}

pub(super) struct Entry {
    programs: &'static [&'static str],
    options: Options,
}

pub(super) const fn any(programs: &'static [&'static str]) -> Entry {
    Entry {
        programs,
        options: Options::Any,
    }
}

pub(super) const fn only(programs: &'static [&'static str], s: Spec) -> Entry {
    Entry {
        programs,
        options: Options::Only(s),
    }
}

pub(super) const fn custom(programs: &'static [&'static str], f: fn(&[&str]) -> bool) -> Entry {
    Entry {
        programs,
        options: Options::Custom(f),
    }
}

/// Whether `name args` is inert. `args` excludes the command name.
pub fn is_read_only(name: &str, args: &[&str]) -> bool {
    static BY_NAME: std::sync::LazyLock<std::collections::HashMap<&'static str, &'static Entry>> =
        std::sync::LazyLock::new(|| {
            table::LIST
                .iter()
                .flat_map(|e| e.programs.iter().map(move |p| (*p, e)))
                .collect()
        });
    let Some(entry) = BY_NAME.get(name) else {
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
    table::LIST
        .iter()
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
