//! Language servers: `transport` frames JSON-RPC over a child's stdio and
//! matches responses to requests; `client` keeps one server's documents and
//! reports and waits for current answers; `servers` says which server serves
//! a file; `manager` starts servers per language and root, restarts them and
//! answers the tools; `report` turns diagnostics into result text; `watch`
//! forwards file changes the servers asked for.

pub mod client;
pub mod manager;
mod report;
pub mod servers;

pub use manager::LspManager;
pub use servers::{ServerConfig, Timing};
pub mod transport;
pub mod watch;
