//! The repo map: the definitions most related to a task, in a few hundred tokens, so a small
//! model starts where the change belongs instead of grepping its way there.
//!
//! Ranking follows aider's repo map. Files are nodes; a file that names an identifier points
//! at every file defining it, weighted by `sqrt(uses)` and by what the name is: ×10 when the
//! task (or the project instructions) names it, ×10 for a long compound name
//! (`parse_header`, `RegexBuilder`: specific), ×0.1 for a private `_name` or one defined in
//! more than five files (`new`, `run`: says little). Personalized PageRank over that graph,
//! restarting at the files the task names, ranks the files; a definition's score is the rank
//! that flows into it through its name, plus a share of its file's own rank; a definition the
//! task names by name ranks above all others, unless the name is common (more than five
//! files define it), and the walk restarts at the files defining such names too. The best definitions are rendered as an outline, as many as the
//! budget holds.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::find::parent;
use super::index::Entry;
use super::SymbolIndex;
use crate::path::Jail;

/// PageRank's damping: the chance of following a reference rather than restarting.
const DAMPING: f64 = 0.85;
const ITERATIONS: usize = 30;
/// Never more definitions than this, whatever the budget (a map is a pointer, not a copy).
const MAX_DEFINITIONS: usize = 400;

/// A name the task mentions leads the map (and the ranking restarts at its files) when at
/// most this many files define it…
const SPECIFIC_NAME_FILES: usize = 5;
/// …or, for a long compound name, this many.
const SPECIFIC_COMPOUND_FILES: usize = 25;

/// The first line of every map.
pub const HEADER: &str = "Repo map (definitions related to the task, ranked; see one with ws_read offset/limit, find others with ws_symbols):";

/// A rendered map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepoMap {
    /// What the model reads, header first.
    pub text: String,
    /// Files with a definition in the map.
    pub files: usize,
    /// Definitions chosen (enclosing ones shown for context are not counted).
    pub definitions: usize,
}

/// The map for a task. `context` is the text the task is read in (the task itself, then the
/// project instructions); `fits` says whether a rendering is within the budget. `None` when
/// the project has no indexed definitions or not even one fits.
pub fn build(
    index: &SymbolIndex,
    jail: &Jail,
    context: &[&str],
    fits: &dyn Fn(&str) -> bool,
) -> Option<RepoMap> {
    build_within(index, jail, context, fits, &[])
}

/// [`build`], restricted to the files `within` names and their neighbours — the files that
/// define what they reference and the files that reference what they define (a plan step's
/// map). Empty `within`: the whole project.
pub fn build_within(
    index: &SymbolIndex,
    jail: &Jail,
    context: &[&str],
    fits: &dyn Fn(&str) -> bool,
    within: &[String],
) -> Option<RepoMap> {
    let mut ranked = rank(index, context, within);
    if ranked.is_empty() {
        return None;
    }
    ranked.truncate(MAX_DEFINITIONS);
    let sigs = signatures_of(index, jail, &ranked);
    let render = |chosen: &[DefRef]| render(index, &sigs, chosen);
    // The largest prefix of the ranking that fits: renderings grow with the prefix.
    let (mut lo, mut hi) = (0usize, ranked.len().min(MAX_DEFINITIONS));
    let mut best = None;
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let map = render(&ranked[..mid]);
        if fits(&map.text) {
            lo = mid;
            best = Some(map);
        } else {
            hi = mid - 1;
        }
    }
    if best.as_ref().map(|m| m.definitions) != Some(lo) && lo > 0 {
        best = Some(render(&ranked[..lo]));
    }
    best
}

/// A definition, by file and position in the file's list.
type DefRef<'a> = (&'a str, usize);

/// Every definition with a positive score, best first.
fn rank<'a>(index: &'a SymbolIndex, context: &[&str], within: &[String]) -> Vec<DefRef<'a>> {
    let files: Vec<(&str, &Entry)> = index.files().collect();
    if files.is_empty() {
        return Vec::new();
    }
    let words = words_of(context);
    let graph = Graph::of(index, &files, &words);
    let allowed = (!within.is_empty()).then(|| graph.neighbourhood(&files, within));
    let mentioned = specific_mentions(&files, &words);
    let restart = match &allowed {
        // Restricted: the walk restarts within the neighbourhood, evenly, so every file of
        // it ranks (one that only calls into the step's files too).
        Some(set) => {
            let share = 1.0 / set.len().max(1) as f64;
            (0..files.len())
                .map(|f| if set.contains(&f) { share } else { 0.0 })
                .collect()
        }
        None => restart_at(&files, &mentioned, &words),
    };
    let (rank, inflow) = graph.pagerank(&restart);

    let mut scored: Vec<(f64, DefRef)> = Vec::new();
    for (f, (path, entry)) in files.iter().enumerate() {
        if allowed.as_ref().is_some_and(|a| !a.contains(&f)) {
            continue;
        }
        let code = entry
            .definitions
            .iter()
            .filter(|d| d.kind.is_code())
            .count();
        let share = rank[f] / code.max(1) as f64;
        for (i, def) in entry.definitions.iter().enumerate() {
            if !def.kind.is_code() {
                continue;
            }
            let flow = index
                .id_of(&def.name)
                .and_then(|id| inflow.get(&id))
                .copied()
                .unwrap_or(0.0);
            let score = flow + share;
            if score > 0.0 {
                scored.push((score, (path, i)));
            }
        }
    }
    // What the task names by name comes first, however little the project uses it — when
    // the name is specific: a word the task uses in passing ("limit", defined in hundreds of
    // files) must not crowd out the one it is about.
    let top = scored.iter().map(|s| s.0).fold(0.0, f64::max);
    for (score, (path, i)) in &mut scored {
        let name = index
            .file(path)
            .and_then(|e| e.definitions.get(*i))
            .map(|d| d.name.as_str())
            .filter(|n| mentioned.contains_key(n));
        // A long compound name (`spawn_blocking`) says more than a short word (`tokio`), and
        // a definition in a file or directory the task names more than one elsewhere.
        if let Some(name) = name {
            let mut lead = if is_long_compound(name) { 4.0 } else { 2.0 };
            if mentions_file(path, &words) {
                lead += 1.0;
            }
            *score += lead * top;
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, d)| d).collect()
}

/// The definition → reference graph over files, kept by name: an edge from a file along a
/// name reaches every file defining that name, so the edges are stored once per (file, name)
/// rather than once per definer.
struct Graph {
    /// The files defining each referenced name.
    definers: HashMap<u32, Vec<usize>>,
    /// (from, name, weight).
    edges: Vec<(usize, u32, f64)>,
    /// The total weight leaving each file.
    out_weight: Vec<f64>,
}

impl Graph {
    fn of(index: &SymbolIndex, files: &[(&str, &Entry)], words: &HashSet<&str>) -> Graph {
        let mut definers: HashMap<u32, Vec<usize>> = HashMap::new();
        for (f, (_, entry)) in files.iter().enumerate() {
            for def in entry.definitions.iter().filter(|d| d.kind.is_code()) {
                if let Some(id) = index.id_of(&def.name) {
                    let list = definers.entry(id).or_default();
                    if list.last() != Some(&f) {
                        list.push(f);
                    }
                }
            }
        }
        let mut edges = Vec::new();
        let mut out_weight = vec![0.0f64; files.len()];
        for (f, (_, entry)) in files.iter().enumerate() {
            for &(id, count) in &entry.references {
                let Some(defs) = definers.get(&id) else {
                    continue;
                };
                let w = name_weight(index.name(id), defs.len(), words) * f64::from(count).sqrt();
                out_weight[f] += w * defs.len() as f64;
                edges.push((f, id, w));
            }
        }
        Graph {
            definers,
            edges,
            out_weight,
        }
    }

    /// The files named in `within` (by path), the files defining what they reference, and
    /// the files referencing what they define.
    fn neighbourhood(&self, files: &[(&str, &Entry)], within: &[String]) -> HashSet<usize> {
        let mut set: HashSet<usize> = files
            .iter()
            .enumerate()
            .filter(|(_, (path, _))| within.iter().any(|w| w == path))
            .map(|(f, _)| f)
            .collect();
        let core = set.clone();
        for &(from, id, _) in &self.edges {
            let defined = self.definers.get(&id).into_iter().flatten();
            if core.contains(&from) {
                set.extend(defined);
            } else if self
                .definers
                .get(&id)
                .is_some_and(|d| d.iter().any(|f| core.contains(f)))
            {
                set.insert(from);
            }
        }
        set
    }

    /// Personalized PageRank restarting at `restart`: each file's rank, and the rank that
    /// flowed along each name in the last step (what a definition of it receives).
    fn pagerank(&self, restart: &[f64]) -> (Vec<f64>, HashMap<u32, f64>) {
        let n = restart.len();
        let mut rank = restart.to_vec();
        let mut inflow: HashMap<u32, f64> = HashMap::new();
        for _ in 0..ITERATIONS {
            inflow.clear();
            for &(from, id, w) in &self.edges {
                *inflow.entry(id).or_default() += rank[from] * w / self.out_weight[from];
            }
            let dangling: f64 = (0..n)
                .filter(|&f| self.out_weight[f] == 0.0)
                .map(|f| rank[f])
                .sum();
            let mut next: Vec<f64> = restart
                .iter()
                .map(|r| (1.0 - DAMPING) * r + DAMPING * dangling * r)
                .collect();
            for (id, flow) in &inflow {
                for &d in self.definers.get(id).into_iter().flatten() {
                    next[d] += DAMPING * flow;
                }
            }
            rank = next;
        }
        (rank, inflow)
    }
}

/// The names the task mentions that few files define — what the task is about — with the
/// files defining each.
fn specific_mentions<'a>(
    files: &[(&'a str, &'a Entry)],
    words: &HashSet<&str>,
) -> HashMap<&'a str, HashSet<usize>> {
    let mut mentioned: HashMap<&str, HashSet<usize>> = HashMap::new();
    for (f, (_, entry)) in files.iter().enumerate() {
        for def in entry.definitions.iter().filter(|d| d.kind.is_code()) {
            if words.contains(def.name.as_str()) {
                mentioned.entry(def.name.as_str()).or_default().insert(f);
            }
        }
    }
    mentioned.retain(|name, files| {
        files.len() <= SPECIFIC_NAME_FILES
            || (is_long_compound(name) && files.len() <= SPECIFIC_COMPOUND_FILES)
    });
    mentioned
}

/// Where the walk restarts: at the files the task names and those defining the specific
/// names it mentions, evenly; at every file when there are none.
fn restart_at(
    files: &[(&str, &Entry)],
    mentioned: &HashMap<&str, HashSet<usize>>,
    words: &HashSet<&str>,
) -> Vec<f64> {
    let mut restart: Vec<f64> = files
        .iter()
        .enumerate()
        .map(|(f, (path, _))| {
            let defines = mentioned.values().any(|files| files.contains(&f));
            if defines || mentions_file(path, words) {
                1.0
            } else {
                0.0
            }
        })
        .collect();
    let total: f64 = restart.iter().sum();
    let n = restart.len() as f64;
    if total == 0.0 {
        restart.iter_mut().for_each(|r| *r = 1.0 / n);
    } else {
        restart.iter_mut().for_each(|r| *r /= total);
    }
    restart
}

/// How much a name says about where a reference leads.
fn name_weight(name: &str, definers: usize, words: &HashSet<&str>) -> f64 {
    let mut w = 1.0;
    if words.contains(name) {
        w *= 10.0;
    }
    if is_long_compound(name) {
        w *= 10.0;
    }
    if name.starts_with('_') {
        w *= 0.1;
    }
    if definers > 5 {
        w *= 0.1;
    }
    w
}

/// A name of several words and some length (`parse_header`, `RegexBuilder`): specific.
fn is_long_compound(name: &str) -> bool {
    let compound = name.trim_start_matches('_').contains('_')
        || (name.chars().any(char::is_uppercase) && name.chars().any(char::is_lowercase));
    compound && name.chars().count() >= 8
}

/// The identifiers and path-like words of the task and instructions.
fn words_of<'a>(context: &[&'a str]) -> HashSet<&'a str> {
    let mut words = HashSet::new();
    for text in context {
        for word in
            text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '/' | '.' | '-')))
        {
            let word = word.trim_matches(|c: char| matches!(c, '.' | '/' | '-'));
            if word.chars().count() < 3 {
                continue;
            }
            words.insert(word);
            // `Config.load`, `src/config.rs`: the parts are names too.
            for part in word.split(['.', '/', '-']) {
                if part.chars().count() >= 3 {
                    words.insert(part);
                }
            }
        }
    }
    words
}

/// Whether the task names a file: its path, its file name, its stem as a name, or a
/// directory it is in (other than the ones every project has).
fn mentions_file(path: &str, words: &HashSet<&str>) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.split('.').next().unwrap_or(name);
    // A directory the task names (`billing/`, or a vendored `serde_json-1.0.145/`).
    let in_named_dir = path.split('/').rev().skip(1).any(|dir| {
        let unversioned = dir
            .rsplit_once('-')
            .filter(|(_, v)| v.starts_with(|c: char| c.is_ascii_digit()))
            .map_or(dir, |(d, _)| d);
        unversioned.chars().count() >= 4
            && !matches!(
                unversioned,
                "tests"
                    | "test"
                    | "crates"
                    | "packages"
                    | "internal"
                    | "source"
                    | "vendor"
                    | "include"
                    | "scripts"
                    | "build"
                    | "docs"
            )
            && words.contains(unversioned)
    });
    in_named_dir
        || words.contains(path)
        || words.contains(name)
        || (stem.chars().count() >= 4
            && !matches!(
                stem,
                "main" | "index" | "init" | "test" | "tests" | "util" | "utils"
            )
            && words.contains(stem))
}

/// The lines a rendering may show: the candidates and the definitions enclosing them, read
/// once per file.
fn signatures_of<'a>(
    index: &'a SymbolIndex,
    jail: &Jail,
    ranked: &[DefRef<'a>],
) -> HashMap<(&'a str, u32), String> {
    let mut lines: HashMap<&str, BTreeSet<u32>> = HashMap::new();
    for &(path, i) in ranked {
        let Some(defs) = index.file(path).map(|e| &e.definitions) else {
            continue;
        };
        let mut at = Some(i);
        while let Some(d) = at.and_then(|a| defs.get(a)) {
            lines.entry(path).or_default().insert(d.start);
            at = at.and_then(|a| parent(defs, a));
        }
    }
    let mut out = HashMap::new();
    for (path, at) in lines {
        for (line, sig) in super::signatures(jail, path, &at) {
            out.insert((path, line), sig);
        }
    }
    out
}

/// The chosen definitions as an outline: files in the order of their best definition, each
/// with its definitions in line order, under the definitions that enclose them.
fn render(index: &SymbolIndex, sigs: &HashMap<(&str, u32), String>, chosen: &[DefRef]) -> RepoMap {
    let mut order: Vec<&str> = Vec::new();
    let mut picked: HashMap<&str, Vec<usize>> = HashMap::new();
    for &(path, i) in chosen {
        let list = picked.entry(path).or_insert_with(|| {
            order.push(path);
            Vec::new()
        });
        list.push(i);
    }
    let mut text = String::from(HEADER);
    for path in &order {
        let Some(entry) = index.file(path) else {
            continue;
        };
        let defs = &entry.definitions;
        let mut shown: Vec<usize> = Vec::new();
        for &i in picked.get(path).into_iter().flatten() {
            shown.push(i);
            let mut at = i;
            while let Some(p) = parent(defs, at) {
                shown.push(p);
                at = p;
            }
        }
        shown.sort_unstable();
        shown.dedup();
        text.push_str(&format!("\n{path}:"));
        for i in shown {
            if let Some(d) = defs.get(i) {
                text.push_str(&format!(
                    "\n{:>6}|{}{}",
                    d.start,
                    "  ".repeat(usize::from(d.depth)),
                    sigs.get(&(*path, d.start))
                        .map_or(d.name.as_str(), String::as_str)
                ));
            }
        }
    }
    RepoMap {
        text,
        files: order.len(),
        definitions: chosen.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_favour_named_and_specific_names() {
        let words: HashSet<&str> = ["parse_header"].into_iter().collect();
        assert!(name_weight("parse_header", 1, &words) > name_weight("parse_body", 1, &words));
        assert!(name_weight("parse_body", 1, &words) > name_weight("new", 1, &words));
        assert!(name_weight("new", 1, &words) > name_weight("new", 9, &words));
        assert!(name_weight("helper", 1, &words) > name_weight("_helper", 1, &words));
    }

    #[test]
    fn words_and_file_mentions() {
        let words = words_of(&["Fix `Config.load` in src/config.rs, then run tests."]);
        assert!(words.contains("Config") && words.contains("load"));
        assert!(mentions_file("src/config.rs", &words));
        assert!(mentions_file("lib/config.py", &words));
        assert!(!mentions_file("src/main.rs", &words));
        // A named directory, also a vendored one with its version; not `tests/`.
        let words = words_of(&["serde_json's parser, the billing module, and the tests"]);
        assert!(mentions_file("vendor/serde_json-1.0.145/src/de.rs", &words));
        assert!(mentions_file("billing/invoice.py", &words));
        assert!(!mentions_file("tests/basic.rs", &words));
    }

    #[test]
    fn long_compound_names_are_specific() {
        assert!(is_long_compound("spawn_blocking") && is_long_compound("RegexBuilder"));
        assert!(!is_long_compound("tokio") && !is_long_compound("Config"));
        assert!(!is_long_compound("__private") && !is_long_compound("a_b"));
    }
}
