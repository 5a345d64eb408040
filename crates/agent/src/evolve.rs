//! The evolve bandit: learns, per (model family, language), which edit format a model does
//! best with.
//!
//! Small models differ a lot in which edit format they can produce reliably: one lands
//! search/replace blocks but mangles diffs, another writes clean unified diffs. Instead of
//! hard-coding a table, the harness offers one format per run (an *arm*), reads what the edit
//! tools reported as data ([`EditOutcome::of`]), turns that into a reward in [0, 1] ([`reward`]) and updates a
//! Beta posterior per arm ([`Evolve::record`]). The next run picks an arm by Thompson sampling
//! with a decaying exploration rate ([`Evolve::choose`]).
//!
//! The state is a small JSON file (see [`Evolve::default_path`]), written atomically and
//! bounded in size. A corrupt file is reported as an error, never a crash.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rand::RngExt as _;
use rand_distr::{Beta, Distribution as _};
use serde::{Deserialize, Serialize};
use slmcode_aci::matching::Rung;
use slmcode_aci::outcome::Drift;
use slmcode_aci::{Outcome, RefusalClass};

// ---------------------------------------------------------------------------------------------
// Arms
// ---------------------------------------------------------------------------------------------

/// An edit format the harness can offer a model; the bandit learns which one to offer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Arm {
    /// The model is offered `ws_edit` (old_str → new_str).
    SearchReplace,
    /// The model is offered `ws_patch` (unified diff hunks).
    UnifiedDiff,
    /// The model is offered `ws_write` overwrite, after reading the file first.
    WholeFile,
}

impl Arm {
    /// Every arm, in the fixed order used to break ties.
    pub const ALL: [Arm; 3] = [Arm::SearchReplace, Arm::UnifiedDiff, Arm::WholeFile];

    /// The stable name used in the state file, the CLI and reports.
    pub fn name(self) -> &'static str {
        match self {
            Arm::SearchReplace => "search_replace",
            Arm::UnifiedDiff => "unified_diff",
            Arm::WholeFile => "whole_file",
        }
    }

    /// The edit tool this arm offers the model, so the harness can filter its tool list.
    pub fn tool(self) -> &'static str {
        match self {
            Arm::SearchReplace => "ws_edit",
            Arm::UnifiedDiff => "ws_patch",
            Arm::WholeFile => "ws_write",
        }
    }

    /// Parses a name from the CLI or a config file; accepts `-` for `_`, any case, and the
    /// tool names (`ws_edit`, `ws_patch`, `ws_write`), so users need not remember the spelling.
    pub fn parse(s: &str) -> Option<Arm> {
        let s = s.trim().to_ascii_lowercase().replace('-', "_");
        Arm::ALL
            .into_iter()
            .find(|arm| arm.name() == s || arm.tool() == s)
    }

    /// The prior Beta(alpha, beta) of a key that has never been seen. It favours
    /// search_replace, the format small models handle best in general.
    fn prior(self) -> (f64, f64) {
        match self {
            Arm::SearchReplace => (8.0, 2.0),
            Arm::UnifiedDiff => (3.0, 5.0),
            Arm::WholeFile => (4.0, 4.0),
        }
    }
}

impl fmt::Display for Arm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

// ---------------------------------------------------------------------------------------------
// Model family
// ---------------------------------------------------------------------------------------------

/// Tokens that describe a build of a model rather than the model itself.
const FAMILY_NOISE_WORDS: &[&str] = &[
    "instruct",
    "chat",
    "it",
    "gguf",
    "ggml",
    "base",
    "hf",
    "awq",
    "gptq",
    "exl2",
    "mlx",
    "fp16",
    "fp8",
    "fp32",
    "bf16",
    "f16",
    "f32",
    "int4",
    "int8",
    "4bit",
    "8bit",
    "latest",
    "quantized",
    "imatrix",
];

/// Names that keep the dash before a bare version number (`gpt-4`). After any other
/// all-letter word the number is glued on (`llama-3.1` → `llama3.1`), so Hugging Face names
/// meet Ollama's.
const NO_VERSION_JOIN: &[&str] = &["gpt", "claude", "gemini", "o"];

/// File extensions that model paths may end with.
const MODEL_FILE_EXTENSIONS: &[&str] = &[".gguf", ".ggml", ".bin", ".safetensors", ".onnx"];

/// Reduces a model id to its family, so that evidence learned on one size, quantization or
/// provider's build of a model applies to the others.
///
/// `qwen2.5-coder:7b` → `qwen2.5-coder`;
/// `hf.co/bartowski/Qwen2.5-Coder-7B-Instruct-GGUF:Q4_K_M` → `qwen2.5-coder`;
/// `Qwen/Qwen3-Coder-30B-A3B-Instruct` → `qwen3-coder`; `llama3.1:8b-instruct-q4_K_M` →
/// `llama3.1`; `deepseek-coder-v2:16b` → `deepseek-coder-v2`; `gpt-4o-mini` → `gpt-4o-mini`.
///
/// Lowercases; drops everything up to the last `/` (registry, org), the `:tag`, a model file
/// extension, and then keeps the `-`-separated words before the first one that describes the
/// build: a size (`7b`, `1.5b`, `8x7b`, `a3b`, `128k`), `instruct`, `chat`, `it`, `gguf`, a
/// quantization (`q4_k_m`, `iq4_xs`, `fp16`, `awq`, `gptq`…) or a date (`2024…`). A bare
/// version number is glued to an all-letter word before it, except `gpt`, `claude`, `gemini`
/// (`Meta-Llama-3.1-8B` → `llama3.1`, `gemma-2-9b-it` → `gemma2`), and a leading `meta-` is
/// dropped. Never empty: falls back to the lowercased input, or `unknown`.
pub fn model_family(model_id: &str) -> String {
    let lower = model_id.trim().to_lowercase();
    let fallback = || {
        if lower.is_empty() {
            "unknown".to_string()
        } else {
            lower.clone()
        }
    };
    let base = lower.rsplit(['/', '\\']).next().unwrap_or_default();
    let base = base.split(':').next().unwrap_or_default();
    let mut base = base;
    for ext in MODEL_FILE_EXTENSIONS {
        if let Some(stripped) = base.strip_suffix(ext) {
            base = stripped;
        }
    }
    // `name.Q4_K_M` (a file name): cut at the first dot-separated piece that is a build tag.
    let mut cut = base.len();
    for (at, _) in base.match_indices('.') {
        let rest = base.get(at + 1..).unwrap_or_default();
        let piece = rest.split('.').next().unwrap_or_default();
        if is_quant(piece) || FAMILY_NOISE_WORDS.contains(&piece) {
            cut = at;
            break;
        }
    }
    let base = base.get(..cut).unwrap_or(base);

    let mut kept: Vec<String> = Vec::new();
    for token in base.split('-').filter(|t| !t.is_empty()) {
        if is_build_token(token) {
            break;
        }
        let joins = is_version(token)
            && kept.last().is_some_and(|prev| {
                prev.chars().all(|c| c.is_ascii_alphabetic())
                    && !NO_VERSION_JOIN.contains(&prev.as_str())
            });
        match kept.last_mut() {
            Some(prev) if joins => prev.push_str(token),
            _ => kept.push(token.to_string()),
        }
    }
    if kept.len() > 1 && kept.first().is_some_and(|t| t == "meta") {
        kept.remove(0);
    }
    if kept.is_empty() {
        fallback()
    } else {
        kept.join("-")
    }
}

/// True for a word that describes a build (size, tuning, format, quantization, date).
fn is_build_token(token: &str) -> bool {
    FAMILY_NOISE_WORDS.contains(&token)
        || is_size(token)
        || is_quant(token)
        || (token.len() >= 4 && token.chars().all(|c| c.is_ascii_digit()))
}

/// `7b`, `1.5b`, `135m`, `128k`, `8x7b`, and the active-parameter forms `a3b`, `e4b`.
fn is_size(token: &str) -> bool {
    let t = token
        .strip_prefix('a')
        .or_else(|| token.strip_prefix('e'))
        .unwrap_or(token);
    let Some(num) = t.strip_suffix(['b', 'm', 'k']) else {
        return false;
    };
    num.starts_with(|c: char| c.is_ascii_digit())
        && num.ends_with(|c: char| c.is_ascii_digit())
        && num
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == 'x')
}

/// `q4_k_m`, `q8_0`, `q4`, `iq4_xs`.
fn is_quant(token: &str) -> bool {
    let rest = token.strip_prefix("iq").or_else(|| token.strip_prefix('q'));
    rest.is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
}

/// `3`, `3.1`, `2.5`: a bare version number.
fn is_version(token: &str) -> bool {
    token.starts_with(|c: char| c.is_ascii_digit())
        && token.chars().all(|c| c.is_ascii_digit() || c == '.')
}

// ---------------------------------------------------------------------------------------------
// Language
// ---------------------------------------------------------------------------------------------

// The language of a file and of a run: the keys of slmcode-aci's one language table, stored
// in the state file.
pub use slmcode_aci::lang::{dominant as dominant_language, key_of as language_of};

// ---------------------------------------------------------------------------------------------
// Outcomes
// ---------------------------------------------------------------------------------------------

/// The drifts the profile counts, in the order it lists them (ties keep this order).
const DRIFTS: [Drift; 7] = [
    Drift::Rung(Rung::TrailingWhitespace),
    Drift::Rung(Rung::Indentation),
    Drift::Rung(Rung::BlankLines),
    Drift::Rung(Rung::Anchored),
    Drift::Rung(Rung::Unicode),
    Drift::Rung(Rung::Escapes),
    Drift::Gutter,
];

/// The words the drift profile uses for a drift.
fn drift_label(drift: Drift) -> &'static str {
    match drift {
        Drift::Gutter => "line-number gutter",
        Drift::Rung(Rung::TrailingWhitespace) => "trailing whitespace",
        Drift::Rung(Rung::Indentation) => "indentation",
        Drift::Rung(Rung::BlankLines) => "blank lines",
        Drift::Rung(Rung::Anchored) => "anchored",
        Drift::Rung(Rung::Unicode) => "unicode punctuation",
        Drift::Rung(Rung::Escapes) => "escapes",
        Drift::Rung(Rung::Exact) => "exact",
    }
}

/// What the edit tools saw on one edit attempt during a run; the raw material of the reward
/// and of the drift profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EditOutcome {
    /// Landed on the exact rung (or a patch whose hunks all applied exactly, or a write).
    Exact,
    /// Landed, but the text had drifted (the worst drift of a patch's hunks).
    Fuzzy(Drift),
    /// Refused: not found, ambiguous, read-before-edit, bad arguments, and so on.
    Refused,
    /// Landed but was reverted by the syntax check.
    Reverted,
}

impl EditOutcome {
    /// The edit outcome of a call, read from the tool's typed outcome; `None` for tools that
    /// are not edit tools (ws_edit, ws_patch, ws_write; a namespaced name such as
    /// `mcp__slmcode__ws_edit` counts), and for a success with nothing to learn from.
    pub fn of(tool: &str, outcome: &Outcome) -> Option<EditOutcome> {
        let tool = tool.trim();
        if !["ws_edit", "ws_patch", "ws_write"]
            .iter()
            .any(|t| tool.ends_with(t))
        {
            return None;
        }
        match outcome {
            Outcome::Edited(edit) => {
                Some(edit.drift().map_or(EditOutcome::Exact, EditOutcome::Fuzzy))
            }
            Outcome::Written(_) => Some(EditOutcome::Exact),
            Outcome::Refused(RefusalClass::Reverted) => Some(EditOutcome::Reverted),
            Outcome::Refused(_) => Some(EditOutcome::Refused),
            Outcome::Done => None,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Reward
// ---------------------------------------------------------------------------------------------

/// Turns one run's edit attempts with the chosen arm into a reward in [0, 1]; `None` when
/// there were no attempts (nothing was learned about the arm).
///
/// With `n` attempts, `landed` of them landed, `reverted` of them reverted:
///
/// ```text
/// score(Exact) = 1.0   score(Fuzzy(Anchored)) = 0.5   score(Fuzzy(other)) = 0.7
/// score(Refused) = score(Reverted) = 0
/// base   = Σ score / (n + reverted)            a revert counts as two failures
/// retry  = 1 / (1 + 0.25 · max(0, n − landed − 1))   the first failure costs only its score
/// reward = base · retry
/// ```
///
/// Every factor lies in [0, 1], so the reward does too: all exact is 1.0, fuzzy landings
/// cost a little, refusals cost more, reverts (a broken file the model must then repair) most.
pub fn reward(outcomes: &[EditOutcome]) -> Option<f64> {
    if outcomes.is_empty() {
        return None;
    }
    let mut score = 0.0;
    let mut landed = 0usize;
    let mut reverted = 0usize;
    for outcome in outcomes {
        match outcome {
            EditOutcome::Exact => {
                score += 1.0;
                landed += 1;
            }
            EditOutcome::Fuzzy(Drift::Rung(Rung::Anchored)) => {
                score += 0.5;
                landed += 1;
            }
            EditOutcome::Fuzzy(_) => {
                score += 0.7;
                landed += 1;
            }
            EditOutcome::Refused => {}
            EditOutcome::Reverted => reverted += 1,
        }
    }
    let n = outcomes.len();
    let base = score / (n + reverted) as f64;
    let extra_failures = n.saturating_sub(landed).saturating_sub(1);
    let retry = 1.0 / (1.0 + 0.25 * extra_failures as f64);
    Some((base * retry).clamp(0.0, 1.0))
}

// ---------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------

/// Evidence is multiplied by this on every record of a key. Half-life: ln 0.5 / ln 0.98 ≈ 34
/// runs of that key; in steady state an arm holds at most 1 / (1 − 0.98) = 50 runs' worth.
const DECAY: f64 = 0.98;
/// Keys not used for this long are dropped on save.
const STALE_SECS: u64 = 180 * 24 * 60 * 60;
/// At most this many keys are kept; the least recently used go first.
const MAX_KEYS: usize = 200;
/// Exploration rate floor and scale: ε(n) = max(FLOOR, SCALE / √(1 + n/3)).
const EXPLORE_FLOOR: f64 = 0.05;
const EXPLORE_SCALE: f64 = 0.5;
/// Evidence above this in a loaded file is taken as corruption (decay keeps it under 50).
const MAX_EVIDENCE: f64 = 1.0e6;
/// The state file's format version.
const FORMAT_VERSION: u32 = 1;

/// The evidence on one arm of one key: alpha = prior_alpha + successes, beta = prior_beta +
/// failures. Kept apart from the prior so decay touches evidence only and priors can change.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
struct ArmState {
    successes: f64,
    failures: f64,
    pulls: u64,
}

/// The three arms of one key.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
struct Arms {
    search_replace: ArmState,
    unified_diff: ArmState,
    whole_file: ArmState,
}

impl Arms {
    fn get(&self, arm: Arm) -> &ArmState {
        match arm {
            Arm::SearchReplace => &self.search_replace,
            Arm::UnifiedDiff => &self.unified_diff,
            Arm::WholeFile => &self.whole_file,
        }
    }

    fn get_mut(&mut self, arm: Arm) -> &mut ArmState {
        match arm {
            Arm::SearchReplace => &mut self.search_replace,
            Arm::UnifiedDiff => &mut self.unified_diff,
            Arm::WholeFile => &mut self.whole_file,
        }
    }
}

/// Counts per fuzzy rung.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
struct RungCounts {
    trailing_whitespace: u64,
    indentation: u64,
    blank_lines: u64,
    anchored: u64,
    unicode: u64,
    escapes: u64,
    gutter: u64,
}

impl RungCounts {
    fn get(&self, drift: Drift) -> u64 {
        match drift {
            Drift::Rung(Rung::TrailingWhitespace) => self.trailing_whitespace,
            Drift::Rung(Rung::Indentation) => self.indentation,
            Drift::Rung(Rung::BlankLines) => self.blank_lines,
            Drift::Rung(Rung::Anchored) => self.anchored,
            Drift::Rung(Rung::Unicode) => self.unicode,
            Drift::Rung(Rung::Escapes) => self.escapes,
            Drift::Rung(Rung::Exact) => 0,
            Drift::Gutter => self.gutter,
        }
    }

    /// The counter of a drift; `None` for exact, which is not a drift.
    fn get_mut(&mut self, drift: Drift) -> Option<&mut u64> {
        match drift {
            Drift::Rung(Rung::TrailingWhitespace) => Some(&mut self.trailing_whitespace),
            Drift::Rung(Rung::Indentation) => Some(&mut self.indentation),
            Drift::Rung(Rung::BlankLines) => Some(&mut self.blank_lines),
            Drift::Rung(Rung::Anchored) => Some(&mut self.anchored),
            Drift::Rung(Rung::Unicode) => Some(&mut self.unicode),
            Drift::Rung(Rung::Escapes) => Some(&mut self.escapes),
            Drift::Rung(Rung::Exact) => None,
            Drift::Gutter => Some(&mut self.gutter),
        }
    }
}

/// How a key's edits drift, over all arms and all time (not decayed): plain counts that the
/// drift profile reports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
struct DriftProfile {
    edits: u64,
    exact: u64,
    refused: u64,
    reverted: u64,
    fuzzy: RungCounts,
}

/// Everything known about one (family, language) key.
#[derive(Clone, Debug, Default, PartialEq)]
struct KeyState {
    last_used: u64,
    arms: Arms,
    drift: DriftProfile,
}

impl KeyState {
    fn total_pulls(&self) -> u64 {
        Arm::ALL.iter().map(|a| self.arms.get(*a).pulls).sum()
    }

    /// The posterior Beta(alpha, beta) of an arm.
    fn posterior(&self, arm: Arm) -> (f64, f64) {
        let (pa, pb) = arm.prior();
        let s = self.arms.get(arm);
        (pa + s.successes, pb + s.failures)
    }

    fn mean(&self, arm: Arm) -> f64 {
        let (a, b) = self.posterior(arm);
        a / (a + b)
    }

    /// The arm with the highest posterior mean; ties go to the earlier arm.
    fn best_mean(&self) -> Arm {
        let mut best = Arm::SearchReplace;
        let mut best_mean = f64::NEG_INFINITY;
        for arm in Arm::ALL {
            let m = self.mean(arm);
            if m > best_mean {
                best = arm;
                best_mean = m;
            }
        }
        best
    }
}

/// One key as stored in the file.
#[derive(Serialize, Deserialize)]
struct KeyEntry {
    family: String,
    language: String,
    #[serde(default)]
    last_used: u64,
    #[serde(default)]
    arms: Arms,
    #[serde(default)]
    drift: DriftProfile,
}

/// The file's top level.
#[derive(Serialize, Deserialize)]
struct StateFile {
    version: u32,
    #[serde(default)]
    keys: Vec<KeyEntry>,
}

/// Why the evolve state could not be read, written or removed. Each message names the file,
/// so the user knows what to inspect or delete.
#[derive(Debug, thiserror::Error)]
pub enum EvolveError {
    /// The file exists but could not be read.
    #[error("cannot read the evolve state {}: {source}", .path.display())]
    Read {
        /// The state file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The file was read but is not a valid evolve state.
    #[error(
        "the evolve state {} is corrupt ({reason}); run `slmcode evolve reset` to start over",
        .path.display()
    )]
    Corrupt {
        /// The state file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The file (or its temporary sibling, or its directory) could not be written.
    #[error("cannot write the evolve state {}: {source}", .path.display())]
    Write {
        /// The state file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The file could not be removed.
    #[error("cannot remove the evolve state {}: {source}", .path.display())]
    Remove {
        /// The state file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

/// The arm chosen for a run, and why, so the harness can log and show it.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    /// The edit format to offer this run.
    pub arm: Arm,
    /// True when the arm was picked uniformly at random (exploration), not by the posterior.
    pub explored: bool,
    /// One line explaining the pick.
    pub reason: String,
}

/// The learned state: per (model family, language), a Beta posterior per arm and a drift
/// profile. `Default` is the fresh state, with every key at its priors.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evolve {
    keys: BTreeMap<(String, String), KeyState>,
}

/// The exploration rate after `n` runs of a key: ε(n) = max(0.05, 0.5 / √(1 + n/3)). It is
/// 0.5 for a new key, 0.25 after 9 runs, and reaches the 0.05 floor at 297 runs.
fn explore_rate(n: u64) -> f64 {
    let scaled = EXPLORE_SCALE / (1.0 + n as f64 / 3.0).sqrt();
    scaled.max(EXPLORE_FLOOR)
}

/// Trimmed, lowercased key parts; never empty.
fn key_of(family: &str, language: &str) -> (String, String) {
    let family = family.trim().to_lowercase();
    let language = language.trim().to_lowercase();
    (
        if family.is_empty() {
            "unknown".to_string()
        } else {
            family
        },
        if language.is_empty() {
            "other".to_string()
        } else {
            language
        },
    )
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl Evolve {
    /// Reads the state; a missing file is a fresh state (first run), anything unreadable or
    /// invalid is an error naming the file and `slmcode evolve reset`, never a panic.
    pub fn load(path: &Path) -> Result<Evolve, EvolveError> {
        let bytes = match fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Evolve::default()),
            Err(source) => {
                return Err(EvolveError::Read {
                    path: path.to_path_buf(),
                    source,
                })
            }
        };
        let corrupt = |reason: String| EvolveError::Corrupt {
            path: path.to_path_buf(),
            reason,
        };
        let file: StateFile =
            serde_json::from_slice(&bytes).map_err(|e| corrupt(format!("invalid JSON: {e}")))?;
        if file.version != FORMAT_VERSION {
            return Err(corrupt(format!(
                "format version {} is not the supported {FORMAT_VERSION}",
                file.version
            )));
        }
        let mut evolve = Evolve::default();
        for entry in file.keys {
            for arm in Arm::ALL {
                let s = entry.arms.get(arm);
                for (what, v) in [("successes", s.successes), ("failures", s.failures)] {
                    if !(v.is_finite() && (0.0..=MAX_EVIDENCE).contains(&v)) {
                        return Err(corrupt(format!(
                            "{} · {}: {} {what} is {v}, outside 0..={MAX_EVIDENCE}",
                            entry.family,
                            entry.language,
                            arm.name()
                        )));
                    }
                }
            }
            evolve.keys.insert(
                key_of(&entry.family, &entry.language),
                KeyState {
                    last_used: entry.last_used,
                    arms: entry.arms,
                    drift: entry.drift,
                },
            );
        }
        evolve.enforce_bound(None);
        Ok(evolve)
    }

    /// Writes the state atomically (a temporary file in the same directory, fsync, rename),
    /// so a crash never leaves a half-written file; creates parent directories; the file is
    /// private (0600) since it reveals which models the user runs. Keys unused for 180 days
    /// are left out.
    pub fn save(&self, path: &Path) -> Result<(), EvolveError> {
        self.save_at(path, unix_now())
    }

    fn save_at(&self, path: &Path, now: u64) -> Result<(), EvolveError> {
        let write_err = |source: io::Error| EvolveError::Write {
            path: path.to_path_buf(),
            source,
        };
        let mut pruned = self.clone();
        pruned.prune(now);
        let file = StateFile {
            version: FORMAT_VERSION,
            keys: pruned
                .keys
                .into_iter()
                .map(|((family, language), k)| KeyEntry {
                    family,
                    language,
                    last_used: k.last_used,
                    arms: k.arms,
                    drift: k.drift,
                })
                .collect(),
        };
        let mut json =
            serde_json::to_vec_pretty(&file).map_err(|e| write_err(io::Error::other(e)))?;
        json.push(b'\n');

        crate::user_config::save_private(path, &json).map_err(write_err)
    }

    /// Where the state lives by default: `$XDG_DATA_HOME/slmcode/evolve.json`, else
    /// `$HOME/.local/share/slmcode/evolve.json`; `None` when neither is set.
    pub fn default_path() -> Option<PathBuf> {
        default_path_from(std::env::var_os("XDG_DATA_HOME"), std::env::var_os("HOME"))
    }

    /// Picks the arm for the next run of this key.
    ///
    /// With `explore`, a run explores with probability ε(n) = max(0.05, 0.5 / √(1 + n/3))
    /// (n = runs recorded for the key) by taking a uniformly random arm; otherwise it samples
    /// each arm's Beta posterior and takes the highest draw (Thompson sampling). The floor
    /// keeps re-testing arms that may have become better. Without `explore` (the CLI's
    /// `--no-explore`) it takes the highest posterior mean, ties by [`Arm::ALL`] order, and
    /// draws nothing from `rng`.
    pub fn choose(
        &self,
        family: &str,
        language: &str,
        explore: bool,
        rng: &mut impl rand::Rng,
    ) -> Choice {
        let fresh = KeyState::default();
        let key = key_of(family, language);
        let state = self.keys.get(&key).unwrap_or(&fresh);
        if !explore {
            let arm = state.best_mean();
            return Choice {
                arm,
                explored: false,
                reason: format!(
                    "no-explore: highest posterior mean, {arm} {:.2}",
                    state.mean(arm)
                ),
            };
        }
        let n = state.total_pulls();
        let eps = explore_rate(n);
        if rng.random::<f64>() < eps {
            let arm = match rng.random_range(0..3u8) {
                0 => Arm::SearchReplace,
                1 => Arm::UnifiedDiff,
                _ => Arm::WholeFile,
            };
            return Choice {
                arm,
                explored: true,
                reason: format!(
                    "explored: uniformly random arm {arm} (ε = {eps:.2} after {})",
                    plural(n, "run", "runs")
                ),
            };
        }
        let mut draws: Vec<(Arm, f64)> = Vec::with_capacity(Arm::ALL.len());
        for arm in Arm::ALL {
            let (a, b) = state.posterior(arm);
            let draw = match Beta::new(a, b) {
                Ok(beta) => beta.sample(rng),
                Err(_) => state.mean(arm),
            };
            draws.push((arm, draw));
        }
        let mut best = (Arm::SearchReplace, f64::NEG_INFINITY);
        for (arm, draw) in &draws {
            if *draw > best.1 {
                best = (*arm, *draw);
            }
        }
        let detail = draws
            .iter()
            .map(|(arm, d)| format!("{arm} {d:.2}"))
            .collect::<Vec<_>>()
            .join(", ");
        Choice {
            arm: best.0,
            explored: false,
            reason: format!("thompson: highest posterior draw ({detail})"),
        }
    }

    /// Learns from one run: the reward of `outcomes` (see [`reward`]) updates the chosen
    /// arm's posterior fractionally (alpha += r, beta += 1 − r) after all of the key's evidence
    /// has been multiplied by 0.98 (half-life ≈ 34 runs), so a model that changes is
    /// re-learned. Also counts the drift profile and marks the key used at `now` (unix
    /// seconds). A run without edit attempts changes nothing.
    pub fn record(
        &mut self,
        family: &str,
        language: &str,
        arm: Arm,
        outcomes: &[EditOutcome],
        now: u64,
    ) {
        let Some(r) = reward(outcomes) else {
            return;
        };
        let key = key_of(family, language);
        let state = self.keys.entry(key.clone()).or_default();
        for a in Arm::ALL {
            let s = state.arms.get_mut(a);
            s.successes *= DECAY;
            s.failures *= DECAY;
        }
        let s = state.arms.get_mut(arm);
        s.successes += r;
        s.failures += 1.0 - r;
        s.pulls = s.pulls.saturating_add(1);
        state.last_used = now;
        let drift = &mut state.drift;
        for outcome in outcomes {
            drift.edits = drift.edits.saturating_add(1);
            let counter = match outcome {
                EditOutcome::Exact => &mut drift.exact,
                EditOutcome::Fuzzy(d) => match drift.fuzzy.get_mut(*d) {
                    Some(count) => count,
                    None => &mut drift.exact,
                },
                EditOutcome::Refused => &mut drift.refused,
                EditOutcome::Reverted => &mut drift.reverted,
            };
            *counter = counter.saturating_add(1);
        }
        self.enforce_bound(Some(&key));
    }

    /// The report for `slmcode evolve stats`: per key, each arm's runs and posterior mean, and
    /// the key's drift profile.
    pub fn stats(&self) -> String {
        if self.keys.is_empty() {
            let fresh = KeyState::default();
            let priors = Arm::ALL
                .iter()
                .map(|arm| format!("{arm} {:.2}", fresh.mean(*arm)))
                .collect::<Vec<_>>()
                .join(", ");
            return format!("no evolve data yet: every key starts from the priors ({priors})\n");
        }
        let mut out = String::new();
        for ((family, language), state) in &self.keys {
            out.push_str(&format!(
                "{family} · {language} ({}, best {})\n",
                plural(state.total_pulls(), "run", "runs"),
                state.best_mean()
            ));
            for arm in Arm::ALL {
                let (a, b) = state.posterior(arm);
                out.push_str(&format!(
                    "  {:<15} pulls {:>4}  mean {:.2}  Beta({a:.2}, {b:.2})\n",
                    arm.name(),
                    state.arms.get(arm).pulls,
                    state.mean(arm)
                ));
            }
            out.push_str(&format!(
                "  {}\n",
                drift_line(family, language, &state.drift)
            ));
        }
        out
    }

    /// Explains the next choice for a key (`slmcode evolve why`): each arm's mean and pulls,
    /// the exploration rate now, and what `--no-explore` would pick.
    pub fn why(&self, family: &str, language: &str) -> String {
        let fresh = KeyState::default();
        let key = key_of(family, language);
        let known = self.keys.get(&key);
        let state = known.unwrap_or(&fresh);
        let n = state.total_pulls();
        let (family, language) = key;
        let mut out = if known.is_some() {
            format!(
                "{family} · {language}: {} recorded\n",
                plural(n, "run", "runs")
            )
        } else {
            format!("{family} · {language}: no runs recorded yet, priors only\n")
        };
        for arm in Arm::ALL {
            let (a, b) = state.posterior(arm);
            let (pa, pb) = arm.prior();
            out.push_str(&format!(
                "  {:<15} mean {:.2}  pulls {:>4}  Beta({a:.2}, {b:.2}), prior Beta({pa}, {pb})\n",
                arm.name(),
                state.mean(arm),
                state.arms.get(arm).pulls
            ));
        }
        let eps = explore_rate(n);
        out.push_str(&format!(
            "exploration now: {:.0}% of runs take a uniformly random arm \
             (ε = max(0.05, 0.5/√(1 + n/3)), n = {n}); the rest sample each arm's Beta and \
             take the highest draw\n",
            eps * 100.0
        ));
        let best = state.best_mean();
        out.push_str(&format!(
            "--no-explore would pick: {best} (highest posterior mean, {:.2})\n",
            state.mean(best)
        ));
        if known.is_some() {
            out.push_str(&drift_line(&family, &language, &state.drift));
            out.push('\n');
        }
        out
    }

    /// Deletes the state file (`slmcode evolve reset`); `Ok(false)` when there was none.
    pub fn reset(path: &Path) -> Result<bool, EvolveError> {
        match fs::remove_file(path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(source) => Err(EvolveError::Remove {
                path: path.to_path_buf(),
                source,
            }),
        }
    }

    /// Drops keys unused for 180 days and enforces the key bound.
    fn prune(&mut self, now: u64) {
        self.keys
            .retain(|_, k| now.saturating_sub(k.last_used) <= STALE_SECS);
        self.enforce_bound(None);
    }

    /// Evicts the least recently used keys (ties: the first in key order) until at most
    /// `MAX_KEYS` remain, never evicting `keep`.
    fn enforce_bound(&mut self, keep: Option<&(String, String)>) {
        while self.keys.len() > MAX_KEYS {
            let victim = self
                .keys
                .iter()
                .filter(|(k, _)| Some(*k) != keep)
                .min_by_key(|(_, s)| s.last_used)
                .map(|(k, _)| k.clone());
            match victim {
                Some(k) => {
                    self.keys.remove(&k);
                }
                None => break,
            }
        }
    }
}

/// The default path from the two variables; a relative XDG_DATA_HOME is ignored, as the
/// XDG spec says.
fn default_path_from(xdg: Option<OsString>, home: Option<OsString>) -> Option<PathBuf> {
    crate::user_config::base_dir_from(xdg, home, ".local/share")
        .map(|d| d.join("slmcode").join("evolve.json"))
}

/// `family · language: 31% indentation, 12% trailing whitespace, 5% refused (42 edits)`:
/// the non-exact outcomes, largest share first.
fn drift_line(family: &str, language: &str, drift: &DriftProfile) -> String {
    let head = format!("{family} · {language}");
    if drift.edits == 0 {
        return format!("{head}: no edits recorded");
    }
    let mut parts: Vec<(u64, &str)> = DRIFTS
        .iter()
        .map(|d| (drift.fuzzy.get(*d), drift_label(*d)))
        .chain([(drift.refused, "refused"), (drift.reverted, "reverted")])
        .filter(|(count, _)| *count > 0)
        .collect();
    // Stable sort: equal shares keep the fixed order.
    parts.sort_by_key(|p| std::cmp::Reverse(p.0));
    let edits = plural(drift.edits, "edit", "edits");
    if parts.is_empty() {
        return format!("{head}: all exact ({edits})");
    }
    let shares = parts
        .iter()
        .map(|(count, label)| {
            let pct = (*count as f64 * 100.0 / drift.edits as f64).round();
            if pct < 1.0 {
                format!("<1% {label}")
            } else {
                format!("{pct:.0}% {label}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    format!("{head}: {shares} ({edits})")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng as _;

    const T0: u64 = 1_750_000_000;

    // --- model family, arms ---------------------------------------------------------

    #[test]
    fn model_family_examples() {
        let cases = [
            ("qwen2.5-coder:7b", "qwen2.5-coder"),
            (
                "hf.co/bartowski/Qwen2.5-Coder-7B-Instruct-GGUF:Q4_K_M",
                "qwen2.5-coder",
            ),
            ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3-coder"),
            ("llama3.1:8b-instruct-q4_K_M", "llama3.1"),
            ("deepseek-coder-v2:16b", "deepseek-coder-v2"),
            ("gpt-4o-mini", "gpt-4o-mini"),
            ("gpt-4", "gpt-4"),
            ("meta-llama/Meta-Llama-3.1-8B-Instruct", "llama3.1"),
            ("mistralai/Mistral-7B-Instruct-v0.3", "mistral"),
            ("mixtral:8x7b", "mixtral"),
            ("google/gemma-2-9b-it", "gemma2"),
            ("gemma3:12b", "gemma3"),
            ("microsoft/Phi-3.5-mini-instruct", "phi3.5-mini"),
            ("codellama:7b-instruct", "codellama"),
            ("deepseek-coder:6.7b-instruct-q8_0", "deepseek-coder"),
            ("Qwen2.5-Coder-14B-Instruct-AWQ", "qwen2.5-coder"),
            ("qwen2.5-coder-7b-instruct-fp16", "qwen2.5-coder"),
            (
                "/models/qwen2.5-coder-7b-instruct.Q4_K_M.gguf",
                "qwen2.5-coder",
            ),
            ("qwen2.5-coder-32b-instruct-q5_k_m.gguf", "qwen2.5-coder"),
            ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
            ("starcoder2:15b", "starcoder2"),
            ("gpt-oss:20b", "gpt-oss"),
            ("ollama.com/library/qwen3:30b-a3b", "qwen3"),
            ("  QWEN2.5-CODER:latest ", "qwen2.5-coder"),
            ("devstral", "devstral"),
        ];
        for (id, want) in cases {
            assert_eq!(model_family(id), want, "{id}");
        }
    }

    #[test]
    fn model_family_is_never_empty() {
        assert_eq!(model_family(""), "unknown");
        assert_eq!(model_family("   "), "unknown");
        assert_eq!(model_family("7B"), "7b");
        assert_eq!(model_family("org/"), "org/");
        assert_eq!(model_family(":7b"), ":7b");
        for weird in [
            "/", ":", "-", "---", "a/b/c:", "..", ".gguf", "é-7b", "\u{0}",
        ] {
            assert!(!model_family(weird).is_empty(), "{weird:?}");
        }
    }

    #[test]
    fn arm_names_round_trip() {
        for arm in Arm::ALL {
            assert_eq!(Arm::parse(arm.name()), Some(arm));
            assert_eq!(Arm::parse(arm.tool()), Some(arm));
            assert_eq!(arm.to_string(), arm.name());
            let json = serde_json::to_string(&arm).unwrap();
            assert_eq!(json, format!("\"{}\"", arm.name()));
        }
        assert_eq!(Arm::parse(" Unified-Diff "), Some(Arm::UnifiedDiff));
        assert_eq!(Arm::parse("diff"), None);
        assert_eq!(Arm::parse(""), None);
    }

    // --- edit outcomes ----------------------------------------------------------------

    fn edited(rung: Rung, gutter: bool, hunks: &[Rung]) -> Outcome {
        Outcome::Edited(slmcode_aci::outcome::Edit {
            rung,
            gutter,
            hunks: hunks
                .iter()
                .map(|r| slmcode_aci::outcome::HunkReport {
                    rung: *r,
                    first_line: 1,
                    last_line: 1,
                    offset: None,
                })
                .collect(),
            applied: slmcode_aci::outcome::Applied::Written,
        })
    }

    #[test]
    fn edit_outcomes_come_from_the_typed_outcome() {
        use EditOutcome::{Exact, Fuzzy, Refused, Reverted};
        let of = EditOutcome::of;
        assert_eq!(of("ws_edit", &edited(Rung::Exact, false, &[])), Some(Exact));
        for rung in Rung::ALL.into_iter().filter(|r| *r != Rung::Exact) {
            assert_eq!(
                of("ws_edit", &edited(rung, true, &[])),
                Some(Fuzzy(Drift::Rung(rung))),
                "a rung outranks a stripped gutter"
            );
        }
        assert_eq!(
            of("ws_patch", &edited(Rung::Exact, true, &[Rung::Exact])),
            Some(Fuzzy(Drift::Gutter))
        );
        let written = Outcome::Written(slmcode_aci::outcome::Write {
            created: true,
            changed: true,
            applied: slmcode_aci::outcome::Applied::Staged,
        });
        assert_eq!(of("ws_write", &written), Some(Exact));
        assert_eq!(
            of("ws_edit", &Outcome::Refused(RefusalClass::Reverted)),
            Some(Reverted)
        );
        for class in [
            RefusalClass::NotRead,
            RefusalClass::Ambiguous { count: 2 },
            RefusalClass::Args,
            RefusalClass::Placeholder,
        ] {
            assert_eq!(of("ws_patch", &Outcome::Refused(class)), Some(Refused));
        }
        // Not an edit tool, or nothing to learn.
        assert_eq!(of("ws_read", &edited(Rung::Exact, false, &[])), None);
        assert_eq!(of("bash", &Outcome::Refused(RefusalClass::Reverted)), None);
        assert_eq!(of("ws_edit", &Outcome::Done), None);
        assert_eq!(
            of("mcp__slmcode__ws_edit", &edited(Rung::Exact, false, &[])),
            Some(Exact)
        );
    }

    #[test]
    fn a_patch_counts_its_worst_hunk() {
        // The tool reports the worst rung; the hunks are detail.
        let outcome = edited(
            Rung::Anchored,
            false,
            &[Rung::Exact, Rung::Anchored, Rung::Indentation],
        );
        assert_eq!(
            EditOutcome::of("ws_patch", &outcome),
            Some(EditOutcome::Fuzzy(Drift::Rung(Rung::Anchored)))
        );
    }

    #[test]
    fn edit_outcomes_keep_their_serialized_names() {
        // Trajectories and the state file carry these; a rename would orphan old data.
        let v = serde_json::to_value(EditOutcome::Fuzzy(Drift::Rung(Rung::Indentation))).unwrap();
        assert_eq!(v, serde_json::json!({"fuzzy": "indentation"}));
        let v = serde_json::to_value(EditOutcome::Fuzzy(Drift::Gutter)).unwrap();
        assert_eq!(v, serde_json::json!({"fuzzy": "gutter"}));
        assert_eq!(
            serde_json::to_value(EditOutcome::Exact).unwrap(),
            serde_json::json!("exact")
        );
    }

    // --- reward -----------------------------------------------------------------------

    #[test]
    fn reward_ordering_and_range() {
        use EditOutcome::{Exact, Refused, Reverted};
        assert_eq!(reward(&[]), None);
        let all_exact = reward(&[Exact, Exact, Exact]).unwrap();
        let fuzzy = reward(&[
            Exact,
            EditOutcome::Fuzzy(Drift::Rung(Rung::Indentation)),
            Exact,
        ])
        .unwrap();
        let anchored = reward(&[
            Exact,
            EditOutcome::Fuzzy(Drift::Rung(Rung::Anchored)),
            Exact,
        ])
        .unwrap();
        let refusal = reward(&[Refused, Exact, Exact]).unwrap();
        let revert = reward(&[Reverted, Exact, Exact]).unwrap();
        let two_refusals = reward(&[Refused, Refused, Exact]).unwrap();
        assert_eq!(all_exact, 1.0);
        assert!(all_exact > fuzzy, "{all_exact} > {fuzzy}");
        assert!(fuzzy > anchored, "{fuzzy} > {anchored}");
        assert!(fuzzy > refusal, "{fuzzy} > {refusal}");
        assert!(refusal > revert, "{refusal} > {revert}");
        assert!(refusal > two_refusals, "{refusal} > {two_refusals}");
        assert!((fuzzy - 0.9).abs() < 1e-9);
        assert!((refusal - 2.0 / 3.0).abs() < 1e-9);
        assert!((revert - 0.5).abs() < 1e-9);
        assert!((two_refusals - (1.0 / 3.0) / 1.25).abs() < 1e-9);
        assert_eq!(reward(&[Refused]), Some(0.0));
        assert_eq!(reward(&[Reverted, Reverted]), Some(0.0));

        // Every sequence of up to 4 outcomes stays in [0, 1].
        let all = [
            Exact,
            Refused,
            Reverted,
            EditOutcome::Fuzzy(Drift::Rung(Rung::Anchored)),
            EditOutcome::Fuzzy(Drift::Gutter),
        ];
        let mut seqs: Vec<Vec<EditOutcome>> = vec![vec![]];
        for _ in 0..4 {
            seqs = seqs
                .iter()
                .flat_map(|s| {
                    all.iter().map(move |o| {
                        let mut s = s.clone();
                        s.push(*o);
                        s
                    })
                })
                .collect();
            for s in &seqs {
                let r = reward(s).unwrap();
                assert!((0.0..=1.0).contains(&r), "{s:?} → {r}");
            }
        }
    }

    // --- learning ---------------------------------------------------------------------

    /// Three edits per run: unified_diff is truly best, search_replace mostly refused,
    /// whole_file often reverted.
    fn simulate(arm: Arm, rng: &mut StdRng) -> Vec<EditOutcome> {
        use rand::RngExt as _;
        (0..3)
            .map(|_| {
                let x: f64 = rng.random();
                match arm {
                    Arm::UnifiedDiff if x < 0.9 => EditOutcome::Exact,
                    Arm::UnifiedDiff => EditOutcome::Fuzzy(Drift::Rung(Rung::Indentation)),
                    Arm::SearchReplace if x < 0.7 => EditOutcome::Refused,
                    Arm::SearchReplace => EditOutcome::Exact,
                    Arm::WholeFile if x < 0.6 => EditOutcome::Exact,
                    Arm::WholeFile => EditOutcome::Reverted,
                }
            })
            .collect()
    }

    #[test]
    fn converges_to_the_better_arm_and_keeps_exploring() {
        let mut evolve = Evolve::default();
        let mut choose_rng = StdRng::seed_from_u64(7);
        let mut world = StdRng::seed_from_u64(11);
        let mut best_in_last_100 = 0;
        let mut others_in_last_1000 = 0;
        let mut explored_in_last_1000 = 0;
        for round in 0..3000u64 {
            let c = evolve.choose("qwen2.5-coder", "python", true, &mut choose_rng);
            let outcomes = simulate(c.arm, &mut world);
            evolve.record("qwen2.5-coder", "python", c.arm, &outcomes, T0 + round * 60);
            if (200..300).contains(&round) && c.arm == Arm::UnifiedDiff {
                best_in_last_100 += 1;
            }
            if round == 299 {
                let det = evolve.choose("qwen2.5-coder", "python", false, &mut choose_rng);
                assert_eq!(
                    det.arm,
                    Arm::UnifiedDiff,
                    "{}",
                    evolve.why("qwen2.5-coder", "python")
                );
                assert!(best_in_last_100 > 50, "{best_in_last_100}/100");
            }
            if round >= 2000 {
                if c.arm != Arm::UnifiedDiff {
                    others_in_last_1000 += 1;
                }
                if c.explored {
                    explored_in_last_1000 += 1;
                }
            }
        }
        // The floor is 5%: two thirds of explored runs land on another arm (≈ 3.3%).
        assert!(others_in_last_1000 >= 20, "{others_in_last_1000}/1000");
        assert!(explored_in_last_1000 >= 30, "{explored_in_last_1000}/1000");
        let det = evolve.choose("qwen2.5-coder", "python", false, &mut choose_rng);
        assert_eq!(det.arm, Arm::UnifiedDiff);
        // Decay bounds the evidence: at most 1 / (1 - 0.98) = 50 runs' worth per key.
        let state = &evolve.keys[&key_of("qwen2.5-coder", "python")];
        let evidence: f64 = Arm::ALL
            .iter()
            .map(|a| state.arms.get(*a).successes + state.arms.get(*a).failures)
            .sum();
        assert!(evidence <= 50.0 + 1e-9, "{evidence}");
        assert_eq!(state.total_pulls(), 3000);
    }

    #[test]
    fn exploration_rate_decays_to_the_floor() {
        assert!((explore_rate(0) - 0.5).abs() < 1e-12);
        assert!((explore_rate(9) - 0.25).abs() < 1e-12);
        assert!(explore_rate(30) > explore_rate(60));
        assert!((explore_rate(297) - 0.05).abs() < 1e-12);
        assert_eq!(explore_rate(100_000), 0.05);
        assert_eq!(explore_rate(u64::MAX), 0.05);
    }

    #[test]
    fn no_explore_is_deterministic() {
        let fresh = Evolve::default();
        let mut evolve = Evolve::default();
        evolve.record(
            "llama3.1",
            "rust",
            Arm::WholeFile,
            &[EditOutcome::Exact; 4],
            T0,
        );
        for seed in 0..50 {
            let mut rng = StdRng::seed_from_u64(seed);
            let c = fresh.choose("llama3.1", "rust", false, &mut rng);
            assert_eq!(c.arm, Arm::SearchReplace, "prior favours search_replace");
            assert!(!c.explored);
            let d = evolve.choose("llama3.1", "rust", false, &mut rng);
            assert_eq!(
                d,
                evolve.choose("llama3.1", "rust", false, &mut StdRng::seed_from_u64(0))
            );
            assert!(!d.explored);
        }
        // It draws nothing from the rng.
        let mut a = StdRng::seed_from_u64(3);
        let mut b = StdRng::seed_from_u64(3);
        let _ = fresh.choose("x", "y", false, &mut a);
        use rand::RngExt as _;
        assert_eq!(a.random::<u64>(), b.random::<u64>());
    }

    #[test]
    fn no_explore_ties_go_to_arm_order() {
        let mut evolve = Evolve::default();
        let key = key_of("m", "go");
        let state = evolve.keys.entry(key).or_default();
        // search_replace is 8/10 = 0.8; make unified_diff exactly 0.8 too: (3+29)/(3+29+5+3).
        state.arms.unified_diff.successes = 29.0;
        state.arms.unified_diff.failures = 3.0;
        assert_eq!(state.mean(Arm::UnifiedDiff), state.mean(Arm::SearchReplace));
        let mut rng = StdRng::seed_from_u64(1);
        assert_eq!(
            evolve.choose("m", "go", false, &mut rng).arm,
            Arm::SearchReplace
        );
    }

    #[test]
    fn record_updates_posterior_and_drift() {
        let mut evolve = Evolve::default();
        // No attempts: nothing is learned or stored.
        evolve.record("m", "python", Arm::UnifiedDiff, &[], T0);
        assert!(evolve.keys.is_empty());
        evolve.record(
            "M ",
            "Python",
            Arm::UnifiedDiff,
            &[EditOutcome::Exact, EditOutcome::Refused],
            T0,
        );
        let state = &evolve.keys[&key_of("m", "python")];
        let s = state.arms.get(Arm::UnifiedDiff);
        let r = reward(&[EditOutcome::Exact, EditOutcome::Refused]).unwrap();
        assert!((s.successes - r).abs() < 1e-12);
        assert!((s.failures - (1.0 - r)).abs() < 1e-12);
        assert_eq!(s.pulls, 1);
        assert_eq!(state.drift.edits, 2);
        assert_eq!(state.drift.exact, 1);
        assert_eq!(state.drift.refused, 1);
        assert_eq!(state.last_used, T0);
        // The next record decays the earlier evidence by 0.98 before adding.
        evolve.record("m", "python", Arm::WholeFile, &[EditOutcome::Exact], T0 + 1);
        let s = evolve.keys[&key_of("m", "python")]
            .arms
            .get(Arm::UnifiedDiff)
            .clone();
        assert!((s.successes - r * DECAY).abs() < 1e-12);
    }

    // --- persistence ------------------------------------------------------------------

    fn sample_state() -> Evolve {
        let mut evolve = Evolve::default();
        let now = unix_now();
        evolve.record(
            "qwen2.5-coder",
            "python",
            Arm::SearchReplace,
            &[
                EditOutcome::Fuzzy(Drift::Rung(Rung::Indentation)),
                EditOutcome::Exact,
                EditOutcome::Refused,
            ],
            now,
        );
        evolve.record(
            "llama3.1",
            "rust",
            Arm::UnifiedDiff,
            &[EditOutcome::Reverted],
            now,
        );
        evolve
    }

    #[test]
    fn save_load_round_trip_is_atomic_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/deeper/evolve.json");
        assert_eq!(
            Evolve::load(&path).unwrap(),
            Evolve::default(),
            "missing = fresh"
        );
        let evolve = sample_state();
        evolve.save(&path).unwrap();
        assert_eq!(Evolve::load(&path).unwrap(), evolve);
        // Saving again replaces the file and leaves nothing else behind.
        evolve.save(&path).unwrap();
        let names: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![OsString::from("evolve.json")]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"version\": 1"), "{text}");
        assert!(text.contains("\"search_replace\""), "{text}");
    }

    #[test]
    fn save_reports_the_path_on_failure() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        fs::write(&blocker, "x").unwrap();
        let path = blocker.join("evolve.json");
        let err = sample_state().save(&path).unwrap_err();
        assert!(matches!(err, EvolveError::Write { .. }));
        assert!(
            err.to_string().contains(&path.display().to_string()),
            "{err}"
        );
    }

    #[test]
    fn corrupt_files_are_reported_not_panicked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("evolve.json");
        let bad_inputs: [&[u8]; 9] = [
            b"",
            b"{",
            b"\xff\xfe garbage",
            b"[]",
            b"{\"version\": 2, \"keys\": []}",
            b"{\"version\": 1, \"keys\": [{\"family\": \"m\"}]}",
            b"{\"version\": 1, \"keys\": [{\"family\": \"m\", \"language\": \"go\", \"arms\": {\"unified_diff\": {\"successes\": -1}}}]}",
            b"{\"version\": 1, \"keys\": [{\"family\": \"m\", \"language\": \"go\", \"arms\": {\"whole_file\": {\"failures\": 1e300}}}]}",
            b"{\"version\": 1, \"keys\": [{\"family\": \"m\", \"language\": \"go\", \"last_used\": -5}]}",
        ];
        for bad in bad_inputs {
            fs::write(&path, bad).unwrap();
            let err = Evolve::load(&path).unwrap_err();
            let msg = err.to_string();
            assert!(matches!(err, EvolveError::Corrupt { .. }), "{msg}");
            assert!(msg.contains(&path.display().to_string()), "{msg}");
            assert!(msg.contains("slmcode evolve reset"), "{msg}");
        }
        // Unknown fields and missing optional ones are fine.
        fs::write(
            &path,
            b"{\"version\": 1, \"extra\": true, \"keys\": [{\"family\": \"m\", \"language\": \"go\", \"arms\": {\"whole_file\": {\"pulls\": 2}}}]}",
        )
        .unwrap();
        let loaded = Evolve::load(&path).unwrap();
        assert_eq!(loaded.keys[&key_of("m", "go")].arms.whole_file.pulls, 2);
    }

    #[test]
    fn unreadable_path_is_a_read_error() {
        let dir = tempfile::tempdir().unwrap();
        // A directory where the file should be.
        let err = Evolve::load(dir.path()).unwrap_err();
        assert!(matches!(err, EvolveError::Read { .. }), "{err}");
        assert!(err.to_string().contains(&dir.path().display().to_string()));
    }

    #[test]
    fn reset_removes_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("evolve.json");
        assert!(!Evolve::reset(&path).unwrap());
        sample_state().save(&path).unwrap();
        assert!(Evolve::reset(&path).unwrap());
        assert!(!path.exists());
        assert!(!Evolve::reset(&path).unwrap());
        let err = Evolve::reset(dir.path()).unwrap_err();
        assert!(
            err.to_string().contains(&dir.path().display().to_string()),
            "{err}"
        );
    }

    #[test]
    fn at_most_200_keys_least_recently_used_evicted() {
        let mut evolve = Evolve::default();
        for i in 0..250u64 {
            // Key 0 is touched again late, so it survives.
            evolve.record(
                &format!("m{i}"),
                "rust",
                Arm::WholeFile,
                &[EditOutcome::Exact],
                T0 + i,
            );
            if i == 100 {
                evolve.record(
                    "m0",
                    "rust",
                    Arm::WholeFile,
                    &[EditOutcome::Exact],
                    T0 + 1000,
                );
            }
        }
        assert_eq!(evolve.keys.len(), MAX_KEYS);
        assert!(evolve.keys.contains_key(&key_of("m0", "rust")));
        assert!(evolve.keys.contains_key(&key_of("m249", "rust")));
        // The oldest others went: m1..=m50.
        for i in 1..=50 {
            assert!(
                !evolve.keys.contains_key(&key_of(&format!("m{i}"), "rust")),
                "m{i}"
            );
        }
        assert!(evolve.keys.contains_key(&key_of("m51", "rust")));
        // A key recorded with an older clock than all others is not evicted on insert.
        evolve.record("late", "go", Arm::WholeFile, &[EditOutcome::Exact], 1);
        assert!(evolve.keys.contains_key(&key_of("late", "go")));
        assert_eq!(evolve.keys.len(), MAX_KEYS);
    }

    #[test]
    fn stale_keys_are_dropped_on_save_and_the_bound_holds_on_load() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("evolve.json");
        let now = T0 + 400 * 86_400;
        let mut evolve = Evolve::default();
        evolve.record(
            "old",
            "rust",
            Arm::WholeFile,
            &[EditOutcome::Exact],
            now - 181 * 86_400,
        );
        evolve.record(
            "recent",
            "rust",
            Arm::WholeFile,
            &[EditOutcome::Exact],
            now - 179 * 86_400,
        );
        evolve.save_at(&path, now).unwrap();
        let loaded = Evolve::load(&path).unwrap();
        assert_eq!(loaded.keys.len(), 1);
        assert!(loaded.keys.contains_key(&key_of("recent", "rust")));
        // save takes &self: the in-memory state still has both.
        assert_eq!(evolve.keys.len(), 2);

        // A hand-made file with too many keys is trimmed on load.
        let keys: Vec<String> = (0..230)
            .map(|i| format!("{{\"family\": \"m{i}\", \"language\": \"go\", \"last_used\": {i}}}"))
            .collect();
        fs::write(
            &path,
            format!("{{\"version\": 1, \"keys\": [{}]}}", keys.join(",")),
        )
        .unwrap();
        let loaded = Evolve::load(&path).unwrap();
        assert_eq!(loaded.keys.len(), MAX_KEYS);
        assert!(!loaded.keys.contains_key(&key_of("m29", "go")));
        assert!(loaded.keys.contains_key(&key_of("m30", "go")));
    }

    #[test]
    fn default_path_follows_xdg() {
        let xdg = default_path_from(Some("/data".into()), Some("/home/u".into()));
        assert_eq!(xdg, Some(PathBuf::from("/data/slmcode/evolve.json")));
        let home = default_path_from(None, Some("/home/u".into()));
        assert_eq!(
            home,
            Some(PathBuf::from("/home/u/.local/share/slmcode/evolve.json"))
        );
        let relative = default_path_from(Some("rel".into()), Some("/home/u".into()));
        assert_eq!(relative, home);
        assert_eq!(default_path_from(Some("".into()), None), None);
        assert_eq!(default_path_from(None, Some("".into())), None);
        assert_eq!(default_path_from(None, None), None);
    }

    // --- reports ----------------------------------------------------------------------

    #[test]
    fn stats_and_why_report_arms_pulls_means_and_drift() {
        assert!(Evolve::default().stats().contains("no evolve data yet"));
        let mut evolve = Evolve::default();
        let mut outcomes = vec![EditOutcome::Exact; 22];
        outcomes.extend([EditOutcome::Fuzzy(Drift::Rung(Rung::Indentation)); 13]);
        outcomes.extend([EditOutcome::Fuzzy(Drift::Rung(Rung::TrailingWhitespace)); 5]);
        outcomes.extend([EditOutcome::Refused; 2]);
        evolve.record("qwen2.5-coder", "python", Arm::SearchReplace, &outcomes, T0);
        evolve.record(
            "qwen2.5-coder",
            "python",
            Arm::UnifiedDiff,
            &[EditOutcome::Exact],
            T0,
        );

        let stats = evolve.stats();
        for arm in Arm::ALL {
            assert!(stats.contains(arm.name()), "{stats}");
        }
        assert!(stats.contains("pulls    1"), "{stats}");
        assert!(stats.contains("pulls    0"), "{stats}");
        let state = &evolve.keys[&key_of("qwen2.5-coder", "python")];
        let mean = format!("mean {:.2}", state.mean(Arm::UnifiedDiff));
        assert!(stats.contains(&mean), "{stats}");
        assert!(
            stats.contains(
                "qwen2.5-coder · python: 30% indentation, 12% trailing whitespace, 5% refused (43 edits)"
            ),
            "{stats}"
        );

        let why = evolve.why("qwen2.5-coder", "python");
        for arm in Arm::ALL {
            assert!(why.contains(arm.name()), "{why}");
        }
        assert!(why.contains("2 runs recorded"), "{why}");
        assert!(why.contains(&mean), "{why}");
        assert!(why.contains("exploration now: 39%"), "{why}");
        let best = state.best_mean();
        assert!(
            why.contains(&format!("--no-explore would pick: {best}")),
            "{why}"
        );
        assert!(why.contains("30% indentation"), "{why}");

        let fresh = Evolve::default().why("gemma3", "go");
        assert!(fresh.contains("priors only"), "{fresh}");
        assert!(fresh.contains("exploration now: 50%"), "{fresh}");
        assert!(
            fresh.contains("--no-explore would pick: search_replace"),
            "{fresh}"
        );
    }

    #[test]
    fn drift_line_forms() {
        let mut d = DriftProfile::default();
        assert_eq!(drift_line("m", "go", &d), "m · go: no edits recorded");
        d.edits = 1;
        d.exact = 1;
        assert_eq!(drift_line("m", "go", &d), "m · go: all exact (1 edit)");
        d.edits = 300;
        d.reverted = 1;
        assert_eq!(
            drift_line("m", "go", &d),
            "m · go: <1% reverted (300 edits)"
        );
    }

    #[test]
    fn choice_reasons_explain_the_pick() {
        let evolve = Evolve::default();
        let mut rng = StdRng::seed_from_u64(5);
        let mut saw_explore = false;
        let mut saw_thompson = false;
        for _ in 0..100 {
            let c = evolve.choose("m", "go", true, &mut rng);
            if c.explored {
                saw_explore = true;
                assert!(c.reason.starts_with("explored"), "{}", c.reason);
            } else {
                saw_thompson = true;
                assert!(c.reason.starts_with("thompson"), "{}", c.reason);
            }
        }
        assert!(saw_explore && saw_thompson);
    }
}
