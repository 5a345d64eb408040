//! What ws_shell may run, decided on a parsed syntax tree (brush-parser), default deny.
//!
//! A command that does not parse is refused. The tree is walked and only known node kinds
//! pass: simple commands, pipelines and `;`/`&&`/`||` chains whose every part passes, and
//! groups, subshells and `if`/`for`/`while`/`case` built of such parts. Every word is scanned
//! (quotes understood) for command or process substitution; every redirect target is resolved
//! and judged; every program is placed in a tier. Each refusal names its rule and what to run
//! instead, because the reader is a model that will try again.

use brush_parser::ast::{
    self, AndOr, Command, CommandPrefixOrSuffixItem, CompoundCommand, CompoundList,
    IoFileRedirectKind, IoFileRedirectTarget, IoRedirect, SeparatorOperator, SimpleCommand,
};

use crate::boundary::is_control_path;
use crate::path::{Jail, RelPath};

/// The user's additions to what may run.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// Command prefixes (`make test`, `python -m pytest`) allowed beyond the built-in tiers.
    pub allow_prefixes: Vec<String>,
}

/// The rule a refusal comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    Parse,
    Substitution,
    Background,
    NestedInterpreter,
    EnvPrefix,
    FdDup,
    WriteExisting,
    ControlDir,
    NonLiteralTarget,
    OutsideProject,
    Tier,
    DangerousFlag,
}

impl Rule {
    /// The rule's stable name, used in messages and tests.
    pub fn id(self) -> &'static str {
        match self {
            Rule::Parse => "parse",
            Rule::Substitution => "substitution",
            Rule::Background => "background",
            Rule::NestedInterpreter => "nested-interpreter",
            Rule::EnvPrefix => "env-prefix",
            Rule::FdDup => "fd-dup",
            Rule::WriteExisting => "write-existing",
            Rule::ControlDir => "control-dir",
            Rule::NonLiteralTarget => "non-literal-target",
            Rule::OutsideProject => "outside-project",
            Rule::Tier => "tier",
            Rule::DangerousFlag => "dangerous-flag",
        }
    }
}

/// Why a command may not run, and what to run instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub rule: Rule,
    pub message: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} [rule: {}]", self.message, self.rule.id())
    }
}

fn refuse(rule: Rule, message: impl Into<String>) -> Result<(), Refusal> {
    Err(Refusal {
        rule,
        message: message.into(),
    })
}

/// Decides whether `command` may run in the workspace `jail`.
pub fn check(command: &str, policy: &Policy, jail: &Jail) -> Result<(), Refusal> {
    let options = brush_parser::ParserOptions::default();
    let mut parser = brush_parser::Parser::new(std::io::Cursor::new(command), &options);
    let program = parser.parse_program().map_err(|e| Refusal {
        rule: Rule::Parse,
        message: format!(
            "ws_shell refused: the command does not parse as shell ({e}). Check the quotes and brackets and run a simpler command instead."
        ),
    })?;
    if program.complete_commands.is_empty() {
        return refuse(
            Rule::Parse,
            "ws_shell refused: the command is empty. Run a command such as \"cargo test\" instead.",
        );
    }
    let walker = Walker {
        policy,
        jail,
        chained: std::cell::Cell::new(false),
    };
    for list in &program.complete_commands {
        walker.list(list)?;
    }
    Ok(())
}

struct Walker<'a> {
    policy: &'a Policy,
    jail: &'a Jail,
    /// Set once the command turns out to have several parts.
    chained: std::cell::Cell<bool>,
}

impl Walker<'_> {
    fn list(&self, list: &CompoundList) -> Result<(), Refusal> {
        if list.0.len() > 1 || list.0.iter().any(|i| !i.0.additional.is_empty()) {
            self.chained.set(true);
        }
        for item in &list.0 {
            if matches!(item.1, SeparatorOperator::Async) {
                return refuse(
                    Rule::Background,
                    "ws_shell refused: `&` runs a command in the background, and nothing may outlive the call. Run the command in the foreground instead (with timeout_sec if it is slow).",
                );
            }
            self.pipeline(&item.0.first)?;
            for more in &item.0.additional {
                match more {
                    AndOr::And(p) | AndOr::Or(p) => self.pipeline(p)?,
                }
            }
        }
        Ok(())
    }

    /// Judges one part of a chain or pipeline; when the command has several parts, the
    /// refusal names the part that failed.
    fn part(&self, command: &Command, several: bool) -> Result<(), Refusal> {
        self.command(command).map_err(|mut r| {
            if several {
                let shown: String = command.to_string().trim().chars().take(80).collect();
                r.message = match r.message.strip_prefix("ws_shell refused: ") {
                    Some(rest) => format!("ws_shell refused the part `{shown}`: {rest}"),
                    None => format!("in the part `{shown}`: {}", r.message),
                };
            }
            r
        })
    }

    fn pipeline(&self, pipeline: &ast::Pipeline) -> Result<(), Refusal> {
        // Piping into a shell runs whatever comes down the pipe: that is the finding, before
        // anything about the commands feeding it.
        for command in pipeline.seq.iter().skip(1) {
            if let Command::Simple(simple) = command {
                if let Some(name) = &simple.word_or_name {
                    let program = literal(&name.value);
                    let base = program.rsplit('/').next().unwrap_or(&program);
                    if [
                        "sh", "bash", "zsh", "dash", "ksh", "fish", "python", "python3", "perl",
                        "ruby", "node",
                    ]
                    .contains(&base)
                    {
                        return refuse(Rule::NestedInterpreter, nested(base));
                    }
                }
            }
        }
        let several = pipeline.seq.len() > 1 || self.chained.get();
        for command in &pipeline.seq {
            self.part(command, several)?;
        }
        Ok(())
    }

    fn command(&self, command: &Command) -> Result<(), Refusal> {
        match command {
            Command::Simple(simple) => self.simple(simple),
            Command::Compound(compound, redirects) => {
                if let Some(list) = redirects {
                    for r in &list.0 {
                        self.redirect(r)?;
                    }
                }
                self.compound(compound)
            }
            Command::Function(_) => refuse(
                Rule::NestedInterpreter,
                "ws_shell refused: defining a shell function hides what finally runs. Run the commands directly instead.",
            ),
            Command::ExtendedTest(..) => refuse(
                Rule::Tier,
                "ws_shell refused: `[[ … ]]` is not supported. Use `test …` or `[ … ]` instead.",
            ),
        }
    }

    fn compound(&self, compound: &CompoundCommand) -> Result<(), Refusal> {
        match compound {
            CompoundCommand::BraceGroup(g) => self.list(&g.list),
            CompoundCommand::Subshell(s) => self.list(&s.list),
            CompoundCommand::IfClause(c) => {
                self.list(&c.condition)?;
                self.list(&c.then)?;
                for e in c.elses.iter().flatten() {
                    if let Some(cond) = &e.condition {
                        self.list(cond)?;
                    }
                    self.list(&e.body)?;
                }
                Ok(())
            }
            CompoundCommand::ForClause(f) => {
                for w in f.values.iter().flatten() {
                    no_substitution(&w.value)?;
                }
                self.list(&f.body.list)
            }
            CompoundCommand::WhileClause(w) | CompoundCommand::UntilClause(w) => {
                self.list(&w.0)?;
                self.list(&w.1.list)
            }
            CompoundCommand::CaseClause(c) => {
                no_substitution(&c.value.value)?;
                for item in &c.cases {
                    for p in &item.patterns {
                        no_substitution(&p.value)?;
                    }
                    if let Some(cmd) = &item.cmd {
                        self.list(cmd)?;
                    }
                }
                Ok(())
            }
            CompoundCommand::Arithmetic(a) => no_substitution(&a.expr.value),
            CompoundCommand::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater].into_iter().flatten() {
                    no_substitution(&e.value)?;
                }
                self.list(&f.body.list)
            }
            CompoundCommand::Coprocess(_) => refuse(
                Rule::Background,
                "ws_shell refused: `coproc` runs a command in the background. Run it in the foreground instead.",
            ),
        }
    }

    fn simple(&self, simple: &SimpleCommand) -> Result<(), Refusal> {
        let prefix_len = simple.prefix.as_ref().map_or(0, |p| p.0.len());
        let items = simple
            .prefix
            .iter()
            .flat_map(|p| p.0.iter())
            .chain(simple.suffix.iter().flat_map(|s| s.0.iter()));
        let mut args: Vec<String> = Vec::new();
        for (index, item) in items.enumerate() {
            match item {
                // After the program name, `name=value` is an argument, not an assignment.
                CommandPrefixOrSuffixItem::AssignmentWord(_, word) if index >= prefix_len => {
                    no_substitution(&word.value)?;
                    args.push(word.value.clone());
                }
                CommandPrefixOrSuffixItem::IoRedirect(r) => self.redirect(r)?,
                CommandPrefixOrSuffixItem::Word(w) => {
                    no_substitution(&w.value)?;
                    args.push(w.value.clone());
                }
                CommandPrefixOrSuffixItem::AssignmentWord(assignment, word) => {
                    no_substitution(&word.value)?;
                    let name = match &assignment.name {
                        ast::AssignmentName::VariableName(n) => n.as_str(),
                        ast::AssignmentName::ArrayElementName(n, _) => n.as_str(),
                    };
                    let upper = name.to_ascii_uppercase();
                    if upper == "PATH"
                        || upper.starts_with("LD_")
                        || upper == "BASH_ENV"
                        || upper == "ENV"
                        || upper.starts_with("GIT_")
                    {
                        return refuse(
                            Rule::EnvPrefix,
                            format!(
                                "ws_shell refused: setting {name} changes which programs run or how. Run the command without `{name}=…` instead."
                            ),
                        );
                    }
                }
                CommandPrefixOrSuffixItem::ProcessSubstitution(..) => {
                    return refuse(Rule::Substitution, substitution_message())
                }
            }
        }
        let Some(name_word) = &simple.word_or_name else {
            // Only assignments and redirects: those were judged above.
            return Ok(());
        };
        no_substitution(&name_word.value)?;
        if has_expansion(&name_word.value) {
            return refuse(
                Rule::Tier,
                "ws_shell refused: the program name comes from a variable, so what runs cannot be known. Name the program literally instead.",
            );
        }
        let program = literal(&name_word.value);
        let argv: Vec<String> = args.iter().map(|a| literal(a)).collect();
        let raw_args = args;
        self.program(&program, &argv, &raw_args)
    }

    /// The tiers and the per-program rules.
    fn program(&self, program: &str, argv: &[String], raw_args: &[String]) -> Result<(), Refusal> {
        let base = program.rsplit('/').next().unwrap_or(program);
        let words: Vec<&str> = std::iter::once(program)
            .chain(argv.iter().map(String::as_str))
            .collect();
        let allowed_by_user = self.policy.allow_prefixes.iter().any(|prefix| {
            let p: Vec<&str> = prefix.split_whitespace().collect();
            !p.is_empty() && words.len() >= p.len() && words[..p.len()] == p[..]
        });
        let first_arg = argv
            .iter()
            .find(|a| !a.starts_with('-'))
            .map(String::as_str);
        let has = |flag: &str| {
            argv.iter()
                .any(|a| a == flag || a.starts_with(&format!("{flag}=")))
        };

        // Nested interpreters, whatever the tier.
        const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "fish", "csh", "tcsh"];
        if SHELLS.contains(&base)
            && (has("-c")
                || argv.is_empty()
                || argv
                    .iter()
                    .any(|a| a.starts_with('-') && a.contains('c') && !a.starts_with("--")))
        {
            return refuse(Rule::NestedInterpreter, nested(base));
        }
        if ["eval", "source", ".", "exec", "builtin", "command"].contains(&base) {
            return refuse(Rule::NestedInterpreter, nested(base));
        }
        if [
            "nohup", "timeout", "nice", "setsid", "stdbuf", "time", "chroot", "sudo", "doas", "su",
        ]
        .contains(&base)
        {
            return refuse(Rule::NestedInterpreter, nested(base));
        }
        if base == "env" && argv.iter().any(|a| !a.starts_with('-') && !a.contains('=')) {
            return refuse(Rule::NestedInterpreter, nested("env"));
        }
        if SHELLS.contains(&base) && has("-s") {
            return refuse(Rule::NestedInterpreter, nested(base));
        }
        if ["fd", "fdfind"].contains(&base)
            && argv.iter().any(|a| {
                ["-x", "-X", "--exec", "--exec-batch"].contains(&a.as_str())
                    || a.starts_with("--exec=")
                    || a.starts_with("--exec-batch=")
            })
        {
            return refuse(Rule::NestedInterpreter, "ws_shell refused: `fd -x/--exec` runs a command for every match. Run fd to list the files instead, then act on them with the edit tools.");
        }
        if base == "xargs" {
            return refuse(
                if argv.iter().any(|a| SHELLS.contains(&a.as_str())) {
                    Rule::NestedInterpreter
                } else {
                    Rule::Tier
                },
                "ws_shell refused: xargs runs other commands from its input. Run the command on the files directly instead.",
            );
        }
        if base == "find" {
            if argv
                .iter()
                .any(|a| ["-exec", "-execdir", "-ok", "-okdir"].contains(&a.as_str()))
            {
                return refuse(Rule::NestedInterpreter, "ws_shell refused: `find -exec` runs other commands. Run find to list the files instead, then act on them with the edit tools.");
            }
            if argv.iter().any(|a| {
                ["-delete", "-fprint", "-fprint0", "-fprintf", "-fls"].contains(&a.as_str())
            }) {
                return refuse(Rule::DangerousFlag, "ws_shell refused: that find flag deletes or writes files. Run find to list the files instead, and delete with ws_delete.");
            }
        }
        if base == "git" {
            // Global options come before the subcommand.
            for a in argv.iter().take_while(|a| a.starts_with('-')) {
                if a == "-c"
                    || a.starts_with("--config-env")
                    || a.starts_with("--exec-path")
                    || a.starts_with("-c") && a.len() > 2
                {
                    return refuse(Rule::DangerousFlag, "ws_shell refused: `git -c` / `--config-env` / `--exec-path` can make git run arbitrary programs. Run the git command without them instead.");
                }
            }
            if has("--ext-diff")
                || has("--output")
                || has("--upload-pack")
                || has("--receive-pack")
                || has("--open-files-in-pager")
                || argv
                    .iter()
                    .any(|a| a.starts_with("-O") && !a.starts_with("--"))
            {
                return refuse(Rule::DangerousFlag, "ws_shell refused: that git flag runs a program or writes a file. Run the git command without it instead (git_diff shows diffs).");
            }
        }
        if base == "rg" && has("--pre") {
            return refuse(Rule::DangerousFlag, "ws_shell refused: `rg --pre` runs a program on every file. Run rg without --pre instead (or use ws_grep).");
        }
        if base == "cargo" && has("--config") {
            return refuse(Rule::DangerousFlag, "ws_shell refused: `cargo --config` can point cargo at other programs. Run the cargo command without it instead.");
        }
        if base == "sort"
            && (has("-o")
                || has("--output")
                || argv
                    .iter()
                    .any(|a| a.starts_with("-o") && a.len() > 2 && !a.starts_with("--")))
        {
            return refuse(
                Rule::DangerousFlag,
                "ws_shell refused: `sort -o` writes a file. Run sort and read its output instead.",
            );
        }
        // Writers whose arguments are targets.
        match base {
            "tee" | "sponge" => {
                let append = argv.iter().any(|a| a == "-a" || a == "--append");
                for (raw, lit) in raw_args
                    .iter()
                    .zip(argv)
                    .filter(|(_, a)| !a.starts_with('-'))
                {
                    self.write_target(raw, lit, append)?;
                }
                return Ok(());
            }
            "dd" => {
                for (raw, lit) in raw_args.iter().zip(argv) {
                    if let Some(target) = lit.strip_prefix("of=") {
                        let raw_target = raw.strip_prefix("of=").unwrap_or(raw);
                        self.write_target(raw_target, target, false)?;
                    }
                }
                return Ok(());
            }
            _ => {}
        }
        // Flags that make an otherwise harmless program write files, run code or change state.
        let positional = argv.iter().filter(|a| !a.starts_with('-')).count();
        let writes = match base {
            "cargo" => (first_arg == Some("fmt") && !has("--check")) || has("--fix"),
            "rustfmt" => !has("--check"),
            "gofmt" => has("-w"),
            "prettier" => has("--write") || has("-w"),
            "ruff" => {
                has("--fix") || (first_arg == Some("format") && !has("--check") && !has("--diff"))
            }
            "eslint" => has("--fix"),
            "tree" => has("-o"),
            "date" => has("-s") || has("--set"),
            "xxd" => has("-r") || positional > 1,
            "uniq" => positional > 1,
            "git" => {
                git_subcommand(argv) == "branch"
                    && argv.iter().any(|a| {
                        [
                            "-d",
                            "-D",
                            "-m",
                            "-M",
                            "-c",
                            "-C",
                            "-f",
                            "-u",
                            "--delete",
                            "--move",
                            "--copy",
                            "--force",
                            "--set-upstream-to",
                            "--unset-upstream",
                            "--edit-description",
                        ]
                        .contains(&a.as_str())
                            || a.starts_with("--set-upstream-to=")
                    })
            }
            _ => false,
        };
        if writes {
            return refuse(
                Rule::DangerousFlag,
                format!(
                    "ws_shell refused: `{}` with that flag changes files or state. Run it in its read-only form instead (e.g. --check), and change files with the edit tools.",
                    words.iter().take(3).copied().collect::<Vec<_>>().join(" ")
                ),
            );
        }
        // Whatever the tier, a command that changes files may not name `.slmcode/`.
        const MUTATORS: &[&str] = &[
            "cp", "mv", "rm", "touch", "ln", "sed", "chmod", "chown", "chgrp", "mkdir", "rmdir",
            "truncate", "install", "rsync", "tar", "unzip", "patch", "git",
        ];
        let names_control = raw_args.iter().zip(argv).any(|(raw, lit)| {
            mentions_control_dir(lit) || (has_glob(raw) && glob_could_match_control(lit))
        });
        let mutating = match base {
            "sed" => argv
                .iter()
                .any(|a| a.starts_with("-i") || a.starts_with("--in-place")),
            "git" => [
                "add", "rm", "mv", "checkout", "restore", "clean", "reset", "stash", "apply",
            ]
            .contains(&git_subcommand(argv)),
            other => MUTATORS.contains(&other),
        };
        if names_control && mutating {
            return refuse(Rule::ControlDir, control_message());
        }
        if allowed_by_user {
            return Ok(());
        }
        if base == "sed"
            && argv.iter().any(|a| {
                a == "-i"
                    || a.starts_with("--in-place")
                    || (a.starts_with("-i") && !a.starts_with("--"))
                    || (a.starts_with('-') && !a.starts_with("--") && a.contains('i'))
            })
        {
            return refuse(Rule::Tier, "ws_shell refused: `sed -i` rewrites files. Change files with ws_edit instead (sed without -i to print is fine).");
        }
        let sub = first_arg.unwrap_or("");
        let ok = match base {
            "ls" | "cat" | "head" | "tail" | "wc" | "grep" | "egrep" | "fgrep" | "rg" | "fd"
            | "fdfind" | "find" | "tree" | "file" | "stat" | "du" | "df" | "pwd" | "echo"
            | "printf" | "true" | "false" | "which" | "diff" | "cmp" | "sort" | "uniq" | "cut"
            | "tr" | "jq" | "seq" | "sleep" | "basename" | "dirname" | "realpath" | "readlink"
            | "date" | "xxd" | "od" | "hexdump" | "nl" | "test" | "[" | "env" | "printenv"
            | "uname" | "whoami" | "id" | "column" | "comm" | "paste" | "fold" | "rev" | "tac"
            | "sha256sum" | "md5sum" | "b2sum" | "cksum" | "expr" | "yes" | "ps" | "nproc"
            | "free" | "uptime" => true,
            "git" => {
                [
                    "status",
                    "diff",
                    "log",
                    "show",
                    "blame",
                    "branch",
                    "rev-parse",
                    "ls-files",
                    "grep",
                    "describe",
                    "shortlog",
                    "rev-list",
                    "cat-file",
                    "ls-tree",
                    "merge-base",
                    "config",
                ]
                .contains(&git_subcommand(argv))
                    && (git_subcommand(argv) != "config"
                        || has("--get")
                        || has("--list")
                        || has("-l"))
                    && (git_subcommand(argv) != "branch"
                        || !argv.iter().skip(1).any(|a| !a.starts_with('-')))
            }
            "cargo" => [
                "build",
                "check",
                "test",
                "clippy",
                "fmt",
                "doc",
                "tree",
                "metadata",
                "bench",
                "nextest",
                "version",
                "--version",
                "-V",
            ]
            .contains(&sub),
            "go" => ["build", "test", "vet", "list", "version", "env"].contains(&sub),
            "npm" | "pnpm" | "yarn" | "bun" => {
                sub == "test"
                    || (sub == "run"
                        && argv
                            .iter()
                            .filter(|a| !a.starts_with('-'))
                            .nth(1)
                            .is_some_and(|s| ["test"].contains(&s.as_str())))
            }
            "mvn" | "gradle" | "./gradlew" | "gradlew" | "dotnet" => {
                ["test", "build", "verify", "check", "compile"].contains(&sub)
            }
            "pytest" | "tox" | "ctest" | "jest" | "vitest" | "tsc" | "eslint" | "ruff" | "mypy"
            | "rustc" | "gofmt" | "rustfmt" | "prettier" => true,
            _ => false,
        };
        if ok {
            return Ok(());
        }
        refuse(
            Rule::Tier,
            format!(
                "ws_shell refused: `{}` is not in the allowed tiers (inspection commands and build/test runners). Read and search with ws_read/ws_grep, change files with ws_edit/ws_write/ws_mv/ws_delete, and run tests with a runner such as `cargo test` or `npm test` instead — or ask the user to add a `shell_allow` prefix for it.",
                words.iter().take(3).copied().collect::<Vec<_>>().join(" ")
            ),
        )
    }

    fn redirect(&self, redirect: &IoRedirect) -> Result<(), Refusal> {
        match redirect {
            IoRedirect::File(_, kind, target) => match target {
                IoFileRedirectTarget::ProcessSubstitution(..) => {
                    refuse(Rule::Substitution, substitution_message())
                }
                IoFileRedirectTarget::Fd(_) => Ok(()),
                IoFileRedirectTarget::Duplicate(word) => {
                    no_substitution(&word.value)?;
                    let lit = literal(&word.value);
                    if has_expansion(&word.value)
                        || !(lit == "-"
                            || lit.chars().all(|c| c.is_ascii_digit()) && !lit.is_empty())
                    {
                        return refuse(Rule::FdDup, "ws_shell refused: `>&`/`<&` must name a file descriptor number or `-` (bash expands anything else twice). Use `> file 2>&1` instead.");
                    }
                    Ok(())
                }
                IoFileRedirectTarget::Filename(word) => {
                    no_substitution(&word.value)?;
                    match kind {
                        IoFileRedirectKind::Read => Ok(()),
                        IoFileRedirectKind::DuplicateInput
                        | IoFileRedirectKind::DuplicateOutput => {
                            let lit = literal(&word.value);
                            if lit == "-"
                                || (!lit.is_empty() && lit.chars().all(|c| c.is_ascii_digit()))
                            {
                                Ok(())
                            } else {
                                refuse(Rule::FdDup, "ws_shell refused: `>&`/`<&` must name a file descriptor number or `-` (bash expands anything else twice). Use `> file 2>&1` instead.")
                            }
                        }
                        IoFileRedirectKind::Append => {
                            self.write_target(&word.value, &literal(&word.value), true)
                        }
                        _ => self.write_target(&word.value, &literal(&word.value), false),
                    }
                }
            },
            IoRedirect::HereDocument(_, doc) => {
                if doc.requires_expansion {
                    no_substitution(&doc.doc.value)?;
                }
                Ok(())
            }
            IoRedirect::HereString(_, word) => no_substitution(&word.value),
            IoRedirect::OutputAndError(word, append) => {
                no_substitution(&word.value)?;
                self.write_target(&word.value, &literal(&word.value), *append)
            }
        }
    }

    /// Judges a file the command would write: never `.slmcode/`, never a target that cannot
    /// be known before running, never outside the project (but the null and temp devices),
    /// and never an existing file unless appending.
    fn write_target(&self, raw: &str, lit: &str, append: bool) -> Result<(), Refusal> {
        if mentions_control_dir(lit) {
            return refuse(Rule::ControlDir, control_message());
        }
        if has_expansion(raw) || lit.starts_with('~') {
            return refuse(Rule::NonLiteralTarget, format!("ws_shell refused: the output target {raw} depends on a variable, so it cannot be checked. Write to a literal path inside the project instead (or use ws_write)."));
        }
        if has_glob(raw) {
            return refuse(
                if glob_could_match_control(lit) {
                    Rule::ControlDir
                } else {
                    Rule::NonLiteralTarget
                },
                if glob_could_match_control(lit) {
                    control_message().to_string()
                } else {
                    format!("ws_shell refused: the output target {raw} is a pattern. Write to one literal path instead.")
                },
            );
        }
        if ["/dev/null", "/dev/stdout", "/dev/stderr"].contains(&lit) {
            return Ok(());
        }
        if lit.starts_with("/tmp/") {
            return Ok(());
        }
        let parsed = match self.jail.parse(lit) {
            // `a/../b` that stays inside is judged as the path it resolves to.
            Err(crate::path::PathError::ParentInside { suggestion, .. }) => {
                self.jail.parse(&suggestion)
            }
            other => other,
        };
        let rel = match parsed {
            Ok(r) => r,
            Err(_) => {
                return refuse(Rule::OutsideProject, format!("ws_shell refused: the output target {lit} is outside the project. Write inside the project, under /tmp, or to /dev/null instead."));
            }
        };
        if is_control_path(&rel) || self.resolves_to_control(&rel) {
            return refuse(Rule::ControlDir, control_message());
        }
        if !append && self.jail.symlink_metadata(&rel).is_ok() {
            return refuse(Rule::WriteExisting, format!("ws_shell refused: this would overwrite the existing file {rel}. Change it with ws_edit or ws_write instead, or append with `>>`, or write to a new file."));
        }
        Ok(())
    }

    /// A target whose existing parent directory is, through a symlink, `.slmcode/`.
    fn resolves_to_control(&self, rel: &RelPath) -> bool {
        let mut dir = rel.parent();
        loop {
            if let Ok(real) = self.jail.resolve(&dir) {
                return is_control_path(&real.join(rel.file_name()))
                    || (!real.is_root() && is_control_path(&real.join("x")));
            }
            if dir.is_root() {
                return false;
            }
            dir = dir.parent();
        }
    }
}

/// git's subcommand: the first argument after the global options (and their values).
fn git_subcommand(argv: &[String]) -> &str {
    let mut i = 0;
    while i < argv.len() {
        let a = argv[i].as_str();
        if !a.starts_with('-') {
            return a;
        }
        // Options that take a separate value.
        if ["-C", "-c", "--git-dir", "--work-tree", "--namespace"].contains(&a) {
            i += 1;
        }
        i += 1;
    }
    ""
}

fn nested(what: &str) -> String {
    format!(
        "ws_shell refused: `{what}` runs another command or script, so what finally runs cannot be checked. Run the inner command directly instead."
    )
}

fn substitution_message() -> &'static str {
    "ws_shell refused: command or process substitution (`$(…)`, backticks, `<(…)`, `>(…)`) runs a hidden command. Run the inner command on its own first, then use its output in a second call instead."
}

fn control_message() -> &'static str {
    ".slmcode/ is harness control state; commands may not write there. Write under .slmcode/scratch/ instead, or elsewhere in the project — run something else instead."
}

/// Refuses command and process substitution in a raw word, with quoting understood: inside
/// single quotes (and `$'…'`) everything is literal; inside double quotes `$(` and backticks
/// are still live; `$((` is arithmetic, whose inside is scanned like the rest.
fn no_substitution(raw: &str) -> Result<(), Refusal> {
    if has_substitution(raw) {
        return refuse(Rule::Substitution, substitution_message());
    }
    Ok(())
}

/// Walks the live bytes of a raw word — those outside single quotes (and `$'…'`) and not
/// escaped — and stops at the first for which `hit` (given the index and whether it is inside
/// double quotes) is true. The one quote-aware scanner behind the checks below.
fn any_live(raw: &str, mut hit: impl FnMut(&[u8], usize, bool) -> bool) -> bool {
    let b = raw.as_bytes();
    let mut i = 0;
    let mut double = false;
    while i < b.len() {
        match b[i] {
            b'\\' => {
                i += 2;
                continue;
            }
            b'\'' if !double => {
                // Literal until the closing quote.
                i += 1;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
            }
            b'"' => double = !double,
            b'$' if b.get(i + 1) == Some(&b'\'') && !double => {
                if hit(b, i, double) {
                    return true;
                }
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            _ if hit(b, i, double) => return true,
            _ => {}
        }
        i += 1;
    }
    false
}

/// Command or process substitution: `$(` (but not arithmetic `$((`), backticks, and outside
/// double quotes `<(` / `>(`.
fn has_substitution(raw: &str) -> bool {
    any_live(raw, |b, i, double| match b[i] {
        b'`' => true,
        b'$' => b.get(i + 1) == Some(&b'(') && b.get(i + 2) != Some(&b'('),
        b'<' | b'>' => !double && b.get(i + 1) == Some(&b'('),
        _ => false,
    })
}

/// True when a raw word has a live `$` expansion (outside single quotes).
fn has_expansion(raw: &str) -> bool {
    any_live(raw, |b, i, _| matches!(b[i], b'$' | b'`'))
}

/// True when a raw word has an unquoted glob character.
fn has_glob(raw: &str) -> bool {
    any_live(raw, |b, i, double| {
        !double && matches!(b[i], b'*' | b'?' | b'[')
    })
}

/// The word with its quotes and escapes removed.
fn literal(raw: &str) -> String {
    brush_parser::unquote_str(raw)
}

fn mentions_control_dir(lit: &str) -> bool {
    lit.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .enumerate()
        .any(|(i, c)| i == 0 && c.eq_ignore_ascii_case(".slmcode"))
        && !is_scratch(lit)
}

fn is_scratch(lit: &str) -> bool {
    let comps: Vec<&str> = lit
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    comps.len() >= 3 && comps[1] == "scratch"
}

/// Could a glob in the first component match `.slmcode`?
fn glob_could_match_control(lit: &str) -> bool {
    let first = lit
        .split('/')
        .find(|c| !c.is_empty() && *c != ".")
        .unwrap_or("");
    globset::GlobBuilder::new(first)
        .case_insensitive(true)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher().is_match(".slmcode"))
        .unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitution_scanner_understands_quotes() {
        assert!(has_substitution("$(id)"));
        assert!(has_substitution("\"$(id)\""));
        assert!(has_substitution("`id`"));
        assert!(has_substitution("${x:-$(id)}"));
        assert!(!has_substitution("'$(id)'"));
        assert!(!has_substitution("$((1 + 2))"));
        assert!(has_substitution("$((1 + $(id)))"));
        assert!(!has_substitution("\\$(id)"));
        assert!(!has_substitution("$'\\x24(id)'"));
    }

    #[test]
    fn control_dir_globs() {
        assert!(glob_could_match_control(".slm*/hooks.json"));
        assert!(glob_could_match_control(".*/x"));
        assert!(!glob_could_match_control("*.txt"));
        assert!(mentions_control_dir("./.SLMCODE/hooks.json"));
        assert!(!mentions_control_dir(".slmcode/scratch/n.txt"));
    }
}
