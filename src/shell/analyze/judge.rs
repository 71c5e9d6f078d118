//! One simple command judged: its assignments and wrappers, the program
//! its name runs (through symlinks), the danger rules and the read-only
//! table, what the project's own files make it run (git config, toolchain
//! files), and the part it becomes (its text, canonical order, prefix).

use std::path::PathBuf;

use super::{Analyzer, Part, Role, Stdin};
use crate::permission::RiskAssessment;
use crate::shell::danger::Invocation;
use crate::shell::danger::assignment_disables_history;
use crate::shell::inline::DOWNLOADERS;
use crate::shell::parse::{Script, SimpleCommand, Word};
use crate::shell::prefix::prefix;
use crate::shell::readonly::is_read_only;
use crate::shell::variables;
use crate::shell::wrappers::{self, ESCALATION, basename};

impl Analyzer<'_> {
    /// Judges one simple command; the part it makes (none for a bare
    /// assignment that changes nothing).
    pub(super) fn judge_command(
        &mut self,
        cmd: &SimpleCommand,
        script: &Script,
        cwd: &mut Option<PathBuf>,
        depth: u8,
    ) -> Option<Part> {
        let mut assignments = Vec::new();
        let standalone = cmd.words.is_empty();
        for a in &cmd.assignments {
            let text = a.text();
            if assignment_disables_history(&text) {
                self.flag(RiskAssessment::high("disables shell history"));
            }
            let inert = variables::inert(&a.name, &a.value.text) && !a.value.dynamic;
            if standalone {
                // Only names the environment already exports, or that
                // bash itself reads, change later commands.
                if !inert && (variables::runs_code(&a.name) || variables::exported(&a.name)) {
                    self.assignment_risk(&a.name);
                    self.assigned_value(&a.value.text, a.value.dynamic, cwd.as_deref());
                    assignments.push(text);
                }
            } else if !inert {
                self.assignment_risk(&a.name);
                self.assigned_value(&a.value.text, a.value.dynamic, cwd.as_deref());
                assignments.push(text);
            }
        }
        let mut outside = Vec::new();
        let mut files = Vec::new();
        self.redirects(cmd, cwd.as_deref(), &mut outside, &mut files);
        let Some(words) = self.expand_arguments(&cmd.words) else {
            self.unknown("more words than brace expansion can be followed for", "{…}");
            return None;
        };
        let words = self.option_globs(words, cwd.as_deref());
        let u = wrappers::unwrap(&words);
        for a in &u.assignments {
            let (name, value) = a.split_once('=').unwrap_or((a, ""));
            if !variables::inert(name, value) {
                self.assignment_risk(name);
                self.assigned_value(value, false, cwd.as_deref());
                assignments.push(a.clone());
            }
        }
        if let Some(opt) = &u.unknown_option {
            let wrapper = u.wrappers.last().cloned().unwrap_or_default();
            self.unknown(
                &format!("a program behind an option of `{wrapper}` that is not known ({opt})"),
                &wrapper,
            );
        }
        for w in &u.wrappers {
            if ESCALATION.contains(&w.as_str()) {
                self.flag(RiskAssessment::high(format!(
                    "runs as another user with `{w}` (privilege escalation)"
                )));
            }
            self.check_ban(&[w.as_str()]);
            // `time CMD` only reports; `time -o FILE` writes a file.
            let before = &words[..words.len().saturating_sub(u.words.len())];
            let timed = w == "time"
                && !before.iter().any(|x| {
                    x.text.starts_with("-o")
                        || x.text.starts_with("--o")
                        || x.text.starts_with("--a")
                        || x.text == "-a"
                });
            if !wrappers::INERT.contains(&w.as_str()) && !timed {
                self.require(RiskAssessment::low(format!(
                    "runs the command through `{w}`"
                )));
            }
        }
        let part_cwd: Option<PathBuf> = match &u.chdir {
            Some(dir) if !dir.dynamic => self.env.resolve(&dir.text, cwd.as_deref()),
            Some(_) => None,
            None => cwd.clone(),
        };
        // A command that runs outside the project reads (at least lists)
        // there: `cd; ls`.
        if let Some(dir) = &part_cwd
            && !self.env.is_inside(dir)
            && !cmd.words.is_empty()
        {
            self.flag(RiskAssessment::medium(format!(
                "runs in a directory outside the project ({})",
                dir.display()
            )));
            self.note_path(dir.clone(), Role::Read);
            outside.push(dir.clone());
        }
        let Some(first) = u.words.first() else {
            // Only redirections or assignments.
            let text = u.wrappers.first().cloned().unwrap_or_default();
            if text.is_empty()
                && files.is_empty()
                && outside.is_empty()
                && assignments.is_empty()
                && self.cur_paths.is_empty()
            {
                return None;
            }
            let mut prefix = assignments.join(" ");
            for p in &outside {
                prefix = format!("{prefix} > {}", p.display()).trim().to_string();
            }
            self.out.outside.extend(outside.iter().cloned());
            return Some(Part {
                text: text.clone(),
                canonical: text,
                assignments,
                prefix,
                program_known: true,
                files,
                outside: !self.out.outside.is_empty(),
                ..Part::default()
            });
        };
        // The name can be read from the command (it may still name a
        // program that does not exist yet: then it is judged by its name,
        // and unknown all the same).
        let static_name = !(first.dynamic || first.is_brace() || first.is_glob());
        let mut known = static_name;
        if !known {
            self.unknown(
                &format!(
                    "a program whose name is only known at run time ({})",
                    first.text
                ),
                &first.text,
            );
        }
        let (name, alias) = match self.program(&first.text, part_cwd.as_deref()) {
            Some(named) => named,
            None => {
                if known {
                    self.unknown(
                        &format!("a program that does not exist yet ({})", first.text),
                        &first.text,
                    );
                }
                known = false;
                (basename(&first.text).to_string(), None)
            }
        };
        let args: Vec<&str> = u.words[1..].iter().map(|w| w.text.as_str()).collect();
        let mut argv: Vec<&str> = vec![name.as_str()];
        argv.extend(&args);
        let alias_argv: Option<Vec<&str>> = alias.as_deref().map(|a| {
            let mut v = vec![a];
            v.extend(&args);
            v
        });
        if static_name {
            self.check_ban(&argv);
            if let Some(other) = &alias_argv {
                self.check_ban(other);
            }
        }
        let stdin = self.stdin(cmd, script);
        if known
            && DOWNLOADERS.contains(&name.as_str())
            && cmd.redirects.iter().any(|r| {
                r.target.text.starts_with(">(")
                    && crate::shell::inline::SHELLS
                        .iter()
                        .chain(crate::shell::inline::INTERPRETERS.iter().map(|(n, _)| n))
                        .any(|s| crate::shell::stdin::mentions(&r.target.text, s))
            })
        {
            self.flag(RiskAssessment::high(
                "runs a script downloaded from the network",
            ));
        }
        if known {
            self.nested(&name, &u.words, script, part_cwd.clone(), depth, &stdin);
        }
        let inv = Invocation {
            name: &name,
            args: args.clone(),
            dynamic: u.words[1..].iter().map(|w| w.dynamic).collect(),
            env: self.env,
            cwd: part_cwd.as_deref(),
            args_from_input: u.args_from_input,
            stdin_text: match &stdin {
                Stdin::Text(t) => Some(t.clone()),
                _ => None,
            },
            producer: cmd.piped_from.and_then(|i| {
                wrappers::unwrap(&script.commands[i].words)
                    .words
                    .first()
                    .map(|w| basename(&w.text).to_string())
            }),
        };
        let mut judged = if static_name { inv.judge() } else { None };
        // A link to another program is judged as that program too.
        if let Some(other) = alias.as_deref().filter(|_| static_name) {
            let as_other = Invocation { name: other, ..inv };
            if let Some(r) = as_other.judge() {
                match &mut judged {
                    Some(j) => j.raise(r),
                    None => judged = Some(r),
                }
            }
        }
        let has_rule = judged.is_some();
        if let Some(r) = judged {
            self.require(r);
        }
        let read_only = known
            && is_read_only(&name, &args)
            && (!u.args_from_input || self.input_args_inert(&name, &u, cmd, script))
            && !self.diffs_directories(&name, &args, part_cwd.as_deref());
        let read_only = read_only && {
            match toolchain_file(&name, part_cwd.as_deref(), &self.env.workspace) {
                Some(why) => {
                    self.require(RiskAssessment::medium(why));
                    false
                }
                None => true,
            }
        };
        let read_only = if name == "git" {
            match self.git_runs_programs(&args, part_cwd.as_deref()) {
                Some(why) => {
                    self.require(RiskAssessment::medium(why));
                    false
                }
                None => read_only,
            }
        } else {
            read_only
        };
        if u.args_from_file {
            self.require(RiskAssessment::low(
                "takes its arguments from a file, unknown here",
            ));
        }
        let mut operands = u.words[1..].to_vec();
        if u.args_from_input {
            // `xargs CMD`: what arrives on standard input are arguments too.
            match &stdin {
                Stdin::Text(t) => operands.extend(t.split_whitespace().map(Word::literal)),
                _ if read_only => {}
                _ => self.unknown_path(Role::Both),
            }
        }
        if u.args_from_file {
            self.unknown_path(Role::Both);
        }
        outside.extend(self.check_paths(&name, &operands, part_cwd.as_deref(), read_only));
        // What a download or a decoder writes is remembered: running it
        // later in the same command is running that text.
        let made = if DOWNLOADERS.contains(&name.as_str()) {
            Some("downloaded")
        } else if crate::shell::stdin::decodes(&name, &args) {
            Some("decoded")
        } else {
            None
        };
        if let Some(how) = made {
            let written: Vec<PathBuf> = self
                .cur_paths
                .iter()
                .filter(|(_, role, _)| *role != Role::Read)
                .map(|(p, _, _)| p.clone())
                .collect();
            self.generated.extend(written.into_iter().map(|p| (p, how)));
        }
        if part_cwd.is_none() {
            self.require(RiskAssessment::medium(
                "runs in a directory only known at run time",
            ));
        }
        if !read_only && !has_rule && known {
            // Not irreversible by itself (`cargo test`, `npm run build`),
            // but not known to be a read either: it needs approval.
            self.require(RiskAssessment::low(format!(
                "runs `{}`, which is not known to only read",
                prefix(&argv)
            )));
        }
        if name == "cd" || name == "pushd" {
            // `cd -P dir`, `cd -e dir`, `cd -- dir`: options first.
            let mut rest = u.words[1..]
                .iter()
                .skip_while(|w| w.text.starts_with('-') && w.text != "-" && w.text != "--");
            let target = match rest.next() {
                Some(w) if w.text == "--" => rest.next(),
                other => other,
            };
            *cwd = match target {
                None if name == "cd" => self.env.home.clone(),
                None => None,
                Some(w) if w.dynamic || w.text == "-" || w.is_brace() || w.is_glob() => None,
                Some(w) if w.text.starts_with('+') || w.text.starts_with("-") => None,
                Some(w) => self.env.resolve(&w.text, cwd.as_deref()),
            };
        } else if name == "popd" {
            *cwd = None;
        }

        let action = prefix(&argv);
        let canonical = canonical(&action, &argv);
        let mut part_prefix = assignments.join(" ");
        if known {
            if !part_prefix.is_empty() {
                part_prefix.push(' ');
            }
            part_prefix.push_str(&action);
        }
        for p in &outside {
            part_prefix.push(' ');
            part_prefix.push_str(&p.display().to_string());
        }
        let is_outside = !outside.is_empty();
        self.out.outside.extend(outside);
        Some(Part {
            text: argv.join(" "),
            aliases: alias_argv.map(|a| a.join(" ")).into_iter().collect(),
            canonical,
            assignments,
            prefix: if known { part_prefix } else { String::new() },
            needs_approval: false,
            program_known: known,
            files,
            outside: is_outside,
            ..Part::default()
        })
    }

    /// The program a command name runs, and what else it is known as. A
    /// bare name is itself. A path outside the project is its file name
    /// (`./../../../bin/rm` is `rm`; multi-call programs read that name), a
    /// path inside is `./path`; either way, when the file is a symlink, the
    /// name of its target is the other name (`./myrm` → `rm`). `None` for a
    /// path to nothing (a program the command itself would create).
    fn program(
        &self,
        text: &str,
        cwd: Option<&std::path::Path>,
    ) -> Option<(String, Option<String>)> {
        if !text.contains('/') {
            return Some((text.to_string(), None));
        }
        let (dir, file) = text.rsplit_once('/').unwrap_or(("", text));
        let dir = if dir.is_empty() && text.starts_with('/') {
            "/"
        } else {
            dir
        };
        let Some(dir) = self
            .env
            .resolve(if dir.is_empty() { "." } else { dir }, cwd)
        else {
            return Some((basename(text).to_string(), None));
        };
        let written = dir.join(file);
        if !self.env.exists(&written) {
            return None;
        }
        let target = crate::shell::paths::physical(&written)
            .and_then(|t| t.file_name().map(|n| n.to_string_lossy().into_owned()))
            .filter(|t| t != file);
        let name = match written.strip_prefix(&self.env.workspace) {
            Ok(rel) => format!("./{}", rel.display()),
            Err(_) => file.to_string(),
        };
        Some((name, target))
    }

    /// The words bash passes after brace expansion (`sort {-o,out} x` is
    /// `sort -o out x`): options are judged as the program will see them.
    /// The program's own name is left as written (a brace there makes it
    /// unknown). `None` when the expansion is too large to follow.
    fn expand_arguments(&self, words: &[Word]) -> Option<Vec<Word>> {
        if !words.iter().skip(1).any(Word::is_brace) {
            return Some(words.to_vec());
        }
        let mut out = Vec::with_capacity(words.len());
        for (i, w) in words.iter().enumerate() {
            if i == 0 || !w.is_brace() || w.dynamic {
                out.push(w.clone());
                continue;
            }
            for pattern in crate::shell::words::expand_braces(&w.pattern)? {
                out.push(Word {
                    text: crate::shell::words::pattern_text(&pattern),
                    dynamic: false,
                    pattern,
                });
            }
            if out.len() > crate::shell::words::MAX_BRACE_WORDS * 4 {
                return None;
            }
        }
        Some(out)
    }

    /// Why `git ARGS` run in `cwd` may run a program its repository chose
    /// (`core.fsmonitor`, a diff driver): see [`crate::shell::gitconfig`].
    fn git_runs_programs(&self, args: &[&str], cwd: Option<&std::path::Path>) -> Option<String> {
        let unknown = || Some("git runs in a repository that cannot be known here".to_string());
        let Some(mut dir) = cwd.map(std::path::Path::to_path_buf) else {
            return unknown();
        };
        let mut git_dir = None;
        let mut i = 0;
        while let Some(a) = args.get(i) {
            let value = match *a {
                "-C" | "--git-dir" => {
                    i += 1;
                    args.get(i).copied()
                }
                a => a.strip_prefix("--git-dir="),
            };
            let resolved = value.and_then(|v| self.env.resolve(v, Some(&dir)));
            match *a {
                "-C" => match resolved {
                    Some(d) => dir = d,
                    None => return unknown(),
                },
                a if a == "--git-dir" || a.starts_with("--git-dir=") => match resolved {
                    Some(d) => git_dir = Some(d),
                    None => return unknown(),
                },
                a if !a.starts_with('-') => break,
                _ => {}
            }
            i += 1;
        }
        crate::shell::gitconfig::runs_programs(&dir, git_dir.as_deref())
    }

    /// `diff dirA dirB` compares the files in them, following symlinks to
    /// wherever they point (`-r` is judged by the read-only table).
    fn diffs_directories(&self, name: &str, args: &[&str], cwd: Option<&std::path::Path>) -> bool {
        name == "diff"
            && !args.contains(&"--no-dereference")
            && args
                .iter()
                .filter(|a| !a.starts_with('-'))
                .any(|a| cwd.is_none() || self.env.resolve(a, cwd).is_none_or(|p| p.is_dir()))
    }
}

/// Programs a version manager's shim picks by a file in the project.
const RUST_PROXIES: &[&str] = &[
    "cargo",
    "rustc",
    "rustup",
    "rustdoc",
    "rustfmt",
    "cargo-clippy",
];
const SHIMMED: &[&str] = &[
    "python", "python3", "pip", "pip3", "node", "npm", "npx", "ruby", "gem", "go", "java", "deno",
    "bun", "perl",
];

/// Why running `name` in `cwd` runs what the project chose: rustup reads
/// `rust-toolchain(.toml)` (a `path` it execs, a channel it downloads), asdf
/// and mise read `.tool-versions` / `mise.toml` (`path:/…` versions).
fn toolchain_file(
    name: &str,
    cwd: Option<&std::path::Path>,
    workspace: &std::path::Path,
) -> Option<String> {
    let mut files: Vec<&str> = Vec::new();
    if RUST_PROXIES.contains(&name) {
        files.extend(["rust-toolchain", "rust-toolchain.toml"]);
    }
    if SHIMMED.contains(&name) {
        files.extend([
            ".tool-versions",
            "mise.toml",
            ".mise.toml",
            ".mise/config.toml",
            ".config/mise.toml",
        ]);
    }
    // npm reads the project's `.npmrc`: a registry URL with `${VAR}` in
    // it, a log and cache directory anywhere.
    if matches!(name, "npm" | "npx" | "pnpm" | "yarn") {
        files.extend([".npmrc", ".yarnrc", ".yarnrc.yml"]);
    }
    if files.is_empty() {
        return None;
    }
    let Some(cwd) = cwd else {
        return Some(format!(
            "`{name}` runs in a directory only known at run time"
        ));
    };
    // Above the project the files are the person's own.
    cwd.ancestors()
        .take_while(|d| d.starts_with(workspace))
        .flat_map(|d| files.iter().map(move |f| d.join(f)).collect::<Vec<_>>())
        .find(|p| p.is_file())
        .map(|p| {
            format!(
                "{} configures what `{name}` runs or reaches (a toolchain, a path, a registry)",
                p.display()
            )
        })
}

/// The action words first, then the rest in order (`git -C x commit -m y`
/// → `git commit -C x -m y`), so rules on `git commit` match however the
/// options are placed.
fn canonical(action: &str, argv: &[&str]) -> String {
    let mut rest: Vec<&str> = argv.to_vec();
    for w in action.split(' ') {
        if let Some(i) = rest.iter().position(|r| *r == w) {
            rest.remove(i);
        }
    }
    let mut out = action.to_string();
    for r in rest {
        out.push(' ');
        out.push_str(r);
    }
    out
}
