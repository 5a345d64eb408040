//! One command run the way ws_shell runs it — and the user's hooks too: the sandbox the
//! config asks for, the clean environment with the call's own `TMPDIR`, the project's cache
//! directory and the git hardening, and afterwards no new `.git` entry.

use std::sync::Arc;
use std::time::Duration;

use crate::boundary::{Boundary, Protected};
use crate::config::SandboxMode;
use crate::error::RefusalClass;
use crate::error::ToolError;
use crate::git;
use crate::path::RelPath;
use crate::shell;
use crate::shell::memory::{human, Bound, MemoryLimit, OutOfMemory};
use crate::shell::run::{run, RunOutput, RunSpec};
use crate::shell::sandbox::{self, Plan, Report};
use crate::workspace::Workspace;

/// What a caller adds to a command: variables (a hook's event) and bytes for its stdin.
#[derive(Debug, Clone, Default)]
pub struct Extra {
    pub env: Vec<(String, String)>,
    pub stdin: Vec<u8>,
}

/// What one command did, and what confined it.
pub struct Executed {
    pub out: RunOutput,
    pub report: Report,
    /// `.git` entries the command created, which were removed.
    pub removed: Vec<RelPath>,
    /// The memory bound it ran under.
    pub memory: Bounded,
}

/// The memory bound a command ran under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounded {
    pub bytes: u64,
    pub bound: Bound,
}

impl Bounded {
    /// For `slmcode doctor`: the bound and how it is kept.
    pub fn describe(&self) -> String {
        let how = match self.bound {
            Bound::Cgroup => {
                "for the command and everything it starts together (a cgroup of its own)"
            }
            Bound::Rlimit => "for each of its processes (an rlimit: no cgroup could be made here)",
        };
        format!("memory: at most {} {how}", human(self.bytes))
    }

    /// The result's line when the command went over, or `None`.
    pub fn note(&self, out_of_memory: OutOfMemory) -> Option<String> {
        let limit = human(self.bytes);
        match out_of_memory {
            OutOfMemory::No => None,
            OutOfMemory::Killed => Some(format!(
                "[out of memory: the command went over shell_memory_max ({limit}, for it and everything it started) and was killed. Run less at once (one test file, fewer jobs), or ask the user to raise shell_memory_max]"
            )),
            OutOfMemory::Likely => Some(format!(
                "[the command seems to have run out of memory: each of its processes may use at most shell_memory_max ({limit}). Run less at once (one test file, fewer jobs), or ask the user to raise shell_memory_max]"
            )),
        }
    }
}

/// Runs one command the policy already allowed, the one way ws_shell does: the sandbox the
/// config asks for, the clean environment with the call's own TMPDIR and the git hardening,
/// and afterwards no new `.git` entry. `protected` is what the project protects, found just
/// before. `slmcode doctor` calls it too, so what it reports is what a call gets.
pub fn execute(
    ws: &Workspace,
    command: &str,
    timeout: Duration,
    protected: Protected,
    extra: Extra,
) -> Result<Executed, ToolError> {
    if let Some(why) = sandbox::unavailable() {
        return Err(ToolError::refused(RefusalClass::Other, why));
    }
    let root = ws.jail.root().to_path_buf();
    // A temp directory of the call's own, given as TMPDIR and removed afterwards.
    let temp = RunTemp::create().map_err(|e| {
        ToolError::refused(
            RefusalClass::Io,
            format!("ws_shell could not make a temp directory: {e}"),
        )
    })?;
    let cache = match ws.config.sandbox {
        SandboxMode::Off => None,
        _ => shell::env::sandbox_cache(&root),
    };
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let path_dirs = shell::env::path_dirs(&root);
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
            home: home.as_deref(),
            read_allow: &ws.config.shell_read_allow,
            path_dirs: &path_dirs,
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
    env.extend(extra.env);
    let memory = Arc::new(MemoryLimit::new(ws.config.shell_memory_max));
    let out = run(&RunSpec {
        command: command.to_string(),
        cwd: root.clone(),
        timeout,
        env,
        stdin: extra.stdin,
        confinement: Arc::new(confinement),
        memory: Some(memory.clone()),
        control: ws.control.clone(),
    })
    .map_err(|e| {
        ToolError::refused(
            RefusalClass::Io,
            format!("ws_shell could not start the command: {e}"),
        )
    })?;
    let removed = remove_new_git_entries(&root, &protected, &Protected::discover(&ws.jail));
    Ok(Executed {
        out,
        report,
        removed,
        memory: Bounded {
            bytes: memory.bytes(),
            bound: memory.bound(),
        },
    })
}

/// What a command in `ws` may read, as a call would get it: for `slmcode doctor`.
pub fn reads(ws: &Workspace) -> sandbox::Reads {
    if let Some(why) = sandbox::unavailable() {
        return sandbox::Reads::Off(why);
    }
    if ws.config.sandbox == SandboxMode::Off {
        return sandbox::Reads::Off("sandbox: off in the config".into());
    }
    let Ok(temp) = RunTemp::create() else {
        return sandbox::Reads::Off("no temp directory could be made to find out".into());
    };
    let root = ws.jail.root().to_path_buf();
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let path_dirs = shell::env::path_dirs(&root);
    let protected = Protected::discover(&ws.jail);
    let cache = shell::env::sandbox_cache(&root);
    let (_, report) = sandbox::prepare(&Plan {
        root: &root,
        protected: &protected,
        temp: &temp.0,
        cache: cache.as_deref(),
        network: ws.config.shell_network,
        namespaces: ws.config.sandbox == SandboxMode::Auto,
        home: home.as_deref(),
        read_allow: &ws.config.shell_read_allow,
        path_dirs: &path_dirs,
    });
    report.reads
}

/// A call's private temp directory, removed when dropped: made fresh (mode 0700, a random
/// name, never an existing directory) beneath a per-user directory that must be ours and
/// private, so nobody who can write /tmp can plant or watch it.
struct RunTemp(std::path::PathBuf);

impl RunTemp {
    fn create() -> std::io::Result<RunTemp> {
        let base =
            std::env::temp_dir().join(format!("slmcode-{}", crate::platform::host::user_id()));
        crate::platform::fs::create_private_dir(&base)?;
        if !crate::platform::fs::is_private_dir(&std::fs::symlink_metadata(&base)?) {
            return Err(std::io::Error::other(format!(
                "{} is not a private directory of this user; remove it",
                base.display()
            )));
        }
        crate::platform::fs::create_private_temp_dir(&base, "shell-").map(RunTemp)
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
