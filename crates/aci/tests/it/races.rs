//! The `.slmcode/` boundary under a directory swapped mid-call: a thread exchanges `w/d` (a
//! real directory) with `w/s` (a symlink to `../.slmcode`) as fast as it can while the tools
//! write, delete and move under `w/d/`. Before every write went through a directory opened once
//! and checked (`anchor.rs`), a few in every thousand landed in `.slmcode/`. Bounded in time.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use slmcode_aci::{Config, Registry, Workspace};

/// Exchanges two names atomically, over and over, until told to stop.
fn swapper(
    a: std::path::PathBuf,
    b: std::path::PathBuf,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let a = std::ffi::CString::new(a.as_os_str().as_encoded_bytes()).unwrap();
        let b = std::ffi::CString::new(b.as_os_str().as_encoded_bytes()).unwrap();
        let mut n = 0;
        while !stop.load(Ordering::Relaxed) {
            // SAFETY: renameat2 with two NUL-terminated paths we own.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_renameat2,
                    libc::AT_FDCWD,
                    a.as_ptr(),
                    libc::AT_FDCWD,
                    b.as_ptr(),
                    libc::RENAME_EXCHANGE,
                )
            };
            if r == 0 {
                n += 1;
            }
        }
        n
    })
}

fn control_files(root: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root.join(".slmcode"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn no_write_delete_or_move_lands_in_slmcode_through_a_swapped_directory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".slmcode")).unwrap();
    std::fs::create_dir_all(root.join("w/d")).unwrap();
    std::fs::write(
        root.join(".slmcode/config.yaml"),
        "shell_permission: deny\n",
    )
    .unwrap();
    const N: usize = 400;
    for i in 0..N {
        // The same names inside .slmcode/ and in the real directory: a delete or move that
        // goes the wrong way takes the control one.
        std::fs::write(root.join(format!(".slmcode/del{i}")), "control\n").unwrap();
        std::fs::write(root.join(format!("w/d/del{i}")), "project\n").unwrap();
        std::fs::write(root.join(format!(".slmcode/mv{i}")), "control\n").unwrap();
        std::fs::write(root.join(format!("w/d/mv{i}")), "project\n").unwrap();
    }
    std::os::unix::fs::symlink("../.slmcode", root.join("w/s")).unwrap();
    // Writes stage their temp files here: the harness's own directory, present from the start.
    std::fs::create_dir_all(root.join(".slmcode/tmp")).unwrap();
    let before = control_files(root);
    let config = Config {
        file_checkpoints: false,
        read_before_edit: false,
        ..Config::default()
    };
    let mut ws = Workspace::open(root, config).unwrap();
    let registry = Registry::coding();
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = swapper(root.join("w/d"), root.join("w/s"), stop.clone());
    let (landed, refused) = (AtomicU64::new(0), AtomicU64::new(0));
    let count = |ok: bool| {
        if ok { &landed } else { &refused }.fetch_add(1, Ordering::Relaxed);
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    for i in 0..N {
        if Instant::now() > deadline {
            break;
        }
        let r = registry.call(
            &mut ws,
            "ws_write",
            &json!({"path": format!("w/d/new{i}.txt"), "content": "x\n"}),
        );
        count(!r.is_error);
        let r = registry.call(
            &mut ws,
            "ws_delete",
            &json!({"path": format!("w/d/del{i}")}),
        );
        count(!r.is_error);
        let r = registry.call(
            &mut ws,
            "ws_mv",
            &json!({"from": format!("w/d/mv{i}"), "to": format!("w/d/moved{i}")}),
        );
        count(!r.is_error);
    }
    stop.store(true, Ordering::Relaxed);
    let swapped = swaps.join().unwrap();
    assert!(
        swapped > 1000,
        "the swapper barely ran ({swapped} exchanges)"
    );
    // Nothing was added to, removed from or changed in .slmcode/ (the staging directory holds
    // nothing but its .gitignore once the writes are done).
    let after = control_files(root);
    let staged: Vec<String> = std::fs::read_dir(root.join(".slmcode/tmp"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".gitignore")
        .collect();
    assert!(staged.is_empty(), "left in .slmcode/tmp: {staged:?}");
    let added: Vec<&String> = after.iter().filter(|n| !before.contains(n)).collect();
    let removed: Vec<&String> = before.iter().filter(|n| !after.contains(n)).collect();
    assert!(
        added.is_empty() && removed.is_empty(),
        "{} landed in .slmcode/ (e.g. {:?}), {} taken from it (e.g. {:?})",
        added.len(),
        added.iter().take(5).collect::<Vec<_>>(),
        removed.len(),
        removed.iter().take(5).collect::<Vec<_>>()
    );
    assert_eq!(
        std::fs::read_to_string(root.join(".slmcode/config.yaml")).unwrap(),
        "shell_permission: deny\n"
    );
    for i in 0..N {
        assert_eq!(
            std::fs::read_to_string(root.join(format!(".slmcode/del{i}"))).unwrap(),
            "control\n"
        );
    }
    // The race was real: most calls still landed.
    let landed = landed.load(Ordering::Relaxed);
    assert!(landed > (N as u64) / 10, "only {landed} calls landed");
    eprintln!(
        "{swapped} exchanges; {landed} calls landed, {} refused",
        refused.load(Ordering::Relaxed)
    );
}
