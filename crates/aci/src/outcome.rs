//! What a call did, as data beside the text: the rung an edit landed on (per hunk for a
//! patch), whether a pasted gutter was stripped, whether a write created the file, and for a
//! refusal its class. Tools build it where they know it; the registry carries it past the cap
//! untouched; the bandit, the trajectory and MCP's `structuredContent` read it. Nobody parses
//! the words a model reads to learn these facts.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::RefusalClass;
use crate::matching::Rung;

/// What one call did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum Outcome {
    /// The call ran and has nothing typed to report (reads, searches, the shell, moves).
    #[default]
    Done,
    /// An edit landed (ws_edit, ws_patch), or would have (dry run, review).
    Edited(Edit),
    /// ws_write wrote, or found the content already there.
    Written(Write),
    /// ws_shell ran a command: how it ended.
    Ran(Ran),
    /// The call was refused, or its change undone.
    Refused(RefusalClass),
}

/// How a command ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Ran {
    /// Its exit code; `None` when a signal or the timeout ended it.
    pub exit_code: Option<i32>,
    /// It ran out of its time and was killed.
    pub timed_out: bool,
}

impl Ran {
    /// The command succeeded: it exited with code 0.
    pub fn passed(&self) -> bool {
        self.exit_code == Some(0)
    }
}

/// How an edit landed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Edit {
    /// The rung that matched; for a patch the one that bent its text furthest.
    pub rung: Rung,
    /// A pasted ws_read gutter was stripped before it landed.
    pub gutter: bool,
    /// Each hunk of a patch, in order (empty for ws_edit).
    pub hunks: Vec<HunkReport>,
    /// Written, or only shown (dry run) or staged for review.
    pub applied: Applied,
}

impl Edit {
    /// How far the model's text had drifted from the file, as the bandit and the drift profile
    /// count it: the rung when it is not exact, else the gutter, else nothing.
    pub fn drift(&self) -> Option<Drift> {
        if self.rung != Rung::Exact {
            Some(Drift::Rung(self.rung))
        } else if self.gutter {
            Some(Drift::Gutter)
        } else {
            None
        }
    }
}

/// Where one hunk of a patch landed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HunkReport {
    pub rung: Rung,
    /// 1-based first and last line of the file the hunk matched (an insertion: the line it
    /// follows, 0 at the top, twice).
    pub first_line: usize,
    pub last_line: usize,
    /// Lines between where the `@@` numbers put the hunk and where it landed; `None` for a
    /// hunk without numbers.
    pub offset: Option<isize>,
}

/// What ws_write did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Write {
    /// The file did not exist before.
    pub created: bool,
    /// False when the file already held exactly this content.
    pub changed: bool,
    pub applied: Applied,
}

/// What the permission mode did with a change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Applied {
    Written,
    /// Nothing written; the diff was shown.
    DryRun,
    /// Nothing written yet; staged for the user's review.
    Staged,
}

/// How a landed edit's text had drifted: a rung other than exact, or a gutter that had to be
/// stripped. Serialized as the rung's name or `"gutter"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Drift {
    Rung(Rung),
    Gutter,
}

impl Drift {
    /// The stable name used in trajectories and state files.
    pub fn name(self) -> &'static str {
        match self {
            Drift::Gutter => "gutter",
            Drift::Rung(r) => r.name(),
        }
    }
}

impl Serialize for Drift {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Drift {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Drift, D::Error> {
        let name = String::deserialize(d)?;
        if name == "gutter" {
            return Ok(Drift::Gutter);
        }
        Rung::ALL
            .iter()
            .find(|r| r.name() == name)
            .map(|r| Drift::Rung(*r))
            .ok_or_else(|| serde::de::Error::custom(format!("unknown drift \"{name}\"")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_serialize_flat_with_their_kind() {
        let edit = Outcome::Edited(Edit {
            rung: Rung::Indentation,
            gutter: false,
            hunks: vec![],
            applied: Applied::Written,
        });
        assert_eq!(
            serde_json::to_value(&edit).unwrap(),
            serde_json::json!({"outcome": "edited", "rung": "indentation", "gutter": false, "hunks": [], "applied": "written"})
        );
        let refused = Outcome::Refused(RefusalClass::Ambiguous { count: 2 });
        assert_eq!(
            serde_json::to_value(&refused).unwrap(),
            serde_json::json!({"outcome": "refused", "class": "ambiguous", "count": 2})
        );
        assert_eq!(
            serde_json::to_value(Outcome::Done).unwrap(),
            serde_json::json!({"outcome": "done"})
        );
    }

    #[test]
    fn drift_is_the_rung_then_the_gutter() {
        let mut e = Edit {
            rung: Rung::Exact,
            gutter: false,
            hunks: vec![],
            applied: Applied::Written,
        };
        assert_eq!(e.drift(), None);
        e.gutter = true;
        assert_eq!(e.drift(), Some(Drift::Gutter));
        e.rung = Rung::BlankLines;
        assert_eq!(e.drift(), Some(Drift::Rung(Rung::BlankLines)));
        for d in Rung::ALL
            .iter()
            .map(|r| Drift::Rung(*r))
            .chain([Drift::Gutter])
        {
            let back: Drift = serde_json::from_value(serde_json::to_value(d).unwrap()).unwrap();
            assert_eq!(back, d);
        }
    }
}
