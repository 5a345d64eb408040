//! git_status and git_diff through the real binary.

use crate::common::{self, git, Project};

fn repo() -> Project {
    let p = Project::new();
    p.write("a.txt", "one\ntwo\n").write("b.txt", "b\n");
    git(p.root(), &["init", "-q"]);
    git(p.root(), &["add", "."]);
    git(p.root(), &["commit", "-qm", "init"]);
    p
}

#[test]
fn status_is_short_and_clean_is_explicit() {
    let p = repo();
    assert_eq!(
        p.ok("git_status", "{}"),
        "(working tree clean: no changes and no untracked files)"
    );
    p.write("a.txt", "one\nTWO\n").write("new.txt", "n\n");
    assert_eq!(p.ok("git_status", "{}"), " M a.txt\n?? new.txt");
}

#[test]
fn status_does_not_write_the_index() {
    let p = repo();
    p.write("a.txt", "one\nTWO\n");
    let index = p.path(".git/index");
    let before = std::fs::read(&index).unwrap();
    // Make the index stat data stale (same bytes, another mtime) so a normal `git status`
    // would refresh and rewrite it.
    p.write("b.txt", "b\n");
    common::age(&p.path("b.txt"), std::time::Duration::from_secs(3600));
    p.ok("git_status", "{}");
    assert_eq!(std::fs::read(&index).unwrap(), before);
    // The control: git's own status does rewrite it.
    git(p.root(), &["status", "--short"]);
    assert_ne!(
        std::fs::read(&index).unwrap(),
        before,
        "the index was not stale"
    );
}

#[test]
fn diff_whole_and_one_path() {
    let p = repo();
    p.write("a.txt", "one\nTWO\n").write("b.txt", "B\n");
    let text = p.ok("git_diff", "{}");
    assert!(
        text.contains("--- a/a.txt") && text.contains("+TWO") && text.contains("+B"),
        "{text}"
    );
    let text = p.ok("git_diff", r#"{"path":"a.txt"}"#);
    assert!(text.contains("+TWO") && !text.contains("+B"), "{text}");
    assert_eq!(
        p.ok("git_diff", r#"{"path":"nothing-here.txt"}"#),
        "(no unstaged changes in nothing-here.txt)"
    );
    let msg = p.err("git_diff", r#"{"path":"../x"}"#);
    assert!(msg.contains("\"..\" is refused"), "{msg}");
}

#[test]
fn staged_changes() {
    let p = repo();
    p.write("a.txt", "staged\n");
    git(p.root(), &["add", "a.txt"]);
    assert_eq!(p.ok("git_diff", "{}"), "(no unstaged changes)");
    assert!(p.ok("git_diff", r#"{"staged":true}"#).contains("+staged"));
}

#[test]
fn big_diff_is_capped_with_the_changed_files_named() {
    let p = repo();
    let big: String = (0..2000).map(|i| format!("changed line {i}\n")).collect();
    p.write("a.txt", &big).write("b.txt", &big);
    let text = p.ok("git_diff", "{}");
    assert!(text.chars().count() <= 8000);
    assert!(text.contains("chars in all"), "{text}");
    assert!(text.contains(r#"Pass a path to see one file: git_diff {"path":"a.txt"}. Changed files: a.txt, b.txt."#), "{text}");
}

#[test]
fn outside_a_repository_is_explained() {
    let p = Project::new();
    p.write("a.txt", "x\n");
    // A ceiling keeps git from finding a repository above the temp dir.
    let ceiling = p.root().parent().unwrap().to_str().unwrap();
    for tool in ["git_status", "git_diff"] {
        let (msg, err) = p.tool_env(tool, "{}", &[("GIT_CEILING_DIRECTORIES", ceiling)]);
        assert!(err, "{tool}");
        assert!(msg.starts_with("not a git repository"), "{tool}: {msg}");
    }
}

#[test]
fn without_git_installed_is_explained() {
    let p = repo();
    let empty = tempfile::tempdir().unwrap();
    let (msg, err) = p.tool_env(
        "git_status",
        "{}",
        &[("PATH", empty.path().to_str().unwrap())],
    );
    assert!(err);
    assert!(msg.starts_with("git is not installed"), "{msg}");
}

/// A program planted in the repository's own config (or hooks) before the session, one per
/// mechanism git has for running programs. Each touches its own marker file outside the project.
struct Plant {
    name: &'static str,
    /// `git config` key and value; `{m}` is replaced by the marker's path.
    config: &'static [(&'static str, &'static str)],
    /// `.gitattributes` content, committed.
    attributes: &'static str,
    /// A hook file under `.git/hooks/`, executable.
    hook: Option<&'static str>,
    /// The slmcode calls that would run it if git were not hardened.
    calls: &'static [(&'static str, &'static str)],
    /// The plain git command that proves the plant works (run after the calls).
    control: &'static [&'static str],
}

const PLANTS: &[Plant] = &[
    Plant {
        name: "fsmonitor",
        config: &[("core.fsmonitor", "touch {m}; false")],
        attributes: "",
        hook: None,
        calls: &[
            ("git_status", "{}"),
            ("git_diff", "{}"),
            ("ws_mv", r#"{"from":"b.txt","to":"moved/b.txt"}"#),
        ],
        control: &["status"],
    },
    Plant {
        name: "clean-filter",
        config: &[("filter.evil.clean", "touch {m}; cat")],
        attributes: "*.txt filter=evil\n",
        hook: None,
        calls: &[
            ("git_status", "{}"),
            ("git_diff", "{}"),
            ("ws_mv", r#"{"from":"b.txt","to":"moved/b.txt"}"#),
        ],
        control: &["status"],
    },
    Plant {
        name: "process-filter",
        config: &[("filter.evil.process", "touch {m}; false")],
        attributes: "*.txt filter=evil\n",
        hook: None,
        calls: &[("git_status", "{}"), ("git_diff", "{}")],
        control: &["status"],
    },
    Plant {
        name: "textconv",
        config: &[("diff.evil.textconv", "touch {m}; cat")],
        attributes: "*.txt diff=evil\n",
        hook: None,
        calls: &[("git_diff", "{}"), ("git_diff", r#"{"path":"a.txt"}"#)],
        control: &["diff"],
    },
    Plant {
        name: "diff-driver-command",
        config: &[("diff.evil.command", "touch {m}; true")],
        attributes: "*.txt diff=evil\n",
        hook: None,
        calls: &[("git_diff", "{}")],
        control: &["diff"],
    },
    Plant {
        name: "diff-external",
        config: &[("diff.external", "touch {m}; true")],
        attributes: "",
        hook: None,
        calls: &[("git_diff", "{}"), ("git_diff", r#"{"staged":true}"#)],
        control: &["diff"],
    },
    Plant {
        name: "post-index-change-hook",
        config: &[],
        attributes: "",
        hook: Some("post-index-change"),
        calls: &[
            ("ws_mv", r#"{"from":"b.txt","to":"moved/b.txt"}"#),
            ("git_status", "{}"),
        ],
        control: &["mv", "a.txt", "c.txt"],
    },
    Plant {
        name: "hooks-path",
        config: &[("core.hooksPath", "{hooks}")],
        attributes: "",
        hook: Some("post-index-change"),
        calls: &[("ws_mv", r#"{"from":"b.txt","to":"moved/b.txt"}"#)],
        control: &["mv", "a.txt", "c.txt"],
    },
];

/// A repository with `plant` in place and `a.txt` changed since the commit.
fn planted(plant: &Plant, marker: &std::path::Path) -> Project {
    let p = repo();
    let m = marker.display().to_string();
    let hooks = p.path("myhooks");
    let hooks_dir = if plant.config.iter().any(|(k, _)| *k == "core.hooksPath") {
        hooks.clone()
    } else {
        p.path(".git/hooks")
    };
    if !plant.attributes.is_empty() {
        p.write(".gitattributes", plant.attributes);
        git(p.root(), &["add", ".gitattributes"]);
        git(p.root(), &["commit", "-qm", "attributes"]);
    }
    for (key, value) in plant.config {
        let value = value
            .replace("{m}", &m)
            .replace("{hooks}", &hooks.display().to_string());
        git(p.root(), &["config", key, &value]);
    }
    if let Some(hook) = plant.hook {
        std::fs::create_dir_all(&hooks_dir).unwrap();
        let path = hooks_dir.join(hook);
        std::fs::write(&path, format!("#!/bin/sh\ntouch {m}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    // A change whose stat data differs from the index, so status must hash the file.
    p.write("a.txt", "one\nTWO\n");
    common::age(&p.path("a.txt"), std::time::Duration::from_secs(3600));
    p
}

#[test]
fn slmcode_git_runs_no_program_the_repository_configured() {
    for plant in PLANTS {
        let outside = tempfile::tempdir().unwrap();
        let marker = outside.path().join(plant.name);
        let p = planted(plant, &marker);
        for (tool, args) in plant.calls {
            let (text, _) = p.tool(tool, args);
            assert!(
                !marker.exists(),
                "{}: {tool} {args} ran the planted program: {text}",
                plant.name
            );
        }
        // The control: plain git does run it, so the plant above was live.
        let _ = std::process::Command::new("git")
            .args(plant.control)
            .current_dir(p.root())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(
            marker.exists(),
            "{}: the plant never fires, so this case proves nothing",
            plant.name
        );
    }
}

#[test]
fn a_pager_is_never_started_even_on_a_terminal() {
    let p = repo();
    let outside = tempfile::tempdir().unwrap();
    let marker = outside.path().join("pager");
    let pager = format!("touch {}; cat", marker.display());
    git(p.root(), &["config", "core.pager", &pager]);
    git(p.root(), &["config", "pager.status", &pager]);
    p.write("a.txt", "one\nTWO\n");
    // `script` gives the command a terminal, where git would page.
    let run = |cmd: String| {
        std::process::Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .env("XDG_CONFIG_HOME", outside.path())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("script (util-linux)")
    };
    for tool in ["git_status", "git_diff"] {
        let out = run(format!(
            "{} tool {tool} '{{}}' --root {}",
            env!("CARGO_BIN_EXE_slmcode"),
            p.root().display()
        ));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(!marker.exists(), "{tool} started the repository's pager");
    }
    let out = run(format!("cd {} && git diff", p.root().display()));
    assert!(out.status.success());
    assert!(
        marker.exists(),
        "the planted pager never runs on a terminal, so this proves nothing"
    );
}
