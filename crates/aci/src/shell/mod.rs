//! ws_shell's machinery: `policy` decides on a parsed syntax tree what may run (default deny);
//! `run` executes one command, bounded in time and output, and leaves nothing running.

pub mod policy;
pub mod run;
pub mod sandbox;
