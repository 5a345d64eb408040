//! The safety net through the real binary: the syntax check and its revert (`syntax`),
//! checkpoints and restore (`restore`), ws_mv and ws_delete (`mv_delete`), the focus guard
//! (`focus`), and what a killed run leaves behind (`leftovers`).

use crate::common::{bin, Project};
use serde_json::{json, Value};

pub(super) fn run(p: &Project, calls: &[Value]) -> Vec<Value> {
    p.session(&calls.iter().map(|c| format!("{c}\n")).collect::<String>())
}

pub(super) fn read(path: &str) -> Value {
    json!({"tool": "ws_read", "args": {"path": path}})
}

pub(super) fn edit(path: &str, old: &str, new: &str) -> Value {
    json!({"tool": "ws_edit", "args": {"path": path, "old_str": old, "new_str": new}})
}

pub(super) fn checkpoints(p: &Project, args: &[&str]) -> (i32, String, String) {
    p.cli("checkpoints", args)
}

mod focus;
mod leftovers;
mod mv_delete;
mod restore;
mod syntax;
