//! The one mutation path. Every file change of every tool goes through [`commit`], which
//! applies, in order: the jail; the `.slmcode/` boundary (on the path text, on the resolved
//! path, and on directory identity); Windows reserved names; the permission mode (auto writes,
//! dry-run reports, review stages under `.slmcode/pending/`); then the atomic replace — temp
//! file in the same directory, fsync, rename, fsync the directory, the file's mode kept.
//!
//! Writing through rename also means a hard link elsewhere to the same inode is never written
//! through: the name being edited gets a new inode, the other name keeps the old bytes.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::{Dir, MetadataExt, OpenOptions};

use crate::config::PermissionMode;
use crate::path::{Jail, PathError, RelPath};
use crate::pending;
use crate::registry::ToolError;
use crate::workspace::{ReadRecord, Workspace};

/// The harness's own directory: tools never write under it, except in [`SCRATCH`].
pub const CONTROL_DIR: &str = ".slmcode";
/// The one place under [`CONTROL_DIR`] tools may write.
pub const SCRATCH: &str = "scratch";
/// Mode of a file the tools create.
pub const NEW_FILE_MODE: u32 = 0o644;

/// What happened to a change.
#[derive(Debug, PartialEq, Eq)]
pub enum Done {
    Written,
    /// Nothing was written; the diff is what would have changed.
    DryRun {
        diff: String,
    },
    /// Nothing was written yet; the change waits in `.slmcode/pending/<id>.json`.
    Staged {
        id: String,
    },
}

impl Done {
    /// The tool's success text, completed with what the permission mode did.
    pub fn present(&self, summary: &str) -> String {
        match self {
            Done::Written => summary.to_string(),
            Done::DryRun { diff } => {
                format!("[dry-run — nothing was written] would have: {summary}\n{diff}")
            }
            Done::Staged { id } => format!(
                "{summary}\n[review mode — staged as .slmcode/pending/{id}.json; the file changes only when the user runs `slmcode pending apply {id}`]"
            ),
        }
    }
}

/// Where a change will land: the path as given and the real file behind it.
#[derive(Debug, Clone)]
pub struct Target {
    pub given: RelPath,
    /// Symlinks resolved; the file that is actually written.
    pub real: RelPath,
    /// Current permission bits, when the file exists.
    pub mode: Option<u32>,
}

impl Target {
    pub fn exists(&self) -> bool {
        self.mode.is_some()
    }
}

/// Resolves and checks where a write to `path` would land, without writing. Tools call this
/// first so a refused target is refused before anything else is said; [`commit`] calls it
/// again, so no write skips it.
pub fn target(jail: &Jail, path: &RelPath, verb: &str) -> Result<Target, ToolError> {
    if path.is_root() {
        return Err(ToolError::Refused(format!(
            "{verb} refused — the path names the project root, not a file. Send a file path such as \"src/main.rs\"."
        )));
    }
    check_reserved(path, verb)?;
    check_boundary(path, path, verb)?;
    let (real, mode) = match jail.symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => {
            return Err(ToolError::Refused(format!(
                "{verb} refused — {path} is a directory. Name a file inside it, e.g. \"{path}/new_file.txt\"."
            )))
        }
        Ok(meta) if meta.file_type().is_symlink() => {
            let real = jail.resolve(path).map_err(|e| match e {
                PathError::NotFound { .. } => ToolError::Refused(format!(
                    "{verb} refused — {path} is a broken symlink. Write to the real file, or delete the link first."
                )),
                other => other.into(),
            })?;
            let meta = jail.metadata(&real)?;
            if meta.is_dir() {
                return Err(ToolError::Refused(format!(
                    "{verb} refused — {path} is a symlink to the directory {real}. Name a file inside it."
                )));
            }
            (real, Some(meta.mode() & 0o7777))
        }
        Ok(meta) => (jail.resolve(path)?, Some(meta.mode() & 0o7777)),
        Err(PathError::NotFound { .. }) => (resolve_new(jail, path, verb)?, None),
        Err(e) => return Err(e.into()),
    };
    check_boundary(path, &real, verb)?;
    check_identity(jail, path, &real, verb)?;
    Ok(Target {
        given: path.clone(),
        real,
        mode,
    })
}

/// Commits new content for `path` through the whole path: target checks, permission mode,
/// atomic replace. On success the session's read record follows the new content, so the
/// model can keep editing what it just wrote.
pub fn commit(
    ws: &mut Workspace,
    path: &RelPath,
    bytes: Vec<u8>,
    tool: &str,
) -> Result<Done, ToolError> {
    let mode = ws.config.permission_mode;
    commit_as(ws, path, bytes, tool, mode)
}

/// [`commit`] under an explicit permission mode (`slmcode pending apply` commits in auto).
pub fn commit_as(
    ws: &mut Workspace,
    path: &RelPath,
    bytes: Vec<u8>,
    tool: &str,
    mode: PermissionMode,
) -> Result<Done, ToolError> {
    let verb = verb_of(tool);
    let target = target(&ws.jail, path, verb)?;
    // Only dry-run and review need the old bytes (for the diff and the staged record).
    let before = if target.exists() && mode != PermissionMode::Auto {
        Some(read_all(&ws.jail, &target.real)?)
    } else {
        None
    };
    match mode {
        PermissionMode::DryRun => Ok(Done::DryRun {
            diff: unified_diff(&target.real, before.as_deref().unwrap_or_default(), &bytes),
        }),
        PermissionMode::Review => {
            let id = pending::stage(&ws.jail, &target.real, before.as_deref(), &bytes, tool)?;
            Ok(Done::Staged { id })
        }
        PermissionMode::Auto => {
            atomic_replace(
                &ws.jail,
                &target.real,
                &bytes,
                target.mode.unwrap_or(NEW_FILE_MODE),
            )
            .map_err(|e| ToolError::Refused(format!("{verb} of {path} failed: {e}")))?;
            ws.session.record_read(
                target.real,
                ReadRecord {
                    hash: *blake3::hash(&bytes).as_bytes(),
                    len: bytes.len() as u64,
                },
            );
            Ok(Done::Written)
        }
    }
}

fn verb_of(tool: &str) -> &'static str {
    match tool {
        "ws_edit" => "edit",
        "ws_patch" => "patch",
        _ => "write",
    }
}

/// The whole current content of a file, through the jail.
pub fn read_all(jail: &Jail, path: &RelPath) -> Result<Vec<u8>, ToolError> {
    let mut file = jail.open_file(path)?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut file, &mut bytes)
        .map_err(|e| ToolError::Refused(format!("{path} could not be read: {e}")))?;
    Ok(bytes)
}

/// A unified diff of two versions of a file, for dry-run and review.
pub fn unified_diff(path: &RelPath, before: &[u8], after: &[u8]) -> String {
    let before = String::from_utf8_lossy(before);
    let after = String::from_utf8_lossy(after);
    similar::TextDiff::from_lines(before.as_ref(), after.as_ref())
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}

/// Writes `bytes` to `path` atomically: a temp file beside it, fsynced, renamed over it, and
/// the directory fsynced. Parent directories are created. Only the mutation path and the
/// harness's own state (pending changes) call this.
pub(crate) fn atomic_replace(
    jail: &Jail,
    path: &RelPath,
    bytes: &[u8],
    mode: u32,
) -> std::io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let parent = path.parent();
    let to_io = |e: PathError| std::io::Error::other(e.to_string());
    jail.create_dir_all(&parent).map_err(to_io)?;
    let dir: Dir = jail.open_dir(&parent).map_err(to_io)?;
    let name = path.file_name();
    let tmp = format!(
        ".{name}.slmcode-{}-{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    let staged = (|| {
        let mut file = dir.open_with(&tmp, &options)?.into_std();
        file.write_all(bytes)?;
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        file.sync_all()?;
        dir.rename(&tmp, &dir, name)
    })();
    if let Err(e) = staged {
        let _ = dir.remove_file(&tmp);
        return Err(std::io::Error::new(
            e.kind(),
            format!("{e}; nothing was changed"),
        ));
    }
    // The rename is durable only once the directory entry is synced. The directory handle
    // from the jail may be O_PATH, so sync a readable handle of it.
    jail.open_file(&parent)
        .map_err(to_io)
        .and_then(|d| d.into_std().sync_all())
        .map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("the file was replaced, but its directory could not be synced: {e}"),
            )
        })
}

/// Where a file that does not exist yet would be: the deepest existing ancestor resolved
/// (symlinks followed through the jail), with the missing components appended.
fn resolve_new(jail: &Jail, path: &RelPath, verb: &str) -> Result<RelPath, ToolError> {
    let mut missing = vec![path.file_name().to_string()];
    let mut ancestor = path.parent();
    loop {
        match jail.resolve(&ancestor) {
            Ok(real) => {
                if !jail.metadata(&real)?.is_dir() {
                    return Err(ToolError::Refused(format!(
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

/// True when `path` lies under `.slmcode/` (first component compared case-insensitively)
/// outside `.slmcode/scratch/`.
pub fn is_control_path(path: &RelPath) -> bool {
    let comps: Vec<&str> = path.components().collect();
    match comps.first() {
        Some(first) if first.eq_ignore_ascii_case(CONTROL_DIR) => {
            !(comps.len() >= 3 && comps[1] == SCRATCH)
        }
        _ => false,
    }
}

fn boundary_refusal(shown: &RelPath, verb: &str) -> ToolError {
    ToolError::Refused(format!(
        "{verb} refused — {shown} is harness control state, not project source.\n\
         Files under .slmcode/ (hooks.json, config.yaml, pending/, checkpoints/) configure the\n\
         harness itself and are never edited by tools.\n\
         If you need scratch space, write under .slmcode/scratch/ instead."
    ))
}

fn check_boundary(given: &RelPath, path: &RelPath, verb: &str) -> Result<(), ToolError> {
    if is_control_path(path) {
        return Err(boundary_refusal(given, verb));
    }
    Ok(())
}

/// The identity check: no existing directory on the way to the file may *be* `.slmcode/`
/// (same device and inode) unless a nearer one is its `scratch/`. Catches aliases the path
/// text cannot show, such as a bind mount or a hard-linked directory.
fn check_identity(
    jail: &Jail,
    given: &RelPath,
    real: &RelPath,
    verb: &str,
) -> Result<(), ToolError> {
    let control = RelPath::root().join(CONTROL_DIR);
    let Ok(control_meta) = jail.metadata(&control) else {
        return Ok(());
    };
    let id = |m: &cap_std::fs::Metadata| (m.dev(), m.ino());
    let control_id = id(&control_meta);
    let scratch_id = jail.metadata(&control.join(SCRATCH)).ok().map(|m| id(&m));

    let scratch = control.join(SCRATCH);
    let mut dir = real.parent();
    loop {
        // `real` has every existing symlink resolved, so reaching the scratch directory by
        // name (even before it exists) means the file is inside it.
        if dir == scratch {
            return Ok(());
        }
        if let Ok(meta) = jail.metadata(&dir) {
            let here = id(&meta);
            if Some(here) == scratch_id {
                return Ok(());
            }
            if here == control_id {
                return Err(boundary_refusal(given, verb));
            }
        }
        if dir.is_root() {
            return Ok(());
        }
        dir = dir.parent();
    }
}

/// Windows device names (`nul`, `con`, `com1`…) with or without an extension: a repository
/// holding one cannot be checked out on Windows. `console.rs` is fine.
fn check_reserved(path: &RelPath, verb: &str) -> Result<(), ToolError> {
    const RESERVED: &[&str] = &[
        "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", "COM1", "COM2", "COM3", "COM4", "COM5",
        "COM6", "COM7", "COM8", "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7",
        "LPT8", "LPT9", "COM¹", "COM²", "COM³", "LPT¹", "LPT²", "LPT³",
    ];
    for comp in path.components() {
        let stem = comp.split('.').next().unwrap_or(comp).trim_end_matches(' ');
        if let Some(name) = RESERVED.iter().find(|r| r.eq_ignore_ascii_case(stem)) {
            return Err(ToolError::Refused(format!(
                "{verb} refused — \"{comp}\" uses the reserved device name {name} (like CON, PRN, AUX, NUL, COM1–9, LPT1–9), which Windows cannot open as a file. Choose another name, e.g. \"{}_file{}\".",
                stem.to_lowercase(),
                comp.get(stem.len()..).unwrap_or_default()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn rel(s: &str) -> RelPath {
        RelPath::parse(s, Path::new("/p")).unwrap()
    }

    #[test]
    fn control_paths() {
        assert!(is_control_path(&rel(".slmcode/hooks.json")));
        assert!(is_control_path(&rel(".SLMCODE/config.yaml")));
        assert!(is_control_path(&rel(".slmcode")));
        assert!(is_control_path(&rel(".slmcode/scratch")));
        assert!(is_control_path(&rel(".slmcode/Scratch/x")));
        assert!(!is_control_path(&rel(".slmcode/scratch/notes.md")));
        assert!(!is_control_path(&rel("src/.slmcode/x")));
        assert!(!is_control_path(&rel("slmcode/x")));
    }

    #[test]
    fn reserved_names() {
        for bad in [
            "nul",
            "NUL.txt",
            "src/con.rs",
            "com1",
            "lpt9.log",
            "aux.tar.gz",
        ] {
            assert!(check_reserved(&rel(bad), "write").is_err(), "{bad}");
        }
        for good in [
            "console.rs",
            "null.txt",
            "com10",
            "auxiliary.py",
            "src/connect.go",
        ] {
            assert!(check_reserved(&rel(good), "write").is_ok(), "{good}");
        }
        let msg = check_reserved(&rel("nul.txt"), "write")
            .unwrap_err()
            .to_string();
        assert!(msg.contains("\"nul_file.txt\""), "{msg}");
    }
}
