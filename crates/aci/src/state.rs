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
    let mut follower = LogFollower::new(path.clone());
    let mut lines = follower.read_new(jail)?;
    // A last line without its newline (a writer stopped mid-line) is read as a line: it
    // checks, or the log is untrusted from there.
    lines.extend(follower.finish());
    Ok(LogLines {
        lines,
        untrusted_from: follower.untrusted_from(),
    })
}

/// A log read as it grows (a run followed live, `slmcode view`): each read takes what was
/// appended since the one before and checks it against the chain so far, so a long log is
/// never read twice. A line not yet finished waits for the next read; from the first line
/// that does not check (or when the log shrinks: it was replaced) nothing more is believed.
#[derive(Debug)]
pub struct LogFollower {
    path: RelPath,
    offset: u64,
    chain: Chain,
    partial: Vec<u8>,
    lines: usize,
    untrusted_from: Option<usize>,
}

impl LogFollower {
    /// A follower at the start of the log at `path`.
    pub fn new(path: RelPath) -> LogFollower {
        LogFollower {
            path,
            offset: 0,
            chain: Chain::default(),
            partial: Vec::new(),
            lines: 0,
            untrusted_from: None,
        }
    }

    /// The complete lines appended since the last read that slmcode wrote, in order. The log
    /// is read through the same size bound as every record.
    pub fn read_new(&mut self, jail: &Jail) -> Result<Vec<Vec<u8>>, ToolError> {
        use std::io::{Seek, SeekFrom};
        if self.untrusted_from.is_some() {
            return Ok(Vec::new());
        }
        let path = &self.path;
        let io = |e: std::io::Error| {
            ToolError::refused(RefusalClass::Io, format!("{path} could not be read: {e}"))
        };
        let mut file = jail.open_file(path)?.into_std();
        let meta = file.metadata().map_err(io)?;
        if !meta.is_file() {
            return Err(ToolError::refused(
                RefusalClass::Io,
                format!("{path} could not be read: it is not a regular file"),
            ));
        }
        if meta.len() > RECORD_MAX_BYTES {
            let e = readback::too_large(meta.len(), RECORD_MAX_BYTES);
            return Err(ToolError::refused(
                RefusalClass::Untrusted,
                format!("{path}: {e}"),
            ));
        }
        if meta.len() < self.offset {
            self.untrusted_from = Some(self.lines + 1);
            return Ok(Vec::new());
        }
        file.seek(SeekFrom::Start(self.offset)).map_err(io)?;
        let before = self.partial.len();
        file.take(meta.len() - self.offset)
            .read_to_end(&mut self.partial)
            .map_err(io)?;
        self.offset += (self.partial.len() - before) as u64;
        let Some(end) = self.partial.iter().rposition(|b| *b == b'\n') else {
            return Ok(Vec::new());
        };
        let rest = self.partial.split_off(end + 1);
        let done = std::mem::replace(&mut self.partial, rest);
        let mut out = Vec::new();
        for line in done[..end].split(|b| *b == b'\n') {
            match self.chain.open_line(self.path.as_str(), line) {
                Some(content) => {
                    out.push(content.into_owned());
                    self.lines += 1;
                }
                None => {
                    self.untrusted_from = Some(self.lines + 1);
                    self.partial.clear();
                    break;
                }
            }
        }
        Ok(out)
    }

    /// The unfinished last line, read as a whole one (the log is complete: nothing more will
    /// be appended); empty when there is none or it does not check.
    pub fn finish(&mut self) -> Option<Vec<u8>> {
        if self.partial.is_empty() || self.untrusted_from.is_some() {
            return None;
        }
        let line = std::mem::take(&mut self.partial);
        match self.chain.open_line(self.path.as_str(), &line) {
            Some(content) => {
                self.lines += 1;
                Some(content.into_owned())
            }
            None => {
                self.untrusted_from = Some(self.lines + 1);
                None
            }
        }
    }

    /// The 1-based line from which the log is not slmcode's, once one was found.
    pub fn untrusted_from(&self) -> Option<usize> {
        self.untrusted_from
    }

    /// Lines read and believed so far.
    pub fn lines_read(&self) -> usize {
        self.lines
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn append_raw(dir: &std::path::Path, path: &RelPath, bytes: &[u8]) {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.join(path.as_str()))
            .unwrap();
        f.write_all(bytes).unwrap();
    }

    #[test]
    fn a_follower_reads_each_line_once_and_stops_at_a_foreign_one() {
        let dir = tempfile::tempdir().unwrap();
        let jail = Jail::open(dir.path()).unwrap();
        let path = layout::path(layout::RUNS).join("x.jsonl");
        let log = Log::new(path.clone());
        log.append(&jail, br#"{"n":1}"#).unwrap();
        log.append(&jail, br#"{"n":2}"#).unwrap();
        let mut f = LogFollower::new(path.clone());
        assert_eq!(
            f.read_new(&jail).unwrap(),
            vec![br#"{"n":1}"#.to_vec(), br#"{"n":2}"#.to_vec()]
        );
        assert!(f.read_new(&jail).unwrap().is_empty());
        log.append(&jail, br#"{"n":3}"#).unwrap();
        assert_eq!(f.read_new(&jail).unwrap(), vec![br#"{"n":3}"#.to_vec()]);
        assert_eq!(f.lines_read(), 3);
        // A line still being written waits for its newline.
        let mut next = Chain::default();
        for l in [&br#"{"n":1}"#[..], br#"{"n":2}"#, br#"{"n":3}"#] {
            next.seal_line(path.as_str(), l);
        }
        let sealed = next.seal_line(path.as_str(), br#"{"n":4}"#);
        append_raw(dir.path(), &path, &sealed[..5]);
        assert!(f.read_new(&jail).unwrap().is_empty());
        append_raw(dir.path(), &path, &sealed[5..]);
        append_raw(dir.path(), &path, b"\n");
        assert_eq!(f.read_new(&jail).unwrap(), vec![br#"{"n":4}"#.to_vec()]);
        // A line slmcode did not write ends what is believed, now and later.
        append_raw(dir.path(), &path, b"{\"type\":\"final\"}\n");
        log.append(&jail, br#"{"n":5}"#).unwrap();
        assert!(f.read_new(&jail).unwrap().is_empty());
        assert_eq!(f.untrusted_from(), Some(5));
        assert!(f.read_new(&jail).unwrap().is_empty());
        let whole = read_log(&jail, &path).unwrap();
        assert_eq!(whole.lines.len(), 4);
        assert_eq!(whole.untrusted_from, Some(5));
    }

    #[test]
    fn a_log_that_shrank_was_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let jail = Jail::open(dir.path()).unwrap();
        let path = layout::path(layout::RUNS).join("y.jsonl");
        let log = Log::new(path.clone());
        log.append(&jail, br#"{"a":"long first line"}"#).unwrap();
        let mut f = LogFollower::new(path.clone());
        assert_eq!(f.read_new(&jail).unwrap().len(), 1);
        std::fs::write(dir.path().join(path.as_str()), b"x\n").unwrap();
        assert!(f.read_new(&jail).unwrap().is_empty());
        assert_eq!(f.untrusted_from(), Some(2));
    }
}
