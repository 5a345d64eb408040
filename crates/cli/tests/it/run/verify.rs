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
