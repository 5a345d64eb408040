//! Review mode's staging store: a change the tools were asked to make waits in
//! `.slmcode/pending/<id>.json` until the user applies ([`crate::review::apply`]) or rejects
//! it with `slmcode pending`. This module only keeps the store; applying is the mutation
//! path's business, so the store sits below it. Records are sealed ([`crate::state`]): a change
//! shipped with a repository is never shown, listed or applied.

use serde::{Deserialize, Serialize};

use crate::boundary::CONTROL_DIR;
use crate::error::RefusalClass;
use crate::error::ToolError;
use crate::fsx;
use crate::path::{Jail, PathError, RelPath};
use crate::state;

/// Where staged changes live, relative to the root.
pub use crate::boundary::layout::PENDING as PENDING_DIR;

/// One staged change.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Pending {
    pub id: String,
    /// The file the change is for (symlinks resolved).
    pub path: String,
    pub tool: String,
    /// Seconds since the Unix epoch.
    pub created: u64,
    /// BLAKE3 (hex) of the file when the change was made; `None` when it did not exist.
    pub before: Option<String>,
    /// The complete new content.
    pub after: String,
}

fn dir() -> RelPath {
    RelPath::root().join(CONTROL_DIR).join(PENDING_DIR)
}

fn file_of(id: &str) -> Result<RelPath, ToolError> {
    state::check_id(id, "pending change", "slmcode pending list")?;
    Ok(dir().join(&format!("{id}.json")))
}

/// Stages a change and returns its id.
pub fn stage(
    jail: &Jail,
    path: &RelPath,
    before: Option<&[u8]>,
    after: &[u8],
    tool: &str,
) -> Result<String, ToolError> {
    let after = String::from_utf8(after.to_vec()).map_err(|_| {
        ToolError::refused(
            RefusalClass::Other,
            "review mode can only stage text (UTF-8) content".to_string(),
        )
    })?;
    let created = state::now();
    let mut n = 1;
    let id = loop {
        let id = format!("{created}-{n}");
        if jail.metadata(&file_of(&id)?).is_err() {
            break id;
        }
        n += 1;
    };
    let record = Pending {
        id: id.clone(),
        path: path.to_string(),
        tool: tool.to_string(),
        created,
        before: before.map(|b| blake3::hash(b).to_hex().to_string()),
        after,
    };
    state::write_json(jail, &file_of(&id)?, &record)?;
    Ok(id)
}

/// Every staged change, oldest first. One slmcode did not stage for this user is left out, and
/// reported.
pub fn list(jail: &Jail) -> Result<Vec<Pending>, ToolError> {
    let mut out = Vec::new();
    for id in state::list_names(jail, &dir())?
        .iter()
        .filter_map(|name| name.strip_suffix(".json"))
    {
        match load(jail, id) {
            Ok(p) => out.push(p),
            Err(e) if e.class() == RefusalClass::Untrusted => state::report_ignored(&e),
            Err(e) => return Err(e),
        }
    }
    out.sort_by(|a, b| (a.created, &a.id).cmp(&(b.created, &b.id)));
    Ok(out)
}

/// One staged change by id.
pub fn load(jail: &Jail, id: &str) -> Result<Pending, ToolError> {
    state::read_json(jail, &file_of(id)?, || {
        format!("no pending change {id} (see `slmcode pending list`)")
    })
}

/// The change as a diff against the file as it is now, plus whether the file moved on since.
pub fn show(jail: &Jail, id: &str) -> Result<String, ToolError> {
    let p = load(jail, id)?;
    let path = RelPath::parse(&p.path, jail.root())?;
    let current = current_bytes(jail, &path)?;
    let mut out = format!("{} — {} of {}\n", p.id, p.tool, p.path);
    if hash_of(current.as_deref()) != p.before {
        out.push_str("[the file has changed since this was staged; apply will refuse]\n");
    }
    out.push_str(&crate::text::unified_diff(
        &path,
        current.as_deref().unwrap_or_default(),
        p.after.as_bytes(),
    ));
    Ok(out)
}

/// Drops a staged change without applying it.
pub fn reject(jail: &Jail, id: &str) -> Result<String, ToolError> {
    let p = load(jail, id)?;
    remove(jail, id)?;
    Ok(format!("rejected {id} ({} of {})", p.tool, p.path))
}

pub(crate) fn remove(jail: &Jail, id: &str) -> Result<(), ToolError> {
    state::remove(jail, &dir().join(&format!("{id}.json")))
}

pub(crate) fn current_bytes(jail: &Jail, path: &RelPath) -> Result<Option<Vec<u8>>, ToolError> {
    match fsx::read_all(jail, path) {
        Ok(b) => Ok(Some(b)),
        Err(ToolError::Path(PathError::NotFound { .. })) => Ok(None),
        Err(e) => Err(e),
    }
}

pub(crate) fn hash_of(bytes: Option<&[u8]>) -> Option<String> {
    bytes.map(|b| blake3::hash(b).to_hex().to_string())
}
