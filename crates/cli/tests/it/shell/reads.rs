//! What a command can read: the project, the system and the toolchains' own directories in the
//! home — not the rest of the home, not another home, not what lies beside the project, and
//! never a secret store, whatever `shell_read_allow` says. Tested by effect: a planted secret's
//! bytes never appear in a result.

use super::*;

/// Files planted in a home of the test's own (the binary's `HOME`): secrets, and what the
/// toolchain list shows.
const SECRETS: &[(&str, &str)] = &[
    (".ssh/id_rsa", "SSH-KEY-5e1c"),
    (".aws/credentials", "AWS-KEY-5e1c"),
    (".netrc", "NETRC-5e1c"),
    (".git-credentials", "GIT-CREDENTIALS-5e1c"),
    (".config/gh/hosts.yml", "GH-TOKEN-5e1c"),
    (".docker/config.json", "DOCKER-AUTH-5e1c"),
    (".cargo/credentials.toml", "CARGO-TOKEN-5e1c"),
    ("notes.txt", "HOME-NOTE-5e1c"),
    ("other-project/.env", "OTHER-PROJECT-5e1c"),
];

/// Readable: a toolchain directory of the built-in list.
const TOOLCHAIN: (&str, &str) = (".cargo/config.toml", "CARGO-CONFIG-5e1c");

/// Readable only once the user allows `~/.config` and `~/.docker`.
const EXTRA: &[(&str, &str)] = &[
    (".config/tool/settings.toml", "CONFIG-OK-5e1c"),
    (".docker/daemon.json", "DOCKER-OK-5e1c"),
];

struct Planted {
    home: tempfile::TempDir,
    /// A directory beside the project (both are in the system's temp directory).
    sibling: tempfile::TempDir,
    /// A file in the test process's own home, which is another home to the command.
    other_home: Option<std::path::PathBuf>,
}

impl Drop for Planted {
    fn drop(&mut self) {
        if let Some(p) = &self.other_home {
            let _ = std::fs::remove_file(p);
        }
    }
}

fn plant() -> Planted {
    let home = tempfile::tempdir().unwrap();
    for (rel, text) in SECRETS.iter().chain(EXTRA).chain([&TOOLCHAIN]) {
        let path = home.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let sibling = tempfile::tempdir().unwrap();
    std::fs::write(sibling.path().join(".env"), "SIBLING-5e1c").unwrap();
    let other_home = std::env::var_os("HOME")
        .map(|h| std::path::PathBuf::from(h).join(format!(".slmcode-test-{}", std::process::id())))
        .filter(|p| std::fs::write(p, "OTHER-HOME-5e1c").is_ok());
    Planted {
        home,
        sibling,
        other_home,
    }
}

impl Planted {
    fn home(&self, rel: &str) -> String {
        self.home.path().join(rel).display().to_string()
    }

    /// Every secret path, absolute, and the sibling's by a relative path too.
    fn secret_paths(&self, p: &Project) -> Vec<String> {
        let mut out: Vec<String> = SECRETS.iter().map(|(rel, _)| self.home(rel)).collect();
        out.push(self.sibling.path().join(".env").display().to_string());
        let name = self.sibling.path().file_name().unwrap().to_str().unwrap();
        assert_eq!(self.sibling.path().parent(), p.root().parent());
        out.push(format!("../{name}/.env"));
        out.extend(self.other_home.iter().map(|p| p.display().to_string()));
        out
    }
}

/// `cat` of every path: returns the result's text.
fn cat_all(p: &Project, paths: &[String], env: &[(&str, &str)]) -> String {
    let (text, _) = p.tool_env(
        "ws_shell",
        &json!({"command": format!("cat {}", paths.join(" "))}).to_string(),
        env,
    );
    text
}

fn assert_no_secret(text: &str) {
    for (_, secret) in SECRETS {
        assert!(
            !text.contains(secret),
            "{secret} reached the result: {text}"
        );
    }
    for secret in ["SIBLING-5e1c", "OTHER-HOME-5e1c"] {
        assert!(
            !text.contains(secret),
            "{secret} reached the result: {text}"
        );
    }
}

#[test]
fn a_command_reads_the_toolchains_but_not_the_home_beside_the_project_or_another_home() {
    if !common::native("read confinement under the full sandbox") {
        return;
    }
    let p = Project::new();
    p.write("src/lib.rs", "PROJECT-OK\n");
    let planted = plant();
    let home = planted.home.path().to_str().unwrap().to_string();
    let env = [("HOME", home.as_str())];
    let mut paths = planted.secret_paths(&p);
    paths.push(planted.home(TOOLCHAIN.0));
    paths.push("src/lib.rs".into());
    let text = cat_all(&p, &paths, &env);
    assert_no_secret(&text);
    assert!(text.contains(TOOLCHAIN.1), "{text}");
    assert!(text.contains("PROJECT-OK"), "{text}");
    // Absent, not only unreadable: the home shows the toolchain directory and nothing else.
    let (listing, _) = p.tool_env(
        "ws_shell",
        &json!({"command": format!("ls -A {home}")}).to_string(),
        &env,
    );
    if require_full_sandbox(&listing) {
        assert!(listing.starts_with(".cargo\n[exit code 0]"), "{listing}");
        let (listing, _) = p.tool_env(
            "ws_shell",
            &json!({"command": format!("ls -A {}", planted.sibling.path().parent().unwrap().display())})
                .to_string(),
            &env,
        );
        let name = planted
            .sibling
            .path()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap();
        assert!(!listing.contains(name), "{listing}");
    }
}

#[test]
fn a_secret_store_stays_unreadable_even_when_the_user_allows_it() {
    if !common::native("secret stores under the full sandbox") {
        return;
    }
    let p = Project::new();
    let planted = plant();
    let home = planted.home.path().to_str().unwrap().to_string();
    let env = [
        ("HOME", home.as_str()),
        (
            "SLMCODE_SHELL_READ_ALLOW",
            "~/.config,~/.docker,~/.ssh,~/.netrc,~/.aws/credentials",
        ),
    ];
    let mut paths: Vec<String> = SECRETS
        .iter()
        .filter(|(rel, _)| !rel.starts_with("notes") && !rel.starts_with("other"))
        .map(|(rel, _)| planted.home(rel))
        .collect();
    paths.extend(EXTRA.iter().map(|(rel, _)| planted.home(rel)));
    let text = cat_all(&p, &paths, &env);
    assert_no_secret(&text);
    for (_, ok) in EXTRA {
        assert!(text.contains(ok), "{ok}: {text}");
    }
    // The allowed directory is there; the secret store inside it shows nothing.
    let (listing, _) = p.tool_env(
        "ws_shell",
        &json!({"command": format!("ls -AR {home}/.config")}).to_string(),
        &env,
    );
    assert!(listing.contains("settings.toml"), "{listing}");
    assert!(!listing.contains("hosts.yml"), "{listing}");
}

/// Without a mount namespace (`sandbox: landlock`), Landlock's read rules hold the same line.
#[test]
fn the_landlock_only_sandbox_confines_reads_too() {
    if !common::native("read confinement under Landlock alone") {
        return;
    }
    let p = Project::new();
    p.write("src/lib.rs", "PROJECT-OK\n");
    let planted = plant();
    let home = planted.home.path().to_str().unwrap().to_string();
    let env = [
        ("HOME", home.as_str()),
        ("SLMCODE_SANDBOX", "landlock"),
        ("SLMCODE_SHELL_READ_ALLOW", "~/.config"),
    ];
    let mut paths = planted.secret_paths(&p);
    paths.push(planted.home(TOOLCHAIN.0));
    paths.push(planted.home(EXTRA[0].0));
    paths.push(planted.home(".config/gh/hosts.yml"));
    paths.push("src/lib.rs".into());
    let text = cat_all(&p, &paths, &env);
    assert_no_secret(&text);
    assert!(text.contains(TOOLCHAIN.1), "{text}");
    assert!(text.contains(EXTRA[0].1), "{text}");
    assert!(text.contains("PROJECT-OK"), "{text}");
    assert!(text.contains("weaker here: no PID namespace"), "{text}");
    // Nor listed.
    let (listing, _) = p.tool_env(
        "ws_shell",
        &json!({"command": format!("ls -A {home}")}).to_string(),
        &env,
    );
    assert!(!listing.contains("notes.txt"), "{listing}");
}

/// `slmcode doctor` says what a command can read: the toolchain directories shown, the
/// secret stores kept unreadable inside them, the entries of `shell_read_allow` not shown.
#[test]
fn doctor_says_what_a_command_can_read() {
    let p = Project::new();
    let planted = plant();
    let home = planted.home.path().to_str().unwrap().to_string();
    let out = common::bin()
        .args(["doctor", "--root"])
        .arg(p.root())
        .env("HOME", &home)
        .env("SLMCODE_ENDPOINT", "http://127.0.0.1:9/v1")
        .env("SLMCODE_SHELL_READ_ALLOW", "~/.ssh,~/.nowhere")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("ws_shell reads: "))
        .unwrap_or_else(|| panic!("no reads line: {text}"));
    if !common::native("the read confinement in doctor") {
        assert!(
            line.starts_with(
                "warn  ws_shell reads: NOT confined (this build uses the portable fallbacks"
            ),
            "{line}"
        );
        return;
    }
    assert!(
        line.starts_with(
            "ok    ws_shell reads: a view of its own (mount namespace): the system, the project"
        ),
        "{line}"
    );
    for part in [
        "toolchains (read-only): ~/.cargo;",
        "hidden: the rest of the home, other homes",
        "secret stores kept unreadable inside what is shown: ",
        "~/.cargo/credentials.toml;",
        "`~/.ssh` not shown: it is a secret store",
        "`~/.nowhere` not shown: it does not exist",
    ] {
        assert!(line.contains(part), "{part}: {line}");
    }
}
