//! Skips that are counted and said, never silent. A test that cannot check something on this
//! machine (no full sandbox, not root) calls [`skip`]: under `SLMCODE_TEST_STRICT` (CI sets
//! it) that fails the test; otherwise the skip is printed and appended to
//! `target/tmp/skipped-tests.log`, which `scripts/test` counts and prints at the end.
//! `SLMCODE_TEST_STRICT=portable` (CI's run of the portable fallbacks) lets through only the
//! skips of what those fallbacks do not guarantee.
//! Shared by both test binaries (the cli's `common` includes this file).

use std::io::Write;

/// Where the skips of one `scripts/test` run are collected.
pub fn log_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("skipped-tests.log")
}

/// Records that `what` was not checked here, and why; fails instead under
/// `SLMCODE_TEST_STRICT`.
pub fn skip(what: &str, why: &str) {
    let strict = std::env::var("SLMCODE_TEST_STRICT").unwrap_or_default();
    let expected = strict == "portable" && why.contains("the portable fallbacks");
    assert!(
        strict.is_empty() || expected,
        "SLMCODE_TEST_STRICT is set, so nothing may be skipped: {what}: {why}"
    );
    let line = format!("{what}: {why}");
    eprintln!("SKIPPED {line}");
    let appended = std::fs::create_dir_all(env!("CARGO_TARGET_TMPDIR")).and_then(|_| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log_path())?
            .write_all(format!("{line}\n").as_bytes())
    });
    assert!(
        appended.is_ok(),
        "cannot record the skip in {}: {appended:?}",
        log_path().display()
    );
}
