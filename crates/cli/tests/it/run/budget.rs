//! The context budget as the server counts it: no request's prompt and reply room together
//! overrun the window (the estimate is calibrated by the server's own counts), compaction
//! frees room in one step so most requests extend the one before (the prompt cache holds),
//! the prompt cache's share is shown, and a prompt whose fixed part leaves no room is said.

use super::*;

/// `n` reads of files of `lines` lines each, then done.
fn reads(p: &Project, n: usize, lines: usize) -> Vec<Scripted> {
    let body: String = (1..=lines)
        .map(|i| format!("let value_{i} = compute(input_{i}, {i}); // a line of code\n"))
        .collect();
    let mut script = Vec::new();
    for i in 0..n {
        p.write(&format!("f{i}.rs"), &body);
        script.push(Scripted::call(
            "ws_read",
            json!({"path": format!("f{i}.rs")}),
        ));
    }
    script.push(Scripted::final_done("read them"));
    script
}

#[test]
fn no_request_overruns_the_window_as_the_server_counts_it() {
    let p = Project::new();
    // Code makes more tokens than slmcode's 3.5 characters a token: this server counts one
    // per 2 characters, 1.75 times the estimate.
    let model = FakeModel::start(reads(&p, 8, 30)).counting(2.0);
    let window = 8000u64;
    let r = run_with(
        &p,
        &model,
        "read the files",
        &[],
        &[("SLMCODE_CONTEXT_WINDOW", "8000")],
    );
    assert_done(&r, &[]);
    let counted = model.counted();
    let asked: Vec<u64> = model
        .requests()
        .iter()
        .map(|r| r["max_tokens"].as_u64().unwrap())
        .collect();
    // From the second request on, the estimate has the server's counts to go by.
    for i in 1..counted.len() {
        assert!(
            counted[i] + asked[i] <= window,
            "request {i}: {} prompt tokens + {} reply tokens > {window}\n{}",
            counted[i],
            asked[i],
            r.stderr
        );
    }
    assert!(
        r.stderr.contains("old tool result(s) elided"),
        "{}",
        r.stderr
    );
}

#[test]
fn compaction_frees_room_in_one_step_so_the_prefix_holds() {
    for args in [&[][..], &["--no-stream"][..]] {
        compaction_case(args);
    }
}

fn compaction_case(args: &[&str]) {
    let p = Project::new();
    let model = FakeModel::start(reads(&p, 14, 40));
    let r = run_with(&p, &model, "read the files", args, &[]);
    assert_done(&r, &[]);
    let requests = model.requests();
    let messages = |i: usize| requests[i]["messages"].as_array().unwrap().clone();
    let rewrites = (1..requests.len())
        .filter(|&i| {
            let (before, now) = (messages(i - 1), messages(i));
            now.len() < before.len() || now[..before.len()] != before[..]
        })
        .count();
    let last = serde_json::to_string(&messages(requests.len() - 1)).unwrap();
    let elided = last.matches("[elided to save context").count();
    assert!(elided >= 4, "{elided} elided\n{}", r.stderr);
    // One rewrite of the prefix per compaction, and each compaction frees room for several
    // turns (eliding one result a turn would rewrite it on every turn).
    assert!(
        rewrites <= 3 && rewrites * 3 <= elided,
        "{rewrites} requests did not extend the one before ({elided} results elided)\n{}",
        r.stderr
    );
    // The server said how much of each prompt it served from its cache, and it is shown.
    let cached: Vec<&str> = r.stderr.lines().filter(|l| l.contains(" cached")).collect();
    assert!(cached.len() >= 10, "{}", r.stderr);
    assert!(
        !r.stderr.contains(" 0 cached\n") || cached.len() > 1,
        "{}",
        r.stderr
    );
    let shown_cached = |l: &&str| {
        l.rsplit(", ")
            .next()
            .and_then(|t| t.trim_end_matches(" cached").parse::<u64>().ok())
            .unwrap_or(0)
    };
    assert!(
        cached.iter().filter(|l| shown_cached(l) > 0).count() >= 9,
        "{}",
        r.stderr
    );
}

#[test]
fn a_fixed_prompt_too_big_for_the_window_is_said() {
    let p = Project::new();
    let rules: String = (0..120)
        .map(|i| {
            format!("Rule {i}: always keep the module layout and name every helper clearly.\n")
        })
        .collect();
    p.write("AGENTS.md", &rules);
    let model = FakeModel::start(vec![Scripted::final_done("nothing")]);
    let r = run_with(
        &p,
        &model,
        "look",
        &[],
        &[("SLMCODE_CONTEXT_WINDOW", "2048")],
    );
    assert!(
        r.stderr
            .contains("eliding old results cannot bring it under")
            && r.stderr.contains("Raise context_window"),
        "{}",
        r.stderr
    );
    assert_eq!(
        r.stderr
            .matches("eliding old results cannot bring it under")
            .count(),
        1,
        "said once"
    );
}
