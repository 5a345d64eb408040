//! The integration tests of `slmcode-aci`, as one test binary (one link instead of one per
//! file). Their data stays beside this directory: `tests/conformance/`, `tests/shell_policy/`;
//! the insta snapshots live in `tests/it/snapshots/`, named after the module path
//! (`it__messages__<name>.snap`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cancel;
mod conformance;
mod edit_props;
mod forgotten;
mod hostile;
mod jail_props;
mod layers;
mod layout;
mod messages;
mod navigation;
mod outcomes;
mod platform;
// Exchanges directories with renameat2(RENAME_EXCHANGE), which only Linux has.
#[cfg(target_os = "linux")]
mod races;
mod session_state;
mod shell_policy;
mod shell_run;
mod skip;
mod symbols;
mod syntax_props;

/// Every test file here is declared above, and no test binary stands beside this one.
#[test]
fn no_forgotten_test_files() {
    forgotten::check(env!("CARGO_MANIFEST_DIR"));
}
