//! Snapshots of the text a model reads. That text is the interface: a refusal that stops
//! naming the next call, or a report that loses a line number, is a regression even when
//! every file ends up right. Each test drives the real registry on a project in a temp dir
//! and pins one call's complete result text in `tests/it/snapshots/it__messages__<name>.snap`,
//! whose description is the call; the test also checks whether the call was refused.
//!
//! Only what varies per run is normalized: the project's temp path becomes `[project]` and a
//! checkpoint id `[checkpoint]`. After a deliberate change of wording, accept the new text
//! with `INSTA_UPDATE=always cargo test -p slmcode-aci --test it messages::` (or
//! `cargo insta review`, where installed) and read every changed snapshot; with `CI=true`
//! nothing is accepted.

use std::path::PathBuf;

use serde_json::{json, Value};
use slmcode_aci::{Config, Registry, Workspace};

/// A project in a temp dir, with a session on it.
struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
    ws: Workspace,
    registry: Registry,
}

impl Project {
    /// A project holding `files` (path, content).
    fn new(files: &[(&str, &str)]) -> Project {
        let dir = tempfile::tempdir().expect("a temp dir");
        let root = dir.path().canonicalize().expect("a real path");
        for (path, content) in files {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(path, content).expect("write");
        }
        let ws = Workspace::open(&root, Config::default()).expect("a workspace");
        Project {
            _dir: dir,
            root,
            ws,
            registry: Registry::coding(),
        }
    }

    /// ws_read of `path`, which must succeed (the read-before-edit rule).
    fn read(&mut self, path: &str) -> &mut Project {
        let r = self
            .registry
            .call(&mut self.ws, "ws_read", &json!({ "path": path }));
        assert!(!r.is_error, "ws_read {path}: {}", r.text);
        self
    }

    /// Calls `tool`, checks it was refused (or not) as `refused` says, and snapshots the text.
    /// The text is not all that is checked: a refused call must leave every project file as it
    /// was, and a ws_write that landed must read back as its content.
    fn check(&mut self, name: &str, tool: &str, args: Value, refused: bool) {
        let before = files(&self.root);
        let r = self.registry.call(&mut self.ws, tool, &args);
        let text = normalize(&r.text, &self.root);
        assert_eq!(
            r.is_error,
            refused,
            "{name}: {tool} was {}:\n{text}",
            if r.is_error { "refused" } else { "not refused" }
        );
        if refused {
            assert!(
                files(&self.root) == before,
                "{name}: the refused {tool} changed the project"
            );
        } else if tool == "ws_write" {
            let (path, content) = (&args["path"], &args["content"]);
            let written = std::fs::read(self.root.join(path.as_str().unwrap())).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&written),
                content.as_str().unwrap(),
                "{name}: the file does not read back as written"
            );
        }
        let outcome = if refused { "refused" } else { "ok" };
        let mut settings = insta::Settings::clone_current();
        settings.set_description(format!("{tool} {args} → {outcome}"));
        settings.set_omit_expression(true);
        // A ws_shell result ends with the sandbox in force, which differs between Linux's own
        // and the portable fallbacks: each build's text is pinned in a file of its own.
        if tool == "ws_shell"
            && !refused
            && slmcode_aci::platform::Platform::current() != slmcode_aci::platform::Platform::Linux
        {
            settings.set_snapshot_suffix("portable");
        }
        settings.bind(|| insta::assert_snapshot!(name, text));
    }

    fn refused(&mut self, name: &str, tool: &str, args: Value) {
        self.check(name, tool, args, true);
    }

    fn ok(&mut self, name: &str, tool: &str, args: Value) {
        self.check(name, tool, args, false);
    }
}

/// Every file and directory of the project but the harness's own `.slmcode/`, with its bytes.
fn files(root: &std::path::Path) -> std::collections::BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut out = std::collections::BTreeMap::new();
    for entry in walkdir(root) {
        let rel = entry.strip_prefix(root).unwrap().to_path_buf();
        if rel.starts_with(".slmcode") {
            continue;
        }
        out.insert(rel, std::fs::read(&entry).ok());
    }
    out
}

/// Every path under `dir`, depth first, symlinks not followed.
fn walkdir(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            out.extend(walkdir(&path));
        }
        out.push(path);
    }
    out
}

/// The text with what varies per run replaced: the project's path and checkpoint ids.
fn normalize(text: &str, root: &std::path::Path) -> String {
    let text = text.replace(&root.display().to_string(), "[project]");
    let checkpoint = regex::Regex::new(r"\b\d{9,}-\d+-\d+\b").expect("a regex");
    checkpoint.replace_all(&text, "[checkpoint]").into_owned()
}

/// A Python module of about 600 bytes, for the guards that only look at larger files.
const INVENTORY: &str = r#""""Inventory helpers for the warehouse service."""

import logging

log = logging.getLogger(__name__)


class Item:
    def __init__(self, sku, name, quantity=0):
        self.sku = sku
        self.name = name
        self.quantity = quantity

    def restock(self, amount):
        if amount <= 0:
            raise ValueError("amount must be positive")
        self.quantity += amount
        log.info("restocked %s by %d", self.sku, amount)
        return self.quantity

    def take(self, amount):
        if amount > self.quantity:
            raise ValueError("not enough stock")
        self.quantity -= amount
        return self.quantity


def total_quantity(items):
    total = 0
    for item in items:
        total += item.quantity
    return total
"#;

// ---- ws_edit ----

#[test]
fn edit_landed() {
    Project::new(&[("inventory.py", INVENTORY)])
        .read("inventory.py")
        .ok(
            "edit_landed",
            "ws_edit",
            json!({"path": "inventory.py", "old_str": "raise ValueError(\"not enough stock\")", "new_str": "raise ValueError(f\"only {self.quantity} left\")"}),
        );
}

#[test]
fn edit_landed_on_the_indentation_rung() {
    Project::new(&[("inventory.py", INVENTORY)])
        .read("inventory.py")
        .ok(
            "edit_landed_on_the_indentation_rung",
            "ws_edit",
            json!({"path": "inventory.py", "old_str": "def take(self, amount):\n    if amount > self.quantity:", "new_str": "def take(self, amount):\n    if amount < 0 or amount > self.quantity:"}),
        );
}

#[test]
fn edit_not_read_first() {
    Project::new(&[("inventory.py", INVENTORY)]).refused(
        "edit_not_read_first",
        "ws_edit",
        json!({"path": "inventory.py", "old_str": "total = 0", "new_str": "total = 1"}),
    );
}

#[test]
fn edit_changed_on_disk_since_read() {
    let mut p = Project::new(&[("inventory.py", INVENTORY)]);
    p.read("inventory.py");
    std::fs::write(
        p.root.join("inventory.py"),
        INVENTORY.replace("total = 0", "total = 0  # start"),
    )
    .unwrap();
    p.refused(
        "edit_changed_on_disk_since_read",
        "ws_edit",
        json!({"path": "inventory.py", "old_str": "return total", "new_str": "return int(total)"}),
    );
}

#[test]
fn edit_not_found_shows_the_closest_region() {
    Project::new(&[("inventory.py", INVENTORY)])
        .read("inventory.py")
        .refused(
            "edit_not_found_shows_the_closest_region",
            "ws_edit",
            json!({"path": "inventory.py", "old_str": "    def take(self, count):\n        if count > self.quantity:\n            raise ValueError(\"out of stock\")", "new_str": "    def take(self, count):\n        pass"}),
        );
}

#[test]
fn edit_not_found_nothing_resembles() {
    Project::new(&[("inventory.py", INVENTORY)])
        .read("inventory.py")
        .refused(
            "edit_not_found_nothing_resembles",
            "ws_edit",
            json!({"path": "inventory.py", "old_str": "fn main() {\n    println!(\"hi\");\n}", "new_str": "fn main() {}"}),
        );
}

#[test]
fn edit_ambiguous_exact_with_a_count() {
    Project::new(&[("inventory.py", INVENTORY)])
        .read("inventory.py")
        .refused(
            "edit_ambiguous_exact_with_a_count",
            "ws_edit",
            json!({"path": "inventory.py", "old_str": "return self.quantity", "new_str": "return int(self.quantity)"}),
        );
}

#[test]
fn edit_ambiguous_on_a_fuzzy_rung() {
    let file = "def a():\n    x = 1  \n    return x\n\n\ndef b():\n    x = 1 \n    return x\n";
    Project::new(&[("dup.py", file)]).read("dup.py").refused(
        "edit_ambiguous_on_a_fuzzy_rung",
        "ws_edit",
        json!({"path": "dup.py", "old_str": "    x = 1\n    return x", "new_str": "    x = 2\n    return x"}),
    );
}

#[test]
fn edit_over_edit_guard() {
    let old = INVENTORY
        .split_once("class Item:")
        .map(|(_, rest)| format!("class Item:{rest}"))
        .unwrap();
    Project::new(&[("inventory.py", INVENTORY)])
        .read("inventory.py")
        .refused(
            "edit_over_edit_guard",
            "ws_edit",
            json!({"path": "inventory.py", "old_str": old, "new_str": "class Item:\n    pass\n"}),
        );
}

#[test]
fn edit_placeholder_standing_for_code() {
    Project::new(&[("inventory.py", INVENTORY)])
        .read("inventory.py")
        .refused(
            "edit_placeholder_standing_for_code",
            "ws_edit",
            json!({"path": "inventory.py", "old_str": "    def restock(self, amount):\n        if amount <= 0:\n            raise ValueError(\"amount must be positive\")\n        self.quantity += amount\n        log.info(\"restocked %s by %d\", self.sku, amount)\n        return self.quantity", "new_str": "    def restock(self, amount):\n        # ... existing code ...\n        return self.quantity"}),
        );
}

#[test]
fn edit_syntax_error_reverted() {
    Project::new(&[("inventory.py", INVENTORY)])
        .read("inventory.py")
        .refused(
            "edit_syntax_error_reverted",
            "ws_edit",
            json!({"path": "inventory.py", "old_str": "        self.quantity -= amount", "new_str": "        self.quantity -= amount)"}),
        );
}

#[test]
fn edit_syntax_error_reverted_missing_colon() {
    Project::new(&[("inventory.py", INVENTORY)])
        .read("inventory.py")
        .refused(
            "edit_syntax_error_reverted_missing_colon",
            "ws_edit",
            json!({"path": "inventory.py", "old_str": "    def take(self, amount):", "new_str": "    def take(self, amount)"}),
        );
}

#[test]
fn edit_empty_old_str() {
    Project::new(&[("inventory.py", INVENTORY)])
        .read("inventory.py")
        .refused(
            "edit_empty_old_str",
            "ws_edit",
            json!({"path": "inventory.py", "old_str": "", "new_str": "import os\n"}),
        );
}

#[test]
fn edit_no_op() {
    Project::new(&[("inventory.py", INVENTORY)])
        .read("inventory.py")
        .refused(
            "edit_no_op",
            "ws_edit",
            json!({"path": "inventory.py", "old_str": "total = 0", "new_str": "total = 0"}),
        );
}

#[test]
fn edit_partial_gutter() {
    Project::new(&[("inventory.py", INVENTORY)])
        .read("inventory.py")
        .refused(
            "edit_partial_gutter",
            "ws_edit",
            json!({"path": "inventory.py", "old_str": "    29|    total = 0\n    for item in items:", "new_str": "    total = 1\n    for item in items:"}),
        );
}

#[test]
fn edit_missing_file_suggests_a_similar_one() {
    Project::new(&[("src/utils.py", "def f():\n    return 1\n")]).refused(
        "edit_missing_file_suggests_a_similar_one",
        "ws_edit",
        json!({"path": "src/util.py", "old_str": "return 1", "new_str": "return 2"}),
    );
}

// ---- ws_write ----

#[test]
fn write_not_read() {
    Project::new(&[("inventory.py", INVENTORY)]).refused(
        "write_not_read",
        "ws_write",
        json!({"path": "inventory.py", "content": "print('hi')\n"}),
    );
}

#[test]
fn write_created() {
    Project::new(&[]).ok(
        "write_created",
        "ws_write",
        json!({"path": "src/util.py", "content": "def double(x):\n    return 2 * x\n"}),
    );
}

#[test]
fn write_overwritten() {
    Project::new(&[("app.py", "print('one')\n")])
        .read("app.py")
        .ok(
            "write_overwritten",
            "ws_write",
            json!({"path": "app.py", "content": "import sys\n\nprint('two', sys.argv)\n"}),
        );
}

#[test]
fn write_changed_on_disk_since_read() {
    let mut p = Project::new(&[("app.py", "print('one')\n")]);
    p.read("app.py");
    std::fs::write(p.root.join("app.py"), "print('one, changed')\n").unwrap();
    p.refused(
        "write_changed_on_disk_since_read",
        "ws_write",
        json!({"path": "app.py", "content": "print('two')\n"}),
    );
}

#[test]
fn write_same_content() {
    Project::new(&[("app.py", "print('one')\n")])
        .read("app.py")
        .ok(
            "write_same_content",
            "ws_write",
            json!({"path": "app.py", "content": "print('one')\n"}),
        );
}

#[test]
fn write_shrink_guard() {
    Project::new(&[("inventory.py", INVENTORY)])
        .read("inventory.py")
        .refused(
            "write_shrink_guard",
            "ws_write",
            json!({"path": "inventory.py", "content": "class Item:\n    pass\n"}),
        );
}

#[test]
fn write_empty_content_for_a_new_file() {
    Project::new(&[]).refused(
        "write_empty_content_for_a_new_file",
        "ws_write",
        json!({"path": "notes/todo.md", "text_body": "- one\n"}),
    );
}

// ---- ws_patch ----

#[test]
fn patch_landed_multi_hunk() {
    let patch = "--- a/inventory.py\n+++ b/inventory.py\n@@ -15,3 +15,3 @@\n         if amount <= 0:\n-            raise ValueError(\"amount must be positive\")\n+            raise ValueError(f\"amount must be positive, got {amount}\")\n         self.quantity += amount\n@@ -28,5 +28,2 @@\n def total_quantity(items):\n-    total = 0\n-    for item in items:\n-        total += item.quantity\n-    return total\n+    return sum(item.quantity for item in items)\n";
    Project::new(&[("inventory.py", INVENTORY)])
        .read("inventory.py")
        .ok(
            "patch_landed_multi_hunk",
            "ws_patch",
            json!({"path": "inventory.py", "patch": patch}),
        );
}

#[test]
fn patch_refused_hunk() {
    let patch = "@@ -16,3 +16,3 @@\n         if amount <= 0:\n-            raise ValueError(\"amount must be positive\")\n+            raise ValueError(\"amount must be > 0\")\n         self.quantity += amount\n@@ -23,3 +23,3 @@\n         if amount > self.stock:\n-            raise ValueError(\"no stock\")\n+            raise ValueError(\"not enough\")\n         self.stock -= amount\n";
    Project::new(&[("inventory.py", INVENTORY)])
        .read("inventory.py")
        .refused(
            "patch_refused_hunk",
            "ws_patch",
            json!({"path": "inventory.py", "patch": patch}),
        );
}

#[test]
fn patch_header_names_another_existing_file() {
    let go = "package config\n\nfunc Port() int {\n\treturn 8080\n}\n";
    let patch = "--- a/cmd/target.go\n+++ b/cmd/target.go\n@@ -3,3 +3,3 @@\n func Port() int {\n-\treturn 8080\n+\treturn 9090\n }\n";
    Project::new(&[("src/target.go", go), ("cmd/target.go", go)])
        .read("src/target.go")
        .refused(
            "patch_header_names_another_existing_file",
            "ws_patch",
            json!({"path": "src/target.go", "patch": patch}),
        );
}

#[test]
fn patch_not_read() {
    Project::new(&[("inventory.py", INVENTORY)]).refused(
        "patch_not_read",
        "ws_patch",
        json!({"path": "inventory.py", "patch": "@@ -30 +30 @@\n-    total = 0\n+    total = 1\n"}),
    );
}

// ---- the jail ----

#[test]
fn jail_path_outside_the_project() {
    Project::new(&[]).refused(
        "jail_path_outside_the_project",
        "ws_write",
        json!({"path": "../outside.txt", "content": "x\n"}),
    );
}

#[test]
fn jail_absolute_path_elsewhere() {
    Project::new(&[]).refused(
        "jail_absolute_path_elsewhere",
        "ws_read",
        json!({"path": "/etc/passwd"}),
    );
}

#[test]
fn jail_slmcode_boundary() {
    Project::new(&[]).refused(
        "jail_slmcode_boundary",
        "ws_write",
        json!({"path": ".slmcode/hooks.json", "content": "{}\n"}),
    );
}

#[test]
fn jail_git_boundary() {
    Project::new(&[(".git/config", "[core]\n")]).refused(
        "jail_git_boundary",
        "ws_write",
        json!({"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}),
    );
}

// ---- arguments ----

#[test]
fn args_missing_required() {
    Project::new(&[("app.py", "x = 1\n")])
        .read("app.py")
        .refused(
            "args_missing_required",
            "ws_edit",
            json!({"path": "app.py", "old_str": "x = 1"}),
        );
}

#[test]
fn args_unknown_key() {
    Project::new(&[("app.py", "x = 1\n")])
        .read("app.py")
        .refused(
            "args_unknown_key",
            "ws_edit",
            json!({"path": "app.py", "old_str": "x = 1", "new_str": "x = 2", "line": 1}),
        );
}

#[test]
fn args_wrong_type() {
    Project::new(&[("app.py", "x = 1\n")])
        .read("app.py")
        .refused(
            "args_wrong_type",
            "ws_edit",
            json!({"path": "app.py", "old_str": "x = 1", "new_str": ["x = 2"]}),
        );
}

#[test]
fn args_not_an_object() {
    Project::new(&[]).refused("args_not_an_object", "ws_read", json!(["app.py"]));
}

#[test]
fn args_unknown_tool() {
    Project::new(&[]).refused("args_unknown_tool", "ws_run", json!({"command": "ls"}));
}

// ---- ws_shell ----

#[test]
fn shell_success_with_exit_code() {
    Project::new(&[("a.txt", "one\ntwo\n")]).ok(
        "shell_success_with_exit_code",
        "ws_shell",
        json!({"command": "pwd && wc -l a.txt"}),
    );
}

#[test]
fn shell_success_without_output() {
    Project::new(&[("a.txt", "one\n")]).ok(
        "shell_success_without_output",
        "ws_shell",
        json!({"command": "test -f a.txt"}),
    );
}

#[test]
fn shell_failing_command() {
    Project::new(&[("a.txt", "one\n")]).ok(
        "shell_failing_command",
        "ws_shell",
        json!({"command": "ls missing.txt"}),
    );
}

#[test]
fn shell_refused_rm_rf_root() {
    Project::new(&[]).refused(
        "shell_refused_rm_rf_root",
        "ws_shell",
        json!({"command": "rm -rf /"}),
    );
}

#[test]
fn shell_refused_command_substitution() {
    Project::new(&[]).refused(
        "shell_refused_command_substitution",
        "ws_shell",
        json!({"command": "echo $(cat /etc/passwd)"}),
    );
}

#[test]
fn shell_timeout() {
    Project::new(&[]).ok(
        "shell_timeout",
        "ws_shell",
        json!({"command": "sleep 5", "timeout_sec": 1}),
    );
}
