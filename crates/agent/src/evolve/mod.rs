//! The evolve bandit: learns, per (model family, language), which edit format a model does
//! best with.
//!
//! Small models differ a lot in which edit format they can produce reliably: one lands
//! search/replace blocks but mangles diffs, another writes clean unified diffs. Instead of
//! hard-coding a table, the harness offers one format per run (an *arm*), reads what the edit
//! tools reported as data ([`EditOutcome::of`]), turns that into a reward in [0, 1]
//! ([`reward()`]) and updates a Beta posterior per arm ([`Evolve::record`]). The next run
//! picks an arm by Thompson sampling with a decaying exploration rate ([`Evolve::choose`]).
//!
//! The state is a small JSON file (see [`Evolve::default_path`]), written atomically and
//! bounded in size. A corrupt file is reported as an error, never a crash.
//!
//! The parts: `arm` (the edit formats and their priors), `family` (model id → family),
//! `reward` (edit outcomes and the reward), `store` (the state, its file, pruning and the
//! bound on keys) and `report` (`slmcode evolve stats` and `why`); this module picks and
//! learns. Languages are the keys of
//! [`slmcode_aci::lang`], re-exported here as [`language_of`] and [`dominant_language`].

mod arm;
mod family;
mod report;
mod reward;
mod store;

use std::collections::BTreeMap;

use rand::RngExt as _;
use rand_distr::{Beta, Distribution as _};

pub use arm::Arm;
pub use family::model_family;
pub use reward::{reward, EditOutcome};
pub use slmcode_aci::lang::{dominant as dominant_language, key_of as language_of};
pub use store::EvolveError;

use report::plural;
use store::KeyState;

/// Evidence is multiplied by this on every record of a key. Half-life: ln 0.5 / ln 0.98 ≈ 34
/// runs of that key; in steady state an arm holds at most 1 / (1 − 0.98) = 50 runs' worth.
const DECAY: f64 = 0.98;
/// Uniform exploration on top of Thompson sampling: none while evidence is thin, growing with
/// the runs of a key to a bounded few percent, ε(n) = FLOOR · min(1, n / RAMP).
const EXPLORE_FLOOR: f64 = 0.05;
const EXPLORE_RAMP: f64 = 30.0;

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

/// The rate of uniformly random picks after `n` runs of a key: ε(n) = 0.05 · min(1, n/30).
/// None for a new key — Thompson sampling over the priors already explores, and a first run
/// should get the format most likely to work — 2.5% after 15 runs, and 5% from 30 runs on, so
/// an arm that has become better is still re-tested.
fn explore_rate(n: u64) -> f64 {
    EXPLORE_FLOOR * (n as f64 / EXPLORE_RAMP).min(1.0)
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

impl Evolve {
    /// Picks the arm for the next run of this key.
    ///
    /// A key with no evidence yet takes its priors' best arm: a first run gets the format
    /// most likely to work. With evidence and `explore`, a run explores with probability
    /// ε(n) = 0.05 · min(1, n/30) (n = runs recorded for the key) by taking a uniformly random
    /// arm; otherwise it samples each arm's Beta posterior and takes the highest draw (Thompson
    /// sampling). Without `explore` (the CLI's
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
        if n == 0 {
            let arm = state.best_mean();
            return Choice {
                arm,
                explored: false,
                reason: format!(
                    "no evidence yet: the priors' best arm, {arm} {:.2}",
                    state.mean(arm)
                ),
            };
        }
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
        let paired: Vec<(Arm, EditOutcome)> = outcomes.iter().map(|o| (arm, *o)).collect();
        self.record_run(family, language, &paired, now);
    }

    /// [`Evolve::record`] for a run whose edit attempts used several formats (the prompt
    /// teaches one, the model may call another edit tool): each arm learns from its own
    /// attempts, and the key's evidence decays once for the run.
    pub fn record_run(
        &mut self,
        family: &str,
        language: &str,
        attempts: &[(Arm, EditOutcome)],
        now: u64,
    ) {
        let by_arm: Vec<(Arm, f64)> = Arm::ALL
            .iter()
            .filter_map(|arm| {
                let mine: Vec<EditOutcome> = attempts
                    .iter()
                    .filter(|(a, _)| a == arm)
                    .map(|(_, o)| *o)
                    .collect();
                reward(&mine).map(|r| (*arm, r))
            })
            .collect();
        if by_arm.is_empty() {
            return;
        }
        let outcomes: Vec<EditOutcome> = attempts.iter().map(|(_, o)| *o).collect();
        let key = key_of(family, language);
        let state = self.keys.entry(key.clone()).or_default();
        for a in Arm::ALL {
            let s = state.arms.get_mut(a);
            s.successes *= DECAY;
            s.failures *= DECAY;
        }
        for (arm, r) in by_arm {
            let s = state.arms.get_mut(arm);
            s.successes += r;
            s.failures += 1.0 - r;
            s.pulls = s.pulls.saturating_add(1);
        }
        state.last_used = now;
        let drift = &mut state.drift;
        for outcome in &outcomes {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng as _;
    use slmcode_aci::matching::Rung;
    use slmcode_aci::outcome::Drift;

    const T0: u64 = 1_750_000_000;

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

    /// A run that taught search_replace but whose model patched with ws_patch teaches
    /// unified_diff: each arm learns from its own attempts, and the run decays evidence once.
    #[test]
    fn each_arm_learns_from_the_attempts_that_used_it() {
        let mut evolve = Evolve::default();
        evolve.record_run(
            "m",
            "rust",
            &[
                (Arm::UnifiedDiff, EditOutcome::Exact),
                (Arm::SearchReplace, EditOutcome::Refused),
            ],
            T0,
        );
        let state = &evolve.keys[&key_of("m", "rust")];
        assert_eq!(state.arms.get(Arm::UnifiedDiff).pulls, 1);
        assert!((state.arms.get(Arm::UnifiedDiff).successes - 1.0).abs() < 1e-12);
        assert_eq!(state.arms.get(Arm::SearchReplace).pulls, 1);
        assert!((state.arms.get(Arm::SearchReplace).failures - 1.0).abs() < 1e-12);
        assert_eq!(state.arms.get(Arm::WholeFile).pulls, 0);
        assert_eq!(state.drift.edits, 2);
        use slmcode_aci::outcome::{Outcome, Write};
        let written = |created| {
            Outcome::Written(Write {
                created,
                changed: true,
                applied: slmcode_aci::outcome::Applied::Written,
            })
        };
        assert_eq!(
            Arm::used("ws_patch", &Outcome::Done),
            Some(Arm::UnifiedDiff)
        );
        assert_eq!(
            Arm::used("ws_edit", &Outcome::Done),
            Some(Arm::SearchReplace)
        );
        assert_eq!(Arm::used("ws_write", &written(false)), Some(Arm::WholeFile));
        assert_eq!(Arm::used("ws_write", &written(true)), None);
        assert_eq!(Arm::used("ws_read", &Outcome::Done), None);
    }

    #[test]
    fn exploration_grows_with_evidence_to_a_bounded_floor() {
        assert_eq!(explore_rate(0), 0.0);
        assert!((explore_rate(15) - 0.025).abs() < 1e-12);
        assert!(explore_rate(10) < explore_rate(20));
        assert!((explore_rate(30) - 0.05).abs() < 1e-12);
        assert_eq!(explore_rate(100_000), 0.05);
        assert_eq!(explore_rate(u64::MAX), 0.05);
    }

    /// A fresh install: every first run of a small model gets search_replace; a family whose
    /// evidence favours another arm gets that arm.
    #[test]
    fn first_runs_follow_the_priors_and_evidence_wins() {
        let fresh = Evolve::default();
        let mut rng = StdRng::seed_from_u64(42);
        let picks = (0..200)
            .filter(|_| {
                fresh.choose("qwen2.5-coder", "python", true, &mut rng).arm == Arm::SearchReplace
            })
            .count();
        assert!(picks >= 180, "{picks}/200");
        let mut learned = Evolve::default();
        for round in 0..40 {
            learned.record(
                "deepseek-coder",
                "go",
                Arm::UnifiedDiff,
                &[EditOutcome::Exact; 3],
                T0 + round,
            );
            learned.record(
                "deepseek-coder",
                "go",
                Arm::SearchReplace,
                &[EditOutcome::Refused; 3],
                T0 + round,
            );
        }
        let picks = (0..200)
            .filter(|_| {
                learned.choose("deepseek-coder", "go", true, &mut rng).arm == Arm::UnifiedDiff
            })
            .count();
        assert!(picks >= 180, "{picks}/200");
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

    #[test]
    fn choice_reasons_explain_the_pick() {
        let fresh = Evolve::default().choose("m", "go", true, &mut StdRng::seed_from_u64(5));
        assert!(
            fresh
                .reason
                .starts_with("no evidence yet: the priors' best arm, search_replace"),
            "{}",
            fresh.reason
        );
        let mut evolve = Evolve::default();
        for round in 0..40 {
            evolve.record("m", "go", Arm::WholeFile, &[EditOutcome::Exact], T0 + round);
        }
        let mut rng = StdRng::seed_from_u64(5);
        let mut saw_explore = false;
        let mut saw_thompson = false;
        for _ in 0..400 {
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
