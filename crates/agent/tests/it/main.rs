//! The integration tests of `slmcode-agent`, as one test binary: new test files go in this
//! directory, declared below, so the crate keeps a single test binary to link. The tool-call
//! corpus data stays in `tests/toolcall/`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

/// The forgotten-file check, shared with the other test binaries.
#[path = "../../../aci/tests/it/forgotten.rs"]
mod forgotten;
mod toolcall_corpus;

/// Every test file here is declared above, and no test binary stands beside this one.
#[test]
fn no_forgotten_test_files() {
    forgotten::check(env!("CARGO_MANIFEST_DIR"));
}
