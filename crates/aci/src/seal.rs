//! Only slmcode's own state is trusted. Anything under `.slmcode/` may have come with a clone,
//! so every record slmcode reads back — run state, trajectories, checkpoint manifests, pending
//! changes, the symbol index — carries a MAC: a BLAKE3 keyed hash over its place in the project
//! and its content, made with a key only this user has (`state.key` in the user's data
//! directory, 0600, created on first use). A record whose MAC does not check was not written by
//! slmcode for this user, and nothing in it is used ([`crate::state`] says so, once).
//!
//! A sealed JSON object stays JSON — `{"slmcode_mac":"<hex>",` then the rest of the object —
//! so people and `jq` can still read it; anything else starts with a line `slmcode-mac <hex>`.
//! A log (a run's trajectory) is sealed a line at a time, each line's MAC chained to the one
//! before ([`Chain`]), so no line can be added, dropped or moved without the rest failing.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

use crate::{platform, readback, userdirs};

/// The key's file in the user's data directory.
const KEY_FILE: &str = "state.key";
/// What a sealed JSON object starts with, before the MAC's hex.
const JSON_PREFIX: &[u8] = b"{\"slmcode_mac\":\"";
/// What any other sealed record starts with, before the MAC's hex.
const LINE_PREFIX: &[u8] = b"slmcode-mac ";
/// Hex digits of a MAC.
const HEX: usize = 64;
/// The key is the user's alone.
const KEY_MODE: u32 = 0o600;

/// Where the state key lives: `$XDG_DATA_HOME/slmcode/state.key`, else
/// `~/.local/share/slmcode/state.key`. The one place that says so.
pub fn key_path() -> Option<PathBuf> {
    userdirs::data_dir().map(|d| d.join(KEY_FILE))
}

/// Set by [`use_user_key`].
static USER_KEY: AtomicBool = AtomicBool::new(false);
/// The key in force, chosen on first use.
static KEY: OnceLock<[u8; 32]> = OnceLock::new();

/// Makes this process seal and check with the user's own key (made on first use), so what one
/// command saves the next one trusts. The binary calls it first thing. A library user that does
/// not (the tests) seals with a key of this process's own, never saved: what it writes is
/// trusted by that process only, and nothing touches the user's home.
pub fn use_user_key() {
    USER_KEY.store(true, Ordering::SeqCst);
}

fn key() -> &'static [u8; 32] {
    KEY.get_or_init(|| {
        if USER_KEY.load(Ordering::SeqCst) {
            let loaded = key_path()
                .ok_or_else(|| "neither XDG_DATA_HOME nor HOME is set".to_string())
                .and_then(|path| load_or_create(&path));
            match loaded {
                Ok(key) => return key,
                Err(why) => {
                    report_once("no state key".into(), || {
                        format!("no state key ({why}): what this command saves under .slmcode/ (checkpoints, runs, pending changes) will not be trusted by a later command")
                    });
                }
            }
        }
        process_key()
    })
}

/// A key for this process only: random, or where the system has no randomness to give, made
/// from what differs between processes (it is never saved, so it only has to be unguessable
/// to a repository, which cannot run code before it is used).
fn process_key() -> [u8; 32] {
    let mut key = [0u8; 32];
    if getrandom::fill(&mut key).is_ok() {
        return key;
    }
    let mut h = blake3::Hasher::new_derive_key("slmcode process state key");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    h.update(&now.to_le_bytes());
    h.update(&std::process::id().to_le_bytes());
    h.update(&(std::ptr::addr_of!(key) as usize).to_le_bytes());
    *h.finalize().as_bytes()
}

/// The user's key at `path`, made (random, 0600) when there is none. Never replaces a key that
/// is there: what it sealed would no longer be trusted.
fn load_or_create(path: &Path) -> Result<[u8; 32], String> {
    // Another process may be writing it this moment: a short key is waited for, a little.
    for _ in 0..50 {
        match readback::read_path(path, 4096) {
            Ok(bytes) => match parse_key(&bytes) {
                Some(key) => return Ok(key),
                None if bytes.len() < HEX => {
                    std::thread::sleep(std::time::Duration::from_millis(20))
                }
                None => break,
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => create(path)?,
            Err(e) => return Err(format!("{}: {e}", path.display())),
        }
    }
    Err(format!(
        "{} is not a state key (64 hex digits); move it away and slmcode makes a new one",
        path.display()
    ))
}

fn parse_key(bytes: &[u8]) -> Option<[u8; 32]> {
    let text = std::str::from_utf8(bytes).ok()?.trim();
    blake3::Hash::from_hex(text).ok().map(|h| *h.as_bytes())
}

/// Writes a new random key at `path`, private to the user; another process that got there
/// first wins (its key is read back).
fn create(path: &Path) -> Result<(), String> {
    let fail = |e: &dyn std::fmt::Display| format!("cannot make {}: {e}", path.display());
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).map_err(|e| fail(&e))?;
    if let Some(dir) = path.parent() {
        platform::fs::create_private_dir(dir).map_err(|e| fail(&e))?;
    }
    let mut options = cap_std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    platform::fs::create_with_mode(&mut options, KEY_MODE);
    let file =
        match cap_std::fs::File::open_ambient_with(path, &options, cap_std::ambient_authority()) {
            Ok(f) => f.into_std(),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(()),
            Err(e) => return Err(fail(&e)),
        };
    let text = format!("{}\n", blake3::Hash::from_bytes(key).to_hex());
    let written = (|| {
        use std::io::Write;
        let mut file = file;
        platform::fs::set_mode(&file, KEY_MODE)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()
    })();
    written.map_err(|e| fail(&e))
}

/// The MAC of `content` at `place` (a project-relative path), after `prev` (the MAC of the line
/// before, in a log; zeros for a record).
fn mac(place: &str, prev: &[u8; 32], content: &[u8]) -> blake3::Hash {
    let mut h = blake3::Hasher::new_keyed(key());
    h.update(b"slmcode state v1\0");
    h.update(&(place.len() as u64).to_le_bytes());
    h.update(place.as_bytes());
    h.update(prev);
    h.update(content);
    h.finalize()
}

/// True when `content` is a JSON object with at least one member (written `{` then, after
/// blanks, anything but `}`), which can carry its MAC as its first member.
fn is_object(content: &[u8]) -> bool {
    content.first() == Some(&b'{')
        && content[1..]
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|b| *b != b'}')
}

fn seal_after(place: &str, prev: &[u8; 32], content: &[u8]) -> (Vec<u8>, [u8; 32]) {
    let m = mac(place, prev, content);
    let hex = m.to_hex();
    let mut out = Vec::with_capacity(content.len() + 96);
    if is_object(content) {
        out.extend_from_slice(JSON_PREFIX);
        out.extend_from_slice(hex.as_bytes());
        out.extend_from_slice(b"\",");
        out.extend_from_slice(&content[1..]);
    } else {
        out.extend_from_slice(LINE_PREFIX);
        out.extend_from_slice(hex.as_bytes());
        out.push(b'\n');
        out.extend_from_slice(content);
    }
    (out, *m.as_bytes())
}

/// The content of a sealed record and its MAC as written, when it has the shape of one.
fn split(sealed: &[u8]) -> Option<(Cow<'_, [u8]>, blake3::Hash)> {
    let hex_at = |prefix: &[u8]| -> Option<blake3::Hash> {
        let hex = sealed.get(prefix.len()..prefix.len() + HEX)?;
        blake3::Hash::from_hex(hex).ok()
    };
    if sealed.starts_with(JSON_PREFIX) {
        let m = hex_at(JSON_PREFIX)?;
        let rest = sealed
            .get(JSON_PREFIX.len() + HEX..)?
            .strip_prefix(b"\",")?;
        let mut content = Vec::with_capacity(rest.len() + 1);
        content.push(b'{');
        content.extend_from_slice(rest);
        return Some((Cow::Owned(content), m));
    }
    if sealed.starts_with(LINE_PREFIX) {
        let m = hex_at(LINE_PREFIX)?;
        let rest = sealed.get(LINE_PREFIX.len() + HEX..)?.strip_prefix(b"\n")?;
        return Some((Cow::Borrowed(rest), m));
    }
    None
}

/// `content` sealed for `place` (its project-relative path): the bytes to write.
pub fn seal(place: &str, content: &[u8]) -> Vec<u8> {
    seal_after(place, &[0; 32], content).0
}

/// The content of a record sealed for `place`, when its MAC checks with this user's key;
/// `None` for anything else (not sealed, sealed by someone else, changed since).
pub fn open<'a>(place: &str, sealed: &'a [u8]) -> Option<Cow<'a, [u8]>> {
    let (content, m) = split(sealed)?;
    // `blake3::Hash` compares in constant time.
    (mac(place, &[0; 32], &content) == m).then_some(content)
}

/// A log's lines sealed one at a time, each chained to the one before: one per log being
/// written, or read.
#[derive(Debug, Clone, Default)]
pub struct Chain {
    prev: [u8; 32],
}

impl Chain {
    /// Seals the next line of the log at `place` (without its newline).
    pub fn seal_line(&mut self, place: &str, line: &[u8]) -> Vec<u8> {
        let (out, m) = seal_after(place, &self.prev, line);
        self.prev = m;
        out
    }

    /// The content of the next line of the log at `place`, when it is the line slmcode wrote
    /// there after the lines opened so far.
    pub fn open_line<'a>(&mut self, place: &str, line: &'a [u8]) -> Option<Cow<'a, [u8]>> {
        let (content, m) = split(line)?;
        if mac(place, &self.prev, &content) != m {
            return None;
        }
        self.prev = *m.as_bytes();
        Some(content)
    }
}

/// Who hears of what slmcode ignored.
type Reporter = Box<dyn Fn(&str) + Send + Sync>;

/// The reporter (the binary prints on stderr); set once.
static REPORTER: OnceLock<Reporter> = OnceLock::new();
/// What was reported already: each thing once per process.
static REPORTED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Sends every report of this process to `report` (once each); the first call wins.
pub fn set_reporter(report: impl Fn(&str) + Send + Sync + 'static) {
    let _ = REPORTER.set(Box::new(report));
}

/// Reports `message` unless something was reported under `what` already in this process.
/// Returns whether this was the first report of `what`.
pub fn report_once(what: String, message: impl FnOnce() -> String) -> bool {
    {
        let mut seen = REPORTED.lock().unwrap_or_else(PoisonError::into_inner);
        if seen.contains(&what) {
            return false;
        }
        seen.push(what);
    }
    if let Some(report) = REPORTER.get() {
        report(&message());
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_record_opens_only_unchanged_and_in_its_place() {
        let json = b"{\n  \"session\": \"1\",\n  \"entries\": []\n}";
        let sealed = seal(".slmcode/a.json", json);
        assert!(sealed.starts_with(b"{\"slmcode_mac\":\""), "still JSON");
        let back: serde_json::Value = serde_json::from_slice(&sealed).unwrap();
        assert_eq!(back["session"], "1");
        assert_eq!(open(".slmcode/a.json", &sealed).unwrap(), &json[..]);
        assert!(open(".slmcode/b.json", &sealed).is_none(), "moved");
        let changed = String::from_utf8(sealed.clone())
            .unwrap()
            .replace("\"1\"", "\"2\"");
        assert!(open(".slmcode/a.json", changed.as_bytes()).is_none());
        assert!(open(".slmcode/a.json", json).is_none(), "never sealed");
        // Binary content, and objects with no member, carry a header line instead.
        for content in [&b"\x00\x01binary"[..], b"{}", b""] {
            let sealed = seal("p", content);
            assert!(sealed.starts_with(b"slmcode-mac "));
            assert_eq!(open("p", &sealed).unwrap(), content);
        }
        // A MAC made with another key does not check.
        let mut other = seal("p", b"x");
        let at = LINE_PREFIX.len();
        other[at] = if other[at] == b'0' { b'1' } else { b'0' };
        assert!(open("p", &other).is_none());
    }

    #[test]
    fn log_lines_open_only_in_the_order_written() {
        let mut w = Chain::default();
        let lines: Vec<Vec<u8>> = ["{\"n\":1}", "{\"n\":2}", "{\"n\":3}"]
            .iter()
            .map(|l| w.seal_line("log", l.as_bytes()))
            .collect();
        let mut r = Chain::default();
        for (i, l) in lines.iter().enumerate() {
            assert_eq!(
                r.open_line("log", l).unwrap(),
                format!("{{\"n\":{}}}", i + 1).as_bytes()
            );
        }
        // Dropped, moved or planted lines break the chain.
        let mut r = Chain::default();
        assert!(r.open_line("log", &lines[1]).is_none());
        let mut r = Chain::default();
        r.open_line("log", &lines[0]).unwrap();
        assert!(r.open_line("log", &lines[2]).is_none());
        assert!(r.open_line("log", b"{\"n\":2}").is_none());
    }

    #[test]
    fn reports_are_made_once() {
        let first: Vec<bool> = (0..3)
            .map(|_| report_once("seal test".into(), String::new))
            .collect();
        assert_eq!(first, [true, false, false]);
    }
}
