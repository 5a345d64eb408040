//! Inputs that used to crash or stall the tools, through the registry in this process (the
//! parse in process, as a library user gets it): each is answered in seconds, with memory that
//! does not grow with the input's nesting. What would abort a process runs in a child process
//! of this test binary ([`in_child`]), so a failure shows as that child's signal, not as a lost
//! test run. The binary, with its parser process, is tested the same way in the cli's
//! `hostile.rs`.

use std::fs;
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

use serde_json::json;
use slmcode_aci::control::CallControl;
use slmcode_aci::symbols::SymbolIndex;
use slmcode_aci::{Config, Registry, Workspace};

fn call(ws: &mut Workspace, tool: &str, args: serde_json::Value) -> (bool, String) {
    let r = Registry::coding().call(ws, tool, &args);
    (r.is_error, r.text)
}

fn workspace(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    let ws = Workspace::open(dir.path(), Config::default()).unwrap();
    (dir, ws)
}

/// The environment variable that makes this test binary, started again by [`in_child`], run
/// one scenario instead of being a test.
const SCENARIO: &str = "SLMCODE_HOSTILE_SCENARIO";

/// Runs `scenario` in a child process of this test binary (the test `child_runs_a_scenario`
/// started alone). Returns what it printed; fails the test, naming the signal or status, if
/// the child did not end normally.
fn in_child(scenario: &str) -> String {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "hostile::child_runs_a_scenario",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(SCENARIO, scenario)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "the scenario {scenario} ended the process ({}): {}\n{stdout}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default()
    );
    stdout
}

/// Not a test by itself: the body of [`in_child`]'s child. Without the variable it does nothing.
#[test]
fn child_runs_a_scenario() {
    let Ok(scenario) = std::env::var(SCENARIO) else {
        return;
    };
    match scenario.as_str() {
        "deep-yaml" => every_tool_on("deep.yaml", &deep_yaml(300), "k299: v", "k299: w"),
        "deep-python" => every_tool_on(
            "deep.py",
            &deep_python(600),
            "y = f\"\"\"{x}\"\"\"",
            "y = 1",
        ),
        "fuzz-scanners" => fuzz_scanners(),
        other => panic!("no scenario {other}"),
    }
}

/// A YAML mapping `depth` levels deep, one space per level.
fn deep_yaml(depth: usize) -> String {
    let mut s: String = (0..depth)
        .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
        .collect();
    s.pop();
    s.push_str(" v\n");
    s
}

/// Python nested `depth` blocks deep around an f-string.
fn deep_python(depth: usize) -> String {
    let mut s: String = (0..depth)
        .map(|i| format!("{}if x:\n", " ".repeat(i)))
        .collect();
    s.push_str(&format!("{}y = f\"\"\"{{x}}\"\"\"\n", " ".repeat(depth)));
    s
}

/// The read (and its parse in the background), the outline, an edit, a new file, in this
/// process; prints each answer.
fn every_tool_on(name: &str, content: &str, old: &str, new: &str) {
    let (_dir, mut ws) = workspace(&[(name, content)]);
    let mut answers = vec![call(&mut ws, "ws_read", json!({"path": name, "limit": 3}))];
    // The read's parse runs on a thread of its own: let it finish (or abort the process).
    std::thread::sleep(Duration::from_millis(500));
    answers.push(call(&mut ws, "ws_outline", json!({"path": name})));
    answers.push(call(
        &mut ws,
        "ws_edit",
        json!({"path": name, "old_str": old, "new_str": new}),
    ));
    answers.push(call(
        &mut ws,
        "ws_write",
        json!({"path": format!("copy-{name}"), "content": content}),
    ));
    // libtest has printed the test's name without a newline: start on a line of our own.
    println!();
    for (err, text) in answers {
        println!("ANSWER {err} {}", text.replace('\n', " "));
    }
}

fn answers(out: &str) -> Vec<&str> {
    out.lines()
        .filter_map(|l| l.strip_prefix("ANSWER "))
        .collect()
}

#[test]
fn deep_yaml_is_answered_by_every_tool_in_process() {
    let out = in_child("deep-yaml");
    let a = answers(&out);
    assert_eq!(a.len(), 4, "{out}");
    assert!(a[0].starts_with("false "), "{}", a[0]);
    assert!(
        a[1].starts_with("true ws_outline cannot outline deep.yaml: it is indented to 300 different depths (more than 120 by line 121); the yaml parser is given at most 120."),
        "{}",
        a[1]
    );
    for answer in &a[2..] {
        assert!(answer.starts_with("false "), "{answer}");
        assert!(answer.contains("[syntax check skipped for "), "{answer}");
    }
}

#[test]
fn deep_python_is_answered_by_every_tool_in_process() {
    let out = in_child("deep-python");
    let a = answers(&out);
    assert_eq!(a.len(), 4, "{out}");
    assert!(
        a[1].contains("it is indented to 601 different depths (more than 380 by line 381); the python parser is given at most 380"),
        "{}",
        a[1]
    );
    assert!(
        a[2].contains("[syntax check skipped for deep.py"),
        "{}",
        a[2]
    );
}

/// The guard's indentation limits are what keeps the YAML and Python scanners inside their
/// 1,024-byte buffers. Random indentation-heavy texts that the guard lets through must never
/// make either scanner abort: each is parsed here with no guard at all, in a child process.
#[test]
fn what_the_guard_admits_never_overflows_a_scanner() {
    let out = in_child("fuzz-scanners");
    let admitted: usize = out
        .lines()
        .find_map(|l| l.strip_prefix("ADMITTED "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    // Some must be admitted, or the test proves nothing.
    assert!(admitted >= 20, "{out}");
}

/// Texts built to drive the scanners' indentation stacks as deep as they go: runs of blocks
/// each indented deeper than the last (YAML mappings, sequences, compact `- - x`, `? ` keys;
/// Python blocks), with what the scanners serialize most at the bottom (block scalars and flow
/// collections; f-strings, also nested and spanning lines), then back out part of the way.
/// They use between half and twice as many distinct columns as the guard allows, so about
/// half are admitted, some right at the limit. Each admitted one is parsed by tree-sitter
/// directly, with no guard: a limit set too high aborts this process.
fn fuzz_scanners() {
    use slmcode_aci::lang::Grammar;
    use slmcode_aci::syntax::guard;

    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n.max(1) as u64) as usize
    };
    const YAML_OPEN: &[&str] = &["k:", "- k:", "- - k:", "? k", "- ? k", "- -"];
    const YAML_BOTTOM: &[&str] = &[
        "k: |\n  a\n   b",
        "k: [a, {b: [c]}]",
        "- \"s\n t\"",
        "- &a !t v",
        "k: >-\n  x",
    ];
    const PY_OPEN: &[&str] = &["if x:", "def f(a):", "class C:", "with a:", "for x in y:"];
    const PY_BOTTOM: &[&str] = &[
        "y = f\"\"\"{x}",
        "\"\"\"",
        "s = f'{a!r:{w}}'",
        "z = f\"{f'{x}'}\"",
        "w = (1,\n2)",
        "pass",
    ];
    let mut admitted = 0;
    for round in 0..120 {
        let (grammar, open, bottom) = if round % 2 == 0 {
            (Grammar::Yaml, YAML_OPEN, YAML_BOTTOM)
        } else {
            (Grammar::Python, PY_OPEN, PY_BOTTOM)
        };
        let limit = guard::limits(grammar).indents.unwrap();
        let columns = limit / 2 + next(limit * 3 / 2);
        let step = 1 + next(2);
        let mut text = String::new();
        let mut at = 0;
        for _ in 0..1 + next(3) {
            // Deeper and deeper, often through every column there is.
            let to = if next(2) == 0 {
                columns
            } else {
                at + next(columns - at + 1)
            };
            for col in at..to {
                text.push_str(&" ".repeat(col * step));
                text.push_str(open[next(open.len())]);
                text.push('\n');
            }
            let deepest = to.saturating_sub(1) * step + step;
            for line in bottom[next(bottom.len())].split('\n') {
                text.push_str(&" ".repeat(deepest));
                text.push_str(line);
                text.push('\n');
            }
            at = next(to.max(1));
        }
        if guard::admit(grammar, &text).is_err() {
            continue;
        }
        admitted += 1;
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&grammar.language()).unwrap();
        parser.parse(&text, None).unwrap();
    }
    println!("\nADMITTED {admitted}");
}

#[test]
fn an_outline_line_is_as_wide_three_thousand_levels_deep_as_three() {
    // Each line was indented two spaces per enclosing definition: memory grew with the
    // square of the nesting (1.08 GiB for 36,000 nested functions).
    let js: String = (0..3000)
        .map(|i| format!("function f{i}(){{"))
        .collect::<String>()
        + &"}".repeat(3000)
        + "\n";
    let (_dir, mut ws) = workspace(&[("nested.js", &js)]);
    let started = Instant::now();
    let (err, text) = call(&mut ws, "ws_outline", json!({"path": "nested.js"}));
    assert!(!err, "{text}");
    assert!(started.elapsed() < Duration::from_secs(30));
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(widest < 300, "a line of {widest} chars");
    assert!(
        text.contains("[function f2999 1-1]"),
        "the deepest is shown: {text}"
    );
    assert!(
        text.contains("[… ")
            && text.contains(" definitions not shown, lines 1-1; read them with ws_read"),
        "{text}"
    );
}

#[test]
fn a_one_line_file_of_tiny_functions_is_outlined_and_indexed_in_seconds() {
    // Every definition's signature was cut from its line by scanning the whole line.
    let mut js = String::new();
    let mut i = 0;
    while js.len() < 1_000_000 {
        js.push_str(&format!("function f{i}(){{}}"));
        i += 1;
    }
    let (_dir, mut ws) = workspace(&[("min.js", &js)]);
    let started = Instant::now();
    let (err, text) = call(&mut ws, "ws_outline", json!({"path": "min.js"}));
    assert!(!err, "{text}");
    assert!(
        text.starts_with(&format!("min.js (javascript, 1 lines, {i} symbols)")),
        "{text}"
    );
    let (err, found) = call(&mut ws, "ws_symbols", json!({"query": "f12345"}));
    assert!(!err, "{found}");
    assert!(
        found.starts_with("min.js:1 function function f0(){}"),
        "{found}"
    );
    let took = started.elapsed();
    assert!(took < Duration::from_secs(30), "took {took:?}");
}

#[test]
fn a_query_of_eighty_thousand_characters_is_refused_at_once() {
    // 22 s before: the query was lowered and squashed again for every definition.
    let files: Vec<(String, String)> = (0..200)
        .map(|k| {
            let defs: String = (0..50)
                .map(|j| format!("def handler_{k}_{j}(x):\n    return x\n\n"))
                .collect();
            (format!("src/m{k}.py"), defs)
        })
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let (_dir, mut ws) = workspace(&refs);
    let (err, warm) = call(&mut ws, "ws_symbols", json!({"query": "handler_3_4"}));
    assert!(!err && warm.starts_with("src/m3.py:"), "{warm}");
    let started = Instant::now();
    let (err, text) = call(&mut ws, "ws_symbols", json!({"query": "a".repeat(80_000)}));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(err, "{text}");
    assert_eq!(
        text,
        format!(
            "query is 80000 characters long; a name is at most 256. Send one name, e.g. {{\"query\":\"parse_config\"}}; to find a piece of text, use ws_grep {{\"pattern\":\"{}\"}}.",
            "a".repeat(40)
        )
    );
    // A long name that is still a name is searched, and a slip in it still found.
    let (err, text) = call(&mut ws, "ws_symbols", json!({"query": "hnadler_3_4"}));
    assert!(!err && text.contains("src/m3.py:"), "{text}");
}

#[test]
fn a_file_dated_in_the_future_is_parsed_once_and_again_only_when_it_changes() {
    let (dir, _ws) = workspace(&[
        ("src/a.rs", "pub fn one() {}\n"),
        ("src/b.rs", "pub fn two() {}\n"),
    ]);
    let future = SystemTime::now() + Duration::from_secs(3600 * 24 * 365 * 50);
    let old = SystemTime::now() - Duration::from_secs(3600);
    let stamp = |name: &str, when: SystemTime| {
        fs::File::options()
            .write(true)
            .open(dir.path().join(name))
            .unwrap()
            .set_modified(when)
            .unwrap();
    };
    stamp("src/a.rs", future);
    stamp("src/b.rs", old);
    let jail = slmcode_aci::path::Jail::open(dir.path()).unwrap();
    let control = CallControl::default();
    let mut index = SymbolIndex::default();
    assert_eq!(index.refresh(&jail, &control).parsed, 2);
    // A future mtime can never be proven older than the index: it used to mean a parse per call.
    for _ in 0..3 {
        assert_eq!(index.refresh(&jail, &control).parsed, 0);
    }
    // Its bytes are still watched: the same size, the same (future) mtime, other bytes.
    fs::write(dir.path().join("src/a.rs"), "pub fn uno() {}\n").unwrap();
    stamp("src/a.rs", future);
    assert_eq!(index.refresh(&jail, &control).parsed, 1);
    assert_eq!(index.file("src/a.rs").unwrap().definitions[0].name, "uno");
    // And in a later session, from the index on disk.
    assert_eq!(SymbolIndex::default().refresh(&jail, &control).parsed, 0);
}

/// The guard's limits are meant never to refuse real code: every source file under 1 MiB of
/// this repository, of the Python standard library and of the crates cargo downloaded (tens
/// of thousands of files: Rust, C, C++, JavaScript, TypeScript, Go, Python, JSON, TOML, YAML,
/// shell) is admitted. Generated monsters are what it is for.
#[test]
fn the_guard_admits_real_code() {
    use slmcode_aci::lang;
    use slmcode_aci::syntax::guard;

    let mut roots = vec![std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")];
    for python in [
        "/usr/lib/python3",
        "/usr/lib/python3.11",
        "/usr/lib/python3.12",
        "/usr/lib/python3.13",
    ] {
        roots.push(python.into());
    }
    if let Some(home) = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cargo")))
    {
        roots.push(home.join("registry/src"));
    }
    let mut seen = 0usize;
    let mut refused = Vec::new();
    let mut stack: Vec<std::path::PathBuf> = roots.into_iter().filter(|r| r.is_dir()).collect();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                let name = entry.file_name();
                if name != "target" && name != ".git" && name != "node_modules" {
                    stack.push(path);
                }
                continue;
            }
            let name = path.to_string_lossy();
            let Some(grammar) = lang::grammar_for(&name) else {
                continue;
            };
            let Ok(meta) = entry.metadata() else { continue };
            if !kind.is_file() || meta.len() > 1024 * 1024 {
                continue;
            }
            let Ok(text) = fs::read_to_string(&path) else {
                continue;
            };
            seen += 1;
            if let Err(skip) = guard::admit(grammar, &text) {
                refused.push(format!("{name}: {}", skip.why()));
            }
        }
    }
    println!("{seen} files, {} refused", refused.len());
    assert!(seen > 100, "too few files to say anything ({seen})");
    assert!(
        refused.is_empty(),
        "{} of {seen} refused:\n{}",
        refused.len(),
        refused.join("\n")
    );
}

/// When the parser process cannot start (here: the program named is not slmcode, and takes
/// two seconds to end without a word), parsing stays in process behind the guard, and the
/// start is not tried again for every file (40 files would take 80 s).
#[test]
fn a_parser_process_that_cannot_start_leaves_parsing_in_process() {
    use std::os::unix::fs::PermissionsExt;
    let bin = tempfile::tempdir().unwrap();
    let impostor = bin.path().join("not-slmcode");
    fs::write(&impostor, "#!/bin/sh\nsleep 2\n").unwrap();
    fs::set_permissions(&impostor, fs::Permissions::from_mode(0o755)).unwrap();
    slmcode_aci::syntax::process::isolate(impostor);
    assert!(slmcode_aci::syntax::process::is_isolated());
    let files: Vec<(String, String)> = (0..40)
        .map(|i| (format!("m{i}.py"), format!("def f{i}():\n    return {i}\n")))
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let (_dir, mut ws) = workspace(&refs);
    let started = Instant::now();
    let (err, text) = call(&mut ws, "ws_symbols", json!({"query": "f39"}));
    assert!(
        !err && text.starts_with("m39.py:1 function def f39():"),
        "{text}"
    );
    let (err, text) = call(&mut ws, "ws_outline", json!({"path": "m7.py"}));
    assert!(!err && text.contains("[function f7 1-2]"), "{text}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}
