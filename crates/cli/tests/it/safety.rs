//! The safety net through the real binary: the syntax check and its revert, checkpoints and
//! restore, ws_mv, ws_delete and the focus guard.

use std::os::unix::fs::PermissionsExt;

use crate::common;
use crate::common::{bin, git, Project};
use serde_json::{json, Value};

fn run(p: &Project, calls: &[Value]) -> Vec<Value> {
    p.session(&calls.iter().map(|c| format!("{c}\n")).collect::<String>())
}

fn read(path: &str) -> Value {
    json!({"tool": "ws_read", "args": {"path": path}})
}

fn edit(path: &str, old: &str, new: &str) -> Value {
    json!({"tool": "ws_edit", "args": {"path": path, "old_str": old, "new_str": new}})
}

fn checkpoints(p: &Project, args: &[&str]) -> (i32, String, String) {
    let out = bin()
        .arg("checkpoints")
        .args(args)
        .arg("--root")
        .arg(p.root())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn an_edit_that_breaks_a_parsing_file_is_reverted_byte_for_byte() {
    let cases = [
        (
            "lib.rs",
            "fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
            "    a + b\n",
            "    (a + b\n",
        ),
        (
            "app.py",
            "def f(x):\n    return x + 1\n",
            "    return x + 1\n",
            "    return (x + 1\n",
        ),
        (
            "main.go",
            "package main\n\nfunc main() {\n\tprintln(1)\n}\n",
            "\tprintln(1)\n",
            "\tprintln(1\n",
        ),
        (
            "app.ts",
            "export function f(x: number): number {\n  return x;\n}\n",
            "  return x;\n",
            "  return [x;\n",
        ),
        (
            "config.json",
            "{\n  \"a\": 1,\n  \"b\": 2\n}\n",
            "  \"b\": 2\n",
            "  \"b\": 2,\n",
        ),
    ];
    for (file, original, old, new) in cases {
        let p = Project::new();
        p.write(file, original);
        let out = run(&p, &[read(file), edit(file, old, new)]);
        let text = out[1]["text"].as_str().unwrap();
        assert_eq!(out[1]["is_error"], true, "{file}: {text}");
        assert!(text.starts_with(&format!("EDIT REVERTED — {file} parsed correctly before your change and does NOT parse after it (tree-sitter ")), "{file}: {text}");
        assert!(
            text.contains(&format!("{file}:")),
            "{file}: the location: {text}"
        );
        assert!(text.contains("The file is unchanged on disk."), "{text}");
        assert!(
            text.ends_with("Do NOT retry the identical edit — it will be reverted again."),
            "{text}"
        );
        assert_eq!(
            std::fs::read(p.path(file)).unwrap(),
            original.as_bytes(),
            "{file}"
        );
    }
}

#[test]
fn write_and_patch_are_checked_too() {
    let p = Project::new();
    p.write("a.rs", "fn main() {}\n");
    let out = run(
        &p,
        &[
            read("a.rs"),
            json!({"tool": "ws_write", "args": {"path": "a.rs", "content": "fn main() {\n"}}),
            json!({"tool": "ws_patch", "args": {"path": "a.rs", "patch": "@@ -1 +1 @@\n-fn main() {}\n+fn main() {\n"}}),
        ],
    );
    assert!(
        out[1]["text"]
            .as_str()
            .unwrap()
            .starts_with("WRITE REVERTED — a.rs"),
        "{}",
        out[1]
    );
    assert!(
        out[2]["text"]
            .as_str()
            .unwrap()
            .starts_with("PATCH REVERTED — a.rs"),
        "{}",
        out[2]
    );
    assert_eq!(
        std::fs::read_to_string(p.path("a.rs")).unwrap(),
        "fn main() {}\n"
    );
}

#[test]
fn an_already_broken_file_gets_the_error_appended() {
    let p = Project::new();
    p.write("bad.py", "def f(:\n    return 1\n\nx = 1\n");
    let out = run(&p, &[read("bad.py"), edit("bad.py", "x = 1", "x = 2")]);
    let text = out[1]["text"].as_str().unwrap();
    assert_eq!(out[1]["is_error"], false, "{text}");
    assert!(
        text.starts_with("edited bad.py (1 replacement(s))"),
        "{text}"
    );
    assert!(
        text.contains("[syntax: bad.py does not parse (tree-sitter python): bad.py:1:"),
        "{text}"
    );
    assert!(text.contains("fix it now"), "{text}");
    assert_eq!(
        std::fs::read_to_string(p.path("bad.py")).unwrap(),
        "def f(:\n    return 1\n\nx = 2\n"
    );
}

#[test]
fn unknown_extensions_are_skipped_and_the_check_can_be_disabled() {
    let p = Project::new();
    p.write("notes.txt", "(balanced)\n");
    let out = run(
        &p,
        &[
            read("notes.txt"),
            edit("notes.txt", "(balanced)", "((unbalanced"),
        ],
    );
    assert_eq!(out[1]["is_error"], false, "{}", out[1]);
    p.write("a.rs", "fn main() {}\n");
    // The user turns the check off (a project's own config could only turn it on).
    let calls = [read("a.rs"), edit("a.rs", "fn main() {}", "fn main() {")];
    let out = p.session_env(
        &calls.iter().map(|c| format!("{c}\n")).collect::<String>(),
        &[("SLMCODE_DISABLE_SYNTAX_CHECK", "true")],
    );
    assert_eq!(out[1]["is_error"], false, "{}", out[1]);
    assert_eq!(
        std::fs::read_to_string(p.path("a.rs")).unwrap(),
        "fn main() {\n"
    );
}

#[test]
fn write_edit_delete_then_restore_gives_back_bytes_and_mode() {
    let p = Project::new();
    p.write("tool.sh", "#!/bin/sh\necho one\n");
    std::fs::set_permissions(p.path("tool.sh"), std::fs::Permissions::from_mode(0o750)).unwrap();
    let out = run(
        &p,
        &[
            read("tool.sh"),
            json!({"tool": "ws_write", "args": {"path": "tool.sh", "content": "#!/bin/sh\necho two\n"}}),
            edit("tool.sh", "echo two", "echo three"),
            json!({"tool": "ws_write", "args": {"path": "new.txt", "content": "fresh\n"}}),
            json!({"tool": "ws_delete", "args": {"path": "tool.sh"}}),
        ],
    );
    for reply in &out {
        assert_eq!(reply["is_error"], false, "{reply}");
    }
    let deleted = out[4]["text"].as_str().unwrap();
    assert!(
        deleted.starts_with("deleted tool.sh; restore it with `slmcode checkpoints restore "),
        "{deleted}"
    );
    assert!(!p.path("tool.sh").exists());
    let (code, list, _) = checkpoints(&p, &["list"]);
    assert_eq!(code, 0);
    let session = list.split_whitespace().next().unwrap().to_string();
    assert!(deleted.contains(&session), "{deleted} / {list}");
    let (_, show, _) = checkpoints(&p, &["show", &session]);
    assert!(show.contains("tool.sh  file, mode 750"), "{show}");
    assert!(show.contains("new.txt  did not exist"), "{show}");
    let (code, restored, err) = checkpoints(&p, &["restore", &session]);
    assert_eq!(code, 0, "{err}");
    assert!(restored.contains("restored tool.sh"), "{restored}");
    assert!(restored.contains("removed new.txt"), "{restored}");
    assert_eq!(
        std::fs::read_to_string(p.path("tool.sh")).unwrap(),
        "#!/bin/sh\necho one\n"
    );
    let mode = std::fs::metadata(p.path("tool.sh"))
        .unwrap()
        .permissions()
        .mode()
        & 0o7777;
    assert_eq!(mode, 0o750);
    assert!(!p.path("new.txt").exists());
    let (code, _, err) = checkpoints(&p, &["restore", "../etc"]);
    assert_eq!(code, 1);
    assert!(err.contains("is not a checkpoint session id"), "{err}");
}

#[test]
fn a_move_restores_on_both_paths() {
    let p = Project::new();
    p.write("src/old.rs", "pub fn f() {}\n");
    let out = run(
        &p,
        &[json!({"tool": "ws_mv", "args": {"from": "src/old.rs", "to": "src/deep/new.rs"}})],
    );
    assert_eq!(
        out[0]["text"],
        "moved src/old.rs → src/deep/new.rs (renamed)"
    );
    assert!(!p.path("src/old.rs").exists());
    assert_eq!(
        std::fs::read_to_string(p.path("src/deep/new.rs")).unwrap(),
        "pub fn f() {}\n"
    );
    let (_, list, _) = checkpoints(&p, &["list"]);
    let session = list.split_whitespace().next().unwrap().to_string();
    let (code, _, err) = checkpoints(&p, &["restore", &session]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(p.path("src/old.rs")).unwrap(),
        "pub fn f() {}\n"
    );
    assert!(!p.path("src/deep/new.rs").exists());
}

#[test]
fn mv_uses_git_for_tracked_files_and_never_overwrites() {
    let p = Project::new();
    p.write("a.txt", "a\n")
        .write("b.txt", "b\n")
        .write("untracked.txt", "u\n");
    git(p.root(), &["init", "-q"]);
    git(p.root(), &["add", "a.txt", "b.txt"]);
    git(p.root(), &["commit", "-qm", "init"]);
    let out = run(
        &p,
        &[
            json!({"tool": "ws_mv", "args": {"from": "a.txt", "to": "b.txt"}}),
            json!({"tool": "ws_mv", "args": {"from": "a.txt", "to": "moved/a.txt"}}),
            json!({"tool": "ws_mv", "args": {"source": "untracked.txt", "destination": "u2.txt"}}),
            json!({"tool": "ws_mv", "args": {"from": ".slmcode/config.yaml", "to": "c.yaml"}}),
        ],
    );
    let refusal = out[0]["text"].as_str().unwrap();
    assert!(
        refusal.contains("b.txt already exists and ws_mv never overwrites"),
        "{refusal}"
    );
    assert_eq!(std::fs::read_to_string(p.path("b.txt")).unwrap(), "b\n");
    assert_eq!(out[1]["text"], "moved a.txt → moved/a.txt (git mv)");
    assert_eq!(out[2]["text"], "moved untracked.txt → u2.txt (renamed)");
    assert!(
        out[3]["text"]
            .as_str()
            .unwrap()
            .contains("harness control state"),
        "{}",
        out[3]
    );
    let status = std::process::Command::new("git")
        .args(["status", "--short"])
        .current_dir(p.root())
        .output()
        .unwrap();
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(status.contains("R  a.txt -> moved/a.txt"), "{status}");
}

#[test]
fn delete_takes_links_not_targets_and_directories_only_recursively() {
    let p = Project::new();
    p.write("real.txt", "keep me\n")
        .write("dir/a.txt", "a\n")
        .write("dir/sub/b.txt", "b\n");
    p.symlink("real.txt", "link.txt");
    let out = run(
        &p,
        &[
            json!({"tool": "ws_delete", "args": {"path": "link.txt"}}),
            json!({"tool": "ws_delete", "args": {"path": "dir"}}),
            json!({"tool": "ws_delete", "args": {"path": "dir", "recursive": true}}),
            json!({"tool": "ws_delete", "args": {"path": "missing.txt"}}),
        ],
    );
    assert!(
        out[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("deleted link.txt"),
        "{}",
        out[0]
    );
    assert!(std::fs::symlink_metadata(p.path("link.txt")).is_err());
    assert_eq!(
        std::fs::read_to_string(p.path("real.txt")).unwrap(),
        "keep me\n"
    );
    assert!(
        out[1]["text"]
            .as_str()
            .unwrap()
            .contains("repeat the call with \"recursive\": true"),
        "{}",
        out[1]
    );
    assert!(
        out[2]["text"]
            .as_str()
            .unwrap()
            .starts_with("deleted dir (2 files)"),
        "{}",
        out[2]
    );
    assert!(!p.path("dir").exists());
    assert_eq!(out[3]["is_error"], true);
    // Everything comes back, the link as a link.
    let (_, list, _) = checkpoints(&p, &["list"]);
    let session = list.split_whitespace().next().unwrap().to_string();
    let (code, _, err) = checkpoints(&p, &["restore", &session]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_link(p.path("link.txt")).unwrap().to_str(),
        Some("real.txt")
    );
    assert_eq!(
        std::fs::read_to_string(p.path("dir/sub/b.txt")).unwrap(),
        "b\n"
    );
}

/// Every changing tool is held to the focus: each refusal names the allowed globs and leaves
/// the project byte for byte as it was; the control directory stays closed even inside it.
#[test]
fn the_focus_guard_names_the_allowed_globs_and_the_boundary_still_holds() {
    let p = Project::new();
    p.write("src/a.rs", "fn a() {}\n")
        .write("docs/readme.md", "x\n");
    p.write(".slmcode/config.yaml", "focus: [\"src/**\"]\n");
    let outside_project = |p: &Project| {
        let mut all = common::snapshot(p.root());
        all.retain(|k, _| !k.starts_with(".slmcode"));
        all
    };
    let before = outside_project(&p);
    let refused_calls = [
        json!({"tool": "ws_write", "args": {"path": "docs/new.md", "content": "y\n"}}),
        json!({"tool": "ws_write", "args": {"path": "docs/readme.md", "content": "y\n"}}),
        edit("docs/readme.md", "x", "y"),
        json!({"tool": "ws_patch", "args": {"path": "docs/readme.md", "patch": "<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n"}}),
        json!({"tool": "ws_patch", "args": {"patch": "--- a/docs/readme.md\n+++ b/docs/readme.md\n@@ -1 +1 @@\n-x\n+y\n"}}),
        json!({"tool": "ws_mv", "args": {"from": "docs/readme.md", "to": "src/readme.md"}}),
        json!({"tool": "ws_mv", "args": {"from": "src/a.rs", "to": "docs/a.rs"}}),
        json!({"tool": "ws_delete", "args": {"path": "docs/readme.md"}}),
    ];
    let mut calls = vec![read("docs/readme.md"), read("src/a.rs")];
    calls.extend(refused_calls.iter().cloned());
    calls.push(
        json!({"tool": "ws_write", "args": {"path": ".slmcode/hooks.json", "content": "{}"}}),
    );
    let out = run(&p, &calls);
    assert_eq!(out.len(), calls.len(), "{out:?}");
    for (call, reply) in refused_calls.iter().zip(&out[2..]) {
        let text = reply["text"].as_str().unwrap();
        assert_eq!(reply["is_error"], true, "{call}: {text}");
        assert!(
            text.contains(
                "outside this task's focus. Only paths matching \"src/**\" may be changed"
            ),
            "{call}: {text}"
        );
    }
    let last = out.last().unwrap();
    assert!(
        last["text"]
            .as_str()
            .unwrap()
            .contains("harness control state"),
        "{last}"
    );
    assert_eq!(outside_project(&p), before, "{out:?}");
    assert!(!p.path(".slmcode/hooks.json").exists());
    // Inside the focus the same tools change the file, and what was written reads back.
    let out = run(
        &p,
        &[json!({"tool": "ws_write", "args": {"path": "src/b.rs", "content": "fn b() {}\n"}})],
    );
    assert_eq!(out[0]["is_error"], false, "{}", out[0]);
    assert_eq!(
        std::fs::read_to_string(p.path("src/b.rs")).unwrap(),
        "fn b() {}\n"
    );
}

/// Undo goes through the same checked path as every write: after `d/` became a symlink to
/// `.slmcode`, restoring `d/config.yaml` (created in the session, so restore removes it) and
/// `d/a.txt` (changed, so restore writes it) touches nothing in `.slmcode/`.
#[test]
fn restore_never_writes_or_removes_through_a_swapped_directory() {
    let p = Project::new();
    p.write("d/a.txt", "original\n");
    p.write(".slmcode/config.yaml", "shell_permission: deny\n");
    let out = run(
        &p,
        &[
            read("d/a.txt"),
            edit("d/a.txt", "original", "changed"),
            json!({"tool": "ws_write", "args": {"path": "d/config.yaml", "content": "x: 1\n"}}),
        ],
    );
    assert!(out.iter().all(|r| r["is_error"] == false), "{out:?}");
    let (_, list, _) = checkpoints(&p, &["list"]);
    let session = list.split_whitespace().next().unwrap().to_string();
    std::fs::rename(p.path("d"), p.path("d.real")).unwrap();
    p.symlink(".slmcode", "d");
    let before = common::snapshot(&p.path(".slmcode"));
    let (code, said, err) = checkpoints(&p, &["restore", &session]);
    assert_ne!(code, 0, "{said}{err}");
    assert!(err.contains("harness control state"), "{err}");
    let after = common::snapshot(&p.path(".slmcode"));
    assert_eq!(
        after.get("config.yaml"),
        before.get("config.yaml"),
        "the control file was removed or rewritten"
    );
    assert!(!p.path(".slmcode/a.txt").exists());
    assert_eq!(
        std::fs::read_to_string(p.path(".slmcode/config.yaml")).unwrap(),
        "shell_permission: deny\n"
    );
}

/// The peak memory (MiB) of one `slmcode` run with `args` and `stdin`, measured by a Python
/// parent that has no other children; and the run's stdout.
fn peak_mib(p: &Project, args: &[&str], stdin: &str) -> (f64, String) {
    let script = r#"
import resource, subprocess, sys
out = subprocess.run(sys.argv[2:], input=sys.argv[1].encode(), capture_output=True)
sys.stderr.write(out.stderr.decode(errors="replace"))
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0)
sys.stdout.write(out.stdout.decode(errors="replace"))
"#;
    let bin = bin();
    let out = std::process::Command::new("python3")
        .envs(bin.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .arg("-c")
        .arg(script)
        .arg(stdin)
        .arg(bin.get_program())
        .args(args)
        .arg("--root")
        .arg(p.root())
        .output()
        .expect("python3 runs slmcode");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (peak, rest) = text.split_once('\n').expect("the peak, then the output");
    (peak.trim().parse().expect("a number"), rest.to_string())
}

/// A sparse file of `len` bytes with markers at its start, middle and end.
fn sparse(p: &Project, rel: &str, len: u64) {
    use std::io::{Seek, SeekFrom, Write};
    let mut f = std::fs::File::create(p.path(rel)).unwrap();
    f.set_len(len).unwrap();
    for (at, mark) in [(0, &b"head"[..]), (len / 2, b"middle"), (len - 4, b"tail")] {
        f.seek(SeekFrom::Start(at)).unwrap();
        f.write_all(mark).unwrap();
    }
}

fn markers(path: &std::path::Path, len: u64) -> Vec<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path).unwrap();
    assert_eq!(f.metadata().unwrap().len(), len);
    [(0, 4), (len / 2, 6), (len - 4, 4)]
        .iter()
        .map(|&(at, n)| {
            let mut buf = vec![0; n];
            f.seek(SeekFrom::Start(at)).unwrap();
            f.read_exact(&mut buf).unwrap();
            buf
        })
        .collect()
}

/// A checkpoint is a streamed copy: deleting and restoring a 160 MiB file keeps the process
/// far below the file's size.
#[test]
fn checkpoints_copy_large_files_without_holding_them_in_memory() {
    let p = Project::new();
    const LEN: u64 = 160 << 20;
    sparse(&p, "big.bin", LEN);
    let (peak, out) = peak_mib(
        &p,
        &["session"],
        "{\"tool\": \"ws_delete\", \"args\": {\"path\": \"big.bin\"}}\n",
    );
    assert!(out.contains("deleted big.bin; restore it with"), "{out}");
    assert!(
        peak < 100.0,
        "deleting a 160 MiB file peaked at {peak:.0} MiB"
    );
    assert!(!p.path("big.bin").exists());
    let (_, list, _) = checkpoints(&p, &["list"]);
    let session = list.split_whitespace().next().unwrap().to_string();
    let (peak, out) = peak_mib(&p, &["checkpoints", "restore", &session], "");
    assert!(out.contains("restored big.bin (167772160 bytes"), "{out}");
    assert!(
        peak < 100.0,
        "restoring a 160 MiB file peaked at {peak:.0} MiB"
    );
    assert_eq!(
        markers(&p.path("big.bin"), LEN),
        vec![b"head".to_vec(), b"middle".to_vec(), b"tail".to_vec()]
    );
}

/// Over `checkpoint_max_bytes` a file is changed without a copy, and every result and the
/// restore say so; a moved file that was not saved is left at its new name, never removed.
#[test]
fn files_over_the_checkpoint_limit_are_named_in_the_result() {
    let p = Project::new();
    p.write("data/small.txt", "small\n")
        .write("data/large.txt", "L".repeat(5000))
        .write("big.txt", "B".repeat(3000))
        .write("huge.txt", "H".repeat(4000));
    let calls = [
        json!({"tool": "ws_delete", "args": {"path": "data", "recursive": true}}),
        read("big.txt"),
        json!({"tool": "ws_write", "args": {"path": "big.txt", "content": "short\n", "allow_shrink": true}}),
        json!({"tool": "ws_mv", "args": {"from": "huge.txt", "to": "moved/huge.txt"}}),
    ];
    let out = p.session_env(
        &calls.iter().map(|c| format!("{c}\n")).collect::<String>(),
        &[("SLMCODE_CHECKPOINT_MAX_BYTES", "1000")],
    );
    assert!(out.iter().all(|r| r["is_error"] == false), "{out:?}");
    let text = |i: usize| out[i]["text"].as_str().unwrap().to_string();
    assert!(
        text(0).starts_with("deleted data (2 files); restore it with"),
        "{}",
        text(0)
    );
    assert!(
        text(0).contains("[not checkpointed: data/large.txt is 5000 bytes, over checkpoint_max_bytes (1000 bytes)"),
        "{}",
        text(0)
    );
    assert!(!text(0).contains("small.txt is"), "{}", text(0));
    assert!(
        text(2).contains("[not checkpointed: big.txt is 3000 bytes"),
        "{}",
        text(2)
    );
    assert!(
        text(3).contains("[not checkpointed: huge.txt is 4000 bytes"),
        "{}",
        text(3)
    );
    let (_, list, _) = checkpoints(&p, &["list"]);
    let session = list.split_whitespace().next().unwrap().to_string();
    let (_, show, _) = checkpoints(&p, &["show", &session]);
    assert!(
        show.contains("data/large.txt  not saved (5000 bytes, over checkpoint_max_bytes)"),
        "{show}"
    );
    let (code, restored, err) = checkpoints(&p, &["restore", &session]);
    assert_eq!(code, 0, "{err}");
    assert!(restored.contains("restored data/small.txt"), "{restored}");
    assert!(
        restored
            .contains("not restored: data/large.txt (5000 bytes) was over checkpoint_max_bytes"),
        "{restored}"
    );
    assert_eq!(
        std::fs::read_to_string(p.path("data/small.txt")).unwrap(),
        "small\n"
    );
    assert!(!p.path("data/large.txt").exists());
    assert_eq!(
        std::fs::read_to_string(p.path("big.txt")).unwrap(),
        "short\n"
    );
    // The only copy of huge.txt is at its new name: the restore leaves it there.
    assert_eq!(
        std::fs::read_to_string(p.path("moved/huge.txt")).unwrap(),
        "H".repeat(4000)
    );
}

/// A name that is not UTF-8 and its lossy twin (`a\xff.txt`, `a\u{FFFD}.txt`) are two files:
/// a recursive delete checkpoints both, and the restore brings both back, with a symlink's
/// non-UTF-8 target and a non-UTF-8 directory intact.
#[test]
fn names_that_are_not_utf8_survive_a_delete_and_restore() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let p = Project::new();
    let d = p.path("d");
    std::fs::create_dir_all(d.join(OsStr::from_bytes(b"s\xfe"))).unwrap();
    std::fs::write(d.join(OsStr::from_bytes(b"a\xff.txt")), "raw bytes\n").unwrap();
    std::fs::write(d.join("a\u{FFFD}.txt"), "lossy twin\n").unwrap();
    std::fs::write(d.join(OsStr::from_bytes(b"s\xfe/inner.txt")), "inner\n").unwrap();
    std::os::unix::fs::symlink(OsStr::from_bytes(b"t\xfe"), d.join("link")).unwrap();
    let out = run(
        &p,
        &[json!({"tool": "ws_delete", "args": {"path": "d", "recursive": true}})],
    );
    let text = out[0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("deleted d (4 files); restore it with"),
        "{text}"
    );
    assert!(!d.exists());
    let (_, list, _) = checkpoints(&p, &["list"]);
    let session = list.split_whitespace().next().unwrap().to_string();
    let (code, restored, err) = checkpoints(&p, &["restore", &session]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(restored.matches("restored").count(), 4, "{restored}");
    assert_eq!(
        std::fs::read(d.join(OsStr::from_bytes(b"a\xff.txt"))).unwrap(),
        b"raw bytes\n"
    );
    assert_eq!(
        std::fs::read(d.join("a\u{FFFD}.txt")).unwrap(),
        b"lossy twin\n"
    );
    assert_eq!(
        std::fs::read(d.join(OsStr::from_bytes(b"s\xfe/inner.txt"))).unwrap(),
        b"inner\n"
    );
    assert_eq!(
        std::fs::read_link(d.join("link"))
            .unwrap()
            .as_os_str()
            .as_bytes(),
        b"t\xfe"
    );
}

/// What a killed run left — a staged temp, a temp beside its target with its record, a
/// checkpoint directory without a manifest — goes at the next start when its process is gone
/// and it is over a minute old; a live process's files, fresh ones and anything not named by
/// slmcode stay.
#[test]
fn a_start_sweeps_what_a_killed_run_left_behind() {
    let p = Project::new();
    let dead = {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    };
    let live = std::process::id();
    let old = std::time::Duration::from_secs(600);
    p.write("w/keep.txt", "keep\n")
        .write(&format!("w/.slmcode-{dead}-4.tmp"), "half a write")
        .write(&format!(".slmcode/tmp/{dead}-1.tmp"), "stale")
        .write(&format!(".slmcode/tmp/{dead}-2.tmp"), "fresh")
        .write(&format!(".slmcode/tmp/{live}-3.tmp"), "live")
        .write(
            &format!(".slmcode/tmp/{dead}-4.tmp.beside"),
            format!("w/.slmcode-{dead}-4.tmp"),
        )
        .write(&format!(".slmcode/tmp/{dead}-5.tmp.beside"), "w/keep.txt")
        .write(".slmcode/tmp/notes.txt", "mine")
        .write(
            &format!(".slmcode/checkpoints/100-{dead}-1/blobs/0001"),
            "orphan",
        )
        .write(
            &format!(".slmcode/checkpoints/100-{dead}-2/blobs/0001"),
            "kept",
        )
        .write(
            &format!(".slmcode/checkpoints/100-{dead}-2/manifest.json"),
            format!("{{\"session\": \"100-{dead}-2\", \"created\": 100, \"entries\": []}}"),
        )
        .write(
            &format!(".slmcode/checkpoints/100-{live}-1/blobs/0001"),
            "live",
        );
    for rel in [
        format!(".slmcode/tmp/{dead}-1.tmp"),
        format!(".slmcode/tmp/{live}-3.tmp"),
        format!(".slmcode/tmp/{dead}-4.tmp.beside"),
        format!(".slmcode/tmp/{dead}-5.tmp.beside"),
        ".slmcode/tmp/notes.txt".to_string(),
        format!(".slmcode/checkpoints/100-{dead}-1"),
        format!(".slmcode/checkpoints/100-{dead}-2"),
        format!(".slmcode/checkpoints/100-{live}-1"),
    ] {
        common::age(&p.path(&rel), old);
    }
    p.ok("ws_list", r#"{"path": "w"}"#);
    let gone = [
        format!(".slmcode/tmp/{dead}-1.tmp"),
        format!(".slmcode/tmp/{dead}-4.tmp.beside"),
        format!("w/.slmcode-{dead}-4.tmp"),
        format!(".slmcode/tmp/{dead}-5.tmp.beside"),
        format!(".slmcode/checkpoints/100-{dead}-1"),
    ];
    for rel in &gone {
        assert!(!p.path(rel).exists(), "{rel} was left");
    }
    let kept = [
        format!(".slmcode/tmp/{dead}-2.tmp"),
        format!(".slmcode/tmp/{live}-3.tmp"),
        ".slmcode/tmp/notes.txt".to_string(),
        "w/keep.txt".to_string(),
        format!(".slmcode/checkpoints/100-{dead}-2/blobs/0001"),
        format!(".slmcode/checkpoints/100-{live}-1/blobs/0001"),
    ];
    for rel in &kept {
        assert!(p.path(rel).exists(), "{rel} was removed");
    }
}

/// Writes stage their temp files in `.slmcode/tmp/`: none ever appears beside its target
/// (where `git status`, a file watcher or a build would see it), and none is left after.
#[test]
fn writes_never_put_temp_files_beside_their_targets() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    let p = Project::new();
    git(p.root(), &["init", "-q"]);
    let content = |i: usize| format!("{i:02}{}\n", "x".repeat(2 << 20));
    p.write("src/data.txt", content(0));
    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let watcher = {
        let (dir, stop, seen) = (p.path("src"), stop.clone(), seen.clone());
        std::thread::spawn(move || {
            let mut looks = 0u64;
            while !stop.load(Ordering::Relaxed) {
                for e in std::fs::read_dir(&dir).unwrap().flatten() {
                    let name = e.file_name().to_string_lossy().into_owned();
                    if name != "data.txt" {
                        seen.lock().unwrap().push(name);
                    }
                }
                looks += 1;
            }
            looks
        })
    };
    let mut calls = vec![read("src/data.txt")];
    for i in 1..=20 {
        calls.push(
            json!({"tool": "ws_write", "args": {"path": "src/data.txt", "content": content(i)}}),
        );
    }
    let out = run(&p, &calls);
    stop.store(true, Ordering::Relaxed);
    let looks = watcher.join().unwrap();
    assert!(out.iter().all(|r| r["is_error"] == false));
    assert!(looks > 100, "the watcher barely ran ({looks} looks)");
    let seen = seen.lock().unwrap();
    assert!(
        seen.is_empty(),
        "beside the target: {:?}",
        &seen[..seen.len().min(5)]
    );
    assert_eq!(
        std::fs::read_to_string(p.path("src/data.txt")).unwrap(),
        content(20)
    );
    let status = std::process::Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=all"])
        .current_dir(p.root())
        .output()
        .unwrap();
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(!status.contains(".tmp"), "{status}");
    let left: Vec<_> = std::fs::read_dir(p.path(".slmcode/tmp"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n != ".gitignore")
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
