//! One exercise, as a bench runs it: a fresh copy in a temporary directory, its instructions
//! as the task, its tests protected, a run; then its tests, through ws_shell's policy and
//! sandbox like any command. Failing, a second attempt continues the same conversation with
//! the failing output's tail (pass@1 and pass@2, as aider reports them). What each attempt
//! cost is read from the run's events.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::json;
use slmcode_aci::config::{ConfigFile, Layer};
use slmcode_aci::path::Jail;
use slmcode_aci::{Config, Outcome, Registry, Workspace};
use tokio_util::sync::CancellationToken;

use super::results::Record;
use super::suite::{copy_exercise, test_command, Exercise};
use super::BenchError;
use crate::launch::{self, LaunchOptions, Said};
use crate::run::{Agent, Event, RunError, Verified};

/// How a bench runs its exercises.
#[derive(Clone, Debug)]
pub struct Settings {
    pub label: String,
    /// A run-settings file (`--config`), applied over the user's config.
    pub config: Option<(String, String)>,
    /// The model, over the configs.
    pub model: Option<String>,
    /// The endpoint, over the configs.
    pub endpoint: Option<String>,
    /// Test commands by language, over the detected ones.
    pub test_commands: BTreeMap<String, String>,
    pub stream: bool,
    /// The longest one attempt may take.
    pub attempt_timeout: Duration,
    pub suite_commit: Option<String>,
}

/// What one attempt's events added up to.
#[derive(Clone, Debug, Default)]
struct Counts {
    turns: usize,
    prompt_tokens: u64,
    completion_tokens: u64,
    cached_tokens: u64,
    rungs: BTreeMap<String, u32>,
    refusals: BTreeMap<String, u32>,
}

impl Counts {
    fn see(&mut self, event: &Event) {
        match event {
            Event::TurnEnded { .. } => self.turns += 1,
            Event::Reply {
                tokens,
                prompt_tokens,
                cached_tokens,
                ..
            } => {
                self.completion_tokens += tokens;
                self.prompt_tokens += prompt_tokens.unwrap_or(0);
                self.cached_tokens += cached_tokens.unwrap_or(0);
            }
            Event::Result { outcome, .. } => match outcome {
                Outcome::Edited(e) => *self.rungs.entry(e.rung.name().into()).or_default() += 1,
                Outcome::Refused(class) => {
                    let name = serde_json::to_value(class)
                        .ok()
                        .and_then(|v| v["class"].as_str().map(str::to_string))
                        .unwrap_or_else(|| "other".into());
                    *self.refusals.entry(name).or_default() += 1;
                }
                _ => {}
            },
            _ => {}
        }
    }
}

/// The config an exercise's run works under: the user's, the bench's `--config`, the model;
/// its test files protected.
fn config_for(jail: &Jail, ex: &Exercise, settings: &Settings) -> Result<Config, BenchError> {
    let user = crate::user_config::UserConfig::settings_file()
        .map_err(|e| BenchError::Usage(e.to_string()))?;
    let (mut config, _) = Config::load(jail, user.as_ref(), std::env::vars(), |_| false)
        .map_err(|e| BenchError::Usage(e.to_string()))?;
    if let Some((source, text)) = &settings.config {
        let mut warnings = Vec::new();
        config
            .apply_file(
                &ConfigFile {
                    layer: Layer::User,
                    source: source.clone(),
                    text: text.clone(),
                },
                &mut warnings,
            )
            .map_err(|e| BenchError::Usage(e.to_string()))?;
    }
    if let Some(m) = &settings.model {
        config
            .apply_flag("model", m, "--model")
            .map_err(|e| BenchError::Usage(e.to_string()))?;
    }
    if let Some(e) = &settings.endpoint {
        config
            .apply_flag("endpoint", e, "--endpoint")
            .map_err(|e| BenchError::Usage(e.to_string()))?;
    }
    config
        .add_protect(&ex.test, "the exercise's tests")
        .map_err(|e| BenchError::Usage(e.to_string()))?;
    // The tests are the run's check, and a failure does not go back to the model within the
    // attempt: attempt 2 is where it sees them (pass@1, then pass@2).
    config.verify_retries = 0;
    Ok(config)
}

/// Runs the exercise's tests in its work directory: passed, and what they printed.
fn run_tests(ws: &mut Workspace, command: &str) -> (bool, String) {
    let timeout = ws.config.shell_timeout_max;
    let result = Registry::coding().call(
        ws,
        "ws_shell",
        &json!({"command": command, "timeout_sec": timeout}),
    );
    let passed = matches!(&result.outcome, Outcome::Ran(r) if r.passed());
    (passed, result.text)
}

/// The last `n` characters of the tests' output: where a test run says what failed.
fn tail(text: &str, n: usize) -> String {
    let total = text.chars().count();
    text.chars().skip(total.saturating_sub(n)).collect()
}

/// One exercise in one repeat: attempt 1, and attempt 2 when its tests failed. A record per
/// attempt.
pub async fn run_exercise(
    ex: &Exercise,
    repeat: u32,
    settings: &Settings,
) -> Result<Vec<Record>, BenchError> {
    let command = test_command(ex, &settings.test_commands).ok_or_else(|| {
        BenchError::Suite(format!(
            "no test command for {} (set one for {} in the suite config)",
            ex.key(),
            ex.language
        ))
    })?;
    let work = tempfile::tempdir().map_err(|e| BenchError::Usage(e.to_string()))?;
    copy_exercise(ex, work.path())
        .map_err(|e| BenchError::Suite(format!("copying {}: {e}", ex.key())))?;
    let jail = Jail::open(work.path()).map_err(|e| BenchError::Usage(e.to_string()))?;
    let mut config = config_for(&jail, ex, settings)?;
    config.verify = Some(command.clone());
    let ws = Workspace::new(jail, config);
    let task = ex.task();
    let mut said = Vec::new();
    let launch = launch::prepare(
        &ws,
        LaunchOptions {
            stream: settings.stream,
            explore: false,
            task: Some(&task),
            follows: None,
            model_flag: settings.model.is_some(),
            role_model: None,
            notices: None,
        },
        &mut |s: Said| said.push(s),
    )
    .await?;
    let model = launch.settings.model.clone();
    let counts: Arc<Mutex<Counts>> = Arc::default();
    let seen = counts.clone();
    let workspace = Arc::new(Mutex::new(ws));
    let mut agent = launch.start(
        &task,
        workspace.clone(),
        Box::new(move |e: &Event| seen.lock().unwrap_or_else(PoisonError::into_inner).see(e)),
    );
    let run_id = agent.trajectory().id.clone();
    let mut records = Vec::new();
    for attempt in 1..=2u32 {
        let started = Instant::now();
        let cancel = CancellationToken::new();
        let step = if attempt == 1 {
            timed(agent.first_message(cancel.clone()), settings, &cancel).await
        } else {
            let failing = records
                .last()
                .map(|(_, out): &(Record, String)| tail(out, 3000))
                .unwrap_or_default();
            let message = format!(
                "The tests failed:\n{failing}\nFix the code so that they pass. Do not change the tests."
            );
            timed(
                follow(&mut agent, &message, cancel.clone()),
                settings,
                &cancel,
            )
            .await
        };
        let (status, verified) = match step {
            Ok(Ok(o)) => (o.answer.status, o.answer.verified),
            Ok(Err(e)) => (format!("error: {e}"), None),
            Err(()) => ("timeout".into(), None),
        };
        // The run's own check said it passed; otherwise (failed, or never checked: blocked,
        // stopped) the tests run here, for the verdict and the output attempt 2 sees.
        let (passed, output) = match verified {
            Some(Verified::Passed | Verified::PassedBeforeAndAfter) => (true, String::new()),
            _ => {
                let mut ws = workspace.lock().unwrap_or_else(PoisonError::into_inner);
                run_tests(&mut ws, &command)
            }
        };
        let c = std::mem::take(&mut *counts.lock().unwrap_or_else(PoisonError::into_inner));
        let record = Record {
            label: settings.label.clone(),
            language: ex.language.clone(),
            exercise: ex.name.clone(),
            attempt,
            repeat,
            passed,
            status: status.clone(),
            turns: c.turns,
            prompt_tokens: c.prompt_tokens,
            completion_tokens: c.completion_tokens,
            cached_tokens: c.cached_tokens,
            wall_ms: started.elapsed().as_millis() as u64,
            rungs: c.rungs,
            refusals: c.refusals,
            run_id: run_id.clone(),
            model: model.clone(),
            settings: settings
                .config
                .as_ref()
                .map(|(source, text)| json!({"config": source, "text": text}))
                .unwrap_or(serde_json::Value::Null),
            slmcode_version: env!("CARGO_PKG_VERSION").to_string(),
            suite_commit: settings.suite_commit.clone(),
        };
        let stop = passed || status == "timeout" || status.starts_with("error");
        records.push((record, output));
        if stop {
            break;
        }
    }
    Ok(records.into_iter().map(|(r, _)| r).collect())
}

async fn follow(
    agent: &mut Agent,
    message: &str,
    cancel: CancellationToken,
) -> Result<crate::run::Outcome, RunError> {
    agent.follow(message, cancel).await
}

/// `run` within the attempt's time: `Err` when it ran out (the run is cancelled, so its
/// request and commands stop).
async fn timed<F: std::future::Future<Output = Result<crate::run::Outcome, RunError>>>(
    run: F,
    settings: &Settings,
    cancel: &CancellationToken,
) -> Result<Result<crate::run::Outcome, RunError>, ()> {
    tokio::pin!(run);
    tokio::select! {
        r = &mut run => Ok(r),
        _ = tokio::time::sleep(settings.attempt_timeout) => {
            cancel.cancel();
            // The run ends at once when cancelled; its outcome is the timeout.
            let _ = run.await;
            Err(())
        }
    }
}
