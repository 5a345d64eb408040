//! The registry: every tool's name, description, schema and argument aliases, and the one
//! dispatch path. A call goes: arguments normalized (aliases, types, unknown keys named) → tool
//! → result cap. The CLI, the agent loop and the MCP server all call [`Registry::call`], so a
//! model sees the same text whichever way it reaches a tool.

use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::control::CallControl;
use crate::error::RefusalClass;
/// The error every [`Tool`] returns, re-exported beside the trait for tools defined outside
/// this crate (the harness's meta-tools).
pub use crate::error::ToolError;
use crate::outcome::Outcome;
use crate::output::cap;
use crate::workspace::Workspace;

mod args;
pub use args::{unknown_args_error, Args};

/// The JSON type of a parameter, as the schema shows it and as [`Args`] checks it.
/// The harness reads a tool call written as Qwen3-Coder XML, whose values are raw text, by
/// these same kinds, so there is one list of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    String,
    /// A whole number at least `min`.
    Integer {
        min: u64,
    },
    Boolean,
    /// A list of strings; a single string with one item a line is accepted too.
    StringList,
    /// Any JSON object, passed through as it is (the arguments `mcp_call` forwards).
    Object,
}

impl Kind {
    fn schema(self) -> Value {
        match self {
            Kind::String => serde_json::json!({"type": "string"}),
            Kind::Integer { .. } => serde_json::json!({"type": "integer"}),
            Kind::Boolean => serde_json::json!({"type": "boolean"}),
            Kind::StringList => serde_json::json!({"type": "array", "items": {"type": "string"}}),
            Kind::Object => serde_json::json!({"type": "object"}),
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Kind::String => "string",
            Kind::Integer { .. } => "whole number",
            Kind::Boolean => "true or false",
            Kind::StringList => "list of strings",
            Kind::Object => "JSON object",
        }
    }
}

/// The other names models give a file's `path` (`file_path` is Claude Code's, `filePath`
/// opencode's): one list, so every tool that takes a file accepts the same spellings.
pub const FILE_PATH_ALIASES: &[&str] = &["file_path", "filePath", "file", "filename"];

/// The other names models give a `path` that may be a directory (ws_list, ws_grep).
pub const ANY_PATH_ALIASES: &[&str] = &[
    "dir",
    "directory",
    "folder",
    "file",
    "file_path",
    "filePath",
    "filename",
];

/// One parameter of a tool.
#[derive(Debug)]
pub struct Param {
    pub name: &'static str,
    pub kind: Kind,
    pub required: bool,
    /// Shown to the model in the schema; one short line.
    pub description: &'static str,
    /// Other spellings models use for this parameter; the canonical name wins when both appear.
    pub aliases: &'static [&'static str],
}

/// What a call can do to the world. MCP clients show these as tool annotations (omitted
/// hints mean "destructive, open world", so all four are always set), and the loop guard
/// treats read-only tools differently from tools that change things.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Effect {
    /// Never changes the workspace.
    pub read_only: bool,
    /// May remove or overwrite what is there (as opposed to only adding).
    pub destructive: bool,
    /// Repeating the same call has no further effect.
    pub idempotent: bool,
    /// Reaches beyond the project (network, other programs' state).
    pub open_world: bool,
}

impl Effect {
    /// Looks, changes nothing, and stays inside the project.
    pub const READ_ONLY: Effect = Effect {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    };
}

/// The model-facing definition of a tool.
#[derive(Debug)]
pub struct ToolSpec {
    pub name: &'static str,
    /// Written for a 7B reader: what it is for, and when to use something else. Owned for
    /// tools whose description names what they reach at run time (mcp_call's servers).
    pub description: Cow<'static, str>,
    pub params: &'static [Param],
    /// A complete, valid call, quoted in argument errors so the retry is a copy.
    pub example: &'static str,
    /// What a call can do: MCP annotations, and how the loop guard judges a repeat.
    pub effect: Effect,
    /// Appended when a result is truncated: how to get what was cut.
    pub rest_hint: &'static str,
    /// When true, unknown argument names reach the tool (in [`Args::unknown`]) instead of
    /// being refused by the registry, because the tool's own refusal says more.
    pub passes_unknown_args: bool,
}

impl ToolSpec {
    /// The JSON schema of the arguments, as offered to a model.
    pub fn schema(&self) -> Value {
        let mut props = Map::new();
        for p in self.params {
            let mut s = p.kind.schema();
            // A name that says it all (`path`, `pattern`) is offered without a description:
            // every token here is paid on every turn.
            if let (Value::Object(o), false) = (&mut s, p.description.is_empty()) {
                o.insert("description".into(), Value::String(p.description.into()));
            }
            props.insert(p.name.into(), s);
        }
        let required: Vec<Value> = self
            .params
            .iter()
            .filter(|p| p.required)
            .map(|p| Value::String(p.name.into()))
            .collect();
        // Kept small: every token here is paid on every turn of a small model's context.
        // Unknown keys are answered by the registry with the accepted names, which helps more
        // than a schema's `additionalProperties: false`.
        let mut schema = serde_json::json!({"type": "object", "properties": props});
        if !required.is_empty() {
            schema["required"] = Value::Array(required);
        }
        schema
    }

    fn accepted(&self) -> String {
        if self.params.is_empty() {
            return "no arguments".to_string();
        }
        self.params
            .iter()
            .map(|p| {
                format!(
                    "{} ({}{})",
                    p.name,
                    p.kind.describe(),
                    if p.required { ", required" } else { "" }
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A successful tool result before the cap: the text and, beside it, what the call did.
#[derive(Debug)]
pub struct Reply {
    pub text: String,
    /// Overrides the spec's `rest_hint` when the tool knows a sharper one (the exact next call).
    pub rest_hint: Option<String>,
    /// What the call did, as data (an edit's rung, a write's creation).
    pub outcome: Outcome,
}

impl Reply {
    /// This reply with `outcome` as what the call did.
    pub fn with_outcome(mut self, outcome: Outcome) -> Reply {
        self.outcome = outcome;
        self
    }
}

impl From<String> for Reply {
    fn from(text: String) -> Reply {
        Reply {
            text,
            rest_hint: None,
            outcome: Outcome::Done,
        }
    }
}

/// What a caller gets back: the capped text, whether it is an error, and what the call did
/// (carried past the cap untouched, so no caller reads the text to learn it).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ToolResult {
    pub text: String,
    pub is_error: bool,
    pub outcome: Outcome,
}

impl ToolResult {
    /// A refusal the registry itself gives (unknown tool, loop guard, a blocking hook).
    fn refused(class: RefusalClass, text: String) -> ToolResult {
        ToolResult {
            text,
            is_error: true,
            outcome: Outcome::Refused(class),
        }
    }
}

/// A tool: its spec and its behaviour. One file per tool under `tools/`; the harness adds
/// its own (mcp_call, ws_skill) through [`Registry::with`].
pub trait Tool: Send + Sync {
    fn spec(&self) -> &ToolSpec;
    fn run(&self, ws: &mut Workspace, args: &Args) -> Result<Reply, ToolError>;
}

/// What runs around every call: the user's hooks. `before` may stop a call (its text becomes
/// the result); `after` may add a note to the result. Attached with [`Registry::with_hooks`].
pub trait CallHooks: Send + Sync {
    /// `Some(text)` blocks the call; the text is what the model reads instead.
    fn before(&self, ws: &Workspace, tool: &str, args: &Value) -> Option<String>;
    /// `Some(text)` is appended to the result.
    fn after(
        &self,
        ws: &Workspace,
        tool: &str,
        args: &Value,
        result: &ToolResult,
    ) -> Option<String>;
}

/// The set of tools offered to a caller.
#[derive(Clone)]
pub struct Registry {
    tools: Vec<Arc<dyn Tool>>,
    hooks: Option<Arc<dyn CallHooks>>,
}

impl Registry {
    /// A set of `tools`, offered in this order, with no hooks. The coding set is
    /// `Registry::coding()`, defined beside the tools.
    pub fn new(tools: Vec<Arc<dyn Tool>>) -> Registry {
        Registry { tools, hooks: None }
    }

    /// This set plus one more tool, offered after the others. A tool of the same name is
    /// replaced, so a name always means one tool.
    pub fn with(mut self, tool: Arc<dyn Tool>) -> Registry {
        let name = tool.spec().name;
        self.tools.retain(|t| t.spec().name != name);
        self.tools.push(tool);
        self
    }

    /// This set without the named tools (an edit format offers one edit tool).
    pub fn without(mut self, names: &[&str]) -> Registry {
        self.tools.retain(|t| !names.contains(&t.spec().name));
        self
    }

    /// This set with the named tools offered after all the others, in their order: an edit
    /// format offers its own edit tool first and keeps the others callable.
    pub fn with_last(mut self, names: &[&str]) -> Registry {
        let (last, first): (Vec<_>, Vec<_>) = self
            .tools
            .into_iter()
            .partition(|t| names.contains(&t.spec().name));
        self.tools = first.into_iter().chain(last).collect();
        self
    }

    /// This set with `hooks` run around every call.
    pub fn with_hooks(mut self, hooks: Arc<dyn CallHooks>) -> Registry {
        self.hooks = Some(hooks);
        self
    }

    /// The specs of the offered tools, in a stable order.
    pub fn specs(&self) -> impl Iterator<Item = &ToolSpec> + '_ {
        self.tools.iter().map(|t| t.spec())
    }

    /// `raw` as the named tool would see it: aliases resolved, types coerced. `None` when the
    /// tool is unknown or the arguments cannot be normalized. For logs that should show what
    /// ran, not how the model spelled it.
    pub fn canonical_args(&self, name: &str, raw: &Value) -> Option<Value> {
        let tool = self.tools.iter().find(|t| t.spec().name == name)?;
        Args::normalize(tool.spec(), raw)
            .ok()
            .map(|a| a.canonical())
    }

    /// The names of the offered tools, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|t| t.spec().name).collect()
    }

    /// Runs one call and returns the capped result. Never panics on any input: a bug inside a
    /// tool is turned into an error result so a long-running session keeps serving.
    ///
    /// ```
    /// use slmcode_aci::{Config, Registry, Workspace};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    /// let mut ws = Workspace::open(dir.path(), Config::default()).unwrap();
    /// let registry = Registry::coding();
    /// let read = registry.call(&mut ws, "ws_read", &serde_json::json!({"file_path": "a.txt"}));
    /// assert_eq!(read.text, "     1|hello");
    /// let missing = registry.call(&mut ws, "ws_read", &serde_json::json!({"path": "b.txt"}));
    /// assert!(missing.is_error);
    /// ```
    pub fn call(&self, ws: &mut Workspace, name: &str, raw_args: &Value) -> ToolResult {
        let max = ws.config.max_tool_chars;
        let Some(tool) = self.tools.iter().find(|t| t.spec().name == name) else {
            return ToolResult::refused(
                RefusalClass::UnknownTool,
                cap(
                    &self.unknown_tool(name),
                    max,
                    "ask for one of the tools listed",
                ),
            );
        };
        let spec = tool.spec();
        // Arguments are normalized before anything looks at them: the loop guard and the
        // hooks see canonical names and types, so `file_path` cannot walk past a hook that
        // checks `path`. Arguments that cannot be normalized are shown as sent.
        let normalized = Args::normalize(spec, raw_args);
        let canonical = match &normalized {
            Ok(args) => args.canonical(),
            Err(_) => raw_args.clone(),
        };
        // The loop guard sees every call, whichever caller made it.
        // A call that changes things is stopped before it runs; a read-only one is stopped
        // when it gives the same answer as before (a file changed from outside reads anew).
        let key = crate::loopguard::call_key(name, &canonical);
        if !spec.effect.read_only && ws.session.loop_guard.repeated(&key, None) {
            let nudge = ws.session.loop_guard.intervene(name);
            return ToolResult::refused(RefusalClass::Loop, cap(&nudge, max, ""));
        }
        if let Some(text) = self
            .hooks
            .as_ref()
            .and_then(|h| h.before(ws, name, &canonical))
        {
            return ToolResult::refused(RefusalClass::Blocked, cap(&text, max, ""));
        }
        let epoch = ws.session.read_epoch();
        let outcome = normalized.and_then(|args| {
            catch_unwind(AssertUnwindSafe(|| tool.run(ws, &args))).unwrap_or_else(|_| {
                Err(ToolError::refused(
                    RefusalClass::Internal,
                    format!("internal error in {name} (a bug in slmcode, not in your call); try a different approach"),
                ))
            })
        });
        let changed_state =
            (!spec.effect.read_only && outcome.is_ok()) || ws.session.read_epoch() != epoch;
        let (mut text, is_error, hint, outcome) = match outcome {
            Ok(reply) => (
                reply.text,
                false,
                reply
                    .rest_hint
                    .unwrap_or_else(|| spec.rest_hint.to_string()),
                reply.outcome,
            ),
            Err(e) => (
                e.to_string(),
                true,
                spec.rest_hint.to_string(),
                Outcome::Refused(e.class()),
            ),
        };
        if let Some(hooks) = &self.hooks {
            let raw = ToolResult {
                text: text.clone(),
                is_error,
                outcome: outcome.clone(),
            };
            if let Some(note) = hooks.after(ws, name, &canonical, &raw) {
                text.push('\n');
                text.push_str(&note);
            }
        }
        // No result shows a secret, whichever tool or hook produced it.
        let text = ws.secrets.redact(&text);
        let result = ToolResult {
            text: cap(&text, max, &hint),
            is_error,
            outcome,
        };
        let hash = crate::loopguard::result_hash(&result.text, result.is_error);
        if spec.effect.read_only
            && !changed_state
            && ws.session.loop_guard.repeated(&key, Some(hash))
        {
            let nudge = ws.session.loop_guard.intervene(name);
            return ToolResult::refused(RefusalClass::Loop, cap(&nudge, max, ""));
        }
        ws.session.loop_guard.record(key, hash, changed_state);
        result
    }

    /// [`Registry::call`] under `control`: the tools that can run long stop when it is
    /// cancelled and report progress to it. A call cancelled before it finished is answered
    /// as cancelled, whatever partial result the tool had (a walk cut short is not an answer).
    pub fn call_with(
        &self,
        ws: &mut Workspace,
        name: &str,
        raw_args: &Value,
        control: &CallControl,
    ) -> ToolResult {
        if control.is_cancelled() {
            return cancelled(name);
        }
        let outer = std::mem::replace(&mut ws.control, control.clone());
        let result = self.call(ws, name, raw_args);
        ws.control = outer;
        if control.is_cancelled() {
            let mut stopped = cancelled(name);
            // A command that was killed still says what it printed and how it ended.
            if matches!(result.outcome, Outcome::Ran(_)) {
                stopped.text = format!("{}\n{}", stopped.text, result.text);
            }
            return stopped;
        }
        result
    }

    /// An unknown name answered with the tools closest in *purpose* — an edit-like name gets
    /// the edit tools, never a spelling neighbour such as ws_list — and by spelling only when
    /// the name says nothing of its purpose.
    fn unknown_tool(&self, name: &str) -> String {
        let names: Vec<&str> = self.tools.iter().map(|t| t.spec().name).collect();
        let by_purpose: Vec<&str> = purpose_of(name)
            .iter()
            .copied()
            .filter(|t| names.contains(t))
            .collect();
        let close = if !by_purpose.is_empty() {
            let list: Vec<String> = by_purpose
                .iter()
                .map(|t| {
                    let example = self
                        .tools
                        .iter()
                        .find(|x| x.spec().name == *t)
                        .map_or("", |x| x.spec().example);
                    format!("{t} {example}")
                })
                .collect();
            format!(" For that, use {}.", list.join(" or "))
        } else {
            names
                .iter()
                .map(|n| (strsim::jaro_winkler(n, name), *n))
                .filter(|(s, _)| *s > 0.85)
                .max_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(_, n)| format!(" Did you mean {n}?"))
                .unwrap_or_default()
        };
        format!(
            "unknown tool \"{name}\".{close} Available tools: {}",
            names.join(", ")
        )
    }
}

/// The tools that do what a name says, by the words in it: `edit_code` → the edit tools.
fn purpose_of(name: &str) -> &'static [&'static str] {
    let words: Vec<String> = name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .flat_map(split_camel)
        .map(|w| w.to_ascii_lowercase())
        .filter(|w| !w.is_empty())
        .collect();
    let has = |keys: &[&str]| words.iter().any(|w| keys.contains(&w.as_str()));
    // Most specific first: "replace_in_file" is an edit, "read_file" a read.
    if has(&[
        "edit", "replace", "patch", "diff", "modify", "change", "update", "insert", "apply",
        "rewrite", "fix", "str",
    ]) {
        &["ws_edit", "ws_patch", "ws_write"]
    } else if has(&["write", "create", "save", "new"]) {
        &["ws_write", "ws_edit", "ws_patch"]
    } else if has(&["delete", "remove", "rm", "unlink"]) {
        &["ws_delete"]
    } else if has(&["move", "rename", "mv"]) {
        &["ws_mv"]
    } else if has(&[
        "read", "view", "open", "cat", "show", "get", "file", "content", "contents",
    ]) {
        &["ws_read"]
    } else if has(&["grep", "search", "find", "rg", "query", "lookup"]) {
        &["ws_grep", "ws_glob"]
    } else if has(&["ls", "list", "dir", "tree", "directory", "folder", "glob"]) {
        &["ws_list", "ws_glob"]
    } else if has(&[
        "run", "exec", "execute", "shell", "bash", "sh", "cmd", "command", "terminal", "test",
        "build",
    ]) {
        &["ws_shell"]
    } else {
        &[]
    }
}

/// `readFile` as `read`, `File`.
fn split_camel(word: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    for c in word.chars() {
        if c.is_ascii_uppercase() && out.last().is_some_and(|w| !w.is_empty()) {
            out.push(String::new());
        }
        if let Some(w) = out.last_mut() {
            w.push(c);
        }
    }
    out
}

/// The answer to a call cancelled before it finished.
fn cancelled(name: &str) -> ToolResult {
    ToolResult::refused(
        RefusalClass::Cancelled,
        format!("{name} was cancelled before it finished; what it changed so far stays changed."),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_names_get_the_tools_of_their_purpose() {
        let registry = crate::Registry::coding();
        let msg = registry.unknown_tool("edit_code");
        assert!(
            msg.starts_with("unknown tool \"edit_code\". For that, use ws_edit {"),
            "{msg}"
        );
        assert!(
            msg.contains(" or ws_patch {") && !msg.contains("Did you mean"),
            "{msg}"
        );
        assert!(registry
            .unknown_tool("readFileContents")
            .contains("For that, use ws_read {"));
        assert!(registry
            .unknown_tool("run_tests")
            .contains("For that, use ws_shell {"));
        assert!(registry
            .unknown_tool("renameFile")
            .contains("For that, use ws_mv {"));
        // A name that says nothing of its purpose: the spelling neighbour.
        assert!(registry
            .unknown_tool("ws_raed")
            .starts_with("unknown tool \"ws_raed\". Did you mean ws_read?"));
        // An edit tool the set lacks is not suggested.
        let msg = registry.without(&["ws_patch"]).unknown_tool("apply_diff");
        assert!(
            msg.contains("use ws_edit {") && !msg.contains("ws_patch {"),
            "{msg}"
        );
    }

    static SPEC: ToolSpec = ToolSpec {
        name: "t",
        description: Cow::Borrowed("test"),
        params: &[
            Param {
                name: "path",
                kind: Kind::String,
                required: true,
                description: "the file",
                aliases: &["file_path", "filePath", "file"],
            },
            Param {
                name: "offset",
                kind: Kind::Integer { min: 1 },
                required: false,
                description: "first line",
                aliases: &[],
            },
            Param {
                name: "flag",
                kind: Kind::Boolean,
                required: false,
                description: "a flag",
                aliases: &[],
            },
        ],
        example: "{\"path\":\"a.rs\"}",
        effect: Effect::READ_ONLY,
        rest_hint: "",
        passes_unknown_args: false,
    };

    #[test]
    fn aliases_map_and_canonical_wins() {
        let a = Args::normalize(&SPEC, &json!({"file_path": "x"})).unwrap();
        assert_eq!(a.str("path"), Some("x"));
        let a = Args::normalize(&SPEC, &json!({"file": "alias", "path": "canon"})).unwrap();
        assert_eq!(a.str("path"), Some("canon"));
    }

    #[test]
    fn unknown_keys_are_named_with_the_accepted_ones() {
        let e = Args::normalize(&SPEC, &json!({"path": "x", "lines": 3}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"lines\""), "{e}");
        assert!(
            e.contains("path (string, required), offset (whole number)"),
            "{e}"
        );
    }

    #[test]
    fn types_are_coerced_or_explained() {
        let a =
            Args::normalize(&SPEC, &json!({"path": "x", "offset": "12", "flag": "true"})).unwrap();
        assert_eq!(a.int("offset"), Some(12));
        assert!(a.flag("flag"));
        let e = Args::normalize(&SPEC, &json!({"path": "x", "offset": "twelve"}))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("\"offset\" must be a whole number, got \"twelve\""),
            "{e}"
        );
        let e = Args::normalize(&SPEC, &json!({"path": "x", "offset": 0}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("smallest allowed is 1"), "{e}");
        let e = Args::normalize(&SPEC, &json!({"path": ["a"]}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"path\" must be a string"), "{e}");
    }

    #[test]
    fn missing_required_and_non_objects() {
        let e = Args::normalize(&SPEC, &json!({})).unwrap_err().to_string();
        assert!(e.contains("t needs \"path\""), "{e}");
        assert!(Args::normalize(&SPEC, &json!("{\"path\":\"x\"}")).is_ok());
        assert!(Args::normalize(&SPEC, &json!([1])).is_err());
        assert!(Args::normalize(&SPEC, &json!({"path": "x", "offset": null})).is_ok());
    }
}
