//! `verify`: a `done` answer must pass the configured check, run through ws_shell; a failure
//! goes back to the model, and a check that still fails ends the run blocked.

use super::*;

const MODES: [&[&str]; 2] = [&[], &["--no-stream"]];
const CHECK: &str = "import app\nassert app.total([1, None, 2]) == 3, 'total must skip None'\n";

fn done(files: &[&str]) -> Scripted {
    Scripted::Text(
        json!({"status": "done", "summary": "fixed", "files_changed": files, "notes": ""})
            .to_string(),
    )
}

#[test]
fn a_failed_check_goes_back_to_the_model_and_a_passed_one_is_verified() {
    for args in MODES {
        let p = Project::new();
        p.write("app.py", APP);
        p.write("check.py", CHECK);
        let model = FakeModel::start(vec![
            read_app(),
            // Done too early: the check fails and says why.
            done(&["app.py"]),
            fix_app(),
            // The model also claims a file it never changed.
            done(&["app.py", "other.py"]),
        ]);
        let mut all = vec!["--verify", "python3 check.py"];
        all.extend_from_slice(args);
        let r = run_with(
            &p,
            &model,
            "make total skip None",
            &all,
            &[("SLMCODE_SHELL_ALLOW", "python3 check.py")],
        );
        assert_done(&r, &["app.py"]);
        assert_eq!(r.answer["verified"], true, "{}", r.stderr);
        assert_fixed(&p);
        let told = result_sent(&model, 2);
        assert!(
            told.starts_with("The check `python3 check.py` failed, so the task is not done yet:\n")
                && told.contains("TypeError: unsupported operand")
                && told.contains("[exit code 1]")
                && told.ends_with("Fix the cause, then answer again."),
            "{told}"
        );
        assert_eq!(
            r.answer["notes"], "the model also named other.py, which no tool changed",
            "{}",
            r.answer
        );
    }
}

#[test]
fn a_check_that_still_fails_ends_the_run_blocked() {
    for args in MODES {
        let p = Project::new();
        p.write("app.py", APP);
        p.write("check.py", CHECK);
        p.write(
            ".slmcode/config.yaml",
            "verify: python3 check.py\nverify_retries: 1\n",
        );
        let model = FakeModel::start(vec![done(&[]), done(&[])]);
        let r = run_with(
            &p,
            &model,
            "make total skip None",
            args,
            &[("SLMCODE_SHELL_ALLOW", "python3 check.py")],
        );
        assert_eq!(r.answer["status"], "blocked", "{}", r.stderr);
        assert_eq!(r.answer["verified"], false, "{}", r.answer);
        assert!(
            r.answer["notes"]
                .as_str()
                .unwrap()
                .starts_with("the check `python3 check.py` still fails ("),
            "{}",
            r.answer
        );
        assert_eq!(model.requests().len(), 2, "one retry, then blocked");
    }
}

#[test]
fn without_a_check_verified_is_null() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::start(vec![read_app(), fix_app(), done(&["app.py"])]);
    let r = run(&p, &model, "make total skip None");
    assert_done(&r, &["app.py"]);
    assert_eq!(
        r.answer["verified"],
        serde_json::Value::Null,
        "{}",
        r.answer
    );
}

#[test]
fn a_check_that_passed_before_the_change_cannot_verify_it() {
    let p = Project::new();
    p.write("app.py", APP);
    // A check that passes whatever app.py says.
    p.write("check.py", "import app\nassert app.total([1, 2]) == 3\n");
    let model = FakeModel::start(vec![read_app(), fix_app(), done(&["app.py"])]);
    let r = run_with(
        &p,
        &model,
        "make total skip None",
        &["--verify", "python3 check.py"],
        &[("SLMCODE_SHELL_ALLOW", "python3 check.py")],
    );
    assert_done(&r, &["app.py"]);
    assert_eq!(
        r.answer["verified"], "passed before and after",
        "{}",
        r.answer
    );
    let summary = r.answer["summary"].as_str().unwrap();
    assert!(
        summary.contains("passed before the change too, so it cannot show that the change works"),
        "{summary}"
    );
    assert!(
        r.stderr
            .contains("before the change, `python3 check.py` passes already"),
        "{}",
        r.stderr
    );
    // The trajectory keeps both runs of the check.
    let log = p.run_log();
    assert!(
        log.contains("\"verify_before\"") && log.contains("\"verify\""),
        "{log}"
    );
}

#[test]
fn a_check_that_failed_before_and_passes_after_is_true() {
    let p = Project::new();
    p.write("app.py", APP);
    p.write("check.py", CHECK);
    let model = FakeModel::start(vec![read_app(), fix_app(), done(&["app.py"])]);
    let r = run_with(
        &p,
        &model,
        "make total skip None",
        &["--verify", "python3 check.py"],
        &[("SLMCODE_SHELL_ALLOW", "python3 check.py")],
    );
    assert_done(&r, &["app.py"]);
    assert_eq!(r.answer["verified"], true, "{}", r.answer);
    assert!(
        r.stderr.contains(
            "before the change, `python3 check.py` fails, as a check of the change should"
        ),
        "{}",
        r.stderr
    );
}

#[test]
fn done_after_edits_that_changed_nothing_is_asked_once() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::start(vec![
        read_app(),
        // An edit that does not land: nothing changes.
        Scripted::call(
            "ws_edit",
            json!({"path": "app.py", "old_str": "    return total(xs)", "new_str": "    return 0"}),
        ),
        done(&["app.py"]),
        // Asked once; the second done stands.
        done(&[]),
    ]);
    let r = run(&p, &model, "make total skip None");
    assert_eq!(r.answer["status"], "done", "{}", r.stderr);
    assert_eq!(r.answer["files_changed"], json!([]));
    assert_eq!(
        result_sent(&model, 3),
        "Nothing changed — is the task done? Your edits in this task did not change any file. If the task needs no change, answer again with the final JSON and say why in notes; otherwise make the change."
    );
    assert_eq!(model.requests().len(), 4);
    assert_eq!(std::fs::read_to_string(p.path("app.py")).unwrap(), APP);
}

#[test]
fn done_without_trying_an_edit_is_not_questioned() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::start(vec![read_app(), done(&[])]);
    let r = run(&p, &model, "what does total do?");
    assert_eq!(r.answer["status"], "done", "{}", r.stderr);
    assert_eq!(model.requests().len(), 2);
}
