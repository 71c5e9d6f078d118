//! The integration tests, one crate (one link instead of one per file):
//! each module runs the real binary or the real `Surface` against the mock
//! LLM server (`tests/support/`) and real files. Run one file's tests with
//! `cargo test --test it <module>::`.

// Test code may unwrap and print; a failure is the test's report.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "../support/mod.rs"]
mod support;

mod approvals;
mod architecture;
mod cli;
mod e2e_bash;
mod e2e_conversation;
mod e2e_faults;
mod e2e_fetch;
mod e2e_files;
mod e2e_gate;
mod e2e_hooks;
mod e2e_limits;
mod e2e_lsp;
mod e2e_mcp;
mod e2e_responses;
mod e2e_servers;
mod e2e_sessions;
mod e2e_soak;
mod e2e_streams;
mod e2e_subagent;
mod e2e_trust;
mod e2e_turns;
mod mock_selftest;
mod tui_pty;
