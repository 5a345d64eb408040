//! The two boundaries no tool crosses, whatever the focus guard or the permission mode says.
//!
//! - `.slmcode/` is the harness's own control state (hooks, config, pending changes,
//!   checkpoints): an agent that could write there could give itself a shell on the next run.
//!   Only `.slmcode/scratch/` is open to tools.
//! - Every git directory — the top-level `.git`, a submodule's or a nested repository's `.git`
//!   (a directory or a `.git` file), and the directory a `.git` file's `gitdir:` names — and the
//!   places the repository's config points git at inside the project (an included config file,
//!   the `core.hooksPath` directory): the user's own git, run later outside any sandbox,
//!   executes what its config and hooks say. Committing is the user's step.
//!
//! A boundary is checked on the path text (every spelling a filesystem may treat as the same
//! name: case, trailing dots and spaces, NTFS short names, characters HFS+ ignores), and on file
//! identity (device and inode of what [`Protected::discover`] found on disk), so a symlink, a
//! bind mount or a renamed alias leads nowhere new.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::path::{Jail, RelPath};

pub use layout::{CONTROL_DIR, SCRATCH};

/// The layout of `.slmcode/`, in one place: every module that reads or writes harness state
/// names its place through here, so the boundary and the layout cannot drift apart.
pub mod layout {
    use crate::path::RelPath;

    /// The harness's own directory: tools never write under it, except in [`SCRATCH`].
    pub const CONTROL_DIR: &str = ".slmcode";
    /// The one place under [`CONTROL_DIR`] tools may write.
    pub const SCRATCH: &str = "scratch";
    /// The project's config (tighten-only for a project the user did not trust).
    pub const CONFIG: &str = "config.yaml";
    /// The project's hooks, run only once the user trusted their exact content.
    pub const HOOKS: &str = "hooks.json";
    /// The project's skills.
    pub const SKILLS: &str = "skills";
    /// One trajectory file per `slmcode run`.
    pub const RUNS: &str = "runs";
    /// Review mode's staged changes.
    pub const PENDING: &str = "pending";
    /// The first copy of every path a session changed.
    pub const CHECKPOINTS: &str = "checkpoints";
    /// What slmcode can rebuild from the project at any time (the symbol index).
    pub const CACHE: &str = "cache";
    /// Where durable writes stage their temp files (same filesystem as most targets).
    pub const STAGING: &str = "tmp";

    /// `.slmcode/<name>`, project-relative.
    pub fn path(name: &str) -> RelPath {
        RelPath::root().join(CONTROL_DIR).join(name)
    }
}
/// How deep below the root [`Protected::discover`] looks for nested `.git` entries. Submodules
/// and vendored repositories sit a few levels down; a deeper one (or one inside a build cache
/// or `node_modules/`, which are not entered) is still covered by the path text check of every
/// tool, just not by the sandbox's read-only mounts.
pub const GIT_SEARCH_DEPTH: usize = 6;

/// Which boundary a path crosses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Boundary {
    /// `.slmcode/` outside `scratch/`.
    Control,
    /// A git directory or `.git` file.
    Git,
}

impl Boundary {
    /// The refusal a tool returns, naming the path as the caller gave it.
    pub fn refusal(self, shown: &str, verb: &str) -> String {
        match self {
            Boundary::Control => format!(
                "{verb} refused — {shown} is harness control state, not project source.\n\
                 Files under .slmcode/ (hooks.json, config.yaml, pending/, checkpoints/) configure the\n\
                 harness itself and are never edited by tools.\n\
                 If you need scratch space, write under .slmcode/scratch/ instead."
            ),
            Boundary::Git => format!(
                "{verb} refused — {shown} is git's own state (a .git directory, or hooks or config\n\
                 the repository's git runs from), not project source. What is there runs the next\n\
                 time the user runs git, so no tool changes it. Committing, branches, hooks and git\n\
                 config are the user's step: change the project's files instead, and say in your\n\
                 answer what to commit."
            ),
        }
    }

    /// The short form for a command's refusal, which already names its rule.
    pub fn shell_refusal(self) -> &'static str {
        match self {
            Boundary::Control => ".slmcode/ is harness control state; commands may not write there. Write under .slmcode/scratch/ instead, or elsewhere in the project — run something else instead.",
            Boundary::Git => ".git/ is git's own state (config, hooks, index); commands may not write there, because the user's next git command would run what they planted. Committing is the user's step: change the project's files instead, and say what to commit.",
        }
    }
}

/// True when `name` is a spelling of `target` (lowercase ASCII) that some filesystem treats as
/// the same entry: any case (macOS, Windows), trailing dots or spaces (NTFS drops them), and
/// with the zero-width characters HFS+ ignores removed. The same normalisation git applies
/// before it lets a checkout write `.git`.
fn same_name(name: &str, target: &str) -> bool {
    let cleaned: String = name.chars().filter(|c| !hfs_ignored(*c)).collect();
    let trimmed = cleaned.trim_end_matches(['.', ' ']);
    trimmed.eq_ignore_ascii_case(target)
}

/// Code points HFS+ drops from names when comparing them (git's `is_hfs_dotgit` list).
fn hfs_ignored(c: char) -> bool {
    matches!(c as u32, 0x200C..=0x200F | 0x202A..=0x202E | 0x206A..=0x206F | 0xFEFF)
}

/// True when a single path component names a git directory or `.git` file in any spelling,
/// including the NTFS short name `git~1`.
pub fn is_git_name(name: &str) -> bool {
    same_name(name, ".git") || same_name(name, "git~1")
}

/// True when a single path component names the control directory in any spelling.
pub fn is_control_name(name: &str) -> bool {
    same_name(name, CONTROL_DIR)
}

/// The boundary a project-relative path lies in, judged on its text: `.slmcode/…` at the top
/// (but `.slmcode/scratch/…`), or any component that names `.git`.
pub fn classify(path: &RelPath) -> Option<Boundary> {
    let comps: Vec<&str> = path.components().collect();
    if comps.iter().any(|c| is_git_name(c)) {
        return Some(Boundary::Git);
    }
    match comps.first() {
        Some(first) if is_control_name(first) => {
            let scratch = comps.len() >= 3 && comps[0] == CONTROL_DIR && comps[1] == SCRATCH;
            (!scratch).then_some(Boundary::Control)
        }
        _ => None,
    }
}

/// True when `path` lies under `.slmcode/` outside `.slmcode/scratch/`.
pub fn is_control_path(path: &RelPath) -> bool {
    classify(path) == Some(Boundary::Control)
}

/// One protected entry found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Project-relative, symlinks resolved.
    pub path: RelPath,
    pub boundary: Boundary,
    pub is_dir: bool,
    /// Device and inode.
    pub id: (u64, u64),
    /// False for a place the repository's config names that does not exist yet (a hooks
    /// directory): protected by its path, with nothing to mount.
    pub exists: bool,
}

/// What a project protects right now: `.slmcode/`, every `.git` entry down to
/// [`GIT_SEARCH_DEPTH`], and every `gitdir:` target inside the project. One list, used by the
/// mutation path (identity), the shell policy (write targets) and the sandbox (read-only
/// mounts).
#[derive(Debug, Clone, Default)]
pub struct Protected {
    pub entries: Vec<Entry>,
    /// `.slmcode/scratch/`, when it exists: writable inside the control directory.
    pub scratch: Option<Entry>,
    /// Where every entry named like `.git` was found, as found (not resolved): what a command
    /// may not add.
    pub git_names: Vec<RelPath>,
    /// Files that run or configure something (a git config or hook, a control file) and have
    /// another hard link: a read-only mount cannot stop a write through the other name.
    pub linked: Vec<RelPath>,
}

impl Protected {
    /// Looks at the project on disk. Never fails: what cannot be read is not a git directory
    /// we could protect anyway, and the path text checks still apply.
    pub fn discover(jail: &Jail) -> Protected {
        let root = jail.root();
        let mut found = Protected::default();
        let mut seen: HashSet<(u64, u64)> = HashSet::new();
        let control = root.join(CONTROL_DIR);
        if let Some(e) = entry(root, &control, Boundary::Control) {
            seen.insert(e.id);
            found.entries.push(e);
            found.scratch = entry(root, &control.join(SCRATCH), Boundary::Control);
        }
        let mut stack: Vec<(PathBuf, usize)> = vec![(root.to_path_buf(), 0)];
        while let Some((dir, depth)) = stack.pop() {
            let Ok(read) = std::fs::read_dir(&dir) else {
                continue;
            };
            let items: Vec<std::fs::DirEntry> = read.flatten().collect();
            // Build caches (a CACHEDIR.TAG, as cargo's target/ has) and node_modules are not
            // where anyone runs git: not entered.
            let cache = items.iter().any(|i| i.file_name() == "CACHEDIR.TAG");
            for item in items {
                let name = item.file_name();
                let name = name.to_string_lossy();
                let Ok(kind) = item.file_type() else {
                    continue;
                };
                let path = item.path();
                if is_git_name(&name) {
                    if let Some(rel) = path.strip_prefix(root).ok().and_then(RelPath::from_walk) {
                        found.git_names.push(rel);
                    }
                    if let Some(e) = entry(root, &path, Boundary::Git) {
                        if kind.is_file() {
                            if let Some(target) = gitdir_target(&path) {
                                if let Some(t) = entry(root, &target, Boundary::Git) {
                                    if seen.insert(t.id) {
                                        found.entries.push(t);
                                    }
                                }
                            }
                        }
                        if seen.insert(e.id) {
                            found.entries.push(e);
                        }
                    }
                    continue;
                }
                if depth == 0 && is_control_name(&name) {
                    continue;
                }
                if kind.is_dir() && !cache && name != "node_modules" && depth + 1 < GIT_SEARCH_DEPTH
                {
                    stack.push((path, depth + 1));
                }
            }
        }
        // What the repository's own config makes git read or run outside .git.
        if found.entries.iter().any(|e| e.path.as_str() == ".git") {
            for path in crate::git::configured_paths(root) {
                let known = entry(root, &path, Boundary::Git).or_else(|| {
                    let rel = path.strip_prefix(root).ok().and_then(RelPath::from_walk)?;
                    Some(Entry {
                        path: rel,
                        boundary: Boundary::Git,
                        is_dir: true,
                        id: (0, 0),
                        exists: false,
                    })
                });
                if let Some(e) = known {
                    if !e.exists || seen.insert(e.id) {
                        found.entries.push(e);
                    }
                }
            }
        }
        found.entries.sort_by(|a, b| a.path.cmp(&b.path));
        found.git_names.sort();
        found.linked = linked_files(root, &found.entries);
        found
    }

    /// The protected directory that has this identity, if any (the scratch exemption is the
    /// caller's to apply: see [`Protected::is_scratch`]).
    pub fn by_identity(&self, id: (u64, u64)) -> Option<&Entry> {
        self.entries.iter().find(|e| e.exists && e.id == id)
    }

    /// True when `id` is `.slmcode/scratch/`.
    pub fn is_scratch(&self, id: (u64, u64)) -> bool {
        self.scratch.as_ref().is_some_and(|s| s.id == id)
    }

    /// The boundary a resolved project path lies in, by its text or because it lies under a
    /// protected entry found on disk (a `gitdir:` target has no `.git` in its name).
    pub fn classify(&self, real: &RelPath) -> Option<Boundary> {
        if let Some(b) = classify(real) {
            return Some(b);
        }
        let scratch = RelPath::root().join(CONTROL_DIR).join(SCRATCH);
        self.entries
            .iter()
            .filter(|e| e.path.is_root() || is_under(real, &e.path))
            .map(|e| e.boundary)
            .find(|b| *b == Boundary::Git || !is_under(real, &scratch) || *real == scratch)
    }

    /// Absolute paths of the entries that exist, for the sandbox.
    pub fn absolute(&self, root: &Path) -> Vec<(PathBuf, &Entry)> {
        self.entries
            .iter()
            .filter(|e| e.exists)
            .map(|e| (root.join(e.path.as_path()), e))
            .collect()
    }
}

/// The files in protected directories that matter (config, hooks, control files) and have
/// other hard links. Git's object store is left out: a local clone hard-links objects, and
/// they run nothing.
fn linked_files(root: &Path, entries: &[Entry]) -> Vec<RelPath> {
    let mut out = Vec::new();
    let mut check = |path: PathBuf| {
        if let Ok(meta) = std::fs::symlink_metadata(&path) {
            // Where the count cannot be learned, the file counts as linked.
            if meta.is_file()
                && crate::platform::fs::links_of_path(&path, &meta).is_none_or(|n| n > 1)
            {
                if let Some(rel) = path.strip_prefix(root).ok().and_then(RelPath::from_walk) {
                    out.push(rel);
                }
            }
        }
    };
    for e in entries.iter().filter(|e| e.exists) {
        let dir = root.join(e.path.as_path());
        if !e.is_dir {
            check(dir);
            continue;
        }
        let mut files: Vec<PathBuf> = ["config", "info/attributes", "commondir", "gitdir"]
            .iter()
            .map(|f| dir.join(f))
            .collect();
        // A git directory (it has a HEAD) matters by the files listed above and its hooks; a
        // control or hooks directory by everything in it.
        let git_dir = dir.join("HEAD").exists();
        let listed = if git_dir {
            dir.join("hooks")
        } else {
            dir.clone()
        };
        if let Ok(read) = std::fs::read_dir(&listed) {
            files.extend(read.flatten().map(|i| i.path()).take(200));
        }
        for f in files {
            check(f);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// True when `path` is `dir` or lies beneath it.
pub fn is_under(path: &RelPath, dir: &RelPath) -> bool {
    let p = path.as_str();
    let d = dir.as_str();
    p == d || (p.len() > d.len() && p.starts_with(d) && p.as_bytes()[d.len()] == b'/')
}

/// An entry for an absolute path inside `root`, with symlinks resolved; `None` when it does not
/// exist or lies outside.
fn entry(root: &Path, path: &Path, boundary: Boundary) -> Option<Entry> {
    let real = path.canonicalize().ok()?;
    let rel = real.strip_prefix(root).ok()?;
    let rel = if rel.as_os_str().is_empty() {
        RelPath::root()
    } else {
        RelPath::from_walk(rel)?
    };
    let meta = std::fs::metadata(&real).ok()?;
    Some(Entry {
        path: rel,
        boundary,
        is_dir: meta.is_dir(),
        id: crate::platform::fs::id_of_path(&real, &meta).ok()?,
        exists: true,
    })
}

/// The directory a `.git` file points at (`gitdir: <path>`, relative to the file's directory
/// or absolute).
fn gitdir_target(file: &Path) -> Option<PathBuf> {
    let meta = std::fs::metadata(file).ok()?;
    if meta.len() > 4096 {
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    let line = text.lines().next()?;
    let target = line.strip_prefix("gitdir:")?.trim();
    if target.is_empty() {
        return None;
    }
    let target = Path::new(target);
    Some(if target.is_absolute() {
        target.to_path_buf()
    } else {
        file.parent()?.join(target)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_layout_names_the_same_places_as_the_spelled_out_paths() {
        assert_eq!(
            layout::path(layout::CONFIG).as_str(),
            crate::config::CONFIG_PATH
        );
        assert!(is_control_path(&layout::path(layout::HOOKS)));
        assert!(!is_control_path(&layout::path(layout::SCRATCH).join("x")));
    }

    use super::*;

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
        assert!(is_control_path(&rel(".slmcode./hooks.json")));
        assert!(!is_control_path(&rel(".slmcode/scratch/notes.md")));
        assert!(!is_control_path(&rel("src/.slmcode/x")));
        assert!(!is_control_path(&rel("slmcode/x")));
    }

    #[test]
    fn git_paths_in_every_spelling() {
        for p in [
            ".git",
            ".git/config",
            ".GIT/hooks/pre-commit",
            ".Git/config",
            "sub/.git",
            "vendor/lib/.git/config",
            ".git./config",
            ".git /config",
            "GIT~1/config",
            ".g\u{200c}it/config",
            "\u{feff}.git/config",
        ] {
            assert_eq!(classify(&rel(p)), Some(Boundary::Git), "{p}");
        }
        for p in [
            ".gitignore",
            ".github/x",
            "git/config",
            ".gitmodules",
            "a.git",
        ] {
            assert_eq!(classify(&rel(p)), None, "{p}");
        }
    }

    #[test]
    fn discovery_finds_nested_git_entries_and_gitdir_targets() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in [
            ".git/hooks",
            "sub",
            "deep/a/b/.git",
            "moved-git",
            ".slmcode/scratch",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("sub/.git"), "gitdir: ../moved-git\n").unwrap();
        let jail = Jail::open(root).unwrap();
        let p = Protected::discover(&jail);
        let paths: Vec<&str> = p.entries.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(
            paths,
            [".git", ".slmcode", "deep/a/b/.git", "moved-git", "sub/.git"]
        );
        assert!(p.scratch.is_some());
        assert_eq!(p.classify(&rel("moved-git/config")), Some(Boundary::Git));
        assert_eq!(p.classify(&rel("src/x.rs")), None);
    }
}
