//! The one mutation path. Every file change of every tool goes through here — [`commit`] for
//! content, [`delete`] and [`rename`] for the rest — applying, in order: the jail; the
//! `.slmcode/` boundary (on the path text, on the resolved path, and on directory identity);
//! Windows reserved names; the focus guard; the syntax check (a change that breaks a file that
//! parsed is refused, so the file stays as it was); the permission mode (auto writes, dry-run
//! reports, review stages under `.slmcode/pending/`); the checkpoint (the session's first copy
//! of the path, fsynced first); then the atomic replace — temp file in the same directory,
//! fsync, rename, fsync the directory, the file's mode kept. Restoring a checkpoint uses the
//! same jail, boundary and atomic replace.
//!
//! Writing through rename also means a hard link elsewhere to the same inode is never written
//! through: the name being edited gets a new inode, the other name keeps the old bytes.

use crate::anchor::{Anchored, Writer};
use crate::approval::{Answer, Request};
use crate::boundary::{self, Protected};
use crate::checkpoint::NotSaved;
use crate::config::PermissionMode;
use crate::error::RefusalClass;
use crate::error::ToolError;
pub use crate::fsx::read_all;
use crate::fsx::{
    anchored, check_boundary, check_boundary_on_disk, not_regular, resolve_new, write_file,
};
use crate::outcome::Applied;
use crate::path::{PathError, RawPath, RelPath};
use crate::pending;
use crate::platform;
use crate::syntax::{self, Skip, SyntaxError, Verdict};
use crate::workspace::{ReadRecord, Workspace};

pub use crate::boundary::{CONTROL_DIR, SCRATCH};
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
    /// What the permission mode did, as data.
    pub fn applied(&self) -> Applied {
        match self {
            Done::Written => Applied::Written,
            Done::DryRun { .. } => Applied::DryRun,
            Done::Staged { .. } => Applied::Staged,
        }
    }

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
    /// The protected places, as found when the target was checked: the write checks its
    /// directory against them again when it opens it.
    pub protected: Protected,
}

impl Target {
    pub fn exists(&self) -> bool {
        self.mode.is_some()
    }
}

/// Resolves and checks where a write to `path` would land, without writing. Tools call this
/// first so a refused target is refused before anything else is said; [`commit`] calls it
/// again, so no write skips it.
pub fn target(ws: &Workspace, path: &RelPath, verb: &str) -> Result<Target, ToolError> {
    let jail = &ws.jail;
    if path.is_root() {
        return Err(ToolError::refused(RefusalClass::Args, format!(
            "{verb} refused — the path names the project root, not a file. Send a file path such as \"src/main.rs\"."
        )));
    }
    check_reserved(path, verb)?;
    check_boundary(path, path, verb)?;
    let (real, mode) = match jail.symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => {
            return Err(ToolError::refused(RefusalClass::Other, format!(
                "{verb} refused — {path} is a directory. Name a file inside it, e.g. \"{path}/new_file.txt\"."
            )))
        }
        Ok(meta) if meta.file_type().is_symlink() => {
            let real = jail.resolve(path).map_err(|e| match e {
                PathError::NotFound { .. } => ToolError::refused(RefusalClass::NotFound, format!(
                    "{verb} refused — {path} is a broken symlink. Write to the real file, or delete the link first."
                )),
                other => other.into(),
            })?;
            let meta = jail.metadata(&real)?;
            if meta.is_dir() {
                return Err(ToolError::refused(RefusalClass::Other, format!(
                    "{verb} refused — {path} is a symlink to the directory {real}. Name a file inside it."
                )));
            }
            if !meta.is_file() {
                return Err(ToolError::refused(RefusalClass::Other, format!(
                    "{verb} refused — {}",
                    not_regular(path, &meta.file_type())
                )));
            }
            (real, Some(platform::fs::mode(&meta)))
        }
        Ok(meta) if !meta.is_file() => {
            return Err(ToolError::refused(RefusalClass::Other, format!(
                "{verb} refused — {}",
                not_regular(path, &meta.file_type())
            )))
        }
        Ok(meta) => (jail.resolve(path)?, Some(platform::fs::mode(&meta))),
        Err(PathError::NotFound { .. }) => (resolve_new(jail, path, verb)?, None),
        Err(e) => return Err(e.into()),
    };
    let protected = check_boundary_on_disk(jail, path, &real, verb)?;
    check_focus(ws, path, &real, verb)?;
    check_protect(ws, path, &real, verb)?;
    Ok(Target {
        given: path.clone(),
        real,
        mode,
        protected,
    })
}

/// A change that went through, and what the syntax check had to say about it.
#[derive(Debug, PartialEq, Eq)]
pub struct Committed {
    pub done: Done,
    /// The parse error of a file that was already broken and still is.
    pub note: Option<String>,
    /// The file was too large to checkpoint before it was changed.
    pub not_saved: Option<NotSaved>,
}

impl Committed {
    /// The tool's success text, completed with what the mode did, the syntax note, and a
    /// missing checkpoint.
    pub fn present(&self, summary: &str) -> String {
        let mut out = self.done.present(summary);
        for note in [
            self.note.clone(),
            self.not_saved.as_ref().map(NotSaved::note),
        ]
        .into_iter()
        .flatten()
        {
            out.push('\n');
            out.push_str(&note);
        }
        out
    }
}

/// Commits new content for `path` through the whole path: target checks, syntax check,
/// permission mode, checkpoint, atomic replace. `before` is the file's current content when
/// the caller has just read it (so it is not read again); `None` lets the path read it if it
/// needs to. On success the session's read record follows the new content, so the model can
/// keep editing what it just wrote.
pub fn commit(
    ws: &mut Workspace,
    path: &RelPath,
    before: Option<&[u8]>,
    bytes: Vec<u8>,
    tool: &str,
) -> Result<Committed, ToolError> {
    let mode = ws.config.permission_mode;
    commit_as(ws, path, before, bytes, tool, mode)
}

/// [`commit`] under an explicit permission mode (`slmcode pending apply` commits in auto).
pub fn commit_as(
    ws: &mut Workspace,
    path: &RelPath,
    before: Option<&[u8]>,
    bytes: Vec<u8>,
    tool: &str,
    mode: PermissionMode,
) -> Result<Committed, ToolError> {
    let verb = verb_of(tool);
    let target = target(ws, path, verb)?;
    // The current bytes, read at most once and only if something needs them.
    let mut read: Option<Vec<u8>> = None;
    let mut current = |ws: &Workspace| -> Result<Option<Vec<u8>>, ToolError> {
        if !target.exists() {
            return Ok(None);
        }
        if let Some(b) = before {
            return Ok(Some(b.to_vec()));
        }
        if read.is_none() {
            read = Some(read_all(&ws.jail, &target.real)?);
        }
        Ok(read.clone())
    };
    // A placeholder comment standing where code was would delete that code.
    if let Some(before) = current(ws)? {
        if let (Ok(old), Ok(new)) = (std::str::from_utf8(&before), std::str::from_utf8(&bytes)) {
            if let Some(p) = crate::placeholder::find(old, new) {
                return Err(ToolError::refused(
                    RefusalClass::Placeholder,
                    p.refusal(verb, path),
                ));
            }
        }
    }
    let mut note = None;
    let mut not_saved = None;
    if !ws.config.disable_syntax_check && syntax::language_for(&target.real).is_some() {
        let old = current(ws)?;
        let (after, was) = ws
            .session
            .trees
            .check_change(&target.real, old.as_deref(), &bytes);
        match after {
            Verdict::Broken(err) => {
                if was == Some(Verdict::Parses) {
                    return Err(ToolError::refused(
                        RefusalClass::Reverted,
                        reverted(verb, path, &err),
                    ));
                }
                note = Some(still_broken(path, &err, target.exists()));
            }
            Verdict::Skipped(skip) => note = Some(not_checked(path, &skip)),
            Verdict::Parses | Verdict::Unchecked => {}
        }
    }
    // Review mode with someone to ask: the user decides now, and a yes writes the change.
    let mode = match (&ws.approver, mode) {
        (Some(approver), PermissionMode::Review) => {
            let approver = approver.clone();
            let before = current(ws)?;
            let asked = Request::Change {
                path: target.real.to_string(),
                tool: tool.to_string(),
                diff: crate::text::unified_diff(
                    &target.real,
                    before.as_deref().unwrap_or_default(),
                    &bytes,
                ),
            };
            match approver.ask(&asked) {
                Answer::Yes => PermissionMode::Auto,
                Answer::Stop => {
                    // Stopped at the question: the call ends cancelled, as Ctrl-C ends it.
                    ws.control.cancel();
                    return Err(ToolError::refused(
                        RefusalClass::Policy,
                        format!("the {verb} of {path} was not made: the user stopped"),
                    ));
                }
                Answer::No { reason } => {
                    return Err(ToolError::refused(
                        RefusalClass::Policy,
                        crate::approval::refused_text(
                            &format!("the {verb} of {path} was not made"),
                            reason.as_deref(),
                        ),
                    ))
                }
            }
        }
        (_, mode) => mode,
    };
    let done = match mode {
        PermissionMode::DryRun | PermissionMode::Review => {
            let before = current(ws)?;
            if mode == PermissionMode::DryRun {
                Done::DryRun {
                    diff: crate::text::unified_diff(
                        &target.real,
                        before.as_deref().unwrap_or_default(),
                        &bytes,
                    ),
                }
            } else {
                let id = pending::stage(&ws.jail, &target.real, before.as_deref(), &bytes, tool)?;
                Done::Staged { id }
            }
        }
        PermissionMode::Auto => {
            not_saved = checkpoint(ws, &target.protected, &RawPath::from_rel(&target.real))?;
            write_file(
                &ws.jail,
                &target.protected,
                &target.real,
                &bytes,
                target.mode.unwrap_or(NEW_FILE_MODE),
                Writer::Tool,
            )
            .map_err(|e| {
                ToolError::refused(RefusalClass::Io, format!("{verb} of {path} failed: {e}"))
            })?;
            ws.session.changed.insert(target.real.clone());
            ws.session.symbols.touch(&target.real);
            ws.session.record_read(
                target.real,
                ReadRecord {
                    hash: *blake3::hash(&bytes).as_bytes(),
                    len: bytes.len() as u64,
                },
            );
            Done::Written
        }
    };
    Ok(Committed {
        done,
        note,
        not_saved,
    })
}

/// Saves the session's first copy of `path` when checkpoints are on. Returns the file when it
/// was too large to save.
fn checkpoint(
    ws: &mut Workspace,
    protected: &Protected,
    path: &RawPath,
) -> Result<Option<NotSaved>, ToolError> {
    if !ws.config.file_checkpoints {
        return Ok(None);
    }
    let max = ws.config.checkpoint_max_bytes;
    ws.session
        .checkpoints
        .save_first(&ws.jail, protected, path, max)
}

/// How to undo the session's changes, for messages.
pub fn restore_hint(ws: &Workspace, path: &RelPath) -> String {
    match ws.session.checkpoints.id() {
        Some(id) if ws.config.file_checkpoints => {
            format!("restore it with `slmcode checkpoints restore {id} {path}`")
        }
        _ => "file checkpoints are off, so it cannot be restored".to_string(),
    }
}

/// The spec's revert message: what broke, where, what to check, and not to retry.
fn reverted(verb: &str, path: &RelPath, err: &SyntaxError) -> String {
    format!(
        "{} REVERTED — {path} parsed correctly before your change and does NOT parse after it (tree-sitter {}): {}
         The file is unchanged on disk. Fix the syntax in your replacement text and retry:
         • check brackets/parens/quotes are balanced in new_str
         • check indentation matches the surrounding block
         Do NOT retry the identical edit — it will be reverted again.",
        verb.to_uppercase(),
        err.language,
        err.describe(path)
    )
}

/// The in-band note for a file that did not parse before the change either.
fn still_broken(path: &RelPath, err: &SyntaxError, existed: bool) -> String {
    let was = if existed {
        "It did not parse before this change either"
    } else {
        "The new file does not parse"
    };
    format!(
        "[syntax: {path} does not parse (tree-sitter {}): {}
{was} — fix it now, before anything else.]",
        err.language,
        err.describe(path)
    )
}

/// The in-band note for a change the syntax check could not look at: the guard kept the file
/// from the parser, or the parser gave no answer. The change is made; nothing is claimed.
fn not_checked(path: &RelPath, skip: &Skip) -> String {
    format!(
        "[syntax check skipped for {path}: {}. Nothing was checked — re-read the lines you changed with ws_read.]",
        skip.why()
    )
}

/// Refuses a delete or move under review mode, which stages content changes only.
fn not_in_review(ws: &Workspace, verb: &str) -> Result<(), ToolError> {
    if ws.config.permission_mode == PermissionMode::Review {
        return Err(ToolError::refused(RefusalClass::Other, format!(
            "{verb} refused — review mode stages content changes only; ask the user to {verb} it, or to switch permission_mode to auto"
        )));
    }
    Ok(())
}

/// What a delete removed.
pub struct Deleted {
    pub dry_run: bool,
    /// Files and links removed (a directory's contents included), project-relative, as
    /// shown (a name that is not UTF-8 with U+FFFD).
    pub paths: Vec<RelPath>,
    /// Those too large to checkpoint: they cannot be restored.
    pub not_saved: Vec<NotSaved>,
}

/// Deletes a file or symlink (the link, never its target), or with `recursive` a directory,
/// each file checkpointed first.
pub fn delete(ws: &mut Workspace, path: &RelPath, recursive: bool) -> Result<Deleted, ToolError> {
    let verb = "delete";
    if path.is_root() {
        return Err(ToolError::refused(
            RefusalClass::Args,
            "delete refused — that is the project root. Name a file or directory inside it.".into(),
        ));
    }
    check_boundary(path, path, verb)?;
    let meta = ws.jail.symlink_metadata(path)?;
    // The entry itself is removed, so it is judged by where it is, not where a link leads.
    let real = ws.jail.resolve(&path.parent())?.join(path.file_name());
    let protected = check_boundary_on_disk(&ws.jail, path, &real, verb)?;
    check_focus(ws, path, &real, verb)?;
    check_protect(ws, path, &real, verb)?;
    let mut raw = Vec::new();
    if meta.is_dir() {
        if !recursive {
            return Err(ToolError::refused(RefusalClass::Args, format!(
                "delete refused — {path} is a directory. To delete it and everything in it, repeat the call with \"recursive\": true."
            )));
        }
        // A directory holding a protected entry (a nested repository's .git, a gitdir target)
        // is not deleted whole: that entry would go with it.
        if let Some(inner) = protected
            .entries
            .iter()
            .find(|e| boundary::is_under(&e.path, &real))
        {
            return Err(ToolError::refused(
                RefusalClass::Boundary,
                inner
                    .boundary
                    .refusal(&format!("{path} (it holds {})", inner.path), verb),
            ));
        }
        let dir = anchored(
            &ws.jail,
            &protected,
            &RawPath::from_rel(&real),
            false,
            Writer::Tool,
            verb,
            path,
        )?;
        collect_tree(&dir, &mut raw).map_err(|e| {
            ToolError::refused(RefusalClass::Io, format!("delete of {path} failed: {e}"))
        })?;
        if let Some((p, b)) = raw
            .iter()
            .map(RawPath::display)
            .find_map(|p| boundary::classify(&p).map(|b| (p, b)))
        {
            return Err(ToolError::refused(
                RefusalClass::Boundary,
                b.refusal(&format!("{path} (it holds {p})"), verb),
            ));
        }
    } else {
        raw.push(RawPath::from_rel(&real));
    }
    let paths: Vec<RelPath> = raw.iter().map(RawPath::display).collect();
    if ws.config.permission_mode == PermissionMode::DryRun {
        return Ok(Deleted {
            dry_run: true,
            paths,
            not_saved: Vec::new(),
        });
    }
    not_in_review(ws, verb)?;
    let mut not_saved = Vec::new();
    for p in &raw {
        not_saved.extend(checkpoint(ws, &protected, p)?);
    }
    let parent = anchored(
        &ws.jail,
        &protected,
        &RawPath::from_rel(&real.parent()),
        false,
        Writer::Tool,
        verb,
        path,
    )?;
    let removed = if meta.is_dir() {
        parent.remove_dir_all(real.file_name())
    } else {
        parent.remove_file(real.file_name())
    };
    removed.map_err(|e| {
        ToolError::refused(RefusalClass::Io, format!("delete of {path} failed: {e}"))
    })?;
    for p in &paths {
        ws.session.symbols.touch(p);
    }
    ws.session.changed.extend(paths.iter().cloned());
    Ok(Deleted {
        dry_run: false,
        paths,
        not_saved,
    })
}

/// Every file and link under a directory, depth first, names as bytes, following no link:
/// each subdirectory is opened from its parent's handle without following symlinks.
fn collect_tree(dir: &Anchored, out: &mut Vec<RawPath>) -> std::io::Result<()> {
    fn walk(dir: &cap_std::fs::Dir, at: &RawPath, out: &mut Vec<RawPath>) -> std::io::Result<()> {
        use cap_fs_ext::DirExt;
        let mut entries: Vec<(std::ffi::OsString, bool)> = Vec::new();
        for entry in dir.entries()? {
            let entry = entry?;
            let is_dir = entry.file_type()?.is_dir();
            entries.push((entry.file_name(), is_dir));
        }
        entries.sort();
        for (name, is_dir) in entries {
            let child = at.join(&name);
            if is_dir {
                walk(&dir.open_dir_nofollow(&name)?, &child, out)?;
            } else {
                out.push(child);
            }
        }
        Ok(())
    }
    walk(dir.dir(), dir.raw(), out)
}

/// How a move was made.
#[derive(Debug, PartialEq, Eq)]
pub enum Moved {
    GitMv,
    Renamed,
    DryRun,
}

/// Moves a file (or symlink) to a path that does not exist yet: `git mv` when the project is
/// a git checkout and the file is tracked, otherwise a rename. Both sides are checkpointed, so
/// a restore puts the file back and removes the new one.
/// Returns how, and the sides too large to checkpoint.
pub fn rename(
    ws: &mut Workspace,
    from: &RelPath,
    to: &RelPath,
) -> Result<(Moved, Vec<NotSaved>), ToolError> {
    let verb = "move";
    if from.is_root() || to.is_root() {
        return Err(ToolError::refused(
            RefusalClass::Args,
            "move refused — the project root cannot be moved or replaced. Name files inside it."
                .into(),
        ));
    }
    // Moving a control file away counts as deleting it; onto one, as writing it.
    check_boundary(from, from, verb)?;
    check_boundary(to, to, verb)?;
    let meta = ws.jail.symlink_metadata(from)?;
    if meta.is_dir() {
        return Err(ToolError::refused(RefusalClass::Other, format!(
            "move refused — {from} is a directory; ws_mv moves one file at a time. Move its files one by one."
        )));
    }
    let from_real = ws.jail.resolve(&from.parent())?.join(from.file_name());
    let protected = check_boundary_on_disk(&ws.jail, from, &from_real, verb)?;
    check_focus(ws, from, &from_real, verb)?;
    check_protect(ws, from, &from_real, verb)?;
    match ws.jail.symlink_metadata(to) {
        Err(PathError::NotFound { .. }) => {}
        Ok(_) => {
            return Err(ToolError::refused(RefusalClass::Other, format!(
                "move refused — {to} already exists and ws_mv never overwrites. Choose another name, or delete {to} first with ws_delete if it should go."
            )))
        }
        Err(e) => return Err(e.into()),
    }
    let to_target = target(ws, to, verb)?;
    if ws.config.permission_mode == PermissionMode::DryRun {
        return Ok((Moved::DryRun, Vec::new()));
    }
    not_in_review(ws, verb)?;
    let from_raw = RawPath::from_rel(&from_real);
    let to_raw = RawPath::from_rel(&to_target.real);
    let too_large = meta.is_file() && meta.len() > ws.config.checkpoint_max_bytes;
    if ws.config.file_checkpoints && too_large && ws.session.checkpoints.contains(&to_raw) {
        return Err(ToolError::refused(RefusalClass::Other, format!(
            "move refused — {from} is too large to checkpoint ({} bytes, over checkpoint_max_bytes), and {to} was already changed in this session, so undoing the session would lose the file. Choose another name.",
            meta.len()
        )));
    }
    let not_saved = checkpoint(ws, &protected, &from_raw)?;
    match &not_saved {
        // The file exists only at its new name then; a restore must leave that alone.
        Some(ns) => {
            let max = ws.config.checkpoint_max_bytes;
            ws.session
                .checkpoints
                .keep_unsaved(&ws.jail, &to_raw, ns.size, max)?;
        }
        None => {
            let to_protected = to_target.protected.clone();
            checkpoint(ws, &to_protected, &to_raw)?;
        }
    }
    let to_dir = anchored(
        &ws.jail,
        &to_target.protected,
        &RawPath::from_rel(&to_target.real.parent()),
        true,
        Writer::Tool,
        verb,
        to,
    )?;
    let how = if git_tracked(ws, &from_real) {
        git_mv(ws, &from_real, &to_target.real)?;
        Moved::GitMv
    } else {
        let from_dir = anchored(
            &ws.jail,
            &protected,
            &RawPath::from_rel(&from_real.parent()),
            false,
            Writer::Tool,
            verb,
            from,
        )?;
        from_dir
            .rename(from_real.file_name(), &to_dir, to_target.real.file_name())
            .map_err(|e| {
                ToolError::refused(RefusalClass::Io, format!("move of {from} failed: {e}"))
            })?;
        Moved::Renamed
    };
    ws.session.moved(&from_real, &to_target.real);
    ws.session.symbols.touch(&from_real);
    ws.session.symbols.touch(&to_target.real);
    ws.session.changed.insert(from_real);
    ws.session.changed.insert(to_target.real);
    Ok((how, not_saved.into_iter().collect()))
}

/// True when the project is a git checkout (a `.git` at the root) that tracks `path`.
fn git_tracked(ws: &Workspace, path: &RelPath) -> bool {
    if ws
        .jail
        .symlink_metadata(&RelPath::root().join(".git"))
        .is_err()
    {
        return false;
    }
    let Ok(mut cmd) = crate::git::command(ws.jail.root()) else {
        return false;
    };
    cmd.args(["ls-files", "--error-unmatch", "--"])
        .arg(path.as_path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `git mv`, hardened like every git slmcode runs (no hooks, fsmonitor or filters).
fn git_mv(ws: &Workspace, from: &RelPath, to: &RelPath) -> Result<(), ToolError> {
    let mut cmd = crate::git::command(ws.jail.root())
        .map_err(|e| ToolError::refused(RefusalClass::Io, format!("git mv could not run: {e}")))?;
    let out = cmd
        .args(["mv", "--"])
        .arg(from.as_path())
        .arg(to.as_path())
        .output()
        .map_err(|e| ToolError::refused(RefusalClass::Io, format!("git mv could not run: {e}")))?;
    if !out.status.success() {
        return Err(ToolError::refused(
            RefusalClass::Io,
            format!(
                "git mv {from} {to} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        ));
    }
    Ok(())
}

/// The focus guard: with `focus:` globs configured, only matching paths may change.
/// Refuses a change of a path `protect` names ([`crate::protect`]).
fn check_protect(
    ws: &Workspace,
    given: &RelPath,
    real: &RelPath,
    verb: &str,
) -> Result<(), ToolError> {
    match crate::protect::Protect::new(&ws.config.protect) {
        Some(p) => p.check(&ws.jail, given, real, verb),
        None => Ok(()),
    }
}

fn check_focus(
    ws: &Workspace,
    given: &RelPath,
    real: &RelPath,
    verb: &str,
) -> Result<(), ToolError> {
    // The user's focus, and a project's, which can only narrow it: a change must match each.
    for focus in [&ws.config.focus, &ws.config.focus_project] {
        if focus.is_empty() {
            continue;
        }
        let mut builder = globset::GlobSetBuilder::new();
        for g in focus {
            if let Ok(glob) = globset::GlobBuilder::new(g).literal_separator(true).build() {
                builder.add(glob);
            }
        }
        let set = builder.build().map_err(|e| {
            ToolError::refused(
                RefusalClass::Other,
                format!("the focus globs are invalid: {e}"),
            )
        })?;
        if !(set.is_match(given.as_str()) && set.is_match(real.as_str())) {
            return Err(ToolError::refused(RefusalClass::Focus, format!(
                "{verb} refused — {given} is outside this task's focus. Only paths matching {} may be changed; work within those files.",
                focus
                    .iter()
                    .map(|g| format!("\"{g}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Ok(())
}

fn verb_of(tool: &str) -> &'static str {
    match tool {
        "ws_edit" => "edit",
        "ws_patch" => "patch",
        "ws_mv" => "move",
        "ws_delete" => "delete",
        _ => "write",
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
            return Err(ToolError::refused(RefusalClass::Other, format!(
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
