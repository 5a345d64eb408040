//! Systems without the Linux sandbox (macOS, the BSDs): the command runs in its own process
//! group, which is killed after it ends or times out; writes and network are not confined, and
//! the report says so.

use std::os::fd::RawFd;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::Arc;

use super::{Network, Plan, Processes, Report, Writes};
use crate::config::ShellNetwork;

/// Nothing to prepare here.
pub struct Confinement;

pub(super) fn prepare(plan: &Plan) -> (Confinement, Report) {
    let why = "no sandbox on this operating system yet".to_string();
    let network = if plan.network == ShellNetwork::Allow {
        Network::On
    } else {
        Network::NotIsolated(why.clone())
    };
    (
        Confinement,
        Report {
            processes: Processes::Group,
            writes: Writes::Off(why),
            network,
            private_proc: false,
            landlock_abi: None,
        },
    )
}

pub(super) fn processes_only() -> Confinement {
    Confinement
}

pub(super) fn unconfined() -> (Processes, Option<u8>) {
    (Processes::Group, None)
}

/// The command gets a process group of its own; there is no supervisor, so the report pipe
/// stays empty.
pub fn install(cmd: &mut Command, _c: Arc<Confinement>, _report: RawFd) {
    cmd.process_group(0);
}
