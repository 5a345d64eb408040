//! What a run teaches: the outcome of each edit attempt, read from the tools' typed
//! outcomes ([`EditOutcome::of`]), and the reward in [0, 1] a run's attempts earn the arm
//! ([`reward`]).

use serde::{Deserialize, Serialize};
use slmcode_aci::matching::Rung;
use slmcode_aci::outcome::Drift;
use slmcode_aci::{Outcome, RefusalClass};

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
            Outcome::Done | Outcome::Ran(_) => None,
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
