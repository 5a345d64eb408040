//! Bounded execution: timeouts kill everything, nothing outlives a call, output memory stays
//! flat, and a grandchild holding the pipe cannot hang the call. Each test looks for its own
//! marker in /proc to prove there is no survivor. Containment is tested both ways: the
//! supervisor alone (what hooks get, and what a kernel without namespaces gives) and the full
//! sandbox.

use std::path::PathBuf;
use std::time::Duration;

use slmcode_aci::platform::Platform;
use slmcode_aci::shell::run::{run, Exit, RunSpec};

/// Whether this build has Linux's own sandbox and containment. Where it has the portable
/// fallback (the `portable` feature), a check of what only Linux's guarantees is a counted
/// skip, and false.
fn native(what: &str) -> bool {
    if Platform::current() == Platform::Linux {
        return true;
    }
    crate::skip::skip(
        what,
        &format!(
            "not guaranteed by this build: {}",
            Platform::current().describe()
        ),
    );
    false
}

fn spec(command: &str, timeout_secs: u64) -> RunSpec {
    RunSpec {
        control: Default::default(),
        command: command.to_string(),
        cwd: PathBuf::from("/tmp"),
        timeout: Duration::from_secs(timeout_secs),
        env: slmcode_aci::shell::env::base(std::path::Path::new("/tmp")),
        stdin: Vec::new(),
        confinement: std::sync::Arc::new(slmcode_aci::shell::sandbox::processes_only()),
        memory: None,
    }
}

/// How a test's command is confined.
#[derive(Debug, Clone, Copy)]
enum Mode {
    /// The supervisor alone: no namespaces, descendants found and killed by a walk.
    Supervised,
    /// The full sandbox for a scratch workspace, network off.
    Sandboxed,
    /// Landlock without namespaces: what a kernel without user namespaces gives.
    LandlockOnly,
}

const MODES: [Mode; 3] = [Mode::Supervised, Mode::Sandboxed, Mode::LandlockOnly];

/// Runs `command` under `mode`; `tag` makes the markers of one mode differ from the other's.
fn run_in(mode: Mode, command: &str, timeout_secs: u64) -> slmcode_aci::shell::run::RunOutput {
    use slmcode_aci::boundary::Protected;
    use slmcode_aci::config::ShellNetwork;
    use slmcode_aci::path::Jail;
    use slmcode_aci::shell::sandbox::{self, Plan};
    let mut spec = spec(command, timeout_secs);
    let dir = tempfile::tempdir().unwrap();
    let temp = tempfile::tempdir().unwrap();
    if let Mode::Sandboxed | Mode::LandlockOnly = mode {
        let jail = Jail::open(dir.path()).unwrap();
        let protected = Protected::discover(&jail);
        // The user's home and PATH, as a call gets them: their toolchains (a pyenv shim
        // runs ~/.pyenv's pyenv) are visible.
        let path_dirs = slmcode_aci::shell::env::path_dirs(jail.root());
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let (c, report) = sandbox::prepare(&Plan {
            root: jail.root(),
            protected: &protected,
            temp: temp.path(),
            cache: None,
            network: ShellNetwork::Deny,
            namespaces: matches!(mode, Mode::Sandboxed),
            home: home.as_deref(),
            read_allow: &[],
            path_dirs: &path_dirs,
        });
        if !report.is_full()
            && matches!(mode, Mode::Sandboxed)
            && native("containment under the full sandbox")
        {
            assert!(
                std::env::var_os("SLMCODE_TEST_WEAK_SANDBOX").is_some(),
                "this kernel gives a weaker sandbox ({}); set SLMCODE_TEST_WEAK_SANDBOX=1 to test it anyway",
                report.describe()
            );
            crate::skip::skip(
                "containment under the full sandbox",
                &format!("SLMCODE_TEST_WEAK_SANDBOX: {}", report.describe()),
            );
        }
        spec.cwd = jail.root().to_path_buf();
        spec.confinement = std::sync::Arc::new(c);
    }
    run(&spec).unwrap()
}

/// Processes whose command line contains `needle`.
pub(crate) fn survivors(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        if let Ok(cmdline) = std::fs::read(format!("/proc/{name}/cmdline")) {
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let zombie = std::fs::read_to_string(format!("/proc/{name}/stat"))
                .map(|s| {
                    s.rsplit_once(')')
                        .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
                })
                .unwrap_or(true);
            if cmdline.contains(needle) && !zombie {
                out.push(format!("{name}: {cmdline}"));
            }
        }
    }
    out
}

#[test]
fn a_timeout_kills_the_command_and_returns_promptly() {
    // The event waited on is the call's return: it comes at the timeout, not when the command
    // would end on its own (1000 s), and never before the timeout. The wait's own bound is
    // generous, so a slow machine does not fail it; a call that ignored its timeout does.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(run(&spec("sleep 1000.4242", 2))));
    let out = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the call did not return after its 2 s timeout")
        .unwrap();
    assert_eq!(out.exit, Exit::TimedOut);
    assert!(
        out.elapsed >= Duration::from_secs(2),
        "took {:?}",
        out.elapsed
    );
    assert!(
        survivors("1000.4242").is_empty(),
        "{:?}",
        survivors("1000.4242")
    );
}

#[test]
fn setsid_and_double_forks_leave_no_survivor() {
    for (i, mode) in MODES.iter().enumerate() {
        let (a, b) = (format!("100.43{i}3"), format!("100.44{i}4"));
        let out = run_in(
            *mode,
            &format!("setsid sleep {a} & (sleep {b} &) ; echo started"),
            10,
        );
        assert_eq!(out.exit, Exit::Code(0), "{mode:?}");
        assert_eq!(out.text(), "started\n", "{mode:?}");
        assert!(out.killed >= 2, "{mode:?}: killed {}", out.killed);
        assert!(survivors(&a).is_empty(), "{mode:?}: {:?}", survivors(&a));
        assert!(survivors(&b).is_empty(), "{mode:?}: {:?}", survivors(&b));
    }
}

/// Every way a process can leave its parent, group, session and environment behind: none of
/// them outlives the call, in either mode.
#[test]
fn nothing_that_detached_itself_survives() {
    // Each with whether the portable fallback must catch it too: it must whatever stays in the
    // group or keeps the environment; one that leaves both at once, before the process table
    // is read, only Linux's subreaper or PID namespace catches.
    let escapes = [
        // A new session inside a shell that backgrounds and returns.
        ("setsid sh -c 'sleep {n}1 & echo started'", true),
        // `env -i` drops every variable a marker could have been kept in.
        ("env -i sh -c 'sleep {n}2 &'; echo started", true),
        ("nohup sleep {n}3 >/dev/null 2>&1 & echo started", true),
        // A detached child with an empty environment and a new session, as a test script
        // would start one.
        ("python3 -c \"import subprocess; subprocess.Popen(['sleep', '{n}4'], env={}, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print('started')\"", false),
        // The classic daemon: fork, setsid, fork again, exec with no environment.
        ("python3 -c \"import os\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        os.execve('/bin/sleep', ['sleep', '{n}5'], {})\n    os._exit(0)\nos.wait(); print('started')\"", false),
    ];
    for (i, mode) in MODES.iter().enumerate() {
        for (j, (template, portable)) in escapes.iter().enumerate() {
            if !portable && !native("a daemon that leaves group and environment at once") {
                continue;
            }
            let n = format!("200.{i}{j}");
            let command = template.replace("{n}", &n);
            let out = run_in(*mode, &command, 20);
            assert_eq!(
                out.exit,
                Exit::Code(0),
                "{mode:?} {command}: {}",
                out.text()
            );
            let left: Vec<String> = (1..=5)
                .flat_map(|k| survivors(&format!("{n}{k}")))
                .collect();
            assert!(left.is_empty(), "{mode:?} {command}: survivors {left:?}");
            assert!(out.killed >= 1, "{mode:?} {command}: killed {}", out.killed);
        }
    }
}

#[test]
fn a_timeout_ends_detached_descendants_too() {
    for (i, mode) in MODES.iter().enumerate() {
        let (a, b) = (format!("1000.5{i}1"), format!("1000.5{i}2"));
        let out = run_in(*mode, &format!("setsid sleep {a} & sleep {b}"), 2);
        assert_eq!(out.exit, Exit::TimedOut, "{mode:?}");
        // Generous: gone within seconds of the timeout, not after the sleeps.
        assert!(
            out.elapsed < Duration::from_secs(10),
            "{mode:?}: took {:?}",
            out.elapsed
        );
        assert!(survivors(&a).is_empty(), "{mode:?}: {:?}", survivors(&a));
        assert!(survivors(&b).is_empty(), "{mode:?}: {:?}", survivors(&b));
    }
}

#[test]
fn the_sandboxed_command_cannot_see_or_read_the_harness() {
    if !native("the harness hidden from the command") {
        return;
    }
    let me = std::process::id();
    let out = run_in(
        Mode::Sandboxed,
        &format!("cat /proc/{me}/environ; ls /proc/{me}; echo pid1=$(cat /proc/1/comm)"),
        10,
    );
    let text = out.text();
    assert!(text.contains("No such file or directory"), "{text}");
    assert!(!text.contains("PATH="), "{text}");
}

#[test]
fn a_grandchild_holding_the_output_pipe_does_not_hang_the_call() {
    let out = run(&spec("sleep 100.4545 & echo hi", 30)).unwrap();
    assert_eq!(out.exit, Exit::Code(0));
    assert_eq!(out.text(), "hi\n");
    assert!(
        out.elapsed < Duration::from_secs(10),
        "took {:?}",
        out.elapsed
    );
    assert!(survivors("100.4545").is_empty());
}

#[test]
fn exit_codes_signals_and_interleaved_output() {
    for mode in MODES {
        let out = run_in(mode, "echo out; echo err >&2; exit 3", 10);
        assert_eq!(out.exit, Exit::Code(3), "{mode:?}");
        assert_eq!(out.text(), "out\nerr\n", "{mode:?}");
        // The shell is not PID 1 of its namespace, so its own signal ends it as anywhere.
        let out = run_in(mode, "kill -TERM $$", 10);
        assert_eq!(out.exit, Exit::Signal(15), "{mode:?}");
        let out = run_in(mode, "true", 10);
        assert_eq!((out.exit, out.total), (Exit::Code(0), 0), "{mode:?}");
    }
}

/// Whether this test runs in a process of its own. If not, runs it in one — a copy of this test
/// binary that runs only `test`, with `env` added — checks that it passed, and returns false.
/// For a test that sets or measures what a whole process shares (its environment, its memory):
/// the other tests of this binary run beside it, in the same process.
fn in_own_process(test: &str, env: &[(&str, &str)]) -> bool {
    const ALONE: &str = "SLMCODE_TEST_ALONE";
    if std::env::var_os(ALONE).is_some_and(|t| t == test) {
        return true;
    }
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    let name = format!("{module}::{test}");
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name.as_str(), "--exact", "--test-threads=1"])
        .env(ALONE, test)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{test} in its own process:\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    false
}

#[test]
fn the_environment_is_clean_and_stdin_is_null() {
    // The probe is in the test process's environment, never in the command's.
    if !in_own_process(
        "the_environment_is_clean_and_stdin_is_null",
        &[("LD_PRELOAD_PROBE", "x")],
    ) {
        return;
    }
    let out = run(&spec("env | sort; cat", 10)).unwrap();
    let text = out.text();
    let mut expected = vec![
        "PATH", "HOME", "LANG", "TERM", "PWD", "SHLVL", "_", "OLDPWD",
    ];
    // The portable containment's marker (a token, nothing of the harness's).
    if Platform::current() != Platform::Linux {
        expected.push("SLMCODE_CONTAIN");
    }
    for line in text.lines() {
        let key = line.split('=').next().unwrap_or_default();
        assert!(expected.contains(&key), "unexpected variable {line}");
    }
    assert!(text.contains("TERM=dumb"), "{text}");
    // Stdin is /dev/null itself (the character device 1:3), not an empty pipe a command could
    // wait on or a terminal it could read from; under the sandbox too.
    for mode in MODES {
        let out = run_in(
            mode,
            "readlink /proc/self/fd/0; stat -L -c %F:%t:%T /dev/stdin",
            10,
        );
        assert_eq!(
            out.text(),
            "/dev/null\ncharacter special file:1:3\n",
            "{mode:?}"
        );
    }
}

#[test]
fn big_output_keeps_head_and_tail_and_counts_the_middle() {
    let out = run(&spec("seq 1 2000000", 60)).unwrap();
    assert_eq!(out.exit, Exit::Code(0));
    let expected_total: u64 = (1..=2_000_000u64)
        .map(|n| n.to_string().len() as u64 + 1)
        .sum();
    assert_eq!(out.total, expected_total);
    assert!(out.head.starts_with(b"1\n2\n3\n"));
    assert!(out.tail.ends_with(b"1999999\n2000000\n"));
    assert_eq!(
        out.omitted,
        out.total - (out.head.len() + out.tail.len()) as u64
    );
    assert!(out.head.len() + out.tail.len() <= 256 * 1024);
}

#[test]
fn yes_for_the_whole_timeout_keeps_memory_flat() {
    // The RSS measured is the process's: alone, so no other test's allocations count.
    if !in_own_process("yes_for_the_whole_timeout_keeps_memory_flat", &[]) {
        return;
    }
    let rss = || -> u64 {
        std::fs::read_to_string("/proc/self/status")
            .unwrap()
            .lines()
            .find(|l| l.starts_with("VmRSS:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse().ok())
            .unwrap_or(0)
    };
    // What one run costs whatever it prints (thread stacks; the process table, where it is
    // walked) is paid before measuring: this is about what the output costs.
    run(&spec("true", 5)).unwrap();
    let before = rss();
    let out = run(&spec("yes", 3)).unwrap();
    let after = rss();
    assert_eq!(out.exit, Exit::TimedOut);
    assert!(
        out.total > 10 * 1024 * 1024,
        "yes wrote only {} bytes",
        out.total
    );
    let growth_kb = after.saturating_sub(before);
    eprintln!(
        "yes: {} MB streamed, RSS growth {growth_kb} KiB",
        out.total / (1024 * 1024)
    );
    assert!(
        growth_kb < 8 * 1024,
        "RSS grew by {growth_kb} KiB while streaming {} bytes",
        out.total
    );
    assert!(
        survivors("yes").iter().all(|s| !s.ends_with(": yes ")),
        "{:?}",
        survivors("yes")
    );
}

/// A descriptor the harness inherited without close-on-exec (an editor's socket, a terminal's
/// pipe) does not reach the command, in any mode.
#[test]
fn no_inherited_descriptor_reaches_the_command() {
    use std::os::fd::AsRawFd;
    let file = tempfile::tempfile().unwrap();
    // SAFETY: clears close-on-exec on a descriptor this test owns.
    unsafe {
        libc::fcntl(file.as_raw_fd(), libc::F_SETFD, 0);
    }
    for mode in MODES {
        let out = run_in(mode, "ls /proc/self/fd", 10);
        assert_eq!(out.text(), "0\n1\n2\n3\n", "{mode:?}");
    }
    drop(file);
}

/// A Python one-liner that fills `mib` MiB (so the pages are really used), then says so.
fn allocate(mib: u32) -> String {
    format!("python3 -c \"b = b'x' * ({mib} << 20); print('allocated', len(b) >> 20)\"")
}

/// The rlimit fallback (what a system without a usable cgroup gets): an allocation over the
/// bound fails inside the command, and the failure is recognised; one under it goes through.
#[test]
fn the_rlimit_bound_fails_big_allocations_and_says_so() {
    use slmcode_aci::shell::memory::{MemoryLimit, OutOfMemory};
    let bounded = |command: &str| {
        let mut s = spec(command, 30);
        s.memory = Some(std::sync::Arc::new(MemoryLimit::rlimit(128 << 20)));
        run(&s).unwrap()
    };
    let over = bounded(&allocate(400));
    assert_ne!(over.exit, Exit::Code(0), "{}", over.text());
    assert!(!over.text().contains("allocated"), "{}", over.text());
    assert_eq!(over.out_of_memory, OutOfMemory::Likely, "{}", over.text());
    let under = bounded(&allocate(16));
    assert_eq!(under.exit, Exit::Code(0), "{}", under.text());
    assert!(under.text().contains("allocated 16"), "{}", under.text());
    assert_eq!(under.out_of_memory, OutOfMemory::No);
}

/// The bound this system gives (a cgroup where one can be made): the command cannot get past
/// it, and the run says it went over. Under a cgroup the whole tree counts: two processes of
/// 96 MiB each do not fit in 128 MiB together.
#[test]
fn the_memory_bound_holds_for_the_whole_command() {
    use slmcode_aci::shell::memory::{Bound, MemoryLimit, OutOfMemory};
    let limit = std::sync::Arc::new(MemoryLimit::new(128 << 20));
    let mut s = spec(&allocate(400), 30);
    s.memory = Some(limit.clone());
    let over = run(&s).unwrap();
    assert_ne!(over.exit, Exit::Code(0), "{}", over.text());
    assert!(!over.text().contains("allocated"), "{}", over.text());
    assert_ne!(over.out_of_memory, OutOfMemory::No, "{}", over.text());
    if limit.bound() == Bound::Cgroup {
        assert_eq!(over.out_of_memory, OutOfMemory::Killed);
        let limit = std::sync::Arc::new(MemoryLimit::new(128 << 20));
        let hold = "python3 -c \"import time; b = b'x' * (96 << 20); time.sleep(2)\"";
        let both = format!("{hold} & {hold} & wait");
        let mut s = spec(&both, 30);
        s.memory = Some(limit);
        let out = run(&s).unwrap();
        assert_eq!(out.out_of_memory, OutOfMemory::Killed, "{}", out.text());
    }
}
