//! Why a call did not succeed — the words a model reads, and beside them the class a program
//! reads. The harness, the bandit and the MCP server branch on [`RefusalClass`]; none of them
//! reads the words, so rewording a message can never change what is learned from it.

use serde::Serialize;

pub use crate::path::PathError;

/// What kind of refusal a call met. Stable data: the trajectory and MCP's
/// `structuredContent` carry it, and the bandit counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "class")]
pub enum RefusalClass {
    /// The file was never read in this session (read-before-edit).
    NotRead,
    /// The file changed on disk since it was read.
    Stale,
    /// The file, the text or the hunk's context was not found.
    NotFound,
    /// The text matches more than one place.
    Ambiguous {
        /// How many places it matches.
        count: usize,
    },
    /// The change would replace most of the file (use ws_write).
    OverEdit,
    /// A write would shrink or empty the file.
    Shrink,
    /// The arguments are malformed, missing or contradictory.
    Args,
    /// The path leaves the project, or is not a path a tool may use.
    Jail,
    /// The path is inside a protected place (`.slmcode/`, `.git/`).
    Boundary,
    /// The change broke the file's syntax and was undone.
    Reverted,
    /// A placeholder comment stands where real lines were.
    Placeholder,
    /// The path is outside the focus globs of the config.
    Focus,
    /// The path matches `protect`: the task must be solved without changing it.
    Protected,
    /// The shell policy refused the command.
    Policy,
    /// A PreToolUse hook blocked the call.
    Blocked,
    /// The loop guard stopped a repeated call.
    Loop,
    /// No tool has that name.
    UnknownTool,
    /// The file or the system could not be read or written.
    Io,
    /// A bug inside slmcode.
    Internal,
    /// The caller cancelled the call before it finished.
    Cancelled,
    /// A record under `.slmcode/` that slmcode did not write for this user (no valid state
    /// MAC, or too large to be one): nothing in it is used.
    Untrusted,
    /// Any other refusal that says how to retry.
    Other,
}

/// A refusal: its class and the message that tells the model how to retry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub class: RefusalClass,
    pub message: String,
}

/// Why a call did not succeed. The Display text is exactly what the model reads.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("{0}")]
    Path(#[from] PathError),
    #[error("{0}")]
    Args(String),
    /// The tool looked and refused, with a message that says how to retry.
    #[error("{}", .0.message)]
    Refused(Refusal),
}

impl ToolError {
    /// A refusal of `class` with the message the model reads.
    pub fn refused(class: RefusalClass, message: String) -> ToolError {
        ToolError::Refused(Refusal { class, message })
    }

    /// An I/O failure, said in the model's words.
    pub fn io(message: String) -> ToolError {
        ToolError::refused(RefusalClass::Io, message)
    }

    /// The class of this error.
    pub fn class(&self) -> RefusalClass {
        match self {
            ToolError::Path(p) => match p {
                PathError::NotFound { .. } => RefusalClass::NotFound,
                PathError::PermissionDenied { .. } | PathError::Io { .. } => RefusalClass::Io,
                _ => RefusalClass::Jail,
            },
            ToolError::Args(_) => RefusalClass::Args,
            ToolError::Refused(r) => r.class,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_follow_the_variant_not_the_words() {
        let e = ToolError::refused(
            RefusalClass::Ambiguous { count: 3 },
            "old_str found 3 times".into(),
        );
        assert_eq!(e.class(), RefusalClass::Ambiguous { count: 3 });
        assert_eq!(e.to_string(), "old_str found 3 times");
        // The same words under another class stay that class.
        let e = ToolError::refused(RefusalClass::Io, "old_str found 3 times".into());
        assert_eq!(e.class(), RefusalClass::Io);
        let e: ToolError = PathError::NotFound { path: "a".into() }.into();
        assert_eq!(e.class(), RefusalClass::NotFound);
        let e: ToolError = PathError::Parent {
            given: "../a".into(),
        }
        .into();
        assert_eq!(e.class(), RefusalClass::Jail);
        assert_eq!(ToolError::Args("x".into()).class(), RefusalClass::Args);
        assert_eq!(
            serde_json::to_value(RefusalClass::Ambiguous { count: 2 }).unwrap(),
            serde_json::json!({"class": "ambiguous", "count": 2})
        );
    }
}
