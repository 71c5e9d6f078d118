//! Programs that run another program: `env`, `sudo`, `timeout 5`,
//! `nice -n 5`, `xargs -0`, `exec`, `command`, `busybox`... The analysis
//! judges the program inside; the wrappers are kept for bans and risk
//! (`sudo` is escalation) and what they change (`env FOO=1`, `env -C dir`,
//! arguments that arrive on standard input).

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
}

/// Wrappers that change nothing about the program inside but its
/// scheduling, priority, buffering or time limit.
pub const INERT: &[&str] = &[
    "nohup",
    "time",
    "nice",
    "ionice",
    "timeout",
    "stdbuf",
    "taskset",
    "chrt",
    "setsid",
    "caffeinate",
    "chronic",
    "unbuffer",
    "command",
    "busybox",
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

/// Options of each wrapper that take a value; `None` for a program that
/// is not a wrapper.
fn valued(name: &str) -> Option<&'static [&'static str]> {
    Some(match name {
        "sudo" | "doas" => &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"],
        "env" => &["-u", "--unset", "-C", "--chdir"],
        "nice" => &["-n", "--adjustment"],
        "ionice" => &["-c", "-n", "-p"],
        "timeout" => &["-s", "-k", "--signal", "--kill-after"],
        "stdbuf" => &["-i", "-o", "-e"],
        "xargs" => &[
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
        "command" | "builtin" | "exec" | "nohup" | "time" | "unbuffer" | "pkexec" | "run0"
        | "caffeinate" | "chronic" | "flock" | "then" | "do" | "setsid" | "coproc" | "unshare"
        | "busybox" | "nsenter" | "chroot" | "firejail" | "torsocks" | "proxychains"
        | "proxychains4" | "catchsegv" | "faketime" => &["-a"],
        "taskset" => &["-c", "--cpu-list"],
        "npx" | "pnpx" | "bunx" => &["-p", "--package", "-c", "--call"],
        "chrt" => &["-p"],
        "strace" | "ltrace" => &["-o", "-e", "-p", "-s", "-u", "-E"],
        _ => return None,
    })
}

/// Strips wrappers and returns what they are and change.
pub fn unwrap(words: &[Word]) -> Unwrapped {
    let mut out = Unwrapped::default();
    let mut i = 0;
    while let Some(w) = words.get(i) {
        let name = basename(&w.text);
        let Some(valued) = valued(name) else { break };
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
        if xargs {
            out.replace = None;
        }
        i += 1;
        while let Some(opt) = words.get(i) {
            let t = opt.text.as_str();
            if name == "env" && t.contains('=') && !t.starts_with('-') {
                out.assignments.push(t.to_string());
                i += 1;
                continue;
            }
            if name == "env" && (t == "-S" || t == "--split-string" || t.starts_with("-S")) {
                // `env -S "rm -rf ~"`: the value is split into the command.
                let (value, skip) = match t.strip_prefix("-S").filter(|v| !v.is_empty()) {
                    Some(v) => (Some(Word::literal(v)), 1),
                    None => (words.get(i + 1).cloned(), 2),
                };
                let mut rebuilt: Vec<Word> = value
                    .map(|w| {
                        w.text
                            .split_whitespace()
                            .map(|p| Word {
                                dynamic: w.dynamic,
                                ..Word::literal(p)
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                rebuilt.extend(words.iter().skip(i + skip).cloned());
                let inner = unwrap(&rebuilt);
                out.wrappers.extend(inner.wrappers);
                out.words = inner.words;
                out.args_from_input |= inner.args_from_input;
                out.args_from_file |= inner.args_from_file;
                out.replace = out.replace.or(inner.replace);
                out.assignments.extend(inner.assignments);
                out.chdir = out.chdir.or(inner.chdir);
                return out;
            }
            if !t.starts_with('-') || t == "-" {
                break;
            }
            i += 1;
            if t == "--" {
                break;
            }
            if name == "env" && (t == "-C" || t == "--chdir") {
                out.chdir = words.get(i).cloned();
            } else if let Some(dir) = t.strip_prefix("--chdir=") {
                out.chdir = Some(Word::literal(dir));
            }
            if xargs {
                match t {
                    "-a" | "--arg-file" => out.args_from_file = true,
                    _ if t.starts_with("--arg-file=") => out.args_from_file = true,
                    "-I" | "--replace" => {
                        out.replace = words.get(i).map(|r| r.text.clone());
                    }
                    "-i" => out.replace = Some("{}".into()),
                    _ if t.starts_with("-I") && t.len() > 2 => {
                        out.replace = Some(t[2..].to_string())
                    }
                    _ if t.starts_with("--replace=") => {
                        out.replace = Some(t["--replace=".len()..].to_string())
                    }
                    _ => {}
                }
            }
            if valued.contains(&t) {
                i += 1;
            }
        }
        if name == "timeout" && words.get(i).is_some() {
            i += 1; // the duration
        }
        if name == "flock" && words.get(i).is_some() {
            i += 1; // the lock file
        }
        if name == "chroot" && words.get(i).is_some() {
            i += 1; // the new root
        }
        if (name == "taskset" || name == "chrt")
            && words.get(i).is_some_and(|w| {
                w.text
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() || c == 'x' || c == ',' || c == '-')
            })
        {
            i += 1; // the CPU mask or priority
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
        assert_eq!(unwrap(&words("command -v ls")).words.len(), 3);
        assert!(unwrap(&words("xargs -a list cat")).args_from_file);
    }
}
