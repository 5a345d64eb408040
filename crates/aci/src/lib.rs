//! slmcode-aci: the tools a small coding model works through.
//!
//! Every tool either does the right thing or says exactly how to retry. The crate is sync and
//! has no network: the harness (`slmcode-agent`), the MCP server and the `slmcode` CLI all drive
//! the same [`Registry`] over a [`Workspace`].

pub mod anchor;
pub mod approval;
pub mod boundary;
pub mod checkpoint;
pub mod config;
pub mod control;
mod edit_rules;
pub mod error;
pub mod fsx;
pub mod git;
pub mod lang;
pub mod leftovers;
pub mod loopguard;
pub mod matching;
pub mod mutation;
pub mod outcome;
pub mod output;
pub mod patch;
pub mod path;
pub mod pending;
pub mod placeholder;
pub mod platform;
pub mod protect;
pub mod readback;
pub mod registry;
pub mod review;
pub mod seal;
pub mod secrets;
pub mod shell;
pub mod state;
mod suggest;
pub mod symbols;
pub mod syntax;
pub mod terminal;
pub mod text;
pub mod tools;
pub mod userdirs;
mod walk;
pub mod workspace;

pub use config::{Config, ConfigError};
pub use error::{RefusalClass, ToolError};
pub use outcome::Outcome;
pub use registry::{Registry, ToolResult, ToolSpec};
pub use tools::tool_names;
pub use workspace::Workspace;

/// Makes this process a parser process when it was started as one (its first argument is
/// [`syntax::process::ARG`]): it answers parse requests on stdin until stdin ends, and then
/// this returns true and the program should exit. Otherwise it returns false at once. The
/// binary calls this first thing, then [`syntax::process::isolate`] with itself.
pub fn serve_parser_process() -> bool {
    if std::env::args_os()
        .nth(1)
        .is_none_or(|a| a != syntax::process::ARG)
    {
        return false;
    }
    // An error here is the parent gone mid-reply: nothing is left to tell.
    let _ = syntax::process::serve(symbols::tags::extract_encoded);
    true
}
