//! git_status and git_diff: read-only views through the git binary.
//!
//! Run through [`crate::git::command`], so a hostile checkout cannot make them act: no pager,
//! hooks, fsmonitor or filters, no optional index locks (status must not write), no prompts;
//! the diff also passes `--no-ext-diff --no-textconv`.

use crate::error::RefusalClass;
use crate::outcome::Outcome;
use std::borrow::Cow;

use std::io::ErrorKind;

use crate::error::ToolError;
use crate::registry::{Args, Effect, Kind, Param, Reply, Tool, ToolSpec, FILE_PATH_ALIASES};
use crate::workspace::Workspace;

pub struct GitStatusTool;
pub struct GitDiffTool;

static STATUS_SPEC: ToolSpec = ToolSpec {
    name: "git_status",
    description: Cow::Borrowed("Changed and untracked files (git status --short)."),
    params: &[],
    example: "{}",
    effect: Effect::READ_ONLY,
    passes_unknown_args: false,
    rest_hint:
        "Look at one directory with ws_list, or at one file's changes with git_diff {\"path\":…}.",
};

static DIFF_SPEC: ToolSpec = ToolSpec {
    name: "git_diff",
    description: Cow::Borrowed("Uncommitted changes as a unified diff."),
    params: &[
        Param {
            name: "path",
            kind: Kind::String,
            required: false,
            description: "one file or directory",
            aliases: FILE_PATH_ALIASES,
        },
        Param {
            name: "staged",
            kind: Kind::Boolean,
            required: false,
            description: "show staged changes",
            aliases: &["cached"],
        },
    ],
    example: "{\"path\":\"src/main.rs\"}",
    effect: Effect::READ_ONLY,
    passes_unknown_args: false,
    rest_hint: "Pass a path to see one file: git_diff {\"path\":\"…\"}.",
};

impl Tool for GitStatusTool {
    fn spec(&self) -> &ToolSpec {
        &STATUS_SPEC
    }

    fn run(&self, ws: &mut Workspace, _args: &Args) -> Result<Reply, ToolError> {
        let out = git(ws, &["status", "--short"])?;
        if out.trim().is_empty() {
            return Ok("(working tree clean: no changes and no untracked files)"
                .to_string()
                .into());
        }
        Ok(out.trim_end().to_string().into())
    }
}

impl Tool for GitDiffTool {
    fn spec(&self) -> &ToolSpec {
        &DIFF_SPEC
    }

    fn run(&self, ws: &mut Workspace, args: &Args) -> Result<Reply, ToolError> {
        let path = Some(ws.jail.parse_or_root(args.str("path"))?).filter(|p| !p.is_root());
        let staged = args.flag("staged");
        let mut argv = vec![
            "diff",
            "--no-ext-diff",
            "--no-textconv",
            "--no-color",
            "--relative",
        ];
        if staged {
            argv.push("--cached");
        }
        let pathspec;
        if let Some(p) = &path {
            pathspec = p.to_string();
            argv.push("--");
            argv.push(&pathspec);
        }
        let out = git(ws, &argv)?;
        let what = if staged { "staged" } else { "unstaged" };
        if out.trim().is_empty() {
            return Ok(match &path {
                Some(p) => format!("(no {what} changes in {p})"),
                None => format!("(no {what} changes)"),
            }
            .into());
        }
        // When the diff will be cut, the steering text names the changed files, so the next
        // call can ask for one of them.
        let rest_hint = if out.chars().count() > ws.config.max_tool_chars && path.is_none() {
            let mut names_argv = vec!["diff", "--name-only", "--relative"];
            if staged {
                names_argv.push("--cached");
            }
            let names = git(ws, &names_argv).unwrap_or_default();
            let names: Vec<&str> = names.lines().take(20).collect();
            Some(format!(
                "Pass a path to see one file: git_diff {{\"path\":\"{}\"}}. Changed files: {}.",
                names.first().copied().unwrap_or("…"),
                names.join(", ")
            ))
        } else {
            None
        };
        Ok(Reply {
            text: out.trim_end().to_string(),
            rest_hint,
            outcome: Outcome::Done,
        })
    }
}

/// Runs git in the workspace root with the hardening described above; an error result says
/// clearly when git is missing or the root is not a repository.
fn git(ws: &Workspace, argv: &[&str]) -> Result<String, ToolError> {
    let mut cmd = crate::git::command(ws.jail.root()).map_err(|e| match e {
        crate::git::GitError::Missing => ToolError::refused(RefusalClass::Io,
            "git is not installed (no \"git\" on PATH), so git_status and git_diff are unavailable. See files with ws_list and ws_glob instead.".into(),
        ),
        other => ToolError::refused(RefusalClass::Io, format!("{other}. See files with ws_list and ws_glob instead.")),
    })?;
    let output = cmd.args(argv).output().map_err(|e| {
        if e.kind() == ErrorKind::NotFound {
            ToolError::refused(RefusalClass::Io,
                "git is not installed (no \"git\" on PATH), so git_status and git_diff are unavailable. See files with ws_list and ws_glob instead.".into(),
            )
        } else {
            ToolError::refused(RefusalClass::Io, format!("git could not be started: {e}"))
        }
    })?;
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    if stderr.to_ascii_lowercase().contains("not a git repository") {
        return Err(ToolError::refused(RefusalClass::Other,
            "not a git repository: the project root is not inside a git checkout, so there is no status or diff to show. See files with ws_list and ws_glob instead.".into(),
        ));
    }
    Err(ToolError::refused(
        RefusalClass::Io,
        format!(
            "git {} failed: {}",
            argv.first().copied().unwrap_or_default(),
            stderr.trim()
        ),
    ))
}
