//! Tool names from other harnesses. A model fine-tuned on another agent calls *its* tools —
//! `read_file`, `str_replace_editor`, `apply_patch`, `bash`, Claude Code's `Edit` — whatever it
//! was offered. Where the meaning is plain, the call is mapped onto ours and runs, and the
//! result tells the model the right name; where it is not, the model gets the closest tool and
//! how to call it, never a spelling neighbour.

use serde_json::{Map, Value};

/// What a call to another harness's tool becomes.
#[derive(Debug, Clone, PartialEq)]
pub enum Foreign {
    /// Our tool and the arguments that mean the same.
    Run { tool: &'static str, args: Value },
    /// No one call of ours means the same: the closest tool, and why.
    Closest { tool: &'static str, why: String },
}

/// The names read as other harnesses' tools (lowercase), for the text-call parser to take
/// them as calls.
pub const NAMES: &[&str] = &[
    "read_file",
    "read",
    "view_file",
    "open_file",
    "write_file",
    "write",
    "create_file",
    "edit_file",
    "edit",
    "str_replace",
    "multiedit",
    "multi_edit",
    "str_replace_editor",
    "str_replace_based_edit_tool",
    "text_editor",
    "apply_patch",
    "replace_in_file",
    "bash",
    "shell",
    "run_terminal_cmd",
    "execute_command",
    "run_shell_command",
    "run_command",
    "list_dir",
    "list_files",
    "list_directory",
    "ls",
    "grep_search",
    "search_files",
    "grep",
    "glob",
    "file_search",
    "find_files",
];

/// `name` (as the model wrote it) read as another harness's tool, with its arguments mapped;
/// `None` when it is not one of [`NAMES`].
pub fn translate(name: &str, args: &Value) -> Option<Foreign> {
    let key = normalized(name);
    if !NAMES.contains(&key.as_str()) {
        return None;
    }
    let obj = args.as_object().cloned().unwrap_or_default();
    let run = |tool: &'static str, args: Map<String, Value>| Foreign::Run {
        tool,
        args: Value::Object(args),
    };
    Some(match key.as_str() {
        "read_file" | "read" | "view_file" | "open_file" => run("ws_read", read_args(obj)),
        "write_file" | "write" | "create_file" => {
            run("ws_write", renamed(obj, &[("file_text", "content")]))
        }
        "edit_file" | "edit" | "str_replace" => {
            let has = |keys: &[&str]| keys.iter().any(|k| obj.contains_key(*k));
            if has(&["old_str", "old_string", "search", "old"])
                && has(&["new_str", "new_string", "replace", "new"])
            {
                run("ws_edit", renamed(obj, &[("target_file", "path")]))
            } else {
                Foreign::Closest {
                    tool: "ws_edit",
                    why: format!("{name} without the exact text to replace (old_str) rewrites by instructions, which is not safe to guess"),
                }
            }
        }
        "multiedit" | "multi_edit" => Foreign::Closest {
            tool: "ws_edit",
            why: "several edits in one call; make one ws_edit per change".into(),
        },
        "str_replace_editor" | "str_replace_based_edit_tool" | "text_editor" => editor(name, obj),
        "apply_patch" => apply_patch(&obj),
        "replace_in_file" => run("ws_patch", obj),
        "bash" | "shell" | "run_terminal_cmd" | "execute_command" | "run_shell_command"
        | "run_command" => run("ws_shell", shell_args(&key, obj)),
        "list_dir" | "list_files" | "list_directory" | "ls" => run(
            "ws_list",
            renamed(
                obj,
                &[
                    ("relative_workspace_path", "path"),
                    ("target_directory", "path"),
                ],
            ),
        ),
        "grep_search" | "search_files" | "grep" => run(
            "ws_grep",
            renamed(
                obj,
                &[("include_pattern", "glob"), ("target_directory", "path")],
            ),
        ),
        _ => run("ws_glob", renamed(obj, &[("target_directory", "path")])),
    })
}

/// Lowercase, no namespace, `-` as `_`: `functions.Read` and `read-file` as `read`/`read_file`.
fn normalized(name: &str) -> String {
    let base = name.rsplit('.').next().unwrap_or(name);
    base.trim().to_ascii_lowercase().replace('-', "_")
}

/// `obj` with each `(from, to)` key renamed, unless `to` is already there.
fn renamed(mut obj: Map<String, Value>, pairs: &[(&str, &str)]) -> Map<String, Value> {
    for (from, to) in pairs {
        if !obj.contains_key(*to) {
            if let Some(v) = obj.remove(*from) {
                obj.insert((*to).to_string(), v);
            }
        }
    }
    obj
}

/// Cursor's and others' read arguments: a 1-based inclusive line range becomes offset+limit.
fn read_args(obj: Map<String, Value>) -> Map<String, Value> {
    let mut obj = renamed(
        obj,
        &[
            ("target_file", "path"),
            ("start_line_one_indexed", "offset"),
        ],
    );
    let end = obj
        .remove("end_line_one_indexed_inclusive")
        .or_else(|| obj.remove("end_line"));
    let start = obj.get("offset").and_then(Value::as_u64).unwrap_or(1);
    if let Some(end) = end.as_ref().and_then(Value::as_u64) {
        if end >= start && !obj.contains_key("limit") {
            obj.insert("limit".into(), Value::from(end - start + 1));
        }
    }
    obj.remove("should_read_entire_file");
    obj.remove("explanation");
    obj
}

/// Claude Code's `Bash` takes its timeout in milliseconds; the rest give seconds.
fn shell_args(key: &str, obj: Map<String, Value>) -> Map<String, Value> {
    let mut obj = renamed(obj, &[("CommandLine", "command")]);
    if key == "bash" {
        if let Some(ms) = obj
            .get("timeout")
            .and_then(Value::as_u64)
            .filter(|&t| t > 1000)
        {
            obj.insert("timeout".into(), Value::from(ms.div_ceil(1000)));
        }
    }
    obj.remove("description");
    obj.remove("is_background");
    obj.remove("explanation");
    obj
}

/// Anthropic's text editor tool: one tool, a `command` saying which of ours it is.
fn editor(name: &str, obj: Map<String, Value>) -> Foreign {
    let command = obj
        .get("command")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mut obj = obj;
    obj.remove("command");
    match command.as_str() {
        "view" => {
            if let Some(Value::Array(range)) = obj.remove("view_range") {
                let n = |i: usize| range.get(i).and_then(Value::as_i64);
                if let Some(a) = n(0).filter(|&a| a >= 1) {
                    obj.insert("offset".into(), Value::from(a));
                    if let Some(b) = n(1).filter(|&b| b >= a) {
                        obj.insert("limit".into(), Value::from(b - a + 1));
                    }
                }
            }
            Foreign::Run {
                tool: "ws_read",
                args: Value::Object(obj),
            }
        }
        "str_replace" => Foreign::Run {
            tool: "ws_edit",
            args: Value::Object(obj),
        },
        "create" => Foreign::Run {
            tool: "ws_write",
            args: Value::Object(renamed(obj, &[("file_text", "content")])),
        },
        other => Foreign::Closest {
            tool: "ws_edit",
            why: if other.is_empty() {
                format!("{name} without a command")
            } else {
                format!("{name} command {other:?} has no counterpart here")
            },
        },
    }
}

/// Codex's `apply_patch`: `*** Begin Patch` … `*** End Patch`, one file's change mapped to the
/// one tool that makes it; several files at once are several calls here.
fn apply_patch(obj: &Map<String, Value>) -> Foreign {
    let text = obj
        .values()
        .filter_map(|v| match v {
            Value::String(s) => Some(s.clone()),
            Value::Array(items) => items
                .iter()
                .filter_map(Value::as_str)
                .find(|s| s.contains("*** Begin Patch"))
                .map(str::to_string),
            _ => None,
        })
        .find(|s| s.contains("*** Begin Patch"));
    let closest = |why: &str| Foreign::Closest {
        tool: "ws_patch",
        why: why.to_string(),
    };
    let Some(text) = text else {
        return closest("apply_patch without a `*** Begin Patch` body");
    };
    let body: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("*** Begin Patch"))
        .skip(1)
        .take_while(|l| !l.starts_with("*** End Patch"))
        .collect();
    let ops: Vec<(usize, &str)> = body
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("*** ") && !l.starts_with("*** End of File"))
        .map(|(i, l)| (i, *l))
        .collect();
    let [(at, op)] = ops.as_slice() else {
        return closest("apply_patch changing several files at once; make one ws_patch (or ws_write, ws_delete) call per file");
    };
    let rest: Vec<&str> = body[at + 1..]
        .iter()
        .copied()
        .filter(|l| !l.starts_with("*** End of File"))
        .collect();
    let path = |prefix: &str| {
        op.strip_prefix(prefix)
            .map(|p| Value::String(p.trim().to_string()))
    };
    let mut args = Map::new();
    if let Some(p) = path("*** Add File:") {
        let content: String = rest
            .iter()
            .map(|l| format!("{}\n", l.strip_prefix('+').unwrap_or(l)))
            .collect();
        args.insert("path".into(), p);
        args.insert("content".into(), Value::String(content));
        return Foreign::Run {
            tool: "ws_write",
            args: Value::Object(args),
        };
    }
    if let Some(p) = path("*** Delete File:") {
        args.insert("path".into(), p);
        return Foreign::Run {
            tool: "ws_delete",
            args: Value::Object(args),
        };
    }
    if let Some(p) = path("*** Update File:") {
        if rest.iter().any(|l| l.starts_with("*** Move to:")) {
            return closest("apply_patch moving a file; ws_mv it, then ws_patch it");
        }
        let mut patch = rest.join("\n");
        patch.push('\n');
        args.insert("path".into(), p);
        args.insert("patch".into(), Value::String(patch));
        return Foreign::Run {
            tool: "ws_patch",
            args: Value::Object(args),
        };
    }
    closest("apply_patch with an operation other than Add, Update or Delete File")
}

#[cfg(test)]
mod tests {
    use super::{translate, Foreign};
    use serde_json::json;

    fn runs(name: &str, args: serde_json::Value) -> (&'static str, serde_json::Value) {
        match translate(name, &args) {
            Some(Foreign::Run { tool, args }) => (tool, args),
            other => panic!("{name}: {other:?}"),
        }
    }

    #[test]
    fn plain_meanings_run_as_ours() {
        assert_eq!(
            runs(
                "read_file",
                json!({"target_file": "a.rs", "start_line_one_indexed": 10, "end_line_one_indexed_inclusive": 19})
            ),
            (
                "ws_read",
                json!({"path": "a.rs", "offset": 10, "limit": 10})
            )
        );
        assert_eq!(
            runs(
                "Edit",
                json!({"file_path": "a.rs", "old_string": "x", "new_string": "y"})
            )
            .0,
            "ws_edit"
        );
        assert_eq!(
            runs(
                "functions.Bash",
                json!({"command": "cargo test", "timeout": 120000})
            ),
            ("ws_shell", json!({"command": "cargo test", "timeout": 120}))
        );
        assert_eq!(
            runs(
                "str_replace_based_edit_tool",
                json!({"command": "view", "path": "a.rs", "view_range": [5, 9]})
            ),
            ("ws_read", json!({"path": "a.rs", "offset": 5, "limit": 5}))
        );
        assert_eq!(
            runs(
                "str_replace_editor",
                json!({"command": "create", "path": "n.rs", "file_text": "x\n"})
            ),
            ("ws_write", json!({"path": "n.rs", "content": "x\n"}))
        );
        assert_eq!(
            runs(
                "grep_search",
                json!({"query": "fn main", "include_pattern": "*.rs"})
            ),
            ("ws_grep", json!({"query": "fn main", "glob": "*.rs"}))
        );
        assert_eq!(
            runs("list_dir", json!({"relative_workspace_path": "src"})),
            ("ws_list", json!({"path": "src"}))
        );
    }

    #[test]
    fn codex_apply_patch_is_one_file_one_call() {
        let update = "*** Begin Patch\n*** Update File: src/app.py\n@@ def total(xs):\n-    return sum(xs)\n+    return sum(x for x in xs if x)\n*** End Patch";
        assert_eq!(
            runs("apply_patch", json!({"input": update})),
            (
                "ws_patch",
                json!({"path": "src/app.py", "patch": "@@ def total(xs):\n-    return sum(xs)\n+    return sum(x for x in xs if x)\n"})
            )
        );
        let add = "*** Begin Patch\n*** Add File: n.txt\n+one\n+two\n*** End Patch\n";
        assert_eq!(
            runs("apply_patch", json!({"command": ["apply_patch", add]})),
            (
                "ws_write",
                json!({"path": "n.txt", "content": "one\ntwo\n"})
            )
        );
        let two = "*** Begin Patch\n*** Delete File: a\n*** Delete File: b\n*** End Patch";
        assert!(matches!(
            translate("apply_patch", &json!({"input": two})),
            Some(Foreign::Closest {
                tool: "ws_patch",
                ..
            })
        ));
    }

    #[test]
    fn unclear_meanings_get_the_closest_tool_and_others_are_not_ours() {
        assert!(matches!(
            translate(
                "edit_file",
                &json!({"target_file": "a.rs", "code_edit": "// ... existing code ...\nfn b() {}"})
            ),
            Some(Foreign::Closest {
                tool: "ws_edit",
                ..
            })
        ));
        assert!(matches!(
            translate(
                "str_replace_editor",
                &json!({"command": "undo_edit", "path": "a.rs"})
            ),
            Some(Foreign::Closest {
                tool: "ws_edit",
                ..
            })
        ));
        assert_eq!(translate("get_weather", &json!({})), None);
        assert_eq!(translate("ws_read", &json!({})), None);
    }
}
