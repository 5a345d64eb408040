//! Reading back what slmcode or the user keeps — the project's `.slmcode/config.yaml`,
//! `hooks.json` and skills, run state, trajectories, checkpoint manifests, pending changes, the
//! symbol index; the user's config, approvals, learned state and state key — always through a
//! size bound. Any of it may have come with a repository (or be a 1 GiB sparse file): reading it
//! must cost a refusal, not 1 GiB of memory, as a model's reply does.

use std::io::{self, ErrorKind, Read};
use std::path::Path;

/// Files people write or slmcode keeps small: configs, hooks, approvals, skills, instructions,
/// learned settings, the state key.
pub const CONTROL_MAX_BYTES: u64 = 4 << 20;
/// Records slmcode writes that grow with the work: run state (a whole conversation), a run's
/// trajectory, checkpoint manifests, pending changes (a whole file), the symbol index.
pub const RECORD_MAX_BYTES: u64 = 256 << 20;

/// Reads an open file whole when it is a regular file of at most `limit` bytes. A larger one
/// is refused by its size before a byte is read (and again if it grew meanwhile), with an error
/// of kind [`ErrorKind::FileTooLarge`]; a device, FIFO or directory with
/// [`ErrorKind::InvalidInput`]. The one bounded read: every read-back goes through it.
pub fn read(file: std::fs::File, limit: u64) -> io::Result<Vec<u8>> {
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            ErrorKind::InvalidInput,
            "it is not a regular file, so it was not read",
        ));
    }
    if meta.len() > limit {
        return Err(too_large(meta.len(), limit));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    let read = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if read > limit {
        return Err(too_large(read, limit));
    }
    Ok(bytes)
}

/// [`read`] for a file of the user's, outside any project, by path: opened without blocking
/// (a FIFO planted there would hang the open).
pub fn read_path(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true);
    crate::platform::fs::never_block(&mut options);
    let file = cap_std::fs::File::open_ambient_with(path, &options, cap_std::ambient_authority())?;
    read(file.into_std(), limit)
}

/// The refusal of a file over its bound, in words that name both sizes.
pub(crate) fn too_large(size: u64, limit: u64) -> io::Error {
    io::Error::new(
        ErrorKind::FileTooLarge,
        format!("it is {size} bytes, over the {limit} bytes slmcode reads of such a file, so it was not read"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sparse_gigabyte_is_refused_by_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        std::fs::File::create(&path)
            .unwrap()
            .set_len(1 << 30)
            .unwrap();
        let e = read_path(&path, CONTROL_MAX_BYTES).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::FileTooLarge);
        assert_eq!(
            e.to_string(),
            "it is 1073741824 bytes, over the 4194304 bytes slmcode reads of such a file, so it was not read"
        );
        std::fs::write(&path, b"12345").unwrap();
        assert_eq!(read_path(&path, 5).unwrap(), b"12345");
        assert_eq!(
            read_path(&path, 4).unwrap_err().kind(),
            ErrorKind::FileTooLarge
        );
        assert_eq!(
            read_path(dir.path(), 4).unwrap_err().kind(),
            ErrorKind::InvalidInput
        );
        assert_eq!(
            read_path(&dir.path().join("none"), 4).unwrap_err().kind(),
            ErrorKind::NotFound
        );
    }
}
