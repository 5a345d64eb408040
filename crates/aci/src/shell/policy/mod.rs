//! What ws_shell may run, decided on a parsed syntax tree (brush-parser), default deny.
//!
//! A command that does not parse is refused. The tree is walked and only known node kinds
//! pass: simple commands, pipelines and `;`/`&&`/`||` chains whose every part passes, and
//! groups, subshells and `if`/`for`/`while`/`case` built of such parts. Every word is scanned
//! (quotes understood, see [`words`]) for substitutions and bash's command-running expansions;
//! every redirect target is resolved and judged — never `.slmcode/`, never a git directory, in
//! any spelling; every program is resolved like the shell would (from the clean PATH) and
//! judged by its row in [`programs`], the table of what each program may do. A leading
//! `cd DIR` inside the project moves the rest of the chain there. Each refusal names its rule
//! and what to run instead, because the reader is a model that will try again.

use std::cell::RefCell;
use std::path::PathBuf;

use brush_parser::ast::{
    self, AndOr, Command, CommandPrefixOrSuffixItem, CompoundCommand, CompoundList,
    IoFileRedirectKind, IoFileRedirectTarget, IoRedirect, SeparatorOperator, SimpleCommand,
};

use crate::boundary::Protected;
use crate::path::{Jail, PathError, RelPath};

mod checks;
mod git;
pub mod programs;
pub mod sed;
mod targets;
pub mod words;

use words::{has_brace, has_expansion, has_glob, has_substitution, literal, risky_expansion};

/// What the user and the call add to the built-in rules.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Command prefixes (`make test`, `./gradlew test`) allowed beyond the built-in tiers.
    pub allow_prefixes: Vec<String>,
    /// The directories programs may come from (the clean PATH the command runs with).
    pub path: Vec<PathBuf>,
    /// The call's own timeout: a `timeout N` inside may not ask for longer.
    pub timeout_secs: u64,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            allow_prefixes: Vec::new(),
            path: ["/usr/local/bin", "/usr/bin", "/bin"]
                .iter()
                .map(PathBuf::from)
                .collect(),
            timeout_secs: 120,
        }
    }
}

/// The rule a refusal comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    Parse,
    Substitution,
    /// A bash expansion that runs a command or evaluates text as an expression.
    Expansion,
    Background,
    NestedInterpreter,
    EnvPrefix,
    FdDup,
    /// `&>`: bash reads one redirect, dash a background job and a truncation.
    RedirectForm,
    WriteExisting,
    ControlDir,
    /// A git directory (or a place git runs programs from).
    GitDir,
    NonLiteralTarget,
    OutsideProject,
    /// A program named by a path that is not on the clean PATH.
    ProgramPath,
    Tier,
    DangerousFlag,
}

impl Rule {
    /// The rule's stable name, used in messages and tests.
    pub fn id(self) -> &'static str {
        match self {
            Rule::Parse => "parse",
            Rule::Substitution => "substitution",
            Rule::Expansion => "expansion",
            Rule::Background => "background",
            Rule::NestedInterpreter => "nested-interpreter",
            Rule::EnvPrefix => "env-prefix",
            Rule::FdDup => "fd-dup",
            Rule::RedirectForm => "redirect-form",
            Rule::WriteExisting => "write-existing",
            Rule::ControlDir => "control-dir",
            Rule::GitDir => "git-dir",
            Rule::NonLiteralTarget => "non-literal-target",
            Rule::OutsideProject => "outside-project",
            Rule::ProgramPath => "program-path",
            Rule::Tier => "tier",
            Rule::DangerousFlag => "dangerous-flag",
        }
    }

    /// Every rule, for tests that check ids.
    pub const ALL: &'static [Rule] = &[
        Rule::Parse,
        Rule::Substitution,
        Rule::Expansion,
        Rule::Background,
        Rule::NestedInterpreter,
        Rule::EnvPrefix,
        Rule::FdDup,
        Rule::RedirectForm,
        Rule::WriteExisting,
        Rule::ControlDir,
        Rule::GitDir,
        Rule::NonLiteralTarget,
        Rule::OutsideProject,
        Rule::ProgramPath,
        Rule::Tier,
        Rule::DangerousFlag,
    ];
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

pub(crate) fn refuse<T>(rule: Rule, message: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal {
        rule,
        message: message.into(),
    })
}

/// Which rows of the program table, and which of their denied options, a check consulted:
/// the case suite proves every row and every denial is exercised.
#[derive(Debug, Default, Clone)]
pub struct Trace {
    pub rows: Vec<&'static str>,
    pub denials: Vec<(&'static str, &'static str)>,
}

/// Decides whether `command` may run in the workspace `jail`, whose protected places are
/// `protected`.
pub fn check(
    command: &str,
    policy: &Policy,
    jail: &Jail,
    protected: &Protected,
) -> Result<(), Refusal> {
    check_traced(command, policy, jail, protected).0
}

/// [`check`], also returning what it consulted.
pub fn check_traced(
    command: &str,
    policy: &Policy,
    jail: &Jail,
    protected: &Protected,
) -> (Result<(), Refusal>, Trace) {
    let walker = Walker {
        policy,
        jail,
        protected,
        chained: std::cell::Cell::new(false),
        cwd: RefCell::new(RelPath::root()),
        trace: RefCell::new(Trace::default()),
    };
    let verdict = walker.program_text(command);
    (verdict, walker.trace.into_inner())
}

/// The walk over one command's syntax tree; the table's judgements see it (the policy, the
/// project, where the command stands).
pub struct Walker<'a> {
    pub(crate) policy: &'a Policy,
    pub(crate) jail: &'a Jail,
    protected: &'a Protected,
    /// Set once the command turns out to have several parts.
    chained: std::cell::Cell<bool>,
    /// Where the command stands: the root, or where a leading `cd` moved it.
    cwd: RefCell<RelPath>,
    pub(crate) trace: RefCell<Trace>,
}

impl Walker<'_> {
    fn program_text(&self, command: &str) -> Result<(), Refusal> {
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
        let several = program.complete_commands.len() > 1;
        for (i, list) in program.complete_commands.iter().enumerate() {
            if several {
                self.chained.set(true);
            }
            self.list(list, i == 0)?;
        }
        Ok(())
    }

    /// A list of `;`/`&&`/`||` items. When `may_cd`, its first item may be `cd DIR`, which
    /// moves the rest of the list there.
    fn list(&self, list: &CompoundList, may_cd: bool) -> Result<(), Refusal> {
        if list.0.len() > 1 || list.0.iter().any(|i| !i.0.additional.is_empty()) {
            self.chained.set(true);
        }
        for (n, item) in list.0.iter().enumerate() {
            if matches!(item.1, SeparatorOperator::Async) {
                return refuse(
                    Rule::Background,
                    "ws_shell refused: `&` runs a command in the background, and nothing may outlive the call. Run the command in the foreground instead (with timeout_sec if it is slow).",
                );
            }
            let and_or = &item.0;
            if n == 0 && may_cd {
                if let Some(args) = cd_args(&and_or.first) {
                    self.cd(&args)?;
                    for more in &and_or.additional {
                        match more {
                            AndOr::And(p) => self.pipeline(p)?,
                            AndOr::Or(_) => return refuse(
                                Rule::Tier,
                                "ws_shell refused: `cd DIR || …` would run the rest in the wrong directory when cd fails. Run `cd DIR && COMMAND` instead.",
                            ),
                        }
                    }
                    continue;
                }
            }
            self.pipeline(&and_or.first)?;
            for more in &and_or.additional {
                match more {
                    AndOr::And(p) | AndOr::Or(p) => self.pipeline(p)?,
                }
            }
        }
        Ok(())
    }

    /// A leading `cd DIR`: DIR must be a directory inside the project.
    fn cd(&self, args: &[String]) -> Result<(), Refusal> {
        let outside = |shown: &str| {
            refuse(
                Rule::OutsideProject,
                format!("ws_shell refused: `cd {shown}` leaves the project (or goes nowhere). Commands run in the project; `cd` into a directory inside it, e.g. `cd src && ls`, instead."),
            )
        };
        let [raw] = args else {
            return outside(&args.join(" "));
        };
        self.word(raw)?;
        if has_expansion(raw) || has_glob(raw) || has_brace(raw) {
            return refuse(
                Rule::NonLiteralTarget,
                format!("ws_shell refused: `cd {raw}` depends on a variable or a pattern. Name the directory literally instead."),
            );
        }
        let lit = literal(raw);
        let Some(dir) = self.resolve_in_cwd(&lit) else {
            return outside(&lit);
        };
        match self.jail.resolve(&dir) {
            Ok(real) if self.jail.metadata(&real).is_ok_and(|m| m.is_dir()) => {
                *self.cwd.borrow_mut() = real;
                Ok(())
            }
            Ok(_) => refuse(
                Rule::OutsideProject,
                format!("ws_shell refused: `cd {lit}`: that is not a directory. Name a directory inside the project instead (see ws_list)."),
            ),
            Err(PathError::NotFound { .. }) => refuse(
                Rule::OutsideProject,
                format!("ws_shell refused: `cd {lit}`: no such directory in the project. Find it with ws_list or ws_glob, then run the command again instead."),
            ),
            Err(_) => outside(&lit),
        }
    }

    /// A path as the command would see it, relative to the project root: `text` taken from
    /// the current directory (or absolute inside the project). `None` when it leaves.
    pub(crate) fn resolve_in_cwd(&self, text: &str) -> Option<RelPath> {
        let root = self.jail.root();
        let joined = if let Some(abs) = text.strip_prefix('/') {
            let inside = std::path::Path::new("/").join(abs);
            inside
                .strip_prefix(root)
                .ok()?
                .to_string_lossy()
                .into_owned()
        } else {
            let cwd = self.cwd.borrow();
            if cwd.is_root() {
                text.to_string()
            } else {
                format!("{cwd}/{text}")
            }
        };
        if joined.is_empty() {
            return Some(RelPath::root());
        }
        match self.jail.parse(&joined) {
            Ok(p) => Some(p),
            // `a/../b` that stays inside is judged as the path it resolves to.
            Err(PathError::ParentInside { suggestion, .. }) => self.jail.parse(&suggestion).ok(),
            Err(_) => None,
        }
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
                    if programs::is_interpreter(base) {
                        return refuse(Rule::NestedInterpreter, programs::nested(base));
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
            CompoundCommand::BraceGroup(g) => self.list(&g.list, false),
            CompoundCommand::Subshell(s) => {
                // A subshell may start with its own `cd`; the outer directory is kept after.
                let outer = self.cwd.borrow().clone();
                let verdict = self.list(&s.list, true);
                *self.cwd.borrow_mut() = outer;
                verdict
            }
            CompoundCommand::IfClause(c) => {
                self.list(&c.condition, false)?;
                self.list(&c.then, false)?;
                for e in c.elses.iter().flatten() {
                    if let Some(cond) = &e.condition {
                        self.list(cond, false)?;
                    }
                    self.list(&e.body, false)?;
                }
                Ok(())
            }
            CompoundCommand::ForClause(f) => {
                for w in f.values.iter().flatten() {
                    self.word(&w.value)?;
                }
                self.list(&f.body.list, false)
            }
            CompoundCommand::WhileClause(w) | CompoundCommand::UntilClause(w) => {
                self.list(&w.0, false)?;
                self.list(&w.1.list, false)
            }
            CompoundCommand::CaseClause(c) => {
                self.word(&c.value.value)?;
                for item in &c.cases {
                    for p in &item.patterns {
                        self.word(&p.value)?;
                    }
                    if let Some(cmd) = &item.cmd {
                        self.list(cmd, false)?;
                    }
                }
                Ok(())
            }
            CompoundCommand::Arithmetic(a) => self.arithmetic(&a.expr.value),
            CompoundCommand::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater].into_iter().flatten() {
                    self.arithmetic(&e.value)?;
                }
                self.list(&f.body.list, false)
            }
            CompoundCommand::Coprocess(_) => refuse(
                Rule::Background,
                "ws_shell refused: `coproc` runs a command in the background. Run it in the foreground instead.",
            ),
        }
    }

    fn arithmetic(&self, expr: &str) -> Result<(), Refusal> {
        self.word(expr)?;
        if words::risky_arithmetic(expr) {
            return refuse(
                Rule::Expansion,
                expansion_message("arithmetic on variables"),
            );
        }
        Ok(())
    }

    /// Every word: no substitution, no command-running expansion.
    pub(crate) fn word(&self, raw: &str) -> Result<(), Refusal> {
        if has_substitution(raw) {
            return refuse(Rule::Substitution, substitution_message());
        }
        if let Some(what) = risky_expansion(raw) {
            return refuse(Rule::Expansion, expansion_message(what));
        }
        Ok(())
    }

    fn simple(&self, simple: &SimpleCommand) -> Result<(), Refusal> {
        let prefix_len = simple.prefix.as_ref().map_or(0, |p| p.0.len());
        let items = simple
            .prefix
            .iter()
            .flat_map(|p| p.0.iter())
            .chain(simple.suffix.iter().flat_map(|s| s.0.iter()));
        let mut args: Vec<String> = Vec::new();
        let mut assignments: Vec<String> = Vec::new();
        let mut stdout_to_file = false;
        for (index, item) in items.enumerate() {
            match item {
                // After the program name, `name=value` is an argument, not an assignment.
                CommandPrefixOrSuffixItem::AssignmentWord(_, word) if index >= prefix_len => {
                    self.word(&word.value)?;
                    args.push(word.value.clone());
                }
                CommandPrefixOrSuffixItem::IoRedirect(r) => {
                    stdout_to_file |= writes_stdout_to_file(r);
                    self.redirect(r)?;
                }
                CommandPrefixOrSuffixItem::Word(w) => {
                    self.word(&w.value)?;
                    args.push(w.value.clone());
                }
                CommandPrefixOrSuffixItem::AssignmentWord(assignment, word) => {
                    self.word(&word.value)?;
                    let name = match &assignment.name {
                        ast::AssignmentName::VariableName(n) => n.clone(),
                        ast::AssignmentName::ArrayElementName(n, sub) => {
                            self.word(sub)?;
                            if words::risky_arithmetic(sub) {
                                return refuse(
                                    Rule::Expansion,
                                    expansion_message("an array subscript with a variable in it"),
                                );
                            }
                            n.clone()
                        }
                    };
                    assignments.push(name);
                }
                CommandPrefixOrSuffixItem::ProcessSubstitution(..) => {
                    return refuse(Rule::Substitution, substitution_message())
                }
            }
        }
        let Some(name_word) = &simple.word_or_name else {
            // Only assignments (and redirects, judged above): shell variables for the rest of
            // the command. One the environment already has would be passed on to every
            // program after it, so those follow the prefix allow-list.
            for name in &assignments {
                if !programs::harmless_variable(name) && !is_shell_local(name) {
                    return refuse(Rule::EnvPrefix, env_message(name));
                }
            }
            return Ok(());
        };
        for name in &assignments {
            if !programs::harmless_variable(name) {
                return refuse(Rule::EnvPrefix, env_message(name));
            }
        }
        self.word(&name_word.value)?;
        let bracket = name_word.value == "[";
        if has_expansion(&name_word.value) || (has_glob(&name_word.value) && !bracket) {
            return refuse(
                Rule::Tier,
                "ws_shell refused: the program name comes from a variable or a pattern, so what runs cannot be known. Name the program literally instead.",
            );
        }
        let program = literal(&name_word.value);
        let argv: Vec<String> = args.iter().map(|a| literal(a)).collect();
        programs::judge(self, &program, &argv, &args, stdout_to_file)
    }

    /// True while no `cd` has moved the command from the project root.
    pub(crate) fn at_root(&self) -> bool {
        self.cwd.borrow().is_root()
    }

    /// True when the user's `shell_allow` has a prefix of these words (whole words).
    pub(crate) fn allowed_by_user(&self, words: &[&str]) -> bool {
        self.policy.allow_prefixes.iter().any(|prefix| {
            let p: Vec<&str> = prefix.split_whitespace().collect();
            !p.is_empty() && words.len() >= p.len() && words[..p.len()] == p[..]
        })
    }

    fn redirect(&self, redirect: &IoRedirect) -> Result<(), Refusal> {
        match redirect {
            IoRedirect::File(_, kind, target) => match target {
                IoFileRedirectTarget::ProcessSubstitution(..) => {
                    refuse(Rule::Substitution, substitution_message())
                }
                IoFileRedirectTarget::Fd(_) => Ok(()),
                IoFileRedirectTarget::Duplicate(word) => {
                    self.word(&word.value)?;
                    let lit = literal(&word.value);
                    if has_expansion(&word.value) || !fd_word(&lit) {
                        return refuse(Rule::FdDup, fd_message());
                    }
                    Ok(())
                }
                IoFileRedirectTarget::Filename(word) => {
                    self.word(&word.value)?;
                    let lit = literal(&word.value);
                    if lit.starts_with("/dev/tcp/") || lit.starts_with("/dev/udp/") {
                        return refuse(
                            Rule::OutsideProject,
                            "ws_shell refused: bash opens a network connection for /dev/tcp and /dev/udp. Read and write files inside the project instead.",
                        );
                    }
                    match kind {
                        IoFileRedirectKind::Read => Ok(()),
                        IoFileRedirectKind::DuplicateInput
                        | IoFileRedirectKind::DuplicateOutput => {
                            if fd_word(&literal(&word.value)) {
                                Ok(())
                            } else {
                                refuse(Rule::FdDup, fd_message())
                            }
                        }
                        IoFileRedirectKind::Append => self.write_target(&word.value, true),
                        _ => self.write_target(&word.value, false),
                    }
                }
            },
            IoRedirect::HereDocument(_, doc) => {
                if doc.requires_expansion {
                    self.word(&doc.doc.value)?;
                }
                Ok(())
            }
            IoRedirect::HereString(_, word) => self.word(&word.value),
            IoRedirect::OutputAndError(..) => refuse(
                Rule::RedirectForm,
                "ws_shell refused: `&>` means one redirect to bash but a background job and a file truncation to sh. Write `> file 2>&1` (or `>> file 2>&1`) instead.",
            ),
        }
    }
}

/// The args of a pipeline that is exactly one `cd …` simple command.
fn cd_args(pipeline: &ast::Pipeline) -> Option<Vec<String>> {
    let [Command::Simple(simple)] = pipeline.seq.as_slice() else {
        return None;
    };
    if pipeline.bang || simple.prefix.is_some() {
        return None;
    }
    let name = simple.word_or_name.as_ref()?;
    if literal(&name.value) != "cd" {
        return None;
    }
    let mut args = Vec::new();
    for item in simple.suffix.iter().flat_map(|s| s.0.iter()) {
        match item {
            CommandPrefixOrSuffixItem::Word(w) => args.push(w.value.clone()),
            _ => return None,
        }
    }
    Some(args)
}

/// True for a redirect that sends standard output to a file.
fn writes_stdout_to_file(r: &IoRedirect) -> bool {
    match r {
        IoRedirect::File(fd, kind, IoFileRedirectTarget::Filename(_)) => {
            fd.is_none_or(|fd| fd == 1)
                && matches!(
                    kind,
                    IoFileRedirectKind::Write
                        | IoFileRedirectKind::Append
                        | IoFileRedirectKind::Clobber
                        | IoFileRedirectKind::ReadAndWrite
                )
        }
        IoRedirect::OutputAndError(..) => true,
        _ => false,
    }
}

fn fd_word(lit: &str) -> bool {
    lit == "-" || (!lit.is_empty() && lit.chars().all(|c| c.is_ascii_digit()))
}

/// Names bash keeps to itself (lower-case, not in the environment): a plain `x=1` is fine.
fn is_shell_local(name: &str) -> bool {
    name.chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

fn env_message(name: &str) -> String {
    format!(
        "ws_shell refused: setting {name} can change which programs run or what they read (only LANG, LC_*, TZ, NO_COLOR, RUST_BACKTRACE, CI and a few like them may be set). Run the command without `{name}=…` instead."
    )
}

fn fd_message() -> &'static str {
    "ws_shell refused: `>&`/`<&` must name a file descriptor number or `-` (bash expands anything else twice). Use `> file 2>&1` instead."
}

pub(crate) fn substitution_message() -> &'static str {
    "ws_shell refused: command or process substitution (`$(…)`, backticks, `<(…)`, `>(…)`) runs a hidden command. Run the inner command on its own first, then use its output in a second call instead."
}

fn expansion_message(what: &str) -> String {
    format!(
        "ws_shell refused: {what} can run a command or read what the command does not show in bash. Write the value literally instead (plain `$name` is fine)."
    )
}
