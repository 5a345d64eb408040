//! What confines a ws_shell command, and what the operating system let us do.
//!
//! The policy decides on the command's text; this is what still holds when an allowed runner
//! (`cargo test`, `npm test`) executes hostile project code. On Linux (`linux`):
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
//! - **Reads**: the command sees the system, the project, its temp and cache directories,
//!   `PATH` and the toolchains' directories of the home ([`reads`]); the rest of the home,
//!   other homes, the shared temp directories and other top-level directories are covered by
//!   empty read-only file systems in its mount namespace, secret stores masked, and Landlock's
//!   read rules say the same. Without mount namespaces, Landlock's rules alone.
//! - **Secrets**: the command has no capabilities, cannot see the harness's process, and the
//!   harness is not dumpable, so its environment (the API key) cannot be read.
//!
//! On macOS (`macos`) the command runs under Seatbelt (`/usr/bin/sandbox-exec`) with a profile
//! generated for the call (`seatbelt`): the same writes and reads, no network unless allowed, and
//! [`crate::shell::contain`]'s process-table walk. Other Unix systems, and Linux built with the
//! `portable` feature, get `portable`: nothing confined, and the report says so. On Windows
//! ws_shell does not run at all ([`unavailable`]).
//!
//! Every weakening is named in the [`Report`], which the result and `slmcode doctor` show.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::boundary::Protected;
use crate::config::ShellNetwork;

#[cfg(all(target_os = "linux", not(feature = "portable")))]
mod linux;
#[cfg(all(target_os = "linux", not(feature = "portable")))]
use linux as platform;

#[cfg(all(target_os = "macos", not(feature = "portable")))]
mod macos;
#[cfg(all(target_os = "macos", not(feature = "portable")))]
use macos as platform;

pub mod reads;

// The profile is a pure function of the call, compiled and tested everywhere.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
mod seatbelt;

// The fallback is compiled (and its tests run) on every Unix, so it cannot rot unseen.
#[cfg(unix)]
#[cfg_attr(
    all(
        any(target_os = "linux", target_os = "macos"),
        not(feature = "portable")
    ),
    allow(dead_code)
)]
mod portable;
#[cfg(all(
    unix,
    any(
        not(any(target_os = "linux", target_os = "macos")),
        feature = "portable"
    )
))]
use portable as platform;

// Compiled everywhere, so its refusal is tested here.
#[cfg_attr(unix, allow(dead_code))]
mod unsupported;
#[cfg(not(unix))]
use unsupported as platform;

pub use platform::Confinement;

/// Why ws_shell (and the user's hooks) cannot run on this platform at all; `None` where they
/// can. Commands are never run without a sandbox the platform could have had.
pub fn unavailable() -> Option<String> {
    platform::unavailable()
}

/// The command `command` is run as under `c`: `/bin/sh -c COMMAND`, inside whatever the
/// platform starts it through.
pub fn shell_command(c: &Confinement, command: &str) -> Command {
    platform::shell_command(c, command)
}

/// Sets `cmd` up to run under `c`; `report` is the write end of the pipe the Linux supervisor
/// reports on (the other platforms write nothing to it).
pub fn install(cmd: &mut Command, c: std::sync::Arc<Confinement>, report: &std::io::PipeWriter) {
    platform::install(cmd, c, report)
}

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
    /// The user's home (`HOME`), whose toolchain directories the command sees.
    pub home: Option<&'a Path>,
    /// The user's `shell_read_allow`.
    pub read_allow: &'a [String],
    /// The directories programs come from, shown to the command.
    pub path_dirs: &'a [PathBuf],
}

impl Plan<'_> {
    /// The read view for this call on `layout`.
    pub fn view(&self, layout: reads::Layout) -> reads::View {
        reads::view(&reads::Inputs {
            layout,
            fs_root: Path::new("/"),
            home: self.home,
            allow: self.read_allow,
            root: self.root,
            temp: self.temp,
            cache: self.cache,
            path_dirs: self.path_dirs,
        })
    }
}

/// How a command's processes are contained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Processes {
    /// A PID namespace: everything ends with the command.
    Namespace,
    /// A supervisor that finds and kills every descendant (no PID namespace here).
    Walk,
    /// No supervisor on this OS: the process group, and the descendants found in the process
    /// table (see [`crate::shell::contain`]).
    Table,
}

/// How a command's writes are confined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Writes {
    /// Read-only mounts over the protected places, Landlock around the project.
    Mounts,
    /// Landlock alone, granted entry by entry: new entries directly in the project root (or in
    /// a directory holding a git directory) cannot be created.
    Entries,
    /// Seatbelt (macOS): the same places writable, by path.
    Seatbelt,
    /// Not confined, and why.
    Off(String),
}

/// What network a command has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Network {
    Off,
    LoopbackOnly,
    /// A loopback of its own was asked for, but this OS has none to give: off, loopback too.
    OffNoLoopback,
    /// TCP refused by Landlock; UDP still open (no network namespace here).
    TcpOff,
    On,
    /// Wanted off but not isolated, and why.
    NotIsolated(String),
}

/// What a command may read, and how that is held; each carries the view in words
/// ([`reads::View::describe`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reads {
    /// A view of its own: hidden places are empty read-only file systems in its mount
    /// namespace, secret stores masked; Landlock's read rules too where the kernel has them.
    View(String),
    /// Landlock's read rules alone (no mount namespace): hidden places cannot be read or
    /// listed, but their names can still be looked up one by one.
    Landlock(String),
    /// Seatbelt's `file-read*` rules (macOS).
    Seatbelt(String),
    /// Not confined: the command can read whatever the user can, and why.
    Off(String),
}

impl Reads {
    /// The words `slmcode doctor` prints.
    pub fn describe(&self) -> String {
        match self {
            Reads::View(v) => format!("a view of its own (mount namespace): {v}"),
            Reads::Landlock(v) => format!(
                "Landlock read rules (no mount namespace, so hidden names can still be looked up one by one): {v}"
            ),
            Reads::Seatbelt(v) => format!("Seatbelt read rules: {v}"),
            Reads::Off(why) => format!(
                "NOT confined ({why}): a command can read every file you can, secrets in your home included"
            ),
        }
    }

    /// Whether anything holds reads.
    pub fn is_confined(&self) -> bool {
        !matches!(self, Reads::Off(_))
    }
}

/// What was in force for a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub processes: Processes,
    pub writes: Writes,
    pub reads: Reads,
    pub network: Network,
    /// The command sees a `/proc` of its own namespace only.
    pub private_proc: bool,
    /// The kernel's Landlock ABI, if any.
    pub landlock_abi: Option<u8>,
}

impl Report {
    /// Nothing confined, for `why`; processes contained as `processes` says. The network is
    /// on only where the user allowed it.
    fn off(processes: Processes, why: String, network: ShellNetwork) -> Report {
        Report {
            processes,
            network: if network == ShellNetwork::Allow {
                Network::On
            } else {
                Network::NotIsolated(why.clone())
            },
            reads: Reads::Off(why.clone()),
            writes: Writes::Off(why),
            private_proc: false,
            landlock_abi: None,
        }
    }

    /// True when everything the sandbox can do was done.
    pub fn is_full(&self) -> bool {
        self.processes == Processes::Namespace
            && self.writes == Writes::Mounts
            && matches!(self.reads, Reads::View(_))
            && self.private_proc
            && !matches!(self.network, Network::TcpOff | Network::NotIsolated(_))
    }

    /// The line a ws_shell result ends with: the network in force, and what is weaker than the
    /// full sandbox.
    pub fn note(&self) -> String {
        if let (Writes::Off(why), Network::NotIsolated(same)) = (&self.writes, &self.network) {
            if why == same {
                let group = if self.processes == Processes::Table {
                    "; leftover processes are found in the process table"
                } else {
                    ""
                };
                return format!(
                    "[sandbox off ({why}): writes, reads and network are not confined{group}]"
                );
            }
        }
        let net = match &self.network {
            Network::Off => "network off",
            Network::LoopbackOnly => "network: its own loopback only",
            Network::OffNoLoopback => "network off, loopback too",
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
            Processes::Table => {
                out.push("no subreaper, leftover processes are found in the process table".into())
            }
        }
        match &self.writes {
            Writes::Mounts | Writes::Seatbelt => {}
            Writes::Entries => out.push(
                "no mount namespace, so new files cannot be created directly in the project root"
                    .into(),
            ),
            Writes::Off(why) => out.push(format!("writes not confined ({why})")),
        }
        if let Reads::Off(why) = &self.reads {
            out.push(format!("reads not confined ({why})"));
        }
        if let Network::NotIsolated(why) = &self.network {
            out.push(format!("network not isolated ({why})"));
        }
        if self.network == Network::OffNoLoopback {
            out.push(
                "no loopback of the command's own, so a server a test starts cannot be reached"
                    .into(),
            );
        }
        if !self.private_proc && self.processes != Processes::Table {
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
            Processes::Table => {
                "process group and process table: the group, every descendant seen while it ran and every process carrying its environment marker are killed after it; one that leaves the group, is orphaned before it is seen and clears its environment can outlive it"
            }
        };
        let writes = match &self.writes {
            Writes::Mounts => "the project is writable, .git/ and .slmcode/ (but scratch/) are read-only mounts, nothing outside but the call's temp directory".to_string(),
            Writes::Entries => "Landlock only: the project's entries are writable but .git/ and .slmcode/; new top-level files cannot be created".to_string(),
            Writes::Seatbelt => "Seatbelt: the project is writable but .git/ and .slmcode/ (but scratch/), nothing outside but the call's temp directory".to_string(),
            Writes::Off(why) => format!("not confined: {why}"),
        };
        let network = match &self.network {
            Network::Off if self.writes == Writes::Seatbelt => "off (Seatbelt)".to_string(),
            Network::Off => "off (a network namespace with nothing in it)".to_string(),
            Network::LoopbackOnly => "its own loopback only (a network namespace)".to_string(),
            Network::OffNoLoopback => {
                "off, loopback too: shell_network: loopback asks for a loopback of the command's own, which this OS cannot give".to_string()
            }
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
        reads: Reads::Off(why.to_string()),
        network: Network::NotIsolated(why.to_string()),
        private_proc: false,
        landlock_abi,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a macOS call's result and `slmcode doctor` say: Seatbelt's writes count as
    /// confined, the process-table walk and a missing loopback are named as weaker.
    #[test]
    fn the_seatbelt_report_names_what_is_weaker() {
        let report = Report {
            processes: Processes::Table,
            writes: Writes::Seatbelt,
            reads: Reads::Seatbelt("the system, the project".into()),
            network: Network::Off,
            private_proc: false,
            landlock_abi: None,
        };
        assert_eq!(
            report.note(),
            "[sandbox: network off; weaker here: no subreaper, leftover processes are found in the process table]"
        );
        assert!(
            report.describe().contains(
                "writes: Seatbelt: the project is writable but .git/ and .slmcode/ (but scratch/)"
            ),
            "{}",
            report.describe()
        );
        assert!(report.describe().contains("network: off (Seatbelt)"));
        let report = Report {
            network: Network::OffNoLoopback,
            ..report
        };
        assert_eq!(
            report.note(),
            "[sandbox: network off, loopback too; weaker here: no subreaper, leftover processes are found in the process table; no loopback of the command's own, so a server a test starts cannot be reached]"
        );
        assert!(!report.is_full());
    }
}
