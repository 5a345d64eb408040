//! The one way tools walk the tree: ripgrep's `ignore` walker, configured once so ws_glob,
//! ws_grep, path suggestions and the project's language ([`files`]) agree on what is
//! visible — `.gitignore` (also outside a git checkout), `.ignore`, no symlink following,
//! `.git/` never entered, hidden entries skipped unless the caller asks for them.

use std::path::Path;

use ignore::{WalkBuilder, WalkParallel};

use crate::path::{Jail, PathError, RelPath};

/// A walk beneath `start`, which must be a directory inside the jail.
pub struct Walk {
    builder: WalkBuilder,
}

impl Walk {
    /// Prepares a walk of `start`. `hidden` includes dot-files and dot-directories.
    pub fn new(jail: &Jail, start: &RelPath, hidden: bool) -> Result<Walk, PathError> {
        let real = jail.real_path(start)?;
        let mut builder = WalkBuilder::new(real);
        builder
            .hidden(!hidden)
            .git_ignore(true)
            .git_exclude(true)
            .git_global(true)
            .ignore(true)
            .parents(true)
            .require_git(false)
            .follow_links(false)
            .filter_entry(|e| e.file_name() != ".git");
        Ok(Walk { builder })
    }

    /// Stops the walk when `control` is cancelled: no entry is visited after that, so a
    /// cancelled search over a large tree ends at once.
    pub fn stop_on(&mut self, control: &crate::control::CallControl) -> &mut Walk {
        let control = control.clone();
        self.builder
            .filter_entry(move |e| e.file_name() != ".git" && !control.is_cancelled());
        self
    }

    /// Restricts the walk with ripgrep-style `-g` globs rooted at `root`.
    pub fn overrides(&mut self, overrides: ignore::overrides::Override) -> &mut Walk {
        self.builder.overrides(overrides);
        self
    }

    /// A single-threaded walk, in file-name order.
    pub fn sorted(mut self) -> ignore::Walk {
        self.builder.sort_by_file_name(|a, b| a.cmp(b));
        self.builder.build()
    }

    /// A walk on every core, for full scans.
    pub fn parallel(self) -> WalkParallel {
        self.builder.build_parallel()
    }
}

/// The project-relative form of a path the walker produced.
pub fn relative(jail: &Jail, path: &Path) -> Option<RelPath> {
    path.strip_prefix(jail.root())
        .ok()
        .and_then(RelPath::from_walk)
}

/// Up to `limit` files of the project (anything but directories), in file-name order, as the
/// tools see them: hidden entries skipped. An unreadable root gives none.
pub fn files(jail: &Jail, limit: usize) -> Vec<RelPath> {
    let Ok(walk) = Walk::new(jail, &RelPath::root(), false) else {
        return Vec::new();
    };
    walk.sorted()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| !t.is_dir()))
        .filter_map(|e| relative(jail, e.path()))
        .take(limit)
        .collect()
}
