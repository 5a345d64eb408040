//! A run's trajectory: every request, reply and tool result of `slmcode run`, one JSON object a
//! line, in `.slmcode/runs/<id>.jsonl` — written as it happens, so an interrupted run leaves
//! what it did. `slmcode runs list|show` reads them back. The API key is never part of a
//! record: it lives only in the backend's request headers.

use serde_json::{json, Value};
use slmcode_aci::boundary::layout;
use slmcode_aci::path::{Jail, RelPath};
use slmcode_aci::state;
use slmcode_aci::RefusalClass;
use slmcode_aci::ToolError;

/// One run's log.
#[derive(Clone, Debug)]
pub struct Trajectory {
    pub id: String,
    pub path: RelPath,
}

fn runs_dir() -> RelPath {
    layout::path(layout::RUNS)
}

impl Trajectory {
    /// A new run id from the time (UTC) and the process: sortable and unique per run.
    pub fn create() -> Trajectory {
        let secs = state::now();
        let (y, mo, d) = civil_date(secs / 86_400);
        let s = secs % 86_400;
        let id = format!(
            "{y:04}{mo:02}{d:02}-{:02}{:02}{:02}-{}",
            s / 3600,
            s % 3600 / 60,
            s % 60,
            std::process::id()
        );
        let path = runs_dir().join(&format!("{id}.jsonl"));
        Trajectory { id, path }
    }

    /// Appends one record, stamped with the time in milliseconds.
    pub fn record(&self, jail: &Jail, kind: &str, mut fields: Value) -> Result<(), ToolError> {
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        if let Value::Object(o) = &mut fields {
            o.insert("type".into(), json!(kind));
            o.insert("t".into(), json!(ms));
        }
        let mut line = serde_json::to_vec(&fields).map_err(|e| {
            ToolError::refused(RefusalClass::Io, format!("could not log the run: {e}"))
        })?;
        line.push(b'\n');
        state::append(jail, &self.path, &line)
    }
}

/// Year, month, day of a count of days since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_date(days: u64) -> (i64, u32, u32) {
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// The records of one run.
pub fn load(jail: &Jail, id: &str) -> Result<Vec<Value>, ToolError> {
    state::check_id(id, "run", "slmcode runs list")?;
    let path = runs_dir().join(&format!("{id}.jsonl"));
    let bytes = slmcode_aci::mutation::read_all(jail, &path).map_err(|e| match e {
        ToolError::Path(slmcode_aci::path::PathError::NotFound { .. }) => ToolError::refused(
            RefusalClass::NotFound,
            format!("no run {id} (see `slmcode runs list`)"),
        ),
        other => other,
    })?;
    Ok(String::from_utf8_lossy(&bytes)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect())
}

/// One line per run, oldest first: id, status, turns, task.
pub fn list(jail: &Jail) -> Result<Vec<String>, ToolError> {
    let mut ids: Vec<String> = state::list_names(jail, &runs_dir())?
        .into_iter()
        .filter_map(|n| n.strip_suffix(".jsonl").map(str::to_string))
        .collect();
    ids.sort();
    let mut out = Vec::new();
    for id in ids {
        let records = load(jail, &id).unwrap_or_default();
        let start = records.iter().find(|r| r["type"] == "start");
        let task = start.and_then(|r| r["task"].as_str()).unwrap_or("?");
        let task = match start.and_then(|r| r["resumed_from"].as_str()) {
            Some(from) => format!("(follows up {from}) {task}"),
            None => task.to_string(),
        };
        let end = records.iter().rev().find(|r| r["type"] == "final");
        let status = end
            .and_then(|r| r["answer"]["status"].as_str())
            .unwrap_or("unfinished");
        let turns = end.and_then(|r| r["turns"].as_u64()).unwrap_or(0);
        let task: String = task.chars().take(70).collect();
        out.push(format!("{id}  {status:<11} {turns:>3} turns  {task}"));
    }
    Ok(out)
}

/// A readable transcript of one run.
pub fn show(jail: &Jail, id: &str) -> Result<String, ToolError> {
    let mut out = String::new();
    for r in load(jail, id)? {
        match r["type"].as_str().unwrap_or("") {
            "start" => {
                out.push_str(&format!(
                    "run {id}: {} at {}\ntask: {}\n",
                    r["model"].as_str().unwrap_or("?"),
                    r["endpoint"].as_str().unwrap_or("?"),
                    r["task"].as_str().unwrap_or("?")
                ));
                if let Some(from) = r["resumed_from"].as_str() {
                    out.push_str(&format!("follows up run {from}\n"));
                }
            }
            "reply" => {
                out.push_str(&format!("\n── turn {} · model\n", r["turn"]));
                if let Some(c) = r["content"].as_str().filter(|c| !c.trim().is_empty()) {
                    out.push_str(c.trim_end());
                    out.push('\n');
                }
                for c in r["tool_calls"].as_array().into_iter().flatten() {
                    out.push_str(&format!(
                        "[native call] {} {}\n",
                        c["function"]["name"].as_str().unwrap_or("?"),
                        c["function"]["arguments"].as_str().unwrap_or("")
                    ));
                }
            }
            "tool" => out.push_str(&format!(
                "── {} {}{}\n{}\n",
                r["name"].as_str().unwrap_or("?"),
                r["args"],
                if r["is_error"] == true {
                    " (error)"
                } else {
                    ""
                },
                r["result"].as_str().unwrap_or("").trim_end()
            )),
            "note" => out.push_str(&format!(
                "── harness: {}\n",
                r["text"].as_str().unwrap_or("")
            )),
            "final" => out.push_str(&format!(
                "\n── final ({} turns)\n{}\n",
                r["turns"],
                serde_json::to_string_pretty(&r["answer"]).unwrap_or_default()
            )),
            _ => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil() {
        assert_eq!(civil_date(0), (1970, 1, 1));
        assert_eq!(civil_date(20_422), (2025, 11, 30));
        assert_eq!(civil_date(11_016), (2000, 2, 29));
    }

    #[test]
    fn records_append_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let jail = Jail::open(dir.path()).unwrap();
        let t = Trajectory::create();
        t.record(
            &jail,
            "start",
            json!({"task": "add a flag", "model": "m", "endpoint": "e"}),
        )
        .unwrap();
        t.record(
            &jail,
            "final",
            json!({"answer": {"status": "done"}, "turns": 3}),
        )
        .unwrap();
        let records = load(&jail, &t.id).unwrap();
        assert_eq!(records.len(), 2);
        let listed = list(&jail).unwrap();
        assert!(
            listed[0].contains("done") && listed[0].contains("add a flag"),
            "{listed:?}"
        );
        assert!(show(&jail, &t.id).unwrap().contains("task: add a flag"));
        assert!(load(&jail, "../x").is_err());
        assert!(load(&jail, "nope")
            .unwrap_err()
            .to_string()
            .contains("no run nope"));
    }
}
