//! Programs that run another program: `env`, `sudo`, `timeout 5`,
//! `nice -n 5`, `xargs -0`, `exec`, `command`, `busybox`... The analysis
//! judges the program inside; the wrappers are kept for bans and risk
//! (`sudo` is escalation) and what they change (`env FOO=1`, `env -C dir`,
//! arguments that arrive on standard input).
//!
//! Each wrapper's options are listed with whether they take a value: an
//! option not listed makes the program inside unknown, since nothing here
//! can tell whether the next word is that option's value or the program.

use super::parse::Word;

/// A command with its wrappers taken off.
#[derive(Debug, Default)]
pub struct Unwrapped {
    /// The wrappers' program names, outermost first.
    pub wrappers: Vec<String>,
    /// The program inside and its arguments.
    pub words: Vec<Word>,
    /// Arguments arrive on standard input (`xargs`).
    pub args_from_input: bool,
    /// `xargs -a FILE`: arguments come from a file, nothing here knows them.
    pub args_from_file: bool,
    /// `xargs -I R`: words of the inner command containing `R` are
    /// replaced by input.
    pub replace: Option<String>,
    /// `NAME=value` set by `env`.
    pub assignments: Vec<String>,
    /// `env -C dir`: the directory the program runs in.
    pub chdir: Option<Word>,
    /// An option of a wrapper that is not known (`env -x`): the program
    /// inside cannot be told.
    pub unknown_option: Option<String>,
}

/// Wrappers that change nothing about the program inside but its
/// scheduling, priority, buffering or time limit.
pub const INERT: &[&str] = &[
    "nohup",
    "nice",
    "ionice",
    "timeout",
    "stdbuf",
    "taskset",
    "setsid",
    "caffeinate",
    "chronic",
    "unbuffer",
    "command",
    "busybox",
    "toybox",
    "then",
    "do",
    "env",
    "xargs",
];

/// Wrappers that run the program as someone else.
pub const ESCALATION: &[&str] = &["sudo", "su", "doas", "pkexec", "run0"];

pub fn basename(program: &str) -> &str {
    if program.starts_with("./") || program.starts_with("../") {
        return program;
    }
    program.rsplit('/').next().unwrap_or(program)
}

/// A wrapper's options: without a value, and with one (`-n 5`, `-n5`,
/// `--adjustment=5`); `extra`: words it takes before the program
/// (`timeout DURATION`, `flock FILE`).
struct Spec {
    flags: &'static [&'static str],
    valued: &'static [&'static str],
    extra: usize,
}

fn spec(name: &str) -> Option<Spec> {
    let s = |flags, valued, extra| {
        Some(Spec {
            flags,
            valued,
            extra,
        })
    };
    match name {
        "sudo" | "doas" => s(
            &[
                "-A",
                "-b",
                "-E",
                "-e",
                "-H",
                "-i",
                "-K",
                "-k",
                "-n",
                "-P",
                "-S",
                "-s",
                "-B",
                "--preserve-env",
                "--login",
                "--shell",
                "--non-interactive",
                "--background",
            ],
            &[
                "-u",
                "-g",
                "-C",
                "-D",
                "-h",
                "-p",
                "-r",
                "-t",
                "-U",
                "-T",
                "-R",
                "--user",
                "--group",
                "--chdir",
                "--chroot",
                "--host",
                "--prompt",
                "--role",
                "--type",
                "--other-user",
                "--command-timeout",
                "--close-from",
            ],
            0,
        ),
        "env" => s(
            &[
                "-i",
                "-0",
                "-v",
                "--null",
                "--ignore-environment",
                "--debug",
                "--list-signal-handling",
            ],
            &[
                "-u",
                "--unset",
                "-C",
                "--chdir",
                "-S",
                "--split-string",
                "-a",
                "--argv0",
                "--ignore-signal",
                "--default-signal",
                "--block-signal",
            ],
            0,
        ),
        "nice" => s(&[], &["-n", "--adjustment"], 0),
        "ionice" => s(
            &["-t", "--ignore"],
            &[
                "-c",
                "-n",
                "-p",
                "-P",
                "-u",
                "--class",
                "--classdata",
                "--pid",
                "--pgid",
                "--uid",
            ],
            0,
        ),
        "timeout" => s(
            &["--preserve-status", "--foreground", "-v", "--verbose"],
            &["-s", "-k", "--signal", "--kill-after"],
            1,
        ),
        "stdbuf" => s(
            &[],
            &["-i", "-o", "-e", "--input", "--output", "--error"],
            0,
        ),
        "xargs" => s(
            &[
                "-0",
                "--null",
                "-r",
                "--no-run-if-empty",
                "-t",
                "--verbose",
                "-x",
                "--exit",
                "-o",
                "--open-tty",
                "-p",
                "--interactive",
            ],
            &[
                "-n",
                "-I",
                "-P",
                "-L",
                "-d",
                "-a",
                "-E",
                "-s",
                "--max-args",
                "--replace",
                "--delimiter",
                "--max-procs",
                "--arg-file",
                "--max-lines",
                "--eof",
                "--max-chars",
                "--process-slot-var",
            ],
            0,
        ),
        "command" => s(&["-p"], &[], 0),
        "nohup" | "busybox" | "toybox" | "then" | "do" | "builtin" | "coproc" => s(&[], &[], 0),
        "setsid" => s(&["-c", "-f", "-w", "--ctty", "--fork", "--wait"], &[], 0),
        "taskset" => s(
            &["-a", "-p", "--all-tasks", "--pid"],
            &["-c", "--cpu-list"],
            0,
        ),
        "caffeinate" => s(&["-d", "-i", "-m", "-s", "-u"], &["-t", "-w"], 0),
        "chronic" => s(&["-e", "-v"], &[], 0),
        "unbuffer" => s(&["-p"], &[], 0),
        "exec" => s(&["-c", "-l"], &["-a"], 0),
        "time" => s(
            &[
                "-p",
                "-a",
                "-v",
                "-q",
                "--portability",
                "--append",
                "--verbose",
                "--quiet",
            ],
            &["-o", "-f", "--output", "--format"],
            0,
        ),
        "pkexec" | "run0" => s(&["--disable-internal-agent", "--keep-cwd"], &["--user"], 0),
        "flock" => s(
            &[
                "-s",
                "-x",
                "-n",
                "-u",
                "-o",
                "-E",
                "--shared",
                "--exclusive",
                "--nonblock",
                "--unlock",
                "--close",
            ],
            &["-w", "-c", "--timeout", "--command", "--conflict-exit-code"],
            1,
        ),
        "chroot" => s(&["--skip-chdir"], &["--userspec", "--groups"], 1),
        "unshare" | "nsenter" | "firejail" | "torsocks" | "proxychains" | "proxychains4"
        | "catchsegv" | "faketime" | "chrt" | "strace" | "ltrace" | "npx" | "pnpx" | "bunx" => {
            // Not inert anyway (they need approval); their options are
            // many, so only their value-taking ones are listed.
            s(
                &[],
                match name {
                    "npx" | "pnpx" | "bunx" => &["-p", "--package", "-c", "--call"],
                    "chrt" => &["-p"],
                    "strace" | "ltrace" => &["-o", "-e", "-p", "-s", "-u", "-E"],
                    _ => &[],
                },
                0,
            )
        }
        _ => None,
    }
}

/// Whether `t` is one of `options`, or one of them with its value attached
/// (`-n5`, `--adjustment=5`).
fn takes(options: &[&str], t: &str) -> Option<bool> {
    for o in options {
        if t == *o {
            return Some(true); // the value is the next word
        }
        if o.starts_with("--") {
            if t.strip_prefix(o).is_some_and(|r| r.starts_with('=')) {
                return Some(false);
            }
        } else if o.len() == 2 && t.starts_with(o) && t.len() > 2 {
            return Some(false);
        }
    }
    None
}

/// Strips wrappers and returns what they are and change.
pub fn unwrap(words: &[Word]) -> Unwrapped {
    let mut out = Unwrapped::default();
    let mut i = 0;
    while let Some(w) = words.get(i) {
        let name = basename(&w.text);
        let Some(spec) = spec(name) else { break };
        if name == "command"
            && words
                .get(i + 1)
                .is_some_and(|n| n.text == "-v" || n.text == "-V")
        {
            break; // `command -v x` looks something up.
        }
        let default_path = name == "command" && words.get(i + 1).is_some_and(|n| n.text == "-p");
        out.wrappers.push(if default_path {
            "command -p".into()
        } else {
            name.to_string()
        });
        let xargs = name == "xargs";
        out.args_from_input |= xargs;
        i += 1;
        while let Some(opt) = words.get(i) {
            let t = opt.text.as_str();
            if name == "env" && t.contains('=') && !t.starts_with('-') {
                out.assignments.push(t.to_string());
                i += 1;
                continue;
            }
            if !t.starts_with('-') || t == "-" {
                break;
            }
            i += 1;
            if t == "--" {
                break;
            }
            if opt.dynamic {
                out.unknown_option = Some(t.to_string());
                continue;
            }
            // `nice -5`, `xargs -i`: old forms.
            if (name == "nice" && t[1..].chars().all(|c| c.is_ascii_digit()))
                || (xargs && matches!(t, "-i" | "-l" | "-e"))
            {
                if t == "-i" {
                    out.replace = Some("{}".into());
                }
                continue;
            }
            if spec.flags.contains(&t) {
                continue;
            }
            let Some(separate) = takes(spec.valued, t) else {
                out.unknown_option = Some(t.to_string());
                continue;
            };
            let value: Option<String> = if separate {
                let v = words.get(i).map(|w| w.text.clone());
                i += 1;
                v
            } else {
                Some(
                    t.split_once('=')
                        .filter(|_| t.starts_with("--"))
                        .map_or(&t[2..], |(_, v)| v)
                        .to_string(),
                )
            };
            let key = t.split('=').next().unwrap_or(t);
            let key = if key.starts_with("--") {
                key
            } else {
                &key[..2]
            };
            if name == "env" && matches!(key, "-S" | "--split-string") {
                // `env -S "rm -rf ~"`: the value is split into the command.
                let mut rebuilt: Vec<Word> = value
                    .unwrap_or_default()
                    .split_whitespace()
                    .map(|p| Word {
                        dynamic: opt.dynamic,
                        ..Word::literal(p)
                    })
                    .collect();
                rebuilt.extend(words.iter().skip(i).cloned());
                let inner = unwrap(&rebuilt);
                out.wrappers.extend(inner.wrappers);
                out.words = inner.words;
                out.args_from_input |= inner.args_from_input;
                out.args_from_file |= inner.args_from_file;
                out.replace = out.replace.or(inner.replace);
                out.assignments.extend(inner.assignments);
                out.chdir = out.chdir.or(inner.chdir);
                out.unknown_option = out.unknown_option.or(inner.unknown_option);
                return out;
            }
            if name == "env" && matches!(key, "-C" | "--chdir") {
                out.chdir = value.clone().map(|v| Word {
                    dynamic: words.get(i - 1).is_some_and(|w| w.dynamic),
                    ..Word::literal(&v)
                });
            }
            if xargs {
                match key {
                    "-a" | "--arg-file" => out.args_from_file = true,
                    "-I" | "--replace" => out.replace = value,
                    _ => {}
                }
            }
        }
        for _ in 0..spec.extra {
            if words.get(i).is_some() {
                i += 1; // the duration, the lock file, the new root
            }
        }
        if (name == "taskset" || name == "chrt")
            && words.get(i).is_some_and(|w| {
                w.text
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() || c == 'x' || c == ',' || c == '-')
            })
        {
            i += 1; // the CPU mask, the priority
        }
    }
    out.words = words[i.min(words.len())..].to_vec();
    if let Some(r) = &out.replace {
        // What xargs puts there is only known at run time.
        for w in out.words.iter_mut().skip(1) {
            if w.text.contains(r.as_str()) {
                w.dynamic = true;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(t: &str) -> Vec<Word> {
        t.split_whitespace().map(Word::literal).collect()
    }

    #[test]
    fn wrappers_come_off() {
        let u = unwrap(&words(
            "sudo -u root env FOO=1 timeout 5 nice -n 3 rm -rf x",
        ));
        assert_eq!(u.wrappers, ["sudo", "env", "timeout", "nice"]);
        assert_eq!(u.words[0].text, "rm");
        assert_eq!(u.assignments, ["FOO=1"]);
        let u = unwrap(&words("xargs -I {} sh -c {}"));
        assert!(u.args_from_input && u.words[2].dynamic);
        let u = unwrap(&words("env -C /etc cat passwd"));
        assert_eq!(u.chdir.unwrap().text, "/etc");
        let u = unwrap(&words("env -C/etc cat passwd"));
        assert_eq!(u.chdir.unwrap().text, "/etc");
        assert_eq!(unwrap(&words("command -v ls")).words.len(), 3);
        assert!(unwrap(&words("xargs -a list cat")).args_from_file);
        let u = unwrap(&words("env --split-string=rm x"));
        assert_eq!(u.words[0].text, "rm");
        assert_eq!(unwrap(&words("env -a x rm y")).words[0].text, "rm");
        assert_eq!(unwrap(&words("time -o out rm y")).words[0].text, "rm");
        assert_eq!(unwrap(&words("toybox rm y")).words[0].text, "rm");
        assert!(
            unwrap(&words("env --frobnicate rm y"))
                .unknown_option
                .is_some()
        );
        assert!(unwrap(&words("nice -5 rm y")).unknown_option.is_none());
    }
}
