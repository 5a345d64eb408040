//! The post-edit syntax check sits inside every write, so it must be cheap. Per language, on
//! a 10,000-line file: the check after a one-line edit as it runs in a session (the file's
//! tree was parsed when it was read, so the check is incremental), and a cold full parse (a
//! file checked without a prior read). The target is under 50 ms.
//!
//! With `SLMCODE_BIN=target/release/slmcode` the same checks go through the parser process
//! started from that binary, as they do in `slmcode` itself (`syntax::process`): the difference
//! is what the isolation costs.

// A benchmark may panic on a broken setup, as a test does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, Criterion};
use slmcode_aci::path::RelPath;
use slmcode_aci::syntax::{check, TreeCache, Verdict};

/// About `lines` lines of plausible source in each language.
fn corpus(ext: &str, lines: usize) -> String {
    let unit = match ext {
        "rs" => "fn handler_N(ctx: &mut Context) -> Result<u32, Error> {\n    let value = ctx.get(N)?;\n    if value > N {\n        return Ok(value - 1);\n    }\n    Ok(value)\n}\n\n",
        "py" => "def handler_N(ctx):\n    value = ctx.get(N)\n    if value > N:\n        return value - 1\n    return value\n\n\n",
        "go" => "func handlerN(ctx *Context) (int, error) {\n\tvalue, err := ctx.Get(N)\n\tif err != nil {\n\t\treturn 0, err\n\t}\n\treturn value, nil\n}\n\n",
        "ts" => "export function handlerN(ctx: Context): number {\n  const value: number = ctx.get(N);\n  if (value > N) {\n    return value - 1;\n  }\n  return value;\n}\n\n",
        _ => "{\"id\": N, \"name\": \"item N\", \"tags\": [\"a\", \"b\"], \"price\": N.5},\n",
    };
    let per = unit.lines().count().max(1);
    let mut out = String::new();
    if ext == "json" {
        out.push_str("[\n");
    }
    for n in 0..lines / per {
        out.push_str(&unit.replace('N', &n.to_string()));
    }
    if ext == "json" {
        out.push_str("{\"id\": -1}\n]\n");
    }
    out
}

fn bench(c: &mut Criterion) {
    if let Some(bin) = std::env::var_os("SLMCODE_BIN") {
        slmcode_aci::syntax::process::isolate(bin.into());
    }
    for ext in ["rs", "py", "go", "ts", "json"] {
        let text = corpus(ext, 10_000);
        let path = RelPath::parse(&format!("big.{ext}"), std::path::Path::new("/p")).expect("path");
        assert_eq!(
            check(&path, text.as_bytes()),
            Verdict::Parses,
            "{ext} corpus must parse"
        );
        c.bench_function(&format!("cold full parse, 10,000 lines of .{ext}"), |b| {
            b.iter(|| check(&path, text.as_bytes()))
        });
        // An edit in the middle: one line changed.
        let mid = text.len() / 2;
        let line_start = text[..mid].rfind('\n').map_or(0, |i| i + 1);
        let mut edited = text.clone();
        edited.insert(line_start, ' ');
        let cache = TreeCache::default();
        // Warm the cache as a ws_read would; then each iteration is one edit of the file as
        // the previous one left it (the session keeps the latest tree of each file).
        let (v, _) = cache.check_change(&path, None, text.as_bytes());
        assert_eq!(v, Verdict::Parses);
        let versions = [text.as_bytes(), edited.as_bytes()];
        let mut turn = 0usize;
        c.bench_function(
            &format!("check after an edit, 10,000 lines of .{ext}"),
            |b| {
                b.iter(|| {
                    let (from, to) = (versions[turn % 2], versions[(turn + 1) % 2]);
                    turn += 1;
                    cache.check_change(&path, Some(from), to)
                })
            },
        );
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
