//! Property tests of the edit engine through the real registry: no input panics, a refused
//! edit or patch leaves the file byte for byte unchanged, and a landed exact edit changes
//! exactly its span.

use proptest::prelude::*;
use serde_json::json;
use slmcode_aci::{Config, Registry, Workspace};

/// Lines drawn from a small pool, so files repeat themselves (ambiguity is common), with the
/// awkward bytes models meet: tabs, CRLF, trailing spaces, blank lines, unicode.
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("fn main() {".to_string()),
        Just("    let x = 1;".to_string()),
        Just("\tlet y = 2;".to_string()),
        Just("}".to_string()),
        Just(String::new()),
        Just("    return x;  ".to_string()),
        Just("// “quoted” — note".to_string()),
        Just("    if x > 0 {\r".to_string()),
        "[a-z ]{0,12}".prop_map(|s| s),
    ]
}

fn file_text() -> impl Strategy<Value = String> {
    (proptest::collection::vec(line(), 0..30), any::<bool>()).prop_map(|(lines, final_nl)| {
        let mut s = lines.join("\n");
        if final_nl && !s.is_empty() {
            s.push('\n');
        }
        s
    })
}

/// Text a model might send as old_str/new_str: pieces of the pool, gutters, escapes, blanks.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::collection::vec(line(), 0..6).prop_map(|l| l.join("\n")),
        proptest::collection::vec(line(), 1..4).prop_map(|l| l
            .iter()
            .enumerate()
            .map(|(i, s)| format!("{:6}|{s}", i + 1))
            .collect::<Vec<_>>()
            .join("\n")),
        Just("let x = 1;\\nlet y = 2;".to_string()),
        Just("   ".to_string()),
        ".{0,20}",
    ]
}

fn workspace(content: &str) -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.rs"), content).unwrap();
    // The engine's own properties: the syntax check (which may refuse) is tested elsewhere.
    let config = Config {
        disable_syntax_check: true,
        ..Config::default()
    };
    let mut ws = Workspace::open(dir.path(), config).unwrap();
    let r = Registry::coding().call(&mut ws, "ws_read", &json!({"path": "f.rs"}));
    assert!(!r.is_error, "{}", r.text);
    (dir, ws)
}

fn occurrences(hay: &str, needle: &str) -> usize {
    (0..=hay.len().saturating_sub(needle.len()))
        .filter(|&i| hay.is_char_boundary(i) && hay[i..].starts_with(needle))
        .count()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 400,
        max_global_rejects: 1_000_000,
        .. ProptestConfig::default()
    })]

    #[test]
    fn refused_edits_change_nothing_and_nothing_panics(
        content in file_text(),
        old in fragment(),
        new in fragment(),
        replace_all in any::<bool>(),
    ) {
        let (dir, mut ws) = workspace(&content);
        let r = Registry::coding().call(
            &mut ws,
            "ws_edit",
            &json!({"path": "f.rs", "old_str": old, "new_str": new, "replace_all": replace_all}),
        );
        prop_assert!(!r.text.contains("internal error"), "{}", r.text);
        let after = std::fs::read(dir.path().join("f.rs")).unwrap();
        if r.is_error {
            prop_assert_eq!(after, content.as_bytes().to_vec(), "refused but changed: {}", r.text);
        }
    }

    #[test]
    fn refused_patches_change_nothing_and_nothing_panics(
        content in file_text(),
        body in proptest::collection::vec(
            prop_oneof![
                Just("@@ -1,2 +1,2 @@".to_string()),
                Just("@@ -40,0 +41,1 @@".to_string()),
                Just("@@ fn main() {".to_string()),
                Just("<<<<<<< SEARCH".to_string()),
                Just("=======".to_string()),
                Just(">>>>>>> REPLACE".to_string()),
                Just("```diff".to_string()),
                Just("--- a/f.rs".to_string()),
                Just("+++ b/f.rs".to_string()),
                line().prop_map(|l| format!(" {l}")),
                line().prop_map(|l| format!("-{l}")),
                line().prop_map(|l| format!("+{l}")),
                line(),
            ],
            0..14,
        ),
    ) {
        let (dir, mut ws) = workspace(&content);
        let patch = body.join("\n");
        let r = Registry::coding().call(&mut ws, "ws_patch", &json!({"path": "f.rs", "patch": patch}));
        prop_assert!(!r.text.contains("internal error"), "{}", r.text);
        let after = std::fs::read(dir.path().join("f.rs")).unwrap();
        if r.is_error {
            prop_assert_eq!(after, content.as_bytes().to_vec(), "refused but changed: {}", r.text);
        }
    }

    #[test]
    fn a_landed_exact_edit_changes_only_its_span(
        content in file_text(),
        a in any::<prop::sample::Index>(),
        b in any::<prop::sample::Index>(),
        new in "[a-zA-Z0-9 (){};\n\t]{0,30}",
    ) {
        prop_assume!(!content.is_empty());
        let (mut i, mut j) = (a.index(content.len()), b.index(content.len() + 1));
        if i > j { std::mem::swap(&mut i, &mut j); }
        while !content.is_char_boundary(i) { i += 1; }
        while !content.is_char_boundary(j) { j += 1; }
        prop_assume!(i < j);
        let old = &content[i..j];
        prop_assume!(!old.trim().is_empty() && old != new && !old.contains('\r'));
        prop_assume!(occurrences(&content, old) == 1);
        // Edits match on the file with CRLF read as LF; old must be unique there too.
        let view = content.replace("\r\n", "\n");
        prop_assume!(occurrences(&view, old) == 1);
        // An old_str starting with the line break of a CRLF line replaces that whole line
        // break, "\r" included: edits see a CRLF as one newline. Bytes are compared elsewhere.
        prop_assume!(!(old.starts_with('\n') && content[..i].ends_with('\r')));
        prop_assume!(!matches!(slmcode_aci::matching::gutter(old), slmcode_aci::matching::Gutter::Every(_) | slmcode_aci::matching::Gutter::Some(_)));
        // Keep clear of the over-edit guard; it has its own tests.
        prop_assume!(content.len() <= 400 || old.len() * 100 < content.len() * 72);
        let (dir, mut ws) = workspace(&content);
        let r = Registry::coding().call(&mut ws, "ws_edit", &json!({"path": "f.rs", "old_str": old, "new_str": new}));
        prop_assert!(!r.is_error, "{}", r.text);
        prop_assert!(r.text.starts_with("edited f.rs (1 replacement(s))"), "{}", r.text);
        let after = std::fs::read_to_string(dir.path().join("f.rs")).unwrap();
        // Every byte outside the span is the file's; the span reads as new.
        prop_assert!(after.len() >= i + (content.len() - j), "{:?}", after);
        prop_assert_eq!(&after[..i], &content[..i]);
        prop_assert_eq!(&after[after.len() - (content.len() - j)..], &content[j..]);
        let middle = &after[i..after.len() - (content.len() - j)];
        prop_assert_eq!(middle.replace("\r\n", "\n"), new.clone());
        // A file with one kind of line ending gives every new line that kind (a mixed file
        // keeps its mix line by line: the conformance cases pin which line gets which).
        let crlf_lines = content.matches("\r\n").count();
        let lines = view.matches('\n').count();
        if crlf_lines == 0 {
            prop_assert!(!middle.contains('\r'), "{:?}", middle);
        } else if crlf_lines == lines {
            prop_assert_eq!(middle.matches('\n').count(), middle.matches("\r\n").count(), "{:?}", middle);
        }
    }
}
