//! ws_shell through the real binary: the policy's refusals, the bounded run and its messages,
//! the permission switch, and the Landlock sandbox keeping `.slmcode/` intact.

use crate::common;
use crate::common::Project;
use serde_json::json;

fn shell(p: &Project, command: &str) -> (String, bool) {
    p.tool("ws_shell", &json!({"command": command}).to_string())
}

/// The user allowed `python3 NAME` (the shape of a hostile "test runner"); returns the call's
/// text.
fn allowed_script(p: &Project, name: &str, body: &str, env: &[(&str, &str)]) -> String {
    p.write(name, body);
    let allow = format!("python3 {name}");
    let mut vars = vec![("SLMCODE_SHELL_ALLOW", allow.as_str())];
    vars.extend_from_slice(env);
    let (text, err) = p.tool_env(
        "ws_shell",
        &json!({"command": format!("python3 {name}")}).to_string(),
        &vars,
    );
    assert!(!err, "{text}");
    text
}

/// Fails unless the full sandbox is in force; on a machine declared to lack it
/// (`SLMCODE_TEST_WEAK_SANDBOX`) the checks that need it are a counted skip, and false.
fn require_full_sandbox(text: &str) -> bool {
    // The full sandbox ends a result with `[sandbox: NETWORK]` and nothing weaker; `[sandbox
    // off (...)]` (turned off, or its setup failed) is not it either.
    let weak = !text.contains("[sandbox: ")
        || text.contains("weaker here")
        || text.contains("NOT isolated");
    if weak && slmcode_aci::platform::Platform::current() != slmcode_aci::platform::Platform::Linux
    {
        common::skip(
            "the full ws_shell sandbox",
            "this build has the portable fallbacks, which do not confine writes or network",
        );
        return false;
    }
    if weak {
        assert!(
            std::env::var_os("SLMCODE_TEST_WEAK_SANDBOX").is_some(),
            "this kernel gives a weaker sandbox; set SLMCODE_TEST_WEAK_SANDBOX=1 to accept it: {text}"
        );
        common::skip(
            "the full ws_shell sandbox",
            "SLMCODE_TEST_WEAK_SANDBOX: this kernel gives a weaker one",
        );
    }
    !weak
}

mod builds;
mod confinement;
mod network;
mod policy;
mod reads;
mod resources;

use network::listen;
