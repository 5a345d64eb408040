//! What a killed slmcode leaves behind, removed at the next start.
//!
//! A write never leaves a partial target (it is staged and renamed into place), but `kill -9`
//! between staging and rename leaves the staged temp in `.slmcode/tmp/`, and one between a
//! checkpoint's first copy and its manifest leaves a checkpoint directory nothing refers to.
//! Both carry the writer's pid in their names, and a writer holds a lock on its temp while it
//! writes it. [`sweep`] removes what has not been touched for [`STALE_AFTER`] and whose writer
//! is gone: for a temp, nobody holds it — whatever its pid says now, since pids are reused
//! (slmcode in a container is often the same pid every run); for a checkpoint directory (or
//! where locks cannot be had), its process is gone. A process in another pid namespace — a
//! container over the same project — looks dead from here, and must not lose the file it is
//! writing: its lock says it is there.

use std::time::{Duration, SystemTime};

use crate::anchor::{self, Anchored, Writer, BESIDE_PREFIX, BESIDE_RECORD, STAGING_DIR};
use crate::boundary::{Protected, CONTROL_DIR};
use crate::checkpoint::CHECKPOINT_DIR;
use crate::path::{Jail, RawPath, RelPath};

/// How long a leftover must have been left alone before it is removed.
pub const STALE_AFTER: Duration = Duration::from_secs(60);

/// What a sweep removed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Swept {
    /// Staged temp files (and temps beside their targets).
    pub temps: usize,
    /// Checkpoint directories without a manifest.
    pub checkpoint_dirs: usize,
}

/// Removes the stale leftovers of dead slmcode processes. Best effort: whatever cannot be
/// looked at or removed is left as it is.
pub fn sweep(jail: &Jail) -> Swept {
    let protected = Protected::discover(jail);
    let mut swept = Swept::default();
    let control = RelPath::root().join(CONTROL_DIR);
    if let Ok(tmp) = anchor::open(
        jail,
        &protected,
        &control.join(STAGING_DIR),
        false,
        Writer::Harness,
    ) {
        swept.temps = sweep_temps(jail, &protected, &tmp);
    }
    if let Ok(checkpoints) = anchor::open(
        jail,
        &protected,
        &control.join(CHECKPOINT_DIR),
        false,
        Writer::Harness,
    ) {
        swept.checkpoint_dirs = sweep_checkpoints(&checkpoints);
    }
    swept
}

/// `<pid>-<n>.tmp` and `<pid>-<n>.tmp.beside` in the staging directory.
fn sweep_temps(jail: &Jail, protected: &Protected, tmp: &Anchored) -> usize {
    let mut removed = 0;
    for name in names(tmp) {
        let (staged, record) = match name.strip_suffix(BESIDE_RECORD) {
            Some(staged) => (staged, true),
            None => (name.as_str(), false),
        };
        let Some(pid) = staged.strip_suffix(".tmp").and_then(writer_pid) else {
            continue;
        };
        // A record's writer holds the staged temp it names while it copies beside the target.
        if !abandoned(tmp, &name, pid, Some(staged)) {
            continue;
        }
        if record {
            remove_beside(jail, protected, tmp, &name, pid);
        }
        if tmp.remove_file(&name).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Removes the temp a record names beside its target, when it is one of `pid`'s.
fn remove_beside(jail: &Jail, protected: &Protected, tmp: &Anchored, record: &str, pid: u32) {
    // Through the size bound: a record is a path, and anyone could have put a 1 GiB one here.
    let Some(bytes) = open_file(tmp, record)
        .and_then(|f| crate::readback::read(f, crate::readback::CONTROL_MAX_BYTES).ok())
    else {
        return;
    };
    let Ok(path) = RawPath::from_bytes(&bytes) else {
        return;
    };
    let own = path
        .file_name()
        .to_str()
        .and_then(|n| n.strip_prefix(BESIDE_PREFIX))
        .and_then(|n| n.strip_suffix(".tmp"))
        .and_then(writer_pid)
        == Some(pid);
    if !own {
        return;
    }
    if let Ok(dir) = anchor::open_raw(jail, protected, &path.parent(), false, Writer::Tool) {
        let _ = dir.remove_file(path.file_name());
    }
}

/// `<time>-<pid>-<n>` directories holding no `manifest.json`.
fn sweep_checkpoints(checkpoints: &Anchored) -> usize {
    let mut removed = 0;
    for name in names(checkpoints) {
        let Some(pid) = name.split_once('-').and_then(|(_, rest)| writer_pid(rest)) else {
            continue;
        };
        if !abandoned(checkpoints, &name, pid, None) {
            continue;
        }
        let has_manifest = checkpoints
            .dir()
            .symlink_metadata(format!("{name}/manifest.json"))
            .is_ok();
        if !has_manifest && checkpoints.remove_dir_all(&name).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The UTF-8 names in a directory (slmcode's own names all are).
fn names(dir: &Anchored) -> Vec<String> {
    let Ok(entries) = dir.dir().entries() else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect()
}

/// The pid in `<pid>-<n>`, when that is the whole text.
fn writer_pid(text: &str) -> Option<u32> {
    let (pid, n) = text.split_once('-')?;
    n.parse::<u64>().ok()?;
    pid.parse().ok()
}

/// True when `name` has not changed for [`STALE_AFTER`] and its writer is gone: nobody holds
/// the temp `locked` names (when it is there and locks can be had), else process `pid` is not
/// alive.
fn abandoned(dir: &Anchored, name: &str, pid: u32, locked: Option<&str>) -> bool {
    let Ok(meta) = dir.symlink_metadata(name) else {
        return false;
    };
    let modified = meta.modified().map(|t| t.into_std()).ok();
    let stale = modified
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age >= STALE_AFTER);
    if !stale {
        return false;
    }
    if let Some(held) = locked.and_then(|temp| held(dir, temp)) {
        return !held;
    }
    pid != std::process::id() && !crate::platform::host::process_alive(pid)
}

/// Whether someone holds the lock on the temp `name` (its writer, while it writes); `None`
/// when that cannot be learned (it is gone, or this file system has no locks).
fn held(dir: &Anchored, name: &str) -> Option<bool> {
    let file = open_file(dir, name)?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    match file.try_lock() {
        // Released as `file` is dropped.
        Ok(()) => Some(false),
        Err(std::fs::TryLockError::WouldBlock) => Some(true),
        Err(std::fs::TryLockError::Error(_)) => None,
    }
}

/// Opens `name` in `dir` for reading, without following a symlink or blocking on a FIFO.
fn open_file(dir: &Anchored, name: &str) -> Option<std::fs::File> {
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true);
    crate::platform::fs::never_block_or_follow(&mut options);
    Some(dir.dir().open_with(name, &options).ok()?.into_std())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writer_pids_are_read_only_from_slmcode_names() {
        assert_eq!(writer_pid("123-4"), Some(123));
        assert_eq!(writer_pid("123-x"), None);
        assert_eq!(writer_pid("abc-4"), None);
        assert_eq!(writer_pid("1234"), None);
        assert!(crate::platform::host::process_alive(std::process::id()));
    }
}
