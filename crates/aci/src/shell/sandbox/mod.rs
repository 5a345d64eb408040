//! What confines a ws_shell command, and what the kernel let us do.
//!
//! The policy decides on the command's text; this is what still holds when an allowed runner
//! (`cargo test`, `npm test`) executes hostile project code. Where the kernel allows it
//! (Linux, `linux`):
//!
//! - **Processes**: the command runs in a PID namespace of its own under a small init, with its
//!   own `/proc`; when it ends, the kernel ends everything in it — whatever a descendant did to
//!   its session, group or environment. Without namespaces, a supervising process is the
//!   subreaper of the command's tree and kills every descendant it finds.
//! - **Writes**: the project is writable except `.slmcode/` (but `scratch/`) and every git
//!   directory, which are mounted read-only in a mount namespace of the command's own; Landlock
//!   limits writes to the project, the call's temp directory and `/dev/null`. Without mount
//!   namespaces Landlock alone grants the project entry by entry, around the protected ones.
//! - **Network**: a network namespace of its own (nothing, or only its own loopback), else
//!   Landlock's TCP rules; `shell_network: allow` opts out.
//! - **Secrets**: the command has no capabilities, cannot see the harness's process, and the
//!   harness is not dumpable, so its environment (the API key) cannot be read.
//!
//! Every weakening is named in the [`Report`], which the result and `slmcode doctor` show.

use std::path::Path;

use crate::boundary::Protected;
use crate::config::ShellNetwork;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as platform;

// The fallback is compiled (and its tests run) on Linux too, so it cannot rot unseen.
#[cfg_attr(target_os = "linux", allow(dead_code))]
mod portable;
#[cfg(not(target_os = "linux"))]
use portable as platform;

pub use platform::{install, Confinement};

/// What the sandbox should do for one call.
pub struct Plan<'a> {
    /// The workspace root (canonical).
    pub root: &'a Path,
    /// What must stay read-only.
    pub protected: &'a Protected,
    /// The call's own temp directory, writable.
    pub temp: &'a Path,
    /// The project's own cache directory outside the project (`XDG_CACHE_HOME` for the
    /// command), writable, kept between calls.
    pub cache: Option<&'a Path>,
    pub network: ShellNetwork,
    /// Use namespaces where the kernel allows (`sandbox: landlock` says no).
    pub namespaces: bool,
}

/// How a command's processes are contained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Processes {
    /// A PID namespace: everything ends with the command.
    Namespace,
    /// A supervisor that finds and kills every descendant (no PID namespace here).
    Walk,
    /// Only the process group (no supervisor on this OS).
    Group,
}

/// How a command's writes are confined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Writes {
    /// Read-only mounts over the protected places, Landlock around the project.
    Mounts,
    /// Landlock alone, granted entry by entry: new entries directly in the project root (or in
    /// a directory holding a git directory) cannot be created.
    Entries,
    /// Not confined, and why.
    Off(String),
}

/// What network a command has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Network {
    Off,
    LoopbackOnly,
    /// TCP refused by Landlock; UDP still open (no network namespace here).
    TcpOff,
    On,
    /// Wanted off but not isolated, and why.
    NotIsolated(String),
}

/// What was in force for a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub processes: Processes,
    pub writes: Writes,
    pub network: Network,
    /// The command sees a `/proc` of its own namespace only.
    pub private_proc: bool,
    /// The kernel's Landlock ABI, if any.
    pub landlock_abi: Option<u8>,
}

impl Report {
    /// True when everything the sandbox can do was done.
    pub fn is_full(&self) -> bool {
        self.processes == Processes::Namespace
            && self.writes == Writes::Mounts
            && self.private_proc
            && !matches!(self.network, Network::TcpOff | Network::NotIsolated(_))
    }

    /// The line a ws_shell result ends with: the network in force, and what is weaker than the
    /// full sandbox.
    pub fn note(&self) -> String {
        if let (Writes::Off(why), Network::NotIsolated(same)) = (&self.writes, &self.network) {
            if why == same {
                let group = if self.processes == Processes::Group {
                    "; processes are contained by their group only"
                } else {
                    ""
                };
                return format!(
                    "[sandbox off ({why}): writes and network are not confined{group}]"
                );
            }
        }
        let net = match &self.network {
            Network::Off => "network off",
            Network::LoopbackOnly => "network: its own loopback only",
            Network::TcpOff => "network: TCP off, UDP not isolated",
            Network::On => "network on",
            Network::NotIsolated(_) => "network NOT isolated",
        };
        let weaker = self.weaker();
        if weaker.is_empty() {
            format!("[sandbox: {net}]")
        } else {
            format!("[sandbox: {net}; weaker here: {}]", weaker.join("; "))
        }
    }

    /// What is weaker than the full sandbox, one phrase each.
    fn weaker(&self) -> Vec<String> {
        let mut out = Vec::new();
        match self.processes {
            Processes::Namespace => {}
            Processes::Walk => out
                .push("no PID namespace, leftover processes are found and killed by a walk".into()),
            Processes::Group => out.push("processes are contained by their group only".into()),
        }
        match &self.writes {
            Writes::Mounts => {}
            Writes::Entries => out.push(
                "no mount namespace, so new files cannot be created directly in the project root"
                    .into(),
            ),
            Writes::Off(why) => out.push(format!("writes not confined ({why})")),
        }
        if let Network::NotIsolated(why) = &self.network {
            out.push(format!("network not isolated ({why})"));
        }
        if !self.private_proc && self.processes != Processes::Group {
            out.push("the command sees this machine's processes".into());
        }
        out
    }

    /// The paragraph `slmcode doctor` prints.
    pub fn describe(&self) -> String {
        let processes = match self.processes {
            Processes::Namespace => "a PID namespace per command: nothing it starts outlives it",
            Processes::Walk => {
                "no PID namespace: a supervisor kills every descendant it finds after the command"
            }
            Processes::Group => {
                "process group only: a descendant that leaves the group can outlive the command"
            }
        };
        let writes = match &self.writes {
            Writes::Mounts => "the project is writable, .git/ and .slmcode/ (but scratch/) are read-only mounts, nothing outside but the call's temp directory".to_string(),
            Writes::Entries => "Landlock only: the project's entries are writable but .git/ and .slmcode/; new top-level files cannot be created".to_string(),
            Writes::Off(why) => format!("not confined: {why}"),
        };
        let network = match &self.network {
            Network::Off => "off (a network namespace with nothing in it)".to_string(),
            Network::LoopbackOnly => "its own loopback only (a network namespace)".to_string(),
            Network::TcpOff => {
                "TCP refused by Landlock; UDP is not isolated (no network namespace)".to_string()
            }
            Network::On => "on (shell_network: allow)".to_string(),
            Network::NotIsolated(why) => format!("NOT isolated: {why}"),
        };
        let abi = match self.landlock_abi {
            Some(v) => format!("Landlock ABI {v}"),
            None => "no Landlock".to_string(),
        };
        format!(
            "processes: {processes}; writes: {writes}; network: {network}; {abi}{}",
            if self.private_proc {
                "; /proc shows only the command's processes"
            } else {
                ""
            }
        )
    }
}

/// Builds the confinement for one call, and says what it is.
pub fn prepare(plan: &Plan) -> (Confinement, Report) {
    platform::prepare(plan)
}

/// Containment of the processes only, no sandbox: for the user's own hooks.
pub fn processes_only() -> Confinement {
    platform::processes_only()
}

/// What an unconfined call (`sandbox: off`) gets, for its report.
pub fn off_report(why: &str) -> Report {
    let (processes, landlock_abi) = platform::unconfined();
    Report {
        processes,
        writes: Writes::Off(why.to_string()),
        network: Network::NotIsolated(why.to_string()),
        private_proc: false,
        landlock_abi,
    }
}
