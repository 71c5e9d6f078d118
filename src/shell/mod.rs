//! Understanding shell commands by parsing, not by regex over the raw string:
//! `parse` turns text into simple commands (tree-sitter-bash); `analyze`
//! sees through wrappers, nested shells and inline interpreter code, judges
//! each command's risk, whether it only reads, and what "allow for this
//! session" would remember for it. The OS sandbox comes with the bash tool.

pub mod analyze;
mod danger;
pub mod parse;
pub mod paths;
pub mod prefix;
mod readonly;

pub use analyze::{Analysis, Part, analyze};
pub use paths::PathEnv;
pub use prefix::{Ban, DEFAULT_BANNED};
pub mod run;
pub mod sandbox;
#[cfg(test)]
mod tests;

pub use sandbox::{Sandbox, SandboxMode};
