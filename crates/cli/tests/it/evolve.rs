//! The edit-format bandit seen from `slmcode run`: the chosen arm decides the edit tool and the
//! worked example the model gets; a run's edit outcomes update the learned state;
//! `slmcode evolve stats|why|reset` read and clear it.

use crate::common::{bin, Project};
use crate::openai::{FakeModel, Scripted};
use serde_json::{json, Value};

const APP: &str = "def total(xs):\n    return sum(xs)\n";

fn run(p: &Project, model: &FakeModel, data: &std::path::Path, args: &[&str]) -> (Value, String) {
    let out = bin()
        .args([
            "run",
            "make total skip None",
            "--json",
            "--endpoint",
            &model.url,
            "--root",
        ])
        .arg(p.root())
        .args(args)
        .env("XDG_DATA_HOME", data)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    (
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null),
        stderr,
    )
}

fn evolve(data: &std::path::Path, args: &[&str], root: Option<&std::path::Path>) -> String {
    let mut cmd = bin();
    cmd.arg("evolve").args(args).env("XDG_DATA_HOME", data);
    if let Some(r) = root {
        cmd.arg("--root").arg(r);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

#[test]
fn a_run_teaches_the_bandit_and_stats_show_the_drift() {
    let p = Project::new();
    p.write("app.py", APP);
    let data = tempfile::tempdir().unwrap();
    let model = FakeModel::start(vec![
        Scripted::call("ws_read", json!({"path": "app.py"})),
        // Indentation drift: lands on the indentation rung.
        Scripted::call(
            "ws_edit",
            json!({"path": "app.py", "old_str": "def total(xs):\nreturn sum(xs)", "new_str": "def total(xs):\nreturn sum(x for x in xs if x is not None)"}),
        ),
        Scripted::final_done("fixed"),
    ]);
    let (answer, stderr) = run(&p, &model, data.path(), &["--no-explore"]);
    assert_eq!(answer["status"], "done", "{stderr}");
    // A fresh key starts from the priors, which favour search_replace.
    assert!(
        stderr.contains("edit format: search_replace for test-model · python"),
        "{stderr}"
    );
    // Its edit tool is offered first; the other edit tools come last, still callable.
    let tools = model.tool_names(0);
    let at = |name: &str| tools.iter().position(|t| t == name);
    assert!(
        at("ws_edit").is_some()
            && at("ws_edit") < at("ws_patch")
            && tools.last().map(String::as_str) == Some("ws_patch"),
        "{tools:?}"
    );
    let state: Value =
        serde_json::from_slice(&std::fs::read(data.path().join("slmcode/evolve.json")).unwrap())
            .unwrap();
    assert_eq!(state["keys"][0]["family"], "test-model");
    assert_eq!(state["keys"][0]["language"], "python");
    assert_eq!(state["keys"][0]["arms"]["search_replace"]["pulls"], 1);
    let stats = evolve(data.path(), &["stats"], None);
    assert!(
        stats.contains("test-model · python: 100% indentation"),
        "{stats}"
    );
    assert!(stats.contains("search_replace"), "{stats}");
    // The rung report is in the trajectory.
    let text = p.run_log();
    assert!(
        text.contains("\"edit_outcome\":{\"fuzzy\":\"indentation\"}"),
        "{text}"
    );
    assert!(text.contains("\"edit_format\":\"search_replace\""));
    // The tool's typed outcome too, as the tool reported it.
    let call = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["edit_outcome"].is_object())
        .expect("the edit's line");
    assert_eq!(call["outcome"]["outcome"], "edited");
    assert_eq!(call["outcome"]["rung"], "indentation");

    let why = evolve(
        data.path(),
        &["why", "--model", "test-model", "--language", "python"],
        Some(p.root()),
    );
    assert!(
        why.contains("search_replace")
            && why.contains("unified_diff")
            && why.contains("whole_file"),
        "{why}"
    );
    assert!(evolve(data.path(), &["reset"], None).starts_with("forgot everything learned"));
    assert!(!data.path().join("slmcode/evolve.json").exists());
    assert_eq!(
        evolve(data.path(), &["reset"], None).trim(),
        "nothing learned yet"
    );
}

#[test]
fn the_learned_arm_decides_the_edit_tool_and_the_example() {
    let p = Project::new();
    p.write("app.py", APP);
    let data = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(data.path().join("slmcode")).unwrap();
    // Evidence that this model lands unified diffs and fails search/replace on Python.
    let state = json!({"version": 1, "keys": [{
        "family": "test-model", "language": "python", "last_used": slmcode_aci::state::now(),
        "arms": {"search_replace": {"successes": 0.0, "failures": 30.0, "pulls": 30},
                 "unified_diff": {"successes": 30.0, "failures": 0.0, "pulls": 30},
                 "whole_file": {"successes": 0.0, "failures": 10.0, "pulls": 10}}
    }]});
    std::fs::write(data.path().join("slmcode/evolve.json"), state.to_string()).unwrap();
    let model = FakeModel::start(vec![
        Scripted::call("ws_read", json!({"path": "app.py"})),
        Scripted::call(
            "ws_patch",
            json!({"path": "app.py", "patch": "@@ -1,2 +1,2 @@\n def total(xs):\n-    return sum(xs)\n+    return sum(x for x in xs if x is not None)\n"}),
        ),
        Scripted::final_done("patched"),
    ]);
    let (answer, stderr) = run(&p, &model, data.path(), &["--no-explore"]);
    assert_eq!(answer["status"], "done", "{stderr}");
    assert!(stderr.contains("edit format: unified_diff"), "{stderr}");
    let first = &model.requests()[0];
    let tools = model.tool_names(0);
    let at = |name: &str| tools.iter().position(|t| t == name);
    assert!(
        at("ws_patch").is_some()
            && at("ws_patch") < at("ws_edit")
            && tools.last().map(String::as_str) == Some("ws_edit"),
        "{tools:?}"
    );
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("ws_patch {\"path\":\"calc.py\",\"patch\":\"@@ -7,2 +7,2 @@"),
        "{system}"
    );
    assert_eq!(
        std::fs::read_to_string(p.path("app.py")).unwrap(),
        "def total(xs):\n    return sum(x for x in xs if x is not None)\n"
    );
    let state: Value =
        serde_json::from_slice(&std::fs::read(data.path().join("slmcode/evolve.json")).unwrap())
            .unwrap();
    assert_eq!(state["keys"][0]["arms"]["unified_diff"]["pulls"], 31);
}

/// A fresh install, exploring as a user's run does: every first run teaches search/replace,
/// so a model that calls ws_edit lands its edit — streamed and whole. (With uniform
/// exploration on a fresh state, about a third of these runs offered another edit tool.)
#[test]
fn first_runs_on_a_fresh_install_offer_the_edit_tool_small_models_handle() {
    for k in 0..8 {
        let p = Project::new();
        p.write("app.py", APP);
        let data = tempfile::tempdir().unwrap();
        let model = FakeModel::start(vec![
            Scripted::call("ws_read", json!({"path": "app.py"})),
            Scripted::call(
                "ws_edit",
                json!({"path": "app.py", "old_str": "    return sum(xs)", "new_str": "    return sum(x for x in xs if x is not None)"}),
            ),
            Scripted::final_done("fixed"),
        ]);
        let args: &[&str] = if k % 2 == 0 { &[] } else { &["--no-stream"] };
        let (answer, stderr) = run(&p, &model, data.path(), args);
        assert_eq!(answer["status"], "done", "run {k}: {stderr}");
        assert!(
            stderr.contains("edit format: search_replace") && stderr.contains("no evidence yet"),
            "run {k}: {stderr}"
        );
        assert_eq!(
            std::fs::read_to_string(p.path("app.py")).unwrap(),
            "def total(xs):\n    return sum(x for x in xs if x is not None)\n",
            "run {k}: {stderr}"
        );
    }
}

/// The prompt teaches search/replace, the model patches with ws_patch anyway: the patch lands,
/// the learned state credits unified_diff, and an edit-like name no tool has is answered with
/// the edit tools, not a spelling neighbour — streamed and whole.
#[test]
fn another_edit_tool_still_runs_and_teaches_its_own_arm() {
    for args in [&[][..], &["--no-stream"][..]] {
        let p = Project::new();
        p.write("app.py", APP);
        let data = tempfile::tempdir().unwrap();
        let model = FakeModel::start(vec![
            Scripted::call("ws_read", json!({"path": "app.py"})),
            Scripted::call("change_code", json!({"path": "app.py"})),
            Scripted::call(
                "ws_patch",
                json!({"path": "app.py", "patch": "@@ -1,2 +1,2 @@\n def total(xs):\n-    return sum(xs)\n+    return sum(x for x in xs if x is not None)\n"}),
            ),
            Scripted::final_done("fixed"),
        ]);
        let (answer, stderr) = run(&p, &model, data.path(), args);
        assert_eq!(answer["status"], "done", "{stderr}");
        assert!(stderr.contains("edit format: search_replace"), "{stderr}");
        assert_eq!(
            std::fs::read_to_string(p.path("app.py")).unwrap(),
            "def total(xs):\n    return sum(x for x in xs if x is not None)\n",
            "{stderr}"
        );
        let sent = model.requests()[2]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find(|m| m["role"] == "tool")
            .unwrap()["content"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            sent.starts_with("unknown tool \"change_code\". For that, use ws_edit {")
                && sent.contains(" or ws_patch {")
                && !sent.contains("Did you mean"),
            "{sent}"
        );
        let why = evolve(
            data.path(),
            &["why", "--model", "test-model", "--language", "python"],
            Some(p.root()),
        );
        assert!(
            why.lines()
                .any(|l| l.trim_start().starts_with("unified_diff") && l.contains("pulls    1")),
            "{why}"
        );
        assert!(
            why.lines()
                .any(|l| l.trim_start().starts_with("search_replace") && l.contains("pulls    0")),
            "{why}"
        );
    }
}
