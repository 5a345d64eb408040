//! ws_shell's machinery: `policy` decides on a parsed syntax tree what may run (default deny);
//! `env` builds the environment and the PATH programs come from; `sandbox` confines what runs;
//! `run` executes one command, bounded in time and output, and leaves nothing running.

pub mod env;
pub mod policy;
pub mod run;
pub mod sandbox;
