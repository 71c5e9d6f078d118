//! Helpers for the crate's unit tests.

/// Whether a test's prerequisite (`ok`: a kernel feature, a built example,
/// a writable place) holds. A missing one skips the test visibly, except in
/// CI (`CI` set), where it fails: CI must run every test.
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

/// A program of `examples/`, built by `cargo test` beside the test binary
/// (`cargo test --lib` alone does not build it), if it was built.
pub fn example(name: &str) -> Option<std::path::PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let path = exe.parent()?.parent()?.join("examples").join(name);
    path.exists().then_some(path)
}
