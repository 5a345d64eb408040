//! The harness's own records under `.slmcode/` (pending changes, checkpoint manifests): how
//! they are named, written and read back. Tools never write here; these records are written
//! by the harness through the same atomic replace as every other write.

use std::io::Read;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::anchor::{self, Writer};
use crate::boundary::Protected;
use crate::error::RefusalClass;
use crate::error::ToolError;
use crate::fsx;
use crate::path::{Jail, PathError, RawPath, RelPath};

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

/// Writes a record (or blob) durably, through the one write path.
pub fn write(jail: &Jail, path: &RelPath, bytes: &[u8]) -> Result<(), ToolError> {
    let protected = Protected::discover(jail);
    fsx::write_file(jail, &protected, path, bytes, RECORD_MODE, Writer::Harness).map_err(|e| {
        ToolError::refused(
            RefusalClass::Io,
            format!("could not save {path}: {e}; nothing was changed"),
        )
    })
}

/// Writes a blob streamed from `content` (never whole in memory), durably, through the one
/// write path. Returns its length.
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

/// Appends to a log record (a run's trajectory), creating it (and its directory) private to
/// the user. A log grows a line at a time, so it is appended to rather than replaced.
pub fn append(jail: &Jail, path: &RelPath, bytes: &[u8]) -> Result<(), ToolError> {
    let fail = |e: &dyn std::fmt::Display| {
        ToolError::refused(RefusalClass::Io, format!("could not write {path}: {e}"))
    };
    let protected = Protected::discover(jail);
    let dir = anchor::open(jail, &protected, &path.parent(), true, Writer::Harness)
        .map_err(|e| fail(&e))?;
    dir.append(path.file_name(), bytes, RECORD_MODE)
        .map_err(|e| fail(&e))
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

/// Reads a JSON record; a missing one is answered with `missing`.
pub fn read_json<T: DeserializeOwned>(
    jail: &Jail,
    path: &RelPath,
    missing: impl FnOnce() -> String,
) -> Result<T, ToolError> {
    let bytes = match fsx::read_all(jail, path) {
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
