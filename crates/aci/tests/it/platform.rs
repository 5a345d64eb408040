//! The platform code is in one place: outside the platform modules (listed in
//! `crates/aci/src/platform/mod.rs`), no source file of any crate calls `libc`, uses a
//! Unix- or Windows-only part of `std` or `cap-std`, or asks which OS it is built for — in its
//! code, that is; unit tests below `#[cfg(test)]` run on Unix and may. A port to another OS
//! then touches those modules only, and the portable check in CI compiles everything else.

use std::path::{Path, PathBuf};

/// The platform modules: a file or folder under `crates/`, by path.
const PLATFORM: &[&str] = &[
    "crates/aci/src/platform/",
    "crates/aci/src/shell/sandbox/",
    "crates/aci/src/shell/contain/",
    "crates/aci/src/shell/memory/",
];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// What is OS-specific in a line of code, if anything.
fn os_specific(line: &str) -> Option<&'static str> {
    let code = line.split("//").next().unwrap_or("");
    const WORDS: &[(&str, &str)] = &[
        ("libc::", "a libc call"),
        ("use libc", "a libc import"),
        ("std::os::unix", "std's Unix-only API"),
        ("std::os::windows", "std's Windows-only API"),
        ("std::os::fd", "std's Unix file descriptors"),
        ("std::os::linux", "std's Linux-only API"),
        ("std::os::macos", "std's macOS-only API"),
        ("target_os", "a test of the OS"),
        ("target_family", "a test of the OS"),
        ("cfg(unix", "a test of the OS"),
        ("cfg(windows", "a test of the OS"),
        ("cfg!(unix", "a test of the OS"),
        ("cfg!(windows", "a test of the OS"),
        ("(unix)", "a test of the OS"),
        ("(windows)", "a test of the OS"),
        ("MetadataExt", "a Unix-only metadata trait"),
        ("OpenOptionsExt", "a Unix-only open trait"),
        ("FileTypeExt", "a Unix-only file type trait"),
        ("PermissionsExt", "Unix permission bits"),
        ("DirBuilderExt", "Unix directory modes"),
        ("CommandExt", "Unix-only process setup"),
        ("ExitStatusExt", "Unix wait statuses"),
    ];
    WORDS
        .iter()
        .find(|(w, _)| code.contains(w))
        .map(|(_, what)| *what)
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// The OS-specific lines of a file's code (the part before its first `#[cfg(test)]`).
fn findings(text: &str) -> Vec<(usize, &'static str)> {
    text.lines()
        .take_while(|l| !l.trim_start().starts_with("#[cfg(test)]"))
        .enumerate()
        .filter_map(|(i, l)| os_specific(l).map(|what| (i + 1, what)))
        .collect()
}

#[test]
fn no_code_outside_the_platform_modules_depends_on_the_os() {
    let mut files = Vec::new();
    for krate in ["aci", "agent", "cli"] {
        sources(&repo().join("crates").join(krate).join("src"), &mut files);
    }
    let mut bad = Vec::new();
    for file in files {
        let rel = file
            .strip_prefix(repo())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if PLATFORM.iter().any(|p| rel.starts_with(p)) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (line, what) in findings(&text) {
            bad.push(format!("{rel}:{line}: {what}"));
        }
    }
    assert!(
        bad.is_empty(),
        "OS-specific code outside the platform modules (move it into one, see crates/aci/src/platform/mod.rs):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_check_finds_what_it_looks_for() {
    let code = "fn a() {}\nunsafe { libc::kill(1, 0) };\n#[cfg(unix)]\nuse std::os::unix::fs::MetadataExt;\n// libc:: in a comment\nlet x = cfg!(target_os = \"linux\");\n#[cfg(test)]\nmod tests { use std::os::unix::fs::symlink; }\n";
    let found: Vec<usize> = findings(code).into_iter().map(|(l, _)| l).collect();
    assert_eq!(found, vec![2, 3, 4, 6]);
}

#[test]
fn only_the_aci_crate_depends_on_libc() {
    for krate in ["agent", "cli"] {
        let manifest =
            std::fs::read_to_string(repo().join("crates").join(krate).join("Cargo.toml")).unwrap();
        assert!(
            !manifest.lines().any(|l| l.trim_start().starts_with("libc")),
            "crates/{krate} depends on libc; OS calls belong in slmcode-aci's platform modules"
        );
    }
}

#[test]
fn every_platform_module_exists() {
    for p in PLATFORM.iter().filter(|p| !p.ends_with(".rs")) {
        assert!(repo().join(p).is_dir(), "{p}");
    }
}
