//! One module per subcommand of `slmcode`: each owns its arguments and the code that runs it.
//! What they share (the workspace, the registry with the project's hooks, reporting a
//! result) is in `common`.

pub mod bench;
pub mod chat;
pub mod checkpoints;
pub mod common;
pub mod config;
pub mod doctor;
pub mod evolve;
pub mod hooks;
pub mod init;
pub mod map;
pub mod mcp;
pub mod models;
pub mod pending;
pub mod run;
pub mod runs;
pub mod session;
pub mod tool;
pub mod tools;
pub mod view;
