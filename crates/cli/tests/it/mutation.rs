//! The one mutation path through the real binary: the .slmcode/ boundary in all its forms,
//! reserved names, permission modes (auto, dry-run, review + `slmcode pending`), modes kept,
//! and the atomic replace leaving nothing behind.

use std::os::unix::fs::PermissionsExt;

use crate::common;
use crate::common::{bin, Project};
use serde_json::json;

/// Runs a session: reads `path` first, then the given call; returns the call's reply.
fn read_then(
    p: &Project,
    path: &str,
    tool: &str,
    args: serde_json::Value,
    env: &[(&str, &str)],
) -> serde_json::Value {
    let input = format!(
        "{}\n{}\n",
        json!({"tool": "ws_read", "args": {"path": path}}),
        json!({"tool": tool, "args": args})
    );
    let mut out = p.session_env(&input, env);
    out.pop().expect("a reply")
}

const BOUNDARY: &str = "is harness control state, not project source";

#[test]
fn control_files_are_refused_by_text_case_and_alias() {
    let p = Project::new();
    p.write(".slmcode/config.yaml", "max_tool_chars: 8000\n");
    p.write(".slmcode/hooks.json", "{}\n");
    p.write("notes.txt", "n\n");
    // Nothing is created or changed anywhere: not the file, not a directory on its way.
    let before = common::snapshot(p.root());
    for path in [
        ".slmcode/hooks.json",
        ".SLMCODE/hooks.json",
        ".slmcode/pending/x.json",
        "./.slmcode//new.json",
        ".slmcode/new-dir/deeper/x.json",
    ] {
        let msg = p.err(
            "ws_write",
            &json!({"path": path, "content": "x"}).to_string(),
        );
        assert!(msg.contains(BOUNDARY), "{path}: {msg}");
        assert!(
            msg.contains("If you need scratch space, write under .slmcode/scratch/ instead."),
            "{msg}"
        );
        assert_eq!(common::snapshot(p.root()), before, "{path}: {msg}");
    }
    for (tool, args) in [
        (
            "ws_patch",
            json!({"patch": "--- /dev/null\n+++ b/.slmcode/new.json\n@@ -0,0 +1 @@\n+{}\n"}),
        ),
        (
            "ws_mv",
            json!({"from": "notes.txt", "to": ".slmcode/notes.txt"}),
        ),
        (
            "ws_mv",
            json!({"from": "notes.txt", "to": ".slmcode/new-dir/notes.txt"}),
        ),
        ("ws_delete", json!({"path": ".slmcode/hooks.json"})),
    ] {
        let msg = p.err(tool, &args.to_string());
        assert!(msg.contains(BOUNDARY), "{tool} {args}: {msg}");
        assert_eq!(common::snapshot(p.root()), before, "{tool} {args}: {msg}");
    }
    // A symlinked alias of the directory, and a symlink to a control file.
    p.symlink(".slmcode", "ctl");
    let msg = p.err(
        "ws_write",
        r#"{"path":"ctl/hooks.json","content":"{\"x\":1}"}"#,
    );
    assert!(msg.contains(BOUNDARY), "{msg}");
    p.symlink(".slmcode/config.yaml", "settings.yaml");
    let reply = read_then(
        &p,
        "settings.yaml",
        "ws_edit",
        json!({"path":"settings.yaml","old_str":"8000","new_str":"9"}),
        &[],
    );
    assert_eq!(reply["is_error"], true);
    assert!(
        reply["text"].as_str().unwrap().contains(BOUNDARY),
        "{reply}"
    );
    assert_eq!(
        std::fs::read_to_string(p.path(".slmcode/config.yaml")).unwrap(),
        "max_tool_chars: 8000\n"
    );
    assert_eq!(
        std::fs::read_to_string(p.path(".slmcode/hooks.json")).unwrap(),
        "{}\n"
    );
}

#[test]
fn scratch_is_writable() {
    let p = Project::new();
    p.mkdir(".slmcode");
    let text = p.ok(
        "ws_write",
        r#"{"path":".slmcode/scratch/notes.md","content":"plan\n"}"#,
    );
    assert!(
        text.starts_with("created .slmcode/scratch/notes.md"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(p.path(".slmcode/scratch/notes.md")).unwrap(),
        "plan\n"
    );
}

#[test]
fn a_hard_link_to_a_control_file_is_not_written_through() {
    let p = Project::new();
    p.write(".slmcode/config.yaml", "max_tool_chars: 8000\n");
    std::fs::hard_link(p.path(".slmcode/config.yaml"), p.path("linked.yaml")).unwrap();
    let reply = read_then(
        &p,
        "linked.yaml",
        "ws_edit",
        json!({"path":"linked.yaml","old_str":"8000","new_str":"600"}),
        &[],
    );
    assert_eq!(reply["is_error"], false, "{reply}");
    assert_eq!(
        std::fs::read_to_string(p.path("linked.yaml")).unwrap(),
        "max_tool_chars: 600\n"
    );
    assert_eq!(
        std::fs::read_to_string(p.path(".slmcode/config.yaml")).unwrap(),
        "max_tool_chars: 8000\n"
    );
}

#[test]
fn reserved_windows_names_are_refused() {
    let p = Project::new();
    for name in ["nul", "NUL.txt", "src/con.rs", "com1.log", "lpt3"] {
        let msg = p.err(
            "ws_write",
            &json!({"path": name, "content": "x"}).to_string(),
        );
        assert!(msg.contains("reserved device name"), "{name}: {msg}");
        assert!(!p.path(name).exists());
    }
    assert!(p
        .ok("ws_write", r#"{"path":"src/console.rs","content":"x\n"}"#)
        .starts_with("created"));
    assert_eq!(
        std::fs::read_to_string(p.path("src/console.rs")).unwrap(),
        "x\n"
    );
}

#[test]
fn modes_are_kept_and_new_files_get_0644_and_no_temp_files_remain() {
    let p = Project::new();
    p.write("run.sh", "#!/bin/sh\necho one\n");
    std::fs::set_permissions(p.path("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let reply = read_then(
        &p,
        "run.sh",
        "ws_edit",
        json!({"path":"run.sh","old_str":"echo one","new_str":"echo two"}),
        &[],
    );
    assert_eq!(reply["is_error"], false, "{reply}");
    let mode = std::fs::metadata(p.path("run.sh"))
        .unwrap()
        .permissions()
        .mode()
        & 0o7777;
    assert_eq!(mode, 0o755);
    p.ok(
        "ws_write",
        r#"{"path":"deep/new/file.txt","content":"hi\n"}"#,
    );
    assert_eq!(
        std::fs::read_to_string(p.path("deep/new/file.txt")).unwrap(),
        "hi\n"
    );
    let mode = std::fs::metadata(p.path("deep/new/file.txt"))
        .unwrap()
        .permissions()
        .mode()
        & 0o7777;
    assert_eq!(mode, 0o644);
    for dir in [p.root().to_path_buf(), p.path("deep/new")] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            assert!(!name.contains(".slmcode-"), "temp file left behind: {name}");
        }
    }
}

#[test]
fn dry_run_reports_a_diff_and_writes_nothing() {
    let p = Project::new();
    p.write("a.py", "x = 1\ny = 2\n");
    let env = [("SLMCODE_PERMISSION_MODE", "dry-run")];
    let reply = read_then(
        &p,
        "a.py",
        "ws_edit",
        json!({"path":"a.py","old_str":"y = 2","new_str":"y = 3"}),
        &env,
    );
    let text = reply["text"].as_str().unwrap();
    assert_eq!(reply["is_error"], false);
    assert!(
        text.starts_with(
            "[dry-run — nothing was written] would have: edited a.py (1 replacement(s))"
        ),
        "{text}"
    );
    assert!(text.contains("-y = 2\n+y = 3"), "{text}");
    assert_eq!(
        std::fs::read_to_string(p.path("a.py")).unwrap(),
        "x = 1\ny = 2\n"
    );
    let (text, _) = p.tool_env("ws_write", r#"{"path":"new.txt","content":"n\n"}"#, &env);
    assert!(text.contains("+n"), "{text}");
    assert!(!p.path("new.txt").exists());
}

#[test]
fn review_stages_and_pending_applies_or_rejects() {
    let p = Project::new();
    p.write("a.py", "x = 1\n");
    let env = [("SLMCODE_PERMISSION_MODE", "review")];
    let reply = read_then(
        &p,
        "a.py",
        "ws_edit",
        json!({"path":"a.py","old_str":"x = 1","new_str":"x = 2"}),
        &env,
    );
    let text = reply["text"].as_str().unwrap();
    assert!(
        text.contains("[review mode — staged as .slmcode/pending/"),
        "{text}"
    );
    assert_eq!(std::fs::read_to_string(p.path("a.py")).unwrap(), "x = 1\n");
    let id = text
        .split("pending apply ")
        .nth(1)
        .unwrap()
        .trim_end_matches("`]")
        .to_string();

    let pending = |args: &[&str]| {
        let out = bin()
            .arg("pending")
            .args(args)
            .arg("--root")
            .arg(p.root())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, list, _) = pending(&["list"]);
    assert_eq!(code, Some(0));
    assert!(
        list.contains(&id) && list.contains("ws_edit") && list.contains("a.py"),
        "{list}"
    );
    let (_, show, _) = pending(&["show", &id]);
    assert!(show.contains("-x = 1\n+x = 2"), "{show}");
    let (code, applied, _) = pending(&["apply", &id]);
    assert_eq!(code, Some(0), "{applied}");
    assert_eq!(std::fs::read_to_string(p.path("a.py")).unwrap(), "x = 2\n");
    let (code, _, err) = pending(&["apply", &id]);
    assert_eq!(code, Some(1));
    assert!(err.contains("no pending change"), "{err}");
    assert_eq!(pending(&["list"]).1.trim(), "no pending changes");

    // A change staged against bytes that have since changed is refused on apply.
    let reply = read_then(
        &p,
        "a.py",
        "ws_edit",
        json!({"path":"a.py","old_str":"x = 2","new_str":"x = 3"}),
        &env,
    );
    let text = reply["text"].as_str().unwrap();
    let id = text
        .split("pending apply ")
        .nth(1)
        .unwrap()
        .trim_end_matches("`]")
        .to_string();
    p.write("a.py", "x = 99\n");
    let (code, _, err) = pending(&["apply", &id]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("was made against a different version"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(p.path("a.py")).unwrap(), "x = 99\n");
    let (code, rejected, _) = pending(&["reject", &id]);
    assert_eq!(code, Some(0));
    assert!(
        rejected.starts_with(&format!("rejected {id}")),
        "{rejected}"
    );
    let (code, _, err) = pending(&["show", "../../etc/passwd"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("is not a pending change id"), "{err}");
}

const GIT_BOUNDARY: &str = "is git's own state (a .git directory";

/// A git checkout with a submodule-style `.git` file whose gitdir lies elsewhere in the
/// project, and a nested repository further down.
fn git_project() -> Project {
    let p = Project::new();
    p.write("README.md", "# readme\n");
    common::git(p.root(), &["init", "-q"]);
    common::git(p.root(), &["add", "README.md"]);
    common::git(p.root(), &["commit", "-q", "-m", "init"]);
    p.write(".git/hooks/pre-commit.sample", "#!/bin/sh\nexit 0\n");
    p.write("moved-git/config", "[core]\n\tbare = false\n");
    p.write("sub/.git", "gitdir: ../moved-git\n");
    p.write("vendor/lib/.git/config", "[core]\n\tbare = false\n");
    p.write("vendor/lib/src.c", "int x;\n");
    p.symlink(".git", "g");
    p
}

#[test]
fn git_directories_are_refused_to_every_tool_in_every_spelling() {
    let p = git_project();
    let before = common::snapshot(p.root());
    let calls: Vec<(&str, serde_json::Value)> = vec![
        (
            "ws_write",
            json!({"path": ".git/hooks/post-checkout", "content": "#!/bin/sh\nid\n"}),
        ),
        (
            "ws_write",
            json!({"path": ".GIT/hooks/pre-commit", "content": "#!/bin/sh\nid\n"}),
        ),
        (
            "ws_write",
            json!({"path": "./.git/config", "content": "[core]\n\tfsmonitor = id\n"}),
        ),
        (
            "ws_write",
            json!({"path": ".git./config", "content": "x\n"}),
        ),
        (
            "ws_write",
            json!({"path": "g/hooks/pre-push", "content": "#!/bin/sh\nid\n"}),
        ),
        (
            "ws_write",
            json!({"path": "sub/.git", "content": "gitdir: ../evil\n"}),
        ),
        (
            "ws_write",
            json!({"path": "moved-git/hooks/post-checkout", "content": "id\n"}),
        ),
        (
            "ws_write",
            json!({"path": "vendor/lib/.git/config", "content": "x\n"}),
        ),
        ("ws_delete", json!({"path": ".git/config"})),
        ("ws_delete", json!({"path": ".git", "recursive": true})),
        ("ws_delete", json!({"path": "vendor", "recursive": true})),
        ("ws_delete", json!({"path": "moved-git/config"})),
        (
            "ws_mv",
            json!({"from": ".git/hooks/pre-commit.sample", "to": ".git/hooks/pre-commit"}),
        ),
        (
            "ws_mv",
            json!({"from": "README.md", "to": ".git/hooks/pre-commit"}),
        ),
        ("ws_mv", json!({"from": ".git/config", "to": "config.txt"})),
        ("ws_mv", json!({"from": "README.md", "to": "sub/.git"})),
    ];
    for (tool, args) in &calls {
        let msg = p.err(tool, &args.to_string());
        assert!(msg.contains(GIT_BOUNDARY), "{tool} {args}: {msg}");
        assert!(msg.contains("Committing"), "{tool} {args}: {msg}");
    }
    // Edits and patches of files that were read first.
    for (tool, args) in [
        (
            "ws_edit",
            json!({"path": ".git/config", "old_str": "bare = false", "new_str": "fsmonitor = id"}),
        ),
        (
            "ws_patch",
            json!({"path": "g/config", "patch": "<<<<<<< SEARCH\n\tbare = false\n=======\n\tfsmonitor = id\n>>>>>>> REPLACE\n"}),
        ),
        (
            "ws_edit",
            json!({"path": "moved-git/config", "old_str": "bare = false", "new_str": "fsmonitor = id"}),
        ),
    ] {
        let path = args["path"].as_str().unwrap().to_string();
        let reply = read_then(&p, &path, tool, args, &[]);
        assert_eq!(reply["is_error"], true, "{reply}");
        assert!(
            reply["text"].as_str().unwrap().contains(GIT_BOUNDARY),
            "{reply}"
        );
    }
    assert_eq!(
        common::snapshot(p.root()),
        before,
        "a refused call changed the tree"
    );
    // Moving a tracked file still works: slmcode runs `git mv` itself.
    let text = p.ok("ws_mv", r#"{"from":"README.md","to":"docs/README.md"}"#);
    assert!(text.contains("git mv"), "{text}");
    assert!(p.path("docs/README.md").exists());
}

/// The places the repository's config makes git run or read outside `.git`: its hooks
/// directory (existing or not yet) and a config file it includes.
#[test]
fn configured_hooks_and_included_config_are_git_state_too() {
    let p = Project::new();
    p.write("README.md", "# r\n");
    common::git(p.root(), &["init", "-q"]);
    p.write(".githooks/pre-commit", "#!/bin/sh\nexit 0\n");
    p.write("shared.gitconfig", "[core]\n\thooksPath = .githooks\n");
    common::git(p.root(), &["config", "include.path", "../shared.gitconfig"]);
    let before = common::snapshot(p.root());
    for (tool, args) in [
        (
            "ws_write",
            json!({"path": ".githooks/pre-commit", "content": "#!/bin/sh\nid\n", "allow_shrink": true}),
        ),
        (
            "ws_write",
            json!({"path": ".githooks/pre-push", "content": "#!/bin/sh\nid\n"}),
        ),
        ("ws_delete", json!({"path": "shared.gitconfig"})),
        (
            "ws_mv",
            json!({"from": "README.md", "to": ".githooks/post-checkout"}),
        ),
    ] {
        let msg = p.err(tool, &args.to_string());
        assert!(msg.contains(GIT_BOUNDARY), "{tool} {args}: {msg}");
    }
    let reply = read_then(
        &p,
        "shared.gitconfig",
        "ws_edit",
        json!({"path": "shared.gitconfig", "old_str": ".githooks", "new_str": "evil"}),
        &[],
    );
    assert_eq!(reply["is_error"], true, "{reply}");
    assert_eq!(common::snapshot(p.root()), before);
    // husky: hooksPath .husky/_ runs the scripts in .husky/, which may not exist yet.
    common::git(p.root(), &["config", "--unset", "include.path"]);
    common::git(p.root(), &["config", "core.hooksPath", ".husky/_"]);
    let msg = p.err(
        "ws_write",
        &json!({"path": ".husky/pre-commit", "content": "id\n"}).to_string(),
    );
    assert!(msg.contains(GIT_BOUNDARY), "{msg}");
    assert!(!p.path(".husky").exists());
    // Ordinary project files are not affected.
    p.ok(
        "ws_write",
        r#"{"path":"src/new.rs","content":"fn f() {}\n"}"#,
    );
}

/// A device or FIFO named like a file is refused before anything is read: `/dev/zero` as
/// `zero.txt` would be read until memory ran out.
#[test]
fn devices_and_fifos_are_refused_before_reading() {
    use std::os::unix::fs::MetadataExt;
    let p = Project::new();
    let root_user = std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(1)
        == 0;
    let mut special = vec![("pipe.txt", "a FIFO (named pipe)")];
    let st = std::process::Command::new("mkfifo")
        .arg(p.path("pipe.txt"))
        .status()
        .unwrap();
    assert!(st.success());
    if root_user {
        let st = std::process::Command::new("mknod")
            .arg(p.path("zero.txt"))
            .args(["c", "1", "5"])
            .status()
            .unwrap();
        assert!(st.success());
        special.push(("zero.txt", "a character device"));
    } else {
        common::skip(
            "devices_and_fifos_are_refused_before_reading: a character device",
            "mknod needs root",
        );
    }
    let started = std::time::Instant::now();
    for (path, what) in special {
        for (tool, args) in [
            ("ws_write", json!({"path": path, "content": "x\n"})),
            (
                "ws_edit",
                json!({"path": path, "old_str": "a", "new_str": "b"}),
            ),
            (
                "ws_patch",
                json!({"path": path, "patch": "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n"}),
            ),
        ] {
            let msg = p.err(tool, &args.to_string());
            assert!(
                msg.contains(&format!("{path} is {what}, not a regular file")),
                "{tool}: {msg}"
            );
        }
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}
