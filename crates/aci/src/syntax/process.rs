//! The parser process: tree-sitter's C code — the library and every grammar's hand-written
//! scanner — runs in a child process, so an input that trips one of its assertions, overflows a
//! buffer or a stack, or parses without end ends that child, never slmcode (and, under
//! `slmcode mcp`, never every client's session at once).
//!
//! Why a process. An `abort()` in C cannot be caught soundly in process: the library's state is
//! half-updated, and Rust frames cannot be unwound from a signal handler. A bare `fork()` of this
//! multithreaded process could run nothing but async-signal-safe calls in the child, and a parse
//! allocates. So the child is this same executable started afresh (spawned: fork and exec at
//! once), with an empty environment (no API key is copied into it), speaking length-prefixed
//! frames on its stdin and stdout: a request or reply in postcard, then the texts (or the
//! encoded symbols) it carries as frames of raw bytes. The guard ([`super::guard`]) still keeps every input
//! it knows to be dangerous away from the parser, and says why; this is for what it does not know.
//!
//! The binary turns isolation on ([`isolate`]) and starts the children as itself
//! (`slmcode_aci::serve_parser_process`, which runs [`serve`]). Without that (a library user,
//! the crate's own tests) parsing stays in process, behind the same guard.
//!
//! A few children at most, started when first needed; a file's requests always go to the same
//! one, so the tree a read parsed is there for the check of the edit that follows. A child that
//! dies or stalls is replaced at the next request, and the input that did it is remembered, so
//! asking again is answered at once.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{Skip, TreeCache, Verdict, PARSE_DEADLINE};
use crate::path::RelPath;

/// The first argument that makes this executable a parser process.
pub const ARG: &str = "--slmcode-parser-process";
/// Bumped whenever a request or reply changes shape.
const PROTOCOL: u32 = 1;
/// How long a new child may take to say hello.
const HELLO_WAIT: Duration = Duration::from_secs(30);
/// How long a reply may take: the parse's and the query's own deadlines, and room to spare.
const REPLY_WAIT: Duration = Duration::from_secs(3 * PARSE_DEADLINE.as_secs() + 15);
/// No frame is larger: two copies of the largest text parsed, and its symbols.
const MAX_FRAME: usize = 256 * 1024 * 1024;
/// At most this many children.
const MAX_CHILDREN: usize = 4;
/// After a child could not be started, parsing stays in process this long before the next try
/// (an index of thousands of files must not try a start per file).
const RETRY_START: Duration = Duration::from_secs(30);
/// How many inputs that ended or stalled a child are remembered.
const REMEMBERED: usize = 1024;
/// How much of a child's last words (stderr) is kept to say how it ended.
const LAST_WORDS: usize = 2048;

/// What the parent asks. The texts follow the request as raw frames: for `Check` the text
/// before (when `before`) and the text after; for the others the file's bytes.
#[derive(Serialize, Deserialize)]
pub(crate) enum Request {
    /// [`TreeCache::check_change`] in the child.
    Check { path: String, before: bool },
    /// Parse and keep the tree, so a later check is incremental.
    Prepare { path: String },
    /// A file's definitions and references, encoded by the handler [`serve`] was given.
    Extract { path: String },
}

impl Request {
    /// How many raw frames follow it.
    fn texts(&self) -> usize {
        match self {
            Request::Check { before: true, .. } => 2,
            _ => 1,
        }
    }
}

/// What the child answers. `Extracted` is followed by one raw frame: the encoded symbols.
#[derive(Serialize, Deserialize)]
pub(crate) enum Reply {
    Hello {
        protocol: u32,
        version: String,
    },
    Checked {
        after: Verdict,
        before: Option<Verdict>,
    },
    Prepared,
    Extracted,
}

/// Why a request got no reply.
#[derive(Debug)]
pub(crate) enum Failed {
    /// No child could be started (or it speaks another protocol): parse in process instead.
    Unavailable,
    /// The child ended or stalled on this input; it is not tried again.
    Skipped(Skip),
}

/// Debug builds only: with this variable set the guard lets everything through (and the
/// children inherit it), so the tests can show that what the guard refuses is contained by
/// the parser process as well.
pub const UNGUARDED: &str = "SLMCODE_TEST_UNGUARDED_PARSE";

static POOL: OnceLock<Pool> = OnceLock::new();

/// From now on, parse in child processes started as `exe` with [`ARG`]. The binary calls this
/// once, with itself; a second call changes nothing.
pub fn isolate(exe: PathBuf) {
    let children = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, MAX_CHILDREN);
    let _ = POOL.set(Pool {
        exe,
        slots: (0..children).map(|_| Mutex::new(None)).collect(),
        remembered: Mutex::new(HashMap::new()),
        no_start_until: Mutex::new(None),
    });
}

/// Whether parsing happens in child processes.
pub fn is_isolated() -> bool {
    POOL.get().is_some()
}

/// Sends `request` about `path`, with its `texts`, to the path's child; the reply (and the
/// raw frame an `Extracted` brings), or why there is none.
pub(crate) fn call(
    path: &str,
    request: &Request,
    texts: &[&[u8]],
) -> Result<(Reply, Vec<u8>), Failed> {
    match POOL.get() {
        Some(pool) => pool.call(path, request, texts),
        None => Err(Failed::Unavailable),
    }
}

/// The children, and what ended one.
struct Pool {
    exe: PathBuf,
    slots: Vec<Mutex<Option<Worker>>>,
    /// BLAKE3 of a request that ended or stalled a child, and how.
    remembered: Mutex<HashMap<[u8; 32], Skip>>,
    /// Set when a child could not be started: no new start before then.
    no_start_until: Mutex<Option<Instant>>,
}

impl Pool {
    fn call(
        &self,
        path: &str,
        request: &Request,
        texts: &[&[u8]],
    ) -> Result<(Reply, Vec<u8>), Failed> {
        let head = postcard::to_stdvec(request).map_err(|_| Failed::Unavailable)?;
        if texts.len() != request.texts() || texts.iter().any(|t| t.len() > MAX_FRAME) {
            return Err(Failed::Unavailable);
        }
        let mut hasher = blake3::Hasher::new();
        hasher.update(&head);
        for t in texts {
            hasher.update(&(t.len() as u64).to_le_bytes());
            hasher.update(t);
        }
        let key = *hasher.finalize().as_bytes();
        if let Some(skip) = self
            .remembered
            .lock()
            .ok()
            .and_then(|r| r.get(&key).cloned())
        {
            return Err(Failed::Skipped(skip));
        }
        let slot = self.slot(path).ok_or(Failed::Unavailable)?;
        let mut slot = slot.lock().map_err(|_| Failed::Unavailable)?;
        // A child that ended since its last reply (killed from outside) is replaced once.
        for _ in 0..2 {
            let worker = match slot.as_mut() {
                Some(w) => w,
                None => slot.insert(self.start().ok_or(Failed::Unavailable)?),
            };
            match worker.exchange(&head, texts) {
                Ok(answer) => return Ok(answer),
                Err(Ended::Garbled) => {
                    if let Some(mut w) = slot.take() {
                        w.end();
                    }
                    return Err(Failed::Unavailable);
                }
                Err(Ended::BeforeAsked) => {
                    if let Some(mut w) = slot.take() {
                        w.end();
                    }
                }
                Err(Ended::Late) => {
                    if let Some(mut w) = slot.take() {
                        w.end();
                    }
                    let skip = Skip::TimedOut {
                        seconds: REPLY_WAIT.as_secs(),
                    };
                    self.remember(key, &skip);
                    return Err(Failed::Skipped(skip));
                }
                Err(Ended::Died) => {
                    let how = slot.take().map_or_else(String::new, |mut w| w.end());
                    let skip = Skip::Crashed { how };
                    self.remember(key, &skip);
                    return Err(Failed::Skipped(skip));
                }
            }
        }
        Err(Failed::Unavailable)
    }

    /// A new child, unless one could not be started a moment ago.
    fn start(&self) -> Option<Worker> {
        let mut until = self.no_start_until.lock().ok()?;
        if until.is_some_and(|t| Instant::now() < t) {
            return None;
        }
        let worker = Worker::start(&self.exe);
        *until = worker.is_none().then(|| Instant::now() + RETRY_START);
        worker
    }

    /// The child for `path`: the same one every time.
    fn slot(&self, path: &str) -> Option<&Mutex<Option<Worker>>> {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        path.hash(&mut h);
        let n = u64::try_from(self.slots.len()).ok()?.max(1);
        self.slots.get(usize::try_from(h.finish() % n).ok()?)
    }

    fn remember(&self, key: [u8; 32], skip: &Skip) {
        if let Ok(mut r) = self.remembered.lock() {
            if r.len() >= REMEMBERED {
                r.clear();
            }
            r.insert(key, skip.clone());
        }
    }
}

/// How an exchange ended without a reply.
enum Ended {
    /// The request could not be written: the child was gone before it was asked.
    BeforeAsked,
    /// The child closed its output (it exited, or was killed) while working on the request.
    Died,
    /// No reply within [`REPLY_WAIT`].
    Late,
    /// A reply that does not decode: another build of the program.
    Garbled,
}

/// One child.
struct Worker {
    child: Child,
    input: ChildStdin,
    /// Frames from the child's stdout; `None` when it ended.
    replies: Receiver<Option<Vec<u8>>>,
    /// The tail of what the child wrote on stderr (an assertion names itself there).
    last_words: Arc<Mutex<Vec<u8>>>,
}

impl Worker {
    /// Starts a child and waits for its hello; `None` if it cannot start or speaks another
    /// protocol.
    fn start(exe: &Path) -> Option<Worker> {
        let mut command = Command::new(exe);
        command.arg(ARG).env_clear();
        if cfg!(debug_assertions) {
            if let Some(v) = std::env::var_os(UNGUARDED) {
                command.env(UNGUARDED, v);
            }
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .ok()?;
        let input = child.stdin.take()?;
        let mut output = child.stdout.take()?;
        let mut errors = child.stderr.take()?;
        let (tx, replies) = mpsc::channel();
        std::thread::spawn(move || loop {
            match read_frame(&mut output) {
                Ok(Some(frame)) => {
                    if tx.send(Some(frame)).is_err() {
                        return;
                    }
                }
                _ => {
                    let _ = tx.send(None);
                    return;
                }
            }
        });
        let last_words = Arc::new(Mutex::new(Vec::new()));
        let tail = Arc::clone(&last_words);
        std::thread::spawn(move || {
            let mut buf = [0u8; 1024];
            while let Ok(n) = errors.read(&mut buf) {
                if n == 0 {
                    return;
                }
                if let (Ok(mut t), Some(read)) = (tail.lock(), buf.get(..n)) {
                    t.extend_from_slice(read);
                    let excess = t.len().saturating_sub(LAST_WORDS);
                    t.drain(..excess);
                }
            }
        });
        let mut worker = Worker {
            child,
            input,
            replies,
            last_words,
        };
        let hello = match worker.replies.recv_timeout(HELLO_WAIT) {
            Ok(Some(frame)) => postcard::from_bytes::<Reply>(&frame).ok(),
            _ => None,
        };
        match hello {
            Some(Reply::Hello { protocol, version })
                if protocol == PROTOCOL && version == env!("CARGO_PKG_VERSION") =>
            {
                Some(worker)
            }
            _ => {
                worker.end();
                None
            }
        }
    }

    fn exchange(&mut self, head: &[u8], texts: &[&[u8]]) -> Result<(Reply, Vec<u8>), Ended> {
        // A reply left over from an exchange that gave up cannot be pending: a late child is
        // ended, never asked again.
        let sent = write_frame(&mut self.input, head).and_then(|()| {
            texts
                .iter()
                .try_for_each(|t| write_frame(&mut self.input, t))
        });
        if sent.is_err() {
            return Err(Ended::BeforeAsked);
        }
        let by = Instant::now() + REPLY_WAIT;
        let reply: Reply = postcard::from_bytes(&self.next(by)?).map_err(|_| Ended::Garbled)?;
        let payload = match reply {
            Reply::Extracted => self.next(by)?,
            _ => Vec::new(),
        };
        Ok((reply, payload))
    }

    /// The child's next frame, by `by`.
    fn next(&self, by: Instant) -> Result<Vec<u8>, Ended> {
        match self
            .replies
            .recv_timeout(by.saturating_duration_since(Instant::now()))
        {
            Ok(Some(frame)) => Ok(frame),
            Ok(None) | Err(RecvTimeoutError::Disconnected) => Err(Ended::Died),
            Err(RecvTimeoutError::Timeout) => Err(Ended::Late),
        }
    }

    /// Ends the child (if it still runs) and says how it ended: its exit status and the last
    /// line it wrote, without the paths of the build machine.
    fn end(&mut self) -> String {
        // It closed its output: give it a moment to finish exiting before killing it.
        let mut status = None;
        for _ in 0..50 {
            if let Ok(Some(s)) = self.child.try_wait() {
                status = Some(s);
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let status = match status {
            Some(s) => s.to_string(),
            None => {
                let _ = self.child.kill();
                match self.child.wait() {
                    Ok(s) => s.to_string(),
                    Err(e) => e.to_string(),
                }
            }
        };
        // The stderr reader may still be copying the last words.
        std::thread::sleep(Duration::from_millis(20));
        let words = self
            .last_words
            .lock()
            .map(|w| last_line(&String::from_utf8_lossy(&w)))
            .unwrap_or_default();
        if words.is_empty() {
            status
        } else {
            format!("{status}; {words}")
        }
    }
}

/// The last non-empty line, without the parts that are paths (an assertion's file, the
/// program's name): `ts_parser__external_scanner_serialize: Assertion `length <= 1024' failed.`
fn last_line(text: &str) -> String {
    let line = text
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    let parts: Vec<&str> = line.split(": ").collect();
    let after_paths = parts
        .iter()
        .rposition(|p| p.contains('/') || p.contains('\\'))
        .map_or(0, |i| i + 1);
    let rest = parts.get(after_paths..).unwrap_or_default().join(": ");
    let rest = if rest.is_empty() { line } else { &rest };
    rest.trim_end_matches('.').chars().take(200).collect()
}

fn write_frame(to: &mut impl Write, frame: &[u8]) -> io::Result<()> {
    let len = u32::try_from(frame.len()).map_err(|_| io::ErrorKind::InvalidInput)?;
    to.write_all(&len.to_le_bytes())?;
    to.write_all(frame)?;
    to.flush()
}

/// One frame; `None` at a clean end of the stream.
fn read_frame(from: &mut impl Read) -> io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    match from.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = usize::try_from(u32::from_le_bytes(len)).map_err(|_| io::ErrorKind::InvalidData)?;
    if len > MAX_FRAME {
        return Err(io::ErrorKind::InvalidData.into());
    }
    let mut frame = vec![0u8; len];
    from.read_exact(&mut frame)?;
    Ok(Some(frame))
}

/// The child's side: answers requests on stdin until it ends. `extract` reads a file's
/// definitions and encodes them (it lives with the symbols, above this module).
pub fn serve(extract: fn(&RelPath, &[u8]) -> Vec<u8>) -> io::Result<()> {
    let mut input = io::stdin().lock();
    let mut output = io::stdout().lock();
    let hello = Reply::Hello {
        protocol: PROTOCOL,
        version: env!("CARGO_PKG_VERSION").to_string(),
    };
    write_frame(&mut output, &encode(&hello)?)?;
    let trees = TreeCache::default();
    while let Some(frame) = read_frame(&mut input)? {
        let request: Request =
            postcard::from_bytes(&frame).map_err(|_| io::ErrorKind::InvalidData)?;
        let mut texts = Vec::with_capacity(2);
        for _ in 0..request.texts() {
            texts.push(read_frame(&mut input)?.ok_or(io::ErrorKind::UnexpectedEof)?);
        }
        let mut texts = texts.into_iter();
        let mut text = || texts.next().unwrap_or_default();
        let (reply, payload) = match request {
            Request::Check { path, before } => {
                let before = before.then(&mut text);
                let after = text();
                let (after, before) = trees.check_here(&rel(&path)?, before.as_deref(), &after);
                (Reply::Checked { after, before }, None)
            }
            Request::Prepare { path } => {
                trees.prepare_here(&rel(&path)?, &text());
                (Reply::Prepared, None)
            }
            Request::Extract { path } => (Reply::Extracted, Some(extract(&rel(&path)?, &text()))),
        };
        write_frame(&mut output, &encode(&reply)?)?;
        if let Some(payload) = payload {
            write_frame(&mut output, &payload)?;
        }
    }
    Ok(())
}

fn encode(reply: &Reply) -> io::Result<Vec<u8>> {
    postcard::to_stdvec(reply).map_err(|_| io::ErrorKind::InvalidData.into())
}

/// A path as the parent sent it (already checked there): only its file name matters here.
fn rel(path: &str) -> io::Result<RelPath> {
    RelPath::parse(path, Path::new("/")).map_err(|_| io::ErrorKind::InvalidData.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_a_clean_end_is_none() {
        let mut buf = Vec::new();
        write_frame(&mut buf, b"abc").unwrap();
        write_frame(&mut buf, b"").unwrap();
        let mut r = &buf[..];
        assert_eq!(read_frame(&mut r).unwrap().as_deref(), Some(&b"abc"[..]));
        assert_eq!(read_frame(&mut r).unwrap().as_deref(), Some(&b""[..]));
        assert_eq!(read_frame(&mut r).unwrap(), None);
    }

    #[test]
    fn an_oversized_frame_is_refused_before_it_is_allocated() {
        let len = u32::try_from(MAX_FRAME + 1).unwrap().to_le_bytes();
        let mut r = &len[..];
        assert!(read_frame(&mut r).is_err());
    }

    #[test]
    fn last_words_drop_the_paths() {
        let said = "slmcode: /root/.cargo/registry/src/x/tree-sitter-0.27.1/src/./parser.c:409: ts_parser__external_scanner_serialize: Assertion `length <= 1024' failed.\n";
        assert_eq!(
            last_line(said),
            "ts_parser__external_scanner_serialize: Assertion `length <= 1024' failed"
        );
        assert_eq!(last_line("\n\nout of memory\n"), "out of memory");
        assert_eq!(last_line(""), "");
    }
}
