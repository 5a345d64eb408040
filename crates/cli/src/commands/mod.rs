//! One module per subcommand of `slmcode`: each owns its arguments and the code that runs it.

pub mod common;
pub mod config;
pub mod doctor;
pub mod init;
pub mod mcp;
pub mod run;
pub mod session;
pub mod tool;
pub mod tools;
