//! What ends a ws_shell command's whole process tree, on each OS: a command that backgrounds a
//! server, or a test runner that leaves workers behind, must not outlive its call.
//!
//! - **Linux** (`linux`): the sandbox's supervisor is the command's child subreaper and ends
//!   what it finds (see [`crate::shell::sandbox`]); after it, the harness walks `/proc` for
//!   anything still in the command's process group or descended from it, kills it and reaps
//!   what was re-parented to it.
//! - **Elsewhere** (`portable`: macOS, the BSDs, and Linux built with the `portable` feature):
//!   the command leads a process group of its own and carries a marker in its environment;
//!   while it runs, the process table (`sysinfo`) is read a few times a second for its
//!   descendants. Afterwards the group, every descendant seen, anything descended from them
//!   and every process still carrying the marker is killed. A process that leaves the group,
//!   is orphaned before it is seen and clears its environment can escape — the report says
//!   containment is weaker here.
//! - **Windows**: ws_shell does not run (see [`crate::shell::sandbox::unavailable`]); the
//!   functions exist so the crate builds, and do nothing.

use std::process::{Command, ExitStatus};

#[cfg(all(target_os = "linux", not(feature = "portable")))]
mod linux;
#[cfg(all(target_os = "linux", not(feature = "portable")))]
use linux as imp;

// Compiled on every Unix, so the fallback cannot rot unseen; CI runs the tests with it too.
#[cfg(unix)]
#[cfg_attr(all(target_os = "linux", not(feature = "portable")), allow(dead_code))]
mod portable;
#[cfg(all(unix, any(not(target_os = "linux"), feature = "portable")))]
use portable as imp;

#[cfg(not(unix))]
mod imp {
    //! No ws_shell here: nothing to contain.
    use std::process::{Command, ExitStatus};

    pub struct Tree;

    impl Tree {
        pub fn prepare(_cmd: &mut Command) -> Tree {
            Tree
        }
        pub fn started(&mut self, _pid: u32) {}
        pub fn watch(&mut self) {}
        pub fn terminate(&self) {}
        pub fn kill_leader(&self) {}
        pub fn kill_group(&self) {}
        pub fn sweep(&mut self) -> usize {
            0
        }
    }

    pub fn raw_status(status: ExitStatus) -> i32 {
        status.code().unwrap_or(-1)
    }

    pub fn status_parts(raw: i32) -> (Option<i32>, Option<i32>) {
        (Some(raw), None)
    }
}

/// The harness's hold on one command's processes, from before it is spawned to the sweep
/// after it ended.
pub struct Tree(imp::Tree);

impl Tree {
    /// Sets `cmd` up to be contained: a process group of its own (and, where the process
    /// table is walked, the environment marker). Call before the sandbox's own setup.
    pub fn prepare(cmd: &mut Command) -> Tree {
        Tree(imp::Tree::prepare(cmd))
    }

    /// The command was spawned as `pid` (the leader of its group).
    pub fn started(&mut self, pid: u32) {
        self.0.started(pid);
    }

    /// Called while the command runs, often: where descendants must be seen to be found
    /// later, a look at the process table (at most a few times a second).
    pub fn watch(&mut self) {
        self.0.watch();
    }

    /// Asks the leader to end (SIGTERM): the Linux supervisor then ends everything itself.
    pub fn terminate(&self) {
        self.0.terminate();
    }

    /// Kills the leader.
    pub fn kill_leader(&self) {
        self.0.kill_leader();
    }

    /// Kills whatever is still in the command's process group.
    pub fn kill_group(&self) {
        self.0.kill_group();
    }

    /// Kills everything of the command's that is left — its group, its descendants and what
    /// else this platform can attribute to it — until nothing is. Returns how many processes
    /// were killed.
    pub fn sweep(&mut self) -> usize {
        self.0.sweep()
    }
}

/// A finished command's status as a raw wait status, the form the Linux supervisor reports.
pub fn raw_status(status: ExitStatus) -> i32 {
    imp::raw_status(status)
}

/// The exit code, or the signal that ended it, of a raw wait status.
pub fn status_parts(raw: i32) -> (Option<i32>, Option<i32>) {
    imp::status_parts(raw)
}
