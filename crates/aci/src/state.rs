//! The harness's own records under `.slmcode/` (run state and trajectories, checkpoint
//! manifests, pending changes, the symbol index): how they are named, written and read back.
//! Tools never write here; these records are written by the harness through the same atomic
//! replace as every other write, sealed ([`crate::seal`]) so that only what slmcode wrote for
//! this user is believed, and read back through the size bound ([`crate::readback`]). A record
//! that does not check is never used, never deleted: it is reported once and left in place.

use std::io::Read;
use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::anchor::{self, Writer};
use crate::boundary::{layout, Protected};
use crate::error::RefusalClass;
use crate::error::ToolError;
use crate::fsx;
use crate::path::{Jail, PathError, RawPath, RelPath};
use crate::readback::{self, RECORD_MAX_BYTES};
use crate::seal::{self, Chain};

/// Records are private to the user.
const RECORD_MODE: u32 = 0o600;

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Ids are letters, digits and dashes, so one can never name a path elsewhere.
pub fn check_id(id: &str, what: &str, list_command: &str) -> Result<(), ToolError> {
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Err(ToolError::refused(
            RefusalClass::Args,
            format!("\"{id}\" is not a {what} id (see `{list_command}`)"),
        ));
    }
    Ok(())
}

/// Writes a record, sealed for its place, durably, through the one write path.
pub fn write(jail: &Jail, path: &RelPath, bytes: &[u8]) -> Result<(), ToolError> {
    let sealed = seal::seal(path.as_str(), bytes);
    let protected = Protected::discover(jail);
    fsx::write_file(
        jail,
        &protected,
        path,
        &sealed,
        RECORD_MODE,
        Writer::Harness,
    )
    .map_err(|e| {
        ToolError::refused(
            RefusalClass::Io,
            format!("could not save {path}: {e}; nothing was changed"),
        )
    })
}

/// Writes a blob streamed from `content` (never whole in memory), durably, through the one
/// write path. Returns its length. A blob is not sealed: the record that names it holds its
/// hash, and whoever reads it back checks that.
pub fn write_from(jail: &Jail, path: &RelPath, content: &mut dyn Read) -> Result<u64, ToolError> {
    let protected = Protected::discover(jail);
    fsx::write_from(
        jail,
        &protected,
        &RawPath::from_rel(path),
        content,
        RECORD_MODE,
        Writer::Harness,
    )
    .map_err(|e| {
        ToolError::refused(
            RefusalClass::Io,
            format!("could not save {path}: {e}; nothing was changed"),
        )
    })
}

/// Removes a record (or blob) of the harness's own.
pub fn remove(jail: &Jail, path: &RelPath) -> Result<(), ToolError> {
    let fail = |e: &dyn std::fmt::Display| {
        ToolError::refused(RefusalClass::Io, format!("could not remove {path}: {e}"))
    };
    let protected = Protected::discover(jail);
    let dir = anchor::open(jail, &protected, &path.parent(), false, Writer::Harness)
        .map_err(|e| fail(&e))?;
    dir.remove_file(path.file_name()).map_err(|e| fail(&e))
}

/// A log slmcode appends to a line at a time (a run's trajectory): each line sealed and
/// chained to the one before, so a line added, dropped or moved by anyone else shows.
#[derive(Debug)]
pub struct Log {
    path: RelPath,
    chain: Mutex<Chain>,
}

impl Log {
    /// A log to be written at `path` (created, private to the user, with its first line).
    pub fn new(path: RelPath) -> Log {
        Log {
            path,
            chain: Mutex::new(Chain::default()),
        }
    }

    /// Where it is, project-relative.
    pub fn path(&self) -> &RelPath {
        &self.path
    }

    /// Appends one line (`line` holds no newline). A line that could not be written leaves the
    /// chain where it was, so the lines after it still check.
    pub fn append(&self, jail: &Jail, line: &[u8]) -> Result<(), ToolError> {
        let path = &self.path;
        let fail = |e: &dyn std::fmt::Display| {
            ToolError::refused(RefusalClass::Io, format!("could not write {path}: {e}"))
        };
        if line.contains(&b'\n') {
            return Err(ToolError::refused(
                RefusalClass::Internal,
                format!("a line for {path} holds a newline, so it was not written"),
            ));
        }
        let mut chain = self.chain.lock().unwrap_or_else(PoisonError::into_inner);
        let mut next = chain.clone();
        let mut sealed = next.seal_line(path.as_str(), line);
        sealed.push(b'\n');
        let protected = Protected::discover(jail);
        let dir = anchor::open(jail, &protected, &path.parent(), true, Writer::Harness)
            .map_err(|e| fail(&e))?;
        dir.append(path.file_name(), &sealed, RECORD_MODE)
            .map_err(|e| fail(&e))?;
        *chain = next;
        Ok(())
    }
}

/// A log as read back: the lines slmcode wrote, in order, and where lines it did not write
/// begin (1-based), if they do.
#[derive(Debug, Default)]
pub struct LogLines {
    pub lines: Vec<Vec<u8>>,
    pub untrusted_from: Option<usize>,
}

/// Reads a log back: its lines up to the first one that does not check (that one and all after
/// are left out; [`LogLines::untrusted_from`] says where, for the caller to say so).
pub fn read_log(jail: &Jail, path: &RelPath) -> Result<LogLines, ToolError> {
    let bytes = read_bounded(jail, path)?;
    let mut out = LogLines::default();
    let mut chain = Chain::default();
    let mut lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    for (i, line) in lines.iter().enumerate() {
        match chain.open_line(path.as_str(), line) {
            Some(content) => out.lines.push(content.into_owned()),
            None => {
                out.untrusted_from = Some(i + 1);
                break;
            }
        }
    }
    Ok(out)
}

/// What is said of a log whose lines from `from` on slmcode did not write.
pub fn untrusted_lines(path: &RelPath, from: usize) -> ToolError {
    ToolError::refused(
        RefusalClass::Untrusted,
        format!(
            "{path} holds lines from line {from} on that were not written by slmcode for this user (their state MAC does not check: added, changed or cut short since), so they are not used"
        ),
    )
}

/// Writes a file meant to be shared and committed (`slmcode init`'s config): 0644.
pub fn write_shared(jail: &Jail, path: &RelPath, bytes: &[u8]) -> Result<(), ToolError> {
    let protected = Protected::discover(jail);
    fsx::write_file(jail, &protected, path, bytes, 0o644, Writer::Harness).map_err(|e| {
        ToolError::refused(
            RefusalClass::Io,
            format!("could not save {path}: {e}; nothing was changed"),
        )
    })
}

/// Writes a record as pretty JSON.
pub fn write_json(jail: &Jail, path: &RelPath, value: &impl Serialize) -> Result<(), ToolError> {
    let json = serde_json::to_vec_pretty(value)
        .map_err(|e| ToolError::refused(RefusalClass::Io, format!("could not save {path}: {e}")))?;
    write(jail, path, &json)
}

/// Reads a record back: its content, when it is a record slmcode sealed for this place with
/// this user's key. A missing one is a `NotFound` path error; one that does not check (or is
/// over [`RECORD_MAX_BYTES`]) is refused with class [`RefusalClass::Untrusted`] — the caller
/// reports it with [`report_ignored`] where it goes on without it.
pub fn read(jail: &Jail, path: &RelPath) -> Result<Vec<u8>, ToolError> {
    let bytes = read_bounded(jail, path)?;
    match seal::open(path.as_str(), &bytes) {
        Some(content) => Ok(content.into_owned()),
        None => Err(untrusted(path)),
    }
}

/// The bytes of a record or log, through the size bound; one over it is untrusted.
fn read_bounded(jail: &Jail, path: &RelPath) -> Result<Vec<u8>, ToolError> {
    let file = jail.open_file(path)?;
    readback::read(file.into_std(), RECORD_MAX_BYTES).map_err(|e| {
        if e.kind() == std::io::ErrorKind::FileTooLarge {
            ToolError::refused(RefusalClass::Untrusted, format!("{path}: {e}"))
        } else {
            ToolError::refused(RefusalClass::Io, format!("{path} could not be read: {e}"))
        }
    })
}

/// The refusal of a record slmcode did not write for this user.
pub fn untrusted(path: &RelPath) -> ToolError {
    ToolError::refused(
        RefusalClass::Untrusted,
        format!(
            "{path} was not written by slmcode for this user: its state MAC does not check (it came with the repository, or was changed after slmcode wrote it), so nothing in it is used"
        ),
    )
}

/// Reports, once per process, a record or log that was ignored (an [`RefusalClass::Untrusted`]
/// refusal) and left where it is; other errors are the caller's to say.
pub fn report_ignored(e: &ToolError) {
    report_untrusted(e, "it was left in place: look at it, then remove it");
}

/// Reports, once per process, an [`RefusalClass::Untrusted`] refusal and what became of the
/// file (`fate`); other errors are the caller's to say.
pub fn report_untrusted(e: &ToolError, fate: &str) {
    if e.class() == RefusalClass::Untrusted {
        let message = e.to_string();
        seal::report_once(message.clone(), || format!("{message}; {fate}"));
    }
}

/// Reads a JSON record; a missing one is answered with `missing`.
pub fn read_json<T: DeserializeOwned>(
    jail: &Jail,
    path: &RelPath,
    missing: impl FnOnce() -> String,
) -> Result<T, ToolError> {
    let bytes = match read(jail, path) {
        Ok(b) => b,
        Err(ToolError::Path(PathError::NotFound { .. })) => {
            return Err(ToolError::refused(RefusalClass::NotFound, missing()))
        }
        Err(e) => return Err(e),
    };
    serde_json::from_slice(&bytes)
        .map_err(|e| ToolError::refused(RefusalClass::Io, format!("{path} is unreadable: {e}")))
}

/// The entry names of a records directory; none when it does not exist yet.
pub fn list_names(jail: &Jail, dir: &RelPath) -> Result<Vec<String>, ToolError> {
    match jail.read_dir(dir) {
        Ok(entries) => Ok(entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()),
        Err(PathError::NotFound { .. }) => Ok(Vec::new()),
        Err(e) => Err(e.into()),
    }
}

/// A file of slmcode's own state that it did not write for this user, for `slmcode doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untrusted {
    pub path: RelPath,
    /// Why, in a few words.
    pub why: String,
}

/// Every record and log under `.slmcode/` (runs, checkpoint manifests, pending changes, the
/// cache) that does not check against this user's key. Blobs are vouched for by their
/// manifests, and checked when they are restored.
pub fn audit(jail: &Jail) -> Vec<Untrusted> {
    let mut files: Vec<RelPath> = Vec::new();
    for dir in [layout::RUNS, layout::PENDING, layout::CACHE] {
        let dir = layout::path(dir);
        for name in list_names(jail, &dir).unwrap_or_default() {
            files.push(dir.join(&name));
        }
    }
    let checkpoints = layout::path(layout::CHECKPOINTS);
    for name in list_names(jail, &checkpoints).unwrap_or_default() {
        let manifest = checkpoints.join(&name).join("manifest.json");
        if jail.symlink_metadata(&manifest).is_ok() {
            files.push(manifest);
        }
    }
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let Ok(meta) = jail.symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let why = if meta.len() > RECORD_MAX_BYTES {
            format!(
                "{} bytes, over the {RECORD_MAX_BYTES} bytes slmcode reads back",
                meta.len()
            )
        } else if path.as_str().ends_with(".jsonl") {
            match read_log(jail, &path) {
                Ok(log) => match log.untrusted_from {
                    None => continue,
                    Some(1) => "no valid state MAC".to_string(),
                    Some(n) => format!("no valid state MAC from line {n} on"),
                },
                Err(e) => why_of(&e),
            }
        } else {
            match read(jail, &path) {
                Ok(_) => continue,
                Err(e) => why_of(&e),
            }
        };
        out.push(Untrusted { path, why });
    }
    out
}

/// The few words `audit` gives for a record that failed to read back.
fn why_of(e: &ToolError) -> String {
    match e.class() {
        RefusalClass::Untrusted => "no valid state MAC".to_string(),
        _ => e.to_string(),
    }
}
