//! The judgements a table row cannot express: wrappers whose inner command is judged in turn
//! (`timeout`, `npx`, `uv run`, `python -m pytest`), programs whose safe form depends on their
//! arguments (`sed`, `env`, `make`, `cargo`; git's is in [`super::git`]), and the write targets
//! of `tee` and `dd`. Each is one function named after its program; [`super::programs`] says
//! which row uses which.

use super::programs::{self, nested, tier_message, Call, Verdict};
use super::{refuse, sed, words, Refusal, Rule, Walker};

type Judged = Result<Verdict, Refusal>;

const ALLOW: Judged = Ok(Verdict::Allow);

fn gated(call: &Call) -> Judged {
    let words: Vec<&str> = std::iter::once(call.base)
        .chain(call.argv.iter().map(String::as_str))
        .collect();
    refuse(Rule::Tier, tier_message(&words))
}

fn writes(what: &str) -> Judged {
    refuse(
        Rule::DangerousFlag,
        format!(
            "ws_shell refused: `{what}` with that flag changes files or state. Run it in its read-only form instead (e.g. --check), and change files with the edit tools."
        ),
    )
}

/// `sh script.sh` runs a script (the user may allow it); `sh -c`, `sh -s`, `sh` alone and
/// `sh -` read commands from somewhere unseen.
pub fn shell(_w: &Walker, call: &Call) -> Judged {
    if call.user {
        return ALLOW;
    }
    let reads_commands = call.argv.is_empty()
        || call.argv.iter().any(|a| {
            a == "-"
                || (a.starts_with('-')
                    && !a.starts_with("--")
                    && (a.contains('c') || a.contains('s')))
        });
    if reads_commands {
        return refuse(Rule::NestedInterpreter, nested(call.base));
    }
    gated(call)
}

/// `command -v NAME` (and `-V`) only say where a program is; `command NAME` runs it unseen.
pub fn command(_w: &Walker, call: &Call) -> Judged {
    let lookup = matches!(call.argv.first().map(String::as_str), Some("-v" | "-V"));
    if lookup || call.user {
        return ALLOW;
    }
    refuse(Rule::NestedInterpreter, nested("command"))
}

/// xargs runs commands from its input: refused, and named for what it feeds.
pub fn xargs(_w: &Walker, call: &Call) -> Judged {
    if call.user {
        return ALLOW;
    }
    let rule = if call
        .argv
        .iter()
        .any(|a| programs::is_interpreter(a.rsplit('/').next().unwrap_or(a)))
    {
        Rule::NestedInterpreter
    } else {
        Rule::Tier
    };
    refuse(
        rule,
        "ws_shell refused: xargs runs other commands from its input. Run the command on the files directly instead.",
    )
}

/// `env` prints the environment; with a command, or with `-S`/`-C`/signal options, it runs
/// something else.
pub fn env(_w: &Walker, call: &Call) -> Judged {
    if call.user {
        return ALLOW;
    }
    let mut args = call.argv.iter();
    while let Some(a) = args.next() {
        match a.as_str() {
            "-i" | "--ignore-environment" | "-0" | "--null" | "-" => {}
            "-u" => {
                args.next();
            }
            _ if a.starts_with("--unset=") || (a.starts_with("-u") && a.len() > 2 && !a.starts_with("--")) => {}
            _ if a.starts_with('-') => {
                return refuse(
                    Rule::NestedInterpreter,
                    "ws_shell refused: that env option (-S, --split-string, -C, a signal option) runs or changes a command. Run `env` alone to see the environment, or set a harmless variable as a prefix (`RUST_BACKTRACE=1 cargo test`) instead.",
                )
            }
            _ if a.contains('=') => {}
            _ => {
                return refuse(
                    Rule::NestedInterpreter,
                    "ws_shell refused: `env … COMMAND` runs COMMAND with a changed environment. Run the command directly, with a harmless prefix like `RUST_BACKTRACE=1` if needed, instead.",
                )
            }
        }
    }
    ALLOW
}

/// `uniq IN OUT` writes OUT.
pub fn uniq(_w: &Walker, call: &Call) -> Judged {
    if call.positionals.len() > 1 && !call.user {
        return writes("uniq IN OUT");
    }
    ALLOW
}

/// `xxd -r` (and `xxd IN OUT`) write a file.
pub fn xxd(_w: &Walker, call: &Call) -> Judged {
    let reverse = call
        .argv
        .iter()
        .any(|a| a == "-r" || a == "-revert" || (a.starts_with("-r") && !a.starts_with("--")));
    if (reverse || call.positionals.len() > 1) && !call.user {
        return writes("xxd");
    }
    ALLOW
}

/// `printf -v NAME` assigns a variable, and bash evaluates a subscript in NAME.
pub fn printf(_w: &Walker, call: &Call) -> Judged {
    if call.argv.first().is_some_and(|a| a == "-v") && !call.user {
        return refuse(
            Rule::Expansion,
            "ws_shell refused: `printf -v` assigns a variable (and bash runs what a subscript in its name holds). Print the value instead.",
        );
    }
    ALLOW
}

/// `test`, `[`, `read` and `unset` evaluate an array subscript in a name they are given, and a
/// `$(…)` inside it runs even though the word was quoted.
pub fn subscripts(_w: &Walker, call: &Call) -> Judged {
    if !call.user && call.argv.iter().any(|a| words::subscript_with_command(a)) {
        return refuse(
            Rule::Expansion,
            "ws_shell refused: a name with a subscript holding `$(…)` or a backtick runs that command in bash. Use plain names and literal values instead.",
        );
    }
    ALLOW
}

/// `export NAME=VALUE` sets the environment of every later command: only the harmless names.
pub fn export(_w: &Walker, call: &Call) -> Judged {
    if call.user {
        return ALLOW;
    }
    for a in call.argv {
        if a == "-p" || a == "-n" {
            continue;
        }
        let name = a.split('=').next().unwrap_or(a);
        if !programs::harmless_variable(name) {
            return refuse(
                Rule::EnvPrefix,
                format!(
                    "ws_shell refused: exporting {name} can change which programs run or what they read (only LANG, LC_*, TZ, NO_COLOR, RUST_BACKTRACE, CI and a few like them may be set). Run the command without it instead."
                ),
            );
        }
    }
    ALLOW
}

/// A `cd` that is not the first command of a chain: only `cd .`.
pub fn cd(_w: &Walker, call: &Call) -> Judged {
    if call.argv.len() == 1 && call.argv[0] == "." {
        return ALLOW;
    }
    refuse(
        Rule::Tier,
        "ws_shell refused: `cd` moves later commands only as the first command of a chain. Put it first — `cd DIR && COMMAND` — instead.",
    )
}

/// `ps e`, `ps auxe`: the BSD `e` shows every process's environment, where secrets live.
pub fn ps(_w: &Walker, call: &Call) -> Judged {
    let env = call.positionals.iter().any(|i| {
        call.argv[*i].chars().all(|c| c.is_ascii_alphabetic()) && call.argv[*i].contains('e')
    });
    if env && !call.user {
        return refuse(
            Rule::DangerousFlag,
            "ws_shell refused: the BSD `e` modifier (`ps e`, `ps auxe`) prints other processes' environments, which hold secrets. Run `ps aux` (or `ps -ef`) instead.",
        );
    }
    ALLOW
}

/// `less`/`more` print like `cat` when not on a terminal; their `+cmd` and key-binding options
/// are refused.
pub fn pager(_w: &Walker, call: &Call) -> Judged {
    if call.user {
        return ALLOW;
    }
    const SAFE: &[&str] = &[
        "-N",
        "-n",
        "-S",
        "-R",
        "-r",
        "-X",
        "-F",
        "-E",
        "-e",
        "-i",
        "-I",
        "-M",
        "-m",
        "-f",
        "--line-numbers",
        "--chop-long-lines",
        "--RAW-CONTROL-CHARS",
        "--no-init",
        "--quit-if-one-screen",
    ];
    for a in call.argv {
        if a.starts_with('+')
            || (a.starts_with('-') && a != "-" && a != "--" && !SAFE.contains(&a.as_str()))
        {
            return refuse(
                Rule::DangerousFlag,
                format!("ws_shell refused: `{} {a}` is not needed to print a file. Run `cat FILE` or `head -n 200 FILE` (or ws_read) instead.", call.base),
            );
        }
    }
    ALLOW
}

/// `base64 -d > file` writes a binary the edit tools cannot see.
pub fn base64(_w: &Walker, call: &Call) -> Judged {
    let decode = call.argv.iter().any(|a| {
        a == "-d"
            || a == "-D"
            || a == "--decode"
            || (a.starts_with('-') && !a.starts_with("--") && a.contains('d'))
    });
    if decode && call.stdout_to_file && !call.user {
        return refuse(
            Rule::DangerousFlag,
            "ws_shell refused: decoding base64 into a file writes bytes the edit tools cannot review. Decode to the output instead, or create files with ws_write.",
        );
    }
    ALLOW
}

/// `hostname NAME` sets the host name.
pub fn hostname(_w: &Walker, call: &Call) -> Judged {
    if !call.positionals.is_empty() && !call.user {
        return writes("hostname NAME");
    }
    ALLOW
}

/// sed may only print here: no `-i`, no `w`/`e`/`r` commands (see [`sed`]).
pub fn sed(w: &Walker, call: &Call) -> Judged {
    if call.user {
        // The user allowed it (`sed -i`): its file operands still may not be protected ones.
        // Without -e/-f the first operand is the script.
        let scripted = call.argv.iter().any(|a| {
            a == "-e" || a == "-f" || a.starts_with("--expression") || a.starts_with("--file")
        });
        let mut operands = call
            .argv
            .iter()
            .zip(call.raw)
            .filter(|(a, _)| !a.starts_with('-'))
            .map(|(_, raw)| raw);
        if !scripted {
            operands.next();
        }
        for raw in operands {
            w.operand(raw)?;
        }
        return ALLOW;
    }
    match sed::check_args(call.argv) {
        Ok(()) => ALLOW,
        Err(why) => refuse(
            Rule::Tier,
            format!(
                "ws_shell refused: sed may only print here — {why}. Change files with ws_edit instead; to page a file, run `sed -n '120,200p' FILE` (or ws_read)."
            ),
        ),
    }
}

/// tee's and sponge's operands are files they write (append with `-a`).
pub fn tee(w: &Walker, call: &Call) -> Judged {
    let append = call.argv.iter().any(|a| a == "-a" || a == "--append");
    for i in &call.positionals {
        w.write_target(&call.raw[*i], append)?;
    }
    ALLOW
}

/// dd's `of=` is a file it writes.
pub fn dd(w: &Walker, call: &Call) -> Judged {
    for raw in call.raw {
        let lit = words::literal(raw);
        if let Some(target) = lit.strip_prefix("of=") {
            let raw_target = raw.strip_prefix("of=").unwrap_or(target);
            w.write_target(raw_target, false)?;
        }
    }
    ALLOW
}

/// cargo: the runner subcommands (after an optional `+toolchain`); `cargo fmt` only with
/// `--check`.
pub fn cargo(_w: &Walker, call: &Call) -> Judged {
    if call.user {
        return ALLOW;
    }
    const SUBCOMMANDS: &[&str] = &[
        "build",
        "b",
        "check",
        "c",
        "test",
        "t",
        "clippy",
        "fmt",
        "doc",
        "d",
        "tree",
        "metadata",
        "bench",
        "nextest",
        "version",
        "--version",
        "-V",
        "--list",
    ];
    let mut subs = call
        .positionals
        .iter()
        .map(|i| call.argv[*i].as_str())
        .skip_while(|s| s.starts_with('+'));
    let sub = subs.next().unwrap_or_else(|| {
        call.argv
            .iter()
            .find(|a| ["--version", "-V", "--list"].contains(&a.as_str()))
            .map(String::as_str)
            .unwrap_or("")
    });
    if !SUBCOMMANDS.contains(&sub) {
        return refuse(
            Rule::Tier,
            format!(
                "ws_shell refused: `cargo {sub}` is not one of the cargo commands allowed here (build, check, test, clippy, fmt --check, doc, tree, metadata, bench, nextest). Run one of those instead — or ask the user to add a `shell_allow` prefix for it."
            ),
        );
    }
    if sub == "fmt" && !call.argv.iter().any(|a| a == "--check") {
        return writes("cargo fmt");
    }
    ALLOW
}

/// npm, pnpm, yarn, bun: the project's test, lint and check scripts, and listings.
pub fn node_scripts(_w: &Walker, call: &Call) -> Judged {
    if call.user {
        return ALLOW;
    }
    let script_ok = |s: &str| {
        s == "test"
            || s.starts_with("test:")
            || s.starts_with("test-")
            || [
                "lint",
                "check",
                "typecheck",
                "type-check",
                "format:check",
                "lint:check",
            ]
            .contains(&s)
    };
    let pos: Vec<&str> = call
        .positionals
        .iter()
        .map(|i| call.argv[*i].as_str())
        .collect();
    let ok = match pos.as_slice() {
        [] => call.argv.iter().any(|a| a == "--version" || a == "-v"),
        ["test" | "t" | "tst", ..] => true,
        ["run" | "run-script", script, ..] => script_ok(script),
        ["ls" | "list" | "ll" | "la" | "why" | "explain" | "outdated", ..] => true,
        [script, ..] if call.base == "yarn" => script_ok(script),
        _ => false,
    };
    if ok {
        return ALLOW;
    }
    refuse(
        Rule::Tier,
        format!(
            "ws_shell refused: `{} {}` is not a test, lint or check script. Run `{} test` (or `{} run test:…`) instead — or ask the user to add a `shell_allow` prefix for it.",
            call.base,
            pos.join(" "),
            call.base,
            call.base
        ),
    )
}

/// The test runners `npx` may start; the runner's own row then judges its arguments.
const NPX_RUNNERS: &[&str] = &[
    "jest",
    "vitest",
    "mocha",
    "ava",
    "tap",
    "tsc",
    "eslint",
    "prettier",
    "playwright",
];

/// `npx RUNNER args`: judged as `RUNNER args`.
pub fn npx(_w: &Walker, call: &Call) -> Judged {
    if call.user {
        return ALLOW;
    }
    let Some(&i) = call.positionals.first() else {
        return gated(call);
    };
    let name = call.argv[i].split('@').next().unwrap_or("");
    if NPX_RUNNERS.contains(&name) && call.argv[i] == name {
        return Ok(Verdict::Run(i));
    }
    refuse(
        Rule::Tier,
        format!(
            "ws_shell refused: `npx {}` is not one of the test runners npx may start here ({}). Run one of those (or `npm test`) instead — or ask the user to add a `shell_allow` prefix for it.",
            call.argv[i],
            NPX_RUNNERS.join(", ")
        ),
    )
}

/// `uv run CMD`, `poetry run CMD`, `pipenv run CMD`: judged as `CMD`.
pub fn run_wrapper(w: &Walker, call: &Call) -> Judged {
    if call.user {
        return ALLOW;
    }
    const VALUE: &[&str] = &[
        "--with",
        "--python",
        "-p",
        "--extra",
        "--group",
        "--package",
        "--env-file",
        "--project",
        "--directory",
        "--index",
        "--only-group",
        "-C",
    ];
    let argv = call.argv;
    if argv.len() == 1 && ["--version", "-V"].contains(&argv[0].as_str()) {
        return ALLOW;
    }
    if argv.first().map(String::as_str) != Some("run") {
        return gated(call);
    }
    let mut i = 1;
    while i < argv.len() && argv[i].starts_with('-') {
        let name = argv[i].split('=').next().unwrap_or("");
        if ["--directory", "-C", "--project"].contains(&name) {
            let dir = if argv[i].contains('=') {
                argv[i]
                    .split_once('=')
                    .map(|(_, v)| v.to_string())
                    .unwrap_or_default()
            } else {
                i += 1;
                call.raw.get(i).cloned().unwrap_or_default()
            };
            w.directory(&dir)?;
        } else if VALUE.contains(&name) && !argv[i].contains('=') {
            i += 1;
        }
        i += 1;
    }
    if i >= argv.len() {
        return gated(call);
    }
    Ok(Verdict::Run(i))
}

/// `timeout DURATION CMD`: CMD judged in turn, and the bound no longer than the call's own.
pub fn timeout(w: &Walker, call: &Call) -> Judged {
    let argv = call.argv;
    let mut i = 0;
    while i < argv.len() && argv[i].starts_with('-') {
        if ["-s", "--signal", "-k", "--kill-after"].contains(&argv[i].as_str()) {
            i += 1;
        }
        i += 1;
    }
    let (Some(duration), true) = (argv.get(i), i + 1 < argv.len()) else {
        return refuse(Rule::Parse, "ws_shell refused: `timeout` needs a duration and a command. Run `timeout 60 cargo test` (or pass timeout_sec) instead.");
    };
    let limit = call_limit(duration);
    match limit {
        Some(secs) if secs > 0.0 && secs <= w.policy.timeout_secs as f64 => Ok(Verdict::Run(i + 1)),
        _ => refuse(
            Rule::Tier,
            format!(
                "ws_shell refused: `timeout {duration}` is not a bound within this call's own timeout ({} s). Pass a larger timeout_sec (up to shell_timeout_max), or a shorter timeout, instead.",
                w.policy.timeout_secs
            ),
        ),
    }
}

/// A timeout duration in seconds (`30`, `1.5m`, `2h`).
fn call_limit(text: &str) -> Option<f64> {
    let (number, unit) = match text.char_indices().last() {
        Some((at, c)) if c.is_ascii_alphabetic() => (&text[..at], c),
        _ => (text, 's'),
    };
    let n: f64 = number.parse().ok()?;
    let scale = match unit {
        's' => 1.0,
        'm' => 60.0,
        'h' => 3600.0,
        'd' => 86_400.0,
        _ => return None,
    };
    n.is_finite().then_some(n * scale)
}

/// `make test`, `make check`: the test targets; no other makefile, no variable overrides
/// (`SHELL=…` or `CC=…` would choose the programs), `-C` inside the project. Bare `make`
/// builds whatever comes first, so it needs the user.
pub fn make(w: &Walker, call: &Call) -> Judged {
    if call.user {
        return ALLOW;
    }
    for (i, a) in call.argv.iter().enumerate() {
        if a == "-C" || a == "--directory" {
            if let Some(dir) = call.raw.get(i + 1) {
                w.directory(dir)?;
            }
        } else if let Some(dir) = a
            .strip_prefix("--directory=")
            .or_else(|| a.strip_prefix("-C").filter(|d| !d.is_empty()))
        {
            w.directory(dir)?;
        }
    }
    let targets: Vec<&str> = call
        .positionals
        .iter()
        .map(|i| call.argv[*i].as_str())
        .collect();
    if targets.iter().any(|t| t.contains('=')) {
        return refuse(
            Rule::EnvPrefix,
            "ws_shell refused: variable overrides on make's command line (SHELL=…, CC=…) choose the programs recipes run. Run `make test` (or `make check`) without them instead.",
        );
    }
    if !targets.is_empty()
        && targets
            .iter()
            .all(|t| ["test", "tests", "check"].contains(t))
    {
        return ALLOW;
    }
    refuse(
        Rule::Tier,
        format!(
            "ws_shell refused: `make {}` is not a test target. Run `make test` or `make check` instead — or ask the user to add a `shell_allow` prefix (e.g. \"make\") for it.",
            targets.join(" ")
        ),
    )
}

/// `python -m pytest` is pytest; `python -m unittest` runs tests; `--version` prints. Anything
/// else runs arbitrary code and needs the user.
pub fn python(_w: &Walker, call: &Call) -> Judged {
    if call.user {
        return ALLOW;
    }
    let argv = call.argv;
    let mut i = 0;
    while i < argv.len() {
        match argv[i].as_str() {
            "--version" | "-V" | "-VV" | "--help" | "-h" if argv.len() == 1 => return ALLOW,
            "-m" => {
                return match argv.get(i + 1).map(String::as_str) {
                    Some("pytest") => Ok(Verdict::Run(i + 1)),
                    Some("unittest") => ALLOW,
                    _ => gated(call),
                }
            }
            "-B" | "-u" | "-q" | "-I" | "-E" | "-s" | "-S" | "-O" | "-OO" | "-b" | "-bb" => {}
            "-W" | "-X" => i += 1,
            _ => return gated(call),
        }
        i += 1;
    }
    gated(call)
}

/// Interpreters run whatever script or code they are given: only `--version` without the user.
pub fn interpreter(_w: &Walker, call: &Call) -> Judged {
    if call.user
        || (call.argv.len() == 1
            && ["--version", "-v", "-V", "version"].contains(&call.argv[0].as_str()))
    {
        return ALLOW;
    }
    gated(call)
}

/// rustfmt and black rewrite files unless told to check; ruff does with `format` (or
/// `--fix`).
pub fn formatter(_w: &Walker, call: &Call) -> Judged {
    if call.user {
        return ALLOW;
    }
    let has = |f: &str| call.argv.iter().any(|a| a == f);
    let read_only = match call.base {
        "ruff" => {
            let format = call
                .positionals
                .first()
                .is_some_and(|i| call.argv[*i] == "format");
            !format || has("--check") || has("--diff")
        }
        _ => has("--check") || has("--diff"),
    };
    if read_only {
        ALLOW
    } else {
        writes(call.base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(call_limit("30"), Some(30.0));
        assert_eq!(call_limit("1.5m"), Some(90.0));
        assert_eq!(call_limit("2h"), Some(7200.0));
        assert_eq!(call_limit("10x"), None);
        assert_eq!(call_limit("inf"), None);
    }
}
