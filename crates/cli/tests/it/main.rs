//! The behaviour tests of `slmcode`, as one test binary: each module drives the real binary
//! on a scratch project. One binary links once, where a binary per file linked twenty times.
//! `common` holds the shared helpers, `openai` the fake model server.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
/// The forgotten-file check, shared with the other test binaries.
#[path = "../../../aci/tests/it/forgotten.rs"]
mod forgotten;
mod openai;

mod bench;
mod cap;
mod chat;
mod config;
mod edits;
mod escapes;
mod evolve;
mod git;
mod glob;
mod grep;
mod hooks;
mod hostile;
mod jail;
mod list;
mod mcp;
mod mutation;
mod protect;
mod read;
mod registry;
mod run;
mod safety;
mod session;
mod setup;
mod shell;
mod terminal;
mod todo;
mod view;

/// Every test file here is declared above, and no test binary stands beside this one.
#[test]
fn no_forgotten_test_files() {
    forgotten::check(env!("CARGO_MANIFEST_DIR"));
}
