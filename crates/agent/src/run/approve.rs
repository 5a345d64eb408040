//! Approvals inline: a step that needs the user's word goes on the event stream as
//! [`Event::Approval`], a front end's `decide` answers, and the answer goes on the stream as
//! [`Event::Approved`]. "Always" is remembered for the rest of the session: for a command, its
//! program and subcommand (`cargo test`, `git status`); for a change, its file.

use std::sync::{Arc, Mutex, PoisonError};

use slmcode_aci::approval::{Answer, Approver, Request};

use super::Agent;
use crate::events::{self, Event};

/// A front end's answer to an [`Event::Approval`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Yes,
    /// Yes, and the same prefix (or file) needs no asking for the rest of the session.
    Always,
    /// No; the reason, when given, goes to the model.
    No {
        reason: Option<String>,
    },
    /// No, and the message stops (Ctrl-C at the question): the call ends cancelled.
    Stop,
}

/// What an "always" covers: a command's program, and its subcommand when it has one (a word
/// that is not an option); a change's file.
pub fn always_key(request: &Request) -> String {
    match request {
        Request::Command { command } => {
            let mut words = command.split_whitespace();
            match (words.next(), words.next()) {
                (Some(program), Some(sub))
                    if !sub.starts_with('-')
                        && sub
                            .chars()
                            .all(|c| c.is_alphanumeric() || c == '-' || c == '_') =>
                {
                    format!("{program} {sub}")
                }
                (Some(program), _) => program.to_string(),
                (None, _) => String::new(),
            }
        }
        Request::Change { path, .. } => path.clone(),
    }
}

/// An "always" given: for commands or for changes, and its key.
type Remembered = (bool, String);

fn remembered(request: &Request) -> Remembered {
    (
        matches!(request, Request::Command { .. }),
        always_key(request),
    )
}

/// Whether an earlier "always" covers `request`.
fn covered(always: &[Remembered], request: &Request) -> bool {
    match request {
        Request::Command { command } => {
            let words: Vec<&str> = command.split_whitespace().collect();
            always.iter().any(|(is_command, key)| {
                let key: Vec<&str> = key.split(' ').collect();
                *is_command && !key.is_empty() && words.starts_with(&key)
            })
        }
        Request::Change { .. } => always.contains(&remembered(request)),
    }
}

impl Agent {
    /// From now on, a step that needs the user's word is asked through the event stream and
    /// decided by `decide` (which may block until the user answers).
    pub fn approve_with(&mut self, decide: impl Fn(&Request) -> Decision + Send + Sync + 'static) {
        let approver = approver(self.on_event.clone(), decide);
        self.workspace
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .approver = Some(approver);
    }
}

/// The approver [`Agent::approve_with`] installs, for a workspace several runs share (a plan's
/// steps): requests and answers go to `sink`, "always" is remembered in it.
pub fn approver(
    sink: events::EventSink,
    decide: impl Fn(&Request) -> Decision + Send + Sync + 'static,
) -> Approver {
    {
        let always: Arc<Mutex<Vec<Remembered>>> = Arc::default();
        Approver::new(move |request: &Request| {
            let known = covered(
                &always.lock().unwrap_or_else(PoisonError::into_inner),
                request,
            );
            if known {
                events::emit(
                    &sink,
                    &Event::Approved {
                        allowed: true,
                        always: true,
                        reason: None,
                    },
                );
                return Answer::Yes;
            }
            events::emit(
                &sink,
                &Event::Approval {
                    request: request.clone(),
                },
            );
            let decision = decide(request);
            let (answer, is_always) = match decision {
                Decision::Yes => (Answer::Yes, false),
                Decision::Always => {
                    always
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(remembered(request));
                    (Answer::Yes, true)
                }
                Decision::No { reason } => (Answer::No { reason }, false),
                Decision::Stop => (Answer::Stop, false),
            };
            let reason = match &answer {
                Answer::No { reason } => reason.clone(),
                Answer::Stop => Some("stopped".to_string()),
                Answer::Yes => None,
            };
            events::emit(
                &sink,
                &Event::Approved {
                    allowed: answer == Answer::Yes,
                    always: is_always,
                    reason,
                },
            );
            answer
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(c: &str) -> Request {
        Request::Command {
            command: c.to_string(),
        }
    }

    #[test]
    fn always_covers_the_program_and_subcommand_not_more() {
        assert_eq!(always_key(&command("cargo test -q")), "cargo test");
        let always = vec![remembered(&command("cargo test -q"))];
        assert!(covered(&always, &command("cargo test --all")));
        assert!(!covered(&always, &command("cargo publish")));
        assert!(!covered(&always, &command("cargotest")));
        assert_eq!(always_key(&command("ls -la")), "ls");
        assert_eq!(always_key(&command("python x.py")), "python");
    }

    #[test]
    fn always_for_a_file_is_that_file_only() {
        let change = |p: &str| Request::Change {
            path: p.into(),
            tool: "ws_edit".into(),
            diff: String::new(),
        };
        let always = vec![remembered(&change("src/a.py"))];
        assert!(covered(&always, &change("src/a.py")));
        assert!(!covered(&always, &change("src/b.py")));
        // A command named like the file is not covered by the file's approval.
        assert!(!covered(&always, &command("src/a.py")));
    }
}
