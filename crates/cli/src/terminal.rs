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

/// A colour or weight for a person's screen. The codes are slmcode's own; the text inside is
/// escaped like any other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paint {
    Plain,
    Dim,
    Bold,
    Red,
    Green,
    Cyan,
    Yellow,
}

impl Paint {
    fn code(self) -> &'static str {
        match self {
            Paint::Plain => "",
            Paint::Dim => "\x1b[2m",
            Paint::Bold => "\x1b[1m",
            Paint::Red => "\x1b[31m",
            Paint::Green => "\x1b[32m",
            Paint::Cyan => "\x1b[36m",
            Paint::Yellow => "\x1b[33m",
        }
    }
}

/// Whether a person's standard output gets colour: a terminal, `NO_COLOR` unset or empty
/// (no-color.org), and a `TERM` that is not `dumb`.
pub fn colour_on() -> bool {
    use std::io::IsTerminal;
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
    io::stdout().is_terminal() && !no_color && !dumb
}

/// Writes `text` on standard output for a person, in `paint` when `colour` is on; control
/// characters in the text are escaped.
pub fn paint(text: &str, paint: Paint, colour: bool) {
    use io::Write as _;
    let mut out = io::stdout().lock();
    let styled = colour && paint != Paint::Plain;
    if styled {
        let _ = out.write_all(paint.code().as_bytes());
    }
    let _ = Human::new(&mut out).write_all(text.as_bytes());
    if styled {
        let _ = out.write_all(b"\x1b[0m");
    }
    let _ = out.flush();
}
