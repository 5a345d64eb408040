//! The program table: for every program ws_shell knows, one row saying what it may do — its
//! tier, the options that run another program or write a file (refused), the options whose
//! value is an output path (checked), the subcommands a runner may take — and, where a table
//! cannot say it, a judgement of its own in `super::checks`. `judge` is the one
//! interpreter of the table; the case suite proves every row and every denial is exercised.
//!
//! Options are read the way the programs read them: short options cluster (`-us2000` is `-u`
//! then `-s 2000`) until one that takes a value; GNU-style long options may be abbreviated
//! (`--compress-prog`); `--` ends the options.

use super::{checks, git};
use super::{refuse, Refusal, Rule, Walker};

/// How far a program may go without the user's `shell_allow`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// Reads and prints.
    Inspect,
    /// Builds and tests: runs project code, inside the sandbox.
    Runner,
    /// Changes files, runs arbitrary code, or reaches the network: only with the user's
    /// `shell_allow` prefix.
    Gated,
    /// Runs another command out of sight (a shell's `-c`, `eval`, `sudo`, `nohup`): never.
    Never,
}

/// An option a program may not be given.
#[derive(Debug)]
pub struct Deny {
    /// `-x` (also inside a cluster), `--long` (also `--long=v` and, where the program allows
    /// it, an abbreviation), or `-long` for programs with single-dash long options.
    pub opt: &'static str,
    /// Refused even when the user allowed the command: it runs another program.
    pub runs: bool,
    pub rule: Rule,
    /// The refusal, naming what to run instead.
    pub why: &'static str,
}

/// What a judgement of a row's own decides.
pub enum Verdict {
    Allow,
    /// `argv[i]` is a program to judge with the arguments after it (`timeout 60 CMD`).
    Run(usize),
}

/// One invocation, as a row's judgement sees it.
pub struct Call<'a> {
    pub base: &'a str,
    /// The arguments, quotes removed.
    pub argv: &'a [String],
    /// The same arguments as written.
    pub raw: &'a [String],
    /// Indices of the positional arguments.
    pub positionals: Vec<usize>,
    /// Standard output goes to a file.
    pub stdout_to_file: bool,
    /// The user's `shell_allow` has a prefix of the command: only what runs another program
    /// is still refused (and protected places, always).
    pub user: bool,
}

/// A row's own judgement.
pub type Judgement = fn(&Walker, &Call) -> Result<Verdict, Refusal>;

/// One row of the table.
pub struct Program {
    pub names: &'static [&'static str],
    pub tier: Tier,
    /// Long options may be abbreviated to any unambiguous prefix (getopt_long, git).
    pub abbreviates: bool,
    /// Long options take one dash (`find -exec`, `go test -exec`).
    pub single_dash: bool,
    /// Options that take a value: the value is the next word or, for a short option, the rest
    /// of its cluster. A trailing `?` marks a value that can only be attached (`date -Iseconds`).
    pub takes_value: &'static [&'static str],
    pub deny: &'static [Deny],
    /// Options whose value is a path the program writes: it must be inside the project and
    /// outside every protected place.
    pub outputs: &'static [&'static str],
    /// For runners: the first positional must be one of these.
    pub subcommands: &'static [&'static str],
    /// Its operands are files it changes: none may name a protected place. (Rows that read
    /// their own options check their operands themselves.)
    pub changes_operands: bool,
    /// The row reads its own options (git's global options before the subcommand).
    pub own_options: bool,
    pub judgement: Option<Judgement>,
}

const BASE: Program = Program {
    names: &[],
    tier: Tier::Inspect,
    abbreviates: false,
    single_dash: false,
    takes_value: &[],
    deny: &[],
    outputs: &[],
    subcommands: &[],
    changes_operands: false,
    own_options: false,
    judgement: None,
};

const fn runs(opt: &'static str, rule: Rule, why: &'static str) -> Deny {
    Deny {
        opt,
        runs: true,
        rule,
        why,
    }
}

const fn writes(opt: &'static str, why: &'static str) -> Deny {
    Deny {
        opt,
        runs: false,
        rule: Rule::DangerousFlag,
        why,
    }
}

const NESTED: Rule = Rule::NestedInterpreter;
const FLAG: Rule = Rule::DangerousFlag;

const FIND_EXEC: &str = "ws_shell refused: `find -exec` runs other commands. Run find to list the files instead, then act on them with the edit tools.";
const FIND_WRITE: &str = "ws_shell refused: that find flag deletes or writes files. Run find to list the files instead, and delete with ws_delete.";
const FD_EXEC: &str = "ws_shell refused: `fd -x/--exec` runs a command for every match. Run fd to list the files instead, then act on them with the edit tools.";
const RG_PRE: &str = "ws_shell refused: `rg --pre` / `--hostname-bin` runs a program. Run rg without it instead (or use ws_grep).";
const SORT_OUT: &str =
    "ws_shell refused: `sort -o` writes a file. Run sort and read its output instead.";
const SORT_PROG: &str =
    "ws_shell refused: `sort --compress-program` runs a program. Run sort without it instead.";
const DATE_SET: &str =
    "ws_shell refused: `date -s` sets the clock. Run `date` (or `date +%s`) to read it instead.";
const TREE_OUT: &str =
    "ws_shell refused: `tree -o` writes a file. Run tree and read its output instead.";
const FILE_COMPILE: &str = "ws_shell refused: `file -C` writes a compiled magic file. Run `file PATH` to identify files instead.";
const GIT_EXT: &str = "ws_shell refused: that git flag runs a program or writes a file. Run the git command without it instead (git_diff shows diffs).";
const CARGO_CONFIG: &str = "ws_shell refused: `cargo --config` can point cargo at other programs. Run the cargo command without it instead.";
const CARGO_FIX: &str = "ws_shell refused: `--fix` rewrites files. Run it in its read-only form instead (e.g. without --fix), and change files with the edit tools.";
const GO_EXEC: &str = "ws_shell refused: `-exec`/`-toolexec` runs another program around every build step. Run `go test` / `go build` without it instead.";
const GO_WRITE: &str = "ws_shell refused: `go env -w/-u` changes go's settings file. Run `go env` to read them instead.";
const FMT_WRITE: &str = "ws_shell refused: that flag makes the formatter rewrite files. Run it in its read-only form instead (--check, -l or -d), and change files with the edit tools.";
const MAKE_FILE: &str = "ws_shell refused: `make -f/--eval` runs recipes from somewhere other than the project's Makefile. Run `make test` or `make check` instead.";
const TAR_RUNS: &str =
    "ws_shell refused: that tar option runs a program. Run tar without it instead.";
const NPX_RUNS: &str = "ws_shell refused: `npx -c/--call/-p/--package/--yes` runs or installs other programs. Run a test runner the project has, e.g. `npx jest`, instead.";
const LESS_WRITE: &str =
    "ws_shell refused: `less -o` writes a log file. Run `cat FILE` or `head -n 200 FILE` instead.";
const BASE64_OUT: &str = "ws_shell refused: `base64 -o` writes a file. Print the result instead, or write files with ws_write.";
const ESLINT_OUT: &str = "ws_shell refused: `eslint --fix` rewrites files. Run eslint without it instead, and change files with the edit tools.";

/// Tools whose `-n`-style short options take a number.
const LINES: &[&str] = &["-n", "-c", "--lines", "--bytes"];

/// The table. Order does not matter; a name appears in one row only (a test checks).
#[rustfmt::skip]
pub static PROGRAMS: &[Program] = &[
    // ---- Never: they run another command out of sight, or as someone else.
    Program { names: &["eval", "source", ".", "exec", "builtin", "trap", "alias", "let", "declare", "typeset", "local", "readonly", "mapfile", "readarray", "enable", "shopt", "fc", "coproc", "hash"], tier: Tier::Never, ..BASE },
    Program { names: &["nohup", "setsid", "stdbuf", "chroot", "sudo", "doas", "su", "runuser", "pkexec", "nice", "ionice", "unshare", "nsenter", "watch", "script", "flock", "chrt", "taskset", "systemd-run", "strace", "ltrace", "gdb", "time"], tier: Tier::Never, ..BASE },
    Program { names: &["sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "busybox"], tier: Tier::Gated, judgement: Some(checks::shell), ..BASE },
    Program { names: &["command"], tier: Tier::Never, judgement: Some(checks::command), ..BASE },
    Program { names: &["xargs"], tier: Tier::Gated, judgement: Some(checks::xargs), ..BASE },
    Program { names: &["env"], judgement: Some(checks::env), own_options: true, ..BASE },
    // ---- Inspection.
    Program { names: &["ls", "cat", "wc", "grep", "egrep", "fgrep", "stat", "du", "df", "pwd", "echo", "true", "false", "which", "whereis", "type", "diff", "cmp", "cut", "tr", "jq", "seq", "sleep", "basename", "dirname", "realpath", "readlink", "od", "hexdump", "nl", "printenv", "uname", "whoami", "id", "column", "comm", "paste", "fold", "rev", "tac", "sha256sum", "sha1sum", "sha512sum", "md5sum", "b2sum", "cksum", "expr", "yes", "nproc", "free", "uptime", "numfmt", "exit", "set", "shift", "getopts", "wait", "umask", "ulimit"], ..BASE },
    Program { names: &["head", "tail"], takes_value: LINES, ..BASE },
    Program { names: &["rg"], takes_value: &["-e", "-f", "-g", "-t", "-T", "-m", "-A", "-B", "-C", "-M", "-j", "-r", "-E", "--regexp", "--file", "--glob", "--iglob", "--type", "--type-not", "--max-count", "--context", "--after-context", "--before-context", "--replace", "--max-columns", "--threads", "--encoding"], deny: &[runs("--pre", FLAG, RG_PRE), runs("--hostname-bin", FLAG, RG_PRE)], ..BASE },
    Program { names: &["fd", "fdfind"], takes_value: &["-e", "-t", "-E", "-d", "-c", "-j", "--extension", "--type", "--exclude", "--max-depth", "--min-depth", "--color", "--threads", "--base-directory", "--search-path"], deny: &[runs("-x", NESTED, FD_EXEC), runs("--exec", NESTED, FD_EXEC), runs("-X", NESTED, FD_EXEC), runs("--exec-batch", NESTED, FD_EXEC)], ..BASE },
    Program { names: &["find"], single_dash: true, deny: &[runs("-exec", NESTED, FIND_EXEC), runs("-execdir", NESTED, FIND_EXEC), runs("-ok", NESTED, FIND_EXEC), runs("-okdir", NESTED, FIND_EXEC), writes("-delete", FIND_WRITE), writes("-fprint", FIND_WRITE), writes("-fprint0", FIND_WRITE), writes("-fprintf", FIND_WRITE), writes("-fls", FIND_WRITE)], ..BASE },
    Program { names: &["tree"], takes_value: &["-L", "-P", "-I", "-o", "--filelimit", "--charset"], deny: &[writes("-o", TREE_OUT)], ..BASE },
    Program { names: &["file"], takes_value: &["-m", "-f", "-F", "-P", "-e"], deny: &[writes("-C", FILE_COMPILE), writes("--compile", FILE_COMPILE)], ..BASE },
    Program { names: &["sort"], abbreviates: true, takes_value: &["-k", "-t", "-S", "-T", "-o", "--key", "--field-separator", "--buffer-size", "--temporary-directory", "--output", "--parallel", "--batch-size", "--compress-program", "--files0-from", "--sort"], deny: &[writes("-o", SORT_OUT), writes("--output", SORT_OUT), runs("--compress-program", FLAG, SORT_PROG)], ..BASE },
    Program { names: &["date"], abbreviates: true, takes_value: &["-d", "-f", "-r", "-s", "-I?", "--date", "--file", "--reference", "--set"], deny: &[writes("-s", DATE_SET), writes("--set", DATE_SET)], ..BASE },
    Program { names: &["uniq"], takes_value: &["-f", "-s", "-w"], judgement: Some(checks::uniq), ..BASE },
    Program { names: &["xxd"], takes_value: &["-c", "-g", "-l", "-o", "-s", "-n"], judgement: Some(checks::xxd), ..BASE },
    Program { names: &["printf"], judgement: Some(checks::printf), own_options: true, ..BASE },
    Program { names: &["test", "[", "read", "unset"], judgement: Some(checks::subscripts), own_options: true, ..BASE },
    Program { names: &["export"], judgement: Some(checks::export), own_options: true, ..BASE },
    Program { names: &["cd"], judgement: Some(checks::cd), own_options: true, ..BASE },
    Program { names: &["ps"], takes_value: &["-o", "-p", "-u", "-U", "-g", "-G", "-C", "--pid", "--ppid", "--user", "--format", "--sort"], judgement: Some(checks::ps), ..BASE },
    Program { names: &["less", "more"], judgement: Some(checks::pager), deny: &[writes("-o", LESS_WRITE), writes("-O", LESS_WRITE), writes("--log-file", LESS_WRITE), writes("--LOG-FILE", LESS_WRITE)], ..BASE },
    Program { names: &["base64"], takes_value: &["-w", "-o", "--wrap", "--output"], deny: &[writes("-o", BASE64_OUT), writes("--output", BASE64_OUT)], judgement: Some(checks::base64), ..BASE },
    Program { names: &["hostname"], judgement: Some(checks::hostname), ..BASE },
    Program { names: &["sed"], judgement: Some(checks::sed), own_options: true, ..BASE },
    Program { names: &["tee", "sponge"], judgement: Some(checks::tee), ..BASE },
    Program { names: &["dd"], judgement: Some(checks::dd), own_options: true, ..BASE },
    Program { names: &["git"], abbreviates: true, takes_value: &["-n", "-e", "-L", "-S", "-G", "-U?", "--max-count", "--since", "--until", "--author", "--grep", "--format", "--pretty", "--date", "--unified"], deny: &[runs("--ext-diff", FLAG, GIT_EXT), writes("--output", GIT_EXT), runs("-O", FLAG, GIT_EXT), runs("--open-files-in-pager", FLAG, GIT_EXT), runs("--upload-pack", FLAG, GIT_EXT), runs("--receive-pack", FLAG, GIT_EXT), runs("--exec", FLAG, GIT_EXT)], own_options: true, judgement: Some(git::git), ..BASE },
    // ---- Runners: they run the project's own code, inside the sandbox.
    Program { names: &["cargo"], tier: Tier::Runner, takes_value: &["-p", "--package", "-j", "--jobs", "--target", "--features", "-F", "--manifest-path", "--test", "--bench", "--bin", "--example", "--message-format", "--color", "--profile", "--exclude", "--target-dir", "--artifact-dir"], deny: &[runs("--config", FLAG, CARGO_CONFIG), writes("--fix", CARGO_FIX)], outputs: &["--target-dir", "--artifact-dir"], judgement: Some(checks::cargo), ..BASE },
    Program { names: &["go"], tier: Tier::Runner, single_dash: true, takes_value: &["-o", "-run", "-bench", "-count", "-timeout", "-tags", "-p", "-C", "-coverprofile", "-cpuprofile", "-memprofile"], deny: &[runs("-exec", FLAG, GO_EXEC), runs("-toolexec", FLAG, GO_EXEC), writes("-w", GO_WRITE), writes("-u", GO_WRITE)], outputs: &["-o", "-coverprofile", "-cpuprofile", "-memprofile", "-outputdir"], subcommands: &["build", "test", "vet", "list", "version", "env", "doc"], ..BASE },
    Program { names: &["npm", "pnpm", "yarn", "bun"], tier: Tier::Runner, takes_value: &["--prefix", "-w", "--workspace", "--filter", "-C", "--dir", "--cwd"], judgement: Some(checks::node_scripts), ..BASE },
    Program { names: &["npx"], tier: Tier::Runner, deny: &[runs("-c", NESTED, NPX_RUNS), runs("--call", NESTED, NPX_RUNS), runs("-p", FLAG, NPX_RUNS), runs("--package", FLAG, NPX_RUNS), runs("-y", FLAG, NPX_RUNS), runs("--yes", FLAG, NPX_RUNS)], judgement: Some(checks::npx), ..BASE },
    Program { names: &["uv", "poetry", "pipenv"], tier: Tier::Runner, judgement: Some(checks::run_wrapper), own_options: true, ..BASE },
    Program { names: &["timeout"], tier: Tier::Runner, judgement: Some(checks::timeout), own_options: true, ..BASE },
    Program { names: &["make", "gmake"], tier: Tier::Runner, abbreviates: true, takes_value: &["-C", "-j", "-l", "-o", "-W", "-I", "--directory", "--jobs", "--load-average", "--old-file", "--what-if", "--include-dir", "-f", "--file", "--makefile"], deny: &[runs("-f", FLAG, MAKE_FILE), runs("--file", FLAG, MAKE_FILE), runs("--makefile", FLAG, MAKE_FILE), runs("--eval", FLAG, MAKE_FILE), runs("-E", FLAG, MAKE_FILE)], judgement: Some(checks::make), ..BASE },
    Program { names: &["python", "python3"], tier: Tier::Gated, judgement: Some(checks::python), own_options: true, ..BASE },
    Program { names: &["node", "ruby", "perl", "php", "deno", "lua", "java", "Rscript", "awk", "gawk", "mawk", "nawk", "tclsh", "osascript"], tier: Tier::Gated, judgement: Some(checks::interpreter), own_options: true, ..BASE },
    Program { names: &["mvn", "gradle", "dotnet"], tier: Tier::Runner, subcommands: &["test", "build", "verify", "check", "compile"], ..BASE },
    Program { names: &["pytest", "py.test"], tier: Tier::Runner, takes_value: &["-k", "-m", "-p", "-c", "-n", "--basetemp", "--junitxml", "--junit-xml", "--rootdir", "--maxfail", "--tb", "--durations"], outputs: &["--basetemp", "--junitxml", "--junit-xml", "--result-log"], ..BASE },
    Program { names: &["jest", "vitest", "mocha", "ava", "tap"], tier: Tier::Runner, takes_value: &["--outputFile", "--coverageDirectory", "-t", "--testNamePattern", "-c", "--config"], outputs: &["--outputFile", "--coverageDirectory"], ..BASE },
    Program { names: &["playwright"], tier: Tier::Runner, subcommands: &["test"], ..BASE },
    Program { names: &["tsc"], tier: Tier::Runner, takes_value: &["-p", "--project", "--outDir", "--outFile", "--declarationDir", "--tsBuildInfoFile"], outputs: &["--outDir", "--outFile", "--declarationDir", "--tsBuildInfoFile"], ..BASE },
    Program { names: &["eslint"], tier: Tier::Runner, takes_value: &["-c", "--config", "-o", "--output-file", "-f", "--format", "--ext"], deny: &[writes("--fix", ESLINT_OUT)], outputs: &["-o", "--output-file"], ..BASE },
    Program { names: &["prettier"], tier: Tier::Runner, deny: &[writes("--write", FMT_WRITE), writes("-w", FMT_WRITE)], ..BASE },
    Program { names: &["gofmt"], tier: Tier::Runner, deny: &[writes("-w", FMT_WRITE)], ..BASE },
    Program { names: &["rustfmt", "black", "ruff"], tier: Tier::Runner, deny: &[writes("--fix", FMT_WRITE)], judgement: Some(checks::formatter), ..BASE },
    Program { names: &["tox", "ctest", "mypy", "flake8", "pylint", "pyright"], tier: Tier::Runner, ..BASE },
    Program { names: &["rustc"], tier: Tier::Runner, takes_value: &["-o", "--out-dir", "--edition", "--crate-type", "--crate-name", "-C", "-L", "--cfg", "--emit", "--target"], outputs: &["-o", "--out-dir"], ..BASE },
    // ---- Gated: they change files, run arbitrary code or reach the network.
    Program { names: &["cp", "mv", "rm", "touch", "ln", "chmod", "chown", "chgrp", "mkdir", "rmdir", "truncate", "install", "rsync", "unzip", "zip", "patch", "shred", "mkfifo", "mknod"], tier: Tier::Gated, changes_operands: true, ..BASE },
    Program { names: &["tar"], tier: Tier::Gated, abbreviates: true, changes_operands: true, deny: &[runs("--checkpoint-action", FLAG, TAR_RUNS), runs("--use-compress-program", FLAG, TAR_RUNS), runs("-I", FLAG, TAR_RUNS), runs("--to-command", FLAG, TAR_RUNS), runs("--info-script", FLAG, TAR_RUNS), runs("--new-volume-script", FLAG, TAR_RUNS), runs("-F", FLAG, TAR_RUNS), runs("--rsh-command", FLAG, TAR_RUNS), runs("--rmt-command", FLAG, TAR_RUNS)], ..BASE },
    Program { names: &["curl", "wget", "ssh", "scp", "sftp", "nc", "ncat", "netcat", "socat", "telnet", "ftp", "rsh", "pip", "pip3", "pipx", "apt", "apt-get", "dpkg", "brew", "gem", "docker", "podman", "kubectl", "systemctl", "service", "kill", "pkill", "killall", "crontab", "at", "open", "xdg-open", "cmake", "ninja", "gcc", "g++", "cc", "clang", "ld"], tier: Tier::Gated, ..BASE },
];

/// The row for a base name.
pub fn row_for(base: &str) -> Option<&'static Program> {
    PROGRAMS.iter().find(|p| p.names.contains(&base))
}

/// Programs that run whatever arrives on their stdin: piping into one is always refused.
pub fn is_interpreter(base: &str) -> bool {
    [
        "sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "python", "python3",
        "perl", "ruby", "node", "php", "lua", "deno", "busybox",
    ]
    .contains(&base)
}

pub fn nested(what: &str) -> String {
    format!(
        "ws_shell refused: `{what}` runs another command or script, so what finally runs cannot be checked. Run the inner command directly instead."
    )
}

/// The refusal for a program outside the tiers.
pub fn tier_message(words: &[&str]) -> String {
    format!(
        "ws_shell refused: `{}` is not in the allowed tiers (inspection commands and build/test runners). Read and search with ws_read/ws_grep, change files with ws_edit/ws_write/ws_mv/ws_delete, and run tests with a runner such as `cargo test` or `npm test` instead — or ask the user to add a `shell_allow` prefix for it.",
        words.iter().take(3).copied().collect::<Vec<_>>().join(" ")
    )
}

/// Assignment prefixes that cannot change which programs run or what they read.
pub fn harmless_variable(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "LANG",
        "LANGUAGE",
        "TZ",
        "TERM",
        "COLUMNS",
        "LINES",
        "NO_COLOR",
        "FORCE_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "CI",
        "RUST_BACKTRACE",
        "RUST_LOG",
        "RUST_TEST_THREADS",
        "RUST_MIN_STACK",
        "CARGO_TERM_COLOR",
        "CARGO_INCREMENTAL",
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONHASHSEED",
        "PYTHONIOENCODING",
        "NODE_ENV",
        "GOOS",
        "GOARCH",
        "CGO_ENABLED",
        "GOMAXPROCS",
        "GOTRACEBACK",
    ];
    NAMES.contains(&name) || name.starts_with("LC_")
}

/// Judges one simple command: where the program comes from, then its row.
pub(crate) fn judge(
    w: &Walker,
    program: &str,
    argv: &[String],
    raw: &[String],
    stdout_to_file: bool,
) -> Result<(), Refusal> {
    let words: Vec<&str> = std::iter::once(program)
        .chain(argv.iter().map(String::as_str))
        .collect();
    // A user's prefix naming a project script (`./gradlew test`) means the one at the root:
    // after a `cd` the same words name another file.
    let relative_path = program.contains('/') && !program.starts_with('/');
    let user = w.allowed_by_user(&words) && (!relative_path || w.at_root());
    if program.contains('/') && !user {
        from_path(w, program)?;
    }
    let base = program.rsplit('/').next().unwrap_or(program);
    let Some(row) = row_for(base) else {
        if user {
            // What the user allowed may change files; never the protected ones.
            return raw.iter().try_for_each(|a| w.operand(a));
        }
        return refuse(Rule::Tier, tier_message(&words));
    };
    w.trace.borrow_mut().rows.push(row.names[0]);
    let positionals = if row.own_options {
        Vec::new()
    } else {
        scan(w, row, argv, raw, user)?
    };
    if !user {
        if row.judgement.is_none() {
            match row.tier {
                Tier::Never => return refuse(Rule::NestedInterpreter, nested(base)),
                Tier::Gated => return refuse(Rule::Tier, tier_message(&words)),
                Tier::Inspect | Tier::Runner => {}
            }
        }
        if !row.subcommands.is_empty() {
            let sub = positionals.first().map(|i| argv[*i].as_str()).unwrap_or("");
            if !row.subcommands.contains(&sub) {
                return refuse(
                    Rule::Tier,
                    format!(
                        "ws_shell refused: `{base} {sub}` is not one of the {base} commands allowed here ({}). Run one of those instead — or ask the user to add a `shell_allow` prefix for it.",
                        row.subcommands.join(", ")
                    ),
                );
            }
        }
    }
    let call = Call {
        base,
        argv,
        raw,
        positionals,
        stdout_to_file,
        user,
    };
    if let Some(judgement) = row.judgement {
        if let Verdict::Run(i) = judgement(w, &call)? {
            return judge(w, &argv[i], &argv[i + 1..], &raw[i + 1..], stdout_to_file);
        }
    }
    // What may change files (or what the user allowed, whatever it does) never names a
    // protected place.
    if row.changes_operands || (user && row.tier == Tier::Gated && !row.own_options) {
        for i in &call.positionals {
            w.operand(&raw[*i])?;
        }
    }
    Ok(())
}

/// A program named by a path: it must be where the shell would find it by name, a directory
/// of the clean PATH.
fn from_path(w: &Walker, program: &str) -> Result<(), Refusal> {
    let path = std::path::Path::new(program);
    let clean = path.is_absolute()
        && !program.split('/').any(|c| c == ".." || c == ".")
        && path
            .parent()
            .is_some_and(|dir| w.policy.path.iter().any(|p| p == dir));
    if clean {
        return Ok(());
    }
    refuse(
        Rule::ProgramPath,
        format!(
            "ws_shell refused: `{program}` is not a program from this machine's PATH, so what it is cannot be known. Run programs by name (e.g. `rg …`, `cargo test`) instead — a project script needs the user's `shell_allow` prefix (e.g. \"{program}\")."
        ),
    )
}

/// Reads a row's options in `args`: refuses a denied one (one that runs a program always; one
/// that writes unless the user allowed the command), checks output paths, and returns the
/// indices of the positional arguments.
pub(crate) fn scan(
    w: &Walker,
    row: &'static Program,
    args: &[String],
    raw: &[String],
    user: bool,
) -> Result<Vec<usize>, Refusal> {
    let mut positionals = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if arg == "--" {
            positionals.extend(i + 1..args.len());
            break;
        }
        if arg == "-" || !arg.starts_with('-') || arg.len() == 1 {
            positionals.push(i);
            i += 1;
            continue;
        }
        let (name, attached) = split_option(row, arg);
        if let Some(d) = denied(row, arg) {
            w.trace.borrow_mut().denials.push((row.names[0], d.opt));
            if d.runs || !user {
                return refuse(d.rule, d.why);
            }
        }
        let takes = takes_value(row, &name);
        // The value: attached (`--out=x`, `-ox`) or the next word.
        let value = match (&attached, takes) {
            (Some(v), _) => Some((v.clone(), raw_attached(&raw[i], v))),
            (None, Takes::Next) if i + 1 < args.len() => {
                i += 1;
                Some((args[i].clone(), raw[i].clone()))
            }
            _ => None,
        };
        if let Some((_, raw_value)) = &value {
            if row.outputs.contains(&name.as_str()) {
                w.output_path(raw_value)?;
            }
        }
        i += 1;
    }
    Ok(positionals)
}

/// How an option takes its value.
#[derive(PartialEq)]
enum Takes {
    No,
    /// In the next word (or attached).
    Next,
    /// Only attached.
    Attached,
}

fn takes_value(row: &Program, name: &str) -> Takes {
    for v in row.takes_value {
        if let Some(opt) = v.strip_suffix('?') {
            if opt == name {
                return Takes::Attached;
            }
        } else if *v == name
            || (row.abbreviates
                && name.starts_with("--")
                && name.len() > 2
                && v.starts_with(name)
                && v.starts_with("--"))
        {
            return Takes::Next;
        }
    }
    Takes::No
}

/// An option's name and attached value: `--long=v` → (`--long`, v); `-xVALUE` for a short
/// option that takes a value → (`-x`, VALUE); a cluster of flags → (`-abc`, none).
fn split_option(row: &Program, arg: &str) -> (String, Option<String>) {
    if arg.starts_with("--") || row.single_dash {
        return match arg.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (arg.to_string(), None),
        };
    }
    // A short cluster: the first option that takes a value ends it.
    for (pos, c) in arg.char_indices().skip(1) {
        let opt = format!("-{c}");
        match takes_value(row, &opt) {
            Takes::No => {}
            _ => {
                let rest = &arg[pos + c.len_utf8()..];
                return (opt, (!rest.is_empty()).then(|| rest.to_string()));
            }
        }
    }
    (arg.to_string(), None)
}

/// The raw text of an attached value, when the option itself was written plainly.
fn raw_attached(raw: &str, value: &str) -> String {
    if raw.ends_with(value) {
        raw[raw.len() - value.len()..].to_string()
    } else {
        format!("'{}'", value.replace('\'', ""))
    }
}

/// The denied option `arg` is (or contains, for a short cluster), if any.
pub(crate) fn denied(row: &'static Program, arg: &str) -> Option<&'static Deny> {
    if arg.starts_with("--") {
        let name = arg.split('=').next().unwrap_or(arg);
        let body = &name[2..];
        return row.deny.iter().find(|d| {
            d.opt.starts_with("--")
                && (d.opt == name
                    || (row.abbreviates && !body.is_empty() && d.opt[2..].starts_with(body)))
        });
    }
    if row.single_dash {
        let name = arg.split('=').next().unwrap_or(arg);
        return row.deny.iter().find(|d| d.opt == name);
    }
    // A short cluster, up to the first option that takes a value.
    for c in arg.chars().skip(1) {
        let opt = format!("-{c}");
        if let Some(d) = row.deny.iter().find(|d| d.opt == opt) {
            return Some(d);
        }
        if takes_value(row, &opt) != Takes::No {
            break;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_in_one_row() {
        let mut seen = std::collections::HashSet::new();
        for row in PROGRAMS {
            for name in row.names {
                assert!(seen.insert(*name), "{name} is in two rows");
            }
        }
    }

    #[test]
    fn clusters_and_abbreviations() {
        let date = row_for("date").unwrap();
        assert!(denied(date, "-us2000").is_some());
        assert!(denied(date, "-s2000").is_some());
        assert!(denied(date, "-Iseconds").is_none());
        assert!(denied(date, "-d").is_none());
        assert!(denied(date, "--se=2000").is_some());
        assert!(denied(date, "--s").is_some());
        assert!(denied(date, "--date=now").is_none());
        let sort = row_for("sort").unwrap();
        assert!(denied(sort, "--compress-prog=sh").is_some());
        assert!(denied(sort, "-ko").is_none(), "-k takes the value o");
        assert!(denied(sort, "-no").is_some());
        let rg = row_for("rg").unwrap();
        assert!(denied(rg, "--pre=cat").is_some());
        assert!(denied(rg, "--pr").is_none(), "rg does not abbreviate");
        assert!(denied(row_for("find").unwrap(), "-exec").is_some());
        assert!(denied(row_for("find").unwrap(), "-name").is_none());
    }
}
