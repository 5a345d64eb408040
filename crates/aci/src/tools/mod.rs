//! One file per tool. The registry offers them in this order.

mod delete;
mod edit;
mod git;
mod glob;
mod grep;
mod list;
mod mv;
mod patch;
mod read;
mod shell;
mod todo;
mod write;

pub use delete::DeleteTool;
pub use edit::{EditTool, GUTTER_NOTE, OVER_EDIT_MIN_BYTES, OVER_EDIT_SHARE};
pub use git::{GitDiffTool, GitStatusTool};
pub use glob::{GlobTool, MAX_GLOB_HITS};
pub use grep::{GrepTool, MAX_GREP_HITS};
pub use list::ListTool;
pub use mv::MvTool;
pub use patch::{PatchTool, ANCHOR_WINDOW_LINES};
pub use read::{ReadTool, MAX_LINE_CHARS};
pub use shell::ShellTool;
pub use todo::{TodoTool, MAX_TODO_CHARS, MAX_TODO_ITEMS};
pub use write::{WriteTool, SHRINK_GUARD_MIN_BYTES};

use crate::registry::Tool;

/// The coding tool set, in the order a model is shown them.
pub(crate) static CODING: &[&dyn Tool] = &[
    &ReadTool,
    &WriteTool,
    &EditTool,
    &PatchTool,
    &MvTool,
    &DeleteTool,
    &ListTool,
    &GlobTool,
    &GrepTool,
    &ShellTool,
    &TodoTool,
    &GitStatusTool,
    &GitDiffTool,
];
