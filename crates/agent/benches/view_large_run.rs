//! A long run for `slmcode view` to open: writes a realistic trajectory of `VIEW_TURNS` turns
//! (default 2,000) into a project's `.slmcode/runs/`, through the real writer, so each line is
//! sealed with the user's key (`XDG_DATA_HOME`) and chained exactly as `slmcode run` writes
//! it. Each turn has the records the agent loop writes: a request, a reply (with reasoning
//! every third turn), one tool call (`ws_edit` on even turns, every seventh of them refused
//! as stale; `ws_read` on odd ones) and, after an edit that landed, its diff; every 100th turn
//! a compaction and a note, every 150th a steer; then the final answer.
//!
//! Usage: `cargo bench -p slmcode-agent --bench view_large_run -- PROJECT_DIR`; prints the run
//! id, alone, on stdout. `bench/view.sh` times the pages of that run.

// A benchmark may panic on a broken setup, as a test does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::error::Error;
use std::path::PathBuf;

use serde_json::{json, Value};
use slmcode_aci::path::Jail;
use slmcode_agent::trajectory::Trajectory;

/// A few lines of prose, as a model's reply says what it does next.
fn content(n: usize) -> String {
    let file = n % 40;
    format!(
        "Turn {n}: I read src/mod{file}.rs and the function that parses the header is the one to change.\n\
         The length is read before the magic number is checked, so a short file panics on the slice.\n\
         I will check the magic first, then read the length, and keep the error type the callers match on.\n\
         After that I run the tests of mod{file} to see that nothing else depends on the old order."
    )
}

/// A paragraph of reasoning (every third turn).
fn reasoning(n: usize) -> String {
    if !n.is_multiple_of(3) {
        return String::new();
    }
    format!(
        "The failing test at turn {n} feeds a four-byte file. parse_header slices bytes[4..8] before \
         it compares bytes[0..4] with MAGIC, so the slice panics instead of returning \
         Error::Truncated. Moving the comparison up is the smallest change; the callers in \
         src/mod{}.rs already handle Truncated, and the fuzz corpus has a case for it. I should not \
         touch the writer: its tests pass, and the task says the format must stay as it is.",
        (n + 1) % 40
    )
}

/// A 20-line tool result, as ws_read shows a file (numbered lines) or ws_edit its context.
fn result(n: usize, path: &str) -> String {
    let mut text = format!("{path} (lines 1-20 of 184)\n");
    for line in 1..=20 {
        let code = match line % 5 {
            0 => format!("    let len = u32::from_le_bytes(bytes[4..8].try_into()?); // {n}"),
            1 => "    if bytes.len() < HEADER_LEN {".to_string(),
            2 => "        return Err(Error::Truncated { need: HEADER_LEN, got: bytes.len() });"
                .to_string(),
            3 => "    }".to_string(),
            _ => format!("    let field_{line} = reader.read_u16()?;"),
        };
        text.push_str(&format!("{line:>4}\t{code}\n"));
    }
    text
}

/// A ~15-line unified diff of one hunk: 3 lines added, 2 removed.
fn diff(n: usize, path: &str) -> String {
    format!(
        "--- a/{path}\n+++ b/{path}\n@@ -10,6 +10,7 @@\n\
         \x20pub fn parse_header(bytes: &[u8]) -> Result<Header, Error> {{\n\
         \x20    if bytes.len() < HEADER_LEN {{\n\
         \x20        return Err(Error::Truncated {{ need: HEADER_LEN, got: bytes.len() }});\n\
         \x20    }}\n\
         -    let len = u32::from_le_bytes(bytes[4..8].try_into()?);\n\
         -    check_magic(&bytes[0..4])?;\n\
         +    // Turn {n}: the magic first, so a foreign file is named as one.\n\
         +    check_magic(&bytes[0..4])?;\n\
         +    let len = u32::from_le_bytes(bytes[4..8].try_into()?);\n\
         \x20    let flags = bytes[8];\n\
         \x20    Ok(Header {{ len, flags }})\n\
         \x20}}\n"
    )
}

/// The records of turn `n`, in the order the agent loop writes them.
fn turn(n: usize) -> Vec<(&'static str, Value)> {
    let path = format!("src/mod{}.rs", n % 40);
    let tokens = 1500 + 40 * n;
    let mut records = vec![
        (
            "request",
            json!({"turn": n, "last_message": "user", "messages": 2 * n + 1,
                   "estimated_prompt_tokens": tokens, "expected_prompt_tokens": tokens,
                   "max_tokens": 4096}),
        ),
        (
            "reply",
            json!({"turn": n, "content": content(n), "reasoning": reasoning(n),
                   "tool_calls": [], "finish_reason": "stop",
                   "usage": {"prompt_tokens": tokens, "completion_tokens": 60 + n % 50,
                             "cached_tokens": 1400 + 40 * n},
                   "elapsed_ms": 2000 + (n % 7) * 100}),
        ),
    ];
    let edited = if n.is_multiple_of(2) {
        let refused = (n / 2).is_multiple_of(7);
        let outcome = if refused {
            json!({"outcome": "refused", "class": "stale"})
        } else {
            let rung = if (n / 2).is_multiple_of(5) {
                "indentation"
            } else {
                "exact"
            };
            json!({"outcome": "edited", "rung": rung, "gutter": false, "hunks": [],
                   "applied": "written"})
        };
        records.push((
            "tool",
            json!({"turn": n, "name": "ws_edit",
                   "args": {"path": path,
                            "old": "    let len = u32::from_le_bytes(bytes[4..8].try_into()?);\n    check_magic(&bytes[0..4])?;\n",
                            "new": "    check_magic(&bytes[0..4])?;\n    let len = u32::from_le_bytes(bytes[4..8].try_into()?);\n"},
                   "result": if refused {
                       format!("{path} changed on disk since you read it: read it again (ws_read) and redo the edit\n{}", result(n, &path))
                   } else {
                       result(n, &path)
                   },
                   "is_error": refused, "edit_outcome": null, "outcome": outcome}),
        ));
        !refused
    } else {
        records.push((
            "tool",
            json!({"turn": n, "name": "ws_read",
                   "args": {"path": path, "offset": 1, "limit": 20},
                   "result": result(n, &path), "is_error": false, "edit_outcome": null,
                   "outcome": {"outcome": "done"}}),
        ));
        false
    };
    if edited {
        records.push((
            "file_changed",
            json!({"path": path, "added": 3, "removed": 2, "diff": diff(n, &path)}),
        ));
    }
    if n.is_multiple_of(100) {
        records.push(("compacted", json!({"before": 30000, "after": 12000})));
        records.push((
            "note",
            json!({"text": format!("turn {n}: the history was compacted from 30000 to 12000 tokens; the last 8 turns are kept as they were")}),
        ));
    }
    if n.is_multiple_of(150) {
        records.push((
            "steer",
            json!({"text": "You have 5 turns left: finish the edit you are on, run the tests, then give the final answer."}),
        ));
    }
    records
}

fn main() -> Result<(), Box<dyn Error>> {
    // Cargo passes its own flags (`--bench`) before ours: the first argument that is not one
    // is the project directory.
    let dir: PathBuf = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .ok_or("usage: view_large_run PROJECT_DIR (VIEW_TURNS=N, default 2000)")?
        .into();
    let turns: usize = match std::env::var("VIEW_TURNS") {
        Ok(v) => v.parse().map_err(|e| format!("VIEW_TURNS={v}: {e}"))?,
        Err(_) => 2000,
    };

    // The key the slmcode binary uses (under XDG_DATA_HOME), so `slmcode view` trusts the run.
    slmcode_aci::seal::use_user_key();
    let jail = Jail::open(&dir).map_err(|e| format!("cannot open {}: {e}", dir.display()))?;
    let t = Trajectory::create();
    t.record(
        &jail,
        "start",
        json!({"task": "Make parse_header check the magic number before it reads the length, so a truncated or foreign file is an error, not a panic; keep the public API.",
               "model": "qwen2.5-coder:7b", "endpoint": "http://127.0.0.1:11434/v1"}),
    )?;
    for n in 1..=turns {
        for (kind, fields) in turn(n) {
            t.record(&jail, kind, fields)?;
        }
    }
    t.record(
        &jail,
        "final",
        json!({"answer": {"status": "done",
                          "summary": "parse_header checks the magic number before it reads the length; a truncated file is Error::Truncated.",
                          "files_changed": ["src/mod1.rs"], "notes": "", "verified": true},
               "turns": turns, "elapsed_ms": 4_000_000}),
    )?;
    println!("{}", t.id);
    Ok(())
}
