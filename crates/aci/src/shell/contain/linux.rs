//! Linux: the sandbox's supervisor is the command's subreaper and ends what it finds; this is
//! the harness's last sweep after it, through `/proc` — and all there is when the supervisor did
//! not report (it was killed, or could not start).

use std::collections::{HashMap, HashSet};
use std::process::Command;
use std::time::Duration;

pub use super::portable::{raw_status, status_parts};

/// The command's group leader (the supervisor), once spawned.
pub struct Tree {
    pid: libc::pid_t,
}

impl Tree {
    /// A process group of its own; the supervisor does the rest.
    pub fn prepare(cmd: &mut Command) -> Tree {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
        Tree { pid: 0 }
    }

    pub fn started(&mut self, pid: u32) {
        self.pid = libc::pid_t::try_from(pid).unwrap_or(0);
    }

    /// The supervisor sees every descendant itself: nothing to watch.
    pub fn watch(&mut self) {}

    pub fn terminate(&self) {
        signal(self.pid, libc::SIGTERM);
    }

    pub fn kill_leader(&self) {
        signal(self.pid, libc::SIGKILL);
    }

    pub fn kill_group(&self) {
        if self.pid > 0 {
            // SAFETY: killpg only sends a signal to the command's process group.
            unsafe {
                libc::killpg(self.pid, libc::SIGKILL);
            }
        }
    }

    /// Kills the command's process group and every descendant of its members, and reaps the
    /// ones re-parented to us. Returns how many were killed.
    pub fn sweep(&mut self) -> usize {
        let pid = self.pid;
        if pid <= 0 {
            return 0;
        }
        let me = std::process::id() as libc::pid_t;
        let mut killed: HashSet<libc::pid_t> = HashSet::new();
        for _round in 0..20 {
            let procs = processes();
            let mut ours: HashSet<libc::pid_t> = procs
                .iter()
                .filter(|(p, info)| **p != me && **p != pid && info.pgid == pid)
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
            self.kill_group();
            for p in &alive {
                signal(*p, libc::SIGKILL);
                killed.insert(*p);
            }
            reap(me, pid, &killed);
            if alive.is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        reap(me, pid, &killed);
        killed.len()
    }
}

/// Sends `sig` to one process; one already gone is no error.
fn signal(pid: libc::pid_t, sig: libc::c_int) {
    if pid > 0 {
        // SAFETY: kill only sends a signal, to the command's leader or to a pid found to be
        // part of its tree.
        unsafe {
            libc::kill(pid, sig);
        }
    }
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
