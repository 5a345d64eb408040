//! Print-only `sed`: decide whether a GNU sed invocation can only print.
//!
//! Models page through files with `sed -n '120,200p' FILE`, so `ws_shell` lets
//! them run sed. But sed can also write files (`-i`, `w`, `W`, `s///w`), pull
//! other files into its output (`r`, `R`) and run programs (`e`, `s///e`).
//! This module reads sed's options and scripts the way GNU sed 4.8/4.9 does
//! (the `getopt_long` table in `sed/sed.c`, `compile_program` in
//! `sed/compile.c`) and accepts an invocation only when every option and every
//! command is on a small allowlist. Parsing like GNU matters: a checker that
//! ends a regex or a label one character early or late could read a `w` as
//! harmless text. Anything not understood is refused: a false refusal costs
//! the model one retry, a false acceptance could clobber a file.

use std::fmt;

/// Why a sed invocation is not print-only: a short sentence a model can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotPrintOnly(pub String);

impl fmt::Display for NotPrintOnly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotPrintOnly {}

fn refuse<T>(why: impl Into<String>) -> Result<T, NotPrintOnly> {
    Err(NotPrintOnly(why.into()))
}

// ---------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------

/// What an option means for print-only-ness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opt {
    /// A harmless switch without an argument.
    Switch,
    /// `-e SCRIPT`: the argument is a script to check.
    Script,
    /// `-l N`: harmless, but its argument must not be mistaken for an operand.
    LineLength,
    /// An option print-only sed does not allow, with the reason.
    Refused(&'static str),
}

const IN_PLACE: &str = "sed -i/--in-place edits files in place; print-only sed may not write files";
const SCRIPT_FILE: &str =
    "sed -f/--file reads the script from a file that cannot be checked; pass it with -e";
const META: &str = "sed --help/--version print no file contents; run sed with a print script";

/// Every long option of GNU sed 4.8/4.9, refused ones included, so that
/// abbreviations such as `--in` resolve exactly as `getopt_long` resolves them.
const LONG_OPTIONS: &[(&str, Opt)] = &[
    ("binary", Opt::Switch),
    ("debug", Opt::Switch),
    ("expression", Opt::Script),
    ("file", Opt::Refused(SCRIPT_FILE)),
    ("follow-symlinks", Opt::Switch),
    ("help", Opt::Refused(META)),
    ("in-place", Opt::Refused(IN_PLACE)),
    ("line-length", Opt::LineLength),
    ("null-data", Opt::Switch),
    ("posix", Opt::Switch),
    ("quiet", Opt::Switch),
    ("regexp-extended", Opt::Switch),
    ("sandbox", Opt::Switch),
    ("separate", Opt::Switch),
    ("silent", Opt::Switch),
    ("unbuffered", Opt::Switch),
    ("version", Opt::Refused(META)),
    ("zero-terminated", Opt::Switch),
];

/// Short options, after GNU sed's `SHORTOPTS` ("bsnrzuEe:f:l:i::V:").
/// `None` means unknown (`-V` is in that string but sed rejects it).
fn short_option(c: char) -> Option<Opt> {
    match c {
        'b' | 's' | 'n' | 'r' | 'z' | 'u' | 'E' => Some(Opt::Switch),
        'e' => Some(Opt::Script),
        'l' => Some(Opt::LineLength),
        'i' => Some(Opt::Refused(IN_PLACE)),
        'f' => Some(Opt::Refused(SCRIPT_FILE)),
        _ => None,
    }
}

/// Resolves `--name` like `getopt_long`: an exact name wins, otherwise the
/// name must be a prefix of exactly one long option.
fn long_option(name: &str) -> Result<Opt, NotPrintOnly> {
    if let Some(&(_, opt)) = LONG_OPTIONS.iter().find(|(long, _)| *long == name) {
        return Ok(opt);
    }
    let matches: Vec<&(&str, Opt)> = LONG_OPTIONS
        .iter()
        .filter(|(long, _)| !name.is_empty() && long.starts_with(name))
        .collect();
    match matches.as_slice() {
        [(_, opt)] => Ok(*opt),
        [] => refuse(format!(
            "unknown sed option `--{name}`; print-only sed allows -n, -e, -E, -s, -z, -u, -l"
        )),
        several => {
            let names: Vec<String> = several
                .iter()
                .map(|(long, _)| format!("--{long}"))
                .collect();
            refuse(format!(
                "sed option `--{name}` is ambiguous ({}); spell it out",
                names.join(", ")
            ))
        }
    }
}

/// The argument of an option that needs one and had none attached: the next
/// argv entry, whatever it looks like (that is what `getopt` does).
fn next_argument<'a>(
    rest: &mut std::slice::Iter<'a, String>,
    option: &str,
) -> Result<&'a str, NotPrintOnly> {
    match rest.next() {
        Some(value) => Ok(value),
        None => refuse(format!("sed option `{option}` needs an argument")),
    }
}

/// Judges sed's arguments (argv after the program name, already unquoted by
/// the shell parser). Ok(()) when nothing in them can write a file or run a
/// program.
///
/// Options are read like GNU `getopt_long` with argument permutation: an
/// option after an operand is still an option (`sed 1p f -i` edits `f`), `--`
/// ends the options, clustered short options (`-ne`, `-ni`) are split, and
/// `-e`/`-l` take the rest of their cluster or the next argument. Without any
/// `-e` the first operand is the script; all other operands are input files,
/// which sed only reads.
pub fn check_args(args: &[String]) -> Result<(), NotPrintOnly> {
    let mut scripts: Vec<&str> = Vec::new();
    let mut operands: Vec<&str> = Vec::new();
    let mut options_ended = false;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if options_ended || arg == "-" || !arg.starts_with('-') {
            operands.push(arg);
        } else if arg == "--" {
            options_ended = true;
        } else if let Some(long) = arg.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            match long_option(name)? {
                Opt::Switch if attached.is_some() => {
                    return refuse(format!("sed option `--{name}` takes no argument"));
                }
                Opt::Switch => {}
                kind @ (Opt::Script | Opt::LineLength) => {
                    let value = match attached {
                        Some(value) => value,
                        None => next_argument(&mut rest, arg)?,
                    };
                    if kind == Opt::Script {
                        scripts.push(value);
                    }
                }
                Opt::Refused(why) => return refuse(why),
            }
        } else {
            let cluster = arg.get(1..).unwrap_or_default();
            for (at, c) in cluster.char_indices() {
                match short_option(c) {
                    Some(Opt::Switch) => {}
                    Some(kind @ (Opt::Script | Opt::LineLength)) => {
                        let attached = cluster.get(at + c.len_utf8()..).unwrap_or_default();
                        let value = if attached.is_empty() {
                            next_argument(&mut rest, &format!("-{c}"))?
                        } else {
                            attached
                        };
                        if kind == Opt::Script {
                            scripts.push(value);
                        }
                        break;
                    }
                    Some(Opt::Refused(why)) => return refuse(why),
                    None => {
                        return refuse(format!(
                            "unknown sed option `-{c}`; print-only sed allows -n, -e, -E, -s, -z, -u, -l"
                        ));
                    }
                }
            }
        }
    }
    if scripts.is_empty() {
        match operands.first() {
            Some(script) => scripts.push(script),
            None => return refuse("sed needs a script, e.g. `sed -n '1,50p' FILE`"),
        }
    }
    scripts.into_iter().try_for_each(check_script)
}

// ---------------------------------------------------------------------------
// Scripts
// ---------------------------------------------------------------------------

/// A read position in a script. Bytes, not chars: every character that means
/// something to sed is ASCII, and the bytes of a UTF-8 sequence never are.
struct Cursor<'a> {
    s: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn bump(&mut self) -> Option<u8> {
        let b = self.peek();
        if b.is_some() {
            self.at += 1;
        }
        b
    }

    /// GNU's `ISBLANK`: space and tab only; a newline ends a command.
    fn eat_blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.at += 1;
        }
    }

    /// GNU's `in_nonblank`.
    fn nonblank(&mut self) -> Option<u8> {
        self.eat_blanks();
        self.bump()
    }

    fn eat_digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
    }
}

/// A byte for a message.
fn shown(b: u8) -> String {
    match b {
        b'\n' => "a newline".to_string(),
        _ if b.is_ascii_graphic() => format!("`{}`", char::from(b)),
        _ if b.is_ascii() => format!("character {b:#04x}"),
        _ => "a non-ASCII character".to_string(),
    }
}

/// Judges one sed script (the text of one -e or the first operand).
///
/// Ok(()) when the script parses as GNU sed would parse it and uses only
/// commands that print or work on the pattern and hold spaces: `p P = l q Q d
/// D n N g G h H x z F b t T : v y s {}`, with `s` flags `g p i I m M N`.
/// Refused: `w W` and `s///w` (write a file), `e` and `s///e` (run a
/// program), `r R` (read another file in), `a i c` (not needed for paging),
/// anything unknown, and scripts that do not parse.
pub fn check_script(script: &str) -> Result<(), NotPrintOnly> {
    let mut c = Cursor {
        s: script.as_bytes(),
        at: 0,
    };
    let mut depth = 0usize;
    loop {
        // Between commands GNU skips `;` and C `isspace` (which includes \v).
        while matches!(c.peek(), Some(b) if b == b';' || b == 0x0b || b.is_ascii_whitespace()) {
            c.at += 1;
        }
        let Some(first) = c.bump() else { break };
        let mut next = Some(first);
        let addressed = address(&mut c, first)?;
        if addressed {
            next = c.nonblank();
            if next == Some(b',') {
                match c.nonblank() {
                    Some(b) if address(&mut c, b)? => {}
                    _ => return refuse("sed script: expected an address after `,`"),
                }
                next = c.nonblank();
            }
        }
        if next == Some(b'!') {
            next = c.nonblank();
            if next == Some(b'!') {
                return refuse("sed script: multiple `!`s");
            }
        }
        match next {
            Some(cmd) => command(&mut c, cmd, addressed, &mut depth)?,
            None => return refuse("sed script: missing command after the address"),
        }
    }
    if depth > 0 {
        return refuse("sed script: unmatched `{`");
    }
    Ok(())
}

/// Reads an address that starts with `first` (already consumed), like GNU's
/// `compile_address`: `N`, `first~step`, `$`, `/re/` or `\cREc` with `I`/`M`
/// flags, and `+N`/`~N` (meaningful as second address only). Returns false,
/// consuming nothing more, when `first` does not start an address.
fn address(c: &mut Cursor<'_>, first: u8) -> Result<bool, NotPrintOnly> {
    match first {
        b'/' | b'\\' => {
            let delim = if first == b'/' { Some(b'/') } else { c.bump() };
            delimited(c, delim, true, "address regex")?;
            loop {
                c.eat_blanks();
                match c.peek() {
                    Some(b'I' | b'M') => c.at += 1,
                    _ => break,
                }
            }
        }
        b'0'..=b'9' => {
            c.eat_digits();
            c.eat_blanks();
            if c.peek() == Some(b'~') {
                c.at += 1;
                c.eat_blanks();
                c.eat_digits();
            }
        }
        b'+' | b'~' => {
            c.eat_blanks();
            c.eat_digits();
        }
        b'$' => {}
        _ => return Ok(false),
    }
    Ok(true)
}

/// Reads the rest of command `cmd` (already consumed, as are its address and
/// `!`), refusing commands that are not print-only.
fn command(
    c: &mut Cursor<'_>,
    cmd: u8,
    addressed: bool,
    depth: &mut usize,
) -> Result<(), NotPrintOnly> {
    match cmd {
        b'#' | b'}' | b':' if addressed => {
            refuse(format!("sed script: {} cannot take an address", shown(cmd)))
        }
        b'#' => {
            while !matches!(c.bump(), None | Some(b'\n')) {}
            Ok(())
        }
        b'{' => {
            *depth += 1;
            Ok(())
        }
        b'}' => match depth.checked_sub(1) {
            Some(outer) => {
                *depth = outer;
                end_of_command(c, cmd)
            }
            None => refuse("sed script: unexpected `}`"),
        },
        b':' | b'b' | b't' | b'T' | b'v' => label(c, cmd),
        b'q' | b'Q' | b'l' => {
            c.eat_blanks();
            c.eat_digits();
            end_of_command(c, cmd)
        }
        b'=' | b'd' | b'D' | b'F' | b'g' | b'G' | b'h' | b'H' | b'n' | b'N' | b'p' | b'P'
        | b'x' | b'z' => end_of_command(c, cmd),
        b's' => substitute(c),
        b'y' => {
            let delim = c.bump();
            delimited(c, delim, false, "`y` command")?;
            delimited(c, delim, false, "`y` command")?;
            end_of_command(c, cmd)
        }
        b'w' | b'W' => refuse(format!(
            "sed `{}` writes to a file; print-only sed may not write files",
            char::from(cmd)
        )),
        b'r' | b'R' => refuse(format!(
            "sed `{}` reads another file into the output; read that file directly",
            char::from(cmd)
        )),
        b'e' => refuse("sed `e` runs a shell command; print-only sed may not run programs"),
        b'a' | b'i' | b'c' => refuse(format!(
            "sed `{}` adds text to the output; it is not needed to print a file",
            char::from(cmd)
        )),
        _ => refuse(format!(
            "{} is not a print-only sed command (allowed: p P = l q Q d D n N g G h H x z F b t T : y s {{}})",
            shown(cmd)
        )),
    }
}

/// GNU's `read_end_of_cmd`: only blanks, then `;`, a newline, `}`, `#` or the
/// end may follow a command.
fn end_of_command(c: &mut Cursor<'_>, cmd: u8) -> Result<(), NotPrintOnly> {
    c.eat_blanks();
    match c.peek() {
        None | Some(b';' | b'\n' | b'}' | b'#') => Ok(()),
        Some(other) => refuse(format!(
            "sed script: unexpected {} after the {} command",
            shown(other),
            shown(cmd)
        )),
    }
}

/// GNU's `read_label`: blanks, then everything up to a blank, newline, `;`,
/// `}` or `#`. No end-of-command check follows, so in `b x w f` the `w f` is
/// a new command, which the main loop then sees.
fn label(c: &mut Cursor<'_>, cmd: u8) -> Result<(), NotPrintOnly> {
    c.eat_blanks();
    let start = c.at;
    while !matches!(
        c.peek(),
        None | Some(b' ' | b'\t' | b'\n' | b';' | b'}' | b'#')
    ) {
        c.at += 1;
    }
    if cmd == b':' && c.at == start {
        return refuse("sed script: `:` needs a label name");
    }
    if c.peek() == Some(b'#') {
        // sed before 4.3 read `#` as part of the label, so `bx#;w f` wrote a file.
        return refuse(format!(
            "sed script: put `;` between the {} label and `#`",
            shown(cmd)
        ));
    }
    Ok(())
}

/// The `s` command: delimiter, regex, replacement, then flags as in GNU's
/// `mark_subst_opts` (blanks allowed between flags).
fn substitute(c: &mut Cursor<'_>) -> Result<(), NotPrintOnly> {
    let delim = c.bump();
    delimited(c, delim, true, "`s` command")?;
    delimited(c, delim, false, "`s` command")?;
    loop {
        c.eat_blanks();
        match c.peek() {
            None | Some(b'\n' | b';' | b'}' | b'#') => return Ok(()),
            Some(b'\r') if c.s.get(c.at + 1) == Some(&b'\n') => return Ok(()),
            Some(b'g' | b'p' | b'i' | b'I' | b'm' | b'M') => c.at += 1,
            Some(b'0'..=b'9') => c.eat_digits(),
            Some(b'w') => {
                return refuse("the `w` flag of sed `s` writes to a file; use `p` to print");
            }
            Some(b'e') => {
                return refuse("the `e` flag of sed `s` runs the result as a shell command");
            }
            Some(other) => {
                return refuse(format!("sed script: unknown `s` flag {}", shown(other)));
            }
        }
    }
}

/// One delimited part of an address, `s` or `y`, through its closing
/// delimiter, as GNU's `match_slash`: the delimiter is checked first, a
/// backslash escapes any next character (a newline too), an unescaped newline
/// is an error, and in a regex a bracket expression may hold the delimiter
/// (`s/[^/]*$//`).
fn delimited(
    c: &mut Cursor<'_>,
    delim: Option<u8>,
    regex: bool,
    what: &str,
) -> Result<(), NotPrintOnly> {
    let unterminated = || NotPrintOnly(format!("sed script: unterminated {what}"));
    let delim = match delim {
        Some(b'\n') | None => return Err(unterminated()),
        Some(d) if !d.is_ascii() => {
            return refuse(format!("sed script: use an ASCII delimiter in the {what}"));
        }
        Some(d) => d,
    };
    loop {
        match c.bump() {
            None | Some(b'\n') => return Err(unterminated()),
            Some(b) if b == delim => return Ok(()),
            Some(b'\\') => {
                if c.bump().is_none() {
                    return Err(unterminated());
                }
            }
            Some(b'[') if regex => {
                if !bracket(c) {
                    return Err(unterminated());
                }
            }
            Some(_) => {}
        }
    }
}

/// Skips a bracket expression after its `[`, a port of GNU's
/// `snarf_char_class`: a leading `^` and `]` are literal, `[:…:]`, `[.….]`
/// and `[=…=]` may contain `]`, and backslashes are not special. True when
/// the closing `]` was consumed; false at a newline or the end.
fn bracket(c: &mut Cursor<'_>) -> bool {
    let mut ch = c.bump();
    if ch == Some(b'^') {
        ch = c.bump();
    }
    if ch == Some(b']') {
        ch = c.bump();
    }
    // 0: plain, 1: after `[`, 2: inside `[:`/`[.`/`[=`, 3: after its closing `:`/`.`/`=`.
    let mut state = 0u8;
    let mut class = 0u8;
    loop {
        match ch {
            None | Some(b'\n') => return false,
            Some(b @ (b'.' | b':' | b'=')) if state == 1 || (state == 2 && b == class) => {
                if state == 1 {
                    class = b;
                }
                state += 1;
                ch = c.bump();
                continue;
            }
            Some(b'[') => {
                if state == 0 {
                    state = 1;
                }
                ch = c.bump();
                continue;
            }
            Some(b']') if state <= 1 => return true,
            Some(b']') if state == 3 => state = 0,
            Some(_) => {}
        }
        state &= !1;
        ch = c.bump();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;
    use proptest::sample::select;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[track_caller]
    fn script_ok(script: &str) {
        assert_eq!(check_script(script), Ok(()), "script {script:?}");
    }

    #[track_caller]
    fn script_refused(script: &str, mention: &str) {
        match check_script(script) {
            Ok(()) => panic!("script {script:?} was accepted"),
            Err(NotPrintOnly(why)) => {
                assert!(
                    why.contains(mention),
                    "script {script:?}: {why:?} lacks {mention:?}"
                )
            }
        }
    }

    #[track_caller]
    fn args_ok(list: &[&str]) {
        assert_eq!(check_args(&args(list)), Ok(()), "args {list:?}");
    }

    #[track_caller]
    fn args_refused(list: &[&str], mention: &str) {
        match check_args(&args(list)) {
            Ok(()) => panic!("args {list:?} were accepted"),
            Err(NotPrintOnly(why)) => {
                assert!(
                    why.contains(mention),
                    "args {list:?}: {why:?} lacks {mention:?}"
                )
            }
        }
    }

    #[test]
    fn paging_scripts_are_allowed() {
        for script in [
            "120,200p",
            "$p",
            "5q",
            "$=",
            "/fn main/,/^}/p",
            "0~4p",
            "/start/,/end/p",
            "\\,foo,p",
            "\\%a/b%p",
            "/x/I,/y/Mp",
            "/x/ I M p",
            "/x/,+3p",
            "/x/,~4p",
            "0,/re/p",
            "1 , 5 ! p",
            "1!G;h;$!d",
            "$!N;P;D",
            ":a;N;$!ba;s/\\n/ /g",
            "",
            "  ;; \n",
            "p;p\np",
        ] {
            script_ok(script);
        }
    }

    #[test]
    fn every_allowed_command_is_allowed() {
        for script in [
            "p",
            "P",
            "=",
            "l",
            "l 40",
            "l5",
            "q",
            "q 3",
            "Q",
            "Q5",
            "d",
            "D",
            "n",
            "N",
            "g",
            "G",
            "h",
            "H",
            "x",
            "z",
            "F",
            "b",
            "b end",
            "t",
            "t end",
            "T",
            "T end",
            ":end",
            "v",
            "v 4.2",
            "y/abc/xyz/",
            "y,a\\,b,x\\,y,",
            "1{p}",
            "1,3{/a/{p};n}",
            "1!{p}",
            "!p",
        ] {
            script_ok(script);
        }
    }

    #[test]
    fn substitutions_are_allowed() {
        for script in [
            "s/a/b/",
            "s/a\\/w/b/",
            "s,/usr/bin,/bin,g",
            "s/a/b/3p",
            "s/a/b/gIiMm2p",
            "s/a/b/ g ",
            "s/.*/\\U&/",
            "s/x/\\n/",
            "s/a/b\\\nc/",
            "s/[/]/x/",
            "s/[^/]*$//",
            "s/[[:space:]]*$//",
            "s/[]/]/x/",
            "s/[[:alpha:]/]/x/",
            "s|a|b|;p",
            "1{s/a/b/}",
            "s\\a\\b\\",
            "s/a/b/\r\n",
            "s/é/ü/",
        ] {
            script_ok(script);
        }
    }

    #[test]
    fn comments_are_allowed() {
        script_ok("# w file\np");
        script_ok("p # w file");
        script_ok("s/a/b/ # w file");
        script_ok("1{p # }\n}");
        script_ok("b end # w file");
    }

    #[test]
    fn writing_commands_are_refused() {
        for (script, mention) in [
            ("w out", "`w`"),
            ("W out", "`W`"),
            ("1,5w out", "`w`"),
            ("/re/w out", "`w`"),
            ("/x/I w f", "`w`"),
            ("$ w f", "`w`"),
            ("0,/x/w f", "`w`"),
            ("1~2w x", "`w`"),
            ("1,5!w x", "`w`"),
            ("/x/ M,/y/I!W f", "`W`"),
            ("$!N;s/\\n/ /;w x", "`w`"),
            ("{p;w x}", "`w`"),
            ("1{/a/{w x\n}}", "`w`"),
            ("b end w x", "`w`"),
            ("b x;w y", "`w`"),
            ("t\nw y", "`w`"),
            ("y/a/b/;w x", "`w`"),
        ] {
            script_refused(script, mention);
        }
    }

    #[test]
    fn substitution_w_and_e_flags_are_refused() {
        for (script, mention) in [
            ("s/a/b/w out.txt", "`w`"),
            ("s/a/b/gw out", "`w`"),
            ("s|a|b|w /tmp/x", "`w`"),
            ("s/a/b/ w f", "`w`"),
            ("s/a/b/3pw f", "`w`"),
            ("s/x/y/e", "`e`"),
            ("s/x/y/pe", "`e`"),
            ("s/a/b/;e", "`e`"),
        ] {
            script_refused(script, mention);
        }
    }

    #[test]
    fn delimiters_inside_brackets_do_not_hide_commands() {
        // GNU reads `[/b]` as one bracket expression, so the command is `w;p`.
        script_refused("/[/b]/w;p", "`w`");
        script_refused("s/[/]/x/w f", "`w`");
        script_refused("\\,[,],w f", "`w`");
        script_refused("s/[[:alpha:]/]/x/w f", "`w`");
    }

    #[test]
    fn executing_reading_and_text_commands_are_refused() {
        for (script, mention) in [
            ("e", "`e`"),
            ("1e id", "`e`"),
            ("x;e", "`e`"),
            ("r /etc/passwd", "`r`"),
            ("0r /etc/passwd", "`r`"),
            ("R f", "`R`"),
            ("y/a/b/;r x", "`r`"),
            ("a foo", "`a`"),
            ("i\\\nfoo", "`i`"),
            ("1c bar", "`c`"),
            ("L", "`L`"),
            ("k", "`k`"),
        ] {
            script_refused(script, mention);
        }
    }

    #[test]
    fn scripts_that_do_not_parse_are_refused() {
        for (script, mention) in [
            ("s/a/b", "unterminated"),
            ("s/a", "unterminated"),
            ("s", "unterminated"),
            ("s/a/b\\", "unterminated"),
            ("s/a\n/b/", "unterminated"),
            ("s\na\nb\n", "unterminated"),
            ("s/[/x/", "unterminated"),
            ("/re", "unterminated"),
            ("\\", "unterminated"),
            ("y/abc/", "unterminated"),
            ("s§a§b§", "ASCII"),
            ("{p", "unmatched"),
            ("p}", "unexpected `}`"),
            ("1}", "address"),
            ("1#x", "address"),
            ("1:a", "address"),
            (":", "label"),
            ("bx#;w f", "label"),
            ("s/a/b/x", "flag"),
            ("s/a/b/\rw", "flag"),
            ("p x", "unexpected"),
            ("pw x", "unexpected"),
            ("1,", "address"),
            ("1", "missing command"),
            ("1!!p", "`!`"),
            ("1\np", "newline"),
        ] {
            script_refused(script, mention);
        }
    }

    #[test]
    fn paging_invocations_are_allowed() {
        args_ok(&["-n", "120,200p", "src/main.rs"]);
        args_ok(&["-n", "/fn main/,/^}/p", "src/main.rs"]);
        args_ok(&["-n", "$=", "a.txt"]);
        args_ok(&["$p", "a.txt"]);
        args_ok(&["5q", "a.txt"]);
        args_ok(&["p"]);
        args_ok(&["p", "-"]);
        args_ok(&["1!G;h;$!d", "a.txt"]);
    }

    #[test]
    fn option_spellings_are_allowed() {
        args_ok(&["-n", "-e", "1,5p", "f"]);
        args_ok(&["-ne", "1,5p", "f"]);
        args_ok(&["-nE", "s/(a)/\\1/p", "f"]);
        args_ok(&["-e1,5p", "f"]);
        args_ok(&["-nes/i/x/", "f"]);
        args_ok(&["--expression=1,5p", "f"]);
        args_ok(&["--expression", "1,5p", "f"]);
        args_ok(&["--expr=1,5p", "f"]);
        args_ok(&["--e", "1,5p", "f"]);
        args_ok(&["-e", "p", "-e", "1d", "a", "b"]);
        args_ok(&["--quiet", "1p"]);
        args_ok(&["--silent", "1p"]);
        args_ok(&["--qu", "1p"]);
        args_ok(&["-s", "-u", "-z", "-b", "-r", "-E", "p", "f"]);
        args_ok(&[
            "--posix",
            "--debug",
            "--sandbox",
            "--follow-symlinks",
            "p",
            "f",
        ]);
        args_ok(&[
            "--separate",
            "--unbuffered",
            "--binary",
            "--regexp-extended",
            "p",
        ]);
        args_ok(&["--null-data", "--zero-terminated", "p"]);
        args_ok(&["--sep", "--sa", "--si", "--fo", "p"]);
        args_ok(&["-l", "5", "l", "f"]);
        args_ok(&["-l5", "l"]);
        args_ok(&["-nl5", "l"]);
        args_ok(&["--line-length=5", "l"]);
        args_ok(&["--line-length", "5", "l"]);
    }

    #[test]
    fn operands_are_read_like_gnu() {
        // Options may follow operands.
        args_ok(&["p", "-n", "f"]);
        // With -e, every operand is an input file, even one that looks like a command.
        args_ok(&["-e", "p", "w"]);
        // `--` ends options: `-i` is then a file name.
        args_ok(&["-n", "--", "1p", "-i"]);
        // An option argument is taken whatever it looks like.
        args_ok(&["-l", "-i", "p"]);
        args_refused(&["-e", "-n", "f"], "`-`");
    }

    #[test]
    fn in_place_is_refused_in_every_form() {
        for list in [
            &["-i", "s/a/b/", "f"][..],
            &["-i.bak", "s/a/b/", "f"],
            &["-ni", "p", "f"],
            &["-in", "p", "f"],
            &["-i", "-n", "p"],
            &["-n", "-i", "p"],
            &["--in-place", "p", "f"],
            &["--in-place=.bak", "p", "f"],
            &["--in", "p", "f"],
            &["--in-pl", "p", "f"],
            &["--i=.bak", "p", "f"],
            &["p", "f", "-i"],
        ] {
            args_refused(list, "in-place");
        }
    }

    #[test]
    fn script_files_and_unknown_options_are_refused() {
        args_refused(&["-f", "script.sed", "f"], "--file");
        args_refused(&["-nf", "script.sed", "f"], "--file");
        args_refused(&["--file=script.sed", "f"], "--file");
        args_refused(&["--fi", "script.sed", "f"], "--file");
        args_refused(&["--f", "x", "p"], "ambiguous");
        args_refused(&["--s", "p"], "ambiguous");
        args_refused(&["-x", "p"], "`-x`");
        args_refused(&["-V", "4", "p"], "`-V`");
        args_refused(&["-p", "p"], "`-p`");
        args_refused(&["--bogus", "p"], "`--bogus`");
        args_refused(&["--=x", "p"], "unknown");
        args_refused(&["--help"], "--help");
        args_refused(&["--version"], "--version");
        args_refused(&["--quiet=1", "p"], "no argument");
        args_refused(&["-e"], "needs an argument");
        args_refused(&["--expression"], "needs an argument");
        args_refused(&["-n", "-l"], "needs an argument");
    }

    #[test]
    fn missing_or_refused_scripts_are_refused() {
        args_refused(&[], "needs a script");
        args_refused(&["-n"], "needs a script");
        args_refused(&["-n", "w out", "f"], "`w`");
        args_refused(&["-n", "--", "w out"], "`w`");
        args_refused(&["-e", "p", "-e", "w x", "f"], "`w`");
        args_refused(&["-es/a/b/w x", "f"], "`w`");
        args_refused(&["--expression=1e id", "f"], "`e`");
        args_refused(&["-ei"], "`i`");
        args_refused(&["-", "f"], "`-`");
        // Braces must balance within each -e (GNU allows splitting them; we do not).
        args_refused(&["-e", "1{", "-e", "p", "-e", "}"], "`{`");
    }

    const SAFE: &[&str] = &[
        "p",
        "1,5p",
        "$!N",
        "/re/p",
        "\\,x,p",
        "s/a/b/g",
        "s,/a,/b,2p",
        "y/ab/cd/",
        "h",
        "G",
        "x",
        "{p}",
        "1{/x/{n}}",
        ":a",
        "b end",
        "t",
        "l 5",
        "q",
        "$=",
        "s/[/;]/x/",
    ];

    proptest! {
        #[test]
        fn scripts_never_panic(script in any::<String>()) {
            let _ = check_script(&script);
        }

        #[test]
        fn lossy_bytes_never_panic(bytes in vec(any::<u8>(), 0..256)) {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let _ = check_script(&text);
            let _ = check_args(std::slice::from_ref(&text));
        }

        #[test]
        fn sed_like_scripts_never_panic(
            script in "[/\\\\;{}!#spwWerRyaicbtq0-9,$~+ \t\n\r\\[\\]:.=^IMg-]{0,40}"
        ) {
            let _ = check_script(&script);
        }

        #[test]
        fn args_never_panic(list in vec("-{0,2}[a-zA-Z=.0-9 -]{0,14}|[^\u{0}]{0,10}", 0..6)) {
            let _ = check_args(&list);
        }

        #[test]
        fn dangerous_command_after_semicolon_is_refused(
            prefix in vec(select(SAFE), 0..6),
            sep in select(&[";", "; ", " ;", ";\n", ";;"][..]),
            bad in select(&["w out", "W out", "e", "e id", "r /etc/passwd", "R f", "1,3w x"][..]),
        ) {
            let script = format!("{}{sep}{bad}", prefix.join(";"));
            let cmd = bad.trim_start_matches(|c: char| c.is_ascii_digit() || c == ',');
            let mention = format!("`{}`", &cmd[..1]);
            match check_script(&script) {
                Ok(()) => prop_assert!(false, "accepted {:?}", script),
                Err(NotPrintOnly(why)) => prop_assert!(why.contains(&mention), "{:?}: {}", script, why),
            }
            let invocation = args(&["-n", &script, "f"]);
            prop_assert!(check_args(&invocation).is_err());
        }
    }
}
