//! What the grammars take: per language, the time tree-sitter needs (and whether it survives)
//! for input nested N levels deep and for one line N bytes long, and what reading the tree into
//! an outline costs beside it. The syntax guard's limits (`syntax::guard`) are set from these
//! numbers: far above what real code does, below where a parse stops being quick or the C
//! library stops being safe.
//!
//! Each case runs in a child process of this bench, so a case that aborts or overflows its
//! stack is reported as such instead of ending the run. Prints one row per case: language,
//! shape, size, seconds to parse, seconds to outline, peak memory, and how it ended.
//!
//! Run: `cargo bench -p slmcode-aci --bench parse_limits` (`PARSE_LIMITS_ONLY=yaml` for one
//! language, `PARSE_LIMITS_MAX=N` to stop the series at N).

// A benchmark may panic on a broken setup, as a test does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use slmcode_aci::path::RelPath;
use slmcode_aci::symbols;
use slmcode_aci::syntax;

/// (file name, shape, text of size n).
type Shape = (&'static str, &'static str, fn(usize) -> String);

fn nest(open: &str, mid: &str, close: &str, n: usize) -> String {
    format!("{}{}{}", open.repeat(n), mid, close.repeat(n))
}

fn indent(line: &str, body: &str, n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        s.push_str(&" ".repeat(i));
        s.push_str(line);
        s.push('\n');
    }
    s.push_str(&" ".repeat(n));
    s.push_str(body);
    s.push('\n');
    s
}

fn line_of(unit: &str, n: usize) -> String {
    let mut s = unit.repeat(n / unit.len().max(1) + 1);
    s.truncate(n);
    while !s.is_char_boundary(s.len()) {
        s.pop();
    }
    // Whole units only, so the line stays valid code.
    let cut = s.len() - s.len() % unit.len();
    s.truncate(cut);
    s.push('\n');
    s
}

const SHAPES: &[Shape] = &[
    ("a.rs", "blocks", |n| {
        format!("fn f() {}\n", nest("{", "", "}", n))
    }),
    ("a.rs", "parens", |n| {
        format!("const A: u8 = {};\n", nest("(", "1", ")", n))
    }),
    ("a.rs", "modules", |n| nest("mod m {", "", "}", n)),
    ("a.rs", "line", |n| line_of("const A: u8 = 1;", n)),
    ("a.py", "blocks", |n| indent("if x:", "pass", n)),
    ("a.py", "blocks+fstring", |n| {
        indent("if x:", "y = f\"\"\"{x}\"\"\"", n)
    }),
    ("a.py", "parens", |n| {
        format!("x = {}\n", nest("(", "1", ")", n))
    }),
    ("a.py", "classes", |n| indent("class C:", "pass", n)),
    ("a.py", "line", |n| line_of("x = 1; ", n)),
    ("a.go", "blocks", |n| {
        format!("package p\nfunc f() {}\n", nest("{", "", "}", n))
    }),
    ("a.go", "line", |n| {
        format!("package p\n{}", line_of("var a = 1;", n))
    }),
    ("a.js", "parens", |n| {
        format!("x = {};\n", nest("(", "1", ")", n))
    }),
    ("a.js", "functions", |n| nest("function f(){", "", "}", n)),
    ("a.js", "line", |n| line_of("function f(){return 1}", n)),
    ("a.ts", "blocks", |n| nest("{", "", "}", n)),
    ("a.ts", "line", |n| line_of("let a: number = 1;", n)),
    ("a.tsx", "elements", |n| {
        format!("x = {};\n", nest("<a>", "", "</a>", n))
    }),
    ("a.json", "arrays", |n| nest("[", "", "]", n)),
    ("a.json", "line", |n| {
        format!("[{}0]\n", line_of("1,", n).trim_end())
    }),
    ("a.toml", "arrays", |n| {
        format!("a = {}\n", nest("[", "", "]", n))
    }),
    ("a.toml", "line", |n| {
        format!("a = [{}0]\n", line_of("1,", n).trim_end())
    }),
    ("a.yaml", "mappings", |n| indent("k:", "v", n)),
    ("a.yaml", "sequences", |n| format!("{}x\n", "- ".repeat(n))),
    ("a.yaml", "flow", |n| nest("[", "", "]", n)),
    ("a.yaml", "line", |n| {
        format!("a: [{}0]\n", line_of("1, ", n).trim_end())
    }),
    ("a.c", "blocks", |n| {
        format!("int f() {}\n", nest("{", "", "}", n))
    }),
    ("a.c", "line", |n| line_of("int a = 1;", n)),
    ("a.cpp", "blocks", |n| {
        format!("int f() {}\n", nest("{", "", "}", n))
    }),
    ("a.cpp", "line", |n| line_of("int a = 1;", n)),
    ("A.java", "classes", |n| nest("class C {", "", "}", n)),
    ("A.java", "line", |n| {
        format!("class A {{ {} }}\n", line_of("int a = 1;", n).trim_end())
    }),
    ("a.sh", "groups", |n| {
        format!("{}:\n", "{ ".repeat(n)) + &" }".repeat(n) + "\n"
    }),
    ("a.sh", "substitutions", |n| {
        format!("echo {}\n", nest("$(", "x", ")", n))
    }),
    ("a.sh", "line", |n| line_of("a=1; ", n)),
];

const DEPTHS: &[usize] = &[100, 250, 1_000, 10_000, 100_000];
const LINES: &[usize] = &[10_000, 100_000, 1_000_000, 4_000_000];

/// One case, in this process: prints `parse_secs outline_secs peak_kib verdict`.
fn one(file: &str, shape: &str, n: usize) {
    let (_, _, make) = SHAPES
        .iter()
        .find(|(f, s, _)| *f == file && *s == shape)
        .expect("a known shape");
    let text = make(n);
    let path = RelPath::parse(file, Path::new("/p")).unwrap();
    let t = Instant::now();
    let verdict = syntax::check(&path, text.as_bytes());
    let parse = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let outline = symbols::extract(&path, text.as_bytes());
    let defs = match outline {
        Ok(o) => o.definitions.len().to_string(),
        Err(e) => format!("{e:?}").chars().take(40).collect(),
    };
    let extract = t.elapsed().as_secs_f64();
    let verdict = match verdict {
        syntax::Verdict::Parses => "parses".to_string(),
        syntax::Verdict::Broken(e) => format!("broken at {}:{}", e.line, e.column),
        syntax::Verdict::Skipped(skip) => format!("skipped: {}", skip.why()),
        other => format!("{other:?}").chars().take(60).collect(),
    };
    println!(
        "{parse:.3} {extract:.3} {} {verdict}, {defs} defs",
        peak_kib()
    );
}

fn peak_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--case") {
        one(&args[i + 1], &args[i + 2], args[i + 3].parse().unwrap());
        return;
    }
    let only = std::env::var("PARSE_LIMITS_ONLY").ok();
    let max: usize = std::env::var("PARSE_LIMITS_MAX")
        .ok()
        .and_then(|m| m.parse().ok())
        .unwrap_or(usize::MAX);
    let timeout = Duration::from_secs(120);
    println!(
        "{:<8} {:<15} {:>9} {:>8} {:>8} {:>9}  outcome",
        "language", "shape", "n", "parse s", "outline s", "peak MiB"
    );
    for (file, shape, _) in SHAPES {
        let lang = file.rsplit('.').next().unwrap();
        if only.as_deref().is_some_and(|o| o != lang) {
            continue;
        }
        let series = if *shape == "line" { LINES } else { DEPTHS };
        for &n in series.iter().filter(|&&n| n <= max) {
            let mut child = Command::new(&args[0])
                .args(["--case", file, shape, &n.to_string()])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let started = Instant::now();
            let status = loop {
                if let Some(s) = child.try_wait().unwrap() {
                    break Some(s);
                }
                if started.elapsed() > timeout {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                std::thread::sleep(Duration::from_millis(20));
            };
            let out = child.wait_with_output().unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let row = match status {
                None => format!(
                    "{:>8} {:>8} {:>9}  stopped after {}s",
                    "-",
                    "-",
                    "-",
                    timeout.as_secs()
                ),
                Some(s) if s.success() => {
                    let mut f = stdout.trim().splitn(4, ' ');
                    let (p, o, k, rest) = (
                        f.next().unwrap_or(""),
                        f.next().unwrap_or(""),
                        f.next().unwrap_or("0"),
                        f.next().unwrap_or(""),
                    );
                    let mib = k.parse::<u64>().unwrap_or(0) / 1024;
                    format!("{p:>8} {o:>8} {mib:>9}  {rest}")
                }
                Some(s) => {
                    let why = stderr
                        .lines()
                        .find(|l| l.contains("Assertion") || l.contains("overflow"))
                        .unwrap_or("")
                        .chars()
                        .take(70)
                        .collect::<String>();
                    format!("{:>8} {:>8} {:>9}  CRASHED ({s}) {why}", "-", "-", "-")
                }
            };
            println!("{lang:<8} {shape:<15} {n:>9} {row}");
        }
    }
}
