//! Property tests for the jail, through the real registry: whatever path a model sends, no tool
//! returns a byte from outside the project, and nothing panics.

use std::path::Path;

use proptest::prelude::*;
use serde_json::json;
use slmcode_aci::path::{Jail, RelPath};
use slmcode_aci::{Config, Registry, Workspace};

const SECRET: &str = "OUTSIDE-SECRET-7c1f";

/// outer/secret.txt sits next to the project; the project holds links that try to reach it.
fn setup() -> (tempfile::TempDir, std::path::PathBuf) {
    let outer = tempfile::tempdir().unwrap();
    std::fs::write(outer.path().join("secret.txt"), format!("{SECRET}\n")).unwrap();
    let proj = outer.path().join("proj");
    std::fs::create_dir_all(proj.join("sub")).unwrap();
    std::fs::write(proj.join("a.txt"), "inside a\n").unwrap();
    std::fs::write(proj.join("sub/b.txt"), "inside b\n").unwrap();
    let link =
        |target: &Path, name: &str| std::os::unix::fs::symlink(target, proj.join(name)).unwrap();
    link(Path::new(".."), "up");
    link(outer.path(), "out");
    link(&outer.path().join("secret.txt"), "secret_link");
    link(Path::new("../secret.txt"), "rel_secret");
    link(&proj.join("a.txt"), "abs_in");
    link(Path::new("sub"), "sub_link");
    link(Path::new("/etc"), "etc");
    (outer, proj)
}

fn component() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("a.txt"),
        Just("sub"),
        Just("b.txt"),
        Just(".."),
        Just("."),
        Just("up"),
        Just("out"),
        Just("secret.txt"),
        Just("secret_link"),
        Just("rel_secret"),
        Just("abs_in"),
        Just("sub_link"),
        Just("etc"),
        Just("passwd"),
        Just(""),
        Just("~"),
        Just("C:"),
        Just("proj"),
        Just("*"),
        Just("**"),
        Just("\\.."),
    ]
    .prop_map(str::to_string)
}

/// What the lexical check refuses: an empty path, `..`, a backslash, `~`, a drive letter, an
/// absolute path (translated when it lies inside the project, refused otherwise).
fn has_something_to_refuse(path: &str) -> bool {
    let comps: Vec<&str> = path.split('/').collect();
    let b = path.as_bytes();
    path.trim().is_empty()
        || path.starts_with('/')
        || path.contains('\\')
        || comps.contains(&"..")
        || comps.first() == Some(&"~")
        || (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':')
}

fn path_text() -> impl Strategy<Value = String> {
    (any::<bool>(), proptest::collection::vec(component(), 1..6))
        .prop_map(|(abs, parts)| format!("{}{}", if abs { "/" } else { "" }, parts.join("/")))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]

    #[test]
    fn no_tool_reads_outside(path in path_text()) {
        let (_outer, proj) = setup();
        let mut ws = Workspace::open(&proj, Config::default()).unwrap();
        let registry = Registry::coding();
        let calls = [
            ("ws_read", json!({"path": path})),
            ("ws_list", json!({"path": path})),
            ("ws_grep", json!({"pattern": "SECRET|root:", "path": path})),
            ("ws_glob", json!({"pattern": path})),
            ("ws_glob", json!({"pattern": "**/*", "path": path})),
            ("git_diff", json!({"path": path})),
        ];
        for (tool, args) in calls {
            let r = registry.call(&mut ws, tool, &args);
            prop_assert!(!r.text.contains(SECRET), "{} {} leaked: {}", tool, args, r.text);
            prop_assert!(!r.text.contains("root:x:0"), "{} {} leaked /etc: {}", tool, args, r.text);
            prop_assert!(!r.text.contains("internal error"), "{} {} panicked: {}", tool, args, r.text);
        }
    }

    /// Every path gets a verdict checked against the file system itself: a path the lexical
    /// check refuses has something to refuse; one it takes resolves, through the jail, to
    /// exactly where the kernel's own resolution leads when that is inside the project, and is
    /// refused when it leads outside or nowhere.
    #[test]
    fn jail_opens_only_inside(path in path_text()) {
        let (_outer, proj) = setup();
        let jail = Jail::open(&proj).unwrap();
        let real_root = proj.canonicalize().unwrap();
        let rel = match RelPath::parse(&path, &proj) {
            Err(e) => {
                prop_assert!(has_something_to_refuse(&path), "{:?} refused: {}", path, e);
                return Ok(());
            }
            Ok(rel) => rel,
        };
        prop_assert!(!has_something_to_refuse(&path) || path.starts_with('/'), "{:?} taken as {}", path, rel);
        let kernel = proj.join(rel.as_path()).canonicalize();
        match kernel {
            Ok(real) if real.starts_with(&real_root) => {
                let through_jail = jail.real_path(&rel);
                prop_assert!(
                    through_jail.as_ref().is_ok_and(|p| *p == real),
                    "{:?} leads to {} inside, the jail says {:?}", path, real.display(), through_jail
                );
                if real.is_file() {
                    prop_assert!(jail.open_file(&rel).is_ok(), "{:?}: an inside file did not open", path);
                }
            }
            Ok(real) => {
                prop_assert!(jail.real_path(&rel).is_err(), "{:?} leads out to {}", path, real.display());
                prop_assert!(jail.open_file(&rel).is_err(), "{:?} opened {} outside", path, real.display());
            }
            Err(_) => {
                prop_assert!(jail.real_path(&rel).is_err(), "{:?} leads nowhere, yet resolved", path);
                prop_assert!(jail.open_file(&rel).is_err(), "{:?} leads nowhere, yet opened", path);
            }
        }
    }

    #[test]
    fn lexical_check_never_panics_and_never_keeps_dotdot(text in "\\PC{0,40}") {
        match RelPath::parse(&text, Path::new("/work/p")) {
            Ok(rel) => {
                prop_assert!(!has_something_to_refuse(&text), "{:?} taken as {}", text, rel);
                prop_assert!(!rel.as_str().split('/').any(|c| c == ".."));
                prop_assert!(!rel.as_str().starts_with('/'));
                prop_assert!(!rel.as_str().contains('\\'));
                prop_assert!(!rel.as_str().contains('\0'));
            }
            Err(e) => {
                prop_assert!(has_something_to_refuse(&text), "{:?} refused: {}", text, e);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    /// Saved path bytes (a checkpoint's, read back from disk) become a path only when they are
    /// a plain relative one: no empty, `.` or `..` name, nothing absolute, no NUL — and what
    /// is accepted comes back byte for byte.
    #[test]
    fn raw_paths_from_disk_are_plain_or_refused(
        bytes in proptest::collection::vec(
            prop_oneof![Just(b'/'), Just(b'.'), Just(0u8), Just(0xffu8), Just(b'a'), any::<u8>()],
            0..24,
        )
    ) {
        use slmcode_aci::path::RawPath;
        match RawPath::from_bytes(&bytes) {
            Ok(path) => {
                prop_assert_eq!(path.to_bytes(), bytes.clone());
                for name in path.components() {
                    let name = name.as_encoded_bytes();
                    prop_assert!(!name.is_empty() && name != b"." && name != b"..");
                    prop_assert!(!name.contains(&b'/') && !name.contains(&0));
                }
                prop_assert!(!path.is_root());
            }
            Err(_) => {
                let plain = !bytes.is_empty()
                    && !bytes.contains(&0)
                    && bytes.split(|b| *b == b'/').all(|n| !n.is_empty() && n != b"." && n != b"..");
                prop_assert!(!plain, "refused a plain path: {:?}", bytes);
            }
        }
    }
}
