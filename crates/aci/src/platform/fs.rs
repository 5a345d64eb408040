//! What a file is beyond its bytes, on each OS: the jail, the boundary, the mutation path and
//! checkpoints ask here for a file's identity, links, permission bits and kind, and for opens
//! that never block or follow a last symlink.
//!
//! Unix (Linux, macOS, the BSDs) has all of it, and is what CI tests. Windows has no permission
//! bits, FIFOs or sockets among files, and knows a file's identity and links only through an
//! open handle; the functions say what they do there, and none of it is exercised in CI.

use std::ffi::OsString;
use std::io;
use std::path::Path;

/// What identifies a file or directory whatever its name: (device, inode), or on Windows
/// (volume serial number, file index).
pub type FileId = (u64, u64);

/// What tells a file changed without reading it: inode, size, modification and change times
/// (seconds and nanoseconds) — git's own stat check.
pub type Stamp = (u64, u64, i64, i64, i64, i64);

pub use imp::*;

#[cfg(unix)]
mod imp {
    use super::*;
    use cap_std::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::{DirBuilderExt, MetadataExt as _, PermissionsExt};

    /// The identity of what `meta` (from an open handle, or a path) describes.
    pub fn id(meta: &cap_std::fs::Metadata) -> Option<FileId> {
        Some((meta.dev(), meta.ino()))
    }

    /// The identity of what `path` names, whose metadata the caller has read already (here
    /// it holds the identity; no further I/O).
    pub fn id_of_path(_path: &Path, meta: &std::fs::Metadata) -> io::Result<FileId> {
        Ok((std::os::unix::fs::MetadataExt::dev(meta), meta.ino()))
    }

    /// How many names the file has; `None` where it cannot be known.
    pub fn links(meta: &cap_std::fs::Metadata) -> Option<u64> {
        Some(meta.nlink())
    }

    /// How many names the file at `path` has, whose metadata the caller has read already (here
    /// it holds the count; no further I/O).
    pub fn links_of_path(_path: &Path, meta: &std::fs::Metadata) -> Option<u64> {
        Some(meta.nlink())
    }

    /// The permission bits (`0o7777`), kept across a rewrite and in checkpoints.
    pub fn mode(meta: &cap_std::fs::Metadata) -> u32 {
        meta.mode() & 0o7777
    }

    /// Creates files with `mode` (less the umask).
    pub fn create_with_mode(options: &mut cap_std::fs::OpenOptions, mode: u32) {
        options.mode(mode);
    }

    /// Sets the permission bits exactly.
    pub fn set_mode(file: &std::fs::File, mode: u32) -> io::Result<()> {
        file.set_permissions(std::fs::Permissions::from_mode(mode))
    }

    /// A read that cannot hang on a FIFO or take a terminal.
    pub fn never_block(options: &mut cap_std::fs::OpenOptions) {
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }

    /// As [`never_block`], and a symlink as the last component is refused, not followed.
    pub fn never_block_or_follow(options: &mut cap_std::fs::OpenOptions) {
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY);
    }

    /// Whether an open failed on a symlink it was told not to follow, or on a loop of them.
    pub fn is_symlink_loop(e: &io::Error) -> bool {
        e.raw_os_error() == Some(libc::ELOOP)
    }

    /// What a file that is not regular, a directory or a symlink is, for a refusal.
    pub fn special_kind(kind: &cap_std::fs::FileType) -> Option<&'static str> {
        if kind.is_char_device() {
            Some("a character device")
        } else if kind.is_block_device() {
            Some("a block device")
        } else if kind.is_fifo() {
            Some("a FIFO (named pipe)")
        } else if kind.is_socket() {
            Some("a socket")
        } else {
            None
        }
    }

    /// The stamp of a file's metadata.
    pub fn stamp(m: &std::fs::Metadata) -> Stamp {
        (
            m.ino(),
            m.size(),
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec(),
        )
    }

    /// A file name from the bytes it was saved as (any bytes are a name here).
    pub fn name_from_bytes(bytes: &[u8]) -> Option<OsString> {
        Some(std::ffi::OsStr::from_bytes(bytes).to_os_string())
    }

    /// Makes `path` (and its parents) a directory only this user may enter (0700); one that
    /// exists is left as it is — check it with [`is_private_dir`].
    pub fn create_private_dir(path: &Path) -> io::Result<()> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(path)
    }

    /// A new directory in `base` with a random name after `prefix`, mode 0700, never one that
    /// existed; the caller removes it.
    pub fn create_private_temp_dir(base: &Path, prefix: &str) -> io::Result<std::path::PathBuf> {
        tempfile::Builder::new()
            .prefix(prefix)
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(base)
            .map(tempfile::TempDir::keep)
    }

    /// Whether `meta` (not following a symlink) is a directory of this user that nobody else
    /// may read, write or enter: nobody who can write `/tmp` can plant or watch what is in it.
    pub fn is_private_dir(meta: &std::fs::Metadata) -> bool {
        meta.is_dir() && meta.uid() == crate::platform::host::user_id() && meta.mode() & 0o077 == 0
    }
}

#[cfg(not(unix))]
mod imp {
    //! Windows: identity and links come from an open handle; there are no permission bits but
    //! read-only, no FIFOs and no sockets among files, and every name is Unicode.
    use super::*;
    use cap_fs_ext::MetadataExt;

    /// Opens `path` for its metadata by handle (directories too).
    fn handle_metadata(path: &Path) -> io::Result<cap_std::fs::Metadata> {
        use std::os::windows::fs::OpenOptionsExt;
        // FILE_FLAG_BACKUP_SEMANTICS: the flag that lets a directory be opened.
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(0x0200_0000)
            .open(path)?;
        cap_std::fs::Metadata::from_file(&file)
    }

    /// The identity of what `meta` describes: known only for metadata read from a handle
    /// (`File::metadata`, `Dir::dir_metadata`), which is how every caller reads it. cap-fs-ext
    /// panics for metadata read by path; that panic is caught here and becomes `None`.
    pub fn id(meta: &cap_std::fs::Metadata) -> Option<FileId> {
        std::panic::catch_unwind(|| (meta.dev(), meta.ino())).ok()
    }

    /// The identity of what `path` names, through a handle (std's metadata lacks it).
    pub fn id_of_path(path: &Path, _meta: &std::fs::Metadata) -> io::Result<FileId> {
        let meta = handle_metadata(path)?;
        id(&meta).ok_or_else(|| io::Error::other("no file identity"))
    }

    /// Not known from path metadata here: the caller assumes the worst.
    pub fn links(_meta: &cap_std::fs::Metadata) -> Option<u64> {
        None
    }

    /// How many names the file at `path` has, through a handle (cap-fs-ext's panic without
    /// one is caught, as in [`id`]).
    pub fn links_of_path(path: &Path, _meta: &std::fs::Metadata) -> Option<u64> {
        let meta = handle_metadata(path).ok()?;
        std::panic::catch_unwind(|| meta.nlink()).ok()
    }

    /// Read-only files read as `0o444`, others as `0o644`.
    pub fn mode(meta: &cap_std::fs::Metadata) -> u32 {
        if meta.permissions().readonly() {
            0o444
        } else {
            0o644
        }
    }

    /// No modes at creation here.
    pub fn create_with_mode(_options: &mut cap_std::fs::OpenOptions, _mode: u32) {}

    /// Only the read-only bit exists: set when nobody may write.
    pub fn set_mode(file: &std::fs::File, mode: u32) -> io::Result<()> {
        let mut p = file.metadata()?.permissions();
        p.set_readonly(mode & 0o222 == 0);
        file.set_permissions(p)
    }

    /// Reads do not block on Windows files.
    pub fn never_block(_options: &mut cap_std::fs::OpenOptions) {}

    /// A symlink as the last component is not followed.
    pub fn never_block_or_follow(options: &mut cap_std::fs::OpenOptions) {
        use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
        options.follow(FollowSymlinks::No);
    }

    /// Windows reports a symlink loop with its own code (ERROR_CANT_RESOLVE_FILENAME, 1921).
    pub fn is_symlink_loop(e: &io::Error) -> bool {
        e.raw_os_error() == Some(1921)
    }

    /// No special files among a Windows directory's entries.
    pub fn special_kind(_kind: &cap_std::fs::FileType) -> Option<&'static str> {
        None
    }

    /// Size and times; no inode without a handle (0), creation time for the change time.
    pub fn stamp(m: &std::fs::Metadata) -> Stamp {
        let split = |t: io::Result<std::time::SystemTime>| {
            t.ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or((0, 0), |d| {
                    (d.as_secs() as i64, i64::from(d.subsec_nanos()))
                })
        };
        let (ms, mn) = split(m.modified());
        let (cs, cn) = split(m.created());
        (0, m.len(), ms, mn, cs, cn)
    }

    /// A file name from its saved bytes; only Unicode names exist here.
    pub fn name_from_bytes(bytes: &[u8]) -> Option<OsString> {
        String::from_utf8(bytes.to_vec()).ok().map(OsString::from)
    }

    /// A directory under the user's own profile is private already.
    pub fn create_private_dir(path: &Path) -> io::Result<()> {
        std::fs::create_dir_all(path)
    }

    /// A new directory in `base` with a random name after `prefix`, never one that existed.
    pub fn create_private_temp_dir(base: &Path, prefix: &str) -> io::Result<std::path::PathBuf> {
        tempfile::Builder::new()
            .prefix(prefix)
            .tempdir_in(base)
            .map(tempfile::TempDir::keep)
    }

    /// A directory is all that can be checked here.
    pub fn is_private_dir(meta: &std::fs::Metadata) -> bool {
        meta.is_dir()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_are_read_and_set_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let root =
            cap_std::fs::Dir::open_ambient_dir(dir.path(), cap_std::ambient_authority()).unwrap();
        let mut options = cap_std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        create_with_mode(&mut options, 0o600);
        let file = root.open_with("a", &options).unwrap().into_std();
        set_mode(&file, 0o751).unwrap();
        assert_eq!(mode(&root.metadata("a").unwrap()), 0o751);
    }

    #[test]
    fn identity_is_the_same_through_a_handle_and_a_path() {
        let dir = tempfile::tempdir().unwrap();
        let root =
            cap_std::fs::Dir::open_ambient_dir(dir.path(), cap_std::ambient_authority()).unwrap();
        root.create_dir("d").unwrap();
        let sub = root.open_dir("d").unwrap();
        let by_handle = id(&sub.dir_metadata().unwrap()).unwrap();
        let of = |p: &Path| id_of_path(p, &std::fs::metadata(p).unwrap()).unwrap();
        assert_eq!(of(&dir.path().join("d")), by_handle);
        assert_ne!(of(dir.path()), by_handle);
    }

    #[test]
    fn a_private_dir_is_made_private_and_a_shared_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let private = dir.path().join("a/b");
        create_private_dir(&private).unwrap();
        assert!(is_private_dir(
            &std::fs::symlink_metadata(&private).unwrap()
        ));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o755)).unwrap();
            assert!(!is_private_dir(
                &std::fs::symlink_metadata(&private).unwrap()
            ));
        }
    }
}
