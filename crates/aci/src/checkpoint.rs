//! Checkpoints: before a session first changes a path — write, edit, patch, either side of a
//! move, delete — the path's bytes and mode (or the fact that it did not exist) are saved under
//! `.slmcode/checkpoints/<session>/`, fsynced before the change. Later changes keep the first
//! copy, so restoring a session puts back what was there before it started.
//!
//! Copies are streamed (a file is never held in memory whole), files over
//! `checkpoint_max_bytes` are recorded as not saved (and the change's result says so), and
//! paths are kept as bytes, so a name that is not UTF-8 comes back as it was.
//!
//! Only slmcode's own checkpoints are restored: the manifest is a sealed record
//! ([`crate::state`]), and it holds each copy's BLAKE3, checked as the copy streams back, so a
//! checkpoint shipped with a repository, or a copy changed since, writes nothing. A restore
//! never sets setuid, setgid or sticky bits.

use std::collections::HashSet;
use std::io::Read;

use cap_std::fs::OpenOptions;
use serde::{Deserialize, Serialize};

use crate::anchor::{self, AnchorError, Anchored, Writer};
use crate::boundary::Protected;
use crate::boundary::CONTROL_DIR;
use crate::error::RefusalClass;
use crate::error::ToolError;
use crate::fsx::{anchored, check_boundary, resolve_new};
use crate::path::{Jail, PathError, RawPath, RelPath};
use crate::platform;
use crate::state::{self, now};

/// Where checkpoints live, under the control directory.
pub use crate::boundary::layout::CHECKPOINTS as CHECKPOINT_DIR;

/// What a path held before the session first changed it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "state", rename_all = "lowercase")]
pub enum Saved {
    /// A file: its mode, the blob holding its bytes, and their BLAKE3 (hex).
    File {
        mode: u32,
        blob: String,
        blake3: String,
    },
    /// A symbolic link and what it pointed to.
    Symlink { target: String },
    /// Nothing was there.
    Absent,
    /// A file over `checkpoint_max_bytes`: not saved, so it cannot be put back.
    #[serde(rename = "not-saved")]
    TooLarge { size: u64 },
}

/// One saved path.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Entry {
    /// The path for people (a name that is not UTF-8 shown with U+FFFD).
    pub path: String,
    /// The path's bytes, when they are not UTF-8 (`path` then cannot say them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<Vec<u8>>,
    /// A symlink's target's bytes, when they are not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_raw: Option<Vec<u8>>,
    #[serde(flatten)]
    pub saved: Saved,
}

impl Entry {
    /// The path as saved, checked like any path read from disk.
    pub fn raw_path(&self) -> Result<RawPath, PathError> {
        RawPath::from_bytes(self.raw.as_deref().unwrap_or(self.path.as_bytes()))
    }

    /// A symlink's target as it was.
    fn link_target(&self, shown: &str) -> std::path::PathBuf {
        match &self.target_raw {
            Some(bytes) => os_path(bytes),
            None => std::path::PathBuf::from(shown),
        }
    }
}

/// A file the change went ahead on without a checkpoint, because it is over
/// `checkpoint_max_bytes`: the result says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotSaved {
    pub path: RelPath,
    pub size: u64,
    pub limit: u64,
}

impl NotSaved {
    /// What the model (and the user reading the result) is told.
    pub fn note(&self) -> String {
        format!(
            "[not checkpointed: {} is {} bytes, over checkpoint_max_bytes ({} bytes), so this change cannot be undone with `slmcode checkpoints restore`]",
            self.path, self.size, self.limit
        )
    }
}

/// A session's checkpoint manifest.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct Manifest {
    pub session: String,
    /// Seconds since the Unix epoch when the first path was saved.
    pub created: u64,
    pub entries: Vec<Entry>,
}

/// The checkpoint state of one session: its id and the paths already saved.
#[derive(Debug, Default)]
pub struct Checkpoints {
    id: Option<String>,
    saved: HashSet<RawPath>,
}

fn session_dir(id: &str) -> RelPath {
    RelPath::root()
        .join(CONTROL_DIR)
        .join(CHECKPOINT_DIR)
        .join(id)
}

fn valid_id(id: &str) -> Result<(), ToolError> {
    state::check_id(id, "checkpoint session", "slmcode checkpoints list")
}

impl Checkpoints {
    /// A session that goes on adding to checkpoint session `id` (a resumed run): paths the
    /// manifest holds keep their first copy. `None` for an id that is not one.
    pub fn continuing(id: &str) -> Option<Checkpoints> {
        valid_id(id).ok()?;
        Some(Checkpoints {
            id: Some(id.to_string()),
            saved: HashSet::new(),
        })
    }

    /// This session's id, once something was saved.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// Whether this session saved `path` already.
    pub fn contains(&self, path: &RawPath) -> bool {
        self.saved.contains(path)
    }

    /// Saves `path`'s current state unless this session saved it already. Called by the
    /// mutation path before every change; returns once the copy is on disk. A file over
    /// `max_bytes` is recorded as not saved and returned, for the result to say so.
    pub fn save_first(
        &mut self,
        jail: &Jail,
        protected: &Protected,
        path: &RawPath,
        max_bytes: u64,
    ) -> Result<Option<NotSaved>, ToolError> {
        self.record(jail, path, max_bytes, |blob| {
            save(jail, protected, path, max_bytes, blob)
        })
    }

    /// Records `path` as not restorable (unless this session saved it already): the far side
    /// of a move whose file was too large to save, which a restore must leave alone, since it
    /// holds the only copy.
    pub fn keep_unsaved(
        &mut self,
        jail: &Jail,
        path: &RawPath,
        size: u64,
        max_bytes: u64,
    ) -> Result<(), ToolError> {
        self.record(jail, path, max_bytes, |_| {
            Ok(Found::File {
                mode: 0,
                size: Some(size),
                hash: blake3::hash(b""),
            })
        })
        .map(|_| ())
    }

    /// The manifest bookkeeping around one save: the first record of a path wins.
    fn record(
        &mut self,
        jail: &Jail,
        path: &RawPath,
        max_bytes: u64,
        find: impl FnOnce(&RelPath) -> Result<Found, ToolError>,
    ) -> Result<Option<NotSaved>, ToolError> {
        if self.saved.contains(path) {
            return Ok(None);
        }
        let id = match &self.id {
            Some(id) => id.clone(),
            None => {
                let id = new_session_id(jail);
                self.id = Some(id.clone());
                id
            }
        };
        let fresh = |id: &str| Manifest {
            session: id.to_string(),
            created: now(),
            entries: Vec::new(),
        };
        let mut manifest = match load_manifest(jail, &id) {
            Ok(m) => m,
            Err(e) if e.class() == RefusalClass::NotFound => fresh(&id),
            Err(e) => {
                // The session this one continues has a manifest slmcode cannot vouch for (or
                // read): left as it is, and the copies go to a session of their own.
                state::report_ignored(&e);
                let id = new_session_id(jail);
                self.id = Some(id.clone());
                fresh(&id)
            }
        };
        let dir = session_dir(&manifest.session);
        let mut not_saved = None;
        let known = manifest
            .entries
            .iter()
            .any(|e| e.raw_path().is_ok_and(|p| p == *path));
        if !known {
            let blob = format!("{:04}", manifest.entries.len() + 1);
            let shown = path.display();
            let mut entry = Entry {
                path: shown.to_string(),
                raw: path.to_rel().is_none().then(|| path.to_bytes()),
                target_raw: None,
                saved: Saved::Absent,
            };
            entry.saved = match find(&dir.join("blobs").join(&blob))? {
                Found::File {
                    mode,
                    size: None,
                    hash,
                } => Saved::File {
                    mode,
                    blob,
                    blake3: hash.to_hex().to_string(),
                },
                Found::File {
                    size: Some(size), ..
                } => {
                    not_saved = Some(NotSaved {
                        path: shown,
                        size,
                        limit: max_bytes,
                    });
                    Saved::TooLarge { size }
                }
                Found::Symlink(target) => {
                    let bytes = target.as_os_str().as_encoded_bytes();
                    if std::str::from_utf8(bytes).is_err() {
                        entry.target_raw = Some(bytes.to_vec());
                    }
                    Saved::Symlink {
                        target: target.to_string_lossy().into_owned(),
                    }
                }
                Found::Absent => Saved::Absent,
            };
            manifest.entries.push(entry);
            state::write_json(jail, &dir.join("manifest.json"), &manifest)?;
        }
        self.saved.insert(path.clone());
        Ok(not_saved)
    }
}

/// What stood at a path when it was saved.
enum Found {
    /// A file; `size` is set when it was too large to copy, `hash` is its copy's BLAKE3.
    File {
        mode: u32,
        size: Option<u64>,
        hash: blake3::Hash,
    },
    Symlink(std::path::PathBuf),
    Absent,
}

/// Copies what stands at `path` into `blob` (a file up to `max_bytes`, streamed), reached
/// through its checked directory and opened without following a symlink, so what is saved is
/// what the change will replace.
fn save(
    jail: &Jail,
    protected: &Protected,
    path: &RawPath,
    max_bytes: u64,
    blob: &RelPath,
) -> Result<Found, ToolError> {
    let shown = path.display();
    let failed = |e: &dyn std::fmt::Display| {
        ToolError::refused(
            RefusalClass::Io,
            format!("{shown} could not be checkpointed ({e}); nothing was changed"),
        )
    };
    let dir = match anchor::open_raw(jail, protected, &path.parent(), false, Writer::Tool) {
        Ok(dir) => dir,
        Err(AnchorError::Path(PathError::NotFound { .. })) => return Ok(Found::Absent),
        Err(e) => return Err(failed(&e)),
    };
    let name = path.file_name();
    let meta = match dir.symlink_metadata(name) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Absent),
        Err(e) => return Err(failed(&e)),
    };
    if meta.file_type().is_symlink() {
        let target = dir.dir().read_link_contents(name).map_err(|e| failed(&e))?;
        return Ok(Found::Symlink(target));
    }
    if !meta.is_file() {
        return Err(ToolError::refused(
            RefusalClass::Other,
            format!(
                "{shown} is not a regular file, so it cannot be checkpointed; change it by hand"
            ),
        ));
    }
    let mode = platform::fs::mode(&meta);
    if meta.len() > max_bytes {
        return Ok(Found::File {
            mode,
            size: Some(meta.len()),
            hash: blake3::hash(b""),
        });
    }
    let mut options = OpenOptions::new();
    options.read(true);
    platform::fs::never_block_or_follow(&mut options);
    let file = dir
        .dir()
        .open_with(name, &options)
        .map_err(|e| failed(&e))?;
    let opened = file.metadata().map_err(|e| failed(&e))?;
    if !opened.is_file() {
        return Err(ToolError::refused(
            RefusalClass::Other,
            format!(
                "{shown} is not a regular file, so it cannot be checkpointed; change it by hand"
            ),
        ));
    }
    // At most one byte past the limit is read: a file that grew meanwhile is not saved in part.
    let mut content = Hashing {
        inner: file.into_std().take(max_bytes.saturating_add(1)),
        hasher: blake3::Hasher::new(),
    };
    let copied = state::write_from(jail, blob, &mut content)?;
    let hash = content.hasher.finalize();
    if copied > max_bytes {
        let _ = state::remove(jail, blob);
        return Ok(Found::File {
            mode,
            size: Some(copied.max(opened.len())),
            hash,
        });
    }
    Ok(Found::File {
        mode,
        size: None,
        hash,
    })
}

/// A copy being saved, hashed as it streams.
struct Hashing<R> {
    inner: R,
    hasher: blake3::Hasher,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

/// A saved copy streaming back for a restore: hashed as it goes, and an error at its end when
/// it is not the copy the manifest names — so the staged file is never renamed into place.
struct Verified<R> {
    inner: R,
    hasher: blake3::Hasher,
    want: Option<blake3::Hash>,
    shown: RelPath,
}

impl<R: Read> Read for Verified<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        if n == 0 && !buf.is_empty() && self.want != Some(self.hasher.finalize()) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "its saved copy {} changed since it was saved (its BLAKE3 is not the one the manifest holds), so it was not written back",
                    self.shown
                ),
            ));
        }
        Ok(n)
    }
}

/// A path from saved bytes.
fn os_path(bytes: &[u8]) -> std::path::PathBuf {
    platform::fs::name_from_bytes(bytes)
        .unwrap_or_else(|| String::from_utf8_lossy(bytes).into_owned().into())
        .into()
}

/// A fresh id: the time, the process, and a counter for sessions within one process.
fn new_session_id(jail: &Jail) -> String {
    let base = format!("{}-{}", now(), std::process::id());
    let mut n = 1;
    loop {
        let id = format!("{base}-{n}");
        if jail.metadata(&session_dir(&id)).is_err() {
            return id;
        }
        n += 1;
    }
}

/// Reads one session's manifest.
pub fn load_manifest(jail: &Jail, id: &str) -> Result<Manifest, ToolError> {
    valid_id(id)?;
    state::read_json(jail, &session_dir(id).join("manifest.json"), || {
        format!("no checkpoint session {id} (see `slmcode checkpoints list`)")
    })
}

/// Every session with checkpoints, oldest first. A manifest slmcode did not write for this
/// user is left out, and reported.
pub fn list(jail: &Jail) -> Result<Vec<Manifest>, ToolError> {
    let dir = RelPath::root().join(CONTROL_DIR).join(CHECKPOINT_DIR);
    let mut out: Vec<Manifest> = state::list_names(jail, &dir)?
        .iter()
        .filter_map(|name| {
            load_manifest(jail, name)
                .inspect_err(state::report_ignored)
                .ok()
        })
        .collect();
    out.sort_by(|a, b| (a.created, &a.session).cmp(&(b.created, &b.session)));
    Ok(out)
}

/// What a checkpoint holds of one path, for showing a change (a diff) rather than undoing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Original {
    /// The file's bytes before the session first changed it.
    File(Vec<u8>),
    /// Nothing was there.
    Absent,
    /// Not a file the checkpoint can show: a symlink, over `checkpoint_max_bytes` or over
    /// `max_bytes`, or not in the checkpoint.
    Unknown,
}

/// The bytes `path` held before checkpoint session `id` first changed it, read back through
/// the same checks as a restore (a sealed manifest, the copy's BLAKE3), up to `max_bytes`.
pub fn original(
    jail: &Jail,
    id: &str,
    path: &RelPath,
    max_bytes: u64,
) -> Result<Original, ToolError> {
    let manifest = load_manifest(jail, id)?;
    let Some(entry) = manifest
        .entries
        .iter()
        .find(|e| e.raw.is_none() && e.path == path.as_str())
    else {
        return Ok(Original::Unknown);
    };
    match &entry.saved {
        Saved::Absent => Ok(Original::Absent),
        Saved::File { blob, blake3, .. } => {
            valid_id(blob)?;
            let blob = session_dir(id).join("blobs").join(blob);
            let file = jail.open_file(&blob)?.into_std();
            if file.metadata().map(|m| m.len() > max_bytes).unwrap_or(true) {
                return Ok(Original::Unknown);
            }
            let mut content = Verified {
                inner: file,
                hasher: blake3::Hasher::new(),
                want: blake3::Hash::from_hex(blake3).ok(),
                shown: blob,
            };
            let mut bytes = Vec::new();
            content
                .read_to_end(&mut bytes)
                .map_err(|e| ToolError::refused(RefusalClass::Untrusted, e.to_string()))?;
            Ok(Original::File(bytes))
        }
        Saved::Symlink { .. } | Saved::TooLarge { .. } => Ok(Original::Unknown),
    }
}

/// Puts back what a session saved: bytes and modes (never setuid, setgid or sticky bits), and
/// removes files that did not exist. Only a manifest slmcode sealed is followed, and only
/// copies whose BLAKE3 is the one it holds are written. With `only` non-empty, just those
/// paths. Returns one line per path.
pub fn restore(jail: &Jail, id: &str, only: &[RelPath]) -> Result<Vec<String>, ToolError> {
    let manifest = load_manifest(jail, id)?;
    let wanted: Vec<&Entry> = manifest
        .entries
        .iter()
        .filter(|e| only.is_empty() || only.iter().any(|p| p.as_str() == e.path))
        .collect();
    if wanted.is_empty() {
        return Err(ToolError::refused(RefusalClass::NotFound, format!(
            "checkpoint session {id} holds none of those paths; `slmcode checkpoints show {id}` lists what it holds"
        )));
    }
    let mut report = Vec::new();
    for entry in wanted {
        let path = entry.raw_path()?;
        let shown = path.display();
        match &entry.saved {
            Saved::File { mode, blob, blake3 } => {
                valid_id(blob)?;
                let blob = session_dir(id).join("blobs").join(blob);
                let mut content = Verified {
                    inner: jail.open_file(&blob)?.into_std(),
                    hasher: blake3::Hasher::new(),
                    want: blake3::Hash::from_hex(blake3).ok(),
                    shown: blob,
                };
                let written = restore_file(jail, &path, &mut content, *mode)?;
                let kept = mode & PLAIN_MODE;
                report.push(if *mode & !PLAIN_MODE != 0 {
                    format!("restored {shown} ({written} bytes, mode {kept:o}; setuid, setgid and sticky bits are never restored)")
                } else {
                    format!("restored {shown} ({written} bytes, mode {kept:o})")
                });
            }
            Saved::Symlink { target } => {
                restore_symlink(jail, &path, &entry.link_target(target))?;
                report.push(format!("restored {shown} (symlink to {target})"));
            }
            Saved::Absent => {
                if remove_restored(jail, &path)? {
                    report.push(format!("removed {shown} (it did not exist before)"));
                } else {
                    report.push(format!("{shown} is already absent"));
                }
            }
            Saved::TooLarge { size } => report.push(format!(
                "not restored: {shown} ({size} bytes) was over checkpoint_max_bytes when it was changed, so it was never saved"
            )),
        }
    }
    Ok(report)
}
/// Where a restore lands: the path's directory, reached from the root without following a
/// symlink and refused when it is a protected place (a directory swapped for a link to
/// `.slmcode` since the checkpoint is not a plain directory, and is refused) — then written
/// through like every write.
fn restore_dir(
    jail: &Jail,
    path: &RawPath,
    create: bool,
) -> Result<(Anchored, Protected), ToolError> {
    let shown = path.display();
    check_boundary(&shown, &shown, "restore")?;
    let protected = Protected::discover(jail);
    // Where the path leads now, for a refusal that names the protected place it would reach;
    // the walk below refuses a symlinked directory in any case.
    let leads_to = path
        .to_rel()
        .and_then(|rel| resolve_new(jail, &rel, "restore").ok());
    for place in [Some(&shown), leads_to.as_ref()].into_iter().flatten() {
        if let Some(b) = protected.classify(place) {
            return Err(ToolError::refused(
                RefusalClass::Boundary,
                b.refusal(&shown.to_string(), "restore"),
            ));
        }
    }
    let dir = anchored(
        jail,
        &protected,
        &path.parent(),
        create,
        Writer::Tool,
        "restore",
        &shown,
    )?;
    Ok((dir, protected))
}

/// The bits of a mode a restore puts back: permissions only, never setuid, setgid or sticky.
const PLAIN_MODE: u32 = 0o777;

/// Restores a file's bytes (streamed from `content`) and mode without its setuid, setgid and
/// sticky bits (checkpoint restore): the same checks and anchored write as any change, but no
/// syntax check or new checkpoint — it puts back what was. Returns the bytes written.
pub fn restore_file(
    jail: &Jail,
    path: &RawPath,
    content: &mut dyn Read,
    mode: u32,
) -> Result<u64, ToolError> {
    let shown = path.display();
    let (dir, protected) = restore_dir(jail, path, true)?;
    let name = path.file_name();
    if let Ok(meta) = dir.symlink_metadata(name) {
        if meta.is_dir() {
            return Err(ToolError::refused(
                RefusalClass::Other,
                format!(
                    "restore of {shown} refused: a directory stands there now; move it away first"
                ),
            ));
        }
        if meta.file_type().is_symlink() {
            dir.remove_file(name).map_err(|e| {
                ToolError::refused(RefusalClass::Io, format!("restore of {shown} failed: {e}"))
            })?;
        }
    }
    let staging = anchor::staging(jail, &protected);
    dir.replace_from(name, content, mode & PLAIN_MODE, staging.as_ref())
        .map_err(|e| {
            ToolError::refused(RefusalClass::Io, format!("restore of {shown} failed: {e}"))
        })
}

/// Recreates a symlink (checkpoint restore).
pub fn restore_symlink(
    jail: &Jail,
    path: &RawPath,
    target: &std::path::Path,
) -> Result<(), ToolError> {
    remove_restored(jail, path)?;
    let (dir, _) = restore_dir(jail, path, true)?;
    dir.symlink(target, path.file_name()).map_err(|e| {
        ToolError::refused(
            RefusalClass::Io,
            format!("restore of {} failed: {e}", path.display()),
        )
    })
}

/// Removes a file or link that did not exist when the checkpoint was taken. Returns whether
/// anything was there.
pub fn remove_restored(jail: &Jail, path: &RawPath) -> Result<bool, ToolError> {
    let shown = path.display();
    let dir = match restore_dir(jail, path, false) {
        Ok((dir, _)) => dir,
        Err(ToolError::Path(PathError::NotFound { .. })) => return Ok(false),
        Err(e) => return Err(e),
    };
    match dir.symlink_metadata(path.file_name()) {
        Ok(meta) if meta.is_dir() => Err(ToolError::refused(RefusalClass::Other, format!(
            "restore would remove {shown}, but it is a directory now; remove it by hand if it should go"
        ))),
        Ok(_) => {
            dir.remove_file(path.file_name()).map_err(|e| {
                ToolError::refused(RefusalClass::Io, format!("restore could not remove {shown}: {e}"))
            })?;
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(ToolError::refused(RefusalClass::Io, format!(
            "restore could not look at {shown}: {e}"
        ))),
    }
}
