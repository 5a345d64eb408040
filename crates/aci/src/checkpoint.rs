//! Checkpoints: before a session first changes a path — write, edit, patch, either side of a
//! move, delete — the path's bytes and mode (or the fact that it did not exist) are saved under
//! `.slmcode/checkpoints/<session>/`, fsynced before the change. Later changes keep the first
//! copy, so restoring a session puts back what was there before it started.

use std::collections::HashSet;

use cap_std::fs::MetadataExt;
use serde::{Deserialize, Serialize};

use crate::mutation::{self, CONTROL_DIR};
use crate::path::{Jail, PathError, RelPath};
use crate::registry::ToolError;
use crate::state::{self, now};

/// Where checkpoints live, under the control directory.
pub const CHECKPOINT_DIR: &str = "checkpoints";

/// What a path held before the session first changed it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "state", rename_all = "lowercase")]
pub enum Saved {
    /// A file: its mode and the blob holding its bytes.
    File { mode: u32, blob: String },
    /// A symbolic link and what it pointed to.
    Symlink { target: String },
    /// Nothing was there.
    Absent,
}

/// One saved path.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Entry {
    pub path: String,
    #[serde(flatten)]
    pub saved: Saved,
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
    saved: HashSet<RelPath>,
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
    /// This session's id, once something was saved.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// Saves `path`'s current state unless this session saved it already. Called by the
    /// mutation path before every change; returns once the copy is on disk.
    pub fn save_first(&mut self, jail: &Jail, path: &RelPath) -> Result<(), ToolError> {
        if self.saved.contains(path) {
            return Ok(());
        }
        let id = match &self.id {
            Some(id) => id.clone(),
            None => {
                let id = new_session_id(jail);
                self.id = Some(id.clone());
                id
            }
        };
        let dir = session_dir(&id);
        let mut manifest = load_manifest(jail, &id).unwrap_or_else(|_| Manifest {
            session: id.clone(),
            created: now(),
            entries: Vec::new(),
        });
        if !manifest.entries.iter().any(|e| e.path == path.as_str()) {
            let saved = match jail.symlink_metadata(path) {
                Ok(meta) if meta.is_file() => {
                    let bytes = mutation::read_all(jail, path)?;
                    let blob = format!("{:04}", manifest.entries.len() + 1);
                    state::write(jail, &dir.join("blobs").join(&blob), &bytes)?;
                    Saved::File {
                        mode: meta.mode() & 0o7777,
                        blob,
                    }
                }
                Ok(meta) if meta.file_type().is_symlink() => Saved::Symlink {
                    target: jail.read_link(path)?.to_string_lossy().into_owned(),
                },
                Ok(_) => {
                    return Err(ToolError::Refused(format!(
                    "{path} is not a regular file, so it cannot be checkpointed; change it by hand"
                )))
                }
                Err(PathError::NotFound { .. }) => Saved::Absent,
                Err(e) => return Err(e.into()),
            };
            manifest.entries.push(Entry {
                path: path.to_string(),
                saved,
            });
            state::write_json(jail, &dir.join("manifest.json"), &manifest)?;
        }
        self.saved.insert(path.clone());
        Ok(())
    }
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

/// Every session with checkpoints, oldest first.
pub fn list(jail: &Jail) -> Result<Vec<Manifest>, ToolError> {
    let dir = RelPath::root().join(CONTROL_DIR).join(CHECKPOINT_DIR);
    let mut out: Vec<Manifest> = state::list_names(jail, &dir)?
        .iter()
        .filter_map(|name| load_manifest(jail, name).ok())
        .collect();
    out.sort_by(|a, b| (a.created, &a.session).cmp(&(b.created, &b.session)));
    Ok(out)
}

/// Puts back what a session saved: bytes and modes, and removes files that did not exist.
/// With `only` non-empty, just those paths. Returns one line per path.
pub fn restore(jail: &Jail, id: &str, only: &[RelPath]) -> Result<Vec<String>, ToolError> {
    let manifest = load_manifest(jail, id)?;
    let wanted: Vec<&Entry> = manifest
        .entries
        .iter()
        .filter(|e| only.is_empty() || only.iter().any(|p| p.as_str() == e.path))
        .collect();
    if wanted.is_empty() {
        return Err(ToolError::Refused(format!(
            "checkpoint session {id} holds none of those paths; `slmcode checkpoints show {id}` lists what it holds"
        )));
    }
    let mut report = Vec::new();
    for entry in wanted {
        let path = jail.parse(&entry.path)?;
        match &entry.saved {
            Saved::File { mode, blob } => {
                valid_id(blob)?;
                let bytes = mutation::read_all(jail, &session_dir(id).join("blobs").join(blob))?;
                mutation::restore_file(jail, &path, &bytes, *mode)?;
                report.push(format!(
                    "restored {path} ({} bytes, mode {mode:o})",
                    bytes.len()
                ));
            }
            Saved::Symlink { target } => {
                mutation::restore_symlink(jail, &path, target)?;
                report.push(format!("restored {path} (symlink to {target})"));
            }
            Saved::Absent => {
                if mutation::remove_restored(jail, &path)? {
                    report.push(format!("removed {path} (it did not exist before)"));
                } else {
                    report.push(format!("{path} is already absent"));
                }
            }
        }
    }
    Ok(report)
}
