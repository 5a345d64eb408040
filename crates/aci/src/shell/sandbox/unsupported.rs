//! Windows: no sandbox slmcode could put a command in, so ws_shell and hooks do not run
//! ([`unavailable`] says why). The rest exists so the crate builds.

use std::process::Command;
use std::sync::Arc;

use super::{Plan, Processes, Report};
use crate::config::ShellNetwork;

/// Nothing: commands do not run here.
pub struct Confinement;

pub(super) fn unavailable() -> Option<String> {
    Some(refusal(std::env::consts::OS))
}

/// The refusal a ws_shell call (or a hook) gets on `os`: what is missing and what to do
/// instead.
fn refusal(os: &str) -> String {
    format!(
        "ws_shell refused: slmcode does not run commands on {os} — it has no sandbox for them there, and does not run them unconfined. Use the file tools (ws_read, ws_grep, ws_edit, ws_patch) and ask the user to run builds and tests; under WSL, slmcode runs commands in its Linux sandbox."
    )
}

pub(super) fn prepare(_plan: &Plan) -> (Confinement, Report) {
    let why = unavailable().unwrap_or_default();
    (
        Confinement,
        Report::off(Processes::Table, why, ShellNetwork::Deny),
    )
}

pub(super) fn processes_only() -> Confinement {
    Confinement
}

pub(super) fn unconfined() -> (Processes, Option<u8>) {
    (Processes::Table, None)
}

pub(super) fn shell_command(_c: &Confinement, command: &str) -> Command {
    let mut cmd = Command::new("cmd");
    cmd.arg("/C").arg(command);
    cmd
}

pub(super) fn install(_cmd: &mut Command, _c: Arc<Confinement>, _report: &std::io::PipeWriter) {}

#[cfg(test)]
mod tests {
    #[test]
    fn the_refusal_names_the_platform_and_what_to_do() {
        let text = super::refusal("windows");
        assert!(text.starts_with("ws_shell refused: slmcode does not run commands on windows"));
        assert!(text.contains("does not run them unconfined"), "{text}");
        assert!(text.contains("ws_edit") && text.contains("WSL"), "{text}");
    }
}
