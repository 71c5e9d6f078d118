//! Language servers (issue 6, in progress): `transport` frames JSON-RPC over
//! a child's stdio and matches responses to requests. The client (LSP
//! methods), the manager (servers per language and root, restarts) and the
//! diagnostics fed back into edit results build on it.

pub mod client;
pub mod manager;
mod report;
pub mod servers;

pub use manager::LspManager;
pub use servers::{ServerConfig, Timing};
pub mod transport;
pub mod watch;
