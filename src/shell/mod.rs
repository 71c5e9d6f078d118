//! Understanding shell commands by parsing, not by regex over the raw
//! string. The analysis is split so each rule can be audited on its own:
//!
//! | file | owns |
//! | --- | --- |
//! | `parse` | text → simple commands, assignments, evaluations (tree-sitter-bash; `expansions`, `heredoc`) |
//! | `words` | quote removal, brace and glob expansion |
//! | `analyze` | the walk: every part judged, summed up; unknown programs; one simple command judged (`judge`) |
//! | `wrappers` | `env`, `sudo`, `timeout`, `xargs`… taken off |
//! | `nested` | code in data: `bash -c`, `eval`, `find -exec`, piped scripts |
//! | `inline` | interpreter one-liners (`python -c`): their dangers |
//! | `snippets` | which one-liners cannot start other programs: the code scanned for names; the allow and deny lists (`names`) |
//! | `operands` | the paths and trees a command names, and how it uses them; per program, which operands are paths and whether they are read or written (`programs`) |
//! | `hosts` | the hosts a command reaches, with or without a scheme |
//! | `stdin` | what a command reads on standard input; `xargs` arguments |
//! | `variables` | assignments: inert, code-changing, values bash evaluates |
//! | `readonly` | the read-only allow list, option by option (`table`, `programs`, `rich`) |
//! | `scripts` | sed scripts and awk programs that stay inert |
//! | `gitconfig` | what a repository's own git config makes git run (`core.fsmonitor`, diff drivers) |
//! | `danger` | the danger rules: a table of rows (`rows`) and the few procedural checks (`files`, `services`) |
//! | `paths` | where a path is: workspace, secret, persistence, system |
//! | `prefix` | what a session grant remembers; the banned list |
//! | `run`, `sandbox`, `contain` | running a command: process group, output, Landlock; namespaces, read-only places and the keeper that ties a command's life to the agent's |

pub mod analyze;
pub mod contain;
mod danger;
#[cfg(test)]
mod fuzz;
mod gitconfig;
mod hosts;
mod inline;
mod nested;
mod operands;
pub mod parse;
pub mod paths;
pub mod prefix;
mod readonly;
pub mod run;
pub mod sandbox;
mod scripts;
mod snippets;
mod stdin;
#[cfg(test)]
mod tests;
mod variables;
mod words;
mod wrappers;

pub use analyze::{Analysis, Part, TIME_LIMIT, analyze, analyze_within};
pub use paths::PathEnv;
pub use prefix::{Ban, DEFAULT_BANNED};
pub use sandbox::{Sandbox, SandboxMode};
