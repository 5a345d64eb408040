//! What the sandbox holds: git and harness state, a cargo build inside it, planted hooks and git
//! directories, hard links, the project's own allow list, a sandbox that is off, another user,
//! Landlock alone.

use super::*;

#[test]
fn the_sandbox_keeps_git_and_harness_state_and_lets_the_project_grow() {
    if !common::native("git and harness state read-only to commands") {
        return;
    }
    let p = Project::new();
    p.write("README.md", "# r\n");
    common::git(p.root(), &["init", "-q"]);
    p.write(".slmcode/hooks.json", "{}\n");
    p.write("src/lib.rs", "\n");
    p.write("moved-git/config", "[core]\n");
    p.write("sub/.git", "gitdir: ../moved-git\n");
    p.write("vendor/lib/.git/config", "[core]\n");
    p.symlink(".slmcode", "ctl");
    p.symlink(".git", "g");
    let guarded = [".git", ".slmcode", "moved-git", "sub", "vendor"];
    let before: Vec<_> = guarded
        .iter()
        .map(|d| common::snapshot(&p.path(d)))
        .collect();
    let outside = tempfile::tempdir().unwrap();
    let text = allowed_script(
        &p,
        "runner.py",
        &format!(
            "import os, subprocess\n\
             for path in ['.git/config', '.git/hooks/pre-commit', 'g/hooks/post-checkout', '.GIT/config',\n\
                          'sub/.git', 'moved-git/config', 'vendor/lib/.git/config', '.slmcode/hooks.json',\n\
                          'ctl/hooks.json', '.slmcode/new.json', '{out}/escaped.txt',\n\
                          'src/out.txt', 'new-top.txt', '.slmcode/scratch/ok.txt']:\n\
             \x20   try:\n\
             \x20       with open(path, 'a') as f:\n\
             \x20           f.write('pwned')\n\
             \x20       print('WROTE', path)\n\
             \x20   except OSError as e:\n\
             \x20       print('DENIED', path)\n\
             for args in [['rm', '-rf', '.git'], ['mv', '.git', 'stolen'], ['rm', 'sub/.git'], ['umount', '.git']]:\n\
             \x20   subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n",
            out = outside.path().display()
        ),
        &[],
    );
    for denied in [
        ".git/config",
        ".git/hooks/pre-commit",
        "g/hooks/post-checkout",
        ".GIT/config",
        "sub/.git",
        "moved-git/config",
        "vendor/lib/.git/config",
        ".slmcode/hooks.json",
        "ctl/hooks.json",
        ".slmcode/new.json",
    ] {
        assert!(
            text.contains(&format!("DENIED {denied}\n")),
            "{denied}: {text}"
        );
    }
    assert!(text.contains("WROTE src/out.txt"), "{text}");
    assert!(text.contains("WROTE .slmcode/scratch/ok.txt"), "{text}");
    assert!(!outside.path().join("escaped.txt").exists(), "{text}");
    let after: Vec<_> = guarded
        .iter()
        .map(|d| common::snapshot(&p.path(d)))
        .collect();
    // scratch/ok.txt is the one change under .slmcode/.
    let mut expected = before.clone();
    expected[1].insert("scratch".into(), None);
    expected[1].insert("scratch/ok.txt".into(), Some(b"pwned".to_vec()));
    assert_eq!(after, expected, "{text}");
    if require_full_sandbox(&text) {
        // New files in the project root: the policy allows them, so the sandbox must too.
        assert!(text.contains("WROTE new-top.txt"), "{text}");
    }
}

#[test]
fn a_fresh_cargo_crate_builds_and_tests_under_the_sandbox() {
    let p = Project::new();
    let st = std::process::Command::new("cargo")
        .args(["init", "-q", "--name", "fresh", "--lib"])
        .current_dir(p.root())
        .status()
        .expect("cargo");
    assert!(st.success());
    let (text, err) = shell(&p, "cargo test");
    assert!(!err, "{text}");
    assert!(text.contains("test result: ok. 1 passed"), "{text}");
    assert!(text.contains("[exit code 0]"), "{text}");
    assert!(p.path("Cargo.lock").exists() && p.path("target").is_dir());
    require_full_sandbox(&text);
    let (text, _) = shell(&p, "ls > listing.txt");
    assert!(text.contains("(command succeeded with no output"), "{text}");
    assert!(std::fs::read_to_string(p.path("listing.txt"))
        .unwrap()
        .contains("Cargo.toml"));
}

#[test]
fn a_detached_child_of_a_test_script_is_gone_after_the_call() {
    if !common::native("a daemon that leaves group and environment at once") {
        return;
    }
    let p = Project::new();
    let marker = format!("300.{}", std::process::id());
    let text = allowed_script(
        &p,
        "spawn.py",
        &format!(
            "import subprocess\n\
             subprocess.Popen(['sleep', '{marker}'], env={{}}, start_new_session=True,\n\
             \x20                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n\
             print('started')\n"
        ),
        &[],
    );
    assert!(text.contains("started"), "{text}");
    let alive = common::alive(&marker);
    assert!(!alive, "the detached child outlived the call: {text}");
}

#[test]
fn a_git_directory_a_command_creates_is_removed() {
    let p = Project::new();
    p.mkdir("pkg");
    let text = allowed_script(
        &p,
        "plant.py",
        "import os\n\
         for d in ['.git', 'pkg/.git']:\n\
         \x20   os.makedirs(d + '/hooks', exist_ok=True)\n\
         \x20   open(d + '/config', 'w').write('[core]\\n\\tfsmonitor = id\\n')\n\
         print('planted')\n",
        &[],
    );
    assert!(text.contains("planted"), "{text}");
    assert!(
        !p.path(".git").exists() && !p.path("pkg/.git").exists(),
        "{text}"
    );
    assert!(
        text.contains("[slmcode removed .git, which the command created"),
        "{text}"
    );
    assert!(
        text.contains("[slmcode removed pkg/.git, which the command created"),
        "{text}"
    );
}

#[test]
fn a_project_cannot_allow_itself_commands() {
    let p = Project::new();
    p.write("runner.py", "print('ran')\n");
    p.write(
        ".slmcode/config.yaml",
        "shell_allow: [\"python3 runner.py\"]\n",
    );
    let out = p.run_tool(
        "ws_shell",
        &json!({"command": "python3 runner.py"}).to_string(),
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("`shell_allow` is ignored here"), "{stderr}");
    // The user's own config may.
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("slmcode")).unwrap();
    std::fs::write(
        home.path().join("slmcode/config.yaml"),
        "shell_allow: [\"python3 runner.py\"]\n",
    )
    .unwrap();
    let (text, err) = p.tool_env(
        "ws_shell",
        &json!({"command": "python3 runner.py"}).to_string(),
        &[("XDG_CONFIG_HOME", home.path().to_str().unwrap())],
    );
    assert!(!err && text.contains("ran"), "{text}");
}

/// The issue's three plants: each refused, `.git` unchanged, and the user's own git afterwards
/// runs nothing.
#[test]
fn nothing_a_command_plants_in_git_runs_for_the_user() {
    let p = Project::new();
    p.write("README.md", "# r\n");
    common::git(p.root(), &["init", "-q"]);
    let outside = tempfile::tempdir().unwrap();
    let marker = outside.path().join("planted");
    let before = common::snapshot(&p.path(".git"));
    for command in [
        format!(
            "printf '[core]\\n\\tfsmonitor = \"touch {}\"\\n' >> .git/config",
            marker.display()
        ),
        format!(
            "printf '[diff]\\n\\texternal = \"touch {}\"\\n' | tee -a .git/config",
            marker.display()
        ),
        format!(
            "printf '#!/bin/sh\\ntouch {}\\n' >> .git/hooks/pre-commit",
            marker.display()
        ),
        format!("echo x >> .GIT/config; touch {}", marker.display()),
    ] {
        let (text, err) = shell(&p, &command);
        assert!(err, "{command}: {text}");
        assert!(text.contains("[rule: git-dir]"), "{command}: {text}");
        assert!(
            text.contains("Committing is the user's step"),
            "{command}: {text}"
        );
    }
    assert_eq!(common::snapshot(&p.path(".git")), before);
    p.write("README.md", "# changed\n");
    for args in [&["status"][..], &["diff"], &["add", "README.md"]] {
        let st = std::process::Command::new("git")
            .args(args)
            .current_dir(p.root())
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(st.success());
    }
    assert!(!marker.exists(), "the user's git ran a planted program");
}

/// A hooks directory the repository's config names is read-only to commands as well, and a
/// command's text may not target it.
#[test]
fn the_configured_hooks_directory_is_protected_from_commands() {
    let p = Project::new();
    p.write("README.md", "# r\n");
    common::git(p.root(), &["init", "-q"]);
    p.write(".githooks/pre-commit", "#!/bin/sh\nexit 0\n");
    common::git(p.root(), &["config", "core.hooksPath", ".githooks"]);
    let (text, err) = shell(&p, "echo id >> .githooks/pre-commit");
    assert!(err && text.contains("[rule: git-dir]"), "{text}");
    if !common::native("the configured hooks directory read-only to commands") {
        return;
    }
    let text = allowed_script(
        &p,
        "hook.py",
        "try:\n    open('.githooks/pre-commit', 'a').write('id\\n')\n    print('WROTE')\nexcept OSError:\n    print('DENIED')\n",
        &[],
    );
    if require_full_sandbox(&text) {
        assert!(text.contains("DENIED"), "{text}");
    }
    assert_eq!(
        std::fs::read_to_string(p.path(".githooks/pre-commit")).unwrap(),
        "#!/bin/sh\nexit 0\n"
    );
}

/// A hook or git config with a second hard link in the project could be changed through that
/// name, past the read-only mount: commands are refused until the link is gone.
#[test]
fn a_hard_link_into_git_state_stops_commands() {
    let p = Project::new();
    p.write("README.md", "# r\n");
    common::git(p.root(), &["init", "-q"]);
    p.write(".git/hooks/pre-commit", "#!/bin/sh\nexit 0\n");
    std::fs::hard_link(p.path(".git/hooks/pre-commit"), p.path("innocent.sh")).unwrap();
    let (text, err) = shell(&p, "ls");
    assert!(err, "{text}");
    assert!(
        text.contains(".git/hooks/pre-commit has another hard link in the project"),
        "{text}"
    );
    std::fs::remove_file(p.path("innocent.sh")).unwrap();
    let (text, err) = shell(&p, "ls");
    assert!(!err, "{text}");
}

/// `sandbox: off` is said in every result, so the model and the user know.
#[test]
fn a_result_says_when_the_sandbox_is_off() {
    let p = Project::new();
    // The user's choice: a project's own config could only turn the sandbox on.
    let (text, err) = p.tool_env(
        "ws_shell",
        &json!({"command": "true"}).to_string(),
        &[("SLMCODE_SANDBOX", "off")],
    );
    assert!(!err, "{text}");
    // The portable fallbacks contain processes by a walk of the process table, and say so.
    let processes = match slmcode_aci::platform::Platform::current() {
        slmcode_aci::platform::Platform::Linux => "",
        _ => "; leftover processes are found in the process table",
    };
    assert!(
        text.ends_with(&format!(
            "[sandbox off (sandbox: off in the config): writes, reads and network are not confined{processes}]"
        )),
        "{text}"
    );
}

/// Every result names the sandbox in force: the full one on Linux, and in a build with the
/// portable fallbacks, that writes, reads and network are not confined, and why.
#[test]
fn every_result_names_the_sandbox_in_force() {
    use slmcode_aci::platform::Platform;
    let p = Project::new();
    let (text, err) = shell(&p, "true");
    assert!(!err, "{text}");
    match Platform::current() {
        Platform::Linux => {
            if require_full_sandbox(&text) {
                assert!(text.ends_with("[sandbox: network off]"), "{text}");
            }
        }
        _ => assert!(
            text.ends_with("[sandbox off (this build uses the portable fallbacks (the `portable` feature)): writes, reads and network are not confined; leftover processes are found in the process table]"),
            "{text}"
        ),
    }
}

/// An ordinary user gets the full sandbox too (user namespaces need no privilege). Run as
/// `nobody` when the tests run as root, which is how CI runs them.
#[test]
fn an_ordinary_user_gets_the_same_sandbox() {
    if !common::native("the sandbox for an ordinary user") {
        return;
    }
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    if std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(0)
        != 0
    {
        // Already an ordinary user: every other test here is this test; but the switch from
        // root to another user was not.
        common::skip(
            "an_ordinary_user_gets_the_same_sandbox",
            "the tests do not run as root, so there is no other user to become",
        );
        return;
    }
    let p = Project::new();
    p.write("README.md", "# r\n");
    common::git(p.root(), &["init", "-q"]);
    p.write(
        "w.py",
        "for path in ['.git/config', 'new.txt']:\n    try:\n        open(path, 'a').write('x')\n        print('WROTE', path)\n    except OSError:\n        print('DENIED', path)\n",
    );
    let chown = std::process::Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(p.root())
        .status()
        .unwrap();
    assert!(chown.success());
    std::fs::set_permissions(p.root(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_slmcode"))
        .args([
            "tool",
            "ws_shell",
            r#"{"command":"python3 w.py; id -u"}"#,
            "--root",
        ])
        .arg(p.root())
        .env("SLMCODE_SHELL_ALLOW", "python3 w.py")
        .env("XDG_CONFIG_HOME", p.path(".no-config"))
        .env("HOME", p.root())
        .output()
        .expect("setpriv (util-linux)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("65534\n"), "{text}");
    assert!(text.contains("DENIED .git/config"), "{text}");
    if require_full_sandbox(&text) {
        assert!(text.contains("WROTE new.txt"), "{text}");
        assert!(
            text.trim_end().ends_with("[sandbox: network off]"),
            "{text}"
        );
    }
}

/// The weaker sandbox of a kernel without user namespaces (`sandbox: landlock` chooses it):
/// git's state and everything outside the project still cannot be written, TCP cannot leave,
/// nothing outlives the call — and the result says what is weaker.
#[test]
fn the_landlock_only_sandbox_still_holds() {
    if !common::native("the Landlock-only sandbox") {
        return;
    }
    let p = Project::new();
    p.write("README.md", "# r\n");
    common::git(p.root(), &["init", "-q"]);
    p.write(".slmcode/hooks.json", "{}\n");
    p.write("src/lib.rs", "\n");
    p.write("secret.txt", "PROJECT-SECRET\n");
    let before = common::snapshot(&p.path(".git"));
    let outside = tempfile::tempdir().unwrap();
    let listener = listen();
    let port = listener.port;
    let marker = format!("400.{}", std::process::id());
    let text = allowed_script(
        &p,
        "landlock.py",
        &format!(
            "import socket, subprocess\n\
             for path in ['.git/config', '.git/hooks/pre-commit', '.slmcode/hooks.json', '{out}/x', 'src/out.txt', 'new-top.txt']:\n\
             \x20   try:\n\
             \x20       open(path, 'a').write('pwned')\n\
             \x20       print('WROTE', path)\n\
             \x20   except OSError:\n\
             \x20       print('DENIED', path)\n\
             try:\n\
             \x20   socket.create_connection(('127.0.0.1', {port}), timeout=3).sendall(open('secret.txt', 'rb').read())\n\
             \x20   print('SENT')\n\
             except OSError:\n\
             \x20   print('BLOCKED')\n\
             subprocess.Popen(['sleep', '{marker}'], env={{}}, start_new_session=True)\n",
            out = outside.path().display()
        ),
        &[("SLMCODE_SANDBOX", "landlock")],
    );
    for denied in [
        ".git/config",
        ".git/hooks/pre-commit",
        ".slmcode/hooks.json",
        "new-top.txt",
    ] {
        assert!(
            text.contains(&format!("DENIED {denied}\n")),
            "{denied}: {text}"
        );
    }
    assert!(text.contains("WROTE src/out.txt"), "{text}");
    assert!(text.contains("BLOCKED"), "{text}");
    assert!(listener.got().is_empty(), "the packet arrived: {text}");
    assert!(!outside.path().join("x").exists());
    assert_eq!(common::snapshot(&p.path(".git")), before);
    let alive = common::alive(&marker);
    assert!(!alive, "a detached child outlived the call: {text}");
    assert!(
        text.contains(
            "[sandbox: network: TCP off, UDP not isolated; weaker here: no PID namespace"
        ),
        "{text}"
    );
}
