//! `.slmcode/hooks.json`: commands the user wants run before and after tool calls —
//! `PreToolUse` / `PostToolUse` entries with a regex `matcher` on the tool name, a `command`
//! (run by `/bin/sh -c` in the project root) and `timeout_sec` (default 60). A non-zero
//! `PreToolUse` hook blocks the call and its output becomes the result; a `PostToolUse` hook's
//! output is added to the result.
//!
//! A repository carries its hooks.json with it, so hooks run only when the user trusted that
//! exact content: `slmcode hooks trust` stores its BLAKE3 hash for this project (see
//! [`crate::approvals`]), and any change to the file needs trusting again. The hash is taken of
//! the very bytes that are parsed, so the file cannot be swapped between the check and the run. Tools can never write
//! `.slmcode/`, so a model cannot plant or change a hook either.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};
use slmcode_aci::boundary::{layout, Protected};
use slmcode_aci::path::{Jail, RelPath};
use slmcode_aci::registry::CallHooks;
use slmcode_aci::shell::exec::{execute, Extra};
use slmcode_aci::shell::run::Exit;
use slmcode_aci::{ToolResult, Workspace};

/// The default time a hook may take.
pub const DEFAULT_HOOK_TIMEOUT_SEC: u64 = 60;

/// The most of a hook's output that reaches the result.
const MAX_HOOK_OUTPUT: usize = 4000;

/// The most of a result passed in `SLMCODE_HOOK_RESULT` (stdin has it whole).
const MAX_ENV_RESULT: usize = 32 * 1024;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(rename = "PreToolUse", default)]
    pre: Vec<RawHook>,
    #[serde(rename = "PostToolUse", default)]
    post: Vec<RawHook>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHook {
    #[serde(default = "any_tool")]
    matcher: String,
    command: String,
    timeout_sec: Option<u64>,
}

fn any_tool() -> String {
    ".*".into()
}

/// One hook, ready to run.
#[derive(Clone, Debug)]
pub struct Hook {
    pub event: &'static str,
    pub matcher: String,
    regex: regex::Regex,
    pub command: String,
    pub timeout: Duration,
}

/// The hooks of a project.
#[derive(Clone, Debug, Default)]
pub struct Hooks {
    pub pre: Vec<Hook>,
    pub post: Vec<Hook>,
}

/// hooks.json as found in a project: its content hash and what it says.
pub struct HooksFile {
    pub hash: String,
    pub hooks: Hooks,
}

fn hooks_path() -> RelPath {
    layout::path(layout::HOOKS)
}

/// Reads `.slmcode/hooks.json` through the jail and parses those same bytes (so the content
/// whose hash is checked is the content that runs); `None` when there is none. A file that
/// does not parse is an error carrying its hash, so an untrusted broken file can be told
/// apart from a trusted one.
pub fn load(jail: &Jail) -> Result<Option<HooksFile>, (Option<String>, String)> {
    let bytes = match slmcode_aci::fsx::read_bounded(
        jail,
        &hooks_path(),
        slmcode_aci::readback::CONTROL_MAX_BYTES,
    ) {
        Ok(b) => b,
        Err(slmcode_aci::ToolError::Path(slmcode_aci::path::PathError::NotFound { .. })) => {
            return Ok(None)
        }
        // The error names the file already.
        Err(e) => return Err((None, e.to_string())),
    };
    let hash = blake3::hash(&bytes).to_hex().to_string();
    parse(&bytes, hash.clone())
        .map(Some)
        .map_err(|e| (Some(hash), e))
}

/// The hooks in `bytes`, whose content hash is `hash`.
fn parse(bytes: &[u8], hash: String) -> Result<HooksFile, String> {
    let raw: RawFile = serde_json::from_slice(bytes).map_err(|e| {
        format!(
            ".slmcode/hooks.json: {e} (expected {{\"PreToolUse\": [{{\"matcher\": \"ws_edit|ws_write\", \"command\": \"…\", \"timeout_sec\": 60}}], \"PostToolUse\": […]}})"
        )
    })?;
    let build = |event: &'static str, list: Vec<RawHook>| -> Result<Vec<Hook>, String> {
        list.into_iter()
            .map(|h| {
                if h.command.trim().is_empty() {
                    return Err(format!(
                        ".slmcode/hooks.json: a {event} hook has an empty command"
                    ));
                }
                // Anchored, so "ws_edit" does not also match "ws_edit_all".
                let regex = regex::Regex::new(&format!("^(?:{})$", h.matcher)).map_err(|e| {
                    format!(
                        ".slmcode/hooks.json: {event} matcher `{}` is not a valid regex: {e}",
                        h.matcher
                    )
                })?;
                Ok(Hook {
                    event,
                    matcher: h.matcher,
                    regex,
                    command: h.command,
                    timeout: Duration::from_secs(
                        h.timeout_sec.unwrap_or(DEFAULT_HOOK_TIMEOUT_SEC).max(1),
                    ),
                })
            })
            .collect()
    };
    Ok(HooksFile {
        hash,
        hooks: Hooks {
            pre: build("PreToolUse", raw.pre)?,
            post: build("PostToolUse", raw.post)?,
        },
    })
}

impl Hooks {
    /// Runs one hook with the event as JSON on stdin and in `SLMCODE_HOOK_*` variables, in
    /// the same sandbox as a ws_shell command: a trusted hook that runs a project script
    /// (`./scripts/check.sh`) runs whatever the model may have written there since.
    fn fire(
        &self,
        ws: &Workspace,
        hook: &Hook,
        tool: &str,
        args: &Value,
        result: Option<&ToolResult>,
    ) -> (bool, String) {
        let mut event = json!({"event": hook.event, "tool": tool, "arguments": args});
        let mut env = vec![
            ("SLMCODE_HOOK_EVENT".to_string(), hook.event.to_string()),
            ("SLMCODE_HOOK_TOOL".to_string(), tool.to_string()),
            ("SLMCODE_HOOK_ARGS".to_string(), args.to_string()),
        ];
        if let Some(r) = result {
            event["result"] = json!({"text": r.text, "is_error": r.is_error, "outcome": r.outcome});
            let text: String = r.text.chars().take(MAX_ENV_RESULT).collect();
            env.push(("SLMCODE_HOOK_RESULT".to_string(), text));
            env.push(("SLMCODE_HOOK_IS_ERROR".to_string(), r.is_error.to_string()));
        }
        let extra = Extra {
            env,
            stdin: event.to_string().into_bytes(),
        };
        let protected = Protected::discover(&ws.jail);
        match execute(ws, &hook.command, hook.timeout, protected, extra) {
            Ok(done) => {
                let out = done.out;
                let ok = out.exit == Exit::Code(0);
                let mut text = out.text();
                if text.chars().count() > MAX_HOOK_OUTPUT {
                    text = text.chars().take(MAX_HOOK_OUTPUT).collect::<String>() + "…";
                }
                let status = match out.exit {
                    Exit::Code(c) => format!("exit {c}"),
                    Exit::Signal(s) => format!("signal {s}"),
                    Exit::TimedOut => format!("timed out after {} s", hook.timeout.as_secs()),
                    Exit::Cancelled => "cancelled".to_string(),
                };
                (ok, format!("{status}: {}", text.trim_end()))
            }
            Err(e) => (false, format!("could not start: {e}")),
        }
    }
}

impl CallHooks for Hooks {
    fn before(&self, ws: &Workspace, tool: &str, args: &Value) -> Option<String> {
        for hook in self.pre.iter().filter(|h| h.regex.is_match(tool)) {
            let (ok, output) = self.fire(ws, hook, tool, args, None);
            if !ok {
                return Some(format!(
                    "{tool} was blocked by the project's PreToolUse hook `{}` ({output}). Nothing ran; change the call so the hook allows it.",
                    hook.command
                ));
            }
        }
        None
    }

    fn after(
        &self,
        ws: &Workspace,
        tool: &str,
        args: &Value,
        result: &ToolResult,
    ) -> Option<String> {
        let notes: Vec<String> = self
            .post
            .iter()
            .filter(|h| h.regex.is_match(tool))
            .filter_map(|hook| {
                let (ok, output) = self.fire(ws, hook, tool, args, Some(result));
                let quiet = ok && output.trim_end().ends_with("exit 0:");
                (!quiet).then(|| format!("[PostToolUse hook `{}` {output}]", hook.command))
            })
            .collect();
        (!notes.is_empty()).then(|| notes.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(hooks: &str) -> (tempfile::TempDir, Jail) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".slmcode")).unwrap();
        std::fs::write(dir.path().join(".slmcode/hooks.json"), hooks).unwrap();
        let jail = Jail::open(dir.path()).unwrap();
        (dir, jail)
    }

    #[test]
    fn files_are_read_and_checked() {
        let (_d, jail) =
            project(r#"{"PreToolUse": [{"matcher": "ws_(edit|write)", "command": "true"}]}"#);
        let f = load(&jail).unwrap().unwrap();
        assert_eq!(f.hooks.pre.len(), 1);
        assert_eq!(f.hooks.pre[0].timeout, Duration::from_secs(60));
        assert!(
            f.hooks.pre[0].regex.is_match("ws_edit")
                && !f.hooks.pre[0].regex.is_match("ws_edit_all")
        );
        for (bad, want) in [
            (
                r#"{"PreToolUse": [{"matcher": "(", "command": "x"}]}"#,
                "not a valid regex",
            ),
            (r#"{"PreToolUse": [{"command": " "}]}"#, "empty command"),
            (
                r#"{"PreToolUse": [{"command": "x", "when": 1}]}"#,
                "unknown field",
            ),
            ("not json", "expected"),
        ] {
            let (_d, jail) = project(bad);
            let (hash, e) = load(&jail).err().unwrap();
            assert!(hash.is_some(), "{bad}: the hash of what was read");
            assert!(e.contains(want), "{bad}: {e}");
        }
        let empty = tempfile::tempdir().unwrap();
        assert!(load(&Jail::open(empty.path()).unwrap()).unwrap().is_none());
    }
}
