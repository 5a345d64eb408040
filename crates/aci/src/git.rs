//! The one way slmcode starts git, and the settings that keep any git from running what a
//! repository configured.
//!
//! A repository's config (and `.gitattributes`) can name programs git runs on ordinary
//! commands: `core.fsmonitor` on every index refresh, clean/smudge/process filters whenever a
//! file is hashed (`git status`), textconv and external diff drivers, pagers, hooks (git mv
//! writes the index and runs `post-index-change`), credential helpers. A cloned or unpacked
//! project may ship them, and a model may plant them. slmcode's own git runs outside any
//! sandbox, so every such mechanism is switched off here: fixed overrides for the named keys,
//! and every filter driver the config defines emptied by name. The overrides travel in
//! `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` (git 2.31+), which outrank every
//! config file and reach the git processes a command starts — ws_shell's commands get the
//! same environment.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// Keys set for every git process, whatever the repository says. An empty `credential.helper`
/// clears the helper list; an empty `diff.external` means none.
const FIXED: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("credential.helper", ""),
    ("diff.external", ""),
    // Submodules are compared by commit only, so git never starts inside one whose own config
    // this list does not cover.
    ("diff.ignoreSubmodules", "dirty"),
    ("submodule.recurse", "false"),
    ("status.submoduleSummary", "false"),
    ("log.showSignature", "false"),
    ("gpg.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.x509.program", "false"),
    ("protocol.ext.allow", "never"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("color.ui", "false"),
];

/// Why slmcode cannot run git here.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum GitError {
    #[error("git is not installed (no \"git\" on PATH)")]
    Missing,
    #[error("git {0} is too old: slmcode needs git 2.31 or newer to run git without the programs a repository configures (fsmonitor, filters, hooks)")]
    TooOld(String),
}

/// The configuration overrides, as `(key, value)` pairs, for git processes in `root`: the fixed
/// list plus, for every filter driver that the repository's own config (local and worktree
/// scope, includes followed) or one of `other_git_dirs`' configs defines, its `clean`,
/// `smudge` and `process` emptied and `required` off — an empty filter command means no
/// filter. Drivers from the user's own global or system config (git-lfs) are the user's and
/// stay.
pub fn overrides(root: &Path, other_git_dirs: &[PathBuf]) -> Vec<(String, String)> {
    let mut out = fixed();
    let mut keys: Vec<String> = repo_config(root).into_iter().map(|e| e.key).collect();
    for dir in other_git_dirs {
        if let Some(listing) = config_list(root, Some(&dir.join("config"))) {
            keys.extend(config_entries(&listing).into_iter().map(|e| e.key));
        }
    }
    let mut drivers: Vec<String> = Vec::new();
    for key in keys {
        if let Some(driver) = filter_driver(&key) {
            if !drivers.contains(&driver) {
                drivers.push(driver);
            }
        }
    }
    for d in drivers {
        for (var, value) in [
            ("clean", ""),
            ("smudge", ""),
            ("process", ""),
            ("required", "false"),
        ] {
            out.push((format!("filter.{d}.{var}"), value.to_string()));
        }
    }
    out
}

/// The environment that carries `overrides` to git, plus what keeps git from paging or
/// prompting.
pub fn env(overrides: &[(String, String)]) -> Vec<(String, String)> {
    let mut env = vec![
        ("GIT_CONFIG_COUNT".to_string(), overrides.len().to_string()),
        ("GIT_PAGER".to_string(), "cat".to_string()),
        ("GIT_TERMINAL_PROMPT".to_string(), "0".to_string()),
    ];
    for (i, (k, v)) in overrides.iter().enumerate() {
        env.push((format!("GIT_CONFIG_KEY_{i}"), k.clone()));
        env.push((format!("GIT_CONFIG_VALUE_{i}"), v.clone()));
    }
    env
}

/// A git command for slmcode's own use in `root`: no `GIT_*` variable of ours leaks in, every
/// override applied, no pager, no optional index
/// lock (status must not write), no prompt, stdin closed.
pub fn command(root: &Path) -> Result<Command, GitError> {
    check_version()?;
    let mut cmd = bare_git();
    cmd.arg("--no-pager")
        .current_dir(root)
        .envs(env(&overrides(root, &[])))
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null());
    Ok(cmd)
}

/// The fixed overrides as owned pairs.
fn fixed() -> Vec<(String, String)> {
    FIXED
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `git` without any `GIT_*` variable of ours (a `GIT_DIR` would point it elsewhere).
fn bare_git() -> Command {
    let mut cmd = Command::new("git");
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("GIT_") {
            cmd.env_remove(k);
        }
    }
    cmd
}

/// `p` with `.` and `..` taken out, without touching the disk (the place may not exist yet).
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Checks once per process that git exists and reads `GIT_CONFIG_COUNT`.
fn check_version() -> Result<(), GitError> {
    static VERSION: OnceLock<Result<(), GitError>> = OnceLock::new();
    VERSION
        .get_or_init(|| {
            let out = Command::new("git")
                .arg("--version")
                .stdin(Stdio::null())
                .output()
                .map_err(|_| GitError::Missing)?;
            let text = String::from_utf8_lossy(&out.stdout);
            let version = text.trim().trim_start_matches("git version ").to_string();
            let mut parts = version.split(|c: char| !c.is_ascii_digit());
            let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
            let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
            if (major, minor) < (2, 31) {
                return Err(GitError::TooOld(version));
            }
            Ok(())
        })
        .clone()
}

/// `git config --null --show-scope --show-origin --list` in `root` (or of one file), with the
/// fixed overrides applied; listing config runs nothing. `None` when git is unavailable.
fn config_list(root: &Path, file: Option<&Path>) -> Option<Vec<u8>> {
    check_version().ok()?;
    let mut cmd = bare_git();
    cmd.args([
        "config",
        "--null",
        "--includes",
        "--show-scope",
        "--show-origin",
    ]);
    if let Some(f) = file {
        cmd.arg("--file").arg(f);
    }
    cmd.arg("--list")
        .current_dir(root)
        .envs(env(&fixed()))
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    cmd.output().ok().map(|o| o.stdout)
}

/// One entry of a config listing.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ConfigEntry {
    scope: String,
    /// `file:PATH` for entries read from a file.
    origin: String,
    key: String,
    value: String,
}

/// The entries of a `--null --show-scope --show-origin` listing: `scope\0origin\0key\nvalue\0`
/// (or `…key\0` for a bare key).
fn config_entries(listing: &[u8]) -> Vec<ConfigEntry> {
    let mut fields = listing.split(|b| *b == 0);
    let mut out = Vec::new();
    while let (Some(scope), Some(origin), Some(entry)) =
        (fields.next(), fields.next(), fields.next())
    {
        if scope.is_empty() {
            break;
        }
        let text = String::from_utf8_lossy(entry);
        let (key, value) = text.split_once('\n').unwrap_or((&text, ""));
        out.push(ConfigEntry {
            scope: String::from_utf8_lossy(scope).into_owned(),
            origin: String::from_utf8_lossy(origin).into_owned(),
            key: key.to_string(),
            value: value.to_string(),
        });
    }
    out
}

/// The entries the repository itself sets (local and worktree scope, includes followed).
/// Read once per process and again only when one of the files it came from (or the
/// repository's own config) changes: the mutation path and ws_shell both need it on every call.
fn repo_config(root: &Path) -> Vec<ConfigEntry> {
    type Cached = (Vec<(PathBuf, Option<Stamp>)>, Vec<ConfigEntry>);
    static CACHE: Mutex<Vec<(PathBuf, Cached)>> = Mutex::new(Vec::new());
    if let Ok(cache) = CACHE.lock() {
        if let Some((_, (stamps, entries))) = cache.iter().find(|(r, _)| r == root) {
            if stamps.iter().all(|(path, stamp)| stamp_of(path) == *stamp) {
                return entries.clone();
            }
        }
    }
    let all = config_list(root, None)
        .map(|l| config_entries(&l))
        .unwrap_or_default();
    let mut files: Vec<PathBuf> = vec![root.join(".git/config")];
    files.extend(
        all.iter()
            .filter_map(|e| e.origin.strip_prefix("file:"))
            .map(|f| root.join(f)),
    );
    files.sort();
    files.dedup();
    let stamps = files
        .into_iter()
        .map(|f| {
            let s = stamp_of(&f);
            (f, s)
        })
        .collect();
    let entries: Vec<ConfigEntry> = all
        .into_iter()
        .filter(|e| e.scope == "local" || e.scope == "worktree")
        .collect();
    if let Ok(mut cache) = CACHE.lock() {
        cache.retain(|(r, _)| r != root);
        cache.push((root.to_path_buf(), (stamps, entries.clone())));
    }
    entries
}

use crate::platform::fs::Stamp;

fn stamp_of(path: &Path) -> Option<Stamp> {
    std::fs::metadata(path)
        .ok()
        .map(|m| crate::platform::fs::stamp(&m))
}

/// Places inside `root` (possibly not existing yet) that the repository's config makes git
/// read or run outside `.git`: config files it includes, and the hooks directory
/// `core.hooksPath` names — with its parent when it is husky's `_`, whose hooks run the
/// scripts beside it. A model that changed them would have the user's next git command run
/// what it wrote.
pub fn configured_paths(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in repo_config(root) {
        if let Some(file) = e.origin.strip_prefix("file:") {
            out.push(root.join(file));
        }
        if e.key.eq_ignore_ascii_case("core.hookspath") && !e.value.is_empty() {
            let dir = root.join(&e.value);
            if dir.file_name().is_some_and(|n| n == "_") {
                if let Some(parent) = dir.parent() {
                    out.push(parent.to_path_buf());
                }
            }
            out.push(dir);
        }
    }
    let mut out: Vec<PathBuf> = out.iter().map(|p| lexical(p)).collect();
    out.retain(|p| p.starts_with(root) && !p.components().any(|c| c.as_os_str() == ".git"));
    out.sort();
    out.dedup();
    out
}

/// The driver name of a `filter.<driver>.<var>` key (the driver may hold dots).
fn filter_driver(key: &str) -> Option<String> {
    let rest = key.strip_prefix("filter.")?;
    let (driver, _var) = rest.rsplit_once('.')?;
    (!driver.is_empty()).then(|| driver.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_drivers_from_a_listing() {
        let listing = b"global\0file:/h/.gitconfig\0filter.lfs.clean\ngit-lfs clean\0local\0file:.git/config\0core.bare\nfalse\0local\0file:.git/config\0filter.a.b=c.smudge\nx\0local\0file:.git/config\0bare\0";
        let entries = config_entries(listing);
        let keys: Vec<&str> = entries.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "filter.lfs.clean",
                "core.bare",
                "filter.a.b=c.smudge",
                "bare"
            ]
        );
        assert_eq!(entries[0].scope, "global");
        assert_eq!(entries[1].origin, "file:.git/config");
        assert_eq!(entries[1].value, "false");
        let drivers: Vec<String> = keys.iter().filter_map(|k| filter_driver(k)).collect();
        assert_eq!(drivers, ["lfs", "a.b=c"]);
    }

    #[test]
    fn hooks_and_included_files_inside_the_project() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let git = |args: &[&str]| {
            assert!(Command::new("git")
                .args(args)
                .current_dir(root)
                .status()
                .unwrap()
                .success());
        };
        git(&["init", "-q"]);
        std::fs::write(
            root.join("shared.gitconfig"),
            "[core]\n\thooksPath = .husky/_\n",
        )
        .unwrap();
        git(&["config", "include.path", "../shared.gitconfig"]);
        let paths = configured_paths(root);
        let rel: Vec<String> = paths
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect();
        assert!(rel.contains(&"shared.gitconfig".to_string()), "{rel:?}");
        assert!(rel.contains(&".husky".to_string()), "{rel:?}");
        assert!(rel.contains(&".husky/_".to_string()), "{rel:?}");
    }

    #[test]
    fn env_numbers_every_override() {
        let env = env(&[("a.b".into(), "1".into()), ("c.d".into(), String::new())]);
        assert!(env.contains(&("GIT_CONFIG_COUNT".into(), "2".into())));
        assert!(env.contains(&("GIT_CONFIG_KEY_1".into(), "c.d".into())));
        assert!(env.contains(&("GIT_CONFIG_VALUE_1".into(), String::new())));
    }

    /// Credential helpers run only on network operations, which slmcode never starts; the
    /// override still clears them, checked here the way git asks a helper.
    #[test]
    fn a_planted_credential_helper_is_not_asked() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let marker = outside.path().join("helper");
        let run = |hardened: bool| {
            let mut cmd = if hardened {
                command(dir.path()).unwrap()
            } else {
                let mut c = Command::new("git");
                c.current_dir(dir.path()).env("GIT_TERMINAL_PROMPT", "0");
                c
            };
            let mut child = cmd
                .args(["credential", "fill"])
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            stdin
                .write_all(b"protocol=https\nhost=example.invalid\n\n")
                .unwrap();
            drop(stdin);
            child.wait().unwrap();
        };
        let git = |args: &[&str]| {
            assert!(Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .status()
                .unwrap()
                .success());
        };
        git(&["init", "-q"]);
        git(&[
            "config",
            "credential.helper",
            &format!("!touch {}; echo", marker.display()),
        ]);
        run(true);
        assert!(
            !marker.exists(),
            "the hardened git asked the planted helper"
        );
        run(false);
        assert!(
            marker.exists(),
            "the plant never fires, so this proves nothing"
        );
    }
}
