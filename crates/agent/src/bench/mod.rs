//! `slmcode bench`: how many real tasks a model finishes with slmcode. A suite in the layout
//! of Aider's polyglot benchmark ([`suite`]); each exercise run as a fresh task with its tests
//! protected, attempt 2 seeing the failing tests ([`runner`]); the results as JSON lines that
//! resume and merge ([`results`]). Shards are deterministic slices, so any runner — GNU
//! parallel, a Kubernetes Job array, a Slurm array — spreads a bench with no coordination.

pub mod html;
pub mod report;
pub mod results;
pub mod runner;
pub mod suite;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use results::Record;
use suite::Exercise;

/// Why a bench cannot go on. Each message says what to fix.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("{0}")]
    Usage(String),
    #[error("the suite: {0}")]
    Suite(String),
    #[error("the results: {0}")]
    Results(String),
    #[error(transparent)]
    Launch(#[from] crate::launch::LaunchError),
}

/// What a bench runs, and where it records.
pub struct Plan {
    pub exercises: Vec<Exercise>,
    /// `--repeat K`.
    pub repeats: u32,
    /// `--jobs J`: exercises at once.
    pub jobs: usize,
    /// This shard's results file (`bench/results/<label>/shard-I-of-N.jsonl`).
    pub file: PathBuf,
    /// The label's directory: what is recorded there already is skipped.
    pub dir: PathBuf,
}

/// How the bench is going, after each exercise: for a progress line.
#[derive(Clone, Debug)]
pub struct Progress {
    pub done: usize,
    pub total: usize,
    /// Passed on either attempt, of those done.
    pub passed: usize,
    pub skipped: usize,
    pub last: String,
    pub eta_secs: Option<u64>,
}

/// The results file of a shard under a label's directory.
pub fn results_file(dir: &Path, shard: Option<(usize, usize)>) -> PathBuf {
    match shard {
        Some((i, n)) => dir.join(format!("shard-{i}-of-{n}.jsonl")),
        None => dir.join("results.jsonl"),
    }
}

/// Runs what `plan` holds that is not recorded yet, `jobs` at a time, appending each
/// exercise's records as it finishes; `progress` hears after each.
pub async fn run(
    plan: Plan,
    settings: runner::Settings,
    progress: Arc<dyn Fn(&Progress) + Send + Sync>,
) -> Result<Vec<Record>, BenchError> {
    let recorded = results::load(&plan.dir)?;
    let done = results::finished(&recorded);
    let mut todo: Vec<(Exercise, u32)> = Vec::new();
    let mut skipped = 0;
    for repeat in 0..plan.repeats {
        for ex in &plan.exercises {
            if done.contains(&results::done_key(&ex.language, &ex.name, repeat)) {
                skipped += 1;
            } else {
                todo.push((ex.clone(), repeat));
            }
        }
    }
    let total = todo.len();
    let started = Instant::now();
    let settings = Arc::new(settings);
    let file = Arc::new(plan.file.clone());
    let gate = Arc::new(tokio::sync::Semaphore::new(plan.jobs.max(1)));
    let state = Arc::new(std::sync::Mutex::new((
        0usize,
        0usize,
        Vec::<Record>::new(),
    )));
    let mut tasks = tokio::task::JoinSet::new();
    for (ex, repeat) in todo {
        let (settings, file, gate, state, progress) = (
            settings.clone(),
            file.clone(),
            gate.clone(),
            state.clone(),
            progress.clone(),
        );
        // Taken here, in order: exercises start in the suite's order, `jobs` at a time.
        let permit = gate.acquire_owned().await.ok();
        tasks.spawn(async move {
            let _permit = permit;
            let records = runner::run_exercise(&ex, repeat, &settings).await?;
            for r in &records {
                results::append(&file, r)?;
            }
            let passed = records.iter().any(|r| r.passed);
            let line = format!(
                "{} {} {}",
                ex.key(),
                match records.iter().find(|r| r.passed).map(|r| r.attempt) {
                    Some(1) => "passed (attempt 1)",
                    Some(_) => "passed (attempt 2)",
                    None => "failed",
                },
                records.last().map(|r| r.status.as_str()).unwrap_or("")
            );
            let mut s = state
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            s.0 += 1;
            s.1 += usize::from(passed);
            s.2.extend(records);
            let elapsed = started.elapsed().as_secs_f64();
            let left = total - s.0;
            progress(&Progress {
                done: s.0,
                total,
                passed: s.1,
                skipped,
                last: line,
                eta_secs: (s.0 > 0).then(|| (elapsed / s.0 as f64 * left as f64) as u64),
            });
            Ok(())
        });
    }
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(e),
            Err(e) => return Err(BenchError::Usage(format!("an exercise's task failed: {e}"))),
        }
    }
    let records = std::mem::take(
        &mut state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .2,
    );
    Ok(records)
}

/// The suite's git commit, read without running anything of the suite's (its `.git/HEAD`
/// and the ref it names).
pub fn suite_commit(suite: &Path) -> Option<String> {
    let git = suite.join(".git");
    let head = std::fs::read_to_string(git.join("HEAD")).ok()?;
    let head = head.trim();
    let commit = match head.strip_prefix("ref: ") {
        Some(r) => std::fs::read_to_string(git.join(r))
            .ok()
            .map(|c| c.trim().to_string())
            .or_else(|| {
                std::fs::read_to_string(git.join("packed-refs"))
                    .ok()?
                    .lines()
                    .find(|l| l.ends_with(&format!(" {r}")))
                    .map(|l| l.split(' ').next().unwrap_or("").to_string())
            })?,
        None => head.to_string(),
    };
    (commit.len() == 40 && commit.chars().all(|c| c.is_ascii_hexdigit())).then_some(commit)
}
