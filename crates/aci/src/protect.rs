//! `protect`: paths a task must be solved without changing — a test suite, most often. Every
//! edit tool refuses them (through the mutation path); ws_shell's write guard takes a snapshot
//! of them before a command and puts back whatever the command changed, created or removed;
//! a run does the same over all its turns, so a change no tool made (a build script, a hook)
//! is put back too and reported. Models "fix" a failing test by rewriting it: this is what
//! makes a passing check mean the code was fixed.

use std::collections::BTreeMap;
use std::io::Read;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::checkpoint;
use crate::error::{RefusalClass, ToolError};
use crate::path::{Jail, RawPath, RelPath};
use crate::walk::{relative, Walk};

/// The most files a snapshot keeps, and their total size: past either, the guard covers the
/// files it kept and says so.
pub const SNAPSHOT_MAX_FILES: usize = 10_000;
pub const SNAPSHOT_MAX_BYTES: u64 = 64 << 20;

/// The `protect` globs, compiled.
#[derive(Clone, Debug)]
pub struct Protect {
    globs: Vec<String>,
    set: GlobSet,
}

impl Protect {
    /// `None` when there is nothing to protect. Globs that do not compile were refused when
    /// the config was read; any left are skipped.
    pub fn new(globs: &[String]) -> Option<Protect> {
        if globs.is_empty() {
            return None;
        }
        let mut builder = GlobSetBuilder::new();
        for g in globs {
            if let Ok(glob) = GlobBuilder::new(g).literal_separator(true).build() {
                builder.add(glob);
            }
        }
        let set = builder.build().ok()?;
        Some(Protect {
            globs: globs.to_vec(),
            set,
        })
    }

    /// Whether `path` (project-relative) is protected.
    pub fn matches(&self, path: &RelPath) -> bool {
        self.set.is_match(path.as_str())
    }

    /// The refusal an edit tool returns for a protected path.
    pub fn refusal(&self, shown: &str, verb: &str) -> ToolError {
        ToolError::refused(
            RefusalClass::Protected,
            format!(
                "{verb} refused — {shown} is protected ({}): the task must be solved without changing it. Change the code under test, not the tests.",
                self.globs
                    .iter()
                    .map(|g| format!("\"{g}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    }

    /// Refuses a change of `given` (which leads to `real`) when either is protected, or,
    /// for a directory, when it holds a protected file (a delete or move would take it).
    pub fn check(
        &self,
        jail: &Jail,
        given: &RelPath,
        real: &RelPath,
        verb: &str,
    ) -> Result<(), ToolError> {
        if self.matches(given) || self.matches(real) {
            return Err(self.refusal(given.as_str(), verb));
        }
        let is_dir = jail.symlink_metadata(real).is_ok_and(|m| m.is_dir());
        if !is_dir {
            return Ok(());
        }
        let Ok(walk) = Walk::new(jail, real, true) else {
            return Ok(());
        };
        let inner = walk
            .sorted()
            .flatten()
            .filter_map(|e| relative(jail, e.path()))
            .find(|p| self.matches(p));
        match inner {
            Some(inner) => Err(self.refusal(&format!("{given} (it holds {inner})"), verb)),
            None => Ok(()),
        }
    }

    /// The protected files as they are now (content and mode), within the bounds.
    pub fn snapshot(&self, jail: &Jail) -> Snapshot {
        let mut snap = Snapshot {
            files: BTreeMap::new(),
            complete: true,
        };
        let Ok(walk) = Walk::new(jail, &RelPath::root(), true) else {
            return snap;
        };
        let mut bytes = 0u64;
        for entry in walk.sorted().flatten() {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let Some(path) = relative(jail, entry.path()) else {
                continue;
            };
            if !self.matches(&path) {
                continue;
            }
            let Some((content, mode)) = read(jail, &path) else {
                continue;
            };
            bytes += content.len() as u64;
            if snap.files.len() >= SNAPSHOT_MAX_FILES || bytes > SNAPSHOT_MAX_BYTES {
                snap.complete = false;
                break;
            }
            snap.files.insert(path, (content, mode));
        }
        snap
    }
}

/// A file's bytes and permission bits, when it is a regular file that can be read.
fn read(jail: &Jail, path: &RelPath) -> Option<(Vec<u8>, u32)> {
    let meta = jail.symlink_metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mode = crate::platform::fs::mode(&meta);
    let mut content = Vec::new();
    jail.open_file(path)
        .ok()?
        .into_std()
        .take(SNAPSHOT_MAX_BYTES + 1)
        .read_to_end(&mut content)
        .ok()?;
    Some((content, mode))
}

/// The protected files at one moment.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    files: BTreeMap<RelPath, (Vec<u8>, u32)>,
    /// False when the bounds cut it short: files past them are not guarded.
    complete: bool,
}

impl Snapshot {
    /// Puts back every protected file that changed or went away since the snapshot, and
    /// removes protected files that appeared (when the snapshot saw them all). One line per
    /// path, saying what was done; empty when nothing had changed.
    pub fn restore_changed(&self, protect: &Protect, jail: &Jail) -> Vec<String> {
        let now = protect.snapshot(jail);
        let mut report = Vec::new();
        for (path, (content, mode)) in &self.files {
            if now.files.get(path).map(|(c, _)| c) == Some(content) {
                continue;
            }
            let raw = RawPath::from_rel(path);
            report.push(
                match checkpoint::restore_file(jail, &raw, &mut content.as_slice(), *mode) {
                    Ok(_) => format!("put back {path}"),
                    Err(e) => format!("could not put back {path}: {e}"),
                },
            );
        }
        if self.complete {
            for path in now.files.keys().filter(|p| !self.files.contains_key(*p)) {
                let raw = RawPath::from_rel(path);
                report.push(match checkpoint::remove_restored(jail, &raw) {
                    Ok(_) => format!("removed {path}, which is new"),
                    Err(e) => format!("could not remove {path}: {e}"),
                });
            }
        }
        report
    }

    /// How many files it holds, and whether it holds them all.
    pub fn coverage(&self) -> (usize, bool) {
        (self.files.len(), self.complete)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn globs(g: &[&str]) -> Vec<String> {
        g.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn globs_match_paths_with_separators_literal() {
        let p = Protect::new(&globs(&["tests/**", "*.lock"])).unwrap();
        let rel = |s: &str| RelPath::parse(s, std::path::Path::new("/")).unwrap();
        assert!(p.matches(&rel("tests/test_app.py")));
        assert!(p.matches(&rel("tests/unit/a.rs")));
        assert!(p.matches(&rel("Cargo.lock")));
        assert!(!p.matches(&rel("src/tests.rs")));
        assert!(!p.matches(&rel("sub/Cargo.lock")));
        assert!(Protect::new(&[]).is_none());
    }

    #[test]
    fn a_changed_a_removed_and_a_new_protected_file_are_all_put_back() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tests")).unwrap();
        std::fs::write(dir.path().join("tests/a.py"), "assert f() == 1\n").unwrap();
        std::fs::write(dir.path().join("tests/b.py"), "assert g() == 2\n").unwrap();
        std::fs::write(dir.path().join("app.py"), "x = 1\n").unwrap();
        let jail = Jail::open(dir.path()).unwrap();
        let p = Protect::new(&globs(&["tests/**"])).unwrap();
        let snap = p.snapshot(&jail);
        assert_eq!(snap.coverage(), (2, true));
        std::fs::write(dir.path().join("tests/a.py"), "assert True\n").unwrap();
        std::fs::remove_file(dir.path().join("tests/b.py")).unwrap();
        std::fs::write(dir.path().join("tests/c.py"), "new\n").unwrap();
        std::fs::write(dir.path().join("app.py"), "x = 2\n").unwrap();
        let report = snap.restore_changed(&p, &jail);
        assert_eq!(
            report,
            vec![
                "put back tests/a.py",
                "put back tests/b.py",
                "removed tests/c.py, which is new"
            ]
        );
        let read = |n: &str| std::fs::read_to_string(dir.path().join(n)).unwrap();
        assert_eq!(read("tests/a.py"), "assert f() == 1\n");
        assert_eq!(read("tests/b.py"), "assert g() == 2\n");
        assert!(!dir.path().join("tests/c.py").exists());
        // Only protected files are touched.
        assert_eq!(read("app.py"), "x = 2\n");
        assert!(snap.restore_changed(&p, &jail).is_empty());
    }
}
