//! The arms of the bandit: the edit formats the harness can offer a model, their stable
//! names and tools, and the prior each starts from.

use std::fmt;

use serde::{Deserialize, Serialize};

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

    /// The arm an edit attempt actually used, from the tool that made it: ws_edit is
    /// search_replace, ws_patch unified_diff, ws_write over an existing file whole_file.
    /// `None` for a ws_write that created a file (every format makes new files so) and for
    /// tools that do not edit: such attempts count for the arm the run taught.
    pub fn used(tool: &str, outcome: &slmcode_aci::Outcome) -> Option<Arm> {
        match tool.trim() {
            "ws_edit" => Some(Arm::SearchReplace),
            "ws_patch" => Some(Arm::UnifiedDiff),
            "ws_write" => match outcome {
                slmcode_aci::Outcome::Written(w) if w.created => None,
                _ => Some(Arm::WholeFile),
            },
            _ => None,
        }
    }

    /// The prior Beta(alpha, beta) of a key that has never been seen. It favours
    /// search_replace, the format small models handle best in general.
    pub(super) fn prior(self) -> (f64, f64) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
