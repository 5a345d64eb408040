//! Files through the jail: reading a whole file, the durable write every change ends in, and
//! the checks every write path shares (the boundary on the path text and on disk, where a file
//! that does not exist yet would land). The mutation path, checkpoint restore and the
//! harness's own records all write through here, so there is one way to put bytes on disk.
//!
//! The durable write: a temp file, written and fsynced, renamed over the name, the directory
//! fsynced — through directory handles ([`crate::anchor`]). [`save_private`] does the same for
//! the user's own files outside any project (learned state, approvals, config).

use std::io::Read;
use std::path::Path;

use crate::anchor::{self, AnchorError, Anchored, Writer};
use crate::boundary::{self, Protected};
use crate::error::{RefusalClass, ToolError};
use crate::path::{Jail, PathError, RawPath, RelPath};

/// Opens `dir` for a write of `shown` through [`anchor::open`], with its refusals worded for the
/// model.
pub(crate) fn anchored(
    jail: &Jail,
    protected: &Protected,
    dir: &RawPath,
    create: bool,
    writer: Writer,
    verb: &str,
    shown: &RelPath,
) -> Result<Anchored, ToolError> {
    anchor::open_raw(jail, protected, dir, create, writer).map_err(|e| match e {
        AnchorError::Protected(b, _) => ToolError::refused(RefusalClass::Boundary, b.refusal(&shown.to_string(), verb)),
        AnchorError::Changed(p) => ToolError::refused(RefusalClass::Io, format!(
            "{verb} refused — {p} changed while {shown} was being written (it is not a plain directory now: a symlink or a file was put there). Nothing was written; look at it with ws_list and retry."
        )),
        AnchorError::Path(p) => ToolError::Path(p),
        AnchorError::Io(p, e) => ToolError::refused(RefusalClass::Io, format!("{verb} of {shown} failed at {p}: {e}")),
    })
}

/// Writes `bytes` to `path` atomically through its anchored directory (created as needed):
/// temp file, fsync, rename, fsync of the directory. Every file write of the tools and of the
/// harness's own records comes here.
pub(crate) fn write_file(
    jail: &Jail,
    protected: &Protected,
    path: &RelPath,
    bytes: &[u8],
    mode: u32,
    writer: Writer,
) -> Result<(), ToolError> {
    write_from(
        jail,
        protected,
        &RawPath::from_rel(path),
        &mut &bytes[..],
        mode,
        writer,
    )
    .map(|_| ())
}

/// [`write_file`] streamed from `content` (a checkpoint's copy of a large file). Returns the
/// bytes written.
pub(crate) fn write_from(
    jail: &Jail,
    protected: &Protected,
    path: &RawPath,
    content: &mut dyn Read,
    mode: u32,
    writer: Writer,
) -> Result<u64, ToolError> {
    let shown = path.display();
    let dir = anchored(
        jail,
        protected,
        &path.parent(),
        true,
        writer,
        "write",
        &shown,
    )?;
    let staging = anchor::staging(jail, protected);
    dir.replace_from(path.file_name(), content, mode, staging.as_ref())
        .map_err(|e| ToolError::refused(RefusalClass::Io, e.to_string()))
}

/// The whole current content of a file, through the jail. Only a regular file: a device or a
/// FIFO (`mknod zero.txt c 1 5`) would be read until memory runs out. Judged on the opened
/// handle, so nothing can be swapped in after the check.
pub fn read_all(jail: &Jail, path: &RelPath) -> Result<Vec<u8>, ToolError> {
    let mut file = jail.open_file(path)?;
    let meta = file.metadata().map_err(|e| {
        ToolError::refused(RefusalClass::Io, format!("{path} could not be read: {e}"))
    })?;
    if !meta.is_file() {
        return Err(ToolError::refused(
            RefusalClass::Other,
            not_regular(path, &meta.file_type()),
        ));
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut file, &mut bytes).map_err(|e| {
        ToolError::refused(RefusalClass::Io, format!("{path} could not be read: {e}"))
    })?;
    Ok(bytes)
}

/// A control file of the project (`.slmcode/config.yaml`, `hooks.json`, a skill, the
/// instructions), whole, through the jail and the size bound ([`crate::readback::read`]):
/// one over `limit` bytes is refused without being read.
pub fn read_bounded(jail: &Jail, path: &RelPath, limit: u64) -> Result<Vec<u8>, ToolError> {
    let file = jail.open_file(path)?;
    crate::readback::read(file.into_std(), limit)
        .map_err(|e| ToolError::refused(RefusalClass::Io, format!("{path} could not be read: {e}")))
}

/// Why a path that is not a regular file is refused, naming what it is.
pub(crate) fn not_regular(path: &RelPath, kind: &cap_std::fs::FileType) -> String {
    let what = crate::platform::fs::special_kind(kind).unwrap_or("not a regular file");
    format!("{path} is {what}, not a regular file; only regular files are read and changed here. Choose another path.")
}

/// Where a file that does not exist yet would be: the deepest existing ancestor resolved
/// (symlinks followed through the jail), with the missing components appended.
pub(crate) fn resolve_new(jail: &Jail, path: &RelPath, verb: &str) -> Result<RelPath, ToolError> {
    let mut missing = vec![path.file_name().to_string()];
    let mut ancestor = path.parent();
    loop {
        match jail.resolve(&ancestor) {
            Ok(real) => {
                if !jail.metadata(&real)?.is_dir() {
                    return Err(ToolError::refused(RefusalClass::Other, format!(
                        "{verb} refused — {ancestor} is a file, so it cannot contain {path}. Choose another path."
                    )));
                }
                return Ok(missing.iter().rev().fold(real, |p, name| p.join(name)));
            }
            Err(PathError::NotFound { .. }) if !ancestor.is_root() => {
                missing.push(ancestor.file_name().to_string());
                ancestor = ancestor.parent();
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Refuses a path whose text crosses a boundary (`.slmcode/` or any `.git`).
pub(crate) fn check_boundary(given: &RelPath, path: &RelPath, verb: &str) -> Result<(), ToolError> {
    match boundary::classify(path) {
        Some(b) => Err(ToolError::refused(
            RefusalClass::Boundary,
            b.refusal(&given.to_string(), verb),
        )),
        None => Ok(()),
    }
}

/// The checks that need the disk: `real` (symlinks resolved) must not lie in a protected place
/// — by its text, under a `gitdir:` target, or because a directory on its way *is* a protected
/// one (same device and inode, see [`anchor::check`]). Returns what was found, for the write.
pub(crate) fn check_boundary_on_disk(
    jail: &Jail,
    given: &RelPath,
    real: &RelPath,
    verb: &str,
) -> Result<Protected, ToolError> {
    let protected = Protected::discover(jail);
    if let Some(b) = protected.classify(real) {
        return Err(ToolError::refused(
            RefusalClass::Boundary,
            b.refusal(&given.to_string(), verb),
        ));
    }
    // Every existing directory on the way, by identity: a bind mount or a hard-linked
    // directory cannot alias a protected place.
    match anchor::check(jail, &protected, &real.parent(), Writer::Tool) {
        Ok(()) => Ok(protected),
        Err(AnchorError::Protected(b, _)) => Err(ToolError::refused(
            RefusalClass::Boundary,
            b.refusal(&given.to_string(), verb),
        )),
        // A symlink in `real` (which has them resolved) appeared since: refused at the write.
        Err(_) => Ok(protected),
    }
}

/// Writes one of the user's own files (learned state, approvals, config) so a crash never
/// leaves it half-written: the same durable replace as every project write, through a handle
/// of its directory (created as needed), the file private (0600).
pub fn save_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path.file_name().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the path has no file name",
        )
    })?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)?;
    let handle = cap_std::fs::Dir::open_ambient_dir(&dir, cap_std::ambient_authority())?;
    anchor::replace_in(&handle, name, &mut &bytes[..], PRIVATE_MODE).map(|_| ())
}

/// The mode of the user's own files.
pub const PRIVATE_MODE: u32 = 0o600;

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_users_files_are_replaced_whole_and_private() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("deep/er/state.json");
        save_private(&path, b"one").unwrap();
        save_private(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, PRIVATE_MODE);
        // No temp file is left beside it.
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["state.json"]);
        assert!(save_private(Path::new("/"), b"x").is_err());
    }
}
