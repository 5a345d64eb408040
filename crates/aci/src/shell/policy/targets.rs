//! What a command writes: redirect targets, the targets of tee and dd, output paths of build
//! tools, the operands of commands that change files, and directories given to `-C`. None may
//! be a protected place in any spelling — the text (case, `./`, `..`, globs and braces that
//! could match), a symlinked parent, a place found on disk — and a plain write never goes
//! outside the project but to the null devices and the call's `$TMPDIR`.

use super::words::{has_brace, has_expansion, has_glob, literal};
use super::{refuse, Refusal, Rule, Walker};
use crate::boundary::{self, Boundary};
use crate::path::RelPath;

impl Walker<'_> {
    /// Judges a file the command would write (a redirect, tee's or dd's target): never a
    /// protected place, never a target that cannot be known before running, never outside
    /// the project but the null devices and the call's `$TMPDIR`, never an existing file
    /// unless appending — and never one with other hard links.
    pub(crate) fn write_target(&self, raw: &str, append: bool) -> Result<(), Refusal> {
        let lit = literal(raw);
        if let Some(b) = text_boundary(&lit) {
            return refuse(boundary_rule(b), b.shell_refusal());
        }
        if let Some(rest) = tmpdir_path(raw) {
            if rest.split('/').any(|c| c == "..") || has_glob(rest) || has_brace(rest) {
                return refuse(Rule::NonLiteralTarget, format!("ws_shell refused: the output target {raw} is not one plain path under $TMPDIR. Write to `$TMPDIR/name` instead."));
            }
            return Ok(());
        }
        if has_expansion(raw) || lit.starts_with('~') {
            return refuse(Rule::NonLiteralTarget, format!("ws_shell refused: the output target {raw} depends on a variable, so it cannot be checked. Write to a literal path inside the project (or `$TMPDIR/name`) instead, or use ws_write."));
        }
        if has_glob(raw) || has_brace(raw) {
            return match glob_boundary(&lit) {
                Some(b) => refuse(boundary_rule(b), b.shell_refusal()),
                None => refuse(Rule::NonLiteralTarget, format!("ws_shell refused: the output target {raw} is a pattern. Write to one literal path instead.")),
            };
        }
        if ["/dev/null", "/dev/stdout", "/dev/stderr"].contains(&lit.as_str()) {
            return Ok(());
        }
        let Some(rel) = self.resolve_in_cwd(&lit) else {
            return refuse(Rule::OutsideProject, format!("ws_shell refused: the output target {lit} is outside the project. Write inside the project, to `$TMPDIR/name` (this call's own temp directory, removed afterwards) or to .slmcode/scratch/ (kept), or to /dev/null instead."));
        };
        if let Some(b) = self.boundary_of(&rel) {
            return refuse(boundary_rule(b), b.shell_refusal());
        }
        if let Ok(meta) = self.jail.symlink_metadata(&rel) {
            if !append {
                return refuse(Rule::WriteExisting, format!("ws_shell refused: this would overwrite the existing file {rel}. Change it with ws_edit or ws_write instead, or append with `>>`, or write to a new file."));
            }
            // Where the count cannot be learned, the file counts as linked.
            if meta.is_file() && crate::platform::fs::links(&meta).is_none_or(|n| n > 1) {
                return refuse(Rule::WriteExisting, format!("ws_shell refused: {rel} has other hard links, so appending to it would change another file too. Change it with ws_edit instead, or write to a new file."));
            }
        }
        Ok(())
    }

    /// A path a program writes as its output (`go build -o`, `--junitxml`): inside the project
    /// (or `$TMPDIR`) and outside every protected place; existing files may be replaced.
    pub(crate) fn output_path(&self, raw: &str) -> Result<(), Refusal> {
        let lit = literal(raw);
        if let Some(b) = text_boundary(&lit) {
            return refuse(boundary_rule(b), b.shell_refusal());
        }
        if tmpdir_path(raw).is_some_and(|rest| !rest.split('/').any(|c| c == "..")) {
            return Ok(());
        }
        if has_expansion(raw) || has_glob(raw) || has_brace(raw) || lit.starts_with('~') {
            return refuse(Rule::NonLiteralTarget, format!("ws_shell refused: the output path {raw} is not literal, so it cannot be checked. Name a path inside the project instead."));
        }
        if lit == "/dev/null" {
            return Ok(());
        }
        let Some(rel) = self.resolve_in_cwd(&lit) else {
            return refuse(Rule::OutsideProject, format!("ws_shell refused: the output path {lit} is outside the project. Write it inside the project or under `$TMPDIR` instead."));
        };
        match self.boundary_of(&rel) {
            Some(b) => refuse(boundary_rule(b), b.shell_refusal()),
            None => Ok(()),
        }
    }

    /// Refuses an operand of a command that changes files (cp, mv, rm, sed -i, git add …)
    /// when it names a protected place.
    pub(crate) fn operand(&self, raw: &str) -> Result<(), Refusal> {
        let lit = literal(raw);
        if let Some(b) = text_boundary(&lit) {
            return refuse(boundary_rule(b), b.shell_refusal());
        }
        if has_glob(raw) || has_brace(raw) {
            if let Some(b) = glob_boundary(&lit) {
                return refuse(boundary_rule(b), b.shell_refusal());
            }
            return Ok(());
        }
        if let Some(rel) = self.resolve_in_cwd(&lit) {
            if let Some(b) = self.boundary_of(&rel) {
                return refuse(boundary_rule(b), b.shell_refusal());
            }
        }
        Ok(())
    }

    /// A directory argument (`git -C`, `make -C`): inside the project.
    pub(crate) fn directory(&self, raw: &str) -> Result<(), Refusal> {
        let lit = literal(raw);
        let inside = !has_expansion(raw)
            && self
                .resolve_in_cwd(&lit)
                .and_then(|rel| self.jail.resolve(&rel).ok())
                .is_some();
        if inside {
            Ok(())
        } else {
            refuse(
                Rule::OutsideProject,
                format!("ws_shell refused: the directory {raw} is not inside the project. Name a directory inside it (see ws_list) instead."),
            )
        }
    }

    /// The boundary a project path lies in: by its text, through a symlinked parent, or under
    /// a protected place found on disk.
    fn boundary_of(&self, rel: &RelPath) -> Option<Boundary> {
        if let Some(b) = self.protected.classify(rel) {
            return Some(b);
        }
        // The deepest existing directory on the way, resolved: a symlink to `.git` or
        // `.slmcode` leads there.
        let mut dir = rel.parent();
        let mut rest = vec![rel.file_name().to_string()];
        loop {
            if let Ok(real) = self.jail.resolve(&dir) {
                let full = rest.iter().rev().fold(real, |p, n| p.join(n));
                return self.protected.classify(&full);
            }
            if dir.is_root() {
                return None;
            }
            rest.push(dir.file_name().to_string());
            dir = dir.parent();
        }
    }
}

/// A `$TMPDIR/rest` or `${TMPDIR}/rest` target, as `rest`.
fn tmpdir_path(raw: &str) -> Option<&str> {
    let unquoted = raw.trim_matches('"');
    let rest = unquoted
        .strip_prefix("$TMPDIR/")
        .or_else(|| unquoted.strip_prefix("${TMPDIR}/"))?;
    (!rest.is_empty() && !rest.contains(['$', '`', '"', '\''])).then_some(rest)
}
/// The boundary a path's text names: any `.git` component (any spelling), or `.slmcode` at the
/// top outside `scratch/` — judged on the text as written (`./`, doubled slashes and
/// `a/../` normalised).
fn text_boundary(lit: &str) -> Option<Boundary> {
    let comps: Vec<&str> = lit
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    if comps.iter().any(|c| boundary::is_git_name(c)) {
        return Some(Boundary::Git);
    }
    let rel = RelPath::parse(&comps.join("/"), std::path::Path::new("/")).ok()?;
    boundary::classify(&rel)
}

/// Could a glob or brace pattern match a protected name in some component?
fn glob_boundary(lit: &str) -> Option<Boundary> {
    let comps: Vec<&str> = lit
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    let matches = |pattern: &str, name: &str| {
        globset::GlobBuilder::new(pattern)
            .case_insensitive(true)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map(|g| g.compile_matcher().is_match(name))
            .unwrap_or(true)
    };
    if comps.iter().any(|c| matches(c, ".git")) {
        return Some(Boundary::Git);
    }
    if comps
        .first()
        .is_some_and(|c| matches(c, crate::boundary::CONTROL_DIR))
    {
        return Some(Boundary::Control);
    }
    None
}

fn boundary_rule(b: Boundary) -> Rule {
    match b {
        Boundary::Control => Rule::ControlDir,
        Boundary::Git => Rule::GitDir,
    }
}
