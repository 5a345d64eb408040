//! "Did you mean": when a path does not exist, name up to three existing paths that look like
//! it, so the model's retry is a copy rather than another guess.

use crate::path::{Jail, RelPath};
use crate::walk::{relative, Walk};

/// How many entries a suggestion walk looks at before giving up; suggestions must stay cheap.
const WALK_LIMIT: usize = 20_000;

/// Which kind of entry to suggest.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Want {
    File,
    Dir,
}

/// Up to three existing paths similar to `missing`, best first.
pub fn similar_paths(jail: &Jail, missing: &RelPath, want: Want) -> Vec<String> {
    let Ok(walk) = Walk::new(jail, &RelPath::root(), missing.has_hidden_component()) else {
        return Vec::new();
    };
    let target = missing.as_str().to_lowercase();
    let target_name = missing.file_name().to_lowercase();
    let mut scored: Vec<(f64, String)> = Vec::new();
    for entry in walk.sorted().flatten().take(WALK_LIMIT) {
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        if (want == Want::Dir) != is_dir {
            continue;
        }
        let Some(rel) = relative(jail, entry.path()) else {
            continue;
        };
        if rel.is_root() {
            continue;
        }
        let s = score(&target, &target_name, &rel);
        if s >= 0.55 {
            scored.push((s, rel.to_string()));
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.into_iter().take(3).map(|(_, p)| p).collect()
}

fn score(target: &str, target_name: &str, candidate: &RelPath) -> f64 {
    let full = strsim::normalized_damerau_levenshtein(target, &candidate.as_str().to_lowercase());
    let cand_name = candidate.file_name().to_lowercase();
    let name = strsim::normalized_damerau_levenshtein(target_name, &cand_name);
    // The same file name elsewhere is the most common slip (a file in another directory).
    let same_name = if target_name == cand_name { 0.3 } else { 0.0 };
    (0.5 * full + 0.5 * name + same_name).min(1.0)
}

/// The sentence a not-found message ends with, or nothing when there is no good guess.
pub fn did_you_mean(paths: &[String]) -> String {
    if paths.is_empty() {
        String::new()
    } else {
        format!(
            " Similar existing paths: {}.",
            paths
                .iter()
                .map(|p| format!("\"{p}\""))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}
