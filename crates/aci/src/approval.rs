//! Asking the user before a step that needs their word: a command under
//! `shell_permission: ask`, a change under review mode. A front end that talks with the user
//! (the interactive session) installs an [`Approver`] on the workspace and answers inline;
//! without one, ws_shell asks on the terminal when there is one and review mode stages the
//! change for `slmcode pending`, as before.
//!
//! The approver is called on the tool's thread while the call holds the workspace, so it may
//! block until the user answers, but must not lock the workspace itself.

use std::sync::Arc;

/// What the user is asked to approve.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Request {
    /// ws_shell wants to run this command (it passed the policy already).
    Command { command: String },
    /// An edit tool wants to write this change (review mode).
    Change {
        path: String,
        tool: String,
        /// The change as a unified diff.
        diff: String,
    },
}

/// The user's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    Yes,
    /// Not allowed; the reason, when given, goes to the model.
    No {
        reason: Option<String>,
    },
    /// The user stopped the whole message at the question (Ctrl-C): the call is cancelled.
    Stop,
}

/// Decides a [`Request`]; may block on the user. Cloning shares it.
#[derive(Clone)]
pub struct Approver(Arc<dyn Fn(&Request) -> Answer + Send + Sync>);

impl Approver {
    pub fn new(decide: impl Fn(&Request) -> Answer + Send + Sync + 'static) -> Approver {
        Approver(Arc::new(decide))
    }

    /// Asks, and waits for the answer.
    pub fn ask(&self, request: &Request) -> Answer {
        (self.0)(request)
    }
}

impl std::fmt::Debug for Approver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Approver")
    }
}

/// The refusal a model reads when the user said no: what was not done, the user's reason
/// when they gave one, and what to do instead.
pub fn refused_text(what: &str, reason: Option<&str>) -> String {
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(r) => format!(
            "{what}: the user said no, and why: \"{r}\". Nothing was changed. Take that into account and go on another way."
        ),
        None => format!(
            "{what}: the user said no. Nothing was changed. Do not try the same again; go on another way or ask the user what they want."
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_reaches_the_model_and_a_blank_one_does_not() {
        let with = refused_text("ws_shell refused `rm -r build`", Some(" keep the build "));
        assert!(with.contains("\"keep the build\""), "{with}");
        let blank = refused_text("ws_shell refused `rm -r build`", Some("  "));
        assert!(blank.contains("Do not try the same again"), "{blank}");
    }
}
