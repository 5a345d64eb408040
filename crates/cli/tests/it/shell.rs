//! ws_shell through the real binary: the policy's refusals, the bounded run and its messages,
//! the permission switch, and the Landlock sandbox keeping `.slmcode/` intact.

use crate::common;
use crate::common::Project;
use serde_json::json;

fn shell(p: &Project, command: &str) -> (String, bool) {
    p.tool("ws_shell", &json!({"command": command}).to_string())
}

#[test]
fn allowed_commands_run_and_report_their_exit() {
    let p = Project::new();
    p.write("a.txt", "hello\n");
    let (text, err) = shell(&p, "cat a.txt && ls");
    assert!(!err, "{text}");
    assert!(text.starts_with("hello\na.txt\n[exit code 0]"), "{text}");
    let (text, err) = shell(&p, "true");
    assert!(!err);
    assert!(
        text.starts_with("(command succeeded with no output: true)"),
        "{text}"
    );
    let (text, _) = shell(&p, "grep nothing a.txt");
    assert!(text.starts_with("[exit code 1]"), "{text}");
    // Big output: the tail and the totals survive the result cap.
    let (text, _) = shell(&p, "seq 1 300000");
    assert!(
        text.contains("300000\n[exit code 0]"),
        "{}",
        &text[text.len() - 400..]
    );
    assert!(
        text.contains("[the command wrote 1988895 bytes; "),
        "{}",
        &text[text.len() - 400..]
    );
    assert!(
        text.contains("bytes from the middle were not kept"),
        "{text}"
    );
}

#[test]
fn refusals_name_the_rule_and_what_to_run_instead() {
    let p = Project::new();
    p.write("a.txt", "x\n");
    for (command, rule) in [
        ("echo $(id)", "substitution"),
        ("sleep 1 &", "background"),
        ("bash -c ls", "nested-interpreter"),
        ("echo x > a.txt", "write-existing"),
        ("echo x >> .slmcode/hooks.json", "control-dir"),
        ("rm -rf a.txt", "tier"),
        ("git -c core.pager=sh log", "dangerous-flag"),
        ("echo 'unclosed", "parse"),
        ("ls && rm -rf a.txt", "tier"),
    ] {
        let (text, err) = shell(&p, command);
        assert!(err, "{command} should be refused: {text}");
        assert!(
            text.contains(&format!("[rule: {rule}]")),
            "{command}: {text}"
        );
        assert!(text.contains("instead"), "{command}: {text}");
    }
    let (text, _) = shell(&p, "ls && echo $(id)");
    assert!(
        text.starts_with("ws_shell refused the part `echo $(id)`: "),
        "{text}"
    );
}

#[test]
fn timeouts_are_capped_and_reported() {
    let p = Project::new();
    p.write(".slmcode/config.yaml", "shell_timeout_max: 1\n");
    let (text, _) = p.tool("ws_shell", r#"{"command":"sleep 30","timeout_sec":60}"#);
    assert!(
        text.contains("[timed out after 1 s — the command and everything it started were killed"),
        "{text}"
    );
    assert!(
        text.contains("[timeout_sec 60 was capped at shell_timeout_max = 1]"),
        "{text}"
    );
}

#[test]
fn permission_deny_and_headless_ask_refuse() {
    let p = Project::new();
    p.write(".slmcode/config.yaml", "shell_permission: deny\n");
    let (text, err) = shell(&p, "ls");
    assert!(err && text.contains("shell_permission: deny"), "{text}");
    p.write(".slmcode/config.yaml", "shell_permission: ask\n");
    // The test has no terminal to ask on (setsid drops the controlling terminal).
    let out = std::process::Command::new("setsid")
        .arg(env!("CARGO_BIN_EXE_slmcode"))
        .args(["tool", "ws_shell", r#"{"command":"ls"}"#, "--root"])
        .arg(p.root())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("needs the user's approval"), "{text}");
}

/// The user allowed `python3 NAME` (the shape of a hostile "test runner"); returns the call's
/// text.
fn allowed_script(p: &Project, name: &str, body: &str, env: &[(&str, &str)]) -> String {
    p.write(name, body);
    let allow = format!("python3 {name}");
    let mut vars = vec![("SLMCODE_SHELL_ALLOW", allow.as_str())];
    vars.extend_from_slice(env);
    let (text, err) = p.tool_env(
        "ws_shell",
        &json!({"command": format!("python3 {name}")}).to_string(),
        &vars,
    );
    assert!(!err, "{text}");
    text
}

/// Fails unless the full sandbox is in force, or the machine is declared to lack it.
fn require_full_sandbox(text: &str) -> bool {
    let weak = text.contains("weaker here") || text.contains("NOT isolated");
    if weak {
        assert!(
            std::env::var_os("SLMCODE_TEST_WEAK_SANDBOX").is_some(),
            "this kernel gives a weaker sandbox; set SLMCODE_TEST_WEAK_SANDBOX=1 to accept it: {text}"
        );
    }
    !weak
}

#[test]
fn the_sandbox_keeps_git_and_harness_state_and_lets_the_project_grow() {
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

/// A listener on this machine's loopback that records whatever arrives until [`Listener::got`]
/// is called — after the command has ended, so anything it sent is already queued.
struct Listener {
    port: u16,
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<Vec<u8>>,
}

impl Listener {
    /// What arrived.
    fn got(self) -> Vec<u8> {
        self.done.store(true, std::sync::atomic::Ordering::SeqCst);
        self.thread.join().unwrap()
    }
}

fn listen() -> Listener {
    use std::io::Read;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop = done.clone();
    let thread = std::thread::spawn(move || {
        let mut got = Vec::new();
        loop {
            // Checked before the accept, so one last accept follows the stop.
            let last = stop.load(std::sync::atomic::Ordering::SeqCst);
            match listener.accept() {
                Ok((mut s, _)) => {
                    s.set_nonblocking(false).unwrap();
                    s.set_read_timeout(Some(std::time::Duration::from_secs(2)))
                        .unwrap();
                    let _ = s.read_to_end(&mut got);
                    return got;
                }
                Err(_) if last => return got,
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
            }
        }
    });
    Listener { port, done, thread }
}

const SEND: &str = "import socket, sys\n\
try:\n\
\x20   s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=3)\n\
\x20   s.sendall(open('secret.txt', 'rb').read())\n\
\x20   s.close()\n\
\x20   print('SENT')\n\
except OSError as e:\n\
\x20   print('BLOCKED', e)\n";

fn send(p: &Project, port: u16, network: &str) -> String {
    p.write("send.py", SEND);
    let allow = format!("python3 send.py {port}");
    let (text, err) = p.tool_env(
        "ws_shell",
        &json!({"command": allow}).to_string(),
        &[
            ("SLMCODE_SHELL_ALLOW", allow.as_str()),
            ("SLMCODE_SHELL_NETWORK", network),
        ],
    );
    assert!(!err, "{text}");
    text
}

#[test]
fn no_packet_leaves_unless_the_user_allows_the_network() {
    let p = Project::new();
    p.write("secret.txt", "PROJECT-SECRET\n");
    for network in ["deny", "loopback"] {
        let listener = listen();
        let text = send(&p, listener.port, network);
        assert!(text.contains("BLOCKED"), "{network}: {text}");
        assert!(
            listener.got().is_empty(),
            "{network}: the packet arrived: {text}"
        );
        if require_full_sandbox(&text) {
            let said = if network == "deny" {
                "[sandbox: network off]"
            } else {
                "[sandbox: network: its own loopback only]"
            };
            assert!(text.contains(said), "{text}");
        }
    }
    let listener = listen();
    let text = send(&p, listener.port, "allow");
    assert!(text.contains("SENT"), "{text}");
    assert!(text.contains("[sandbox: network on]"), "{text}");
    assert_eq!(listener.got(), b"PROJECT-SECRET\n");
}

#[test]
fn loopback_mode_gives_the_command_a_loopback_of_its_own() {
    let p = Project::new();
    let text = allowed_script(
        &p,
        "selfserve.py",
        "import socket, threading\n\
         srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen(1)\n\
         port = srv.getsockname()[1]\n\
         threading.Thread(target=lambda: srv.accept()[0].sendall(b'pong'), daemon=True).start()\n\
         c = socket.create_connection(('127.0.0.1', port), timeout=3)\n\
         print('GOT', c.recv(4).decode())\n",
        &[("SLMCODE_SHELL_NETWORK", "loopback")],
    );
    assert!(text.contains("GOT pong"), "{text}");
}

#[test]
fn a_detached_child_of_a_test_script_is_gone_after_the_call() {
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
    let alive = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .any(|c| String::from_utf8_lossy(&c).contains(&marker));
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
    assert!(
        text.ends_with(
            "[sandbox off (sandbox: off in the config): writes and network are not confined]"
        ),
        "{text}"
    );
}

/// An ordinary user gets the full sandbox too (user namespaces need no privilege). Run as
/// `nobody` when the tests run as root, which is how CI runs them.
#[test]
fn an_ordinary_user_gets_the_same_sandbox() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    if std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(0)
        != 0
    {
        // Already an ordinary user: every other test here is this test.
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
    let alive = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .any(|c| String::from_utf8_lossy(&c).contains(&marker));
    assert!(!alive, "a detached child outlived the call: {text}");
    assert!(
        text.contains(
            "[sandbox: network: TCP off, UDP not isolated; weaker here: no PID namespace"
        ),
        "{text}"
    );
}

/// Test suites that use shared memory (Python's multiprocessing: a pool and a lock) run, in a
/// /dev/shm of the command's own.
#[test]
fn shared_memory_works_and_stays_private() {
    let p = Project::new();
    let text = allowed_script(
        &p,
        "pool.py",
        "import multiprocessing as mp, os\n\
         if __name__ == '__main__':\n\
         \x20   with mp.Pool(2) as pool:\n\
         \x20       print(pool.map(abs, [-1, -2]))\n\
         \x20   lock = mp.Lock()\n\
         \x20   open('/dev/shm/slmcode-test-marker', 'w').write('x')\n\
         \x20   print('lock ok')\n",
        &[],
    );
    if require_full_sandbox(&text) {
        assert!(text.contains("[1, 2]\nlock ok"), "{text}");
        // Written inside, absent outside.
        assert!(!std::path::Path::new("/dev/shm/slmcode-test-marker").exists());
    }
}

/// Caches (go's build cache, pip's, npm's) are written to a directory of the project's own,
/// kept between calls; the user's own cache directory stays out of reach.
#[test]
fn caches_persist_in_a_directory_of_the_projects_own() {
    let p = Project::new();
    let user_cache = tempfile::tempdir().unwrap();
    let base = user_cache.path().display().to_string();
    p.write(
        "cache.py",
        "import os, sys\n\
         d = os.environ['XDG_CACHE_HOME']\n\
         os.makedirs(d + '/tool', exist_ok=True)\n\
         p = d + '/tool/count'\n\
         n = int(open(p).read()) if os.path.exists(p) else 0\n\
         open(p, 'w').write(str(n + 1))\n\
         print('count', n + 1)\n\
         try:\n\
         \x20   open(sys.argv[1] + '/go-build', 'w').write('poison')\n\
         \x20   print('POISONED')\n\
         except OSError:\n\
         \x20   print('DENIED')\n",
    );
    let command = format!("python3 cache.py {base}");
    for n in 1..=2 {
        let (text, err) = p.tool_env(
            "ws_shell",
            &json!({"command": command}).to_string(),
            &[
                ("SLMCODE_SHELL_ALLOW", command.as_str()),
                ("XDG_CACHE_HOME", base.as_str()),
            ],
        );
        assert!(!err, "{text}");
        assert!(text.contains(&format!("count {n}\n")), "{text}");
        assert!(text.contains("DENIED"), "{text}");
    }
    assert!(!user_cache.path().join("go-build").exists());
    assert!(user_cache.path().join("slmcode/sandbox").is_dir());
}

/// The call's temp directory is made fresh and private (mkdtemp, 0700) under a per-user
/// directory that must be this user's and private: one planted in a shared /tmp (a symlink, or
/// open to others) is refused, never used.
#[test]
fn the_temp_directory_is_private_and_never_a_planted_one() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let p = Project::new();
    let uid = std::fs::metadata("/proc/self").unwrap().uid();
    let run_with_tmp = |tmp: &std::path::Path| {
        p.tool_env(
            "ws_shell",
            &json!({"command": "echo \"$TMPDIR\"; stat -c %a \"$TMPDIR\"; echo x > \"$TMPDIR/f\""})
                .to_string(),
            &[("TMPDIR", tmp.to_str().unwrap())],
        )
    };
    // A normal call: a fresh 0700 directory, gone afterwards.
    let shared = tempfile::tempdir().unwrap();
    let (text, err) = run_with_tmp(shared.path());
    assert!(!err, "{text}");
    let dir = text.lines().next().unwrap().to_string();
    assert!(
        dir.starts_with(&format!("{}/slmcode-{uid}/shell-", shared.path().display())),
        "{text}"
    );
    assert_eq!(text.lines().nth(1), Some("700"), "{text}");
    assert!(
        !std::path::Path::new(&dir).exists(),
        "the temp dir outlived the call"
    );
    let (again, _) = run_with_tmp(shared.path());
    assert_ne!(
        again.lines().next(),
        Some(dir.as_str()),
        "names are not reused"
    );
    // A planted base: a symlink to somewhere the planter reads.
    let planted = tempfile::tempdir().unwrap();
    let watched = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        watched.path(),
        planted.path().join(format!("slmcode-{uid}")),
    )
    .unwrap();
    let (text, err) = run_with_tmp(planted.path());
    assert!(err, "{text}");
    assert!(
        text.contains("is not a private directory of this user"),
        "{text}"
    );
    assert_eq!(std::fs::read_dir(watched.path()).unwrap().count(), 0);
    // A base others may write.
    let open = tempfile::tempdir().unwrap();
    let base = open.path().join(format!("slmcode-{uid}"));
    std::fs::create_dir(&base).unwrap();
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (text, err) = run_with_tmp(open.path());
    assert!(
        err && text.contains("is not a private directory of this user"),
        "{text}"
    );
}

/// `shell_memory_max` bounds a command and everything it starts; going over is said in the
/// result, in words a model can act on. A project may lower the bound, never raise it.
#[test]
fn a_command_over_shell_memory_max_is_stopped_and_told() {
    let p = Project::new();
    let alloc = |mib: u32| {
        json!({"command": format!("python3 -c \"b = b'x' * ({mib} << 20); print('allocated', len(b) >> 20)\"")})
            .to_string()
    };
    // The user's bound, in the user's config.
    let user = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(user.path().join("slmcode")).unwrap();
    std::fs::write(
        user.path().join("slmcode/config.yaml"),
        "shell_memory_max: 128MiB\nshell_allow: [python3]\n",
    )
    .unwrap();
    let xdg = user.path().to_str().unwrap();
    let env = [("XDG_CONFIG_HOME", xdg)];
    let (text, err) = p.tool_env("ws_shell", &alloc(400), &env);
    assert!(!err, "{text}");
    assert!(!text.contains("allocated"), "{text}");
    assert!(
        text.contains("shell_memory_max (128 MiB")
            && text.contains("ask the user to raise shell_memory_max"),
        "{text}"
    );
    let (text, err) = p.tool_env("ws_shell", &alloc(16), &env);
    assert!(!err, "{text}");
    assert!(text.contains("allocated 16\n[exit code 0]"), "{text}");
    assert!(!text.contains("shell_memory_max"), "{text}");
    // The project asks for more: ignored, the user's bound stays, and config show says so.
    p.write(".slmcode/config.yaml", "shell_memory_max: 4GiB\n");
    let (text, _) = p.tool_env("ws_shell", &alloc(400), &env);
    assert!(text.contains("shell_memory_max (128 MiB"), "{text}");
    let out = common::bin()
        .args(["config", "show", "--root"])
        .arg(p.root())
        .env("XDG_CONFIG_HOME", xdg)
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    let line = shown
        .lines()
        .find(|l| l.contains("shell_memory_max"))
        .unwrap_or_default();
    assert!(line.contains("128MiB") && line.contains("4GiB"), "{shown}");
}
