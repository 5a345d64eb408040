//! This machine: how much memory it has (the default `shell_memory_max`), whether a process is
//! still alive (a stale lock's owner), who the user is (the private temp directories), and how
//! to start this very program again (the parser process).

/// The machine's memory in bytes, where it can be learned.
pub fn physical_memory() -> Option<u64> {
    use sysinfo::{MemoryRefreshKind, RefreshKind, System};
    let system = System::new_with_specifics(
        RefreshKind::nothing().with_memory(MemoryRefreshKind::nothing().with_ram()),
    )
    .ok()?;
    Some(system.total_memory()).filter(|b| *b > 0)
}

/// What starts this very program again: on Linux `/proc/self/exe`, which is the running
/// binary even after the file on disk was replaced (an upgrade during a long session) or
/// deleted; elsewhere the path it was started from.
pub fn this_program() -> std::io::Result<std::path::PathBuf> {
    if cfg!(target_os = "linux") {
        Ok(std::path::PathBuf::from("/proc/self/exe"))
    } else {
        std::env::current_exe()
    }
}

pub use imp::*;

#[cfg(unix)]
mod imp {
    /// Whether a process with this pid exists (one of another user's counts).
    pub fn process_alive(pid: u32) -> bool {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        if pid <= 0 {
            return true;
        }
        // SAFETY: signal 0 only asks whether the process exists; nothing is sent.
        if unsafe { libc::kill(pid, 0) } == 0 {
            return true;
        }
        std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }

    /// The effective user id.
    pub fn user_id() -> u32 {
        // SAFETY: geteuid cannot fail.
        unsafe { libc::geteuid() }
    }
}

#[cfg(not(unix))]
mod imp {
    /// Whether a process with this pid exists, from the process table.
    pub fn process_alive(pid: u32) -> bool {
        use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, System};
        let Ok(mut system) = System::new() else {
            // Not known: it counts as alive, so nothing of it is swept.
            return true;
        };
        let pid = Pid::from_u32(pid);
        system.refresh_processes_specifics(
            ProcessesToUpdate::Some(&[pid]),
            true,
            ProcessRefreshKind::nothing(),
        );
        system.process(pid).is_some()
    }

    /// No numeric user id here; the temp directories are per user already.
    pub fn user_id() -> u32 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine_has_memory_and_this_process_is_alive() {
        assert!(physical_memory().is_some_and(|b| b >= 64 << 20));
        assert!(process_alive(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!process_alive(pid));
    }
}
