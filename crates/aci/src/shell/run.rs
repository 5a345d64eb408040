//! Bounded execution of one shell command: its own process group, stdin `/dev/null`, a clean
//! environment, a timeout, output read continuously with head and tail kept and the middle
//! counted — and nothing outlives the call. The harness is a child subreaper, and after the
//! command exits (or times out) every remaining descendant is found and killed: by process
//! group, by a marker in its environment, and by parentage. So a grandchild cannot keep the
//! output pipe open and hang the call, and `setsid` or a double fork cannot escape.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, Once};
use std::time::{Duration, Instant};

use crate::shell::sandbox::Prepared;

/// Bytes kept from the start of the output…
pub const HEAD_BYTES: usize = 128 * 1024;
/// …and from its end. Together the most output ever held in memory: 256 KiB.
pub const TAIL_BYTES: usize = 128 * 1024;
/// How long to wait for the output pipe to drain once the command and its descendants are gone.
const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// What to run.
#[derive(Clone)]
pub struct RunSpec {
    /// Passed to `/bin/sh -c`.
    pub command: String,
    /// The working directory (the workspace root).
    pub cwd: PathBuf,
    pub timeout: Duration,
    /// The write sandbox to apply in the child, if any.
    pub sandbox: Option<Arc<Prepared>>,
    /// Variables added to the clean environment (the run's TMPDIR).
    pub extra_env: Vec<(String, String)>,
    /// Bytes for the command's stdin (a hook's event); empty means /dev/null.
    pub stdin: Vec<u8>,
}

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    TimedOut,
}

/// What a run produced. Output is stdout and stderr interleaved as written.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub exit: Exit,
    pub head: Vec<u8>,
    pub tail: Vec<u8>,
    /// Bytes between head and tail that were counted but not kept.
    pub omitted: u64,
    pub total: u64,
    /// Descendants still alive after the command ended, and killed.
    pub killed: usize,
    pub elapsed: Duration,
}

impl RunOutput {
    /// The output as text: head, a marker for what was left out, tail.
    pub fn text(&self) -> String {
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        if self.omitted > 0 {
            out.push_str(&format!(
                "\n[… {} bytes of output omitted …]\n",
                self.omitted
            ));
        }
        out.push_str(&String::from_utf8_lossy(&self.tail));
        out
    }
}

/// Output kept while it streams: a head, a ring of the latest bytes, and a count.
#[derive(Default)]
struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl Capture {
    fn push(&mut self, mut chunk: &[u8]) {
        self.total += chunk.len() as u64;
        if self.head.len() < HEAD_BYTES {
            let take = (HEAD_BYTES - self.head.len()).min(chunk.len());
            self.head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        if chunk.len() >= TAIL_BYTES {
            self.tail.clear();
            self.tail.extend(&chunk[chunk.len() - TAIL_BYTES..]);
        } else {
            let overflow = (self.tail.len() + chunk.len()).saturating_sub(TAIL_BYTES);
            self.tail.drain(..overflow);
            self.tail.extend(chunk);
        }
    }
}

/// Makes this process the reaper of its orphaned descendants (once per process), so a
/// double-forked grandchild is reparented to us and can be found and killed.
fn become_subreaper() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes one integer argument and touches no
        // memory of ours.
        unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        }
    });
}

/// Runs one command to completion or timeout, and leaves nothing running.
pub fn run(spec: &RunSpec) -> std::io::Result<RunOutput> {
    become_subreaper();
    static RUNS: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let marker = format!(
        "{}-{}-{nanos}",
        std::process::id(),
        RUNS.fetch_add(1, Ordering::Relaxed)
    );
    let started = Instant::now();
    let (mut reader, writer) = std::io::pipe()?;
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(&spec.command)
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(clean_env())
        .envs(spec.extra_env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .env(MARKER_VAR, &marker)
        .stdin(if spec.stdin.is_empty() {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stdout(writer.try_clone()?)
        .stderr(writer)
        .process_group(0);
    if let Some(sandbox) = &spec.sandbox {
        let sandbox = Arc::clone(sandbox);
        // SAFETY: the hook runs in the child between fork and exec; `apply` takes the ruleset
        // out of an uncontended mutex and makes the two Landlock syscalls, no allocation.
        unsafe {
            cmd.pre_exec(move || sandbox.apply());
        }
    }
    let mut child = cmd.spawn()?;
    // The parent's copies of the pipe's write end must go, or EOF never comes.
    drop(cmd);
    if let Some(mut input) = child.stdin.take() {
        let bytes = spec.stdin.clone();
        // A command that does not read its stdin closes the pipe; that is not an error.
        std::thread::spawn(move || {
            let _ = std::io::Write::write_all(&mut input, &bytes);
        });
    }
    let pid = child.id() as libc::pid_t;

    let capture = Arc::new(Mutex::new(Capture::default()));
    let (drained_tx, drained_rx) = mpsc::channel::<()>();
    {
        let capture = Arc::clone(&capture);
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if let Ok(mut c) = capture.lock() {
                            c.push(&buf[..n]);
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                }
            }
            let _ = drained_tx.send(());
        });
    }

    let (status_tx, status_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = status_tx.send(child.wait());
    });
    let exit = match status_rx.recv_timeout(spec.timeout) {
        Ok(status) => {
            let status = status?;
            match (status.code(), status.signal()) {
                (Some(code), _) => Exit::Code(code),
                (None, Some(sig)) => Exit::Signal(sig),
                _ => Exit::Code(-1),
            }
        }
        Err(_) => {
            kill_tree(pid, &marker);
            let _ = status_rx.recv_timeout(Duration::from_secs(5));
            Exit::TimedOut
        }
    };
    // After a normal exit too: whatever the command left behind goes now.
    let killed = kill_tree(pid, &marker);
    let _ = drained_rx.recv_timeout(DRAIN_GRACE);

    let c = capture
        .lock()
        .map(|c| {
            (
                c.head.clone(),
                c.tail.iter().copied().collect::<Vec<u8>>(),
                c.total,
            )
        })
        .unwrap_or_default();
    let (head, tail, total) = c;
    Ok(RunOutput {
        exit,
        omitted: total - head.len() as u64 - tail.len() as u64,
        head,
        tail,
        total,
        killed,
        elapsed: started.elapsed(),
    })
}

/// The environment variable every process of a run inherits, so its descendants can be
/// recognised after their parents are gone.
pub const MARKER_VAR: &str = "SLMCODE_RUN";

/// PATH, HOME and LANG from our environment (with defaults), TERM=dumb; nothing else — no
/// BASH_ENV, ENV or LD_PRELOAD can ride along.
fn clean_env() -> Vec<(String, String)> {
    let get = |k: &str, default: &str| std::env::var(k).unwrap_or_else(|_| default.to_string());
    vec![
        ("PATH".into(), get("PATH", "/usr/local/bin:/usr/bin:/bin")),
        ("HOME".into(), get("HOME", "/")),
        ("LANG".into(), get("LANG", "C.UTF-8")),
        ("TERM".into(), "dumb".into()),
    ]
}

/// One process as /proc shows it.
struct Proc {
    ppid: libc::pid_t,
    pgid: libc::pid_t,
}

fn processes() -> HashMap<libc::pid_t, Proc> {
    let mut out = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the command name, which is in parentheses and may hold spaces.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // state ppid pgrp …
        if let (Some(ppid), Some(pgid)) = (
            fields.get(1).and_then(|f| f.parse().ok()),
            fields.get(2).and_then(|f| f.parse().ok()),
        ) {
            out.insert(pid, Proc { ppid, pgid });
        }
    }
    out
}

fn has_marker(pid: libc::pid_t, marker: &str) -> bool {
    let want = format!("{MARKER_VAR}={marker}");
    std::fs::read(format!("/proc/{pid}/environ"))
        .map(|env| env.split(|b| *b == 0).any(|kv| kv == want.as_bytes()))
        .unwrap_or(false)
}

/// Kills the run's process group and every process that belongs to the run — by group, by
/// environment marker, or as a descendant of one of those — until none is left, and reaps
/// the ones reparented to us. Returns how many were killed.
fn kill_tree(pid: libc::pid_t, marker: &str) -> usize {
    let me = std::process::id() as libc::pid_t;
    let mut killed: HashSet<libc::pid_t> = HashSet::new();
    for _round in 0..20 {
        let procs = processes();
        let mut ours: HashSet<libc::pid_t> = procs
            .iter()
            .filter(|(p, info)| {
                **p != me && (info.pgid == pid || **p == pid || has_marker(**p, marker))
            })
            .map(|(p, _)| *p)
            .collect();
        // Anything descended from one of ours is ours too.
        loop {
            let more: Vec<libc::pid_t> = procs
                .iter()
                .filter(|(p, info)| !ours.contains(p) && ours.contains(&info.ppid))
                .map(|(p, _)| *p)
                .collect();
            if more.is_empty() {
                break;
            }
            ours.extend(more);
        }
        let alive: Vec<libc::pid_t> = ours.into_iter().filter(|p| !is_zombie(*p)).collect();
        // SAFETY: killpg and kill only send signals, to the run's group and to pids found to
        // be part of the run; one that is already gone is an error we ignore.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
        for p in &alive {
            unsafe {
                libc::kill(*p, libc::SIGKILL);
            }
            killed.insert(*p);
        }
        reap(me, pid, &killed);
        if alive.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    reap(me, pid, &killed);
    killed.remove(&pid);
    killed.len()
}

fn is_zombie(pid: libc::pid_t) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .and_then(|(_, r)| r.split_whitespace().next().map(|st| st == "Z"))
        })
        .unwrap_or(true)
}

/// Reaps the killed processes that were reparented to us (we are a subreaper) — never the
/// command itself, whose status its own waiter collects, and never a child of ours that this
/// run did not kill.
fn reap(me: libc::pid_t, command: libc::pid_t, killed: &HashSet<libc::pid_t>) {
    let procs = processes();
    for pid in killed {
        if *pid == command {
            continue;
        }
        if procs.get(pid).is_some_and(|p| p.ppid == me) {
            let mut status = 0;
            // SAFETY: waitpid on a specific child of ours that we killed, non-blocking.
            unsafe {
                libc::waitpid(*pid, &mut status, libc::WNOHANG);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_keeps_head_and_tail_within_bounds() {
        let mut c = Capture::default();
        for i in 0..40_000u32 {
            c.push(format!("line {i}\n").as_bytes());
        }
        assert!(c.head.len() <= HEAD_BYTES && c.tail.len() <= TAIL_BYTES);
        assert!(c.head.starts_with(b"line 0\n"));
        let tail: Vec<u8> = c.tail.iter().copied().collect();
        assert!(tail.ends_with(b"line 39999\n"));
        let big = vec![b'x'; 3 * TAIL_BYTES];
        c.push(&big);
        assert_eq!(c.tail.len(), TAIL_BYTES);
    }
}
