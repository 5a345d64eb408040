//! A bound on the memory of one ws_shell command (`shell_memory_max`), its children included.
//!
//! Where this process may make a cgroup — cgroup v2 below a cgroup that delegates the memory
//! controller, or the v1 memory hierarchy (as root, typically) — the command's supervisor
//! joins a fresh cgroup of its own before anything else happens (`cgroup`): the whole tree
//! counts against `memory.max`, going over it kills inside that cgroup only, and the kernel
//! counts the kill, so the result can say so for certain.
//!
//! Elsewhere every process of the command gets the limit as an rlimit: `RLIMIT_DATA` on Linux
//! (a process's heap and private writable mappings; unlike `RLIMIT_AS` it leaves alone the
//! address space that runtimes such as V8 and the JVM reserve without using), `RLIMIT_AS` on
//! other systems. An allocation over it fails; when the command then fails with an
//! out-of-memory message, the result says it probably ran out.
//!
//! A platform module (see [`crate::platform`]): cgroups are Linux's (not used with the
//! `portable` feature), rlimits every Unix's; Windows runs no commands.

use std::process::Command;

#[cfg(all(target_os = "linux", not(feature = "portable")))]
mod cgroup;
#[cfg(not(all(target_os = "linux", not(feature = "portable"))))]
mod cgroup {
    //! No cgroups here: every limit is an rlimit.
    pub struct Cgroup;
    impl Cgroup {
        pub fn create(_bytes: u64) -> Option<Cgroup> {
            None
        }
        #[cfg(unix)]
        pub fn procs_fd(&self) -> std::os::fd::RawFd {
            -1
        }
        pub fn oom_kills(&self) -> u64 {
            0
        }
    }
}

/// How a command's memory is bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// A cgroup of its own: the whole tree together, kills counted.
    Cgroup,
    /// An rlimit per process.
    Rlimit,
}

/// Whether a command went over its memory bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutOfMemory {
    No,
    /// The kernel killed it for going over (counted by its cgroup).
    Killed,
    /// It failed with an out-of-memory message while an rlimit bound it.
    Likely,
}

/// The bound for one command; a cgroup it made is removed when this is dropped.
pub struct MemoryLimit {
    bytes: u64,
    cgroup: Option<cgroup::Cgroup>,
}

/// The rlimit a process gets when there is no cgroup.
#[cfg(target_os = "linux")]
const RLIMIT: libc::__rlimit_resource_t = libc::RLIMIT_DATA;
#[cfg(all(unix, not(target_os = "linux")))]
const RLIMIT: libc::c_int = libc::RLIMIT_AS;

impl MemoryLimit {
    /// A cgroup when one can be made here, else an rlimit.
    pub fn new(bytes: u64) -> MemoryLimit {
        MemoryLimit {
            bytes,
            cgroup: cgroup::Cgroup::create(bytes),
        }
    }

    /// An rlimit, whatever the system offers (for the fallback's own tests, and for callers
    /// that must not make cgroups).
    pub fn rlimit(bytes: u64) -> MemoryLimit {
        MemoryLimit {
            bytes,
            cgroup: None,
        }
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn bound(&self) -> Bound {
        if self.cgroup.is_some() {
            Bound::Cgroup
        } else {
            Bound::Rlimit
        }
    }

    /// Sets the bound up in `cmd`'s child. Registered before the sandbox's own setup, whose
    /// supervisor never returns to run later hooks; what runs there is async-signal-safe (a
    /// write to a descriptor opened here, or setrlimit). If joining the cgroup fails, the
    /// child falls back to the rlimit.
    #[cfg(unix)]
    pub fn install(&self, cmd: &mut Command) {
        use std::os::unix::process::CommandExt;
        let procs = self.cgroup.as_ref().map(cgroup::Cgroup::procs_fd);
        let bytes = self.bytes as libc::rlim_t;
        // SAFETY: the closure makes raw system calls only, on a descriptor that stays open in
        // the parent until the child has exec'd (self outlives the spawn) and on the stack.
        unsafe {
            cmd.pre_exec(move || {
                if let Some(fd) = procs {
                    // "0" moves the writing process, and with it all it will start.
                    let joined = libc::write(fd, b"0".as_ptr().cast(), 1) == 1;
                    libc::close(fd);
                    if joined {
                        return Ok(());
                    }
                }
                let limit = libc::rlimit {
                    rlim_cur: bytes,
                    rlim_max: bytes,
                };
                if libc::setrlimit(RLIMIT, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }

    /// No commands run on Windows.
    #[cfg(not(unix))]
    pub fn install(&self, _cmd: &mut Command) {}

    /// Whether the command went over: counted by its cgroup, or a failure whose output says
    /// memory ran out.
    pub fn verdict(&self, failed: bool, output: &[&[u8]]) -> OutOfMemory {
        if self.cgroup.as_ref().is_some_and(|c| c.oom_kills() > 0) {
            return OutOfMemory::Killed;
        }
        if failed && output.iter().any(|o| says_out_of_memory(o)) {
            return OutOfMemory::Likely;
        }
        OutOfMemory::No
    }
}

/// What runtimes print when an allocation fails.
const OUT_OF_MEMORY: &[&str] = &[
    "cannot allocate memory",
    "out of memory",
    "memoryerror",
    "memory allocation of",
    "bad_alloc",
    "heap out of memory",
    "outofmemoryerror",
    "failed to allocate",
    "allocation failed",
];

fn says_out_of_memory(output: &[u8]) -> bool {
    let text = String::from_utf8_lossy(output).to_ascii_lowercase();
    OUT_OF_MEMORY.iter().any(|m| text.contains(m))
}

/// A size for people: a whole GiB or MiB when exact, else one decimal.
pub fn human(bytes: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    for (shift, unit) in [(30, "GiB"), (20, "MiB")] {
        if bytes >= 1 << shift {
            return format!("{:.1} {unit}", bytes as f64 / (1u64 << shift) as f64);
        }
    }
    format!("{bytes} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_memory_messages_are_recognised_only_on_failure() {
        let limit = MemoryLimit::rlimit(1 << 30);
        let py = b"Traceback (most recent call last):\nMemoryError\n";
        assert_eq!(limit.verdict(true, &[py]), OutOfMemory::Likely);
        assert_eq!(limit.verdict(false, &[py]), OutOfMemory::No);
        assert_eq!(
            limit.verdict(true, &[b"memory allocation of 1024 bytes failed"]),
            OutOfMemory::Likely
        );
        assert_eq!(limit.verdict(true, &[b"test failed"]), OutOfMemory::No);
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(human(64 << 20), "64 MiB");
        assert_eq!(human(12 << 30), "12 GiB");
        assert_eq!(human(1_500_000), "1.4 MiB");
        assert_eq!(human(12_662_366_208), "11.8 GiB");
        assert_eq!(human(100), "100 bytes");
    }
}
