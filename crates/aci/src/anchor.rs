//! Directories written through: opened once, checked, then used for every create, rename and
//! unlink — never a path resolved again.
//!
//! Checking a path and then writing to it by path leaves a window: a command that swaps a
//! directory for a symlink to `.slmcode` between the two (a `renameat2(RENAME_EXCHANGE)` loop
//! does it thousands of times a second) lands the write in the control directory. Here the
//! directory is reached from the project root one component at a time without following
//! symlinks (`openat` with `O_NOFOLLOW`), each component's identity (device and inode) is
//! checked against the protected places, and the handle that passed is the one written
//! through. A component swapped for a symlink is refused; one swapped for another directory is
//! checked like any other.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_fs_ext::DirExt;
use cap_std::fs::{Dir, MetadataExt, OpenOptions};

use crate::boundary::{self, Boundary, Protected, CONTROL_DIR, SCRATCH};
use crate::path::{Jail, PathError, RelPath};

/// Who is writing, and so which protected place it may enter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writer {
    /// A tool: nothing protected but `.slmcode/scratch/`.
    Tool,
    /// The harness's own records under `.slmcode/` (never a git directory).
    Harness,
}

/// Why a directory could not be anchored.
#[derive(Debug, thiserror::Error)]
pub enum AnchorError {
    #[error("{1} is protected ({0:?})")]
    Protected(Boundary, RelPath),
    /// A component is not (or no longer) a plain directory: a symlink was swapped in, or a
    /// file stands there.
    #[error("{0} changed while it was being written to (it is not a plain directory now)")]
    Changed(RelPath),
    #[error(transparent)]
    Path(#[from] PathError),
    #[error("{0}: {1}")]
    Io(RelPath, std::io::Error),
}

/// A directory of the project, opened and checked: every operation is relative to it.
pub struct Anchored {
    dir: Dir,
    path: RelPath,
}

/// Opens `dir` (project-relative, as [`Jail::resolve`] gives it: no symlinks) from the root,
/// component by component without following symlinks, creating missing ones when `create`,
/// refusing any component that is a protected place `writer` may not enter.
pub fn open(
    jail: &Jail,
    protected: &Protected,
    dir: &RelPath,
    create: bool,
    writer: Writer,
) -> Result<Anchored, AnchorError> {
    let missing = if create {
        Missing::Create
    } else {
        Missing::Fail
    };
    walk(jail, protected, dir, missing, writer).map(|(a, _)| a)
}

/// Checks the part of `dir` that exists, the way [`open`] would: for refusing early, before
/// anything is read or staged.
pub fn check(
    jail: &Jail,
    protected: &Protected,
    dir: &RelPath,
    writer: Writer,
) -> Result<(), AnchorError> {
    walk(jail, protected, dir, Missing::Stop, writer).map(|_| ())
}

/// What to do at a component that does not exist.
#[derive(PartialEq)]
enum Missing {
    Create,
    Fail,
    /// Stop there: the rest is checked by name only.
    Stop,
}

/// The walk behind [`open`] and [`check`]. Returns the deepest directory reached and whether
/// it is `dir` itself.
fn walk(
    jail: &Jail,
    protected: &Protected,
    dir: &RelPath,
    missing: Missing,
    writer: Writer,
) -> Result<(Anchored, bool), AnchorError> {
    let create = missing == Missing::Create;
    let mut here = jail.open_dir(&RelPath::root())?;
    let mut path = RelPath::root();
    let into_scratch = writer == Writer::Tool && in_scratch(dir);
    for comp in dir.components() {
        path = path.join(comp);
        let next = match here.open_dir_nofollow(comp) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && create => {
                match here.create_dir(comp) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(AnchorError::Io(path, e)),
                }
                here.open_dir_nofollow(comp)
                    .map_err(|_| AnchorError::Changed(path.clone()))?
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && missing == Missing::Stop => {
                return Ok((
                    Anchored {
                        dir: here,
                        path: path.parent(),
                    },
                    false,
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(PathError::NotFound {
                    path: path.to_string(),
                }
                .into())
            }
            Err(_) => return Err(AnchorError::Changed(path)),
        };
        let meta = next
            .dir_metadata()
            .map_err(|e| AnchorError::Io(path.clone(), e))?;
        let id = (meta.dev(), meta.ino());
        if let Some(e) = protected.by_identity(id) {
            let allowed = match e.boundary {
                Boundary::Control => {
                    writer == Writer::Harness || into_scratch || protected.is_scratch(id)
                }
                Boundary::Git => false,
            };
            if !allowed {
                return Err(AnchorError::Protected(e.boundary, path));
            }
        }
        here = next;
    }
    // By name too: a place that did not exist when the project was looked at.
    if let Some(b) = boundary::classify(&path.join("x")) {
        let allowed = b == Boundary::Control && (writer == Writer::Harness || into_scratch);
        if !allowed {
            return Err(AnchorError::Protected(b, path));
        }
    }
    Ok((Anchored { dir: here, path }, true))
}

/// True when `dir` is `.slmcode/scratch` or beneath it.
fn in_scratch(dir: &RelPath) -> bool {
    let comps: Vec<&str> = dir.components().collect();
    comps.len() >= 2 && comps[0] == CONTROL_DIR && comps[1] == SCRATCH
}

impl Anchored {
    /// The directory, project-relative.
    pub fn path(&self) -> &RelPath {
        &self.path
    }

    /// The handle, for reads.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }

    /// Replaces (or creates) `name` with `bytes` atomically: a temp file beside it, written,
    /// fsynced, renamed over it, and the directory fsynced — all through this handle.
    pub fn replace(&self, name: &str, bytes: &[u8], mode: u32) -> std::io::Result<()> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let tmp = format!(
            ".{name}.slmcode-{}-{}.tmp",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        let staged = (|| {
            let mut file = self.dir.open_with(&tmp, &options)?.into_std();
            file.write_all(bytes)?;
            file.set_permissions(std::fs::Permissions::from_mode(mode))?;
            file.sync_all()?;
            self.dir.rename(&tmp, &self.dir, name)
        })();
        if let Err(e) = staged {
            let _ = self.dir.remove_file(&tmp);
            return Err(std::io::Error::new(
                e.kind(),
                format!("{e}; nothing was changed"),
            ));
        }
        self.sync().map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("the file was replaced, but its directory could not be synced: {e}"),
            )
        })
    }

    /// Makes the directory's entries durable (a readable handle of this same directory).
    pub fn sync(&self) -> std::io::Result<()> {
        self.dir.open(".")?.into_std().sync_all()
    }

    /// Appends to `name`, creating it with `mode`.
    pub fn append(&self, name: &str, bytes: &[u8], mode: u32) -> std::io::Result<()> {
        use cap_std::fs::OpenOptionsExt;
        let mut options = OpenOptions::new();
        options.append(true).create(true).mode(mode);
        let mut file = self.dir.open_with(name, &options)?;
        file.write_all(bytes)
    }

    /// Removes a file or symlink (the link, never its target).
    pub fn remove_file(&self, name: &str) -> std::io::Result<()> {
        self.dir.remove_file_or_symlink(name)
    }

    /// Removes a directory and everything in it, following no symlink.
    pub fn remove_dir_all(&self, name: &str) -> std::io::Result<()> {
        self.dir.remove_dir_all(name)
    }

    /// Creates a symlink `name` pointing at `target` (its text, as given).
    pub fn symlink(&self, target: &str, name: &str) -> std::io::Result<()> {
        DirExt::symlink(&self.dir, target, name)
    }

    /// Moves `name` here to `to_name` in `to`.
    pub fn rename(&self, name: &str, to: &Anchored, to_name: &str) -> std::io::Result<()> {
        self.dir.rename(name, &to.dir, to_name)
    }

    /// What `name` is, without following a symlink.
    pub fn symlink_metadata(&self, name: &str) -> std::io::Result<cap_std::fs::Metadata> {
        self.dir.symlink_metadata(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(s: &str) -> RelPath {
        RelPath::parse(s, std::path::Path::new("/p")).unwrap()
    }

    #[test]
    fn protected_places_and_symlinks_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in ["src", ".slmcode/scratch", ".git", "real"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::os::unix::fs::symlink(".slmcode", root.join("ctl")).unwrap();
        std::os::unix::fs::symlink("real", root.join("link")).unwrap();
        let jail = Jail::open(root).unwrap();
        let p = Protected::discover(&jail);
        assert!(open(&jail, &p, &rel("src"), false, Writer::Tool).is_ok());
        assert!(open(&jail, &p, &rel("src/new/deeper"), true, Writer::Tool).is_ok());
        assert!(root.join("src/new/deeper").is_dir());
        assert!(open(&jail, &p, &rel(".slmcode/scratch/x"), true, Writer::Tool).is_ok());
        for (path, writer) in [
            (".slmcode", Writer::Tool),
            (".slmcode/pending", Writer::Tool),
            (".git", Writer::Tool),
            (".git/hooks", Writer::Harness),
        ] {
            assert!(
                matches!(
                    open(&jail, &p, &rel(path), true, writer),
                    Err(AnchorError::Protected(..))
                ),
                "{path}"
            );
        }
        assert!(!root.join(".git/hooks").exists());
        assert!(open(&jail, &p, &rel(".slmcode/pending"), true, Writer::Harness).is_ok());
        // Symlinks are not followed, wherever they lead.
        assert!(matches!(
            open(&jail, &p, &rel("ctl"), false, Writer::Tool),
            Err(AnchorError::Changed(_))
        ));
        assert!(matches!(
            open(&jail, &p, &rel("link"), false, Writer::Tool),
            Err(AnchorError::Changed(_))
        ));
    }
}
