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

    #[test]
    fn jail_opens_only_inside(path in path_text()) {
        let (_outer, proj) = setup();
        let jail = Jail::open(&proj).unwrap();
        let real_root = proj.canonicalize().unwrap();
        if let Ok(rel) = RelPath::parse(&path, &proj) {
            if jail.open_file(&rel).is_ok() {
                let real = real_root.join(rel.as_path()).canonicalize().unwrap();
                prop_assert!(real.starts_with(&real_root), "{} opened {}", path, real.display());
            }
            if let Ok(real) = jail.real_path(&rel) {
                prop_assert!(real.starts_with(&real_root), "{} resolved to {}", path, real.display());
            }
        }
    }

    #[test]
    fn lexical_check_never_panics_and_never_keeps_dotdot(text in "\\PC{0,40}") {
        if let Ok(rel) = RelPath::parse(&text, Path::new("/work/p")) {
            prop_assert!(!rel.as_str().split('/').any(|c| c == ".."));
            prop_assert!(!rel.as_str().starts_with('/'));
            prop_assert!(!rel.as_str().contains('\\'));
            prop_assert!(!rel.as_str().contains('\0'));
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
