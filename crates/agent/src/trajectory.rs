//! A run's trajectory: every request, reply and tool result of `slmcode run`, one JSON object a
//! line, in `.slmcode/runs/<id>.jsonl` — written as it happens, so an interrupted run leaves
//! what it did. `slmcode runs list|show` reads them back. The API key is never part of a
//! record: it lives only in the backend's request headers. Each line is sealed and chained to
//! the one before ([`state::Log`]): a trajectory shipped with a repository, or a line added to
//! one, is not shown as a run of this user's.

use std::sync::Arc;

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
    log: Arc<state::Log>,
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
        let mut id = format!(
            "{y:04}{mo:02}{d:02}-{:02}{:02}{:02}-{}",
            s / 3600,
            s % 3600 / 60,
            s % 60,
            std::process::id()
        );
        // A session may start several runs in one second (`/clear`, `/resume`): the second
        // and later of a process get a number of their own.
        static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if n > 0 {
            id.push_str(&format!("-{}", n + 1));
        }
        let path = runs_dir().join(&format!("{id}.jsonl"));
        Trajectory {
            id,
            log: Arc::new(state::Log::new(path.clone())),
            path,
        }
    }

    /// The trajectory of an earlier run, to append to (a plan continued with `--resume`).
    pub fn open(id: &str) -> Trajectory {
        let path = runs_dir().join(&format!("{id}.jsonl"));
        Trajectory {
            id: id.to_string(),
            log: Arc::new(state::Log::new(path.clone())),
            path,
        }
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
        let line = serde_json::to_vec(&fields).map_err(|e| {
            ToolError::refused(RefusalClass::Io, format!("could not log the run: {e}"))
        })?;
        self.log.append(jail, &line)
    }
}

/// Year, month, day of a count of days since 1970-01-01 (Howard Hinnant's algorithm).
pub(crate) fn civil_date(days: u64) -> (i64, u32, u32) {
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

/// The records of one run that slmcode wrote, and where lines it did not write begin
/// (1-based), if they do. A log none of whose lines slmcode wrote is refused.
pub fn load(jail: &Jail, id: &str) -> Result<(Vec<Value>, Option<usize>), ToolError> {
    state::check_id(id, "run", "slmcode runs list")?;
    let path = runs_dir().join(&format!("{id}.jsonl"));
    let log = state::read_log(jail, &path).map_err(|e| match e {
        ToolError::Path(slmcode_aci::path::PathError::NotFound { .. }) => ToolError::refused(
            RefusalClass::NotFound,
            format!("no run {id} (see `slmcode runs list`)"),
        ),
        other => other,
    })?;
    if log.untrusted_from == Some(1) {
        return Err(state::untrusted(&path));
    }
    let records = log
        .lines
        .iter()
        .filter_map(|l| serde_json::from_slice(l).ok())
        .collect();
    Ok((records, log.untrusted_from))
}

/// Where run `id`'s trajectory is, project-relative.
pub fn log_path(id: &str) -> RelPath {
    runs_dir().join(&format!("{id}.jsonl"))
}

/// The ids of the runs under `.slmcode/runs/`, oldest first (ids sort by time).
pub fn ids(jail: &Jail) -> Result<Vec<String>, ToolError> {
    let mut ids: Vec<String> = state::list_names(jail, &runs_dir())?
        .into_iter()
        .filter_map(|n| n.strip_suffix(".jsonl").map(str::to_string))
        .filter(|id| state::check_id(id, "run", "slmcode runs list").is_ok())
        .collect();
    ids.sort();
    Ok(ids)
}

/// The process that writes run `id`: its id carries the pid ([`Trajectory::create`]), so a
/// run without a final answer whose process is gone was stopped, not still running.
pub fn writer_pid(id: &str) -> Option<u32> {
    id.split('-').nth(2)?.parse().ok()
}

/// One line per run, oldest first: id, status, turns, task.
pub fn list(jail: &Jail) -> Result<Vec<String>, ToolError> {
    let mut out = Vec::new();
    for id in ids(jail)? {
        // A run whose log slmcode did not write is not one of this user's; lines added to one
        // are left out. Both are reported.
        let records = match load(jail, &id) {
            Ok((records, None)) => records,
            Ok((records, Some(from))) => {
                state::report_ignored(&state::untrusted_lines(
                    &runs_dir().join(&format!("{id}.jsonl")),
                    from,
                ));
                records
            }
            Err(e) if e.class() == RefusalClass::Untrusted => {
                state::report_ignored(&e);
                continue;
            }
            Err(_) => Vec::new(),
        };
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
    let (records, untrusted_from) = load(jail, id)?;
    for r in records {
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
    if let Some(from) = untrusted_from {
        let path = runs_dir().join(&format!("{id}.jsonl"));
        out.push_str(&format!(
            "\n── not shown: {}\n",
            state::untrusted_lines(&path, from)
        ));
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
        let (records, untrusted) = load(&jail, &t.id).unwrap();
        assert_eq!((records.len(), untrusted), (2, None));
        let listed = list(&jail).unwrap();
        assert!(
            listed[0].contains("done") && listed[0].contains("add a flag"),
            "{listed:?}"
        );
        assert!(show(&jail, &t.id).unwrap().contains("task: add a flag"));
        assert!(load(&jail, "../x").is_err());
        assert_eq!(ids(&jail).unwrap(), vec![t.id.clone()]);
        assert_eq!(writer_pid(&t.id), Some(std::process::id()));
        assert_eq!(writer_pid("20261206-101010-42-3"), Some(42));
        assert_eq!(writer_pid("odd"), None);
        assert!(load(&jail, "nope")
            .unwrap_err()
            .to_string()
            .contains("no run nope"));
    }
}
