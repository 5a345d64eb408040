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

use std::io::{ErrorKind, Read, Seek, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_fs_ext::DirExt;
use cap_std::fs::{Dir, OpenOptions};

use crate::boundary::{self, Boundary, Protected, CONTROL_DIR, SCRATCH};
use crate::path::{Jail, PathError, RawPath, RelPath};
use crate::platform;

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
    /// For messages.
    path: RelPath,
    /// The names it was reached by.
    raw: RawPath,
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
    walk(jail, protected, &RawPath::from_rel(dir), missing, writer).map(|(a, _)| a)
}

/// [`open`] for a directory named by its bytes (a name that is not UTF-8, read from a listing
/// or a checkpoint).
pub fn open_raw(
    jail: &Jail,
    protected: &Protected,
    dir: &RawPath,
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
    walk(
        jail,
        protected,
        &RawPath::from_rel(dir),
        Missing::Stop,
        writer,
    )
    .map(|_| ())
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
    dir: &RawPath,
    missing: Missing,
    writer: Writer,
) -> Result<(Anchored, bool), AnchorError> {
    let create = missing == Missing::Create;
    let mut here = jail.open_dir(&RelPath::root())?;
    let mut path = RelPath::root();
    let mut raw = RawPath::from_rel(&path);
    let into_scratch = writer == Writer::Tool && in_scratch(&dir.display());
    for comp in dir.components() {
        path = path.join(&comp.to_string_lossy());
        raw = raw.join(comp);
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
                        raw: raw.parent(),
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
            // A link that leads out of the project is refused for what it is, whenever it was
            // put there; anything else in the way of a plain directory is a change under us.
            Err(_) => {
                return Err(match jail.metadata(&path) {
                    Err(e @ PathError::Escapes { .. }) => e.into(),
                    _ => AnchorError::Changed(path),
                })
            }
        };
        let meta = next
            .dir_metadata()
            .map_err(|e| AnchorError::Io(path.clone(), e))?;
        let Some(id) = platform::fs::id(&meta) else {
            return Err(AnchorError::Io(
                path.clone(),
                std::io::Error::other("this file system gives no directory identity"),
            ));
        };
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
    Ok((
        Anchored {
            dir: here,
            path,
            raw,
        },
        true,
    ))
}

/// Where writes stage their temp files: `.slmcode/tmp/`, inside the project (so usually on
/// its filesystem, where a rename into place is atomic) but out of its tree and out of `git
/// status`.
pub use crate::boundary::layout::STAGING as STAGING_DIR;

/// How a temp file beside its target starts (when there is no staging directory, or it is on
/// another filesystem): `.slmcode-<pid>-<n>.tmp`.
pub const BESIDE_PREFIX: &str = ".slmcode-";

/// What a record of a temp beside its target is called in the staging directory:
/// `<pid>-<n>.tmp.beside`.
pub const BESIDE_RECORD: &str = ".beside";

/// The staging directory, created (with a `.gitignore` that ignores everything in it) when
/// missing. `None` when it cannot be had — `.slmcode` is not a plain directory, say — and
/// then writes stage beside their targets as before.
pub fn staging(jail: &Jail, protected: &Protected) -> Option<Anchored> {
    let path = RelPath::root().join(CONTROL_DIR).join(STAGING_DIR);
    let dir = open(jail, protected, &path, true, Writer::Harness).ok()?;
    if dir.dir.symlink_metadata(".gitignore").is_err() {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        if let Ok(mut file) = dir.dir.open_with(".gitignore", &options) {
            let _ = file.write_all(b"# slmcode: files being written; never commit them\n*\n");
        }
    }
    Some(dir)
}

/// A fresh temp name: the process and a counter, so that a leftover says whose it was.
fn temp_name(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!(
        "{prefix}{}-{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// An error of a write that did not happen, saying so.
fn unchanged(e: &std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{e}; nothing was changed"))
}

/// Writes `content` to a new file `tmp` in `dir` with `mode`, fsynced, holding its lock (see
/// [`crate::leftovers`]); removed again on failure. Returns the file (the lock goes with it)
/// and its length.
fn stage_in(
    dir: &Dir,
    tmp: &str,
    content: &mut dyn Read,
    mode: u32,
) -> std::io::Result<(std::fs::File, u64)> {
    let mut options = OpenOptions::new();
    // Created with the final mode (less the umask), so private content is never readable by
    // others while it is written; the mode is then set exactly.
    options.read(true).write(true).create_new(true);
    platform::fs::create_with_mode(&mut options, mode);
    let staged = (|| {
        let mut file = dir.open_with(tmp, &options)?.into_std();
        // Held while the temp is written and renamed (the file is kept open until then): a
        // later start sweeps a temp only when nobody holds it (`leftovers`). Best effort.
        let _ = file.try_lock();
        let len = std::io::copy(content, &mut file)?;
        platform::fs::set_mode(&file, mode)?;
        file.sync_all()?;
        Ok((file, len))
    })();
    if staged.is_err() {
        let _ = dir.remove_file(tmp);
    }
    staged
}

/// Makes a directory's entries durable (a readable handle of this same directory).
fn sync_dir(dir: &Dir) -> std::io::Result<()> {
    dir.open(".")?.into_std().sync_all()
}

/// The durable replace for a directory reached without the jail (the user's own files): a
/// temp beside `name`, fsynced, renamed over it, the directory fsynced. Returns the bytes
/// written.
pub fn replace_in(
    dir: &Dir,
    name: impl AsRef<Path>,
    content: &mut dyn Read,
    mode: u32,
) -> std::io::Result<u64> {
    let tmp = temp_name(BESIDE_PREFIX);
    let (_, len) = stage_in(dir, &tmp, content, mode).map_err(|e| unchanged(&e))?;
    if let Err(e) = dir.rename(&tmp, dir, name.as_ref()) {
        let _ = dir.remove_file(&tmp);
        return Err(unchanged(&e));
    }
    sync_dir(dir).map_err(|e| {
        std::io::Error::new(
            e.kind(),
            format!("the file was replaced, but its directory could not be synced: {e}"),
        )
    })?;
    Ok(len)
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

    /// The names it was reached by.
    pub fn raw(&self) -> &RawPath {
        &self.raw
    }

    /// [`Anchored::replace_from`] for content in memory.
    pub fn replace(
        &self,
        name: impl AsRef<Path>,
        bytes: &[u8],
        mode: u32,
        staging: Option<&Anchored>,
    ) -> std::io::Result<()> {
        self.replace_from(name, &mut &bytes[..], mode, staging)
            .map(|_| ())
    }

    /// Replaces (or creates) `name` with what `content` yields, atomically, streamed (never
    /// held in memory whole): a temp file in `staging` (see [`staging`]; beside the target
    /// when there is none), written, fsynced, renamed over `name`, and this directory fsynced
    /// — all through handles. Returns the bytes written.
    ///
    /// When `staging` is on another filesystem than this directory (a mount inside the
    /// project), the staged copy is copied once more beside the target and renamed from there;
    /// a record of that temp's name in `staging` lets a later start remove it if the process
    /// dies in between.
    pub fn replace_from(
        &self,
        name: impl AsRef<Path>,
        content: &mut dyn Read,
        mode: u32,
        staging: Option<&Anchored>,
    ) -> std::io::Result<u64> {
        let name = name.as_ref();
        let (stage_dir, tmp) = match staging {
            Some(s) => (s, temp_name("")),
            None => (self, temp_name(BESIDE_PREFIX)),
        };
        let (mut staged, len) = stage_dir
            .stage(&tmp, content, mode)
            .map_err(|e| unchanged(&e))?;
        match stage_dir.dir.rename(&tmp, &self.dir, name) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::CrossesDevices && staging.is_some() => {
                let beside = self.replace_beside(name, &mut staged, mode, stage_dir, &tmp);
                let _ = stage_dir.dir.remove_file(&tmp);
                beside.map_err(|e| unchanged(&e))?;
            }
            Err(e) => {
                let _ = stage_dir.dir.remove_file(&tmp);
                return Err(unchanged(&e));
            }
        }
        self.sync().map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("the file was replaced, but its directory could not be synced: {e}"),
            )
        })?;
        Ok(len)
    }

    /// Writes `content` to a new file `tmp` here with `mode`, fsynced; removed again on
    /// failure. Returns the file (for a second copy) and its length.
    fn stage(
        &self,
        tmp: &str,
        content: &mut dyn Read,
        mode: u32,
    ) -> std::io::Result<(std::fs::File, u64)> {
        stage_in(&self.dir, tmp, content, mode)
    }

    /// The cross-filesystem case of [`Anchored::replace_from`]: copies the staged file to a
    /// temp beside `name` and renames it over, with the temp's name recorded in `staging`
    /// meanwhile.
    fn replace_beside(
        &self,
        name: &Path,
        staged: &mut std::fs::File,
        mode: u32,
        staging: &Anchored,
        staged_name: &str,
    ) -> std::io::Result<()> {
        let tmp = temp_name(BESIDE_PREFIX);
        let record = format!("{staged_name}{BESIDE_RECORD}");
        let target = self.raw.join(std::ffi::OsStr::new(&tmp)).to_bytes();
        staging.dir.write(&record, target)?;
        staged.seek(std::io::SeekFrom::Start(0))?;
        let result = self.stage(&tmp, staged, mode).and_then(|_| {
            self.dir.rename(&tmp, &self.dir, name).inspect_err(|_| {
                let _ = self.dir.remove_file(&tmp);
            })
        });
        let _ = staging.dir.remove_file(&record);
        result
    }

    /// Makes the directory's entries durable (a readable handle of this same directory).
    pub fn sync(&self) -> std::io::Result<()> {
        sync_dir(&self.dir)
    }

    /// Appends to `name`, creating it with `mode`.
    pub fn append(&self, name: impl AsRef<Path>, bytes: &[u8], mode: u32) -> std::io::Result<()> {
        let mut options = OpenOptions::new();
        options.append(true).create(true);
        platform::fs::create_with_mode(&mut options, mode);
        let mut file = self.dir.open_with(name, &options)?;
        file.write_all(bytes)
    }

    /// Removes a file or symlink (the link, never its target).
    pub fn remove_file(&self, name: impl AsRef<Path>) -> std::io::Result<()> {
        self.dir.remove_file_or_symlink(name)
    }

    /// Removes a directory and everything in it, following no symlink.
    pub fn remove_dir_all(&self, name: impl AsRef<Path>) -> std::io::Result<()> {
        self.dir.remove_dir_all(name)
    }

    /// Creates a symlink `name` pointing at `target` (its text, as given).
    pub fn symlink(&self, target: impl AsRef<Path>, name: impl AsRef<Path>) -> std::io::Result<()> {
        DirExt::symlink(&self.dir, target, name)
    }

    /// Moves `name` here to `to_name` in `to`.
    pub fn rename(
        &self,
        name: impl AsRef<Path>,
        to: &Anchored,
        to_name: impl AsRef<Path>,
    ) -> std::io::Result<()> {
        self.dir.rename(name, &to.dir, to_name)
    }

    /// What `name` is, without following a symlink.
    pub fn symlink_metadata(
        &self,
        name: impl AsRef<Path>,
    ) -> std::io::Result<cap_std::fs::Metadata> {
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
