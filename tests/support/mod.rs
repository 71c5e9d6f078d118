//! Test support shared by every integration test: the mock LLM server and
//! temporary projects that run the real binary.
#![allow(dead_code)]

pub mod http;
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

/// Whether a test's prerequisite (`ok`: a kernel feature, an installed
/// server, a writable place) holds. A missing one skips the test visibly,
/// except in CI (`CI` set), where it fails: CI must run every test.
pub fn prerequisite(ok: bool, what: &str) -> bool {
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run this test, and {what}"
        );
        eprintln!("SKIPPED: {what}");
    }
    ok
}
