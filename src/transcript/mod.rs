//! Transcripts: the append-only log of each session on disk (`store.rs`),
//! and finding and listing them (`list.rs`). The session that runs is
//! `agent::Session`.

pub mod list;
pub mod store;

pub use list::{FindError, Summary};
pub use store::{Entry, Header, Loaded, Replay, SessionLog, log_path};
