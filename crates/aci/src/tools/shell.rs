//! ws_shell: one bounded, policed command. The policy decides on the parsed command what may
//! run; the run is bounded in time and output and leaves nothing behind; where the kernel has
//! Landlock, the command may write only inside the workspace (never `.slmcode/`), the temp
//! directory and /dev/null.

use std::borrow::Cow;

use std::io::{BufRead, Write};
use std::time::Duration;

use crate::approval::{self, Answer, Request};
use crate::boundary::{Protected, CONTROL_DIR, SCRATCH};
use crate::config::ShellPermission;
use crate::error::RefusalClass;
use crate::error::ToolError;
use crate::outcome::{Outcome, Ran};
use crate::path::RelPath;
use crate::registry::{Args, Effect, Kind, Param, Reply, Tool, ToolSpec};
use crate::shell;
use crate::shell::exec::{execute, Executed, Extra};
use crate::shell::policy::{self, Policy};
use crate::shell::run::Exit;
use crate::terminal::Human;
use crate::workspace::Workspace;

pub struct ShellTool;

static SPEC: ToolSpec = ToolSpec {
    name: "ws_shell",
    description: Cow::Borrowed("Run one command in the project root, e.g. git log or a test runner (cargo test, pytest). No $(…), no &, no writing over files."),
    params: &[
        Param {
            name: "command",
            kind: Kind::String,
            required: true,
            description: "the command, e.g. \"cargo test -q\"",
            aliases: &["cmd", "script", "shell"],
        },
        Param {
            name: "timeout_sec",
            kind: Kind::Integer { min: 1 },
            required: false,
            description: "seconds (default 120)",
            aliases: &["timeout", "timeout_secs"],
        },
    ],
    example: "{\"command\":\"cargo test -q\"}",
    effect: Effect { read_only: false, destructive: true, idempotent: false, open_world: true },
    passes_unknown_args: false,
    rest_hint: "Narrow the command's output (e.g. pipe it through `tail -50` or `grep`).",
};

impl Tool for ShellTool {
    fn spec(&self) -> &ToolSpec {
        &SPEC
    }

    fn run(&self, ws: &mut Workspace, args: &Args) -> Result<Reply, ToolError> {
        let command = args.str("command").unwrap_or_default().trim().to_string();
        if ws.config.shell_permission == ShellPermission::Deny {
            return Err(ToolError::refused(RefusalClass::Policy,
                "ws_shell refused: running commands is turned off here (shell_permission: deny). Use ws_read, ws_grep and the edit tools instead.".into(),
            ));
        }
        let wanted = args
            .int("timeout_sec")
            .unwrap_or(ws.config.shell_timeout as u64);
        let timeout = wanted.min(ws.config.shell_timeout_max as u64);
        let protected = Protected::discover(&ws.jail);
        let policy = Policy {
            allow_prefixes: ws.config.shell_allow.clone(),
            path: shell::env::path_dirs(ws.jail.root()),
            timeout_secs: timeout,
        };
        policy::check(&command, &policy, &ws.jail, &protected)
            .map_err(|r| ToolError::refused(RefusalClass::Policy, r.to_string()))?;
        if let Some(linked) = protected.linked.first() {
            return Err(ToolError::refused(RefusalClass::Policy, format!(
                "ws_shell refused: {linked} has another hard link in the project, so a command could change it through that other name, past the sandbox. Ask the user to remove the extra link (or to run the command themselves) instead."
            )));
        }
        if ws.config.shell_permission == ShellPermission::Ask {
            match &ws.approver {
                Some(approver) => {
                    let asked = Request::Command {
                        command: command.clone(),
                    };
                    let reason = match approver.ask(&asked) {
                        Answer::Yes => None,
                        Answer::No { reason } => Some(reason),
                        Answer::Stop => {
                            // Stopped at the question: the call ends cancelled, as Ctrl-C ends it.
                            ws.control.cancel();
                            Some(None)
                        }
                    };
                    if let Some(reason) = reason {
                        return Err(ToolError::refused(
                            RefusalClass::Policy,
                            approval::refused_text(
                                &format!("ws_shell refused `{command}`"),
                                reason.as_deref(),
                            ),
                        ));
                    }
                }
                None if !ask(&command) => {
                    return Err(ToolError::refused(RefusalClass::Policy, format!(
                        "ws_shell refused: `{command}` needs the user's approval (shell_permission: ask) and it was not given — or there is no terminal to ask on. Do without it, or ask the user to run it."
                    )));
                }
                None => {}
            }
        }
        // Only a command that runs gets the scratch directory (a refused one leaves the project
        // as it was), so it can write there while the rest of .slmcode/ is read-only to it.
        let protected = if protected.scratch.is_none() {
            let _ = ws
                .jail
                .create_dir_all(&RelPath::root().join(CONTROL_DIR).join(SCRATCH));
            Protected::discover(&ws.jail)
        } else {
            protected
        };
        // The write guard: protected files as they were, to put back what the command changes.
        let guard = crate::protect::Protect::new(&ws.config.protect).map(|p| {
            let before = p.snapshot(&ws.jail);
            (p, before)
        });
        let executed = execute(
            ws,
            &command,
            Duration::from_secs(timeout),
            protected,
            Extra::default(),
        );
        // Put back first, whatever became of the command.
        let put_back = guard
            .map(|(protect, before)| before.restore_changed(&protect, &ws.jail))
            .unwrap_or_default();
        let Executed {
            out,
            report,
            removed,
            memory,
        } = executed?;

        let mut text = out.text();
        if out.total == 0 && out.exit == Exit::Code(0) {
            text = format!("(command succeeded with no output: {command})");
        } else {
            if !text.ends_with('\n') && !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&match out.exit {
                Exit::Code(0) => "[exit code 0]".to_string(),
                Exit::Code(c) => format!("[exit code {c}]"),
                Exit::Signal(s) => format!("[killed by signal {s}]"),
                Exit::TimedOut => format!(
                    "[timed out after {timeout} s — the command and everything it started were killed; pass a larger timeout_sec (at most {}) or run something quicker]",
                    ws.config.shell_timeout_max
                ),
                Exit::Cancelled => format!(
                    "[cancelled after {:.1} s — the command and everything it started were killed]",
                    out.elapsed.as_secs_f64()
                ),
            });
        }
        if out.omitted > 0 {
            // Said at the end, where the result cap keeps it.
            text.push_str(&format!(
                "\n[the command wrote {} bytes; {} bytes from the middle were not kept — narrow the output with `| tail -50` or `| grep …`]",
                out.total, out.omitted
            ));
        }
        if wanted > timeout {
            text.push_str(&format!(
                "\n[timeout_sec {wanted} was capped at shell_timeout_max = {timeout}]"
            ));
        }
        if let Some(note) = memory.note(out.out_of_memory) {
            text.push('\n');
            text.push_str(&note);
        }
        for path in removed {
            text.push_str(&format!(
                "\n[slmcode removed {path}, which the command created: a git directory there would run its config the next time the user runs git. Creating repositories is the user's step.]"
            ));
        }
        if !put_back.is_empty() {
            text.push_str(&format!(
                "\n[the command changed protected files, so slmcode undid it: {}. They must stay as they are: solve the task without changing them.]",
                put_back.join("; ")
            ));
        }
        text.push('\n');
        text.push_str(&report.note());
        let ran = Ran {
            exit_code: match out.exit {
                Exit::Code(c) => Some(c),
                _ => None,
            },
            timed_out: out.exit == Exit::TimedOut,
        };
        Ok(Reply::from(text).with_outcome(Outcome::Ran(ran)))
    }
}

/// Asks on the terminal, when there is one. Headless (no /dev/tty) means no.
fn ask(command: &str) -> bool {
    let Ok(mut tty) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    else {
        return false;
    };
    // The command is the model's: shown escaped, so it cannot rewrite what is asked.
    let asked = write!(
        Human::new(&mut tty),
        "slmcode: allow ws_shell to run `{command}`? [y/N] "
    );
    if asked.is_err() {
        return false;
    }
    let mut answer = String::new();
    let mut reader = std::io::BufReader::new(tty);
    reader.read_line(&mut answer).is_ok() && matches!(answer.trim(), "y" | "Y" | "yes")
}
