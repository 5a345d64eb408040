//! Only slmcode's own state is trusted: what a repository ships under `.slmcode/` (pending
//! changes, the symbol index — runs and checkpoints are in `run/resume.rs` and `restore.rs`)
//! is ignored, reported and left in place; `slmcode doctor` lists it; and every file slmcode
//! reads back, from the project or the user's directories, is read through a size bound.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::*;
use crate::common::{self, data_dir, warnings_about};
use crate::openai::{FakeModel, Scripted};

/// The state key is made on first use, private to the user, in the user's data directory.
#[test]
fn the_state_key_is_made_private_in_the_users_data_directory() {
    let p = Project::new();
    let key = data_dir().join("slmcode/state.key");
    let _ = std::fs::remove_file(&key);
    p.ok("ws_write", r#"{"path": "a.txt", "content": "a\n"}"#);
    let meta = std::fs::metadata(&key).expect("a state key");
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let text = std::fs::read_to_string(&key).unwrap();
    assert_eq!(text.trim().len(), 64, "{text}");
    assert!(text.trim().chars().all(|c| c.is_ascii_hexdigit()), "{text}");
    // Made once: the next command uses the same key.
    p.ok("ws_write", r#"{"path": "b.txt", "content": "b\n"}"#);
    assert_eq!(std::fs::read_to_string(&key).unwrap(), text);
}

/// A pending change that came with the repository is never applied, shown or listed, and is
/// left in place.
#[test]
fn a_shipped_pending_change_is_never_applied() {
    let p = Project::new();
    let lib = "pub fn f() -> u32 {\n    1\n}\n";
    p.write("src/lib.rs", lib);
    let id = "1700000000-1";
    let record = format!(".slmcode/pending/{id}.json");
    p.write(
        &record,
        json!({"id": id, "path": "src/lib.rs", "tool": "ws_edit", "created": 1_700_000_000u64,
               "before": blake3::hash(lib.as_bytes()).to_hex().to_string(),
               "after": "pub fn f() -> u32 {\n    std::process::exit(0)\n}\n"})
        .to_string(),
    );
    let (code, out, err) = p.cli("pending", &["apply", id]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(&format!(
            "{record} was not written by slmcode for this user"
        )),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(p.path("src/lib.rs")).unwrap(), lib);
    let (code, _, err) = p.cli("pending", &["show", id]);
    assert_eq!(code, 1);
    assert!(
        err.contains("not written by slmcode for this user"),
        "{err}"
    );
    let (code, list, err) = p.cli("pending", &["list"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(list.trim(), "no pending changes");
    assert_eq!(warnings_about(&err, &record), 1, "{err}");
    assert!(p.path(&record).exists(), "left in place");
}

/// A symbol index that came with the repository — made by slmcode for files of the same size
/// and modification time — is not believed: the files are read again and answers are right.
#[test]
fn a_shipped_symbol_index_is_never_believed() {
    let p = Project::new();
    p.write("src/lib.rs", "pub fn alpha() {}\n");
    common::age(&p.path("src/lib.rs"), std::time::Duration::from_secs(3600));
    let theirs = tempfile::tempdir().unwrap();
    let theirs = [("XDG_DATA_HOME", theirs.path().to_str().unwrap())];
    let (text, err) = p.tool_env("ws_symbols", r#"{"query": "alpha"}"#, &theirs);
    assert!(!err && text.contains("alpha"), "{text}");
    assert!(p.path(".slmcode/cache/symbols.idx").is_file());
    // The same size and modification time, another definition.
    let mtime = std::fs::metadata(p.path("src/lib.rs"))
        .unwrap()
        .modified()
        .unwrap();
    p.write("src/lib.rs", "pub fn gamma() {}\n");
    std::fs::File::options()
        .write(true)
        .open(p.path("src/lib.rs"))
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let out = p.run_tool("ws_symbols", r#"{"query": "gamma"}"#, &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}{err}");
    assert!(
        text.starts_with("src/lib.rs:1 function pub fn gamma()"),
        "{text}"
    );
    assert_eq!(
        warnings_about(&err, ".slmcode/cache/symbols.idx"),
        1,
        "{err}"
    );
}

/// `slmcode doctor` lists every state file slmcode did not write.
#[test]
fn doctor_lists_state_slmcode_did_not_write() {
    let p = Project::new();
    p.write(
        ".slmcode/runs/20250101-000000-1.state.json",
        "{\"version\": 1}",
    )
    .write(
        ".slmcode/runs/20250101-000000-1.jsonl",
        "{\"type\":\"start\"}\n",
    )
    .write(".slmcode/checkpoints/1700000000-1-1/manifest.json", "{}")
    .write(".slmcode/pending/1700000000-1.json", "{}")
    .write(".slmcode/cache/symbols.idx", "forged");
    // And one of slmcode's own, which is not listed.
    p.ok("ws_write", r#"{"path": "a.txt", "content": "a\n"}"#);
    let (_, said, err) = p.cli("doctor", &[]);
    let line = said
        .lines()
        .find(|l| l.contains("not written by slmcode"))
        .unwrap_or_else(|| panic!("no state line in:\n{said}{err}"));
    assert!(line.starts_with("warn"), "{line}");
    for path in [
        ".slmcode/runs/20250101-000000-1.state.json",
        ".slmcode/runs/20250101-000000-1.jsonl",
        ".slmcode/checkpoints/1700000000-1-1/manifest.json",
        ".slmcode/pending/1700000000-1.json",
        ".slmcode/cache/symbols.idx",
    ] {
        assert!(said.contains(path), "{path} not listed:\n{said}");
    }
    assert!(!said.contains("checkpoints/1700000000-1-1/blobs"), "{said}");
}

/// A sparse file of 1 GiB at `path` (its directories made).
fn sparse_gib(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let f = std::fs::File::create(path).unwrap();
    f.set_len(1 << 30).unwrap();
}

/// Every file slmcode reads back — from the project's `.slmcode/` and from the user's own
/// directories — goes through one size bound: a 1 GiB sparse file is refused or ignored with
/// words that say so, memory stays far below its size, and the file is left in place.
#[test]
fn every_file_read_back_is_read_through_a_size_bound() {
    const TOO_LARGE: &str = "1073741824 bytes, over the";
    let model = FakeModel::start((0..8).map(|_| Scripted::final_done("ok")).collect());
    let run: Vec<&str> = vec!["run", "a task", "--json", "--endpoint", &model.url];
    let ws_symbols = ["tool", "ws_symbols", r#"{"query": "f"}"#];
    /// Where a file is: the project, the user's config or data directory.
    enum At {
        Project,
        Config,
        Data,
    }
    /// One file, the command that reads it, what its output must say, and whether the file
    /// stays (a cache and learned state are made again in its place).
    struct Case<'a> {
        file: &'a str,
        at: At,
        args: Vec<&'a str>,
        says: Option<&'a str>,
        kept: bool,
    }
    let case = |file, at, args: &[&'static str], says, kept| Case {
        file,
        at,
        args: args.to_vec(),
        says,
        kept,
    };
    // A record of a temp beside its target, left by a dead writer: read by the sweep at start.
    let dead = {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    };
    let beside = format!(".slmcode/tmp/{dead}-1.tmp.beside");
    let resume = vec![
        "run",
        "--resume",
        "20250101-000000-1",
        "more",
        "--endpoint",
        &model.url,
    ];
    let cases = [
        case(
            ".slmcode/config.yaml",
            At::Project,
            &["config", "show"],
            Some(TOO_LARGE),
            true,
        ),
        case(
            ".slmcode/hooks.json",
            At::Project,
            &["hooks", "list"],
            Some(TOO_LARGE),
            true,
        ),
        Case {
            file: ".slmcode/runs/20250101-000000-1.state.json",
            at: At::Project,
            args: resume,
            says: Some(TOO_LARGE),
            kept: true,
        },
        case(
            ".slmcode/runs/20250101-000000-1.jsonl",
            At::Project,
            &["runs", "list"],
            Some(TOO_LARGE),
            true,
        ),
        case(
            ".slmcode/runs/20250101-000000-1.jsonl",
            At::Project,
            &["runs", "show", "20250101-000000-1"],
            Some(TOO_LARGE),
            true,
        ),
        case(
            ".slmcode/checkpoints/1700000000-1-1/manifest.json",
            At::Project,
            &["checkpoints", "list"],
            Some(TOO_LARGE),
            true,
        ),
        case(
            ".slmcode/pending/1700000000-1.json",
            At::Project,
            &["pending", "list"],
            Some(TOO_LARGE),
            true,
        ),
        case(
            ".slmcode/cache/symbols.idx",
            At::Project,
            &ws_symbols,
            Some(TOO_LARGE),
            false,
        ),
        Case {
            file: ".slmcode/skills/big/SKILL.md",
            at: At::Project,
            args: run.clone(),
            says: Some(TOO_LARGE),
            kept: true,
        },
        Case {
            file: "AGENTS.md",
            at: At::Project,
            args: run.clone(),
            says: None,
            kept: true,
        },
        case(
            "slmcode/config.yaml",
            At::Config,
            &["config", "show"],
            Some(TOO_LARGE),
            true,
        ),
        case(
            "slmcode/trusted-hooks.json",
            At::Config,
            &["hooks", "list"],
            None,
            true,
        ),
        Case {
            file: "slmcode/skills/big/SKILL.md",
            at: At::Config,
            args: run.clone(),
            says: Some(TOO_LARGE),
            kept: true,
        },
        Case {
            file: "slmcode/evolve.json",
            at: At::Data,
            args: run.clone(),
            says: Some(TOO_LARGE),
            kept: false,
        },
        Case {
            file: "slmcode/servers.json",
            at: At::Data,
            args: run.clone(),
            says: None,
            kept: true,
        },
        Case {
            file: &beside,
            at: At::Project,
            args: vec!["tool", "ws_list", r#"{"path": "."}"#],
            says: None,
            kept: false,
        },
        case(
            "slmcode/state.key",
            At::Data,
            &ws_symbols,
            Some(TOO_LARGE),
            true,
        ),
    ];
    for Case {
        file: rel,
        at,
        args,
        says,
        kept,
    } in cases
    {
        let p = Project::new();
        p.write("src/lib.rs", "pub fn f() {}\n");
        p.write(".slmcode/hooks.json", "{}");
        let config = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let file: PathBuf = match at {
            At::Project => p.path(rel),
            At::Config => config.path().join(rel),
            At::Data => data.path().join(rel),
        };
        sparse_gib(&file);
        if rel.ends_with(".beside") {
            common::age(&file, std::time::Duration::from_secs(600));
        }
        let env = [
            ("XDG_CONFIG_HOME", config.path()),
            ("XDG_DATA_HOME", data.path()),
        ];
        let (peak, stdout, stderr) = peak_mib(&p, &args, "", &env);
        let out = format!("{stdout}{stderr}");
        assert!(
            peak < 256.0,
            "{rel} ({args:?}): peaked at {peak:.0} MiB\n{out}"
        );
        if let Some(says) = says {
            assert!(out.contains(says), "{rel} ({args:?}):\n{out}");
        }
        if kept {
            assert_eq!(
                std::fs::metadata(&file).unwrap().len(),
                1 << 30,
                "{rel} was not left in place"
            );
        }
    }
}
