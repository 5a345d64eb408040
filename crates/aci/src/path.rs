//! The jail: every path a tool touches passes through here.
//!
//! Two layers. [`RelPath::parse`] is the lexical check on the text a model sent (no `..`, no
//! absolute paths, no NUL, no backslashes, no drive letters) and says what to send instead.
//! [`Jail`] then resolves the path beneath the workspace root with `cap-std`, whose opens go
//! through `openat2(RESOLVE_BENEATH)`: a symlink that points outside — even one swapped in
//! between a check and the open — cannot lead out of the root.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, File, Metadata, OpenOptions, ReadDir};

/// Why a path argument was refused. Each message names what to send instead, because the
/// reader is a small model that will retry with exactly what we suggest.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    #[error("path is empty. Send a path relative to the project root, e.g. \"src/main.rs\".")]
    Empty,
    #[error("path contains a NUL byte, which no file name can hold. Send the plain relative path, e.g. \"src/main.rs\".")]
    Nul,
    #[error(
        "backslashes are refused in paths: \"{given}\". Use forward slashes: \"{suggestion}\"."
    )]
    Backslash { given: String, suggestion: String },
    #[error("drive letters are refused: \"{given}\". Paths are relative to the project root with / separators, e.g. \"src/main.rs\".")]
    DriveLetter { given: String },
    #[error("absolute paths are refused: \"{given}\". Paths are relative to the project root: send \"{suggestion}\".")]
    AbsoluteInside { given: String, suggestion: String },
    #[error("absolute paths are refused: \"{given}\" — it is outside the project. Send a path relative to the project root, e.g. \"src/main.rs\".")]
    Absolute { given: String },
    #[error("\"~\" paths are refused: \"{given}\". Only files inside the project can be reached; send a path relative to the project root.")]
    Home { given: String },
    #[error("\"..\" is refused in paths: \"{given}\". Paths stay inside the project; send \"{suggestion}\".")]
    ParentInside { given: String, suggestion: String },
    #[error("\"..\" is refused in paths: \"{given}\" would leave the project. Send a path relative to the project root, e.g. \"src/main.rs\".")]
    Parent { given: String },
    #[error("{path} leads outside the project{}; only paths inside the project can be used. Work on files inside the project instead.", target.as_ref().map(|t| format!(" (it resolves to {})", t.display())).unwrap_or_default())]
    Escapes {
        path: String,
        target: Option<PathBuf>,
    },
    #[error("no such file or directory: {path}")]
    NotFound { path: String },
    #[error(
        "{path}: too many levels of symbolic links (a symlink loop). Use the real path instead."
    )]
    Loop { path: String },
    #[error("{path}: permission denied.")]
    PermissionDenied { path: String },
    #[error("{path}: {source}")]
    Io { path: String, source: io::Error },
}

/// A path that passed the lexical checks, normalized to `a/b/c` form (no `./`, no doubled or
/// trailing slashes). The root itself is the empty path and displays as `.`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelPath(String);

impl RelPath {
    /// The project root.
    pub fn root() -> RelPath {
        RelPath(String::new())
    }

    /// Checks the text a caller sent. `root` lets an absolute path that lies inside the project
    /// be answered with its relative form, which a model can resend verbatim.
    ///
    /// ```
    /// use std::path::Path;
    /// use slmcode_aci::path::RelPath;
    ///
    /// let root = Path::new("/work/proj");
    /// assert_eq!(RelPath::parse("./src//main.rs", root).unwrap().as_str(), "src/main.rs");
    /// let refusal = RelPath::parse("/work/proj/src/main.rs", root).unwrap_err().to_string();
    /// assert!(refusal.contains(r#"send "src/main.rs""#));
    /// assert!(RelPath::parse("../etc/passwd", root).is_err());
    /// ```
    pub fn parse(given: &str, root: &Path) -> Result<RelPath, PathError> {
        if given.contains('\0') {
            return Err(PathError::Nul);
        }
        if given.trim().is_empty() {
            return Err(PathError::Empty);
        }
        let bytes = given.as_bytes();
        if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
            return Err(PathError::DriveLetter {
                given: given.to_string(),
            });
        }
        if given.contains('\\') {
            let suggestion = given.replace('\\', "/");
            // Suggest the forward-slash form only when it would itself pass.
            return match RelPath::parse(&suggestion, root) {
                Ok(p) => Err(PathError::Backslash {
                    given: given.to_string(),
                    suggestion: p.to_string(),
                }),
                Err(e) => Err(e),
            };
        }
        if given == "~" || given.starts_with("~/") {
            return Err(PathError::Home {
                given: given.to_string(),
            });
        }
        if given.starts_with('/') {
            let abs = Path::new(given);
            let inside = abs
                .strip_prefix(root)
                .ok()
                .map(Path::to_path_buf)
                .or_else(|| {
                    // The caller may have sent the canonical form of the root.
                    let canon = root.canonicalize().ok()?;
                    abs.strip_prefix(canon).ok().map(Path::to_path_buf)
                })
                .map(|p| p.to_string_lossy().into_owned());
            return match inside {
                Some(rel) => {
                    let suggestion = match normalize(&rel) {
                        Ok(p) if !p.is_empty() => p,
                        _ => ".".to_string(),
                    };
                    Err(PathError::AbsoluteInside {
                        given: given.to_string(),
                        suggestion,
                    })
                }
                None => Err(PathError::Absolute {
                    given: given.to_string(),
                }),
            };
        }
        match normalize(given) {
            Ok(p) => Ok(RelPath(p)),
            Err(Escape::Stays(suggestion)) => Err(PathError::ParentInside {
                given: given.to_string(),
                suggestion: if suggestion.is_empty() {
                    ".".to_string()
                } else {
                    suggestion
                },
            }),
            Err(Escape::Leaves) => Err(PathError::Parent {
                given: given.to_string(),
            }),
        }
    }

    /// The normalized text, `""` for the root.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The path for filesystem calls relative to the root; the root is `.`.
    pub fn as_path(&self) -> &Path {
        if self.0.is_empty() {
            Path::new(".")
        } else {
            Path::new(&self.0)
        }
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// The last component, or `.` for the root.
    pub fn file_name(&self) -> &str {
        self.0
            .rsplit('/')
            .next()
            .filter(|s| !s.is_empty())
            .unwrap_or(".")
    }

    /// The parent directory; the root's parent is the root.
    pub fn parent(&self) -> RelPath {
        match self.0.rfind('/') {
            Some(i) => RelPath(self.0[..i].to_string()),
            None => RelPath::root(),
        }
    }

    /// A child path. `name` must be one component; callers pass directory-entry names.
    pub fn join(&self, name: &str) -> RelPath {
        if self.0.is_empty() {
            RelPath(name.to_string())
        } else {
            RelPath(format!("{}/{}", self.0, name))
        }
    }

    /// Builds a RelPath from a path known to be relative and clean (from a directory walk
    /// beneath the root). Returns `None` if it is not.
    pub fn from_walk(path: &Path) -> Option<RelPath> {
        let text = path.to_str()?;
        match normalize(text) {
            Ok(p) if !text.starts_with('/') => Some(RelPath(p)),
            _ => None,
        }
    }

    /// The components, in order.
    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.0.split('/').filter(|c| !c.is_empty())
    }

    /// True when some component starts with a dot (`.github/ci.yml`), which turns on hidden
    /// files for walks that would otherwise skip them.
    pub fn has_hidden_component(&self) -> bool {
        self.0.split('/').any(|c| c.starts_with('.'))
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            f.write_str(".")
        } else {
            f.write_str(&self.0)
        }
    }
}

/// A project-relative path kept as the bytes the filesystem gave, one name per component.
///
/// A name need not be UTF-8, which a [`RelPath`] cannot hold; worse, its lossy form can be a
/// real name too (`a\xff` and `a\u{FFFD}`), so two files would share one path. What is saved to
/// be put back — a recursive delete's files, a checkpoint's paths, a symlink's target — is kept
/// as a RawPath. Built from a RelPath or from a directory listing beneath the root; read back
/// from disk only through [`RawPath::from_bytes`], which checks it like a model's path.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RawPath(Vec<OsString>);

impl RawPath {
    /// The same path, as names.
    pub fn from_rel(path: &RelPath) -> RawPath {
        RawPath(path.components().map(OsString::from).collect())
    }

    /// A child path. `name` is one directory-entry name (no `/`).
    pub fn join(&self, name: &OsStr) -> RawPath {
        let mut names = self.0.clone();
        names.push(name.to_os_string());
        RawPath(names)
    }

    /// The parent directory; the root's parent is the root.
    pub fn parent(&self) -> RawPath {
        RawPath(self.0[..self.0.len().saturating_sub(1)].to_vec())
    }

    /// The last name; `.` for the root.
    pub fn file_name(&self) -> &OsStr {
        self.0.last().map_or(OsStr::new("."), OsString::as_os_str)
    }

    /// The names, in order.
    pub fn components(&self) -> impl Iterator<Item = &OsStr> {
        self.0.iter().map(OsString::as_os_str)
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// The path as a RelPath when every name is UTF-8.
    pub fn to_rel(&self) -> Option<RelPath> {
        let mut out = RelPath::root();
        for name in &self.0 {
            out = out.join(name.to_str()?);
        }
        Some(out)
    }

    /// For messages, and for judging by name (`.git`, `.slmcode` are ASCII, so no lossy name
    /// is ever mistaken for one): invalid bytes shown as U+FFFD.
    pub fn display(&self) -> RelPath {
        let mut out = RelPath::root();
        for name in &self.0 {
            out = out.join(&name.to_string_lossy());
        }
        out
    }

    /// The bytes, names joined with `/`, for saving.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, name) in self.0.iter().enumerate() {
            if i > 0 {
                out.push(b'/');
            }
            out.extend_from_slice(name.as_encoded_bytes());
        }
        out
    }

    /// Reads back what [`RawPath::to_bytes`] saved, refusing anything that is not a plain
    /// relative path: no NUL, no empty, `.` or `..` name, not absolute.
    pub fn from_bytes(bytes: &[u8]) -> Result<RawPath, PathError> {
        if bytes.contains(&0) {
            return Err(PathError::Nul);
        }
        if bytes.is_empty() {
            return Err(PathError::Empty);
        }
        let shown = || String::from_utf8_lossy(bytes).into_owned();
        if bytes[0] == b'/' {
            return Err(PathError::Absolute { given: shown() });
        }
        let mut names = Vec::new();
        for name in bytes.split(|b| *b == b'/') {
            match name {
                b"" | b"." => return Err(PathError::Empty),
                b".." => return Err(PathError::Parent { given: shown() }),
                _ => names.push(os_name(name)?),
            }
        }
        Ok(RawPath(names))
    }
}

/// One name from its saved bytes; names that are not UTF-8 arise only on Unix.
fn os_name(bytes: &[u8]) -> Result<OsString, PathError> {
    crate::platform::fs::name_from_bytes(bytes).ok_or(PathError::Empty)
}

enum Escape {
    /// `..` present but the path stays inside; carries the resolved form.
    Stays(String),
    /// `..` climbs above the root.
    Leaves,
}

/// Lexical normalization: drops `.` and empty components; any `..` is an error, carrying what
/// the path would resolve to when it stays inside.
fn normalize(text: &str) -> Result<String, Escape> {
    let mut parts: Vec<&str> = Vec::new();
    let mut saw_parent = false;
    let mut leaves = false;
    for comp in text.split('/') {
        match comp {
            "" | "." => {}
            ".." => {
                saw_parent = true;
                if parts.pop().is_none() {
                    leaves = true;
                }
            }
            c => parts.push(c),
        }
    }
    if leaves {
        Err(Escape::Leaves)
    } else if saw_parent {
        Err(Escape::Stays(parts.join("/")))
    } else {
        Ok(parts.join("/"))
    }
}

/// The workspace root, opened once as a capability. Every open, stat and directory read of a
/// tool goes through here so no tool can step outside the root.
#[derive(Debug)]
pub struct Jail {
    dir: Dir,
    root: PathBuf,
}

impl Jail {
    /// Opens `root` (which must be a directory) as the jail.
    pub fn open(root: &Path) -> io::Result<Jail> {
        let root = root.canonicalize()?;
        let dir = Dir::open_ambient_dir(&root, ambient_authority())?;
        Ok(Jail { dir, root })
    }

    /// A second handle on the same root, for another session over the same project (each MCP
    /// connection gets its own workspace; the root is not re-resolved, so it cannot move).
    pub fn try_clone(&self) -> io::Result<Jail> {
        Ok(Jail {
            dir: self.dir.try_clone()?,
            root: self.root.clone(),
        })
    }

    /// The canonical absolute root, for messages and for processes that need a working directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Lexically checks a caller's path text against this root.
    pub fn parse(&self, given: &str) -> Result<RelPath, PathError> {
        RelPath::parse(given, &self.root)
    }

    /// An optional directory argument: absent or blank means the project root.
    pub fn parse_or_root(&self, given: Option<&str>) -> Result<RelPath, PathError> {
        match given {
            Some(p) if !p.trim().is_empty() => self.parse(p),
            _ => Ok(RelPath::root()),
        }
    }

    /// Opens a file for reading, beneath the root. Non-blocking, so a FIFO planted in the tree
    /// cannot hang the call; callers check the opened handle's metadata for what it is.
    pub fn open_file(&self, path: &RelPath) -> Result<File, PathError> {
        let mut options = OpenOptions::new();
        options.read(true);
        crate::platform::fs::never_block(&mut options);
        self.beneath(path, |dir, p| dir.open_with(p, &options))
    }

    /// Follows symlinks, beneath the root.
    pub fn metadata(&self, path: &RelPath) -> Result<Metadata, PathError> {
        self.beneath(path, |dir, p| dir.metadata(p))
    }

    /// Does not follow a final symlink, beneath the root.
    pub fn symlink_metadata(&self, path: &RelPath) -> Result<Metadata, PathError> {
        self.beneath(path, |dir, p| dir.symlink_metadata(p))
    }

    /// Opens a directory as a capability of its own, beneath the root: the mutation path writes
    /// through it, so a name inside it cannot lead anywhere else.
    pub fn open_dir(&self, path: &RelPath) -> Result<Dir, PathError> {
        self.beneath(path, |dir, p| dir.open_dir(p))
    }

    /// Creates a directory and its parents, beneath the root.
    pub fn create_dir_all(&self, path: &RelPath) -> Result<(), PathError> {
        if path.is_root() {
            return Ok(());
        }
        self.beneath(path, |dir, p| dir.create_dir_all(p))
    }

    /// What a symlink points to (its text, not followed), beneath the root.
    pub fn read_link(&self, path: &RelPath) -> Result<std::path::PathBuf, PathError> {
        self.beneath(path, |dir, p| dir.read_link_contents(p))
    }

    /// Reads a directory, beneath the root.
    pub fn read_dir(&self, path: &RelPath) -> Result<ReadDir, PathError> {
        self.beneath(path, |dir, p| dir.read_dir(p))
    }

    /// The path with every symlink resolved, still relative to the root: the identity of the
    /// file, so that two spellings of one file share a read record.
    pub fn resolve(&self, path: &RelPath) -> Result<RelPath, PathError> {
        let real = self.beneath(path, |dir, p| dir.canonicalize(p))?;
        RelPath::from_walk(&real).ok_or_else(|| PathError::Escapes {
            path: path.to_string(),
            target: None,
        })
    }

    /// The absolute real path of something inside the root, for tools that must hand a path to
    /// a walker or a subprocess. Resolution is done through the jail first.
    pub fn real_path(&self, path: &RelPath) -> Result<PathBuf, PathError> {
        let rel = self.resolve(path)?;
        Ok(if rel.is_root() {
            self.root.clone()
        } else {
            self.root.join(rel.as_path())
        })
    }

    /// Runs `op` beneath the root. cap-std refuses any resolution that leaves the root — which
    /// includes absolute symlinks even when they point back inside. For that case only, the
    /// target is worked out ambiently and, when it lies inside, `op` is retried on the
    /// equivalent relative path: still through cap-std, so nothing can escape on the retry.
    fn beneath<T>(
        &self,
        path: &RelPath,
        op: impl Fn(&Dir, &Path) -> io::Result<T>,
    ) -> Result<T, PathError> {
        match op(&self.dir, path.as_path()) {
            Ok(v) => Ok(v),
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                match self.root.join(path.as_path()).canonicalize() {
                    Ok(real) => match real.strip_prefix(&self.root) {
                        Ok(inner) => {
                            let inner = if inner.as_os_str().is_empty() {
                                Path::new(".")
                            } else {
                                inner
                            };
                            op(&self.dir, inner).map_err(|e| classify(path, e))
                        }
                        Err(_) => Err(PathError::Escapes {
                            path: path.to_string(),
                            target: Some(real),
                        }),
                    },
                    Err(_) if is_escape(&e) => Err(PathError::Escapes {
                        path: path.to_string(),
                        target: None,
                    }),
                    Err(_) => Err(classify(path, e)),
                }
            }
            Err(e) => Err(classify(path, e)),
        }
    }
}

/// cap-std reports an escape as PermissionDenied with this text; told apart from a real EACCES
/// so the model hears "outside the project" rather than "permission denied".
fn is_escape(e: &io::Error) -> bool {
    e.to_string().contains("outside of the filesystem")
}

fn classify(path: &RelPath, e: io::Error) -> PathError {
    let path = path.to_string();
    if is_escape(&e) {
        return PathError::Escapes { path, target: None };
    }
    match e.kind() {
        io::ErrorKind::NotFound => PathError::NotFound { path },
        io::ErrorKind::PermissionDenied => PathError::PermissionDenied { path },
        _ if crate::platform::fs::is_symlink_loop(&e) => PathError::Loop { path },
        // A file used as a directory in the middle of the path: nothing is there.
        io::ErrorKind::NotADirectory => PathError::NotFound { path },
        _ => PathError::Io { path, source: e },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<RelPath, PathError> {
        RelPath::parse(s, Path::new("/work/proj"))
    }

    #[test]
    fn normalizes_clean_paths() {
        assert_eq!(parse("src/main.rs").unwrap().as_str(), "src/main.rs");
        assert_eq!(parse("./src//main.rs/").unwrap().as_str(), "src/main.rs");
        assert!(parse(".").unwrap().is_root());
        assert!(parse("./").unwrap().is_root());
    }

    #[test]
    fn refusals_say_what_to_send() {
        let msg = parse("/work/proj/src/a.rs").unwrap_err().to_string();
        assert!(msg.contains("send \"src/a.rs\""), "{msg}");
        let msg = parse("/etc/passwd").unwrap_err().to_string();
        assert!(msg.contains("outside the project"), "{msg}");
        let msg = parse("src/../lib.rs").unwrap_err().to_string();
        assert!(msg.contains("send \"lib.rs\""), "{msg}");
        let msg = parse("../x").unwrap_err().to_string();
        assert!(msg.contains("would leave the project"), "{msg}");
        let msg = parse("src\\main.rs").unwrap_err().to_string();
        assert!(msg.contains("\"src/main.rs\""), "{msg}");
        assert!(matches!(parse("C:\\x"), Err(PathError::DriveLetter { .. })));
        assert!(matches!(parse("c:x"), Err(PathError::DriveLetter { .. })));
        assert!(matches!(parse("a\0b"), Err(PathError::Nul)));
        assert!(matches!(
            parse("~/.ssh/id_rsa"),
            Err(PathError::Home { .. })
        ));
        assert!(matches!(parse(""), Err(PathError::Empty)));
        assert!(matches!(parse("..\\x"), Err(PathError::Parent { .. })));
    }

    #[test]
    fn parent_and_join() {
        let p = parse("a/b/c.rs").unwrap();
        assert_eq!(p.parent().as_str(), "a/b");
        assert_eq!(p.file_name(), "c.rs");
        assert_eq!(RelPath::root().join("x").as_str(), "x");
        assert!(parse("x").unwrap().parent().is_root());
        assert!(parse(".github/x").unwrap().has_hidden_component());
    }
}
