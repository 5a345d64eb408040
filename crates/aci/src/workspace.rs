//! The workspace a session works in: the jailed root, the limits, and what this session has
//! done so far (what it read, its checklist). One `Workspace` is one session; the CLI, the
//! agent loop and the MCP server each hold one per conversation.

use std::collections::HashMap;
use std::path::Path;

use crate::config::Config;
use crate::path::{Jail, RelPath};

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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TodoItem {
    pub text: String,
    pub done: bool,
}

/// State that carries from one call to the next within a session.
#[derive(Debug, Default)]
pub struct Session {
    /// Keyed by the resolved path (symlinks followed), so two spellings of one file agree.
    reads: HashMap<RelPath, ReadRecord>,
    /// The current checklist; ws_todo replaces it whole.
    pub todo: Vec<TodoItem>,
}

impl Session {
    /// Notes that `path` (already resolved through the jail) was read with this content.
    pub fn record_read(&mut self, resolved: RelPath, record: ReadRecord) {
        self.reads.insert(resolved, record);
    }

    /// Whether the session's last read of `resolved` still matches `current` on disk.
    pub fn freshness(&self, resolved: &RelPath, current: &[u8]) -> Freshness {
        match self.reads.get(resolved) {
            None => Freshness::NeverRead,
            Some(r)
                if r.len == current.len() as u64 && r.hash == *blake3::hash(current).as_bytes() =>
            {
                Freshness::Fresh
            }
            Some(_) => Freshness::Changed,
        }
    }

    /// What this session last read of `resolved`, if anything.
    pub fn read_record(&self, resolved: &RelPath) -> Option<&ReadRecord> {
        self.reads.get(resolved)
    }
}

/// A session bound to one project root.
#[derive(Debug)]
pub struct Workspace {
    pub jail: Jail,
    pub config: Config,
    pub session: Session,
}

impl Workspace {
    /// Opens `root` as a workspace with the given limits.
    pub fn open(root: &Path, config: Config) -> std::io::Result<Workspace> {
        Ok(Workspace::new(Jail::open(root)?, config))
    }

    /// A fresh session over an already opened jail (the config was loaded through it).
    pub fn new(jail: Jail, config: Config) -> Workspace {
        Workspace {
            jail,
            config,
            session: Session::default(),
        }
    }
}
