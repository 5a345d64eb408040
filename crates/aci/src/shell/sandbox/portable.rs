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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn the_report_says_nothing_is_confined() {
        let dir = tempfile::tempdir().unwrap();
        let jail = crate::path::Jail::open(dir.path()).unwrap();
        let protected = crate::boundary::Protected::discover(&jail);
        let (_, report) = prepare(&Plan {
            root: jail.root(),
            protected: &protected,
            temp: dir.path(),
            cache: None,
            network: ShellNetwork::Deny,
            namespaces: true,
        });
        assert!(!report.is_full());
        assert_eq!(report.processes, Processes::Group);
        let note = report.note();
        assert!(
            note.contains("writes and network are not confined"),
            "{note}"
        );
        assert!(
            note.contains("processes are contained by their group only"),
            "{note}"
        );
    }

    #[test]
    fn the_command_gets_a_process_group_of_its_own() {
        let mut cmd = Command::new("/bin/sh");
        cmd.args(["-c", "ps -o pgid= -p $$"])
            .stdout(std::process::Stdio::piped());
        install(&mut cmd, Arc::new(Confinement), -1);
        let mut child = cmd.spawn().unwrap();
        let mut out = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        child.wait().unwrap();
        assert_eq!(out.trim(), child.id().to_string());
    }
}
