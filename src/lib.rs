//! `agent`: a terminal coding agent.
//!
//! The data path (see `AGENTS.md`): a front end (`headless`, later the TUI)
//! drives an [`agent::Session`], which streams from an [`llm::Provider`] and
//! hands every tool call to the one [`tools::Surface`]. Configuration comes
//! from [`config`]. Nothing in `agent/`, `llm/` or `tools/` depends on a
//! front end.

pub mod agent;
pub mod cli;
pub mod commands;
pub mod config;
pub mod doctor;
pub mod headless;
pub mod hooks;
pub mod llm;
pub mod lsp;
pub mod mcp;
pub mod permission;
pub mod session;
pub mod shell;
pub mod tools;
pub mod tui;
