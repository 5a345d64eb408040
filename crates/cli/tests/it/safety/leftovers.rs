//! What a killed run left behind is swept at the next start, and writes never put temp files
//! beside their targets.

use super::*;
use crate::common;
use crate::common::git;

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
    // The live writer is still writing its temp: it holds it.
    let held = std::fs::File::open(p.path(&format!(".slmcode/tmp/{live}-3.tmp"))).unwrap();
    held.try_lock().unwrap();
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

/// A staged temp whose writer is gone is swept even when its pid now belongs to another live
/// process (pids are reused: slmcode in a container is often pid 1 every time), and one whose
/// writer still holds it stays, however old.
#[test]
fn a_temp_is_swept_when_its_writer_is_gone_though_its_pid_lives_on() {
    let p = Project::new();
    // This test process is alive and wrote neither: its pid stands for a reused one.
    let reused = std::process::id();
    let left = format!(".slmcode/tmp/{reused}-7.tmp");
    let writing = format!(".slmcode/tmp/{reused}-8.tmp");
    p.write(&left, "left by a killed slmcode")
        .write(&writing, "still being written");
    for rel in [&left, &writing] {
        common::age(&p.path(rel), std::time::Duration::from_secs(600));
    }
    let held = std::fs::File::open(p.path(&writing)).unwrap();
    held.try_lock().unwrap();
    p.ok("ws_list", r#"{"path": "."}"#);
    assert!(!p.path(&left).exists(), "{left} was left");
    assert!(
        p.path(&writing).exists(),
        "{writing} was removed while held"
    );
    drop(held);
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
