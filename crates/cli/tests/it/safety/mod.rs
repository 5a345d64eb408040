//! The safety net through the real binary: the syntax check and its revert (`syntax`),
//! checkpoints and restore (`restore`), ws_mv and ws_delete (`mv_delete`), the focus guard
//! (`focus`), what a killed run leaves behind (`leftovers`), and what state slmcode trusts
//! and how much of it it reads (`state`).

use crate::common::{bin, Project};
use serde_json::{json, Value};

pub(super) fn run(p: &Project, calls: &[Value]) -> Vec<Value> {
    p.session(&calls.iter().map(|c| format!("{c}\n")).collect::<String>())
}

pub(super) fn read(path: &str) -> Value {
    json!({"tool": "ws_read", "args": {"path": path}})
}

pub(super) fn edit(path: &str, old: &str, new: &str) -> Value {
    json!({"tool": "ws_edit", "args": {"path": path, "old_str": old, "new_str": new}})
}

pub(super) fn checkpoints(p: &Project, args: &[&str]) -> (i32, String, String) {
    p.cli("checkpoints", args)
}

/// The peak memory (MiB) of one `slmcode` run with `args`, `stdin` and the extra `env`,
/// measured by a Python parent that has no other children; and the run's stdout and stderr.
pub(super) fn peak_mib(
    p: &Project,
    args: &[&str],
    stdin: &str,
    env: &[(&str, &std::path::Path)],
) -> (f64, String, String) {
    let script = r#"
import json, resource, subprocess, sys
out = subprocess.run(sys.argv[2:], input=sys.argv[1].encode(), capture_output=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
print(json.dumps([peak, out.stdout.decode(errors="replace"), out.stderr.decode(errors="replace")]))
"#;
    let bin = bin();
    let out = std::process::Command::new("python3")
        .envs(bin.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .envs(env.iter().map(|(k, v)| (*k, *v)))
        .arg("-c")
        .arg(script)
        .arg(stdin)
        .arg(bin.get_program())
        .args(args)
        .arg("--root")
        .arg(p.root())
        .output()
        .expect("python3 runs slmcode");
    let (peak, stdout, stderr): (f64, String, String) =
        serde_json::from_slice(&out.stdout).expect("the peak, stdout and stderr");
    (peak, stdout, stderr)
}

/// A sparse file of `len` bytes with markers at its start, middle and end.
pub(super) fn sparse(p: &Project, rel: &str, len: u64) {
    use std::io::{Seek, SeekFrom, Write};
    let mut f = std::fs::File::create(p.path(rel)).unwrap();
    f.set_len(len).unwrap();
    for (at, mark) in [(0, &b"head"[..]), (len / 2, b"middle"), (len - 4, b"tail")] {
        f.seek(SeekFrom::Start(at)).unwrap();
        f.write_all(mark).unwrap();
    }
}

mod focus;
mod leftovers;
mod mv_delete;
mod restore;
mod state;
mod syntax;
