//! ws_edit's worst case: a 50,000-line file and an old_str that misses every rung of the
//! ladder, so every strategy scans the whole file and the closest-region search runs too.
//! The target is under 50 ms per call.

// A benchmark may panic on a broken setup, as a test does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use slmcode_aci::{Config, Registry, Workspace};

/// A Rust-like file: many small functions whose lines repeat often (`}` and common
/// statements), so the line-based rungs see many first-line candidates.
fn big_file(lines: usize) -> String {
    let mut out = String::with_capacity(lines * 32);
    let mut n = 0;
    while n * 9 < lines {
        out.push_str(&format!(
            "fn handler_{n}(ctx: &mut Context) -> Result<()> {{\n    let value = ctx.get({n})?;\n    if value > {n} {{\n        ctx.set(value - 1);\n    }}\n\n    Ok(())\n}}\n\n"
        ));
        n += 1;
    }
    out
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = big_file(50_000);
    assert!(file.lines().count() >= 50_000);
    std::fs::write(dir.path().join("big.rs"), &file).expect("write");
    let mut ws = Workspace::open(dir.path(), Config::default()).expect("workspace");
    let registry = Registry::coding();
    let read = registry.call(&mut ws, "ws_read", &json!({"path": "big.rs", "limit": 1}));
    assert!(!read.is_error);
    // Starts like many spans of the file (a `}` line, then common statements) but matches
    // none on any rung: the anchors are trivial or absent, the middle differs.
    let old = "    }\n\n    Ok(())\n}\n\nfn handler_missing(ctx: &mut Context) -> Result<()> {\n    let value = ctx.get(-1)?;\n";
    let args = json!({"path": "big.rs", "old_str": old, "new_str": "x"});
    let miss = registry.call(&mut ws, "ws_edit", &args);
    assert!(
        miss.is_error && miss.text.contains("not found"),
        "{}",
        miss.text
    );
    c.bench_function("ws_edit miss on 50,000 lines", |b| {
        b.iter(|| registry.call(&mut ws, "ws_edit", &args))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
