//! ws_glob: find files by pattern. `**` spans any number of directories, `*` stays within one;
//! a pattern without `/` matches file names at any depth. `.gitignore` is honoured as ripgrep
//! honours it. Results are sorted and capped at 200, with the total counted.

use std::borrow::Cow;

use std::sync::Mutex;

use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkState;

use crate::error::RefusalClass;
use crate::error::ToolError;
use crate::path::{PathError, RelPath};
use crate::registry::{Args, Effect, Kind, Param, Reply, Tool, ToolSpec};
use crate::walk::{relative, Walk};
use crate::workspace::Workspace;

/// At most this many paths are listed.
pub const MAX_GLOB_HITS: usize = 200;

pub struct GlobTool;

static SPEC: ToolSpec = ToolSpec {
    name: "ws_glob",
    description: Cow::Borrowed(
        "Find files by glob, e.g. \"src/**/*.rs\"; a pattern without \"/\" matches at any depth.",
    ),
    params: &[
        Param {
            name: "pattern",
            kind: Kind::String,
            required: true,
            description: "",
            aliases: &["glob", "query", "name"],
        },
        Param {
            name: "path",
            kind: Kind::String,
            required: false,
            description: "directory (default: the root)",
            aliases: &["dir", "directory", "root", "cwd"],
        },
    ],
    example: "{\"pattern\":\"**/*.rs\"}",
    effect: Effect::READ_ONLY,
    passes_unknown_args: false,
    rest_hint: "Narrow the pattern (e.g. \"src/**/*.rs\") or pass path= to search one directory.",
};

impl Tool for GlobTool {
    fn spec(&self) -> &ToolSpec {
        &SPEC
    }

    fn run(&self, ws: &mut Workspace, args: &Args) -> Result<Reply, ToolError> {
        let raw = args.str("pattern").unwrap_or_default().trim();
        let base = ws.jail.parse_or_root(args.str("path"))?;
        let pattern = clean_pattern(raw)?;
        let matcher = GlobBuilder::new(&pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| {
                ToolError::refused(RefusalClass::Args, format!(
                    "invalid glob \"{raw}\": {}. Use * for part of a name, ** for any number of directories, e.g. \"src/**/*.rs\".",
                    e.kind()
                ))
            })?
            .compile_matcher();

        // Walk only beneath the pattern's literal directory prefix.
        let start = literal_prefix(&pattern)
            .into_iter()
            .fold(base.clone(), |p, c| p.join(c));
        let hidden = pattern.split('/').any(|c| c.starts_with('.')) || base.has_hidden_component();
        let mut walk = match Walk::new(&ws.jail, &start, hidden) {
            Ok(w) => w,
            Err(PathError::NotFound { .. }) => {
                return Ok(format!(
                    "no files match \"{raw}\": the directory {start} does not exist. Look around with ws_list {{\"path\":\"{}\"}}.",
                    start.parent()
                )
                .into())
            }
            Err(e) => return Err(e.into()),
        };
        walk.stop_on(&ws.control);
        let mut hits = collect(ws, walk, &base, &matcher);
        if hits.is_empty() {
            let within = if base.is_root() {
                String::new()
            } else {
                format!(" under {base}")
            };
            let last = pattern.rsplit('/').next().unwrap_or(&pattern);
            return Ok(format!(
                "no files match \"{raw}\"{within} (files ignored by .gitignore{} are skipped). Try ws_glob {{\"pattern\":\"**/{last}\"}} to look in every directory, or ws_list to look around.",
                if hidden { "" } else { " and hidden files" }
            )
            .into());
        }
        hits.sort();
        let total = hits.len();
        let mut out = hits
            .iter()
            .take(MAX_GLOB_HITS)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n");
        if total > MAX_GLOB_HITS {
            out.push_str(&format!(
                "\n[{MAX_GLOB_HITS} of {total} matches shown (the cap is {MAX_GLOB_HITS}); narrow the pattern, e.g. \"src/**/*.rs\", or pass path= to search one directory]"
            ));
        } else {
            out.push_str(&format!(
                "\n({total} {})",
                if total == 1 { "match" } else { "matches" }
            ));
        }
        Ok(out.into())
    }
}

/// Normalizes a pattern: no leading `./`, never absolute or climbing, and a pattern without a
/// `/` matches names at any depth.
fn clean_pattern(raw: &str) -> Result<String, ToolError> {
    if raw.is_empty() {
        return Err(ToolError::refused(
            RefusalClass::Args,
            "pattern is empty. Send a glob such as \"**/*.rs\" or \"src/*.py\".".into(),
        ));
    }
    let mut p = raw;
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    if p.starts_with('/') {
        return Err(ToolError::refused(
            RefusalClass::Args,
            format!(
                "patterns are relative to the project root; drop the leading \"/\": \"{}\".",
                p.trim_start_matches('/')
            ),
        ));
    }
    if p.split('/').any(|c| c == "..") {
        return Err(ToolError::refused(RefusalClass::Jail, format!(
            "\"..\" is refused in patterns: \"{raw}\". Patterns match inside the project; start from the root, e.g. \"**/*.rs\"."
        )));
    }
    let p = p.trim_end_matches('/');
    Ok(if p.contains('/') {
        p.to_string()
    } else {
        format!("**/{p}")
    })
}

/// The leading components that hold no glob syntax: the walk can start there.
fn literal_prefix(pattern: &str) -> Vec<&str> {
    let comps: Vec<&str> = pattern.split('/').collect();
    let mut prefix = Vec::new();
    // The last component is the name being matched; never walk into it.
    for c in &comps[..comps.len().saturating_sub(1)] {
        if c.contains(['*', '?', '[', ']', '{', '}', '\\']) || c.is_empty() {
            break;
        }
        prefix.push(*c);
    }
    prefix
}

/// Every walked path, relative to `base`, that the matcher accepts; shown project-relative,
/// directories with a trailing `/`.
fn collect(ws: &Workspace, walk: Walk, base: &RelPath, matcher: &GlobMatcher) -> Vec<String> {
    let hits = Mutex::new(Vec::new());
    let base_prefix = if base.is_root() {
        String::new()
    } else {
        format!("{}/", base.as_str())
    };
    walk.parallel().run(|| {
        Box::new(|entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            let Some(rel) = relative(&ws.jail, entry.path()) else {
                return WalkState::Continue;
            };
            let Some(under_base) = rel.as_str().strip_prefix(&base_prefix) else {
                return WalkState::Continue;
            };
            if under_base.is_empty() {
                return WalkState::Continue;
            }
            if matcher.is_match(under_base) {
                let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                let shown = if is_dir {
                    format!("{rel}/")
                } else {
                    rel.to_string()
                };
                if let Ok(mut h) = hits.lock() {
                    h.push(shown);
                }
            }
            WalkState::Continue
        })
    });
    hits.into_inner().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_cleaned() {
        assert_eq!(clean_pattern("*.rs").unwrap(), "**/*.rs");
        assert_eq!(clean_pattern("./src/*.rs").unwrap(), "src/*.rs");
        assert!(clean_pattern("/etc/*").is_err());
        assert!(clean_pattern("../*").is_err());
        assert!(clean_pattern("").is_err());
    }

    #[test]
    fn literal_prefix_stops_at_glob_syntax() {
        assert_eq!(literal_prefix("pkg/**/*_test.go"), vec!["pkg"]);
        assert_eq!(literal_prefix("cmd/*/main.go"), vec!["cmd"]);
        assert_eq!(literal_prefix("a/b/c.rs"), vec!["a", "b"]);
        assert!(literal_prefix("**/*.rs").is_empty());
    }
}
