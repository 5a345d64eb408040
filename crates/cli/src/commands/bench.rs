//! `slmcode bench`: run a suite of exercises in the polyglot layout against a model, record
//! each exercise × attempt × repeat as a JSON line, resume an interrupted bench, take a
//! deterministic shard, and merge shards' results.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Subcommand;
use slmcode_agent::bench::{self, runner, suite, Progress};

use crate::terminal::{self, errln};

/// The arguments of `slmcode bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    action: BenchAction,
}

#[derive(Subcommand)]
enum BenchAction {
    /// Run SUITE (a directory in the layout of Aider's polyglot benchmark) and record the
    /// results under RESULTS/LABEL/; what is recorded there already is skipped.
    Run(Box<RunBench>),
    /// The report of one or more labels: pass@1 and pass@2 per language and overall with 95%
    /// intervals, tokens and time per exercise, the common refusals; for two labels, what
    /// flipped. Markdown on stdout.
    Report {
        labels: Vec<String>,
        /// Where labels' results live.
        #[arg(long, default_value = "bench/results")]
        results: PathBuf,
        /// Also write the report as a page with charts (pass rate per language, tokens and
        /// time per exercise) to this file.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
    },
    /// Join shards' result files (or directories) into INTO/merged.jsonl.
    Merge {
        sources: Vec<PathBuf>,
        #[arg(long)]
        into: PathBuf,
    },
}

/// The arguments of `slmcode bench run`.
#[derive(clap::Args)]
struct RunBench {
    suite: PathBuf,
    /// The name the results go under (default: the model's name, else "default").
    #[arg(long)]
    label: Option<String>,
    /// Where labels' results live.
    #[arg(long, default_value = "bench/results")]
    results: PathBuf,
    /// Only these languages (comma-separated: python,rust).
    #[arg(long, value_delimiter = ',')]
    languages: Vec<String>,
    /// Only exercises whose name matches this glob.
    #[arg(long, value_name = "GLOB")]
    exercises: Option<String>,
    /// At most this many exercises (after the shard is taken).
    #[arg(long)]
    max: Option<usize>,
    /// Independent runs of each exercise, each recorded.
    #[arg(long, default_value_t = 1)]
    repeat: u32,
    /// The model (default: the configs).
    #[arg(long)]
    model: Option<String>,
    /// The model server (default: the configs).
    #[arg(long)]
    endpoint: Option<String>,
    /// A file of run settings (any config key: edit format, think_budget, plan roles…).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Exercises at once (a local server usually serves one request well).
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Take shard I of N: every Nth exercise from the Ith, so machines split a bench with
    /// no coordination.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// The longest one attempt may take, in seconds.
    #[arg(long, default_value_t = 1800)]
    timeout: u64,
    /// Ask for whole replies instead of streamed ones.
    #[arg(long)]
    no_stream: bool,
}

/// `slmcode bench …`.
pub fn run(args: BenchArgs) -> Result<ExitCode> {
    match args.action {
        BenchAction::Report {
            labels,
            results,
            html,
        } => {
            let report = bench::report::Report::build(&results, &labels)?;
            if let Some(path) = html {
                std::fs::write(&path, report.html()?)
                    .with_context(|| format!("cannot write {}", path.display()))?;
                errln!("wrote {}", path.display());
            }
            write!(terminal::stdout(), "{}", report.markdown)?;
            Ok(ExitCode::SUCCESS)
        }
        BenchAction::Merge { sources, into } => {
            if sources.is_empty() {
                bail!("name the shards' result files or directories to merge");
            }
            let (kept, dropped) = bench::results::merge(&sources, &into)?;
            writeln!(
                terminal::stdout(),
                "merged {kept} record(s) into {}{}",
                into.join("merged.jsonl").display(),
                if dropped > 0 {
                    format!(" ({dropped} duplicate(s) dropped)")
                } else {
                    String::new()
                }
            )?;
            Ok(ExitCode::SUCCESS)
        }
        BenchAction::Run(run) => {
            let RunBench {
                suite: suite_dir,
                label,
                results,
                languages,
                exercises,
                max,
                repeat,
                model,
                endpoint,
                config,
                jobs,
                shard,
                timeout,
                no_stream,
            } = *run;
            let shard = shard.as_deref().map(suite::parse_shard).transpose()?;
            let mut list = suite::discover(&suite_dir, &languages, exercises.as_deref())?;
            if let Some((i, n)) = shard {
                list = suite::shard(list, i, n);
            }
            if let Some(m) = max {
                list.truncate(m);
            }
            if list.is_empty() {
                bail!("no exercises to run in {}", suite_dir.display());
            }
            let config = match &config {
                Some(path) => Some((
                    path.display().to_string(),
                    std::fs::read_to_string(path)
                        .with_context(|| format!("cannot read {}", path.display()))?,
                )),
                None => None,
            };
            let label = label
                .or_else(|| model.clone())
                .unwrap_or_else(|| "default".into());
            if label.is_empty() || label.contains(['/', '\\']) || label.starts_with('.') {
                bail!("--label must be a plain name, not `{label}`");
            }
            let dir = results.join(&label);
            let settings = runner::Settings {
                label: label.clone(),
                config,
                model,
                endpoint,
                test_commands: suite::test_commands_of(&suite_dir)?,
                stream: !no_stream,
                attempt_timeout: Duration::from_secs(timeout.max(1)),
                suite_commit: bench::suite_commit(&suite_dir),
            };
            let plan = bench::Plan {
                exercises: list,
                repeats: repeat.max(1),
                jobs,
                file: bench::results_file(&dir, shard),
                dir: dir.clone(),
            };
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .context("cannot start the async runtime")?;
            let records = runtime.block_on(bench::run(plan, settings, Arc::new(show)))?;
            let exercises: std::collections::BTreeSet<(String, String, u32)> = records
                .iter()
                .map(|r| (r.language.clone(), r.exercise.clone(), r.repeat))
                .collect();
            let passed = records.iter().filter(|r| r.passed).count();
            errln!(
                "ran {} exercise run(s): {passed} passed · results in {}",
                exercises.len(),
                dir.display()
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// A progress line on stderr after each exercise: a bar, the pass rate so far, an ETA.
fn show(p: &Progress) {
    let width = 20;
    let filled = (p.done * width).checked_div(p.total).unwrap_or(width);
    let bar: String = "#".repeat(filled) + &".".repeat(width - filled);
    let rate = (p.passed * 100).checked_div(p.done).unwrap_or(0);
    let eta = match p.eta_secs {
        Some(s) if p.done < p.total => format!(" · ETA {}m{:02}s", s / 60, s % 60),
        _ => String::new(),
    };
    let skipped = if p.skipped > 0 {
        format!(" · {} already recorded", p.skipped)
    } else {
        String::new()
    };
    errln!(
        "[{bar}] {}/{} · {} passed ({rate}%){eta}{skipped} · {}",
        p.done,
        p.total,
        p.passed,
        p.last
    );
}
