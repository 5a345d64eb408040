//! git's judgement: its global options (`-C DIR` inside the project; `-c`, `--config-env`,
//! `--git-dir`, `--work-tree`, `--exec-path=`, `--bare` refused — they point git at programs or
//! at another repository's config), then the read-only subcommands in their read-only forms.
//! Changing the repository is the user's step.

use super::programs::{row_for, scan, Call, Verdict};
use super::{refuse, Refusal, Rule, Walker};

type Judged = Result<Verdict, Refusal>;

const ALLOW: Judged = Ok(Verdict::Allow);

/// git: its global options (`-C DIR` inside the project; `-c`, `--config-env`, `--git-dir`,
/// `--work-tree`, `--exec-path=`, `--bare` point git at programs or at another repository's
/// config), then the read-only subcommands in their read-only forms.
pub fn git(w: &Walker, call: &Call) -> Judged {
    let argv = call.argv;
    let i = match global_options(w, call)? {
        Options::Subcommand(i) => i,
        Options::Done(verdict) => return Ok(verdict),
    };
    let Some(sub) = argv.get(i) else {
        return ALLOW;
    };
    let rest = &argv[i + 1..];
    let raw_rest = &call.raw[i + 1..];
    let row = row_for("git").ok_or_else(|| Refusal {
        rule: Rule::Tier,
        message: "ws_shell refused: git has no row".into(),
    })?;
    let positionals = scan(w, row, rest, raw_rest, call.user)?;
    let has = |flags: &[&str]| {
        rest.iter().any(|a| {
            flags
                .iter()
                .any(|f| a == f || a.starts_with(&format!("{f}=")))
        })
    };
    let first = positionals.first().map(|p| rest[*p].as_str());
    let read_only = read_only_form(sub, first, &positionals, &has);
    if read_only || call.user {
        if call.user && !read_only {
            for p in &positionals {
                w.operand(&raw_rest[*p])?;
            }
        }
        return ALLOW;
    }
    refuse(
        Rule::Tier,
        format!(
            "ws_shell refused: `git {sub}` in this form changes the repository or reaches the network. Committing, branches and the index are the user's step: change files with the edit tools (ws_mv moves tracked files) and say what to commit instead — or ask the user to add a `shell_allow` prefix for it."
        ),
    )
}

/// Where the global options end: at the subcommand's index, or with a verdict already (a
/// version or help query is allowed; an option that points git elsewhere is refused).
enum Options {
    Subcommand(usize),
    Done(Verdict),
}

/// Reads git's global options, checking each: `-C DIR` must stay inside the project, and the
/// options that point git at programs or another repository's config are refused.
fn global_options(w: &Walker, call: &Call) -> Result<Options, Refusal> {
    let argv = call.argv;
    let points_elsewhere = |opt: &str| {
        refuse(
            Rule::DangerousFlag,
            format!("ws_shell refused: `git {opt}` can make git run arbitrary programs or read another repository's config. Run the git command without it instead."),
        )
    };
    let mut i = 0;
    while i < argv.len() {
        let a = argv[i].as_str();
        if !a.starts_with('-') {
            break;
        }
        let name = a.split('=').next().unwrap_or(a);
        match name {
            "-C" => {
                let Some(dir) = call.raw.get(i + 1) else {
                    return refuse(Rule::Parse, "ws_shell refused: `git -C` needs a directory. Run `git -C DIR status` instead.");
                };
                w.directory(dir)?;
                i += 2;
                continue;
            }
            "-c" | "--config-env" | "--git-dir" | "--work-tree" | "--bare" | "--super-prefix" => {
                return points_elsewhere(name).map(Options::Done)
            }
            _ if a.starts_with("-c") => return points_elsewhere("-c").map(Options::Done),
            "--exec-path" if a.contains('=') => return points_elsewhere("--exec-path").map(Options::Done),
            "--exec-path" | "--version" | "--help" | "-h" | "-v" | "--html-path"
            | "--man-path" | "--info-path" => return Ok(Options::Done(Verdict::Allow)),
            "--namespace" | "--attr-source" | "--list-cmds" => {
                if !a.contains('=') {
                    i += 1;
                }
            }
            "-p" | "--paginate" | "-P" | "--no-pager" | "--no-replace-objects"
            | "--no-lazy-fetch" | "--no-optional-locks" | "--no-advice" | "--literal-pathspecs"
            | "--glob-pathspecs" | "--noglob-pathspecs" | "--icase-pathspecs" => {}
            _ => {
                return refuse(
                    Rule::DangerousFlag,
                    format!("ws_shell refused: `git {a}` is not a git option allowed here. Run the git command without it instead."),
                )
            }
        }
        i += 1;
    }
    Ok(Options::Subcommand(i))
}

/// Whether `sub` with these operands and flags only reads the repository.
fn read_only_form(
    sub: &str,
    first: Option<&str>,
    positionals: &[usize],
    has: &dyn Fn(&[&str]) -> bool,
) -> bool {
    match sub {
        "status" | "diff" | "log" | "show" | "blame" | "annotate" | "rev-parse" | "ls-files"
        | "grep" | "describe" | "shortlog" | "rev-list" | "cat-file" | "ls-tree" | "merge-base"
        | "count-objects" | "for-each-ref" | "show-ref" | "var" | "check-ignore" | "check-attr"
        | "name-rev" | "whatchanged" | "range-diff" | "help" | "version" | "show-branch"
        | "cherry" | "diff-tree" | "diff-files" | "diff-index" | "verify-commit" | "verify-tag" => {
            true
        }
        "branch" => {
            positionals.is_empty()
                && !has(&[
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
                    "--create-reflog",
                    "--track",
                    "--no-track",
                ])
        }
        "tag" => {
            (positionals.is_empty() || has(&["-l", "--list"]))
                && !has(&[
                    "-d", "--delete", "-a", "-s", "-m", "-F", "-f", "--force", "-u",
                ])
        }
        "config" => {
            // `git config NAME` (one operand) reads NAME; a second operand would set it.
            let reads = has(&[
                "--get",
                "--get-all",
                "--get-regexp",
                "--get-urlmatch",
                "--list",
                "-l",
            ]) || matches!(first, Some("get" | "list"))
                || (positionals.len() == 1 && first.is_some_and(|k| k.contains('.')));
            let changes = has(&[
                "--add",
                "--unset",
                "--unset-all",
                "--replace-all",
                "--rename-section",
                "--remove-section",
                "-e",
                "--edit",
            ]) || matches!(
                first,
                Some("set" | "unset" | "rename-section" | "remove-section" | "edit")
            );
            reads && !changes
        }
        "reflog" => matches!(first, None | Some("show")),
        "stash" => matches!(first, Some("list" | "show")),
        "worktree" => first == Some("list"),
        "notes" => matches!(first, Some("list" | "show")),
        "submodule" => first == Some("status"),
        "remote" => positionals.is_empty() || first == Some("get-url"),
        _ => false,
    }
}
