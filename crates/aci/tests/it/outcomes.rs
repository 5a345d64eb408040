//! The typed outcome beside each result, through the real registry: every refusal class a
//! caller can branch on, and what an edit, a patch and a write report as data. The bandit, the
//! trajectory and MCP read these fields instead of the words, so each one is pinned here.

use serde_json::{json, Value};
use slmcode_aci::{Config, Registry, Workspace};

struct Project {
    dir: tempfile::TempDir,
    ws: Workspace,
    registry: Registry,
}

impl Project {
    fn new(files: &[(&str, &str)]) -> Project {
        Project::with_config(files, Config::default())
    }

    fn with_config(files: &[(&str, &str)], config: Config) -> Project {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let ws = Workspace::open(dir.path(), config).unwrap();
        Project {
            dir,
            ws,
            registry: Registry::coding(),
        }
    }

    /// The call's outcome as JSON (what MCP's structuredContent and the trajectory carry).
    fn outcome(&mut self, tool: &str, args: Value) -> Value {
        let r = self.registry.call(&mut self.ws, tool, &args);
        let outcome = serde_json::to_value(&r.outcome).unwrap();
        // A refusal is an error result, and only a refusal is.
        assert_eq!(
            r.is_error,
            outcome["outcome"] == "refused",
            "{tool} {args}: {}\n{outcome}",
            r.text
        );
        outcome
    }

    fn read(&mut self, path: &str) {
        let r = self
            .registry
            .call(&mut self.ws, "ws_read", &json!({ "path": path }));
        assert!(!r.is_error, "{}", r.text);
    }
}

fn refused(class: &str) -> Value {
    json!({"outcome": "refused", "class": class})
}

const PY: &str = "def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n";

#[test]
fn each_refusal_carries_its_class() {
    let mut p = Project::new(&[("a.py", PY), ("twice.txt", "x = 1\ny\nx = 1\n")]);
    let edit = |old: &str, new: &str| json!({"path": "a.py", "old_str": old, "new_str": new});
    assert_eq!(
        p.outcome("ws_edit", edit("s = 0", "s = 1")),
        refused("not_read")
    );
    p.read("a.py");
    std::fs::write(p.dir.path().join("a.py"), PY.replace("s = 0", "s = 00")).unwrap();
    assert_eq!(
        p.outcome("ws_edit", edit("s = 00", "s = 1")),
        refused("stale")
    );
    p.read("a.py");
    assert_eq!(
        p.outcome("ws_edit", edit("no such line", "x")),
        refused("not_found")
    );
    p.read("twice.txt");
    assert_eq!(
        p.outcome(
            "ws_edit",
            json!({"path": "twice.txt", "old_str": "x = 1", "new_str": "x = 2"})
        ),
        json!({"outcome": "refused", "class": "ambiguous", "count": 2})
    );
    assert_eq!(
        p.outcome("ws_edit", edit("    s = 00", "    s = (")),
        refused("reverted")
    );
    assert_eq!(
        p.outcome("ws_edit", json!({"path": "a.py", "old_str": "s"})),
        refused("args")
    );
    assert_eq!(
        p.outcome("ws_read", json!({"path": "../outside.txt"})),
        refused("jail")
    );
    assert_eq!(
        p.outcome(
            "ws_write",
            json!({"path": ".slmcode/hooks.json", "content": "{}"})
        ),
        refused("boundary")
    );
    assert_eq!(
        p.outcome("ws_read", json!({"path": "missing.txt"})),
        refused("not_found")
    );
    assert_eq!(
        p.outcome("ws_frobnicate", json!({})),
        refused("unknown_tool")
    );
}

#[test]
fn guards_and_placeholders_are_their_own_classes() {
    let big: String = (0..60).map(|i| format!("line number {i}\n")).collect();
    let body: String = (0..20)
        .map(|i| format!("    value_{i} = compute({i})\n"))
        .collect();
    let module = format!("def build():\n{body}    return 1\n");
    let mut p = Project::new(&[("big.txt", &big), ("m.py", &module)]);
    p.read("big.txt");
    let most: String = big.lines().take(55).map(|l| format!("{l}\n")).collect();
    assert_eq!(
        p.outcome(
            "ws_edit",
            json!({"path": "big.txt", "old_str": most, "new_str": "short\n"})
        ),
        refused("over_edit")
    );
    assert_eq!(
        p.outcome("ws_write", json!({"path": "big.txt", "content": "tiny\n"})),
        refused("shrink")
    );
    p.read("m.py");
    let placeholder = json!({
        "path": "m.py",
        "old_str": module.trim_end(),
        "new_str": "def build():\n    # ... existing code ...\n    return 2",
    });
    let config = Config {
        over_edit_guard: false,
        ..Config::default()
    };
    let mut q = Project::with_config(&[("m.py", &module)], config);
    q.read("m.py");
    assert_eq!(q.outcome("ws_edit", placeholder), refused("placeholder"));
}

#[test]
fn edits_report_their_rung_and_writes_their_creation() {
    let mut p = Project::new(&[("a.py", PY)]);
    p.read("a.py");
    // Dedented old_str: lands on the indentation rung.
    assert_eq!(
        p.outcome(
            "ws_edit",
            json!({"path": "a.py", "old_str": "for x in xs:\n    s += x", "new_str": "for x in xs:\n    s += 2 * x"})
        ),
        json!({"outcome": "edited", "rung": "indentation", "gutter": false, "hunks": [], "applied": "written"})
    );
    // A pasted gutter is stripped, and says so as data.
    assert_eq!(
        p.outcome(
            "ws_edit",
            json!({"path": "a.py", "old_str": "     2|    s = 0", "new_str": "     2|    s = 1"})
        )["gutter"],
        json!(true)
    );
    assert_eq!(
        p.outcome("ws_write", json!({"path": "new.py", "content": "x = 1\n"})),
        json!({"outcome": "written", "created": true, "changed": true, "applied": "written"})
    );
    // The same change again is the loop guard's.
    assert_eq!(
        p.outcome("ws_write", json!({"path": "new.py", "content": "x = 1\n"})),
        refused("loop")
    );
    p.read("a.py");
    let now = std::fs::read_to_string(p.dir.path().join("a.py")).unwrap();
    assert_eq!(
        p.outcome("ws_write", json!({"path": "a.py", "content": now})),
        json!({"outcome": "written", "created": false, "changed": false, "applied": "written"})
    );
    assert_eq!(
        p.outcome("ws_read", json!({"path": "a.py"})),
        json!({"outcome": "done"})
    );
}

#[test]
fn a_patch_reports_each_hunk_with_its_rung_and_offset() {
    let lines: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    let mut p = Project::new(&[("f.txt", &lines)]);
    p.read("f.txt");
    // The first hunk's numbers are 3 lines off; the second's are right.
    let patch = "--- a/f.txt\n+++ b/f.txt\n@@ -2,3 +2,3 @@\n line 5\n-line 6\n+line six\n line 7\n@@ -30,3 +30,3 @@\n line 30\n-line 31\n+line thirty-one\n line 32\n";
    let out = p.outcome("ws_patch", json!({"path": "f.txt", "patch": patch}));
    assert_eq!(out["outcome"], "edited");
    assert_eq!(out["rung"], "exact");
    assert_eq!(
        out["hunks"],
        json!([
            {"rung": "exact", "first_line": 5, "last_line": 7, "offset": 3},
            {"rung": "exact", "first_line": 30, "last_line": 32, "offset": 0}
        ])
    );
    // A hunk whose context is nowhere: the refusal is the hunk's class.
    p.read("f.txt");
    let missing = "@@ -1,2 +1,2 @@\n no such line\n-nor this\n+x\n";
    assert_eq!(
        p.outcome("ws_patch", json!({"path": "f.txt", "patch": missing})),
        refused("not_found")
    );
}
