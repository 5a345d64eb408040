//! Bounded execution of one shell command: a supervisor that leaves nothing running (see
//! [`crate::shell::sandbox`]), stdin `/dev/null` or given bytes, the environment the caller
//! built (nothing of ours leaks in), a timeout, and output read continuously with head and tail
//! kept and the middle counted, so memory stays flat whatever the command prints.

use std::collections::VecDeque;
use std::io::Read;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use crate::control::{CallControl, Progress};
use crate::shell::contain::{self, Tree};
use crate::shell::memory::{MemoryLimit, OutOfMemory};
use crate::shell::sandbox::{self, Confinement};

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
    /// The working directory.
    pub cwd: PathBuf,
    pub timeout: Duration,
    /// The command's whole environment (see [`crate::shell::env`]).
    pub env: Vec<(String, String)>,
    /// Bytes for the command's stdin (a hook's event); empty means /dev/null.
    pub stdin: Vec<u8>,
    /// What confines it: the sandbox, or the supervisor alone.
    pub confinement: Arc<Confinement>,
    /// The memory it may use, its children included; none means unbounded.
    pub memory: Option<Arc<MemoryLimit>>,
    /// Stops the command when cancelled, and hears its progress.
    pub control: CallControl,
}

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    TimedOut,
    /// The caller cancelled the call; the command and its descendants were killed.
    Cancelled,
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
    /// Whether it went over its memory bound.
    pub out_of_memory: OutOfMemory,
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
    /// The last non-empty line written so far, for progress reports.
    fn last_line(&self) -> Option<String> {
        let (a, b) = self.tail.as_slices();
        let bytes: Vec<u8> = if self.tail.is_empty() {
            self.head.clone()
        } else {
            [a, b].concat()
        };
        let text = String::from_utf8_lossy(&bytes);
        text.lines()
            .rev()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(|l| l.chars().take(200).collect())
    }

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

/// What the supervisor and the init wrote to the report pipe.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Records {
    /// The command's raw wait status, and how many processes of its namespace were still
    /// running when it ended, from the init of a PID namespace.
    pub command: Option<(i32, u32)>,
    /// The supervisor's report.
    pub supervisor: Option<Supervised>,
}

/// The supervisor's report: the raw wait status of its child, how many leftover processes it
/// reaped, and whether the harness stopped it for a timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Supervised {
    pub status: i32,
    pub killed: u32,
    pub timed_out: bool,
}

impl Records {
    /// Reads the records; anything malformed ends the reading.
    pub fn parse(mut bytes: &[u8]) -> Records {
        let mut out = Records::default();
        let word = |b: &[u8]| [b[0], b[1], b[2], b[3]];
        loop {
            match bytes {
                [b'H', rest @ ..] if rest.len() >= 8 => {
                    out.command = Some((
                        i32::from_le_bytes(word(rest)),
                        u32::from_le_bytes(word(&rest[4..])),
                    ));
                    bytes = &rest[8..];
                }
                [b'C', rest @ ..] if rest.len() >= 9 => {
                    out.supervisor = Some(Supervised {
                        status: i32::from_le_bytes(word(rest)),
                        killed: u32::from_le_bytes(word(&rest[4..])),
                        timed_out: rest[8] != 0,
                    });
                    bytes = &rest[9..];
                }
                _ => return out,
            }
        }
    }

    /// The command's raw wait status: the init's word for it, else the supervisor's child.
    pub fn status(&self) -> Option<i32> {
        self.command
            .map(|(status, _)| status)
            .or(self.supervisor.map(|s| s.status))
    }
}

/// How long the supervisor gets to end everything after it is told the time is up.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// Runs one command to completion or timeout, and leaves nothing running.
pub fn run(spec: &RunSpec) -> std::io::Result<RunOutput> {
    let started = Instant::now();
    let (mut reader, writer) = std::io::pipe()?;
    let (mut report_reader, report_writer) = std::io::pipe()?;
    let mut cmd = sandbox::shell_command(&spec.confinement, &spec.command);
    cmd.current_dir(&spec.cwd)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(if spec.stdin.is_empty() {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stdout(writer.try_clone()?)
        .stderr(writer);
    let mut tree = Tree::prepare(&mut cmd);
    // Before the sandbox's setup, whose supervisor does not return to later hooks.
    if let Some(memory) = &spec.memory {
        memory.install(&mut cmd);
    }
    sandbox::install(&mut cmd, Arc::clone(&spec.confinement), &report_writer);
    let spawned = cmd.spawn();
    // The parent's copies of the pipes' write ends must go, or EOF never comes.
    drop(cmd);
    drop(report_writer);
    let mut child = spawned?;
    if let Some(mut input) = child.stdin.take() {
        let bytes = spec.stdin.clone();
        // A command that does not read its stdin closes the pipe; that is not an error.
        std::thread::spawn(move || {
            let _ = std::io::Write::write_all(&mut input, &bytes);
        });
    }
    tree.started(child.id());

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
    let (report_tx, report_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = report_reader.read_to_end(&mut bytes);
        let _ = report_tx.send(bytes);
    });

    let (status_tx, status_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = status_tx.send(child.wait());
    });
    let mut killed = 0usize;
    let (waited, stopped) = match wait(spec, started, &status_rx, &capture, &mut tree) {
        Waited::Ended(status) => (Some(status?), None),
        Waited::Stop(why) => {
            let (status, swept) = stop(&mut tree, &status_rx);
            killed += swept;
            (status, Some(why))
        }
    };
    let records = Records::parse(&report_rx.recv_timeout(DRAIN_GRACE).unwrap_or_default());
    match records.supervisor {
        // The supervisor ended everything and said so; its group is empty, but a last signal
        // to it costs nothing.
        Some(s) => {
            killed += s.killed as usize;
            tree.kill_group();
        }
        // No supervisor (another system), or it did not finish: the group and its
        // descendants are found and killed here.
        None => killed += tree.sweep(),
    }
    if let Some((_, n)) = records.command {
        killed += n as usize;
    }
    let _ = drained_rx.recv_timeout(DRAIN_GRACE);

    let raw = records.status().or_else(|| waited.map(contain::raw_status));
    let exit = if let Some(why) = stopped {
        why
    } else if records.supervisor.is_some_and(|s| s.timed_out) {
        Exit::TimedOut
    } else {
        match raw.map(contain::status_parts) {
            Some((Some(code), _)) => Exit::Code(code),
            Some((None, Some(sig))) => Exit::Signal(sig),
            _ => Exit::Code(-1),
        }
    };
    let (head, tail, total) = capture
        .lock()
        .map(|c| {
            (
                c.head.clone(),
                c.tail.iter().copied().collect::<Vec<u8>>(),
                c.total,
            )
        })
        .unwrap_or_default();
    let out_of_memory = spec.memory.as_ref().map_or(OutOfMemory::No, |m| {
        m.verdict(exit != Exit::Code(0), &[&head, &tail])
    });
    Ok(RunOutput {
        out_of_memory,
        exit,
        omitted: total - head.len() as u64 - tail.len() as u64,
        head,
        tail,
        total,
        killed,
        elapsed: started.elapsed(),
    })
}

/// How often a waiting run looks at the stop switch: a cancelled command is gone within this
/// and the supervisor's stop.
const TICK: Duration = Duration::from_millis(25);

/// How often progress is reported to a caller that listens.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// How the wait for the command ended.
enum Waited {
    Ended(std::io::Result<ExitStatus>),
    /// It must be stopped: its time is up ([`Exit::TimedOut`]) or it was cancelled.
    Stop(Exit),
}

/// Waits for the command to end, its timeout, or a cancel; reports progress on the way.
fn wait(
    spec: &RunSpec,
    started: Instant,
    status_rx: &mpsc::Receiver<std::io::Result<ExitStatus>>,
    capture: &Mutex<Capture>,
    tree: &mut Tree,
) -> Waited {
    let deadline = started + spec.timeout;
    let mut next_report = started + PROGRESS_EVERY;
    loop {
        if spec.control.is_cancelled() {
            return Waited::Stop(Exit::Cancelled);
        }
        let now = Instant::now();
        if now >= deadline {
            return Waited::Stop(Exit::TimedOut);
        }
        tree.watch();
        match status_rx.recv_timeout(TICK.min(deadline - now)) {
            Ok(status) => return Waited::Ended(status),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            // The waiting thread is gone without a status: stop everything, to be sure.
            Err(mpsc::RecvTimeoutError::Disconnected) => return Waited::Stop(Exit::Code(-1)),
        }
        if spec.control.wants_progress() && Instant::now() >= next_report {
            next_report += PROGRESS_EVERY;
            let last_line = capture.lock().ok().and_then(|c| c.last_line());
            spec.control.report(Progress {
                elapsed: started.elapsed(),
                last_line,
            });
        }
    }
}

/// The time is up: the supervisor is asked to end everything (repeatedly, in case the first
/// signal arrives before it listens); if it has not within [`STOP_GRACE`], it is killed and its
/// tree swept. Returns its status, if it came, and how many the sweep killed.
fn stop(
    tree: &mut Tree,
    status_rx: &mpsc::Receiver<std::io::Result<ExitStatus>>,
) -> (Option<ExitStatus>, usize) {
    let deadline = Instant::now() + STOP_GRACE;
    while Instant::now() < deadline {
        tree.terminate();
        if let Ok(status) = status_rx.recv_timeout(Duration::from_millis(100)) {
            return (status.ok(), 0);
        }
    }
    let swept = tree.sweep();
    tree.kill_leader();
    let status = status_rx
        .recv_timeout(Duration::from_secs(5))
        .ok()
        .and_then(Result::ok);
    (status, swept)
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
