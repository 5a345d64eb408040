//! ws_todo: replaces the session's checklist and echoes it back. The echo is the point: the
//! plan lands in recent context, where a small model's attention is.

use std::borrow::Cow;

use crate::error::ToolError;
use crate::registry::{Args, Effect, Kind, Param, Reply, Tool, ToolSpec};
use crate::workspace::{TodoItem, Workspace};

/// The checklist holds at most this many items…
pub const MAX_TODO_ITEMS: usize = 30;
/// …of at most this many characters each.
pub const MAX_TODO_CHARS: usize = 200;

pub struct TodoTool;

static SPEC: ToolSpec = ToolSpec {
    name: "ws_todo",
    description: Cow::Borrowed(
        "Replace your checklist; mark items \"[x] \" done or \"[ ] \" open.",
    ),
    params: &[Param {
        name: "items",
        kind: Kind::StringList,
        required: true,
        description: "the whole checklist",
        aliases: &["todos", "todo", "tasks", "list", "checklist"],
    }],
    example: "{\"items\":[\"[x] find the config loader\",\"[ ] add the --verbose flag\"]}",
    effect: Effect::READ_ONLY,
    passes_unknown_args: false,
    rest_hint: "Keep the checklist short: merge steps.",
};

impl Tool for TodoTool {
    fn spec(&self) -> &ToolSpec {
        &SPEC
    }

    fn run(&self, ws: &mut Workspace, args: &Args) -> Result<Reply, ToolError> {
        let given = args.list("items").unwrap_or_default();
        let mut notes = Vec::new();
        let mut items: Vec<TodoItem> = given
            .iter()
            .map(|raw| parse_item(raw))
            .filter(|i| !i.text.is_empty())
            .collect();
        if items.len() > MAX_TODO_ITEMS {
            notes.push(format!(
                "[kept the first {MAX_TODO_ITEMS} of {} items — the checklist holds at most {MAX_TODO_ITEMS}; merge steps]",
                items.len()
            ));
            items.truncate(MAX_TODO_ITEMS);
        }
        let mut cut = 0;
        for item in &mut items {
            if item.text.chars().count() > MAX_TODO_CHARS {
                item.text = item.text.chars().take(MAX_TODO_CHARS).collect();
                cut += 1;
            }
        }
        if cut > 0 {
            notes.push(format!(
                "[{cut} item(s) cut to {MAX_TODO_CHARS} characters — keep each step to one short line]"
            ));
        }
        ws.session.todo = items;
        if ws.session.todo.is_empty() {
            return Ok("(checklist cleared: it has no items)".to_string().into());
        }
        let done = ws.session.todo.iter().filter(|i| i.done).count();
        let mut out = format!("Checklist ({done} of {} done):\n", ws.session.todo.len());
        for item in &ws.session.todo {
            out.push_str(&format!(
                "[{}] {}\n",
                if item.done { "x" } else { " " },
                item.text
            ));
        }
        for note in notes {
            out.push_str(&note);
            out.push('\n');
        }
        Ok(out.trim_end().to_string().into())
    }
}

/// Reads `[x] text`, `- [ ] text`, `* [X] text`, `1. text` or plain `text`.
fn parse_item(raw: &str) -> TodoItem {
    let mut s = raw.trim();
    for prefix in ["- ", "* ", "+ "] {
        if let Some(rest) = s.strip_prefix(prefix) {
            s = rest.trim_start();
        }
    }
    // "1. " / "2) " numbering.
    let digits = s.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 {
        let rest = &s[digits..];
        if let Some(r) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            s = r.trim_start();
        }
    }
    let (done, text) = if let Some(r) = s.strip_prefix("[x]").or_else(|| s.strip_prefix("[X]")) {
        (true, r)
    } else if let Some(r) = s.strip_prefix("[ ]").or_else(|| s.strip_prefix("[]")) {
        (false, r)
    } else {
        (false, s)
    };
    TodoItem {
        text: text.trim().to_string(),
        done,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_forms() {
        assert_eq!(
            parse_item("[x] a"),
            TodoItem {
                text: "a".into(),
                done: true
            }
        );
        assert_eq!(
            parse_item("- [ ] b"),
            TodoItem {
                text: "b".into(),
                done: false
            }
        );
        assert_eq!(
            parse_item("2. [X] c"),
            TodoItem {
                text: "c".into(),
                done: true
            }
        );
        assert_eq!(
            parse_item("plain"),
            TodoItem {
                text: "plain".into(),
                done: false
            }
        );
    }
}
