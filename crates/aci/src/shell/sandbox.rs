//! The write sandbox for ws_shell, with Landlock: the child may write only inside the
//! workspace — never `.slmcode/` except `.slmcode/scratch/` — plus its own temp directory
//! (a fresh one per run, given to the command as TMPDIR, so a workspace that itself lives
//! under /tmp is not granted through it) and `/dev/null`. This is what stops an allowed `cargo test` or `npm test` from rewriting the
//! harness's own state. Reads are not restricted.
//!
//! Landlock grants are additive, so "the workspace minus `.slmcode/`" is built as grants on each
//! top-level entry except `.slmcode` (and except top-level symlinks, which could re-grant it),
//! plus `.slmcode/scratch`. The root directory itself gets no grant, so a sandboxed command
//! cannot create a new top-level file or directory.

use std::path::Path;
use std::sync::Mutex;

use landlock::{
    path_beneath_rules, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, RulesetStatus, ABI,
};

use crate::boundary::{CONTROL_DIR, SCRATCH};

/// A ruleset built in the parent, applied in the child between fork and exec.
pub struct Prepared {
    ruleset: Mutex<Option<RulesetCreated>>,
}

/// Why there is no sandbox for this run, for the result text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable(pub String);

/// Builds the ruleset for a workspace. Fails (with a reason to report) when the kernel has no
/// Landlock or the rules cannot be built.
pub fn prepare(root: &Path, temp: &Path) -> Result<Prepared, Unavailable> {
    let abi = ABI::V5;
    let write = AccessFs::from_write(abi);
    let mut grants = Vec::new();
    let entries = std::fs::read_dir(root)
        .map_err(|e| Unavailable(format!("cannot list the workspace: {e}")))?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name.to_string_lossy().eq_ignore_ascii_case(CONTROL_DIR) {
            continue;
        }
        // A top-level symlink could lead back into .slmcode/: never granted.
        if entry.file_type().map(|t| t.is_symlink()).unwrap_or(true) {
            continue;
        }
        grants.push(entry.path());
    }
    let scratch = root.join(CONTROL_DIR).join(SCRATCH);
    if std::fs::symlink_metadata(&scratch).is_ok_and(|m| m.is_dir()) {
        grants.push(scratch);
    }
    grants.push(temp.to_path_buf());
    grants.push("/dev/null".into());
    let ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(write)
        .and_then(|r| r.create())
        .and_then(|r| r.add_rules(path_beneath_rules(&grants, write)))
        .map_err(|e| Unavailable(format!("Landlock ruleset could not be built: {e}")))?;
    if !landlock_available() {
        return Err(Unavailable("the kernel has no Landlock".to_string()));
    }
    Ok(Prepared {
        ruleset: Mutex::new(Some(ruleset)),
    })
}

/// Whether this kernel supports Landlock at all.
fn landlock_available() -> bool {
    // SAFETY: landlock_create_ruleset with LANDLOCK_CREATE_RULESET_VERSION and no attributes
    // only reports the ABI version.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    version >= 1
}

impl Prepared {
    /// Restricts the calling process. Runs in the child after fork: it only takes the ruleset
    /// out of an uncontended mutex and makes two syscalls, no allocation.
    pub fn apply(&self) -> std::io::Result<()> {
        let taken = self.ruleset.lock().ok().and_then(|mut r| r.take());
        let Some(ruleset) = taken else {
            return Err(std::io::Error::other("sandbox already applied"));
        };
        match ruleset.restrict_self() {
            Ok(status) if status.ruleset != RulesetStatus::NotEnforced => Ok(()),
            Ok(_) => Err(std::io::Error::other("Landlock not enforced")),
            Err(e) => Err(std::io::Error::other(e.to_string())),
        }
    }
}
