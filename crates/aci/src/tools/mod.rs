//! One file per tool. The registry offers them in this order.

mod git;
mod glob;
mod grep;
mod list;
mod read;
mod todo;

pub use git::{GitDiffTool, GitStatusTool};
pub use glob::{GlobTool, MAX_GLOB_HITS};
pub use grep::{GrepTool, MAX_GREP_HITS};
pub use list::ListTool;
pub use read::{ReadTool, MAX_LINE_CHARS};
pub use todo::{TodoTool, MAX_TODO_CHARS, MAX_TODO_ITEMS};

use crate::registry::Tool;

/// The coding tool set, in the order a model is shown them.
pub(crate) static CODING: &[&dyn Tool] = &[
    &ReadTool,
    &ListTool,
    &GlobTool,
    &GrepTool,
    &TodoTool,
    &GitStatusTool,
    &GitDiffTool,
];
