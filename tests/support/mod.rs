//! Test support shared by every integration test: the mock LLM server and
//! temporary projects that run the real binary.
#![allow(dead_code)]

pub mod mock_llm;
pub mod project;
pub mod pty;

/// A program of `examples/`, built by `cargo test` next to the tests
/// (`cargo test --test X` alone does not rebuild it: `cargo build --examples`).
pub fn example_exe(name: &str) -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(|d| d.parent()).unwrap();
    let path = dir.join("examples").join(name);
    assert!(
        path.exists(),
        "examples/{name} was not built at {}; run `cargo build --examples`",
        path.display()
    );
    path
}
