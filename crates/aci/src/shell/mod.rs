//! ws_shell's machinery: `policy` decides on a parsed syntax tree what may run (default deny);
//! `env` builds the environment and the PATH programs come from; `sandbox` confines what runs;
//! `memory` bounds what it may allocate; `run` executes one command, bounded in time and
//! output, and leaves nothing running; `exec` puts them together for one call (ws_shell's, or
//! a hook's).

pub mod env;
pub mod exec;
pub mod memory;
pub mod policy;
pub mod run;
pub mod sandbox;
