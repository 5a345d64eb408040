//! The reports of `slmcode evolve stats` and `slmcode evolve why`: each key's arms, pulls,
//! posterior means and drift profile, and why the next run would pick what it picks.

use slmcode_aci::matching::Rung;
use slmcode_aci::outcome::Drift;

use super::store::{DriftProfile, KeyState};
use super::{explore_rate, key_of, Arm, Evolve};

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

pub(super) fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl Evolve {
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
        out.push_str(&if n == 0 {
            "exploration now: none — with no evidence yet, a run takes the priors' best arm\n"
                .to_string()
        } else {
            format!(
                "exploration now: {:.1}% of runs take a uniformly random arm \
                 (ε = 0.05 · min(1, n/30), n = {n}: none while evidence is thin, 5% from 30 \
                 runs on); the rest sample each arm's Beta and take the highest draw\n",
                eps * 100.0
            )
        });
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
    use crate::evolve::EditOutcome;

    const T0: u64 = 1_750_000_000;

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
        assert!(why.contains("exploration now: 0.3%"), "{why}");
        let best = state.best_mean();
        assert!(
            why.contains(&format!("--no-explore would pick: {best}")),
            "{why}"
        );
        assert!(why.contains("30% indentation"), "{why}");

        let fresh = Evolve::default().why("gemma3", "go");
        assert!(fresh.contains("priors only"), "{fresh}");
        assert!(
            fresh.contains(
                "exploration now: none — with no evidence yet, a run takes the priors' best arm"
            ),
            "{fresh}"
        );
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
}
