//! Real builds and test runs of real projects under the read confinement: cargo, npm, pytest,
//! go test and make each build and pass, with the user's own home and toolchains — and each
//! project's own test checks, from inside, that a file beside the project is not readable, so
//! a pass here is a pass with the confinement on.

use super::*;

/// A secret beside the project; the project's tests fail if they can read it.
struct Beside {
    dir: tempfile::TempDir,
}

impl Beside {
    fn new() -> Beside {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".env"), "BESIDE-SECRET-9b2d").unwrap();
        Beside { dir }
    }

    fn path(&self) -> String {
        self.dir.path().join(".env").display().to_string()
    }
}

/// Runs `command` in `p` with the user's environment (HOME, PATH), as a user would; fails
/// unless it exits 0 under the full sandbox (or the skip for a weaker one is declared).
fn build(p: &Project, command: &str, expect: &str) -> String {
    if !common::native("builds under the read confinement") {
        return String::new();
    }
    let (text, err) = p.tool_env(
        "ws_shell",
        &json!({"command": command, "timeout_sec": 600}).to_string(),
        &[],
    );
    assert!(!err, "{command}: {text}");
    assert!(text.contains("[exit code 0]"), "{command}: {text}");
    assert!(text.contains(expect), "{command}: {text}");
    assert!(!text.contains("BESIDE-SECRET-9b2d"), "{command}: {text}");
    require_full_sandbox(&text);
    text
}

/// A program on PATH, or a failure naming the package `.ci/run` installs.
fn need(program: &str, package: &str) -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()));
    if !found {
        common::skip(
            &format!("builds with {program}"),
            &format!("{program} is not installed (Debian: {package}; .ci/run installs it)"),
        );
    }
    found
}

#[test]
fn cargo_test_builds_and_passes_under_the_read_confinement() {
    if !need("cargo", "cargo") {
        return;
    }
    let beside = Beside::new();
    let p = Project::new();
    p.write(
        "Cargo.toml",
        "[package]\nname = \"confined\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    p.write(
        "src/lib.rs",
        format!(
            "#[test]\nfn the_file_beside_is_unreadable() {{\n    assert!(std::fs::read({:?}).is_err());\n    let home = std::env::var(\"HOME\").unwrap();\n    assert!(std::fs::read_dir(format!(\"{{home}}/.cargo\")).is_ok());\n}}\n",
            beside.path()
        ),
    );
    build(&p, "cargo test", "test result: ok. 1 passed");
}

#[test]
fn npm_test_runs_under_the_read_confinement() {
    if !need("npm", "npm") {
        return;
    }
    let beside = Beside::new();
    let p = Project::new();
    p.write(
        "package.json",
        "{\"name\": \"confined\", \"version\": \"1.0.0\", \"scripts\": {\"test\": \"node test.js\"}}\n",
    );
    p.write(
        "test.js",
        format!(
            "const fs = require('fs');\nlet leaked = true;\ntry {{ fs.readFileSync({:?}); }} catch (e) {{ leaked = false; }}\nif (leaked) {{ console.log('LEAKED'); process.exit(1); }}\nconsole.log('NPM-CONFINED-OK');\n",
            beside.path()
        ),
    );
    build(&p, "npm test", "NPM-CONFINED-OK");
}

#[test]
fn pytest_runs_under_the_read_confinement() {
    if !need("pytest", "python3-pytest") {
        return;
    }
    let beside = Beside::new();
    let p = Project::new();
    p.write(
        "test_confined.py",
        format!(
            "import pytest\n\ndef test_the_file_beside_is_unreadable():\n    with pytest.raises(OSError):\n        open({:?}).read()\n",
            beside.path()
        ),
    );
    build(&p, "pytest -q", "1 passed");
}

#[test]
fn go_test_runs_under_the_read_confinement() {
    if !need("go", "golang-go") {
        return;
    }
    let beside = Beside::new();
    let p = Project::new();
    p.write("go.mod", "module confined\n\ngo 1.19\n");
    p.write(
        "confined.go",
        "package confined\n\nfunc Add(a, b int) int { return a + b }\n",
    );
    p.write(
        "confined_test.go",
        format!(
            "package confined\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestBeside(t *testing.T) {{\n\tif _, err := os.ReadFile({:?}); err == nil {{\n\t\tt.Fatal(\"read the file beside the project\")\n\t}}\n\tif Add(1, 2) != 3 {{\n\t\tt.Fatal(\"add\")\n\t}}\n}}\n",
            beside.path()
        ),
    );
    build(&p, "go test ./...", "ok  \tconfined");
}

#[test]
fn make_test_runs_under_the_read_confinement() {
    if !need("make", "make") {
        return;
    }
    let beside = Beside::new();
    let p = Project::new();
    p.write(
        "Makefile",
        format!(
            "test:\n\t@if cat {} >/dev/null 2>&1; then echo LEAKED; exit 1; else echo MAKE-CONFINED-OK; fi\n",
            beside.path()
        ),
    );
    build(&p, "make test", "MAKE-CONFINED-OK");
}
