//! ws_shell: one bounded, policed command. The policy decides on the parsed command what may
//! run; the run is bounded in time and output and leaves nothing behind; where the kernel has
//! Landlock, the command may write only inside the workspace (never `.slmcode/`), the temp
//! directory and /dev/null.

use std::borrow::Cow;

use std::io::{BufRead, Write};
use std::sync::Arc;
use std::time::Duration;

use crate::boundary::{Boundary, Protected, CONTROL_DIR, SCRATCH};
use crate::config::{SandboxMode, ShellPermission};
use crate::git;
use crate::path::RelPath;
use crate::registry::{Args, Effect, Kind, Param, Reply, Tool, ToolError, ToolSpec};
use crate::shell;
use crate::shell::policy::{self, Policy};
use crate::shell::run::{run, Exit, RunOutput, RunSpec};
use crate::shell::sandbox::{self, Plan, Report};
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
        let wanted = args
            .int("timeout_sec")
            .unwrap_or(ws.config.shell_timeout as u64);
        let timeout = wanted.min(ws.config.shell_timeout_max as u64);
        // The scratch directory exists, so the command can write there while the rest of
        // .slmcode/ is read-only to it.
        let _ = ws
            .jail
            .create_dir_all(&RelPath::root().join(CONTROL_DIR).join(SCRATCH));
        let protected = Protected::discover(&ws.jail);
        let policy = Policy {
            allow_prefixes: ws.config.shell_allow.clone(),
            path: shell::env::path_dirs(ws.jail.root()),
            timeout_secs: timeout,
        };
        policy::check(&command, &policy, &ws.jail, &protected)
            .map_err(|r| ToolError::Refused(r.to_string()))?;
        if let Some(linked) = protected.linked.first() {
            return Err(ToolError::Refused(format!(
                "ws_shell refused: {linked} has another hard link in the project, so a command could change it through that other name, past the sandbox. Ask the user to remove the extra link (or to run the command themselves) instead."
            )));
        }
        if ws.config.shell_permission == ShellPermission::Ask && !ask(&command) {
            return Err(ToolError::Refused(format!(
                "ws_shell refused: `{command}` needs the user's approval (shell_permission: ask) and it was not given — or there is no terminal to ask on. Do without it, or ask the user to run it."
            )));
        }
        let Executed {
            out,
            report,
            removed,
        } = execute(ws, &command, Duration::from_secs(timeout), protected)?;

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
        for path in removed {
            text.push_str(&format!(
                "\n[slmcode removed {path}, which the command created: a git directory there would run its config the next time the user runs git. Creating repositories is the user's step.]"
            ));
        }
        text.push('\n');
        text.push_str(&report.note());
        Ok(text.into())
    }
}

/// What one command did, and what confined it.
pub struct Executed {
    pub out: RunOutput,
    pub report: Report,
    /// `.git` entries the command created, which were removed.
    pub removed: Vec<RelPath>,
}

/// Runs one command the policy already allowed, the one way ws_shell does: the sandbox the
/// config asks for, the clean environment with the call's own TMPDIR and the git hardening,
/// and afterwards no new `.git` entry. `protected` is what the project protects, found just
/// before. `slmcode doctor` calls it too, so what it reports is what a call gets.
pub fn execute(
    ws: &mut Workspace,
    command: &str,
    timeout: Duration,
    protected: Protected,
) -> Result<Executed, ToolError> {
    let root = ws.jail.root().to_path_buf();
    // A temp directory of the call's own, given as TMPDIR and removed afterwards.
    let temp = RunTemp::create().map_err(|e| {
        ToolError::Refused(format!("ws_shell could not make a temp directory: {e}"))
    })?;
    let cache = match ws.config.sandbox {
        SandboxMode::Off => None,
        _ => shell::env::sandbox_cache(&root),
    };
    let (confinement, report) = match ws.config.sandbox {
        SandboxMode::Off => (
            sandbox::processes_only(),
            sandbox::off_report("sandbox: off in the config"),
        ),
        mode => sandbox::prepare(&Plan {
            root: &root,
            protected: &protected,
            temp: &temp.0,
            cache: cache.as_deref(),
            network: ws.config.shell_network,
            namespaces: mode == SandboxMode::Auto,
        }),
    };
    let tmp = temp.0.to_string_lossy().into_owned();
    let mut env = shell::env::base(&root);
    env.extend(
        ["TMPDIR", "TMP", "TEMP"]
            .iter()
            .map(|k| (k.to_string(), tmp.clone())),
    );
    if let Some(cache) = &cache {
        let cache = cache.to_string_lossy().into_owned();
        env.push(("npm_config_cache".into(), format!("{cache}/npm")));
        env.push(("XDG_CACHE_HOME".into(), cache));
    }
    // git under the command runs nothing the repository configured either.
    let git_dirs: Vec<std::path::PathBuf> = protected
        .entries
        .iter()
        .filter(|e| {
            e.boundary == Boundary::Git && e.exists && e.is_dir && e.path.as_str() != ".git"
        })
        .map(|e| root.join(e.path.as_path()))
        .collect();
    env.extend(git::env(&git::overrides(&root, &git_dirs)));
    let out = run(&RunSpec {
        command: command.to_string(),
        cwd: root.clone(),
        timeout,
        env,
        stdin: Vec::new(),
        confinement: Arc::new(confinement),
    })
    .map_err(|e| ToolError::Refused(format!("ws_shell could not start the command: {e}")))?;
    let removed = remove_new_git_entries(&root, &protected, &Protected::discover(&ws.jail));
    Ok(Executed {
        out,
        report,
        removed,
    })
}

/// A call's private temp directory, removed when dropped: made fresh with `mkdtemp` (mode
/// 0700, a random name, never an existing directory) beneath a per-user directory that must be
/// ours and private, so nobody who can write /tmp can plant or watch it.
struct RunTemp(std::path::PathBuf);

impl RunTemp {
    fn create() -> std::io::Result<RunTemp> {
        use std::os::unix::ffi::OsStringExt;
        use std::os::unix::fs::{DirBuilderExt, MetadataExt};
        // SAFETY: geteuid cannot fail.
        let uid = unsafe { libc::geteuid() };
        let base = std::env::temp_dir().join(format!("slmcode-{uid}"));
        match std::fs::DirBuilder::new().mode(0o700).create(&base) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        let meta = std::fs::symlink_metadata(&base)?;
        if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
            return Err(std::io::Error::other(format!(
                "{} is not a private directory of this user; remove it",
                base.display()
            )));
        }
        let template = base.join("shell-XXXXXX");
        let mut bytes = std::ffi::CString::new(template.into_os_string().into_vec())
            .map_err(std::io::Error::other)?
            .into_bytes_with_nul();
        // SAFETY: mkdtemp rewrites the XXXXXX of the NUL-terminated buffer we own in place.
        let made = unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) };
        if made.is_null() {
            return Err(std::io::Error::last_os_error());
        }
        bytes.pop();
        Ok(RunTemp(std::ffi::OsString::from_vec(bytes).into()))
    }
}

impl Drop for RunTemp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Removes every entry named like `.git` that exists now but did not before the command: a
/// runner may create one where the sandbox had nothing to protect (a project inside a parent
/// repository, an uninitialised submodule), and the user's git would then run its config.
fn remove_new_git_entries(
    root: &std::path::Path,
    before: &Protected,
    after: &Protected,
) -> Vec<RelPath> {
    let mut removed = Vec::new();
    for path in &after.git_names {
        if before.git_names.contains(path) {
            continue;
        }
        let abs = root.join(path.as_path());
        let gone = match std::fs::symlink_metadata(&abs) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&abs),
            Ok(_) => std::fs::remove_file(&abs),
            Err(_) => continue,
        };
        if gone.is_ok() {
            removed.push(path.clone());
        }
    }
    removed
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
