//! What a command's words name: paths (after brace and glob expansion,
//! resolved through symlinks), whether it reads or writes them, whole
//! trees it walks, hosts it reaches. A path the analysis cannot resolve is
//! never taken to be inside the project.

use std::path::{Path, PathBuf};

use super::analyze::{Analyzer, Role};
use super::danger::short;
use super::parse::{Command, Word};
use super::paths::Place;
use super::words::{expand_braces, glob_split, has_glob, pattern_text};
use crate::permission::RiskAssessment;

/// Directory entries a glob may list before the analysis gives up on it.
const MAX_GLOB_ENTRIES: usize = 2_000;

/// Programs whose first operand is a pattern or a program, not a path
/// (unless the pattern came with `-e`/`-f`).
const PATTERN_FIRST: &[&str] = &[
    "grep", "egrep", "fgrep", "rg", "ag", "ack", "sed", "awk", "gawk", "mawk", "nawk", "jq", "yq",
    "zgrep",
];

/// Commands whose arguments are data, never paths.
const DATA_ONLY: &[&str] = &[
    "echo", "printf", "true", "false", "seq", "sleep", "yes", "expr", "test", "[", "factor",
    "numfmt", ":", "alias", "trap", "eval", "export", "declare", "local", "typeset", "readonly",
    "unset", "set", "shopt", "let", "read", "kill", "pkill", "pgrep", "killall", "exit", "return",
    "shift", "type", "which", "command", "help", "hash", "wait", "jobs", "ps",
];

/// The role of the operands of a program that is not on the read-only
/// list: which ones it writes.
fn role(name: &str, args: &[&str], index: usize, last: Option<usize>, read_only: bool) -> Role {
    if read_only {
        return Role::Read;
    }
    match name {
        "rm" | "rmdir" | "unlink" | "shred" | "touch" | "mkdir" | "truncate" | "chmod"
        | "chown" | "chgrp" | "tee" => Role::Write,
        // What is moved becomes readable where it lands.
        "mv" => Role::Both,
        "cp" | "install" | "ln" | "rsync" | "scp" => {
            if Some(index) == last {
                Role::Write
            } else {
                Role::Read
            }
        }
        "sed" | "perl" | "ruby" if short(args, 'i') => Role::Write,
        "cat" | "head" | "tail" | "grep" | "less" | "more" | "wc" | "sort" | "diff" | "base64"
        | "xxd" | "od" | "strings" | "file" | "stat" => Role::Read,
        _ => Role::Both,
    }
}

/// Whether the program walks the directories it is given (for contents).
fn recursive(name: &str, args: &[&str]) -> bool {
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
            let p = super::danger::positional("git", args);
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

/// The directory a word with an expansion certainly lies under: the part
/// before the first expansion, up to its last `/` (`~/.ssh/$f` → `~/.ssh/`).
fn static_dir(text: &str) -> Option<String> {
    let (lead, body) = match text.strip_prefix("$HOME") {
        Some(rest) => ("$HOME", rest),
        None => ("", text),
    };
    let cut = body
        .find(['$', '`', '{', '*', '?', '['])
        .unwrap_or(body.len());
    let dir = &body[..cut];
    let slash = dir.rfind('/')?;
    let out = format!("{lead}{}", &dir[..=slash]);
    (out.len() > 1 || out == "/").then_some(out)
}

/// The host of a URL-like word: `https://h/…`, `git@h:repo`.
fn host(word: &str) -> Option<String> {
    if let Some((_, rest)) = word.split_once("://") {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
        let host = authority.rsplit('@').next().unwrap_or(authority);
        let host = if host.starts_with('[') {
            host.split(']').next().map(|h| format!("{h}]"))?
        } else {
            host.split(':').next().unwrap_or(host).to_string()
        };
        return (!host.is_empty()).then_some(host);
    }
    let (user_host, _) = word.split_once(':')?;
    let (_, host) = user_host.rsplit_once('@')?;
    (host.contains('.') || host == "localhost").then(|| host.to_string())
}

impl Analyzer<'_> {
    /// Paths named by redirections: places judged, writes inside the
    /// workspace kept for the scope, writes and reads outside kept for the
    /// prefix.
    pub(super) fn redirects(
        &mut self,
        cmd: &Command,
        cwd: Option<&Path>,
        outside: &mut Vec<PathBuf>,
        files: &mut Vec<PathBuf>,
    ) {
        for r in &cmd.redirects {
            if r.heredoc.is_some() || r.op == "<<<" {
                continue;
            }
            let target = &r.target;
            // `>(cmd)` / `<(cmd)` are commands of their own.
            if target.text.starts_with(">(") || target.text.starts_with("<(") {
                continue;
            }
            let writes = r.writes();
            let is_fd =
                r.op.ends_with('&') && target.text.chars().all(|c| c.is_ascii_digit() || c == '-');
            if is_fd || (r.op == ">&" && target.text.chars().all(|c| c.is_ascii_digit())) {
                continue;
            }
            let path = if target.dynamic || target.is_brace() || target.is_glob() {
                None
            } else {
                self.env.resolve(&target.text, cwd)
            };
            let role = if writes { Role::Write } else { Role::Read };
            // bash's own network files: `< /dev/tcp/host/port`.
            if let Some(rest) = target
                .text
                .strip_prefix("/dev/tcp/")
                .or_else(|| target.text.strip_prefix("/dev/udp/"))
            {
                self.flag(RiskAssessment::medium("connects to another machine"));
                self.cur_hosts
                    .push(rest.split('/').next().unwrap_or(rest).to_lowercase());
                continue;
            }
            let Some(p) = path else {
                self.require(RiskAssessment::medium(
                    "redirects to a file only known at run time",
                ));
                match static_dir(&target.text).and_then(|d| self.env.resolve(&d, cwd)) {
                    Some(dir) => self.note_tree(dir, role),
                    None => self.unknown_path(role),
                }
                continue;
            };
            let place = self.env.place(&p);
            match place {
                Place::Harmless => continue,
                Place::Secret(why) => self.flag(RiskAssessment::high(format!(
                    "{} {why} ({})",
                    if writes { "overwrites" } else { "reads" },
                    p.display()
                ))),
                Place::Persistence(why) if writes => self.flag(RiskAssessment::high(format!(
                    "writes {why} ({}), which runs code later",
                    p.display()
                ))),
                Place::System if writes => {
                    let what = if p.starts_with("/dev") {
                        "writes a raw device"
                    } else {
                        "writes a system file"
                    };
                    self.flag(RiskAssessment::high(format!("{what} ({})", p.display())));
                }
                _ => {}
            }
            let inside = p.starts_with(&self.env.workspace)
                && !matches!(place, Place::Persistence(_) | Place::Ancestor(_));
            if inside {
                if writes {
                    self.flag(RiskAssessment::medium(format!("writes {}", p.display())));
                    files.push(p.clone());
                }
            } else {
                self.flag(RiskAssessment::medium(format!(
                    "uses a path outside the project ({})",
                    p.display()
                )));
                outside.push(p.clone());
            }
            self.note_path(p, role);
        }
    }

    /// Generic path rules for a command's arguments; returns the paths
    /// outside the workspace.
    pub(super) fn check_paths(
        &mut self,
        name: &str,
        words: &[Word],
        cwd: Option<&Path>,
        read_only: bool,
    ) -> Vec<PathBuf> {
        let args: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        let mut outside = Vec::new();
        if DATA_ONLY.contains(&name) {
            return outside;
        }
        let mut skip_next = false;
        let mut pattern_pending = PATTERN_FIRST.contains(&name)
            && !args
                .iter()
                .any(|a| matches!(*a, "-e" | "-f" | "--regexp" | "--file" | "--expression"));
        // `ln TARGET LINK`: only the link is written; the target is just text.
        let last_operand = args.iter().rposition(|a| !a.starts_with('-'));
        let walks = recursive(name, &args);
        let mut named_any = false;
        for (i, word) in words.iter().enumerate() {
            let raw = word.text.as_str();
            if std::mem::take(&mut skip_next) {
                continue;
            }
            if pattern_pending && !raw.starts_with('-') {
                pattern_pending = false;
                continue;
            }
            // `ln -s TARGET LINK`: the target is just text; a hard link
            // shares the target's content, so it counts as a read.
            if name == "ln" && Some(i) != last_operand && short(&args, 's') {
                continue;
            }
            if matches!(
                raw,
                "--grep"
                    | "-subj"
                    | "--xpath"
                    | "--author"
                    | "-S"
                    | "-G"
                    | "-name"
                    | "-iname"
                    | "-path"
                    | "-regex"
                    | "-printf"
                    | "-type"
            ) {
                skip_next = true;
                continue;
            }
            if raw.starts_with("--grep=")
                || raw.starts_with("--author=")
                || raw.starts_with("-subj")
            {
                continue;
            }
            if matches!(raw, "-m" | "--message" | "-e" | "--regexp") && name != "sed" {
                skip_next = true;
                continue;
            }
            if let Some(h) = host(raw) {
                self.cur_hosts.push(h.to_lowercase());
                continue;
            }
            // Process substitutions are judged as commands of their own;
            // arithmetic is a number.
            if raw.starts_with("<(") || raw.starts_with(">(") || raw.starts_with("$((") {
                continue;
            }
            let value = raw
                .rsplit_once('=')
                .filter(|(k, _)| k.starts_with('-') || name == "dd")
                .map_or(raw, |(_, v)| v);
            // curl's `@file` and `name=@file` upload a file.
            let value = value.rsplit_once("=@").map_or(value, |(_, f)| f);
            let value = value.strip_prefix('@').unwrap_or(value);
            if word.dynamic {
                self.require(RiskAssessment::medium(format!(
                    "uses an argument only known at run time ({raw})"
                )));
                let role = role(name, &args, i, last_operand, read_only);
                // `~/.ssh/$f`: whatever it is, it is under `~/.ssh`.
                match static_dir(raw).and_then(|d| self.env.resolve(&d, cwd)) {
                    Some(dir) => self.note_tree(dir, role),
                    None => self.unknown_path(role),
                }
                continue;
            }
            if value.is_empty() || (value.starts_with('-') && !value.contains('/')) {
                continue;
            }
            let role = match name {
                "dd" if raw.starts_with("of=") => Role::Write,
                "dd" => Role::Read,
                _ => role(name, &args, i, last_operand, read_only),
            };
            let patterns: Vec<String> = if word.is_brace() {
                match expand_braces(&word.pattern) {
                    Some(p) => p,
                    None => {
                        self.require(RiskAssessment::medium(format!(
                            "names more paths than can be checked ({raw})"
                        )));
                        self.unknown_path(role);
                        continue;
                    }
                }
            } else {
                vec![word.pattern.clone()]
            };
            for pattern in patterns {
                // `--file=x`, `@x`: the path is the value.
                let text = if value != raw {
                    value.to_string()
                } else {
                    pattern_text(&pattern)
                };
                let pathy = text.starts_with(['/', '~', '.'])
                    || text.starts_with("$HOME")
                    || text.contains('/')
                    || cwd.is_some_and(|c| self.env.exists(&c.join(&text)));
                if !pathy {
                    if cwd.is_none() && !text.starts_with('-') {
                        // A name in a directory only known at run time.
                        self.unknown_path(role);
                    }
                    continue;
                }
                let paths = if has_glob(&pattern) {
                    match self.glob(&pattern, cwd) {
                        Some(p) => p,
                        None => {
                            self.require(RiskAssessment::medium(format!(
                                "names files only known at run time ({raw})"
                            )));
                            self.unknown_path(role);
                            continue;
                        }
                    }
                } else {
                    match self.env.resolve(&text, cwd) {
                        Some(p) => vec![p],
                        None => {
                            self.require(RiskAssessment::medium(format!(
                                "uses a path only known at run time ({raw})"
                            )));
                            self.unknown_path(role);
                            continue;
                        }
                    }
                };
                for path in paths {
                    named_any = true;
                    let tree = walks && path.is_dir();
                    if let Some(p) = self.judge_path(path, role, read_only, tree) {
                        outside.push(p);
                    }
                }
            }
        }
        // git reads its objects whatever paths are named (`HEAD:file`).
        if walks
            && (!named_any || name == "git")
            && let Some(dir) = cwd
        {
            self.note_tree(dir.to_path_buf(), Role::Read);
        }
        outside
    }

    /// Judges one named path; returns it when it is outside the workspace.
    fn judge_path(
        &mut self,
        path: PathBuf,
        role: Role,
        read_only: bool,
        tree: bool,
    ) -> Option<PathBuf> {
        let place = self.env.place(&path);
        if tree {
            self.note_tree(path.clone(), role);
        } else {
            self.note_path(path.clone(), role);
        }
        if matches!(place, Place::Harmless | Place::Workspace) || path == self.env.workspace {
            return None;
        }
        self.flag(RiskAssessment::medium(format!(
            "uses a path outside the project ({})",
            path.display()
        )));
        match place {
            Place::Secret(why) => self.flag(RiskAssessment::high(format!(
                "reads {why} ({})",
                path.display()
            ))),
            Place::Persistence(why) if !read_only => self.flag(RiskAssessment::high(format!(
                "changes {why} ({}), which runs code later",
                path.display()
            ))),
            Place::System if !read_only && role != Role::Read => self.flag(RiskAssessment::high(
                format!("changes the system path {}", path.display()),
            )),
            _ => {}
        }
        Some(path)
    }

    /// The files a glob pattern matches now, resolved through symlinks
    /// (`cat *` reads what links point to). `None` when that cannot be
    /// known: an unknown directory, too many entries.
    fn glob(&mut self, pattern: &str, cwd: Option<&Path>) -> Option<Vec<PathBuf>> {
        let (literal, rest) = glob_split(pattern);
        let base = if literal.is_empty() {
            cwd?.to_path_buf()
        } else {
            self.env.resolve(&literal, cwd)?
        };
        let mut found = vec![base];
        let mut listed = 0;
        for component in rest.split('/').filter(|c| !c.is_empty()) {
            let matcher = globset::GlobBuilder::new(component)
                .literal_separator(true)
                .build()
                .ok()?
                .compile_matcher();
            let hidden_ok = component.starts_with('.');
            let mut next = Vec::new();
            for dir in found {
                let Ok(entries) = std::fs::read_dir(&dir) else {
                    continue;
                };
                for e in entries.flatten() {
                    listed += 1;
                    if listed > MAX_GLOB_ENTRIES || self.listed_left == 0 {
                        return None;
                    }
                    self.listed_left -= 1;
                    let name = e.file_name();
                    let name_str = name.to_string_lossy();
                    if (hidden_ok || !name_str.starts_with('.')) && matcher.is_match(&*name_str) {
                        next.push(dir.join(&name));
                    }
                }
            }
            found = next;
        }
        if found.is_empty() {
            // No match: bash passes the pattern on as it is.
            return Some(vec![self.env.resolve(&pattern_text(pattern), cwd)?]);
        }
        Some(
            found
                .into_iter()
                .filter_map(|p| super::paths::physical(&p))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_of_urls_and_scp_paths() {
        assert_eq!(
            host("https://Evil.example/x").as_deref(),
            Some("Evil.example")
        );
        assert_eq!(host("http://u:p@h.io:8080/").as_deref(), Some("h.io"));
        assert_eq!(
            host("git@github.com:me/repo.git").as_deref(),
            Some("github.com")
        );
        assert_eq!(host("http://[::1]:80/").as_deref(), Some("[::1]"));
        assert_eq!(host("src/main.rs"), None);
        assert_eq!(host("a:b"), None);
    }
}
