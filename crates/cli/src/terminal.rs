//! The one way the binary writes to a terminal. What a person reads — progress, reports,
//! lists, errors — holds text from outside (a server's model names, a model's calls and
//! summary, a repository's file names and lines), so a person's streams, [`stdout`] and
//! [`stderr`] (and [`errln!`] on the latter), show every control character but newline and
//! tab escaped, whatever is written to them (`slmcode_aci::terminal`): a command cannot
//! forget to escape one string among many.
//!
//! A program's stream, [`machine_stdout`], is the other kind: `slmcode tool` prints what a
//! model sees, `session`, `--json` and MCP print JSON, all byte-exact for the reader.
//! `crates/cli/tests/it/terminal.rs` fails if any other source file reaches stdout or stderr.

use std::io;

use slmcode_aci::terminal::Human;

/// Standard output, for a person: reports, lists, transcripts.
pub fn stdout() -> Human<io::StdoutLock<'static>> {
    Human::new(io::stdout().lock())
}

/// Standard error, for a person: progress, warnings, errors. Also the writer of `mcp`'s logs.
pub fn stderr() -> Human<io::StderrLock<'static>> {
    Human::new(io::stderr().lock())
}

/// Standard output for a program: what `slmcode tool` prints for a model, the JSON of
/// `session`, `--json` and MCP. Byte-exact; never for text a person reads.
pub fn machine_stdout() -> io::StdoutLock<'static> {
    io::stdout().lock()
}

/// `eprintln!` for slmcode: a line on [`stderr`], escaped. A failure to write to stderr has
/// nowhere to be reported, so it is ignored rather than a panic.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!($crate::terminal::stderr(), $($arg)*);
    }};
}
pub(crate) use errln;
