//! Where the operating system shows: every call whose form differs between Linux, macOS and
//! Windows sits behind one small module per mechanism, so the rest of the crate is the same
//! code everywhere and a port is a matter of these files.
//!
//! - [`fs`]: what a file is beyond its bytes — identity (device, inode), hard links, permission
//!   bits, special files, opens that never block or follow a last symlink, private directories.
//! - [`host`]: this machine — its memory, whether a process is alive, the user.
//! - [`crate::shell::sandbox`]: what confines a ws_shell command (Linux: namespaces and
//!   Landlock; macOS: Seatbelt; elsewhere: nothing, and the result says so).
//! - [`crate::shell::contain`]: what ends a command's whole process tree (Linux: a supervising
//!   subreaper and a `/proc` walk; elsewhere: the process group and a walk of the process table).
//! - [`crate::shell::memory`]: what bounds a command's memory (a cgroup, else an rlimit).
//!
//! No other module calls `libc` or tests `cfg(unix)`, `cfg(windows)` or `cfg(target_os …)`;
//! `tests/it/platform.rs` reads the sources to keep it so. The `portable` feature makes Linux
//! use the fallbacks macOS and the BSDs get, so CI compiles and tests them here.

pub mod fs;
pub mod host;

/// Which implementation of the platform mechanisms this build uses, for `slmcode doctor` and
/// the README's platform table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    /// Linux with its own sandbox and containment.
    Linux,
    /// macOS: Seatbelt, the process group and a walk of the process table.
    MacOs,
    /// Another Unix, or Linux built with the `portable` feature: no sandbox, the process group
    /// and a walk of the process table.
    Portable,
    /// Windows: the tools but ws_shell.
    Windows,
}

impl Platform {
    /// This build's.
    pub const fn current() -> Platform {
        if cfg!(windows) {
            Platform::Windows
        } else if cfg!(feature = "portable") {
            Platform::Portable
        } else if cfg!(target_os = "linux") {
            Platform::Linux
        } else if cfg!(target_os = "macos") {
            Platform::MacOs
        } else {
            Platform::Portable
        }
    }

    /// One line for people: the OS and architecture, and which implementation is in use.
    pub fn describe(self) -> String {
        let os = std::env::consts::OS;
        let arch = std::env::consts::ARCH;
        let which = match self {
            Platform::Linux => "the Linux sandbox and containment",
            Platform::MacOs => "Seatbelt, process group and process-table walk",
            Platform::Portable if cfg!(feature = "portable") => {
                "the portable fallbacks (built with the `portable` feature)"
            }
            Platform::Portable => "the portable fallbacks (no sandbox for this OS)",
            Platform::Windows => "the tool layer; ws_shell is not available",
        };
        format!("{os} {arch}: {which}")
    }

    /// What this platform's implementation lacks that Linux's own has, one phrase each, for
    /// `slmcode doctor` (what a particular kernel lacks, the sandbox's report says).
    pub fn missing(self) -> Vec<&'static str> {
        const WALK: &str = "a PID namespace or subreaper: a process that leaves the command's group, is orphaned before the process table is read and clears its environment can outlive the command";
        const PROC: &str = "a private /proc: commands see this machine's processes";
        const CGROUP: &str =
            "cgroups: memory is bounded per process (an rlimit), not for the command's whole tree";
        match self {
            Platform::Linux => Vec::new(),
            Platform::MacOs => vec![
                WALK,
                PROC,
                CGROUP,
                "a loopback of the command's own: with the network off, loopback is closed too",
            ],
            Platform::Portable => vec![
                "a sandbox: commands may write anywhere this user may, and reach the network",
                WALK,
                PROC,
                CGROUP,
            ],
            Platform::Windows => {
                vec!["ws_shell and hooks: there is no sandbox to run commands in, so none run"]
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_platform_says_what_it_lacks() {
        assert!(Platform::Linux.missing().is_empty());
        for p in [Platform::MacOs, Platform::Portable, Platform::Windows] {
            assert!(!p.missing().is_empty(), "{p:?}");
        }
        assert!(Platform::Portable.missing()[0].starts_with("a sandbox"));
        assert!(Platform::Windows
            .describe()
            .contains("ws_shell is not available"));
    }

    #[test]
    fn this_build_is_the_one_its_features_choose() {
        let expected = if cfg!(feature = "portable") {
            Platform::Portable
        } else {
            Platform::Linux
        };
        assert_eq!(Platform::current(), expected);
        assert!(Platform::current().describe().starts_with("linux "));
    }
}
