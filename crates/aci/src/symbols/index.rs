//! The project's symbol index: every code file's definitions and references, kept in
//! `.slmcode/cache/symbols.idx` between runs and refreshed per file.
//!
//! A file is read again when its size or mtime changed, when the mutation path says this
//! session changed it ([`SymbolIndex::touch`]), or when its mtime was too close to the moment
//! it was indexed to prove anything (git's "racily clean" rule: a second write within the
//! filesystem's timestamp granule, same size, would otherwise go unseen). So an answer is
//! never about bytes that are no longer there. Such a racy file is parsed again only when its
//! content changed (its BLAKE3 is kept): a file dated in the future stays racy for ever, and
//! must cost a read, not a parse, on every call. Files the walk no longer sees are dropped;
//! a missing, unreadable or older-format cache is rebuilt, and so is one slmcode did not seal
//! for this user (a repository can ship an index whose sizes and mtimes match its files).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use ignore::WalkState;
use serde::{Deserialize, Serialize};

use super::tags::{self, FileSymbols};
use super::Definition;
use crate::boundary::layout;
use crate::control::CallControl;
use crate::lang;
use crate::path::{Jail, RelPath};
use crate::walk::{relative, Walk};
use crate::{fsx, state};

/// Files larger than this are not indexed: generated code, bundles, data dumps.
pub const MAX_INDEXED_BYTES: u64 = 1024 * 1024;
/// The index's file, in `.slmcode/cache/`.
const CACHE_FILE: &str = "symbols.idx";
/// Bumped whenever what is stored, or how files are read, changes: an index of another
/// version is rebuilt rather than trusted.
const FORMAT: u32 = 3;
/// A file whose mtime is within this many seconds of its indexing is read again next time.
const RACY_SECS: u64 = 2;

/// One indexed file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Entry {
    size: u64,
    /// Nanoseconds since the epoch.
    mtime: u64,
    /// Seconds since the epoch when the file was stat'ed before being read.
    indexed_at: u64,
    /// BLAKE3 of the bytes indexed: a racy file whose bytes are the same is not parsed again.
    hash: [u8; 32],
    /// The grammar's name, as the outline's header shows it.
    pub language: String,
    /// Lines in the file, for the outline's header.
    pub lines: u32,
    /// In source order, nested by depth, as [`super::tags::extract`] read them.
    pub definitions: Vec<Definition>,
    /// (name id, count), the ids into [`SymbolIndex::name`].
    pub references: Vec<(u32, u32)>,
}

impl Entry {
    fn is_current(&self, size: u64, mtime: u64) -> bool {
        self.same_stat(size, mtime) && self.mtime / 1_000_000_000 + RACY_SECS < self.indexed_at
    }

    fn same_stat(&self, size: u64, mtime: u64) -> bool {
        self.size == size && self.mtime == mtime
    }
}

/// What is stored on disk.
#[derive(Serialize, Deserialize)]
struct Stored {
    format: u32,
    names: Vec<String>,
    files: Vec<(String, Entry)>,
}

/// What a refresh did, for the benchmark and the trajectory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Refreshed {
    /// Code files in the index after the refresh.
    pub files: usize,
    /// Files read and parsed (new, changed, or touched).
    pub parsed: usize,
    /// Files dropped (deleted, moved, newly ignored).
    pub dropped: usize,
    /// Whether the index came from the cache file (false: built from nothing).
    pub from_cache: bool,
}

/// The index of one session. Empty until the first [`SymbolIndex::refresh`].
#[derive(Debug, Default)]
pub struct SymbolIndex {
    loaded: Option<Loaded>,
    /// Paths the mutation path changed since the last refresh.
    touched: BTreeSet<RelPath>,
}

#[derive(Debug, Default)]
struct Loaded {
    names: Vec<String>,
    ids: HashMap<String, u32>,
    files: BTreeMap<String, Entry>,
    /// References to each name across the project.
    totals: HashMap<u32, u32>,
}

impl SymbolIndex {
    /// The mutation path changed (wrote, created, deleted or moved) `path`: it is read again
    /// at the next refresh, whatever its size and mtime say.
    pub fn touch(&mut self, path: &RelPath) {
        self.touched.insert(path.clone());
    }

    /// Brings the index up to date with the project: loads the cache on first use, reads
    /// what changed, drops what is gone, and saves when anything changed. Stops early (with
    /// what it has) when `control` is cancelled.
    pub fn refresh(&mut self, jail: &Jail, control: &CallControl) -> Refreshed {
        let mut stats = Refreshed::default();
        let loaded = match self.loaded.take() {
            Some(l) => {
                stats.from_cache = true;
                l
            }
            None => {
                let l = load(jail);
                stats.from_cache = l.is_some();
                l.unwrap_or_default()
            }
        };
        let mut loaded = loaded;
        let started = now_secs();
        let seen = walk_code_files(jail, control);
        let touched: BTreeSet<String> = std::mem::take(&mut self.touched)
            .iter()
            .map(RelPath::to_string)
            .collect();
        let stale: Vec<Stale> = seen
            .iter()
            .filter(|(path, (size, mtime))| {
                touched.contains(*path)
                    || !loaded
                        .files
                        .get(*path)
                        .is_some_and(|e| e.is_current(*size, *mtime))
            })
            .map(|(path, &(size, mtime))| Stale {
                path,
                size,
                mtime,
                // Racy only (same size and mtime): unchanged bytes need no parse.
                same_as: loaded
                    .files
                    .get(path)
                    .filter(|e| !touched.contains(path) && e.same_stat(size, mtime))
                    .map(|e| e.hash),
            })
            .collect();
        for (path, size, mtime, read) in parse_all(jail, &stale, control) {
            match read {
                Read::Same => {
                    if let Some(entry) = loaded.files.get_mut(&path) {
                        entry.indexed_at = started;
                    }
                }
                Read::Parsed(hash, symbols) => {
                    stats.parsed += 1;
                    let entry = loaded.entry(size, mtime, started, hash, symbols);
                    loaded.files.insert(path, entry);
                }
            }
        }
        let before = loaded.files.len();
        if !control.is_cancelled() {
            loaded.files.retain(|path, _| seen.contains_key(path));
        }
        stats.dropped = before - loaded.files.len();
        stats.files = loaded.files.len();
        if stats.parsed > 0 || stats.dropped > 0 || !stats.from_cache {
            loaded.count_totals();
            // A cache that cannot be written (a read-only checkout) costs speed, not answers.
            let _ = save(jail, &loaded);
        }
        self.loaded = Some(loaded);
        stats
    }

    /// Every indexed file, in path order.
    pub fn files(&self) -> impl Iterator<Item = (&str, &Entry)> {
        self.loaded
            .iter()
            .flat_map(|l| l.files.iter().map(|(p, e)| (p.as_str(), e)))
    }

    /// One indexed file.
    pub fn file(&self, path: &str) -> Option<&Entry> {
        self.loaded.as_ref()?.files.get(path)
    }

    /// The name an id in [`Entry::references`] stands for.
    pub fn name(&self, id: u32) -> &str {
        self.loaded
            .as_ref()
            .and_then(|l| l.names.get(id as usize))
            .map_or("", String::as_str)
    }

    /// The id of a name, if any file names it.
    pub fn id_of(&self, name: &str) -> Option<u32> {
        self.loaded.as_ref()?.ids.get(name).copied()
    }

    /// How many times the project names `name` outside its definitions.
    pub fn references_to(&self, name: &str) -> u32 {
        self.loaded
            .as_ref()
            .and_then(|l| l.totals.get(l.ids.get(name)?).copied())
            .unwrap_or(0)
    }
}

impl Loaded {
    fn intern(&mut self, name: String) -> u32 {
        if let Some(&id) = self.ids.get(&name) {
            return id;
        }
        let id = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        self.names.push(name.clone());
        self.ids.insert(name, id);
        id
    }

    fn entry(
        &mut self,
        size: u64,
        mtime: u64,
        indexed_at: u64,
        hash: [u8; 32],
        symbols: FileSymbols,
    ) -> Entry {
        let references = symbols
            .references
            .into_iter()
            .map(|(name, count)| (self.intern(name), count))
            .collect();
        Entry {
            size,
            mtime,
            indexed_at,
            hash,
            language: symbols.language,
            lines: symbols.lines,
            definitions: symbols
                .definitions
                .into_iter()
                .map(|mut d| {
                    // Read from the file when shown (`symbols::signatures`): a copy of every
                    // signature line would be most of the index.
                    d.signature = String::new();
                    d
                })
                .collect(),
            references,
        }
    }

    fn count_totals(&mut self) {
        let mut totals: HashMap<u32, u32> = HashMap::new();
        for entry in self.files.values() {
            for &(id, count) in &entry.references {
                let t = totals.entry(id).or_default();
                *t = t.saturating_add(count);
            }
        }
        self.totals = totals;
    }
}

fn cache_path() -> RelPath {
    layout::path(layout::CACHE).join(CACHE_FILE)
}

/// The index slmcode saved, when it is one it sealed for this user (one shipped with the
/// repository, or changed since, is reported and rebuilt: its sizes and mtimes prove nothing).
fn load(jail: &Jail) -> Option<Loaded> {
    let path = cache_path();
    let bytes = match state::read(jail, &path) {
        Ok(bytes) => bytes,
        Err(e) => {
            state::report_untrusted(
                &e,
                "the index is rebuilt from the project's files and saved in its place",
            );
            return None;
        }
    };
    let stored: Stored = postcard::from_bytes(&bytes).ok()?;
    if stored.format != FORMAT {
        return None;
    }
    let ids = stored
        .names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), u32::try_from(i).unwrap_or(u32::MAX)))
        .collect();
    let mut loaded = Loaded {
        names: stored.names,
        ids,
        files: stored.files.into_iter().collect(),
        totals: HashMap::new(),
    };
    // An id past the table (a damaged file) would name nothing: rebuild instead.
    let n = loaded.names.len();
    if loaded
        .files
        .values()
        .any(|e| e.references.iter().any(|&(id, _)| id as usize >= n))
    {
        return None;
    }
    loaded.count_totals();
    Some(loaded)
}

fn save(jail: &Jail, loaded: &Loaded) -> Result<(), crate::error::ToolError> {
    let stored = Stored {
        format: FORMAT,
        names: loaded.names.clone(),
        files: loaded
            .files
            .iter()
            .map(|(p, e)| (p.clone(), e.clone()))
            .collect(),
    };
    let bytes = postcard::to_stdvec(&stored).map_err(|e| {
        crate::error::ToolError::refused(
            crate::error::RefusalClass::Io,
            format!("could not encode the symbol index: {e}"),
        )
    })?;
    state::write(jail, &cache_path(), &bytes)
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Every code file the tools see (`.gitignore` honoured, hidden entries skipped), with its
/// size and mtime in nanoseconds. Symlinks are not followed; files over
/// [`MAX_INDEXED_BYTES`] are left out.
fn walk_code_files(jail: &Jail, control: &CallControl) -> BTreeMap<String, (u64, u64)> {
    let found = Mutex::new(BTreeMap::new());
    let Ok(mut walk) = Walk::new(jail, &RelPath::root(), false) else {
        return BTreeMap::new();
    };
    walk.stop_on(control);
    walk.parallel().run(|| {
        Box::new(|entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let Some(rel) = relative(jail, entry.path()) else {
                return WalkState::Continue;
            };
            if !lang::grammar_for(rel.as_str()).is_some_and(tags::is_code) {
                return WalkState::Continue;
            }
            let Ok(meta) = entry.metadata() else {
                return WalkState::Continue;
            };
            if meta.len() > MAX_INDEXED_BYTES {
                return WalkState::Continue;
            }
            let mtime = meta
                .modified()
                .ok()
                .and_then(|m| m.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
            if let Ok(mut f) = found.lock() {
                f.insert(rel.to_string(), (meta.len(), mtime));
            }
            WalkState::Continue
        })
    });
    found.into_inner().unwrap_or_default()
}

/// A file to read again: its stat, and the hash of its indexed bytes when only the racy rule
/// sent it (then the same bytes need no parse).
struct Stale<'a> {
    path: &'a String,
    size: u64,
    mtime: u64,
    same_as: Option<[u8; 32]>,
}

/// What reading a stale file found.
enum Read {
    /// The bytes it was indexed from.
    Same,
    /// New bytes (their hash), parsed.
    Parsed([u8; 32], FileSymbols),
}

type Parsed = (String, u64, u64, Read);

/// Reads and parses `files` on every core. A file that cannot be read (gone since the walk,
/// or not UTF-8) is indexed as defining nothing, so it is not read again until it changes;
/// so is one the parser cannot read (see [`crate::syntax::guard`]).
fn parse_all(jail: &Jail, files: &[Stale], control: &CallControl) -> Vec<Parsed> {
    let next = AtomicUsize::new(0);
    let out = Mutex::new(Vec::with_capacity(files.len()));
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..threads.min(files.len().max(1)) {
            scope.spawn(|| {
                let mut mine = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(stale) = files.get(i) else {
                        break;
                    };
                    if control.is_cancelled() {
                        break;
                    }
                    let bytes = jail
                        .parse(stale.path)
                        .ok()
                        .and_then(|rel| Some((fsx::read_all(jail, &rel).ok()?, rel)));
                    let read = match bytes {
                        Some((bytes, rel)) => {
                            let hash = *blake3::hash(&bytes).as_bytes();
                            if stale.same_as == Some(hash) {
                                Read::Same
                            } else {
                                Read::Parsed(hash, tags::extract(&rel, &bytes).unwrap_or_default())
                            }
                        }
                        None => Read::Parsed([0; 32], FileSymbols::default()),
                    };
                    mine.push((stale.path.clone(), stale.size, stale.mtime, read));
                }
                if let Ok(mut out) = out.lock() {
                    out.extend(mine);
                }
            });
        }
    });
    out.into_inner().unwrap_or_default()
}
