//! ws_shell's machinery. `run` executes one command, bounded in time and output, and leaves
//! nothing running. The policy that decides what may run arrives with the ws_shell tool.

pub mod run;
