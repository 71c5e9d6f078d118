#![allow(dead_code)]
//! Shared helpers for integration tests. Each test binary uses a subset.

pub mod mock_llm;
