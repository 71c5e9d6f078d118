//! What a command's words name: paths (after brace and glob expansion,
//! resolved through symlinks), whether it reads or writes them, whole
//! trees it walks, hosts it reaches. A path the analysis cannot resolve is
//! never taken to be inside the project.

use std::path::{Path, PathBuf};

use super::analyze::{Analyzer, Role};
use super::hosts::{self, Reach};
use super::parse::{SimpleCommand, Word};
use super::paths::Place;
use super::words::{expand_braces, glob_split, has_glob, pattern_text};
use crate::permission::RiskAssessment;

mod programs;

use programs::{DATA_ONLY, PATTERN_FIRST, pattern_index, recursive, role, skipped_values};

/// Directory entries a glob may list before the analysis gives up on it.
const MAX_GLOB_ENTRIES: usize = 2_000;

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

impl Analyzer<'_> {
    /// Paths named by redirections: places judged, writes inside the
    /// workspace kept for the scope, writes and reads outside kept for the
    /// prefix.
    pub(super) fn redirects(
        &mut self,
        cmd: &SimpleCommand,
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
        let network = hosts::connects(name, &args);
        let globoff = args.iter().any(|a| *a == "-g" || *a == "--globoff");
        let mut host_words = vec![false; words.len()];
        for (i, w) in words.iter().enumerate() {
            let texts: Vec<String> = if w.is_brace() {
                expand_braces(&w.pattern)
                    .map(|p| p.iter().map(|t| pattern_text(t)).collect())
                    .unwrap_or_else(|| vec![w.text.clone()])
            } else {
                vec![w.text.clone()]
            };
            for text in texts {
                for r in hosts::reach(name, &text, w.dynamic, network, globoff) {
                    host_words[i] = true;
                    // `pip list --index-url http://h/`, `npm ls --registry=…`:
                    // an option that points a program somewhere else.
                    let in_option = text.starts_with('-')
                        || (i > 0
                            && words[i - 1].text.starts_with("--")
                            && !words[i - 1].text.contains('='));
                    if !read_only && !network && in_option {
                        self.require(RiskAssessment::medium(match &r {
                            Reach::Host(h) => format!("is pointed at the host {h} by an option"),
                            Reach::Unknown => "is pointed at a host only known at run time".into(),
                        }));
                    }
                    match r {
                        Reach::Host(h) => self.cur_hosts.push(h.to_lowercase()),
                        Reach::Unknown => self.cur_unknown_hosts = true,
                    }
                }
            }
        }
        if DATA_ONLY.contains(&name) {
            return outside;
        }
        let mut skip = 0;
        let pattern_given = args.iter().any(|a| {
            matches!(
                *a,
                "-e" | "-f" | "--regexp" | "--file" | "--expression" | "--source"
            ) || a.starts_with("--regexp=")
                || a.starts_with("--expression=")
        });
        let pattern = (PATTERN_FIRST.contains(&name) && !pattern_given)
            .then(|| pattern_index(name, &args))
            .flatten();
        let last_operand = args.iter().rposition(|a| !a.starts_with('-'));
        let walks = recursive(name, &args);
        let mut named_any = false;
        for (i, word) in words.iter().enumerate() {
            let raw = word.text.as_str();
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let skipped = skipped_values(name, raw);
            if skipped > 0 {
                skip = skipped;
                continue;
            }
            if pattern == Some(i) {
                continue;
            }
            // git's `--grep=/etc`, `--author=x`: text, not paths.
            if matches!(name, "git" | "hg" | "jj")
                && [
                    "--grep=",
                    "--author=",
                    "--committer=",
                    "--format=",
                    "--pretty=",
                    "--message=",
                ]
                .iter()
                .any(|o| raw.starts_with(o))
            {
                continue;
            }
            let role = match name {
                "dd" if raw.starts_with("of=") => Role::Write,
                "dd" => Role::Read,
                _ => role(name, &args, i, last_operand, read_only),
            };
            // A host, unless it is where an output goes (`curl -o i.sh`).
            if host_words[i] && network && role != Role::Write {
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
                // `~/.ssh/$f`: whatever it is, it is under `~/.ssh`.
                match static_dir(raw).and_then(|d| self.env.resolve(&d, cwd)) {
                    Some(dir) => self.note_tree(dir, role),
                    None => self.unknown_path(role),
                }
                continue;
            }
            // `-f/etc/x`, `-rf~/x`: a value glued to a short option. Which
            // letter takes it is the program's business; every place where
            // a path could start is checked.
            if raw.starts_with('-') && !raw.starts_with("--") && value == raw {
                let glued: Vec<(usize, &str)> = raw
                    .char_indices()
                    .skip(2)
                    .map(|(k, _)| (k, &raw[k..]))
                    .filter(|(_, rest)| {
                        rest.starts_with(['/', '~'])
                            || rest.starts_with("./")
                            || rest.starts_with("../")
                    })
                    .collect();
                for (k, rest) in glued {
                    let role = if k == 2 && raw.starts_with("-o") && !read_only {
                        Role::Write
                    } else {
                        role
                    };
                    match self.env.resolve(rest, cwd) {
                        Some(path) => {
                            named_any = true;
                            if let Some(p) = self.judge_path(path, role, read_only, false) {
                                outside.push(p);
                            }
                        }
                        None => self.unknown_path(role),
                    }
                }
                continue;
            }
            if value.is_empty() || (value.starts_with('-') && !value.contains('/')) {
                continue;
            }
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
                let glob = value == raw && has_glob(&pattern);
                // A word a program may write is a path whatever it looks
                // like; one it reads, when it looks like one or exists.
                let pathy = glob
                    || role != Role::Read
                    || text.starts_with(['/', '~', '.'])
                    || text.starts_with("$HOME")
                    || text.contains('/')
                    || cwd.is_some_and(|c| self.env.exists(&c.join(&text)));
                if !pathy {
                    continue;
                }
                if cwd.is_none() && !text.starts_with(['/', '~']) && !text.starts_with("$HOME") {
                    // A name in a directory only known at run time.
                    self.unknown_path(role);
                    continue;
                }
                let paths = if glob {
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
                    let tree = (walks || role != Role::Read) && path.is_dir();
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

    /// The value of an assignment that changes what a program does: the
    /// paths it names (`GIT_TRACE=secret/t` writes there, `PATH=a:b`
    /// lists places) and the hosts (`DEBUGINFOD_URLS=https://…`) count as
    /// the command's own.
    pub(super) fn assigned_value(&mut self, value: &str, dynamic: bool, cwd: Option<&Path>) {
        if dynamic {
            self.unknown_path(Role::Both);
            self.cur_unknown_hosts = true;
            return;
        }
        for piece in value.split([':', ' ', ',', ';']) {
            if let Some(h) = hosts::url_host(piece) {
                self.cur_hosts.push(h.to_lowercase());
            }
        }
        for url in value.split([' ', ',', ';']).filter(|p| p.contains("://")) {
            if let Some(h) = hosts::url_host(url) {
                self.cur_hosts.push(h.to_lowercase());
            }
        }
        for piece in value
            .split([':', ' '])
            .filter(|p| p.starts_with(['/', '~', '.']) || (p.contains('/') && !p.contains("://")))
        {
            match self.env.resolve(piece, cwd) {
                Some(path) => {
                    self.judge_path(path, Role::Both, false, false);
                }
                None => self.unknown_path(Role::Both),
            }
        }
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

    /// Words a glob becomes that start with `-`: a file named
    /// `--output=x` or `-i` in the directory turns `sort *` or `sed s/a/b/ *`
    /// into options. Those names join the words (after the glob), so the
    /// option checks see them.
    pub(super) fn option_globs(&mut self, words: Vec<Word>, cwd: Option<&Path>) -> Vec<Word> {
        let leads = |w: &Word| {
            !w.dynamic && has_glob(&w.pattern) && super::words::glob_split(&w.pattern).0.is_empty()
        };
        if !words.iter().skip(1).any(leads) {
            return words;
        }
        let Some(dir) = cwd else {
            return words;
        };
        let mut names: Option<Vec<String>> = None;
        let mut out = Vec::with_capacity(words.len());
        for (i, w) in words.into_iter().enumerate() {
            let glob = i > 0 && leads(&w);
            let first = w.pattern.split('/').next().unwrap_or_default().to_string();
            out.push(w);
            if !glob {
                continue;
            }
            let listed = names.get_or_insert_with(|| {
                std::fs::read_dir(dir)
                    .map(|entries| {
                        entries
                            .flatten()
                            .take(MAX_GLOB_ENTRIES)
                            .map(|e| e.file_name().to_string_lossy().into_owned())
                            .filter(|n| n.starts_with('-'))
                            .collect()
                    })
                    .unwrap_or_default()
            });
            let Ok(m) = globset::GlobBuilder::new(&first)
                .literal_separator(true)
                .build()
                .map(|g| g.compile_matcher())
            else {
                continue;
            };
            for n in listed.iter().filter(|n| m.is_match(n.as_str())) {
                out.push(Word::literal(n));
            }
        }
        out
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
        let components: Vec<&str> = rest.split('/').filter(|c| !c.is_empty()).collect();
        // Deeper than any real tree is not worth listing.
        if components.len() > 32 {
            return None;
        }
        for component in components {
            if found.is_empty() {
                break;
            }
            if std::time::Instant::now() >= self.deadline {
                return None;
            }
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
