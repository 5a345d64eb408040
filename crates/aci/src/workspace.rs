//! The workspace a session works in: the jailed root, the limits, and what this session has
//! done so far (what it read, its checklist). One `Workspace` is one session; the CLI, the
//! agent loop and the MCP server each hold one per conversation.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use crate::checkpoint::Checkpoints;
use crate::config::Config;
use crate::control::CallControl;
use crate::loopguard::LoopGuard;
use crate::path::{Jail, RelPath};
use crate::secrets::Secrets;
use crate::symbols::SymbolIndex;
use crate::syntax::TreeCache;

/// What a session knows about a file it read: enough to tell later whether the file changed
/// on disk since, for the read-before-edit rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadRecord {
    /// BLAKE3 of the whole file at the time of the read.
    pub hash: [u8; 32],
    /// Size in bytes at the time of the read.
    pub len: u64,
}

/// The read-before-edit state of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Freshness {
    /// Read in this session, and unchanged on disk since.
    Fresh,
    NeverRead,
    /// Read, but the bytes on disk differ from what was read.
    Changed,
}

/// One checklist item of ws_todo.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoItem {
    pub text: String,
    pub done: bool,
}

/// State that carries from one call to the next within a session.
#[derive(Debug, Default)]
pub struct Session {
    /// Keyed by the resolved path (symlinks followed), so two spellings of one file agree.
    reads: HashMap<RelPath, ReadRecord>,
    read_epoch: u64,
    /// The current checklist; ws_todo replaces it whole.
    pub todo: Vec<TodoItem>,
    /// The first copies of the paths this session changed.
    pub checkpoints: Checkpoints,
    /// Repeated-call detection for the current task.
    pub loop_guard: LoopGuard,
    /// Parse trees of files read or written, for incremental syntax checks.
    pub trees: TreeCache,
    /// Every path this session wrote, created, deleted or moved (both sides of a move): what a
    /// run reports as its files changed.
    pub changed: std::collections::BTreeSet<RelPath>,
    /// The project's symbol index (ws_outline, ws_symbols, the repo map), loaded on first
    /// use; the mutation path marks what it changed.
    pub symbols: SymbolIndex,
    /// The server-wide record of what was shown, for a request without a session.
    shared: Option<Arc<SharedReads>>,
}

/// What one server showed any of its clients: for a protocol revision without sessions
/// (MCP 2026-07-28 over HTTP), where every request stands alone and no session can remember a
/// read. A file may then be edited when its current bytes are bytes this server showed — to
/// any client. Keyed by the resolved path and the BLAKE3 of the bytes; bounded.
#[derive(Debug, Default)]
pub struct SharedReads {
    shown: Mutex<HashMap<RelPath, VecDeque<[u8; 32]>>>,
}

/// Versions of one file remembered (the latest kept).
const SHOWN_VERSIONS: usize = 8;
/// Files remembered; past this, one is forgotten for each new one (it must be read again).
const SHOWN_FILES: usize = 65_536;

impl SharedReads {
    pub fn new() -> Arc<SharedReads> {
        Arc::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RelPath, VecDeque<[u8; 32]>>> {
        self.shown.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn record(&self, path: &RelPath, hash: [u8; 32]) {
        let mut shown = self.lock();
        if !shown.contains_key(path) && shown.len() >= SHOWN_FILES {
            if let Some(old) = shown.keys().next().cloned() {
                shown.remove(&old);
            }
        }
        let versions = shown.entry(path.clone()).or_default();
        versions.retain(|h| *h != hash);
        versions.push_back(hash);
        while versions.len() > SHOWN_VERSIONS {
            versions.pop_front();
        }
    }

    /// Whether `current` is what was shown of `path`.
    fn freshness(&self, path: &RelPath, current: &[u8]) -> Freshness {
        match self.lock().get(path) {
            None => Freshness::NeverRead,
            Some(versions) if versions.contains(blake3::hash(current).as_bytes()) => {
                Freshness::Fresh
            }
            Some(_) => Freshness::Changed,
        }
    }
}

impl Session {
    /// Reads are also recorded in, and judged by, the server-wide `store` (a request without
    /// a session).
    pub fn share_reads(&mut self, store: Arc<SharedReads>) {
        self.shared = Some(store);
    }

    /// Notes that `path` (already resolved through the jail) was read with this content.
    pub fn record_read(&mut self, resolved: RelPath, record: ReadRecord) {
        if let Some(shared) = &self.shared {
            shared.record(&resolved, record.hash);
        }
        if self.reads.get(&resolved) != Some(&record) {
            self.read_epoch += 1;
        }
        self.reads.insert(resolved, record);
    }

    /// Counts the times what the session knows of a file changed: a read of something new is
    /// a change of state (a write refused for want of a read may now go through), a re-read of
    /// the same bytes is not.
    pub fn read_epoch(&self) -> u64 {
        self.read_epoch
    }

    /// Whether the session's last read of `resolved` still matches `current` on disk.
    pub fn freshness(&self, resolved: &RelPath, current: &[u8]) -> Freshness {
        match self.reads.get(resolved) {
            None => match &self.shared {
                Some(shared) => shared.freshness(resolved, current),
                None => Freshness::NeverRead,
            },
            Some(r)
                if r.len == current.len() as u64 && r.hash == *blake3::hash(current).as_bytes() =>
            {
                Freshness::Fresh
            }
            Some(_) => Freshness::Changed,
        }
    }

    /// A file moved: what was read of it still holds under its new name.
    pub fn moved(&mut self, from: &RelPath, to: &RelPath) {
        if let Some(record) = self.reads.remove(from) {
            self.reads.insert(to.clone(), record);
        }
    }

    /// Starts a new task: the loop guard's history belongs to one task only.
    pub fn start_task(&mut self) {
        self.loop_guard = LoopGuard::default();
    }

    /// Forgets what was read: a plan's next step starts from a fresh context, so what it
    /// edits it reads first (read-before-edit holds per step).
    pub fn forget_reads(&mut self) {
        self.reads.clear();
    }

    /// What this session last read of `resolved`, if anything.
    pub fn read_record(&self, resolved: &RelPath) -> Option<&ReadRecord> {
        self.reads.get(resolved)
    }
}

/// What a session knows that a later run may continue from (`slmcode run --resume`): what it
/// read, so a file read and unchanged since may be edited without a re-read (a file changed
/// since must be read again, as in one session); its checklist; the task's loop guard; and
/// its checkpoint session, so one restore undoes the run and its follow-ups.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionState {
    pub reads: Vec<SavedRead>,
    pub todo: Vec<TodoItem>,
    pub loop_guard: LoopGuard,
    pub checkpoint: Option<String>,
}

/// One read record as saved: the resolved path, the BLAKE3 of the bytes read (hex) and their
/// length.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedRead {
    pub path: String,
    pub blake3: String,
    pub len: u64,
}

impl Session {
    /// What a follow-up run needs of this session.
    pub fn state(&self) -> SessionState {
        let mut reads: Vec<SavedRead> = self
            .reads
            .iter()
            .map(|(path, r)| SavedRead {
                path: path.to_string(),
                blake3: blake3::Hash::from_bytes(r.hash).to_hex().to_string(),
                len: r.len,
            })
            .collect();
        reads.sort_by(|a, b| a.path.cmp(&b.path));
        SessionState {
            reads,
            todo: self.todo.clone(),
            loop_guard: self.loop_guard.clone(),
            checkpoint: self.checkpoints.id().map(str::to_string),
        }
    }

    /// A session that continues from `state`. A saved path or hash that does not read back (a
    /// hand-edited state file) is dropped: the file then counts as never read, which only
    /// asks for a read.
    pub fn resume(jail: &Jail, state: SessionState) -> Session {
        let mut session = Session {
            todo: state.todo,
            loop_guard: state.loop_guard,
            checkpoints: state
                .checkpoint
                .and_then(|id| Checkpoints::continuing(&id))
                .unwrap_or_default(),
            ..Session::default()
        };
        for read in state.reads {
            let (Ok(path), Ok(hash)) =
                (jail.parse(&read.path), blake3::Hash::from_hex(&read.blake3))
            else {
                continue;
            };
            session.reads.insert(
                path,
                ReadRecord {
                    hash: *hash.as_bytes(),
                    len: read.len,
                },
            );
        }
        session
    }
}

/// A session bound to one project root.
#[derive(Debug)]
pub struct Workspace {
    pub jail: Jail,
    pub config: Config,
    pub session: Session,
    /// Values every result is cleaned of: the API key and the environment's tokens. The
    /// harness adds the variables its own config names (`bearer_token_env`).
    pub secrets: Secrets,
    /// The running call's stop switch and progress sink ([`crate::control`]); a no-op
    /// outside [`crate::Registry::call_with`].
    pub control: CallControl,
    /// Who answers when a step needs the user's word ([`crate::approval`]); `None`: ws_shell
    /// asks on the terminal and review mode stages changes.
    pub approver: Option<crate::approval::Approver>,
}

impl Workspace {
    /// Opens `root` as a workspace with the given limits.
    pub fn open(root: &Path, config: Config) -> std::io::Result<Workspace> {
        Ok(Workspace::new(Jail::open(root)?, config))
    }

    /// A fresh session over an already opened jail (the config was loaded through it).
    pub fn new(jail: Jail, config: Config) -> Workspace {
        let named: Vec<&str> = config.api_key_env.iter().map(String::as_str).collect();
        let secrets = Secrets::gather(&named);
        Workspace {
            jail,
            config,
            session: Session::default(),
            secrets,
            control: CallControl::default(),
            approver: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resumed_session_keeps_reads_todo_guard_and_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let jail = Jail::open(dir.path()).unwrap();
        let mut s = Session::default();
        let path = jail.parse("src/a.rs").unwrap();
        let bytes = b"fn a() {}\n";
        s.record_read(
            path.clone(),
            ReadRecord {
                hash: *blake3::hash(bytes).as_bytes(),
                len: bytes.len() as u64,
            },
        );
        s.todo.push(TodoItem {
            text: "fix a".into(),
            done: true,
        });
        s.loop_guard.record("ws_read {}".into(), 7, false);
        let mut state = s.state();
        state.checkpoint = Some("1700000000-42-1".into());
        let text = serde_json::to_string(&state).unwrap();
        let back: SessionState = serde_json::from_str(&text).unwrap();
        assert_eq!(back, state);
        let r = Session::resume(&jail, back);
        assert_eq!(r.freshness(&path, bytes), Freshness::Fresh);
        assert_eq!(r.freshness(&path, b"fn b() {}\n"), Freshness::Changed);
        assert_eq!(r.todo, s.todo);
        assert!(r.loop_guard.repeated("ws_read {}", Some(7)));
        assert_eq!(r.checkpoints.id(), Some("1700000000-42-1"));
        // What does not read back counts as never read, and a bad id starts a new session.
        let mut bad = state.clone();
        bad.reads[0].blake3 = "zz".into();
        bad.checkpoint = Some("../x".into());
        let r = Session::resume(&jail, bad);
        assert_eq!(r.freshness(&path, bytes), Freshness::NeverRead);
        assert_eq!(r.checkpoints.id(), None);
    }
}
