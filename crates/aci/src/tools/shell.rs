//! ws_shell: one bounded, policed command. The policy decides on the parsed command what may
//! run; the run is bounded in time and output and leaves nothing behind; where the kernel has
//! Landlock, the command may write only inside the workspace (never `.slmcode/`), the temp
//! directory and /dev/null.

use std::borrow::Cow;

use std::io::{BufRead, Write};
use std::sync::Arc;
use std::time::Duration;

use crate::config::ShellPermission;
use crate::registry::{Args, Effect, Kind, Param, Reply, Tool, ToolError, ToolSpec};
use crate::shell::policy::{self, Policy};
use crate::shell::run::{run, Exit, RunSpec};
use crate::shell::sandbox;
use crate::workspace::Workspace;

pub struct ShellTool;

static SPEC: ToolSpec = ToolSpec {
    name: "ws_shell",
    description: Cow::Borrowed("Run one command in the project root: inspection (ls, git log) or a build/test runner (cargo test, pytest). No $(…), no &, no writing over files."),
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
            description: "seconds before it is killed (default 120)",
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
            return Err(ToolError::Refused(
                "ws_shell refused: running commands is turned off here (shell_permission: deny). Use ws_read, ws_grep and the edit tools instead.".into(),
            ));
        }
        let policy = Policy {
            allow_prefixes: ws.config.shell_allow.clone(),
        };
        policy::check(&command, &policy, &ws.jail)
            .map_err(|r| ToolError::Refused(r.to_string()))?;
        if ws.config.shell_permission == ShellPermission::Ask && !ask(&command) {
            return Err(ToolError::Refused(format!(
                "ws_shell refused: `{command}` needs the user's approval (shell_permission: ask) and it was not given — or there is no terminal to ask on. Do without it, or ask the user to run it."
            )));
        }
        let wanted = args
            .int("timeout_sec")
            .unwrap_or(ws.config.shell_timeout as u64);
        let timeout = wanted.min(ws.config.shell_timeout_max as u64);
        // A temp directory of the run's own, given as TMPDIR and removed afterwards.
        let temp = RunTemp::create().map_err(|e| {
            ToolError::Refused(format!("ws_shell could not make a temp directory: {e}"))
        })?;
        let (sandbox, sandbox_note) = if ws.config.sandbox {
            match sandbox::prepare(ws.jail.root(), &temp.0) {
                Ok(prepared) => (Some(Arc::new(prepared)), None),
                Err(e) => (None, Some(format!("[sandbox off: {}]", e.0))),
            }
        } else {
            (
                None,
                Some("[sandbox off: sandbox: off in the config]".to_string()),
            )
        };
        let tmp = temp.0.to_string_lossy().into_owned();
        let out = run(&RunSpec {
            command: command.clone(),
            cwd: ws.jail.root().to_path_buf(),
            timeout: Duration::from_secs(timeout),
            sandbox,
            extra_env: ["TMPDIR", "TMP", "TEMP"]
                .iter()
                .map(|k| (k.to_string(), tmp.clone()))
                .collect(),
            stdin: Vec::new(),
        })
        .map_err(|e| ToolError::Refused(format!("ws_shell could not start the command: {e}")))?;

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
        if let Some(note) = sandbox_note {
            text.push('\n');
            text.push_str(&note);
        }
        Ok(text.into())
    }
}

/// A run's private temp directory, removed when dropped.
struct RunTemp(std::path::PathBuf);

impl RunTemp {
    fn create() -> std::io::Result<RunTemp> {
        static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("slmcode-shell-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(RunTemp(dir))
    }
}

impl Drop for RunTemp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
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
    if write!(tty, "slmcode: allow ws_shell to run `{command}`? [y/N] ").is_err() {
        return false;
    }
    let mut answer = String::new();
    let mut reader = std::io::BufReader::new(tty);
    reader.read_line(&mut answer).is_ok() && matches!(answer.trim(), "y" | "Y" | "yes")
}
