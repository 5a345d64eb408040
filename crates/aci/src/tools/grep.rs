//! ws_grep: regex search over file contents with ripgrep's own crates — the same regex engine,
//! the same `.gitignore` handling, the same binary detection, searching on every core. A pattern
//! that does not compile is searched as literal text (and the result says so) rather than
//! failing, because a small model's "regex" is usually a code snippet with a stray paren.

use std::borrow::Cow;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{sinks, BinaryDetection, SearcherBuilder};
use ignore::overrides::OverrideBuilder;
use ignore::WalkState;

use crate::error::RefusalClass;
use crate::error::ToolError;
use crate::path::{PathError, RelPath};
use crate::registry::{Args, Effect, Kind, Param, Reply, Tool, ToolSpec, ANY_PATH_ALIASES};
use crate::suggest::{did_you_mean, similar_paths, Want};
use crate::walk::{relative, Walk};
use crate::workspace::Workspace;

/// At most this many matching lines are returned; the search stops once it has them.
pub const MAX_GREP_HITS: usize = 50;
/// A matching line longer than this is shown as a window around the match.
const MAX_HIT_CHARS: usize = 240;

pub struct GrepTool;

static SPEC: ToolSpec = ToolSpec {
    name: "ws_grep",
    description: Cow::Borrowed("Search file contents by regex: path:line:text, at most 50 hits."),
    params: &[
        Param {
            name: "pattern",
            kind: Kind::String,
            required: true,
            description: "regular expression",
            aliases: &["regex", "query", "search", "text"],
        },
        Param {
            name: "path",
            kind: Kind::String,
            required: false,
            description: "directory or file (default: the root)",
            aliases: ANY_PATH_ALIASES,
        },
        Param {
            name: "glob",
            kind: Kind::String,
            required: false,
            description: "only files matching, e.g. *.py",
            aliases: &["include", "file_pattern", "files", "glob_pattern"],
        },
        Param {
            name: "case_insensitive",
            kind: Kind::Boolean,
            required: false,
            description: "",
            aliases: &["ignore_case", "-i", "i", "insensitive"],
        },
    ],
    example: "{\"pattern\":\"fn main\",\"glob\":\"*.rs\"}",
    effect: Effect::READ_ONLY,
    passes_unknown_args: false,
    rest_hint: "Narrow the search with glob= (e.g. \"*.rs\") or path= (a directory).",
};

struct Hit {
    path: RelPath,
    line: u64,
    text: String,
}

impl Tool for GrepTool {
    fn spec(&self) -> &ToolSpec {
        &SPEC
    }

    fn run(&self, ws: &mut Workspace, args: &Args) -> Result<Reply, ToolError> {
        let pattern = args.str("pattern").unwrap_or_default();
        if pattern.is_empty() {
            return Err(ToolError::refused(RefusalClass::Args,
                "pattern is empty. Send the text or regular expression to look for, e.g. {\"pattern\":\"fn main\"}.".into(),
            ));
        }
        let base = ws.jail.parse_or_root(args.str("path"))?;
        let glob = args.str("glob").map(str::trim).filter(|g| !g.is_empty());
        let (matcher, literal_note) = build_matcher(pattern, args.flag("case_insensitive"))?;

        let hidden = base.has_hidden_component()
            || glob.is_some_and(|g| {
                g.split('/')
                    .any(|c| c.trim_start_matches('!').starts_with('.'))
            });
        let mut walk = match Walk::new(&ws.jail, &base, hidden) {
            Ok(w) => w,
            Err(PathError::NotFound { .. }) => {
                let similar = similar_paths(&ws.jail, &base, Want::Dir);
                return Err(ToolError::refused(RefusalClass::NotFound, format!(
                    "no such file or directory: {base}.{} Search the whole project by leaving out path=, or find it with ws_glob {{\"pattern\":\"**/{}\"}}.",
                    did_you_mean(&similar),
                    base.file_name()
                )));
            }
            Err(e) => return Err(e.into()),
        };
        if let Some(g) = glob {
            let mut ob = OverrideBuilder::new(ws.jail.root());
            for part in split_globs(g) {
                ob.add(part).map_err(|e| bad_glob(g, &e))?;
            }
            walk.overrides(ob.build().map_err(|e| bad_glob(g, &e))?);
        }

        walk.stop_on(&ws.control);
        let found = search(ws, walk, &matcher);
        let mut hits = found.hits;
        hits.sort_by(|a, b| a.path.cmp(&b.path).then(a.line.cmp(&b.line)));

        let mut out = String::new();
        if let Some(note) = &literal_note {
            out.push_str(note);
            out.push('\n');
        }
        let shown_pattern = if pattern.chars().count() > 80 {
            format!("{}…", pattern.chars().take(80).collect::<String>())
        } else {
            pattern.to_string()
        };
        if hits.is_empty() {
            let scope = if base.is_root() {
                "the project".to_string()
            } else {
                base.to_string()
            };
            let filter = glob
                .map(|g| format!(" matching \"{g}\""))
                .unwrap_or_default();
            out.push_str(&format!(
                "no matches for \"{shown_pattern}\" in {scope}{filter} ({} files searched; files ignored by .gitignore, hidden and binary files are skipped). Try a shorter pattern, case_insensitive: true, or ws_glob to find files by name.",
                found.files
            ));
            return Ok(out.into());
        }
        let files = {
            let mut paths: Vec<&RelPath> = hits.iter().map(|h| &h.path).collect();
            paths.dedup();
            paths.len()
        };
        for hit in &hits {
            out.push_str(&format!(
                "{}:{}:{}\n",
                hit.path,
                hit.line,
                shorten(&hit.text, &matcher)
            ));
        }
        if found.more {
            out.push_str(&format!(
                "[stopped at {MAX_GREP_HITS} matches (the cap) after searching {} files — there are more. Narrow with glob= (e.g. \"*.rs\") or path= (a directory), or make the pattern more specific]",
                found.files
            ));
        } else {
            out.push_str(&format!(
                "({} {} in {files} {})",
                hits.len(),
                if hits.len() == 1 { "match" } else { "matches" },
                if files == 1 { "file" } else { "files" }
            ));
        }
        Ok(out.into())
    }
}

/// Compiles the pattern; if it is not a valid regex, compiles it as a literal and returns the
/// note that says so.
fn build_matcher(
    pattern: &str,
    case_insensitive: bool,
) -> Result<(RegexMatcher, Option<String>), ToolError> {
    let build = |p: &str| {
        RegexMatcherBuilder::new()
            .case_insensitive(case_insensitive)
            .line_terminator(Some(b'\n'))
            .build(p)
    };
    match build(pattern) {
        Ok(m) => Ok((m, None)),
        Err(err) => {
            if pattern.contains('\n') {
                return Err(ToolError::refused(RefusalClass::Args,
                    "patterns match one line at a time, so a pattern cannot contain a newline. Search for one distinctive line of it.".into(),
                ));
            }
            let reason = err
                .to_string()
                .lines()
                .rev()
                .find(|l| l.trim_start().starts_with("error:"))
                .map(|l| l.trim().trim_start_matches("error:").trim().to_string())
                .unwrap_or_else(|| "it does not compile".to_string());
            let literal = build(&regex::escape(pattern)).map_err(|e| {
                ToolError::refused(
                    RefusalClass::Args,
                    format!("pattern could not be searched even as literal text: {e}"),
                )
            })?;
            Ok((
                literal,
                Some(format!(
                    "[\"{pattern}\" is not a valid regular expression ({reason}); searched for it as literal text instead]"
                )),
            ))
        }
    }
}

/// `a.rs,b.rs` and `a.rs b.rs` are both common; braces stay whole (`*.{rs,toml}`).
fn split_globs(g: &str) -> Vec<&str> {
    if g.contains('{') {
        return vec![g];
    }
    g.split([',', ' '])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

fn bad_glob(g: &str, e: &ignore::Error) -> ToolError {
    ToolError::refused(
        RefusalClass::Args,
        format!("invalid glob \"{g}\": {e}. Examples: \"*.rs\", \"src/**/*.ts\", \"*.{{js,ts}}\"."),
    )
}

struct Found {
    hits: Vec<Hit>,
    files: usize,
    more: bool,
}

/// Searches every walked file on every core; stops the walk once the cap is reached.
fn search(ws: &Workspace, walk: Walk, matcher: &RegexMatcher) -> Found {
    let hits = Mutex::new(Vec::new());
    let count = AtomicUsize::new(0);
    let files = AtomicUsize::new(0);
    let more = AtomicBool::new(false);
    walk.parallel().run(|| {
        let mut searcher = SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(b'\x00'))
            .line_number(true)
            .build();
        let hits = &hits;
        let count = &count;
        let files = &files;
        let more = &more;
        let jail = &ws.jail;
        Box::new(move |entry| {
            if more.load(Ordering::Relaxed) {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let Some(rel) = relative(jail, entry.path()) else {
                return WalkState::Continue;
            };
            // Opened through the jail: a file swapped for a symlink mid-walk cannot lead out.
            let Ok(file) = jail.open_file(&rel) else {
                return WalkState::Continue;
            };
            let file = file.into_std();
            if !file.metadata().is_ok_and(|m| m.is_file()) {
                return WalkState::Continue;
            }
            files.fetch_add(1, Ordering::Relaxed);
            let mut local = Vec::new();
            let _ = searcher.search_file(
                matcher,
                &file,
                sinks::Lossy(|line, text| {
                    if count.fetch_add(1, Ordering::Relaxed) >= MAX_GREP_HITS {
                        more.store(true, Ordering::Relaxed);
                        return Ok(false);
                    }
                    local.push(Hit {
                        path: rel.clone(),
                        line,
                        text: text.trim_end_matches(['\n', '\r']).to_string(),
                    });
                    Ok(true)
                }),
            );
            if !local.is_empty() {
                if let Ok(mut h) = hits.lock() {
                    h.extend(local);
                }
            }
            if more.load(Ordering::Relaxed) {
                WalkState::Quit
            } else {
                WalkState::Continue
            }
        })
    });
    Found {
        hits: hits.into_inner().unwrap_or_default(),
        files: files.into_inner(),
        more: more.into_inner(),
    }
}

/// A long line is shown as a window around its first match, marked at both cut ends.
fn shorten(text: &str, matcher: &RegexMatcher) -> String {
    let chars = text.chars().count();
    if chars <= MAX_HIT_CHARS {
        return text.to_string();
    }
    let match_start = matcher
        .find(text.as_bytes())
        .ok()
        .flatten()
        .map(|m| text[..m.start()].chars().count())
        .unwrap_or(0);
    let start = match_start.saturating_sub(MAX_HIT_CHARS / 3);
    let end = (start + MAX_HIT_CHARS).min(chars);
    let start = end.saturating_sub(MAX_HIT_CHARS);
    let body: String = text.chars().skip(start).take(end - start).collect();
    format!(
        "{}{body}{} [line of {chars} chars cut]",
        if start > 0 { "…" } else { "" },
        if end < chars { "…" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_regex_falls_back_to_literal() {
        let (m, note) = build_matcher("foo(bar", false).unwrap();
        assert!(note.unwrap().contains("searched for it as literal text"));
        assert!(m.is_match(b"x foo(bar y").unwrap());
        let (_, note) = build_matcher("fn \\w+", false).unwrap();
        assert!(note.is_none());
    }

    #[test]
    fn long_lines_are_windowed_around_the_match() {
        let text = format!("{}NEEDLE{}", "a".repeat(1000), "b".repeat(1000));
        let (m, _) = build_matcher("NEEDLE", false).unwrap();
        let s = shorten(&text, &m);
        assert!(s.contains("NEEDLE"));
        assert!(s.starts_with('…'));
        assert!(s.contains("[line of 2006 chars cut]"));
    }

    #[test]
    fn globs_split_on_commas_but_not_braces() {
        assert_eq!(split_globs("*.rs, *.toml"), vec!["*.rs", "*.toml"]);
        assert_eq!(split_globs("*.{rs,toml}"), vec!["*.{rs,toml}"]);
    }
}
