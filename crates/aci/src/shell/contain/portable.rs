//! Containment without a subreaper (macOS, the BSDs; Linux with the `portable` feature): the
//! process group, descendants seen in the process table while the command runs, and a marker
//! in the environment that descendants inherit. See the parent module for what can escape.

use std::collections::{HashMap, HashSet};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use sysinfo::{Pid, ProcessRefreshKind, ProcessStatus, ProcessesToUpdate, System, UpdateKind};

/// The variable every process of a command inherits, holding the command's own token.
pub const MARKER: &str = "SLMCODE_CONTAIN";

/// How often the process table is read while a command runs: a descendant that lives at
/// least this long is seen, whatever it does afterwards.
const WATCH_EVERY: Duration = Duration::from_millis(100);

/// Rounds of the sweep before giving up on a process that keeps forking.
const SWEEP_ROUNDS: usize = 20;

/// The process table, one per harness and updated in place: reading it allocates for every
/// process on the machine, which a fresh table per call would pay again each time.
static TABLE: Mutex<Option<System>> = Mutex::new(None);

/// Runs `f` on the process table, made on first use; `None` where there is none.
fn with_table<T>(f: impl FnOnce(&mut System) -> T) -> Option<T> {
    let mut table = TABLE.lock().unwrap_or_else(PoisonError::into_inner);
    if table.is_none() {
        *table = System::new().ok();
    }
    table.as_mut().map(f)
}

/// One command's tree as far as the process table shows it.
pub struct Tree {
    pid: u32,
    /// `MARKER=token`, as it appears in a process's environment.
    marker: String,
    /// Every descendant seen, with its start time, so a reused pid is not mistaken for it.
    seen: HashMap<u32, u64>,
    last_look: Option<Instant>,
}

impl Tree {
    /// A process group of its own, and the marker in its environment.
    pub fn prepare(cmd: &mut Command) -> Tree {
        static CALLS: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let token = format!(
            "{}-{}-{nanos}",
            std::process::id(),
            CALLS.fetch_add(1, Ordering::Relaxed)
        );
        cmd.process_group(0).env(MARKER, &token);
        Tree {
            pid: 0,
            marker: format!("{MARKER}={token}"),
            seen: HashMap::new(),
            last_look: None,
        }
    }

    pub fn started(&mut self, pid: u32) {
        self.pid = pid;
    }

    /// Records the command's descendants, at most every [`WATCH_EVERY`].
    pub fn watch(&mut self) {
        if self.pid == 0 || self.last_look.is_some_and(|t| t.elapsed() < WATCH_EVERY) {
            return;
        }
        self.last_look = Some(Instant::now());
        let (pid, seen) = (self.pid, &mut self.seen);
        with_table(|system| {
            system.refresh_processes_specifics(
                ProcessesToUpdate::All,
                true,
                ProcessRefreshKind::nothing(),
            );
            for found in descendants(system, HashSet::from([pid])) {
                if let Some(p) = system.process(Pid::from_u32(found)) {
                    seen.entry(found).or_insert(p.start_time());
                }
            }
        });
    }

    pub fn terminate(&self) {
        signal(self.pid, libc::SIGTERM);
    }

    pub fn kill_leader(&self) {
        signal(self.pid, libc::SIGKILL);
    }

    pub fn kill_group(&self) {
        if let Ok(pid) = libc::pid_t::try_from(self.pid) {
            if pid > 0 {
                // SAFETY: killpg only sends a signal to the command's process group.
                unsafe {
                    libc::killpg(pid, libc::SIGKILL);
                }
            }
        }
    }

    /// Kills the group, every descendant seen that is still the same process, every process
    /// carrying the marker, and what descends from any of them, until none is left.
    pub fn sweep(&mut self) -> usize {
        if self.pid == 0 {
            return 0;
        }
        let me = std::process::id();
        let mut killed: HashSet<u32> = HashSet::new();
        for _round in 0..SWEEP_ROUNDS {
            let Some(alive) = with_table(|system| self.find(system, me)) else {
                self.kill_group();
                break;
            };
            for p in &alive {
                signal(*p, libc::SIGKILL);
                killed.insert(*p);
            }
            self.kill_group();
            if alive.is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        killed.len()
    }
}

impl Tree {
    /// The live processes that are the command's: in its group, seen before and still the same
    /// process (the leader too), or carrying its marker, and everything descended from those.
    fn find(&self, system: &mut System, me: u32) -> Vec<u32> {
        system.refresh_processes_specifics(
            ProcessesToUpdate::All,
            true,
            ProcessRefreshKind::nothing().with_environ(UpdateKind::Always),
        );
        // The leader counts only while it is the process seen (the watch records it with its
        // start time): once reaped, its pid may be another process's.
        let mut roots: HashSet<u32> = HashSet::new();
        for (pid, p) in system.processes() {
            let pid = pid.as_u32();
            let same = self.seen.get(&pid) == Some(&p.start_time());
            let marked = p
                .environ()
                .iter()
                .any(|v| v.as_encoded_bytes() == self.marker.as_bytes());
            if same || marked || in_group(pid, self.pid) {
                roots.insert(pid);
            }
        }
        descendants(system, roots)
            .into_iter()
            .filter(|p| *p != me && *p != self.pid)
            .filter(|p| {
                system
                    .process(Pid::from_u32(*p))
                    .is_some_and(|p| p.status() != ProcessStatus::Zombie)
            })
            .collect()
    }
}

/// `roots` and everything descended from them, through the table's parent links.
fn descendants(system: &System, roots: HashSet<u32>) -> HashSet<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for (pid, p) in system.processes() {
        if let Some(parent) = p.parent() {
            children
                .entry(parent.as_u32())
                .or_default()
                .push(pid.as_u32());
        }
    }
    let mut out = roots.clone();
    let mut todo: Vec<u32> = roots.into_iter().collect();
    while let Some(pid) = todo.pop() {
        for child in children.get(&pid).into_iter().flatten() {
            if out.insert(*child) {
                todo.push(*child);
            }
        }
    }
    out
}

/// Whether `pid` is in the process group `group` (the command's, which it leads).
fn in_group(pid: u32, group: u32) -> bool {
    let (Ok(pid), Ok(group)) = (libc::pid_t::try_from(pid), libc::pid_t::try_from(group)) else {
        return false;
    };
    // SAFETY: getpgid only reads the process group of a process.
    pid > 0 && unsafe { libc::getpgid(pid) } == group
}

/// Sends `sig` to one process; one already gone is no error.
fn signal(pid: u32, sig: libc::c_int) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        if pid > 0 {
            // SAFETY: kill only sends a signal, to the command's leader or to a process found
            // to be part of its tree.
            unsafe {
                libc::kill(pid, sig);
            }
        }
    }
}

/// The raw wait status of a finished process.
pub fn raw_status(status: ExitStatus) -> i32 {
    status.into_raw()
}

/// The exit code, or the terminating signal, of a raw wait status.
pub fn status_parts(raw: i32) -> (Option<i32>, Option<i32>) {
    let status = ExitStatus::from_raw(raw);
    (status.code(), status.signal())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Stdio;

    fn alive(pid: u32) -> bool {
        crate::platform::host::process_alive(pid)
            && std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| {
                !s.rsplit_once(')')
                    .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
            })
    }

    /// Runs `script`, which prints pids it leaves behind, one per line, then ends; sweeps.
    fn leaves_behind(script: &str, watch_for: Duration) -> (Vec<u32>, usize) {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c").arg(script).stdout(Stdio::piped());
        let mut tree = Tree::prepare(&mut cmd);
        let mut child = cmd.spawn().unwrap();
        tree.started(child.id());
        let until = Instant::now() + watch_for;
        while Instant::now() < until {
            tree.watch();
            std::thread::sleep(Duration::from_millis(10));
        }
        let mut out = String::new();
        std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
        child.wait().unwrap();
        let pids = out.lines().filter_map(|l| l.trim().parse().ok()).collect();
        (pids, tree.sweep())
    }

    #[test]
    fn a_background_child_in_the_group_is_killed() {
        let (pids, killed) = leaves_behind("sleep 300 >/dev/null & echo $!", Duration::ZERO);
        assert_eq!(pids.len(), 1);
        assert!(killed >= 1, "{killed}");
        std::thread::sleep(Duration::from_millis(50));
        assert!(!alive(pids[0]), "{pids:?} survived");
    }

    #[test]
    fn a_daemon_that_left_the_group_is_found_by_the_walk() {
        // A new session, a new group, its parent gone: only having been seen finds it.
        let script = "setsid sh -c 'env -u SLMCODE_CONTAIN sleep 300 >/dev/null 2>&1 & echo $!; sleep 1' & sleep 0.5";
        let (pids, _) = leaves_behind(script, Duration::from_millis(400));
        assert_eq!(pids.len(), 1, "{pids:?}");
        std::thread::sleep(Duration::from_millis(50));
        assert!(!alive(pids[0]), "{pids:?} survived");
    }

    #[test]
    fn a_daemon_never_seen_is_found_by_its_marker() {
        // Gone from the group and orphaned at once, before any look at the table.
        let script = "setsid sh -c 'sleep 300 >/dev/null 2>&1 & echo $!' ; sleep 0.1";
        let (pids, killed) = leaves_behind(script, Duration::ZERO);
        assert_eq!(pids.len(), 1, "{pids:?}");
        assert!(killed >= 1);
        std::thread::sleep(Duration::from_millis(50));
        assert!(!alive(pids[0]), "{pids:?} survived");
    }

    #[test]
    fn statuses_keep_codes_and_signals() {
        let status = Command::new("/bin/sh")
            .args(["-c", "exit 3"])
            .status()
            .unwrap();
        assert_eq!(status_parts(raw_status(status)), (Some(3), None));
        let status = Command::new("/bin/sh")
            .args(["-c", "kill -9 $$"])
            .status()
            .unwrap();
        assert_eq!(status_parts(raw_status(status)), (None, Some(9)));
    }
}
