//! ws_shell's machinery: `policy` decides on a parsed syntax tree what may run (default deny);
//! `env` builds the environment and the PATH programs come from; `sandbox` confines what runs;
//! `contain` ends its whole process tree; `memory` bounds what it may allocate; `run` executes
//! one command, bounded in time and output, and leaves nothing running; `exec` puts them
//! together for one call (ws_shell's, or a hook's). `sandbox`, `contain` and `memory` are
//! platform modules (see [`crate::platform`]).

pub mod contain;
pub mod env;
pub mod exec;
pub mod memory;
pub mod policy;
pub mod run;
pub mod sandbox;
