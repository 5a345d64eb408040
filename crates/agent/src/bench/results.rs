//! A bench's results: JSON lines under `bench/results/<label>/`, one line per exercise ×
//! attempt × repeat, with what produced it (model, settings, slmcode's version, the suite's
//! commit). A shard writes its own file, so shards on many machines never share one; a label
//! re-run skips what is recorded (an interrupted bench resumes); `merge` joins shards' files.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::BenchError;

/// One exercise × attempt × repeat.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub label: String,
    pub language: String,
    pub exercise: String,
    /// 1, or 2 when the first attempt's tests failed and the model saw their output.
    pub attempt: u32,
    /// Which of `--repeat K` independent runs (0-based).
    pub repeat: u32,
    pub passed: bool,
    /// How the run ended: done, blocked, interrupted, error, or timeout.
    pub status: String,
    pub turns: usize,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: u64,
    pub wall_ms: u64,
    /// Edits by the rung they landed on.
    pub rungs: BTreeMap<String, u32>,
    /// Refusals by class.
    pub refusals: BTreeMap<String, u32>,
    /// The run's id (its trajectory is in the exercise's work directory, kept with --keep).
    pub run_id: String,
    pub model: String,
    /// The settings that differ from the defaults (`--config`), as given.
    pub settings: serde_json::Value,
    pub slmcode_version: String,
    /// The suite's git commit, when it is a checkout.
    pub suite_commit: Option<String>,
}

/// The key a record is done by: an exercise, in one repeat.
pub fn done_key(language: &str, exercise: &str, repeat: u32) -> (String, String, u32) {
    (language.to_string(), exercise.to_string(), repeat)
}

/// Every record under `dir` (each `*.jsonl` file), in file order; a line that does not parse
/// is an error naming its file and line (a results file is data, not to be guessed at).
pub fn load(dir: &Path) -> Result<Vec<Record>, BenchError> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(out);
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    for file in files {
        out.extend(load_file(&file)?);
    }
    Ok(out)
}

/// The records of one file.
pub fn load_file(file: &Path) -> Result<Vec<Record>, BenchError> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| BenchError::Results(format!("{}: {e}", file.display())))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| {
            serde_json::from_str(l)
                .map_err(|e| BenchError::Results(format!("{} line {}: {e}", file.display(), n + 1)))
        })
        .collect()
}

/// The exercises × repeats a set of records finished: passed, both attempts recorded, or
/// timed out (which ends an exercise). One that ended in an error (the server went away) is
/// run again.
pub fn finished(records: &[Record]) -> BTreeSet<(String, String, u32)> {
    let mut attempts: BTreeMap<(String, String, u32), Vec<&Record>> = BTreeMap::new();
    for r in records {
        attempts
            .entry(done_key(&r.language, &r.exercise, r.repeat))
            .or_default()
            .push(r);
    }
    attempts
        .into_iter()
        .filter(|(_, rs)| {
            rs.iter()
                .any(|r| r.passed || r.attempt == 2 || r.status == "timeout")
        })
        .map(|(k, _)| k)
        .collect()
}

/// Appends a record to `file` (created with its directory), one line, flushed.
pub fn append(file: &Path, record: &Record) -> Result<(), BenchError> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| BenchError::Results(format!("{}: {e}", dir.display())))?;
    }
    let line = serde_json::to_string(record).map_err(|e| BenchError::Results(e.to_string()))?;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .map_err(|e| BenchError::Results(format!("{}: {e}", file.display())))?;
    writeln!(f, "{line}").map_err(|e| BenchError::Results(format!("{}: {e}", file.display())))
}

/// Joins the records of `sources` (result directories or files) into `into`'s
/// `merged.jsonl`: each exercise × attempt × repeat once (the first seen wins; a duplicate is
/// counted). Returns (records written, duplicates dropped).
pub fn merge(sources: &[PathBuf], into: &Path) -> Result<(usize, usize), BenchError> {
    let mut seen = BTreeSet::new();
    let mut kept = Vec::new();
    let mut dropped = 0;
    for source in sources {
        let records = if source.is_dir() {
            load(source)?
        } else {
            load_file(source)?
        };
        for r in records {
            if seen.insert((r.language.clone(), r.exercise.clone(), r.repeat, r.attempt)) {
                kept.push(r);
            } else {
                dropped += 1;
            }
        }
    }
    let file = into.join("merged.jsonl");
    if file.exists() {
        return Err(BenchError::Results(format!(
            "{} exists already; merge into an empty directory",
            file.display()
        )));
    }
    for r in &kept {
        append(&file, r)?;
    }
    Ok((kept.len(), dropped))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(ex: &str, attempt: u32, repeat: u32, passed: bool) -> Record {
        Record {
            label: "l".into(),
            language: "python".into(),
            exercise: ex.into(),
            attempt,
            repeat,
            passed,
            status: "done".into(),
            turns: 1,
            prompt_tokens: 0,
            completion_tokens: 0,
            cached_tokens: 0,
            wall_ms: 0,
            rungs: BTreeMap::new(),
            refusals: BTreeMap::new(),
            run_id: String::new(),
            model: "m".into(),
            settings: serde_json::Value::Null,
            slmcode_version: "0".into(),
            suite_commit: None,
        }
    }

    #[test]
    fn finished_means_passed_or_both_attempts_recorded() {
        let rs = vec![
            record("a", 1, 0, true),
            record("b", 1, 0, false),
            record("c", 1, 0, false),
            record("c", 2, 0, false),
            Record {
                status: "timeout".into(),
                ..record("d", 1, 0, false)
            },
            Record {
                status: "error: the server went away".into(),
                ..record("e", 1, 0, false)
            },
        ];
        let done = finished(&rs);
        assert!(done.contains(&done_key("python", "a", 0)));
        assert!(!done.contains(&done_key("python", "b", 0)));
        assert!(done.contains(&done_key("python", "c", 0)));
        assert!(done.contains(&done_key("python", "d", 0)));
        assert!(!done.contains(&done_key("python", "e", 0)));
    }

    #[test]
    fn records_round_trip_and_merge_drops_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("one/shard-1-of-2.jsonl");
        let b = dir.path().join("two/shard-2-of-2.jsonl");
        append(&a, &record("a", 1, 0, true)).unwrap();
        append(&b, &record("b", 1, 0, false)).unwrap();
        append(&b, &record("a", 1, 0, true)).unwrap();
        assert_eq!(
            load(&dir.path().join("one")).unwrap(),
            vec![record("a", 1, 0, true)]
        );
        let into = dir.path().join("all");
        let (kept, dropped) = merge(&[dir.path().join("one"), b.clone()], &into).unwrap();
        assert_eq!((kept, dropped), (2, 1));
        assert_eq!(load(&into).unwrap().len(), 2);
        assert!(merge(&[b], &into).is_err(), "merging over a merge");
        std::fs::write(dir.path().join("bad.jsonl"), "{not json\n").unwrap();
        let err = load_file(&dir.path().join("bad.jsonl")).unwrap_err();
        assert!(err.to_string().contains("bad.jsonl line 1"), "{err}");
    }
}
