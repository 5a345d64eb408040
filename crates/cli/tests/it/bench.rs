//! `slmcode bench` against the OpenAI test server, on a tiny suite in the polyglot layout
//! (`crates/cli/tests/bench-suite/`): a timeout, a fix on attempt 2, a model that edits the
//! test, a solve; the JSON lines, the resume, the shards and the merge.

use std::path::{Path, PathBuf};

use crate::common::bin;
use crate::openai::{FakeModel, Scripted};
use serde_json::{json, Value};

fn suite() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bench-suite")
}

fn bench(model: &FakeModel, results: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = bin()
        .args(["bench", "run"])
        .arg(suite())
        .args(["--label", "test", "--endpoint", &model.url, "--results"])
        .arg(results)
        .args(args)
        .env("SLMCODE_RETRY_BASE_MS", "1")
        .output()
        .expect("slmcode bench");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The model's fix of python/greet: read, edit, done.
fn solve_greet() -> [Scripted; 3] {
    [
        Scripted::call("ws_read", json!({"path": "greet.py"})),
        Scripted::call(
            "ws_edit",
            json!({"path": "greet.py", "old_str": "    pass", "new_str": "    return f\"Hello, {name}!\""}),
        ),
        Scripted::final_done("greets"),
    ]
}

/// The model's fix of rust/double: read, edit, done.
fn solve_double() -> [Scripted; 3] {
    [
        Scripted::call("ws_read", json!({"path": "src/lib.rs"})),
        Scripted::call(
            "ws_edit",
            json!({"path": "src/lib.rs", "old_str": "    todo!(\"double {x}\")", "new_str": "    x * 2"}),
        ),
        Scripted::final_done("doubles"),
    ]
}

fn records(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_bench_records_each_attempt_and_resumes_where_it_stopped() {
    let results = tempfile::tempdir().unwrap();
    let mut script = vec![
        // python/add: no answer at all; the attempt times out.
        Scripted::NeverFinishes(false),
        // python/greet: done without a change (the tests fail), then fixed on attempt 2.
        Scripted::final_done("done"),
    ];
    script.extend(solve_greet());
    script.extend([
        // python/subtract: rewrites the test instead (refused), and fails twice.
        Scripted::call("ws_read", json!({"path": "subtract_test.py"})),
        Scripted::call(
            "ws_write",
            json!({"path": "subtract_test.py", "content": "def test_subtract():\n    assert True\n"}),
        ),
        Scripted::final_done("done"),
        Scripted::final_done("done, really"),
        Scripted::final_done("still done"),
    ]);
    // rust/double: solved at once.
    script.extend(solve_double());
    let model = FakeModel::start(script);
    let (code, stderr) = bench(&model, results.path(), &["--timeout", "3"]);
    assert_eq!(code, Some(0), "{stderr}");
    let file = results.path().join("test/results.jsonl");
    let rs = records(&file);
    let seen: Vec<(String, u64, bool, String)> = rs
        .iter()
        .map(|r| {
            (
                format!(
                    "{}/{}",
                    r["language"].as_str().unwrap(),
                    r["exercise"].as_str().unwrap()
                ),
                r["attempt"].as_u64().unwrap(),
                r["passed"].as_bool().unwrap(),
                r["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let s = |k: &str, a: u64, p: bool, st: &str| (k.to_string(), a, p, st.to_string());
    assert_eq!(
        seen,
        vec![
            s("python/add", 1, false, "timeout"),
            // A done whose tests fail ends blocked (the tests are the run's check).
            s("python/greet", 1, false, "blocked"),
            s("python/greet", 2, true, "done"),
            s("python/subtract", 1, false, "blocked"),
            s("python/subtract", 2, false, "blocked"),
            s("rust/double", 1, true, "done"),
        ],
        "{stderr}"
    );
    // What each attempt cost and met, from the run's events.
    let greet2 = &rs[2];
    assert_eq!(greet2["rungs"]["exact"], 1, "{greet2}");
    assert!(
        greet2["turns"].as_u64().unwrap() >= 3 && greet2["prompt_tokens"].as_u64().unwrap() > 0
    );
    assert_eq!(rs[3]["refusals"]["protected"], 1, "{}", rs[3]);
    for r in &rs {
        assert_eq!(r["label"], "test");
        assert_eq!(r["model"], "test-model");
        assert!(r["slmcode_version"].as_str().is_some_and(|v| !v.is_empty()));
        assert!(r["run_id"].as_str().is_some_and(|v| !v.is_empty()));
    }
    // Attempt 2 saw the failing tests.
    let second = model.requests()[2]["messages"].to_string();
    assert!(
        second.contains("The tests failed:") && second.contains("Hello, Ada!"),
        "{second}"
    );
    // The example solution was never in the work directory: no request shows `.meta/`.
    assert!(!model
        .requests()
        .iter()
        .any(|r| r.to_string().contains(".meta")));
    // Progress: a bar, the pass rate, the exercise.
    assert!(stderr.contains("] 4/4 · 2 passed (50%)"), "{stderr}");

    // The report: pass@1 and pass@2 with their intervals, costs, refusals.
    let report = |labels: &[&str]| {
        let out = bin()
            .args(["bench", "report"])
            .args(labels)
            .arg("--results")
            .arg(results.path())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let md = report(&["test"]);
    let _ = std::fs::write(
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-report.md"),
        &md,
    );
    assert!(
        md.contains("| test | test-model | 1 | all | 4 | 25.0% (4.6–69.9) | 50.0% (15.0–85.0) |"),
        "{md}"
    );
    assert!(
        md.contains(
            "| test | test-model | 1 | rust | 1 | 100.0% (20.7–100.0) | 100.0% (20.7–100.0) |"
        ),
        "{md}"
    );
    assert!(md.contains("protected ×1"), "{md}");
    // A second label where python/greet failed: it flipped.
    let other = results.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let flipped: String = rs
        .iter()
        .filter(|r| !(r["exercise"] == "greet" && r["attempt"] == 2))
        .map(|r| {
            let mut r = r.clone();
            r["label"] = json!("other");
            format!("{r}\n")
        })
        .collect();
    std::fs::write(other.join("results.jsonl"), flipped).unwrap();
    let page = results.path().join("report.html");
    let md = report(&["test", "other", "--html", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<svg").count(), 3, "{html}");
    assert!(
        html.contains("pass@1 and pass@2 (%) per language") && html.contains("tokens per exercise")
    );
    assert!(
        html.contains("<li>python/greet: passes with test, not other</li>"),
        "{html}"
    );
    assert!(html.contains("Content-Security-Policy") && !html.contains("<script"));
    assert!(
        md.contains("1 exercise(s) flipped between test and other (pass@2, first repeat):\n\n- python/greet: passes with test, not other"),
        "{md}"
    );

    // Run again: everything is recorded, nothing is asked of the model.
    let idle = FakeModel::start(vec![]);
    let (code, stderr) = bench(&idle, results.path(), &["--timeout", "3"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(idle.requests().is_empty(), "{stderr}");
    assert_eq!(records(&file).len(), 6);
}

#[test]
fn shards_split_the_suite_and_merge_joins_their_results() {
    let results = tempfile::tempdir().unwrap();
    // Shard 2 of 2 of the sorted suite: python/greet and rust/double.
    let model = FakeModel::start(solve_greet().into_iter().chain(solve_double()).collect());
    let (code, stderr) = bench(&model, results.path(), &["--shard", "2/2"]);
    assert_eq!(code, Some(0), "{stderr}");
    let two = results.path().join("test/shard-2-of-2.jsonl");
    let got: Vec<String> = records(&two)
        .iter()
        .map(|r| r["exercise"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(got, vec!["greet", "double"]);
    // Shard 1 of 2, only python (the languages filter), at most one: python/add.
    let model = FakeModel::start(vec![
        Scripted::call("ws_read", json!({"path": "add.py"})),
        Scripted::call(
            "ws_edit",
            json!({"path": "add.py", "old_str": "    pass", "new_str": "    return a + b"}),
        ),
        Scripted::final_done("adds"),
    ]);
    let (code, stderr) = bench(
        &model,
        results.path(),
        &["--shard", "1/2", "--languages", "python", "--max", "1"],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let one = results.path().join("test/shard-1-of-2.jsonl");
    assert_eq!(records(&one).len(), 1);
    assert_eq!(records(&one)[0]["exercise"], "add");
    // Merge: both shards' records in one file.
    let merged = results.path().join("merged");
    let out = bin()
        .args(["bench", "merge"])
        .arg(&one)
        .arg(&two)
        .arg("--into")
        .arg(&merged)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(records(&merged.join("merged.jsonl")).len(), 3);
    // A bad shard says how to write one.
    let (code, stderr) = bench(&model, results.path(), &["--shard", "3/2"]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("--shard takes I/N with 1 <= I <= N, not `3/2`"),
        "{stderr}"
    );
}

#[test]
fn jobs_run_exercises_side_by_side_and_every_line_stays_whole() {
    let results = tempfile::tempdir().unwrap();
    // Every reply is the same "done", so the order two exercises ask in does not matter.
    let model = FakeModel::start(vec![Scripted::final_done("done"); 8]);
    let (code, stderr) = bench(&model, results.path(), &["--jobs", "2"]);
    assert_eq!(code, Some(0), "{stderr}");
    let rs = records(&results.path().join("test/results.jsonl"));
    // Four exercises, two failing attempts each, every line a whole record.
    assert_eq!(rs.len(), 8, "{stderr}");
    let mut keys: Vec<(String, u64)> = rs
        .iter()
        .map(|r| {
            (
                r["exercise"].as_str().unwrap().to_string(),
                r["attempt"].as_u64().unwrap(),
            )
        })
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 8);
    assert!(
        rs.iter()
            .all(|r| r["passed"] == false && r["status"] == "blocked"),
        "{rs:?}"
    );
    assert!(stderr.contains("] 4/4 · 0 passed (0%)"), "{stderr}");
}
