//! Shared helpers for the behaviour tests: they drive the real `slmcode` binary.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// Counted skips: one file for both test binaries.
#[path = "../../../../aci/tests/it/skip.rs"]
pub mod skip;
pub use skip::skip;

/// Polls `f` every 20 ms until it gives a value or `limit` has passed: the value, or `None`.
/// A test of a bound waits with this, so a regression fails by name instead of hanging.
pub fn within<T>(limit: std::time::Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let start = std::time::Instant::now();
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if start.elapsed() >= limit {
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The binary under test, built by cargo for this test run.
pub fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_slmcode"));
    // Tests must not pick up limits from the developer's environment.
    for (k, _) in std::env::vars() {
        if k.starts_with("SLMCODE_") {
            cmd.env_remove(k);
        }
    }
    // Nor the developer's own ~/.config/slmcode (MCP servers); tests that need a user config
    // point XDG_CONFIG_HOME at one of their own.
    cmd.env(
        "XDG_CONFIG_HOME",
        std::env::temp_dir().join("slmcode-tests-no-user-config"),
    );
    // Nor their caches: sandboxed commands keep theirs under XDG_CACHE_HOME.
    cmd.env(
        "XDG_CACHE_HOME",
        std::env::temp_dir().join(format!("slmcode-tests-cache-{}", std::process::id())),
    );
    // Nor their learned edit formats, nor their state key; runs learn, and seal what they
    // save, in a directory of this test process.
    cmd.env("XDG_DATA_HOME", data_dir());
    cmd
}

/// The user data directory every command of this test process gets (`XDG_DATA_HOME`): its
/// learned state and its state key, so what one command saves another trusts.
pub fn data_dir() -> PathBuf {
    std::env::temp_dir().join(format!("slmcode-tests-data-{}", std::process::id()))
}

/// A scratch project directory, removed when dropped.
pub struct Project {
    pub dir: tempfile::TempDir,
}

impl Project {
    pub fn new() -> Project {
        Project {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// `slmcode COMMAND ARGS --root <this project>`: its exit code, stdout and stderr.
    pub fn cli(&self, command: &str, args: &[&str]) -> (i32, String, String) {
        let out = bin()
            .arg(command)
            .args(args)
            .arg("--root")
            .arg(self.root())
            .output()
            .expect("run slmcode");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// The text of the project's one run trajectory (`.slmcode/runs/<id>.jsonl`).
    pub fn run_log(&self) -> String {
        let log = std::fs::read_dir(self.path(".slmcode/runs"))
            .expect("a runs directory")
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .expect("a trajectory");
        std::fs::read_to_string(log).expect("a readable trajectory")
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Writes a file, creating parent directories.
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> &Project {
        let p = self.path(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(p, content).expect("write");
        self
    }

    pub fn mkdir(&self, rel: &str) -> &Project {
        std::fs::create_dir_all(self.path(rel)).expect("mkdir");
        self
    }

    pub fn symlink(&self, target: impl AsRef<Path>, link: &str) -> &Project {
        std::os::unix::fs::symlink(target, self.path(link)).expect("symlink");
        self
    }

    /// `slmcode tool NAME ARGS --root ROOT`: (stdout text, is_error from the exit status).
    pub fn tool(&self, name: &str, args: &str) -> (String, bool) {
        self.tool_env(name, args, &[])
    }

    pub fn tool_env(&self, name: &str, args: &str, env: &[(&str, &str)]) -> (String, bool) {
        let out = self.run_tool(name, args, env);
        let code = out.status.code();
        assert!(
            code == Some(0) || code == Some(1),
            "unexpected exit {code:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).expect("utf-8 output");
        let text = text.strip_suffix('\n').unwrap_or(&text).to_string();
        (text, code == Some(1))
    }

    pub fn run_tool(&self, name: &str, args: &str, env: &[(&str, &str)]) -> Output {
        let mut cmd = bin();
        cmd.arg("tool")
            .arg(name)
            .arg(args)
            .arg("--root")
            .arg(self.root());
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().expect("run slmcode")
    }

    /// A successful call's text; fails the test if the tool reported an error.
    pub fn ok(&self, name: &str, args: &str) -> String {
        let (text, err) = self.tool(name, args);
        assert!(!err, "{name} {args} failed: {text}");
        text
    }

    /// A failing call's text; fails the test if the tool succeeded.
    pub fn err(&self, name: &str, args: &str) -> String {
        let (text, err) = self.tool(name, args);
        assert!(err, "{name} {args} should have failed: {text}");
        text
    }

    /// Feeds `input` to `slmcode session` and parses every output line.
    pub fn session(&self, input: &str) -> Vec<Value> {
        self.session_env(input, &[])
    }

    /// [`Project::session`] with extra environment variables.
    pub fn session_env(&self, input: &str, env: &[(&str, &str)]) -> Vec<Value> {
        let mut cmd = bin();
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .arg("session")
            .arg("--root")
            .arg(self.root())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn session");
        let mut stdin = child.stdin.take().expect("stdin");
        let input = input.to_string();
        let writer = std::thread::spawn(move || {
            stdin.write_all(input.as_bytes()).expect("write stdin");
        });
        let out = child.wait_with_output().expect("session output");
        writer.join().expect("writer");
        assert!(
            out.status.success(),
            "session failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .expect("utf-8")
            .lines()
            .map(|l| serde_json::from_str(l).expect("each output line is JSON"))
            .collect()
    }
}

/// Runs git in the project, failing the test if it fails.
pub fn git(root: &Path, args: &[&str]) {
    let st = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(root)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("git");
    assert!(st.success(), "git {args:?} failed");
}

/// Every entry under `dir` (recursively, symlinks not followed): its path relative to `dir`
/// and its bytes (`None` for a directory, the link text for a symlink). Compare two snapshots
/// to prove a refused call changed nothing.
pub fn snapshot(dir: &Path) -> std::collections::BTreeMap<String, Option<Vec<u8>>> {
    fn walk(
        base: &Path,
        dir: &Path,
        out: &mut std::collections::BTreeMap<String, Option<Vec<u8>>>,
    ) {
        let Ok(read) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in read.flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(base)
                .expect("inside")
                .to_string_lossy()
                .into_owned();
            let kind = entry.file_type().expect("file type");
            if kind.is_symlink() {
                let target = std::fs::read_link(&path).expect("read link");
                out.insert(
                    rel,
                    Some(target.to_string_lossy().into_owned().into_bytes()),
                );
            } else if kind.is_dir() {
                out.insert(rel, None);
                walk(base, &path, out);
            } else {
                out.insert(rel, Some(std::fs::read(&path).expect("read")));
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Sets a file's or directory's modification time `by` into the past: stat data that differs
/// from what git or a sweep recorded, without waiting for the clock.
pub fn age(path: &Path, by: std::time::Duration) {
    let f = std::fs::File::open(path).expect("open to age");
    f.set_modified(std::time::SystemTime::now() - by)
        .expect("set the modification time");
}

/// Whether a process whose command line holds `marker` is alive (zombies do not count): how
/// a test proves a command and everything it started are gone.
pub fn alive(marker: &str) -> bool {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            std::fs::read_to_string(e.path().join("stat")).is_ok_and(|s| {
                s.rsplit_once(')')
                    .is_some_and(|(_, r)| !r.trim_start().starts_with('Z'))
            })
        })
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .any(|c| String::from_utf8_lossy(&c).contains(marker))
}

/// Whether this build has Linux's own sandbox and containment (not the portable fallbacks of
/// the `portable` feature, which CI tests too); where not, a check of what only Linux
/// guarantees is a counted skip, and false.
pub fn native(what: &str) -> bool {
    use slmcode_aci::platform::Platform;
    if Platform::current() == Platform::Linux {
        return true;
    }
    skip(
        what,
        &format!(
            "not guaranteed by this build: {}",
            Platform::current().describe()
        ),
    );
    false
}

/// How many lines of `stderr` warn about `path` (a warning is said once per command).
pub fn warnings_about(stderr: &str, path: &str) -> usize {
    stderr
        .lines()
        .filter(|l| l.starts_with("slmcode: warning:") && l.contains(path))
        .count()
}
