//! Sessions on disk: the append-only log of each session (`store.rs`),
//! and finding and listing them (`list.rs`).

pub mod list;
pub mod store;

pub use list::{FindError, Summary};
pub use store::{Entry, Header, Loaded, Replay, SessionLog, log_path};
