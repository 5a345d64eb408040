//! Systems without a sandbox of ours (the BSDs; Linux built with the `portable` feature): the
//! command runs unconfined, contained by [`crate::shell::contain`] only, and the report says
//! plainly that writes, reads and network are not confined and why.

use std::process::Command;
use std::sync::Arc;

use super::{Plan, Processes, Report};

/// Nothing to prepare here.
pub struct Confinement;

/// Why there is no sandbox: the OS has none slmcode uses, or the build chose the fallback.
fn why() -> String {
    if cfg!(feature = "portable") {
        "this build uses the portable fallbacks (the `portable` feature)".to_string()
    } else {
        format!("slmcode has no sandbox for {} yet", std::env::consts::OS)
    }
}

pub(super) fn unavailable() -> Option<String> {
    None
}

pub(super) fn prepare(plan: &Plan) -> (Confinement, Report) {
    (
        Confinement,
        Report::off(Processes::Table, why(), plan.network),
    )
}

pub(super) fn processes_only() -> Confinement {
    Confinement
}

pub(super) fn unconfined() -> (Processes, Option<u8>) {
    (Processes::Table, None)
}

pub(super) fn shell_command(_c: &Confinement, command: &str) -> Command {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c").arg(command);
    cmd
}

/// Only the descriptors: the report pipe stays empty.
pub(super) fn install(cmd: &mut Command, _c: Arc<Confinement>, _report: &std::io::PipeWriter) {
    close_inherited(cmd);
}

/// Closes, in the child, every descriptor above stderr that would survive the exec (one not
/// marked close-on-exec: a leak of the harness's or of whoever started it), as the Linux
/// supervisor does; descriptors marked close-on-exec go at the exec anyway.
pub(super) fn close_inherited(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: sysconf reads a system value and has no preconditions.
    let open_max = unsafe { libc::sysconf(libc::_SC_OPEN_MAX) };
    let last = libc::c_int::try_from(open_max.clamp(256, 65_536)).unwrap_or(65_536);
    // SAFETY: the closure makes only fcntl and close calls, which are async-signal-safe, on
    // descriptor numbers; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            for fd in 3..last {
                let flags = libc::fcntl(fd, libc::F_GETFD);
                if flags >= 0 && flags & libc::FD_CLOEXEC == 0 {
                    libc::close(fd);
                }
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ShellNetwork;

    #[test]
    fn the_report_says_nothing_is_confined_and_why() {
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
            home: None,
            read_allow: &[],
            path_dirs: &[],
        });
        assert!(!report.is_full());
        assert_eq!(report.processes, Processes::Table);
        let note = report.note();
        assert!(
            note.contains("writes, reads and network are not confined"),
            "{note}"
        );
        assert!(note.contains(&why()), "{note}");
        assert!(
            note.contains("leftover processes are found in the process table"),
            "{note}"
        );
    }
}
