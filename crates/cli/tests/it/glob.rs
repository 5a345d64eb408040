//! ws_glob through the real binary: `**` semantics, .gitignore, sorting and the cap.

use crate::common::Project;

fn tree() -> Project {
    let p = Project::new();
    for f in [
        "pkg/a/a_test.go",
        "pkg/a/a.go",
        "pkg/a/deep/er/b_test.go",
        "pkg/c_test.go",
        "cmd/tool/main.go",
        "cmd/other/main.go",
        "cmd/other/sub/main.go",
        "main.go",
        "src/lib.rs",
        "src/bin/x.rs",
        "build.rs",
        "target/debug/gen.rs",
        ".github/workflows/ci.yml",
        ".hidden/secret.rs",
    ] {
        p.write(f, "x\n");
    }
    p.write(".gitignore", "target/\n");
    p
}

fn paths(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| !l.starts_with('(') && !l.starts_with('['))
        .collect()
}

#[test]
fn double_star_spans_any_depth_including_none() {
    let p = tree();
    let text = p.ok("ws_glob", r#"{"pattern":"pkg/**/*_test.go"}"#);
    assert_eq!(
        paths(&text),
        vec![
            "pkg/a/a_test.go",
            "pkg/a/deep/er/b_test.go",
            "pkg/c_test.go"
        ]
    );
    assert!(text.ends_with("(3 matches)"), "{text}");
}

#[test]
fn single_star_stays_in_one_directory() {
    let p = tree();
    let text = p.ok("ws_glob", r#"{"pattern":"cmd/*/main.go"}"#);
    assert_eq!(paths(&text), vec!["cmd/other/main.go", "cmd/tool/main.go"]);
}

#[test]
fn rust_files_everywhere_respecting_gitignore_and_hidden() {
    let p = tree();
    let text = p.ok("ws_glob", r#"{"pattern":"**/*.rs"}"#);
    assert_eq!(paths(&text), vec!["build.rs", "src/bin/x.rs", "src/lib.rs"]);
    // A bare name pattern matches in every directory too.
    let text = p.ok("ws_glob", r#"{"pattern":"*.rs"}"#);
    assert_eq!(paths(&text), vec!["build.rs", "src/bin/x.rs", "src/lib.rs"]);
}

#[test]
fn hidden_directories_when_the_pattern_names_them() {
    let p = tree();
    let text = p.ok("ws_glob", r#"{"pattern":".github/**/*.yml"}"#);
    assert_eq!(paths(&text), vec![".github/workflows/ci.yml"]);
}

#[test]
fn path_narrows_and_results_stay_project_relative() {
    let p = tree();
    let text = p.ok("ws_glob", r#"{"pattern":"**/main.go","path":"cmd"}"#);
    assert_eq!(
        paths(&text),
        vec![
            "cmd/other/main.go",
            "cmd/other/sub/main.go",
            "cmd/tool/main.go"
        ]
    );
}

#[test]
fn nothing_matches_is_said_explicitly() {
    let p = tree();
    let text = p.ok("ws_glob", r#"{"pattern":"src/*.py"}"#);
    assert!(text.starts_with(r#"no files match "src/*.py""#), "{text}");
    assert!(text.contains(r#"ws_glob {"pattern":"**/*.py"}"#), "{text}");
    let text = p.ok("ws_glob", r#"{"pattern":"nosuchdir/**/*.py"}"#);
    assert!(
        text.contains("the directory nosuchdir does not exist"),
        "{text}"
    );
}

#[test]
fn at_most_200_hits_sorted_with_the_cap_announced() {
    let p = Project::new();
    for i in 0..250 {
        p.write(&format!("d/f{i:03}.txt"), "");
    }
    let text = p.ok("ws_glob", r#"{"pattern":"d/*.txt"}"#);
    let got = paths(&text);
    assert_eq!(got.len(), 200);
    assert_eq!(got[0], "d/f000.txt");
    assert_eq!(got[199], "d/f199.txt");
    assert!(
        text.contains("[200 of 250 matches shown (the cap is 200); narrow the pattern"),
        "{text}"
    );
}

#[test]
fn bad_patterns_are_explained() {
    let p = tree();
    let msg = p.err("ws_glob", r#"{"pattern":"src/[a.rs"}"#);
    assert!(msg.starts_with(r#"invalid glob "src/[a.rs""#), "{msg}");
    assert!(msg.contains("**"), "{msg}");
    let msg = p.err("ws_glob", r#"{"pattern":"/etc/*"}"#);
    assert!(msg.contains("drop the leading"), "{msg}");
    let msg = p.err("ws_glob", r#"{"pattern":"../*"}"#);
    assert!(msg.contains("\"..\" is refused"), "{msg}");
}
