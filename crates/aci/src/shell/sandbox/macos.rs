//! macOS: the command runs under Seatbelt, `/usr/bin/sandbox-exec -p PROFILE … /bin/sh -c
//! COMMAND`, with the profile [`super::seatbelt`] generates for the call — the approach Codex
//! CLI and Gemini CLI take. Processes are contained by [`crate::shell::contain`]'s process
//! group and process-table walk; macOS has no PID namespace or subreaper.
//!
//! Not exercised in this project's CI (no macOS runner): the profile is unit-tested on Linux,
//! this file is type-checked for macOS.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use super::reads::Layout;
use super::seatbelt::{self, Grants};
use super::{Network, Plan, Processes, Reads, Report, Writes};
use crate::config::ShellNetwork;

/// Where macOS keeps it.
const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The arguments for `sandbox-exec` before the command, when the call is sandboxed.
pub struct Confinement {
    args: Option<Vec<OsString>>,
}

pub(super) fn unavailable() -> Option<String> {
    None
}

/// Seatbelt matches real paths: `/var` and `/tmp` are symlinks into `/private` here.
fn real(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

pub(super) fn prepare(plan: &Plan) -> (Confinement, Report) {
    if !Path::new(SANDBOX_EXEC).is_file() {
        return (
            Confinement { args: None },
            Report::off(
                Processes::Table,
                format!("{SANDBOX_EXEC} is missing"),
                plan.network,
            ),
        );
    }
    let root = real(plan.root);
    let protected: Vec<PathBuf> = plan
        .protected
        .absolute(plan.root)
        .into_iter()
        .map(|(p, _)| real(&p))
        .collect();
    let scratch: Vec<PathBuf> = plan
        .protected
        .scratch
        .iter()
        .map(|s| real(&plan.root.join(s.path.as_path())))
        .collect();
    let temp = real(plan.temp);
    let cache = plan.cache.map(real);
    let network = plan.network == ShellNetwork::Allow;
    let view = plan.view(Layout::MacOs);
    let words = view.describe(plan.home.map(real).as_deref());
    let shown: Vec<PathBuf> = view.shown.iter().map(|s| s.path.clone()).collect();
    let profile = seatbelt::profile(&Grants {
        hidden: &view.hidden_all,
        shown: &shown,
        secrets: &view.secrets,
        root: &root,
        protected: &protected,
        scratch: &scratch,
        temp: &temp,
        cache: cache.as_deref(),
        network,
    });
    (
        Confinement {
            args: Some(profile.args()),
        },
        Report {
            processes: Processes::Table,
            writes: Writes::Seatbelt,
            reads: Reads::Seatbelt(words),
            network: match plan.network {
                ShellNetwork::Allow => Network::On,
                ShellNetwork::Loopback => Network::OffNoLoopback,
                ShellNetwork::Deny => Network::Off,
            },
            private_proc: false,
            landlock_abi: None,
        },
    )
}

pub(super) fn processes_only() -> Confinement {
    Confinement { args: None }
}

pub(super) fn unconfined() -> (Processes, Option<u8>) {
    (Processes::Table, None)
}

pub(super) fn shell_command(c: &Confinement, command: &str) -> Command {
    let mut cmd = match &c.args {
        Some(args) => {
            let mut cmd = Command::new(SANDBOX_EXEC);
            cmd.args(args).arg("/bin/sh");
            cmd
        }
        None => Command::new("/bin/sh"),
    };
    cmd.arg("-c").arg(command);
    cmd
}

/// Between fork and exec only the inherited descriptors are closed: `sandbox-exec` applies the
/// profile and execs the shell in the same process.
pub(super) fn install(cmd: &mut Command, _c: Arc<Confinement>, _report: &std::io::PipeWriter) {
    super::portable::close_inherited(cmd);
}
