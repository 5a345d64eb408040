//! Checkpoints and restore: bytes and modes come back, moves restore on both paths, a
//! swapped directory is never written through, large files are streamed, files over the limit
//! are named, and names that are not UTF-8 survive.

use std::os::unix::fs::PermissionsExt;

use super::*;
use crate::common;

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
    let (peak, out, _) = peak_mib(
        &p,
        &["session"],
        "{\"tool\": \"ws_delete\", \"args\": {\"path\": \"big.bin\"}}\n",
        &[],
    );
    assert!(out.contains("deleted big.bin; restore it with"), "{out}");
    assert!(
        peak < 100.0,
        "deleting a 160 MiB file peaked at {peak:.0} MiB"
    );
    assert!(!p.path("big.bin").exists());
    let (_, list, _) = checkpoints(&p, &["list"]);
    let session = list.split_whitespace().next().unwrap().to_string();
    let (peak, out, _) = peak_mib(&p, &["checkpoints", "restore", &session], "", &[]);
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

/// Every regular file under `dir` whose mode has a setuid, setgid or sticky bit.
fn special_modes(dir: &std::path::Path) -> Vec<String> {
    common::snapshot(dir)
        .keys()
        .filter(|rel| {
            std::fs::symlink_metadata(dir.join(rel))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o7000 != 0)
        })
        .cloned()
        .collect()
}

/// A checkpoint that came with the repository — a manifest that says a file of the user's did
/// not exist and another held a setuid copy — is never restored: the user's files stay as they
/// are, byte for byte, no special mode appears, it is not listed, and it is left in place.
#[test]
fn a_shipped_checkpoint_is_never_restored() {
    let p = Project::new();
    p.write("victim.txt", "the user's own work\n");
    p.write("tool.sh", "#!/bin/sh\necho mine\n");
    let id = "1700000000-1-1";
    let manifest = format!(".slmcode/checkpoints/{id}/manifest.json");
    p.write(
        &manifest,
        json!({"session": id, "created": 1_700_000_000u64, "entries": [
            {"path": "victim.txt", "state": "absent"},
            {"path": "tool.sh", "state": "file", "mode": 0o6755, "blob": "0001",
             "blake3": blake3::hash(b"#!/bin/sh\nevil\n").to_hex().to_string()},
            {"path": "new-root.sh", "state": "file", "mode": 0o6755, "blob": "0001"}
        ]})
        .to_string(),
    );
    p.write(
        &format!(".slmcode/checkpoints/{id}/blobs/0001"),
        "#!/bin/sh\nevil\n",
    );
    let before = common::snapshot(p.root());
    let (code, out, err) = checkpoints(&p, &["restore", id]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(&format!(
            "{manifest} was not written by slmcode for this user"
        )),
        "{err}"
    );
    assert_eq!(
        common::snapshot(p.root()),
        before,
        "the restore changed files"
    );
    assert!(special_modes(p.root()).is_empty());
    let (code, list, err) = checkpoints(&p, &["list"]);
    assert_eq!(code, 0, "{err}");
    assert!(!list.contains(id), "{list}");
    assert!(err.contains(&manifest), "{err}");
    let (code, _, err) = checkpoints(&p, &["show", id]);
    assert_eq!(code, 1);
    assert!(
        err.contains("not written by slmcode for this user"),
        "{err}"
    );
}

/// A saved copy changed after it was saved is never written back: the restore of that path is
/// refused and the file stays as the session left it.
#[test]
fn a_changed_saved_copy_is_never_written_back() {
    let p = Project::new();
    p.write("a.txt", "original\n");
    let out = run(&p, &[read("a.txt"), edit("a.txt", "original", "edited")]);
    assert!(out.iter().all(|r| r["is_error"] == false), "{out:?}");
    let (_, list, _) = checkpoints(&p, &["list"]);
    let session = list.split_whitespace().next().unwrap().to_string();
    p.write(
        &format!(".slmcode/checkpoints/{session}/blobs/0001"),
        "hostile\n",
    );
    let (code, said, err) = checkpoints(&p, &["restore", &session]);
    assert_eq!(code, 1, "{said}{err}");
    assert!(err.contains("changed since it was saved"), "{err}");
    assert_eq!(
        std::fs::read_to_string(p.path("a.txt")).unwrap(),
        "edited\n"
    );
}

/// A restore never sets a setuid, setgid or sticky bit, even where the file had them: the rest
/// of the mode comes back, and the result says what was left off.
#[test]
fn restores_never_set_setuid_setgid_or_sticky() {
    let p = Project::new();
    p.write("tool.sh", "#!/bin/sh\necho one\n");
    std::fs::set_permissions(p.path("tool.sh"), std::fs::Permissions::from_mode(0o7755)).unwrap();
    let had = std::fs::metadata(p.path("tool.sh"))
        .unwrap()
        .permissions()
        .mode()
        & 0o7777;
    assert_ne!(had & 0o7000, 0, "this system set no special bit ({had:o})");
    let out = run(
        &p,
        &[json!({"tool": "ws_delete", "args": {"path": "tool.sh"}})],
    );
    assert!(out.iter().all(|r| r["is_error"] == false), "{out:?}");
    let (_, list, _) = checkpoints(&p, &["list"]);
    let session = list.split_whitespace().next().unwrap().to_string();
    let (code, said, err) = checkpoints(&p, &["restore", &session]);
    assert_eq!(code, 0, "{err}");
    assert!(
        said.contains("restored tool.sh (19 bytes, mode 755; setuid, setgid and sticky bits are never restored)"),
        "{said}"
    );
    let mode = std::fs::metadata(p.path("tool.sh"))
        .unwrap()
        .permissions()
        .mode()
        & 0o7777;
    assert_eq!(mode, 0o755);
    assert!(special_modes(p.root()).is_empty());
}
