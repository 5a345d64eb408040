//! The registry through the real binary: names, schemas, aliases, unknown keys, types.

use crate::common::{bin, Project};

#[test]
fn tools_lists_the_coding_set_with_schemas() {
    let out = bin().args(["tools", "--json"]).output().unwrap();
    assert!(out.status.success());
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    // The binary lists exactly the registry's coding set, in its order (the set itself is
    // pinned in crates/aci/tests/it/session_state.rs).
    assert_eq!(names, slmcode_aci::tool_names());
    for tool in list.as_array().unwrap() {
        assert_eq!(tool["parameters"]["type"], "object");
        assert_eq!(tool["parameters"]["type"], "object");
        assert!(tool["description"].as_str().unwrap().len() > 30);
    }
    let read = &list[0]["parameters"];
    assert_eq!(read["required"], serde_json::json!(["path"]));
    assert_eq!(read["properties"]["offset"]["type"], "integer");
    let text = bin().arg("tools").output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("ws_grep\n  Search file contents"), "{text}");
}

#[test]
fn unknown_keys_are_named_with_the_accepted_ones() {
    let p = Project::new();
    p.write("a.txt", "x\n");
    let msg = p.err(
        "ws_read",
        r#"{"path":"a.txt","start":3,"bogus":1,"extra":2}"#,
    );
    assert!(
        msg.starts_with(r#"ws_read does not take the arguments "bogus", "extra""#),
        "{msg}"
    );
    assert!(
        msg.contains(
            "It accepts: path (string, required), offset (whole number), limit (whole number)"
        ),
        "{msg}"
    );
    assert!(msg.contains(r#"Example: ws_read {"path":"#), "{msg}");
}

#[test]
fn wrong_types_are_explained_and_unambiguous_ones_coerced() {
    let p = Project::new();
    p.write("a.txt", "1\n2\n3\n");
    assert!(p
        .ok("ws_read", r#"{"path":"a.txt","offset":"2","limit":"1"}"#)
        .starts_with("     2|2"));
    let msg = p.err("ws_read", r#"{"path":"a.txt","offset":"two"}"#);
    assert!(
        msg.contains(r#"ws_read: "offset" must be a whole number, got "two""#),
        "{msg}"
    );
    let msg = p.err("ws_read", r#"{"path":"a.txt","limit":-5}"#);
    assert!(msg.contains("the smallest allowed is 1"), "{msg}");
    let msg = p.err("ws_read", r#"{"path":{"x":1}}"#);
    assert!(msg.contains(r#""path" must be a string"#), "{msg}");
    let msg = p.err("ws_grep", r#"{"pattern":"x","case_insensitive":"maybe"}"#);
    assert!(msg.contains("must be a true or false"), "{msg}");
    let msg = p.err("ws_read", "[1,2]");
    assert!(msg.contains("arguments must be a JSON object"), "{msg}");
    let msg = p.err("ws_read", "{}");
    assert!(msg.starts_with(r#"ws_read needs "path" (string)"#), "{msg}");
}

#[test]
fn unknown_tool_names_the_available_ones() {
    let p = Project::new();
    let msg = p.err("ws_raed", "{}");
    assert!(
        msg.starts_with(r#"unknown tool "ws_raed". Did you mean ws_read?"#),
        "{msg}"
    );
    assert!(msg.contains("ws_grep"), "{msg}");
}

#[test]
fn bad_json_on_the_command_line_is_a_usage_error() {
    let p = Project::new();
    let out = p.run_tool("ws_read", "{not json", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not valid JSON"));
    let out = bin()
        .args(["tool", "ws_list", "{}", "--root", "/nonexistent/dir"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a directory"));
}
