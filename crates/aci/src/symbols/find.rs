//! Where a name is defined: the definitions of the index whose name matches a query, best
//! first. A model asks for `parse_config` when it means `parseConfig`, `Config.load` when the
//! method is `load` in `class Config`, and `confg` when it misspelt: each finds its answer,
//! ranked below exact ones.

use std::cmp::Reverse;

use super::{Definition, Kind, SymbolIndex};

/// How a name matched the query, best first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Match {
    Exact,
    ExactIgnoringCase,
    Prefix,
    Substring,
    /// The query's letters in order (`pcfg` → `parse_config`), or one slip away.
    Fuzzy,
}

/// One definition found.
#[derive(Clone, Debug)]
pub struct Hit<'a> {
    /// The defining file, project-relative.
    pub path: &'a str,
    pub definition: &'a Definition,
    /// References to its name across the project.
    pub references: u32,
    /// How the name matched: what orders the answer, and whether it says "closest".
    pub matched: Match,
}

/// What to look for.
#[derive(Clone, Debug, Default)]
pub struct Query<'q> {
    /// A name, or `Outer.inner` / `Outer::inner`.
    pub text: &'q str,
    /// Only definitions of this kind.
    pub kind: Option<Kind>,
    /// A file, or a directory whose files are searched (project-relative, `/`-separated).
    pub under: Option<&'q str>,
}

/// Every definition matching `query`, best first: by how it matched, then the most
/// referenced, then path and line. `Outer.inner` / `Outer::inner` asks for `inner` defined
/// inside `Outer`; when nothing is, `inner` anywhere.
pub fn find<'a>(index: &'a SymbolIndex, query: &Query) -> Vec<Hit<'a>> {
    let text = query.text.trim();
    let (outer, name) = split_qualified(text);
    let mut hits = search(index, query, name, outer);
    if hits.is_empty() && outer.is_some() {
        hits = search(index, query, name, None);
    }
    hits.sort_by(|a, b| {
        (a.matched, Reverse(a.references), a.path, a.definition.start).cmp(&(
            b.matched,
            Reverse(b.references),
            b.path,
            b.definition.start,
        ))
    });
    hits
}

/// `A::b`, `A.b`, `A#b` → (Some("A"), "b").
fn split_qualified(text: &str) -> (Option<&str>, &str) {
    for sep in ["::", ".", "#", "->"] {
        if let Some((outer, name)) = text.rsplit_once(sep) {
            let outer = outer.rsplit([':', '.', '#', '>']).next().unwrap_or(outer);
            if !outer.is_empty() && !name.is_empty() {
                return (Some(outer), name);
            }
        }
    }
    (None, text)
}

fn search<'a>(
    index: &'a SymbolIndex,
    query: &Query,
    name: &str,
    outer: Option<&str>,
) -> Vec<Hit<'a>> {
    let lower = name.to_lowercase();
    let squashed = squash(&lower);
    let mut hits = Vec::new();
    for (path, entry) in index.files() {
        if let Some(under) = query.under.filter(|u| !u.is_empty()) {
            let inside = path == under
                || path
                    .strip_prefix(under)
                    .is_some_and(|rest| rest.starts_with('/'));
            if !inside {
                continue;
            }
        }
        for (i, def) in entry.definitions.iter().enumerate() {
            if query.kind.is_some_and(|k| k != def.kind) || !def.kind.is_code() {
                continue;
            }
            let Some(matched) = match_name(&def.name, name, &lower, &squashed) else {
                continue;
            };
            if let Some(outer) = outer {
                let inside = parent(&entry.definitions, i)
                    .and_then(|p| entry.definitions.get(p))
                    .is_some_and(|p| p.name == outer);
                if !inside {
                    continue;
                }
            }
            hits.push(Hit {
                path,
                definition: def,
                references: index.references_to(&def.name),
                matched,
            });
        }
    }
    hits
}

/// The position of the definition directly enclosing `defs[i]`.
pub fn parent(defs: &[Definition], i: usize) -> Option<usize> {
    let depth = defs.get(i)?.depth;
    if depth == 0 {
        return None;
    }
    defs.get(..i)?.iter().rposition(|d| d.depth < depth)
}

/// How `candidate` matches the query (`query_lower` and `query_squashed` are the query's
/// lowercase and [`squash`]ed forms, made once per search). Every test is linear in the two
/// names' lengths.
fn match_name(
    candidate: &str,
    query: &str,
    query_lower: &str,
    query_squashed: &str,
) -> Option<Match> {
    if candidate == query {
        return Some(Match::Exact);
    }
    let lower = candidate.to_lowercase();
    if lower == query_lower || squash(&lower) == query_squashed {
        return Some(Match::ExactIgnoringCase);
    }
    if lower.starts_with(query_lower) {
        return Some(Match::Prefix);
    }
    if lower.contains(query_lower) {
        return Some(Match::Substring);
    }
    if is_subsequence(query_lower, &lower) || is_typo(query_lower, &lower) {
        return Some(Match::Fuzzy);
    }
    None
}

/// One letter swapped with its neighbour or mistyped, in a name long enough for that to be a
/// slip rather than another word (`prase_config`; not `tasks` for `task`). That is a
/// Damerau–Levenshtein distance of at most one between names of one length, found in one pass
/// (a distance table would cost the product of the lengths).
fn is_typo(query: &str, name: &str) -> bool {
    let q: Vec<char> = query.chars().collect();
    let n: Vec<char> = name.chars().collect();
    if q.len() < 6 || q.len() != n.len() {
        return false;
    }
    let Some(i) = q.iter().zip(&n).position(|(a, b)| a != b) else {
        return true;
    };
    let rest_equal = |from: usize| q.get(from..) == n.get(from..);
    // One letter mistyped, or two neighbours swapped.
    rest_equal(i + 1) || (q.get(i) == n.get(i + 1) && q.get(i + 1) == n.get(i) && rest_equal(i + 2))
}

/// A name without its word separators: `parse_config`, `parseConfig` and `parse-config` are
/// one name to someone who remembers it from another language.
fn squash(name: &str) -> String {
    name.chars().filter(|c| !matches!(c, '_' | '-')).collect()
}

fn is_subsequence(needle: &str, hay: &str) -> bool {
    let mut hay = hay.chars();
    needle.chars().all(|c| hay.any(|h| h == c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_are_classed() {
        let m = |c: &str, q: &str| match_name(c, q, &q.to_lowercase(), &squash(&q.to_lowercase()));
        assert_eq!(m("parse", "parse"), Some(Match::Exact));
        assert_eq!(m("Parse", "parse"), Some(Match::ExactIgnoringCase));
        assert_eq!(
            m("parseConfig", "parse_config"),
            Some(Match::ExactIgnoringCase)
        );
        assert_eq!(m("parse_config", "parse"), Some(Match::Prefix));
        assert_eq!(m("reparse", "parse"), Some(Match::Substring));
        assert_eq!(m("parse_config", "pcfg"), Some(Match::Fuzzy));
        assert_eq!(m("parse_config", "prase_config"), Some(Match::Fuzzy));
        assert_eq!(m("render", "parse"), None);
    }

    #[test]
    fn a_typo_is_one_slip_of_one_length() {
        assert!(is_typo("prase_config", "parse_config"));
        assert!(is_typo("parse_confih", "parse_config"));
        assert!(is_typo("parse_config", "parse_config"));
        assert!(!is_typo("prase_cnofig", "parse_config"));
        assert!(!is_typo("parse_confi", "parse_config"));
        assert!(!is_typo("tsak", "task"));
        // The one-pass test agrees with the distance table on every pair it is asked about.
        for (a, b) in [
            ("abcdef", "badcef"),
            ("abcdef", "abdcef"),
            ("abcdef", "abcdfe"),
            ("abcdef", "bacdfe"),
            ("aaaaab", "aaaaba"),
        ] {
            assert_eq!(
                is_typo(a, b),
                strsim::damerau_levenshtein(a, b) <= 1,
                "{a} {b}"
            );
        }
    }

    #[test]
    fn qualified_names_split() {
        assert_eq!(split_qualified("Config::new"), (Some("Config"), "new"));
        assert_eq!(split_qualified("a::Config::new"), (Some("Config"), "new"));
        assert_eq!(split_qualified("Config.load"), (Some("Config"), "load"));
        assert_eq!(split_qualified("load"), (None, "load"));
        assert_eq!(split_qualified(".load"), (None, ".load"));
    }
}
