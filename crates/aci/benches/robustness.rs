//! Robustness of the edit tools under model drift.
//!
//! Takes real source files from this machine (this repository's Rust, the installed Python
//! stdlib, npm's own JavaScript, Go if installed — or `ROBUSTNESS_DIRS=dir1:dir2`), picks a
//! unique span of 3–8 lines, makes an intended edit, and sends ws_edit / ws_patch what a
//! drifting small model would send. Each case runs in a fresh temporary workspace (ws_read,
//! then the edit) and is classified:
//!
//! - landed: no error, and the file is byte-for-byte the intended result;
//! - refused: an error, and the file is byte-for-byte unchanged;
//! - WRONG: anything else.
//!
//! Prints one row per (tool, drift kind) and exits non-zero if any case is WRONG, or if a
//! recoverable kind (one whose intent the call still carries; see `Drift::recoverable`) lands
//! less than 97% of its cases. For the others a refusal is the right answer.
//!
//! Environment: `ROBUSTNESS_CASES` (cases per drift kind, default 48), `ROBUSTNESS_SEED`,
//! `ROBUSTNESS_DIRS`, `ROBUSTNESS_SHOW=refused|landed|all` (print those cases too),
//! `ROBUSTNESS_FULL=1` (print whole calls), `ROBUSTNESS_SYNTAX=1` (run with the syntax check).
//!
//! Run: `cargo bench -p slmcode-aci --bench robustness`

// A benchmark may panic on a broken setup, as a test does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::time::Instant;

use serde_json::json;
use slmcode_aci::{Config, Registry, Workspace};

#[path = "robustness/cases.rs"]
mod cases;
/// Counted skips, shared with the test binaries: a source set this machine lacks is one.
#[path = "../tests/it/skip.rs"]
mod skip;
#[path = "robustness/sources.rs"]
mod sources;

use cases::{Case, Drift, Tool};

mod rng {
    /// splitmix64: small, fast and deterministic.
    pub struct Rng(u64);

    impl Rng {
        pub fn new(seed: u64) -> Rng {
            Rng(seed)
        }

        pub fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        /// Uniform in 0..n (n > 0).
        pub fn below(&mut self, n: usize) -> usize {
            (self.next_u64() % n as u64) as usize
        }

        /// Uniform in lo..=hi.
        pub fn range(&mut self, lo: usize, hi: usize) -> usize {
            lo + self.below(hi - lo + 1)
        }

        pub fn chance(&mut self, p: f64) -> bool {
            ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
        }

        pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
            &items[self.below(items.len())]
        }
    }

    /// FNV-1a, to derive a per-drift seed from its name.
    pub fn hash(s: &str) -> u64 {
        s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
        })
    }
}

const DEFAULT_SEED: u64 = 0x00C0_FFEE_5EED_2025;
const DEFAULT_CASES: usize = 48;
const MAX_WRONG_SHOWN: usize = 5;
/// The share of its cases a recoverable drift kind must land.
const RECOVERABLE_LANDED: f64 = 0.97;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Landed,
    Refused,
    Wrong,
}

struct Outcome {
    verdict: Verdict,
    /// How it landed (the ladder rung named in the result), or why it was refused.
    how: String,
    result: String,
    after: Vec<u8>,
}

#[derive(Default)]
struct Row {
    cases: usize,
    landed: usize,
    refused: usize,
    wrong: usize,
    via: BTreeMap<String, usize>,
    reasons: BTreeMap<String, usize>,
}

/// The rung a successful result names.
fn rung_of(text: &str) -> &'static str {
    const RUNGS: &[(&[&str], &str)] = &[
        (&["escape-unescaped", "unescaping \\n"], "escapes"),
        (&["unicode-punctuation", "normalizing unicode"], "unicode"),
        (
            &["anchored-first-last-line", "first+last line anchors"],
            "anchored",
        ),
        (
            &["blank-line-insensitive", "ignoring blank lines"],
            "blank-lines",
        ),
        (
            &["indentation-normalized", "normalizing indentation"],
            "indentation",
        ),
        (
            &[
                "trailing-whitespace-insensitive",
                "ignoring trailing whitespace",
            ],
            "trailing-ws",
        ),
    ];
    RUNGS
        .iter()
        .find(|(needles, _)| needles.iter().any(|n| text.contains(n)))
        .map(|(_, label)| *label)
        .unwrap_or("exact")
}

/// A short, file-independent reason for a refusal.
fn reason_of(text: &str) -> String {
    let failed = text
        .lines()
        .find_map(|l| l.split_once("FAILED: ").map(|(_, r)| r.to_string()));
    let head = failed.as_deref().unwrap_or(text);
    let known: &[(&str, &str)] = &[
        ("old_str not found", "not found"),
        ("its context was not found", "context not found"),
        ("Ambiguous edit refused", "ambiguous (ladder rung)"),
        ("its context matches", "ambiguous context"),
        ("found 2 times", "found more than once"),
        ("line-number prefixes", "partial gutter"),
        ("No-op edit", "no-op"),
        ("over-edit guard", "over-edit guard"),
        ("internal error", "INTERNAL ERROR (panic)"),
        ("no change found in the patch", "patch: no change found"),
        ("changes nothing", "patch: hunk changes nothing"),
        ("overlaps a change", "overlapping hunks"),
        (
            "is a placeholder comment",
            "placeholder named, with the lines it stands for",
        ),
    ];
    for (needle, label) in known {
        if head.contains(needle) {
            return label.to_string();
        }
    }
    head.chars().take(60).collect()
}

fn run_case(registry: &Registry, case: &Case) -> Outcome {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(&case.name);
    std::fs::write(&path, &case.original).expect("write case file");
    // The intended edits are mechanical (a rename, a comment line) and some would not parse
    // (renaming a keyword, a comment inside an expression); the syntax check rightly refuses
    // those, which says nothing about drift. It is off unless ROBUSTNESS_SYNTAX=1.
    let config = Config {
        disable_syntax_check: std::env::var_os("ROBUSTNESS_SYNTAX").is_none(),
        ..Config::default()
    };
    let mut ws = Workspace::open(dir.path(), config).expect("open workspace");
    let read = registry.call(
        &mut ws,
        "ws_read",
        &json!({"path": case.name, "offset": case.read.0, "limit": case.read.1}),
    );
    assert!(!read.is_error, "ws_read failed: {}", read.text);
    for g in &case.gutter_lines {
        assert!(
            read.text.lines().any(|l| l == g),
            "bench bug: gutter line {g:?} is not in the ws_read output of {}",
            case.file
        );
    }
    let result = registry.call(&mut ws, case.drift.tool().name(), &case.args);
    let after = std::fs::read(&path).unwrap_or_default();
    let (verdict, how) = if !result.is_error && after == case.expected {
        let mut how = rung_of(&result.text).to_string();
        if result.text.contains("stripped ws_read line numbers") {
            how.push_str("+gutter");
        }
        if result.text.contains("stripped line-number prefixes") {
            how.push_str("+numbers");
        }
        (Verdict::Landed, how)
    } else if result.is_error && after == case.original {
        (Verdict::Refused, reason_of(&result.text))
    } else if result.is_error {
        (Verdict::Wrong, "error, but the file changed".to_string())
    } else if after == case.original {
        (
            Verdict::Wrong,
            "success, but the file is unchanged".to_string(),
        )
    } else {
        (
            Verdict::Wrong,
            format!(
                "success via {}, but the bytes differ",
                rung_of(&result.text)
            ),
        )
    };
    Outcome {
        verdict,
        how,
        result: result.text,
        after,
    }
}

fn clip(s: &str, max: usize) -> String {
    let t: String = s.chars().take(max).collect();
    if t.len() < s.len() {
        format!("{t}…")
    } else {
        t
    }
}

/// Expected vs actual as a short unified diff (lines shown with escapes so whitespace shows).
fn compact_diff(expected: &[u8], actual: &[u8], max_lines: usize) -> String {
    let e = String::from_utf8_lossy(expected);
    let a = String::from_utf8_lossy(actual);
    let diff = similar::TextDiff::from_lines(e.as_ref(), a.as_ref());
    let mut out = Vec::new();
    for group in diff.grouped_ops(1) {
        for op in group {
            for change in diff.iter_changes(&op) {
                let mark = match change.tag() {
                    similar::ChangeTag::Equal => "   ",
                    similar::ChangeTag::Delete => "  -",
                    similar::ChangeTag::Insert => "  +",
                };
                let v = change.value();
                out.push(format!("{mark}{:?}", v.strip_suffix('\n').unwrap_or(v)));
            }
        }
        out.push("   …".to_string());
    }
    if out.len() > max_lines {
        out.truncate(max_lines);
        out.push("   … (diff cut)".into());
    }
    format!("      (- expected, + actual)\n{}", out.join("\n"))
}

fn show_case(case: &Case, o: &Outcome, with_diff: bool) {
    println!(
        "  [{}] {} lines {}..{} ({} lines) — {}",
        case.drift.name(),
        case.file,
        case.first_line,
        case.first_line + case.span_lines - 1,
        case.span_lines,
        o.how
    );
    println!("      intended: {}", case.intent);
    // ROBUSTNESS_FULL=1 prints the whole call instead of a clipped old_str.
    if std::env::var_os("ROBUSTNESS_FULL").is_some() {
        println!("      call: {}", case.args);
    } else {
        println!("      sent: {}", clip(&format!("{:?}", case.sent), 400));
    }
    println!("      result: {}", clip(&format!("{:?}", o.result), 400));
    if with_diff {
        println!("{}", compact_diff(&case.expected, &o.after, 24));
    }
}

fn env_usize(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    v.strip_prefix("0x")
        .map(|h| u64::from_str_radix(h, 16).ok())
        .unwrap_or_else(|| v.parse().ok())
}

fn main() {
    let started = Instant::now();
    let seed = env_usize("ROBUSTNESS_SEED").unwrap_or(DEFAULT_SEED);
    let per_kind = env_usize("ROBUSTNESS_CASES")
        .map(|n| n as usize)
        .unwrap_or(DEFAULT_CASES)
        .max(1);
    let show = std::env::var("ROBUSTNESS_SHOW").unwrap_or_default();

    println!("slmcode edit-tool robustness benchmark (seed {seed:#x}, up to {per_kind} cases per drift kind)");
    println!("sources:");
    let sets = sources::gather();
    for s in &sets {
        match &s.dir {
            Some(d) => println!("  {:<14} {} — {}", s.title, d.display(), s.note),
            None => println!("  {:<14} {}", s.title, s.note),
        }
    }
    let files: Vec<&sources::SourceFile> = sets.iter().flat_map(|s| s.files.iter()).collect();
    if files.is_empty() {
        eprintln!("no source files found; set ROBUSTNESS_DIRS=dir1:dir2");
        std::process::exit(2);
    }
    println!("  {} files in all\n", files.len());

    let registry = Registry::coding();
    let mut rows: Vec<(Drift, Row)> = Vec::new();
    let mut wrong_shown = Vec::new();
    let mut wrong_total = 0usize;
    let mut tabified = 0usize;
    for &drift in cases::ALL {
        let mut rng = rng::Rng::new(seed ^ rng::hash(&format!("{drift:?}")));
        // A seeded shuffle of the files, so every drift kind samples across all sources.
        let mut order: Vec<usize> = (0..files.len()).collect();
        for i in (1..order.len()).rev() {
            let j = rng.below(i + 1);
            order.swap(i, j);
        }
        let mut row = Row::default();
        'passes: for _pass in 0..4 {
            let before = row.cases;
            for &fi in &order {
                if row.cases >= per_kind {
                    break 'passes;
                }
                let file = files[fi];
                let Some(case) = cases::build(drift, file, &mut rng) else {
                    continue;
                };
                if drift == Drift::SpacesForTabs && case.original != file.text.as_bytes() {
                    tabified += 1;
                }
                let o = run_case(&registry, &case);
                row.cases += 1;
                match o.verdict {
                    Verdict::Landed => {
                        row.landed += 1;
                        *row.via.entry(o.how.clone()).or_default() += 1;
                    }
                    Verdict::Refused => {
                        row.refused += 1;
                        *row.reasons.entry(o.how.clone()).or_default() += 1;
                    }
                    Verdict::Wrong => {
                        row.wrong += 1;
                        wrong_total += 1;
                        // The first WRONG case of each drift kind, then the first few others.
                        let first_of_kind = !wrong_shown
                            .iter()
                            .any(|(c, _): &(Case, Outcome)| c.drift == drift);
                        if first_of_kind || wrong_shown.len() < MAX_WRONG_SHOWN {
                            if show == "wrong" || show == "all" {
                                show_case(&case, &o, true);
                            }
                            wrong_shown.push((case, o));
                            continue;
                        }
                    }
                }
                let wanted = match o.verdict {
                    Verdict::Landed => show == "landed" || show == "all",
                    Verdict::Refused => show == "refused" || show == "all",
                    Verdict::Wrong => show == "wrong" || show == "all",
                };
                if wanted {
                    show_case(&case, &o, o.verdict != Verdict::Refused);
                }
            }
            if row.cases == before {
                break;
            }
        }
        rows.push((drift, row));
    }

    // The table.
    let fmt_map = |m: &BTreeMap<String, usize>| {
        let mut v: Vec<(&String, &usize)> = m.iter().collect();
        v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        v.iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "{:<9} {:<30} {:>5} {:>7} {:>8} {:>6} {:>8}  landed via",
        "tool", "drift (· = refusal expected)", "cases", "landed", "refused", "wrong", "landed%"
    );
    println!("{}", "-".repeat(100));
    let mut total = Row::default();
    let mut last_tool = None;
    for (drift, row) in &rows {
        if last_tool.is_some_and(|t: Tool| t != drift.tool()) {
            println!("{}", "-".repeat(100));
        }
        last_tool = Some(drift.tool());
        let pct = if row.cases == 0 {
            "-".to_string()
        } else {
            format!("{:.1}%", 100.0 * row.landed as f64 / row.cases as f64)
        };
        println!(
            "{:<9} {:<30} {:>5} {:>7} {:>8} {:>6} {:>8}  {}",
            drift.tool().name(),
            format!(
                "{}{}",
                if drift.recoverable() { "" } else { "· " },
                drift.name()
            ),
            row.cases,
            row.landed,
            row.refused,
            if row.wrong > 0 {
                format!("{}!", row.wrong)
            } else {
                "0".into()
            },
            pct,
            fmt_map(&row.via)
        );
        total.cases += row.cases;
        total.landed += row.landed;
        total.refused += row.refused;
        total.wrong += row.wrong;
    }
    println!("{}", "-".repeat(100));
    println!(
        "{:<9} {:<30} {:>5} {:>7} {:>8} {:>6} {:>8}",
        "TOTAL",
        "",
        total.cases,
        total.landed,
        total.refused,
        total.wrong,
        format!(
            "{:.1}%",
            100.0 * total.landed as f64 / total.cases.max(1) as f64
        )
    );
    println!(
        "\n* spaces for tabs: {tabified} of its cases use a real file whose leading spaces were turned into tabs (no tab-indented source was found for them)."
    );
    println!(
        "  middle line wrong: one middle line of a 5-8 line old_str has a misremembered identifier; \"old+new\" re-emits that line in new_str too, as a model copying from memory would."
    );
    println!(
        "  smart quotes/dashes, literal \\n escapes, indentation and trailing whitespace drift old_str and new_str alike; blank lines, the gutter and \"old only\" drift old_str only.\n"
    );

    println!("refusals by reason:");
    for (drift, row) in &rows {
        if row.refused > 0 {
            println!(
                "  {:<9} {:<30} {}",
                drift.tool().name(),
                drift.name(),
                fmt_map(&row.reasons)
            );
        }
    }

    if wrong_total > 0 {
        println!(
            "\nWRONG cases: {wrong_total} (the first of each drift kind, at least {MAX_WRONG_SHOWN} in all; ROBUSTNESS_SHOW=wrong prints every one):"
        );
        // One per drift kind first, so every kind of failure is seen.
        let mut picked: Vec<&(Case, Outcome)> = Vec::new();
        for w in &wrong_shown {
            if !picked.iter().any(|p| p.0.drift == w.0.drift) {
                picked.push(w);
            }
        }
        for w in &wrong_shown {
            if picked.len() >= MAX_WRONG_SHOWN {
                break;
            }
            if !picked.iter().any(|p| std::ptr::eq(*p, w)) {
                picked.push(w);
            }
        }
        for (case, o) in picked {
            show_case(case, o, true);
        }
    }
    println!("\nfinished in {:.1}s", started.elapsed().as_secs_f64());
    let short: Vec<String> = rows
        .iter()
        .filter(|(d, r)| {
            d.recoverable()
                && r.cases > 0
                && (r.landed as f64) < RECOVERABLE_LANDED * r.cases as f64
        })
        .map(|(d, r)| {
            format!(
                "{} {} ({} of {})",
                d.tool().name(),
                d.name(),
                r.landed,
                r.cases
            )
        })
        .collect();
    if wrong_total > 0 {
        eprintln!("robustness: {wrong_total} WRONG case(s) — an edit landed with bytes other than intended");
    }
    if !short.is_empty() {
        eprintln!(
            "robustness: recoverable kinds landing under {:.0}%: {}",
            RECOVERABLE_LANDED * 100.0,
            short.join("; ")
        );
    }
    if wrong_total > 0 || !short.is_empty() {
        std::process::exit(1);
    }
}
