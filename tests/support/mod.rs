//! Test support shared by every integration test: the mock LLM server and
//! temporary projects that run the real binary.
#![allow(dead_code)]

pub mod mock_llm;
pub mod project;
pub mod pty;
