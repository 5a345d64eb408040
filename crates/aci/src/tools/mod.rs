//! One file per tool. The registry offers them in this order.

mod delete;
mod edit;
mod git;
mod glob;
mod grep;
mod list;
mod mv;
mod outline;
mod patch;
mod read;
mod shell;
mod symbols;
mod todo;
mod write;

pub use delete::DeleteTool;
pub use edit::EditTool;
pub use git::{GitDiffTool, GitStatusTool};
pub use glob::{GlobTool, MAX_GLOB_HITS};
pub use grep::{GrepTool, MAX_GREP_HITS};
pub use list::ListTool;
pub use mv::MvTool;
pub use outline::OutlineTool;
pub use patch::PatchTool;
pub use read::{ReadTool, MAX_LINE_CHARS};
pub use shell::ShellTool;
pub use symbols::{SymbolsTool, MAX_SYMBOL_HITS};
pub use todo::{TodoTool, MAX_TODO_CHARS, MAX_TODO_ITEMS};
pub use write::{WriteTool, SHRINK_GUARD_MIN_BYTES};

pub use crate::edit_rules::{GUTTER_NOTE, OVER_EDIT_MIN_BYTES, OVER_EDIT_SHARE};
pub use crate::patch::ANCHOR_WINDOW_LINES;

use std::sync::Arc;

use crate::registry::{Registry, Tool};

impl Registry {
    /// The coding tool set (the spec's `ToolNames()`). Defined here, beside the tools, so the
    /// registry never imports the tools it dispatches to.
    pub fn coding() -> Registry {
        Registry::new(coding())
    }
}

/// The coding tool names (the spec's `workspace.ToolNames()`).
pub fn tool_names() -> Vec<&'static str> {
    Registry::coding().names()
}

/// The coding tool set, in the order a model is shown them.
fn coding() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(ReadTool),
        Arc::new(WriteTool),
        Arc::new(EditTool),
        Arc::new(PatchTool),
        Arc::new(MvTool),
        Arc::new(DeleteTool),
        Arc::new(ListTool),
        Arc::new(GlobTool),
        Arc::new(GrepTool),
        Arc::new(OutlineTool),
        Arc::new(SymbolsTool),
        Arc::new(ShellTool),
        Arc::new(TodoTool),
        Arc::new(GitStatusTool),
        Arc::new(GitDiffTool),
    ]
}
