//! `agent`: a terminal coding agent.
//!
//! The data path (see `AGENTS.md`): a front end (`headless`, `tui`) gets a
//! session from [`wiring`], built from a [`config::Config`]; its
//! [`agent::Session`] streams from an [`llm::Provider`] and hands every tool
//! call to the one [`tools::Surface`]. Modules import one way, by the layers
//! AGENTS.md lists; nothing below the front ends depends on one.

pub mod agent;
pub mod cli;
pub mod commands;
pub mod config;
pub mod doctor;
pub mod headless;
pub mod hooks;
pub mod llm;
pub mod log;
pub mod lsp;
pub mod mcp;
pub mod permission;
pub mod realpath;
pub mod shell;
#[cfg(test)]
pub(crate) mod testing;
pub mod text;
pub mod tls;
pub mod tools;
pub mod transcript;
pub mod tui;
pub mod wiring;
