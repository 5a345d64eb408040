//! The environment a command gets, and the PATH its programs come from.
//!
//! Nothing of the harness's own environment rides along but PATH, HOME and LANG (no API key,
//! no `BASH_ENV`, `LD_PRELOAD` or `GIT_DIR`). PATH is cleaned of entries a project could plant a
//! program in — empty or relative entries (the working directory) and anything inside the
//! project — and the policy resolves program names against the same list, so what the policy
//! judged is what runs.

use std::path::{Path, PathBuf};

/// The directories programs may come from: the harness's PATH without empty or relative
/// entries and without any inside `root`.
pub fn path_dirs(root: &Path) -> Vec<PathBuf> {
    let raw = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    let mut out: Vec<PathBuf> = Vec::new();
    for dir in std::env::split_paths(&raw) {
        if !dir.is_absolute() || dir.starts_with(root) {
            continue;
        }
        // A symlinked PATH entry that leads into the project is inside it too.
        if dir.canonicalize().is_ok_and(|real| real.starts_with(root)) {
            continue;
        }
        if !out.contains(&dir) {
            out.push(dir);
        }
    }
    out
}

/// The base environment for a command in `root`: the cleaned PATH, HOME, LANG and TERM=dumb.
pub fn base(root: &Path) -> Vec<(String, String)> {
    let get = |k: &str, default: &str| std::env::var(k).unwrap_or_else(|_| default.to_string());
    let path = std::env::join_paths(path_dirs(root))
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "/usr/bin:/bin".to_string());
    vec![
        ("PATH".into(), path),
        ("HOME".into(), get("HOME", "/")),
        ("LANG".into(), get("LANG", "C.UTF-8")),
        ("TERM".into(), "dumb".into()),
    ]
}

/// Where a sandboxed command of the project at `root` keeps its caches (`XDG_CACHE_HOME`: go's
/// build cache, pip's, yarn's; npm's through `npm_config_cache`): a directory of its own under
/// the user's cache, so builds stay warm between calls, while the user's own caches — which
/// their builds outside the sandbox trust — cannot be written. Made private (0700) on first use.
/// Keyed by the root's identity (device and inode) as well as its path, so a repository cloned
/// where another was deleted starts empty, and nothing the old one's commands left there
/// reaches it.
pub fn sandbox_cache(root: &Path) -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    let meta = std::fs::metadata(root).ok()?;
    let (dev, ino) = crate::platform::fs::id_of_path(root, &meta).ok()?;
    let mut key = blake3::Hasher::new();
    key.update(&dev.to_le_bytes());
    key.update(&ino.to_le_bytes());
    key.update(root.as_os_str().as_encoded_bytes());
    let key = key.finalize().to_hex();
    let dir = base
        .join("slmcode")
        .join("sandbox")
        .join(&key.as_str()[..16]);
    crate::platform::fs::create_private_dir(&dir).ok()?;
    Some(dir)
}
