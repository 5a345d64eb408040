//! The learned state and its file: per (model family, language) key, the evidence on each
//! arm and the drift profile; loaded and saved atomically, pruned of stale keys and bounded in
//! size. A corrupt file is an error naming the file, never a crash.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use slmcode_aci::matching::Rung;
use slmcode_aci::outcome::Drift;

use super::{key_of, Arm, Evolve};

/// Keys not used for this long are dropped on save.
const STALE_SECS: u64 = 180 * 24 * 60 * 60;
/// At most this many keys are kept; the least recently used go first.
const MAX_KEYS: usize = 200;
/// Evidence above this in a loaded file is taken as corruption (decay keeps it under 50).
const MAX_EVIDENCE: f64 = 1.0e6;
/// The state file's format version.
const FORMAT_VERSION: u32 = 1;

/// The evidence on one arm of one key: alpha = prior_alpha + successes, beta = prior_beta +
/// failures. Kept apart from the prior so decay touches evidence only and priors can change.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(super) struct ArmState {
    pub(super) successes: f64,
    pub(super) failures: f64,
    pub(super) pulls: u64,
}

/// The three arms of one key.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(super) struct Arms {
    pub(super) search_replace: ArmState,
    pub(super) unified_diff: ArmState,
    pub(super) whole_file: ArmState,
}

impl Arms {
    pub(super) fn get(&self, arm: Arm) -> &ArmState {
        match arm {
            Arm::SearchReplace => &self.search_replace,
            Arm::UnifiedDiff => &self.unified_diff,
            Arm::WholeFile => &self.whole_file,
        }
    }

    pub(super) fn get_mut(&mut self, arm: Arm) -> &mut ArmState {
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
pub(super) struct RungCounts {
    pub(super) trailing_whitespace: u64,
    pub(super) indentation: u64,
    pub(super) blank_lines: u64,
    pub(super) anchored: u64,
    pub(super) unicode: u64,
    pub(super) escapes: u64,
    pub(super) gutter: u64,
}

impl RungCounts {
    pub(super) fn get(&self, drift: Drift) -> u64 {
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
    pub(super) fn get_mut(&mut self, drift: Drift) -> Option<&mut u64> {
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
pub(super) struct DriftProfile {
    pub(super) edits: u64,
    pub(super) exact: u64,
    pub(super) refused: u64,
    pub(super) reverted: u64,
    pub(super) fuzzy: RungCounts,
}

/// Everything known about one (family, language) key.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct KeyState {
    pub(super) last_used: u64,
    pub(super) arms: Arms,
    pub(super) drift: DriftProfile,
}

impl KeyState {
    pub(super) fn total_pulls(&self) -> u64 {
        Arm::ALL.iter().map(|a| self.arms.get(*a).pulls).sum()
    }

    /// The posterior Beta(alpha, beta) of an arm.
    pub(super) fn posterior(&self, arm: Arm) -> (f64, f64) {
        let (pa, pb) = arm.prior();
        let s = self.arms.get(arm);
        (pa + s.successes, pb + s.failures)
    }

    pub(super) fn mean(&self, arm: Arm) -> f64 {
        let (a, b) = self.posterior(arm);
        a / (a + b)
    }

    /// The arm with the highest posterior mean; ties go to the earlier arm.
    pub(super) fn best_mean(&self) -> Arm {
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

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl Evolve {
    /// Reads the state; a missing file is a fresh state (first run), anything unreadable or
    /// invalid is an error naming the file and `slmcode evolve reset`, never a panic.
    pub fn load(path: &Path) -> Result<Evolve, EvolveError> {
        let bytes = match slmcode_aci::readback::read_path(
            path,
            slmcode_aci::readback::CONTROL_MAX_BYTES,
        ) {
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

        slmcode_aci::fsx::save_private(path, &json).map_err(write_err)
    }

    /// Where the state lives by default: `$XDG_DATA_HOME/slmcode/evolve.json`, else
    /// `$HOME/.local/share/slmcode/evolve.json`; `None` when neither is set.
    pub fn default_path() -> Option<PathBuf> {
        default_path_from(std::env::var_os("XDG_DATA_HOME"), std::env::var_os("HOME"))
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
    pub(super) fn enforce_bound(&mut self, keep: Option<&(String, String)>) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evolve::EditOutcome;

    const T0: u64 = 1_750_000_000;

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
}
