//! Applying a staged review change: through the one mutation path again (in auto mode), and
//! only onto the bytes the change was made against. Apart from the store ([`crate::pending`])
//! because the mutation path stages into the store, and applying calls the mutation path.

use crate::config::PermissionMode;
use crate::error::{RefusalClass, ToolError};
use crate::mutation::{self, Done};
use crate::path::RelPath;
use crate::pending::{current_bytes, hash_of, load, remove};
use crate::workspace::Workspace;

/// Applies a staged change through the mutation path (in auto mode), then removes it.
/// Refused when the file no longer has the bytes the change was made against.
pub fn apply(ws: &mut Workspace, id: &str) -> Result<String, ToolError> {
    let p = load(&ws.jail, id)?;
    let path = RelPath::parse(&p.path, ws.jail.root())?;
    let current = current_bytes(&ws.jail, &path)?;
    if hash_of(current.as_deref()) != p.before {
        return Err(ToolError::refused(RefusalClass::Stale, format!(
            "pending change {id} was made against a different version of {}; it was not applied. Reject it and redo the change.",
            p.path
        )));
    }
    let done = mutation::commit_as(
        ws,
        &path,
        current.as_deref(),
        p.after.into_bytes(),
        &p.tool,
        PermissionMode::Auto,
    )?;
    debug_assert_eq!(done.done, Done::Written);
    remove(&ws.jail, id)?;
    Ok(format!("applied {id}: wrote {}", p.path))
}
