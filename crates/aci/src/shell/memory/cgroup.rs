//! A cgroup of a command's own, with a memory limit (Linux).
//!
//! cgroup v2 is tried first: a new cgroup is made beside the one this process is in (a cgroup
//! with processes in it cannot hand controllers to children, so not below it), then at the
//! hierarchy's root, wherever the parent delegates `memory` and lets us write. Then the v1
//! memory hierarchy, below this process's own cgroup. Names are `slmcode-<pid>-<n>`; those
//! of dead processes (a harness killed mid-call) are removed when the next one is made.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Which hierarchy a cgroup is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    V1,
    V2,
}

/// A cgroup made for one command, removed when dropped.
pub struct Cgroup {
    dir: PathBuf,
    version: Version,
    /// `cgroup.procs`, opened for the child to write itself into.
    procs: File,
}

const PREFIX: &str = "slmcode-";

impl Cgroup {
    /// Makes a cgroup limited to `bytes`, or `None` when this process may not.
    pub fn create(bytes: u64) -> Option<Cgroup> {
        let own = fs::read_to_string("/proc/self/cgroup").ok()?;
        let mounts = fs::read_to_string("/proc/self/mountinfo").ok()?;
        for base in v2_bases(&own, &mounts) {
            if let Some(c) = Cgroup::make(&base, Version::V2, bytes) {
                return Some(c);
            }
        }
        let base = v1_base(&own, &mounts)?;
        Cgroup::make(&base, Version::V1, bytes)
    }

    fn make(base: &Path, version: Version, bytes: u64) -> Option<Cgroup> {
        if version == Version::V2 {
            let delegated = fs::read_to_string(base.join("cgroup.subtree_control")).ok()?;
            if !delegated.split_whitespace().any(|c| c == "memory") {
                return None;
            }
        }
        sweep(base);
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let dir = base.join(format!(
            "{PREFIX}{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir(&dir).ok()?;
        let made = (|| {
            let limit = bytes.to_string();
            match version {
                Version::V2 => {
                    write(&dir.join("memory.max"), &limit)?;
                    // Past the limit the command is stopped, not pushed into swap.
                    let _ = write(&dir.join("memory.swap.max"), "0");
                }
                Version::V1 => {
                    write(&dir.join("memory.limit_in_bytes"), &limit)?;
                    let _ = write(&dir.join("memory.memsw.limit_in_bytes"), &limit);
                }
            }
            OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_CLOEXEC)
                .open(dir.join("cgroup.procs"))
        })();
        match made {
            Ok(procs) => Some(Cgroup {
                dir,
                version,
                procs,
            }),
            Err(_) => {
                let _ = fs::remove_dir(&dir);
                None
            }
        }
    }

    /// The descriptor the child writes `0` to, joining the cgroup.
    pub fn procs_fd(&self) -> RawFd {
        self.procs.as_raw_fd()
    }

    /// How many processes the kernel killed for going over the limit.
    pub fn oom_kills(&self) -> u64 {
        let file = match self.version {
            Version::V2 => "memory.events",
            Version::V1 => "memory.oom_control",
        };
        fs::read_to_string(self.dir.join(file))
            .ok()
            .and_then(|text| {
                text.lines()
                    .find_map(|l| l.strip_prefix("oom_kill ")?.trim().parse().ok())
            })
            .unwrap_or(0)
    }
}

impl Drop for Cgroup {
    /// The command's processes are gone by now (its namespace ended, or its supervisor killed
    /// what was left); a cgroup can be removed once the kernel has let go of them, which may
    /// take a moment.
    fn drop(&mut self) {
        if self.version == Version::V2 {
            let _ = write(&self.dir.join("cgroup.kill"), "1");
        }
        for _ in 0..50 {
            if fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn write(path: &Path, text: &str) -> std::io::Result<()> {
    OpenOptions::new()
        .write(true)
        .open(path)?
        .write_all(text.as_bytes())
}

/// Removes the empty cgroups that dead slmcode processes left in `base`.
fn sweep(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|n| n.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !crate::platform::host::process_alive(pid) {
            let _ = fs::remove_dir(entry.path());
        }
    }
}

/// One line of mountinfo: where a filesystem of `fstype` is mounted, the part of it that is
/// mounted there, and its super options.
struct Mount<'a> {
    root: &'a str,
    point: &'a str,
    fstype: &'a str,
    options: &'a str,
}

fn mounts(mountinfo: &str) -> impl Iterator<Item = Mount<'_>> {
    mountinfo.lines().filter_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let left: Vec<&str> = left.split(' ').collect();
        let mut right = right.split(' ');
        Some(Mount {
            root: left.get(3)?,
            point: left.get(4)?,
            fstype: right.next()?,
            options: right.nth(1).unwrap_or(""),
        })
    })
}

/// Where `cgroup` (a path in the hierarchy) is on disk under `mount`.
fn on_disk(mount: &Mount, cgroup: &str) -> Option<PathBuf> {
    let inner = cgroup
        .strip_prefix(mount.root.trim_end_matches('/'))
        .filter(|rest| rest.is_empty() || rest.starts_with('/'))?;
    Some(Path::new(mount.point).join(inner.trim_start_matches('/')))
}

/// Candidate parents in the v2 hierarchy: beside this process's cgroup, then the root.
fn v2_bases(own: &str, mountinfo: &str) -> Vec<PathBuf> {
    let Some(path) = own.lines().find_map(|l| l.strip_prefix("0::")) else {
        return Vec::new();
    };
    let Some(mount) = mounts(mountinfo).find(|m| m.fstype == "cgroup2") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(dir) = on_disk(&mount, path) {
        if let Some(parent) = dir.parent().filter(|p| p.starts_with(mount.point)) {
            out.push(parent.to_path_buf());
        }
    }
    let root = PathBuf::from(mount.point);
    if !out.contains(&root) {
        out.push(root);
    }
    out
}

/// This process's own cgroup in the v1 memory hierarchy.
fn v1_base(own: &str, mountinfo: &str) -> Option<PathBuf> {
    let path = own.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers
            .split(',')
            .any(|c| c == "memory")
            .then_some(path)
    })?;
    let mount = mounts(mountinfo)
        .find(|m| m.fstype == "cgroup" && m.options.split(',').any(|o| o == "memory"))?;
    on_disk(&mount, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
30 25 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate
41 25 0:35 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
";

    #[test]
    fn cgroups_are_found_on_disk_from_proc() {
        let own = "0::/user.slice/user-1000.slice/session-2.scope\n";
        assert_eq!(
            v2_bases(own, MOUNTINFO),
            [
                PathBuf::from("/sys/fs/cgroup/user.slice/user-1000.slice"),
                PathBuf::from("/sys/fs/cgroup")
            ]
        );
        let own = "4:memory:/docker/abc/job\n0::/\n";
        assert_eq!(
            v1_base(own, MOUNTINFO),
            Some(PathBuf::from("/sys/fs/cgroup/memory/job"))
        );
        assert_eq!(v1_base("4:memory:/elsewhere\n", MOUNTINFO), None);
        assert_eq!(
            v2_bases("0::/\n", MOUNTINFO),
            [PathBuf::from("/sys/fs/cgroup")]
        );
    }
}
