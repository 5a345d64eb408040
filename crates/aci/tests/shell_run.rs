//! Bounded execution: timeouts kill everything, nothing outlives a call, output memory stays
//! flat, and a grandchild holding the pipe cannot hang the call. Each test looks for its own
//! marker in /proc to prove there is no survivor.

use std::path::PathBuf;
use std::time::Duration;

use slmcode_aci::shell::run::{run, Exit, RunSpec};

fn spec(command: &str, timeout_secs: u64) -> RunSpec {
    RunSpec {
        command: command.to_string(),
        cwd: PathBuf::from("/tmp"),
        timeout: Duration::from_secs(timeout_secs),
        sandbox: None,
        extra_env: Vec::new(),
        stdin: Vec::new(),
    }
}

/// Processes whose command line contains `needle`.
fn survivors(needle: &str) -> Vec<String> {
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
    let out = run(&spec("sleep 1000.4242", 2)).unwrap();
    assert_eq!(out.exit, Exit::TimedOut);
    // The timeout is enforced, not merely noticed: the call returns right after it.
    assert!(
        out.elapsed < Duration::from_millis(2500),
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
    let out = run(&spec(
        "setsid sleep 100.4343 & (sleep 100.4444 &) ; echo started",
        10,
    ))
    .unwrap();
    assert_eq!(out.exit, Exit::Code(0));
    assert_eq!(out.text(), "started\n");
    assert!(out.killed >= 2, "killed {}", out.killed);
    assert!(
        survivors("100.4343").is_empty(),
        "{:?}",
        survivors("100.4343")
    );
    assert!(
        survivors("100.4444").is_empty(),
        "{:?}",
        survivors("100.4444")
    );
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
    let out = run(&spec("echo out; echo err >&2; exit 3", 10)).unwrap();
    assert_eq!(out.exit, Exit::Code(3));
    assert_eq!(out.text(), "out\nerr\n");
    let out = run(&spec("kill -TERM $$", 10)).unwrap();
    assert_eq!(out.exit, Exit::Signal(15));
    let out = run(&spec("true", 10)).unwrap();
    assert_eq!((out.exit, out.total), (Exit::Code(0), 0));
}

#[test]
fn the_environment_is_clean_and_stdin_is_null() {
    std::env::set_var("LD_PRELOAD_PROBE", "x");
    let out = run(&spec("env | sort; cat", 10)).unwrap();
    let text = out.text();
    for line in text.lines() {
        let key = line.split('=').next().unwrap_or_default();
        assert!(
            [
                "PATH",
                "HOME",
                "LANG",
                "TERM",
                "SLMCODE_RUN",
                "PWD",
                "SHLVL",
                "_",
                "OLDPWD"
            ]
            .contains(&key),
            "unexpected variable {line}"
        );
    }
    assert!(text.contains("TERM=dumb"), "{text}");
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
    let rss = || -> u64 {
        std::fs::read_to_string("/proc/self/status")
            .unwrap()
            .lines()
            .find(|l| l.starts_with("VmRSS:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse().ok())
            .unwrap_or(0)
    };
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
