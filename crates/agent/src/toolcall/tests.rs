use super::*;
use serde_json::json;
use slmcode_aci::registry::Kind;

fn offered() -> Vec<OfferedTool> {
    let tool = |name: &str, params: &[(&str, Kind)]| OfferedTool {
        name: name.to_string(),
        params: params.iter().map(|(n, k)| (n.to_string(), *k)).collect(),
    };
    vec![
        tool(
            "ws_read",
            &[
                ("path", Kind::String),
                ("offset", Kind::Integer { min: 0 }),
                ("limit", Kind::Integer { min: 0 }),
            ],
        ),
        tool(
            "ws_edit",
            &[
                ("path", Kind::String),
                ("old_str", Kind::String),
                ("new_str", Kind::String),
                ("replace_all", Kind::Boolean),
            ],
        ),
        tool("ws_todo", &[("items", Kind::StringList)]),
        tool(
            "ws_grep",
            &[
                ("pattern", Kind::String),
                ("glob", Kind::String),
                ("path", Kind::String),
            ],
        ),
    ]
}

fn parse(reply: &str) -> TextCalls {
    parse_text_calls(reply, &offered())
}

/// The one call in `reply`, which must hold nothing else.
fn only(reply: &str) -> TextCall {
    let found = parse(reply);
    assert_eq!(found.calls.len(), 1, "{found:#?}");
    assert!(
        found.unknown.is_empty() && found.unreadable.is_empty(),
        "{found:#?}"
    );
    found.calls.into_iter().next().unwrap()
}

fn nothing(reply: &str) {
    assert_eq!(parse(reply), TextCalls::default(), "{reply}");
}

fn repaired(text: &str) -> (Value, Vec<&'static str>) {
    repair_json_object(text).unwrap()
}

// Hermes.

#[test]
fn hermes_call_between_prose() {
    let tag =
        "<tool_call>\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a.py\"}}\n</tool_call>";
    let reply = format!("I'll read the file first.\n{tag}\nThen I'll fix it.");
    let call = only(&reply);
    assert_eq!(call.name, "ws_read");
    assert_eq!(call.arguments, json!({"path": "a.py"}));
    assert_eq!(call.format, CallFormat::Hermes);
    assert_eq!(&reply[call.span], tag);
    assert!(call.repairs.is_empty());
}

#[test]
fn hermes_unclosed_at_the_end() {
    let reply =
        "Reading.\n<tool_call>\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a.py\"}}\n\n";
    let call = only(reply);
    assert_eq!(call.arguments, json!({"path": "a.py"}));
    assert_eq!(
        &reply[call.span],
        "<tool_call>\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a.py\"}}"
    );
}

#[test]
fn hermes_unclosed_before_the_next_tag() {
    let reply = "<tool_call>{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a\"}}\n<tool_call>{\"name\": \"ws_read\", \"arguments\": {\"path\": \"b\"}}</tool_call>";
    let found = parse(reply);
    assert_eq!(found.calls.len(), 2);
    assert_eq!(found.calls[0].arguments, json!({"path": "a"}));
    assert_eq!(found.calls[1].arguments, json!({"path": "b"}));
    assert!(reply[found.calls[0].span.clone()].ends_with("}}"));
    assert!(reply[found.calls[1].span.clone()].starts_with("<tool_call>"));
}

#[test]
fn hermes_accepts_parameters_and_args() {
    for key in ["parameters", "args", "arguments"] {
        let reply = format!(
            "<tool_call>{{\"name\": \"ws_read\", \"{key}\": {{\"path\": \"a.py\"}}}}</tool_call>"
        );
        assert_eq!(only(&reply).arguments, json!({"path": "a.py"}), "{key}");
    }
}

#[test]
fn hermes_arguments_as_a_json_string_are_decoded() {
    let reply = r#"<tool_call>{"name": "ws_read", "arguments": "{\"path\": \"a.py\", \"offset\": 3}"}</tool_call>"#;
    let call = only(reply);
    assert_eq!(call.arguments, json!({"path": "a.py", "offset": 3}));
    assert_eq!(call.repairs, ["arguments as a string"]);
}

#[test]
fn hermes_without_arguments_is_an_empty_object() {
    let call = only(r#"<tool_call>{"name": "ws_todo"}</tool_call>"#);
    assert_eq!(call.arguments, json!({}));
}

#[test]
fn hermes_two_calls_keep_order_and_spans() {
    let first = r#"<tool_call>{"name": "ws_read", "arguments": {"path": "a.py"}}</tool_call>"#;
    let second =
        r#"<tool_call>{"name": "ws_grep", "arguments": {"pattern": "fn main"}}</tool_call>"#;
    let reply = format!("First this:\n{first}\nand then:\n{second}\nok?");
    let found = parse(&reply);
    assert_eq!(found.calls.len(), 2);
    assert_eq!(found.calls[0].name, "ws_read");
    assert_eq!(found.calls[1].name, "ws_grep");
    assert_eq!(&reply[found.calls[0].span.clone()], first);
    assert_eq!(&reply[found.calls[1].span.clone()], second);
    assert!(found.calls[0].span.end <= found.calls[1].span.start);
}

#[test]
fn hermes_several_objects_or_an_array_in_one_tag() {
    let reply = "<tool_call>\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a\"}}\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"b\"}}\n</tool_call>";
    let found = parse(reply);
    let paths: Vec<_> = found
        .calls
        .iter()
        .map(|c| c.arguments["path"].clone())
        .collect();
    assert_eq!(paths, [json!("a"), json!("b")]);
    assert_eq!(found.calls[0].span, 0..reply.len());
    assert_eq!(found.calls[1].span, 0..reply.len());

    let reply = r#"<tool_call>[{"name": "ws_read", "arguments": {"path": "a"}}, {"name": "ws_todo", "arguments": {"items": ["x"]}}]</tool_call>"#;
    let names: Vec<_> = parse(reply).calls.into_iter().map(|c| c.name).collect();
    assert_eq!(names, ["ws_read", "ws_todo"]);
}

#[test]
fn hermes_json_repairs_are_reported() {
    let call = only("<tool_call>{'name': 'ws_read', 'arguments': {'path': 'a.py',}}</tool_call>");
    assert_eq!(call.arguments, json!({"path": "a.py"}));
    assert_eq!(call.repairs, ["single quotes", "trailing comma"]);

    let call = only(r#"<tool_call>{"name": "ws_read", "arguments": {"path": "a.py"}</tool_call>"#);
    assert_eq!(call.arguments, json!({"path": "a.py"}));
    assert_eq!(call.repairs, ["missing closing brace"]);
}

#[test]
fn hermes_fenced_inside_the_tag() {
    let call = only("<tool_call>\n```json\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a\"}}\n```\n</tool_call>");
    assert_eq!(call.format, CallFormat::Hermes);
    assert_eq!(call.arguments, json!({"path": "a"}));
}

#[test]
fn hermes_with_a_pythonic_body() {
    let call = only("<tool_call>\nws_read(path=\"a.py\", offset=2)\n</tool_call>");
    assert_eq!(call.format, CallFormat::Pythonic);
    assert_eq!(call.arguments, json!({"path": "a.py", "offset": 2}));
    assert_eq!(call.span.start, 0);
}

#[test]
fn the_same_unreadable_attempt_is_listed_once() {
    let tag = r#"<tool_call>{"name": "ws_read", "arguments": {"path": }}</tool_call>"#;
    let found = parse(&format!("{tag}\n{tag}\n{tag}"));
    assert_eq!(found.unreadable.len(), 1, "{found:?}");
}

#[test]
fn hermes_unreadable_attempts_are_described() {
    let json = r#"{"name": "ws_read", "arguments": {"path": "a.py" "offset": 3}}"#;
    let found = parse(&format!("<tool_call>{json}</tool_call>"));
    assert!(found.calls.is_empty());
    let column = json.find("\"offset\"").unwrap() + 1;
    assert_eq!(
        found.unreadable,
        [format!("a <tool_call> block whose JSON could not be read: expected `,` or `}}` at line 1 column {column}")]
    );

    let found = parse(r#"<tool_call>{"arguments": {"path": "a"}}</tool_call>"#);
    assert_eq!(found.unreadable, ["a <tool_call> block with no \"name\""]);

    let found = parse("<tool_call>\n</tool_call>");
    assert_eq!(found.unreadable, ["an empty <tool_call> block"]);

    let found = parse(r#"<tool_call>{"name": "ws_read", "arguments": [1]}</tool_call>"#);
    assert_eq!(
        found.unreadable,
        ["a <tool_call> block for ws_read whose arguments are not a JSON object"]
    );

    let found = parse(r#"<tool_call>{"name": "ws_read", "arguments": "path=a.py"}</tool_call>"#);
    assert_eq!(found.unreadable.len(), 1);
    assert!(found.unreadable[0]
        .starts_with("a <tool_call> block for ws_read whose arguments string could not be read: "));
}

// Qwen XML.

#[test]
fn qwen_in_a_tag_keeps_indentation() {
    let tag = "<tool_call>\n<function=ws_edit>\n<parameter=path>\nsrc/a.py\n</parameter>\n<parameter=old_str>\n    x = 1\n\n</parameter>\n<parameter=new_str>\n    if x:\n\ty = {\"a\":1}\n</parameter>\n<parameter=replace_all>\nYes\n</parameter>\n</function>\n</tool_call>";
    let reply = format!("Let me edit it.\n{tag}\nDone.");
    let call = only(&reply);
    assert_eq!(call.name, "ws_edit");
    assert_eq!(call.format, CallFormat::QwenXml);
    assert_eq!(
        call.arguments,
        json!({
            "path": "src/a.py",
            "old_str": "    x = 1\n",
            "new_str": "    if x:\n\ty = {\"a\":1}",
            "replace_all": true,
        })
    );
    assert_eq!(&reply[call.span], tag);
    assert!(call.repairs.is_empty());
}

#[test]
fn qwen_without_tag_or_closers() {
    let reply = "Reading:\n<function=ws_read>\n<parameter=path>\na.py\n</parameter>\n<parameter=offset>\n 10 \n";
    let call = only(reply);
    assert_eq!(call.arguments, json!({"path": "a.py", "offset": 10}));
    assert_eq!(
        &reply[call.span],
        "<function=ws_read>\n<parameter=path>\na.py\n</parameter>\n<parameter=offset>\n 10"
    );

    // No `</parameter>` before the next parameter or `</function>`; a stray
    // `</tool_call>` after the block belongs to it.
    let reply = "<function=ws_read>\n<parameter=path>\na.py\n<parameter=limit>\n5\n</function>\n</tool_call> ok";
    let call = only(reply);
    assert_eq!(call.arguments, json!({"path": "a.py", "limit": 5}));
    assert_eq!(&reply[call.span], &reply[..reply.len() - 3]);
}

#[test]
fn qwen_converts_values_by_kind() {
    let call = only("<function=ws_read>\n<parameter=path>\n42\n</parameter>\n<parameter=offset>\n-3\n</parameter>\n<parameter=limit>\nall\n</parameter>\n</function>");
    assert_eq!(
        call.arguments,
        json!({"path": "42", "offset": -3, "limit": "all"})
    );

    for (raw, want) in [
        ("no", json!(false)),
        ("TRUE", json!(true)),
        ("1", json!(true)),
        ("0", json!(false)),
        ("maybe", json!("maybe")),
    ] {
        let reply = format!(
            "<function=ws_edit>\n<parameter=replace_all>\n{raw}\n</parameter>\n</function>"
        );
        assert_eq!(only(&reply).arguments["replace_all"], want, "{raw}");
    }

    let reply = "<function=ws_grep>\n<parameter=pattern>\n1\n</parameter>\n<parameter=count>\n7\n</parameter>\n<parameter=opts>\n{\"a\": [1]}\n</parameter>\n<parameter=note>\nhello\n</parameter>\n<parameter=flag>\nnull\n</parameter>\n</function>";
    assert_eq!(
        only(reply).arguments,
        json!({"pattern": "1", "count": 7, "opts": {"a": [1]}, "note": "hello", "flag": "null"})
    );
}

#[test]
fn qwen_string_parameters_are_never_decoded() {
    let reply = "<function=ws_edit>\n<parameter=path>\ntrue\n</parameter>\n<parameter=new_str>\n{\"a\":1}\n</parameter>\n<parameter=old_str>\n[1, 2]\n</parameter>\n</function>";
    assert_eq!(
        only(reply).arguments,
        json!({"path": "true", "new_str": "{\"a\":1}", "old_str": "[1, 2]"})
    );
}

#[test]
fn qwen_string_lists_from_lines_or_json() {
    let call = only("<function=ws_todo>\n<parameter=items>\n- read a.py\n\n   fix the bug  \r\n</parameter>\n</function>");
    assert_eq!(
        call.arguments,
        json!({"items": ["- read a.py", "fix the bug"]})
    );

    let call = only(
        "<function=ws_todo>\n<parameter=items>\n['read', \"fix\",]\n</parameter>\n</function>",
    );
    assert_eq!(call.arguments, json!({"items": ["read", "fix"]}));
    assert_eq!(call.repairs, ["single quotes", "trailing comma"]);
}

#[test]
fn qwen_json_body_instead_of_parameters() {
    let call = only("<function=ws_read>{\"path\": \"a.py\"}</function>");
    assert_eq!(call.arguments, json!({"path": "a.py"}));
}

#[test]
fn qwen_several_functions() {
    let reply = "<tool_call>\n<function=ws_read>\n<parameter=path>\na\n</parameter>\n</function>\n<function=ws_read>\n<parameter=path>\nb\n</parameter>\n</function>\n</tool_call>";
    let found = parse(reply);
    assert_eq!(found.calls.len(), 2);
    assert_eq!(found.calls[0].arguments, json!({"path": "a"}));
    assert_eq!(found.calls[1].arguments, json!({"path": "b"}));
    assert_eq!(found.calls[0].span, 0..reply.len());

    let a = "<function=ws_read>\n<parameter=path>\na\n</parameter>\n</function>";
    let b = "<function=ws_grep>\n<parameter=pattern>\nx\n</parameter>\n</function>";
    let reply = format!("{a}\nthen\n{b}");
    let found = parse(&reply);
    assert_eq!(found.calls.len(), 2);
    assert_eq!(&reply[found.calls[0].span.clone()], a);
    assert_eq!(&reply[found.calls[1].span.clone()], b);
}

#[test]
fn qwen_unknown_and_unreadable() {
    let found = parse("<function=ws_delete>\n<parameter=path>\na\n</parameter>\n</function>");
    assert_eq!(found.unknown, ["ws_delete"]);
    assert!(found.calls.is_empty());

    let found = parse("<function=ws_read\n<parameter=path>\na\n</parameter>");
    assert_eq!(
        found.unreadable,
        ["a <function=…> block whose name is not closed with `>`"]
    );

    let found = parse("<function=read the file>\n</function>");
    assert_eq!(
        found.unreadable,
        ["a <function=…> block whose name \"read the file\" is not a tool name"]
    );
}

// Fences.

#[test]
fn fenced_json_call() {
    let fence = "```json\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a.py\"}}\n```";
    let reply = format!("Here is the call:\n{fence}\nLet me know.");
    let call = only(&reply);
    assert_eq!(call.format, CallFormat::Fenced);
    assert_eq!(call.arguments, json!({"path": "a.py"}));
    assert_eq!(&reply[call.span], fence);
}

#[test]
fn fenced_variants() {
    for info in ["tool", "tool_call", "tool_code", "", "JSON"] {
        let reply =
            format!("```{info}\n{{\"tool\": \"ws_read\", \"args\": {{\"path\": \"a\"}}}}\n```");
        assert_eq!(only(&reply).arguments, json!({"path": "a"}), "{info}");
    }

    let reply = "```\n[{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a\"}},\n {\"name\": \"ws_grep\", \"arguments\": {\"pattern\": \"b\"}}]\n```";
    let found = parse(reply);
    let names: Vec<_> = found.calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["ws_read", "ws_grep"]);
    assert!(found.calls.iter().all(|c| c.span == (0..reply.len())));

    let reply = "```tool_code\nws_read(path=\"a.py\")\nws_grep(pattern='x')\n```";
    let found = parse(reply);
    assert_eq!(found.calls.len(), 2);
    assert_eq!(found.calls[0].format, CallFormat::Pythonic);
    assert_eq!(found.calls[1].arguments, json!({"pattern": "x"}));

    // Unclosed at the end of the reply.
    let reply = "Calling:\n```json\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a\"}}\n";
    let call = only(reply);
    assert_eq!(
        &reply[call.span],
        "```json\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a\"}}"
    );
}

#[test]
fn fences_that_are_not_calls_are_ignored() {
    nothing("Set this:\n```json\n{\"compilerOptions\": {\"strict\": true}}\n```\n");
    nothing("```json\n{\"name\": \"my-pkg\", \"version\": \"1.0.0\"}\n```");
    nothing("```json\n[1, 2, 3]\n```");
    nothing("```json\n{\"name\": \"x\", \"arguments\": {}, \"version\": 2}\n```");
    nothing(
        "```python\nprint({\"name\": \"ws_read\", \"arguments\": {}})\nxs = [f(x) for x in y]\n```",
    );
    nothing("```json\n{\"name\": \"ws_read\", \"description\": \"Read\", \"parameters\": {\"type\": \"object\", \"properties\": {}}}\n```");
    nothing("```json\n{\"name\": \"ws_read\", \"parameters\": {\"type\": \"object\", \"properties\": {\"path\": {}}}}\n```");
    nothing("```rust\nfn main() { let v = json!({\"name\": \"a\", \"arguments\": {}}); }\n```");
    nothing("```yaml\nname: x\n```");
}

#[test]
fn fenced_unreadable_call() {
    let found = parse("```json\n{\"name\": \"ws_read\", \"arguments\": {\"path\": }}\n```");
    assert_eq!(found.unreadable.len(), 1, "{found:?}");
    assert!(found.unreadable[0]
        .starts_with("a ```json block whose JSON could not be read: expected value at line 1"));

    let found = parse("```tool_call\nread the file a.py\n```");
    assert!(found.calls.is_empty());
}

// Bare JSON.

#[test]
fn bare_json_key_variants() {
    let cases = [
        r#"{"name": "ws_read", "arguments": {"path": "a"}}"#,
        r#"{"name": "ws_read", "parameters": {"path": "a"}}"#,
        r#"{"tool": "ws_read", "args": {"path": "a"}}"#,
        r#"{"tool": "ws_read", "arguments": {"path": "a"}}"#,
        r#"{"tool_name": "ws_read", "tool_input": {"path": "a"}}"#,
        r#"{"tool_name": "ws_read", "input": {"path": "a"}}"#,
        r#"{"function": {"name": "ws_read", "arguments": {"path": "a"}}}"#,
        r#"{"id": "call_1", "type": "function", "function": {"name": "ws_read", "arguments": "{\"path\": \"a\"}"}}"#,
    ];
    for json in cases {
        let reply = format!("I will call {json} now.");
        let call = only(&reply);
        assert_eq!(call.format, CallFormat::BareJson, "{json}");
        assert_eq!(call.arguments, json!({"path": "a"}), "{json}");
        assert!(call.repairs.is_empty(), "{json}");
        assert_eq!(&reply[call.span], json);
    }
}

#[test]
fn bare_json_needs_an_arguments_key() {
    nothing(r#"Package: {"name": "ws_read"} is fine."#);
    let call = only(r#"{"name": "ws_todo", "arguments": {}}"#);
    assert_eq!(call.arguments, json!({}));
}

#[test]
fn final_answer_is_not_a_call() {
    let answer = r#"{"status": "done", "summary": "Fixed the bug", "files_changed": ["a.py"], "notes": "ran {\"name\": \"ws_read\", \"arguments\": {}}"}"#;
    nothing(answer);
    nothing(&format!("All done.\n{answer}\n"));
    nothing(&format!("```json\n{answer}\n```"));
}

#[test]
fn bare_json_repaired_truncated_and_broken() {
    let call =
        only("Calling {'name': 'ws_read', 'arguments': {'path': 'a', 'offset': None,},} now");
    assert_eq!(call.arguments, json!({"path": "a", "offset": null}));
    assert_eq!(
        call.repairs,
        ["single quotes", "python literals", "trailing comma"]
    );

    let reply = r#"Calling: {"name": "ws_read", "arguments": {"path": "a.py"}"#;
    let call = only(reply);
    assert_eq!(call.repairs, ["missing closing brace"]);
    assert_eq!(call.span, 9..reply.len());

    let found =
        parse(r#"Calling {"name": "ws_read", "arguments": {"path": "a.py" "offset": 1}} now"#);
    assert!(found.calls.is_empty());
    assert_eq!(found.unreadable.len(), 1);
    assert!(found.unreadable[0].starts_with(
        "a JSON tool call that could not be read: expected `,` or `}` at line 1 column "
    ));
}

#[test]
fn bare_json_inside_tags_and_fences_is_not_counted_twice() {
    let found = parse("<tool_call>{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a\"}}</tool_call>\n```json\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"b\"}}\n```");
    assert_eq!(found.calls.len(), 2);
    assert_eq!(found.calls[0].format, CallFormat::Hermes);
    assert_eq!(found.calls[1].format, CallFormat::Fenced);
}

#[test]
fn message_objects_with_tool_calls() {
    let reply = r#"{"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "ws_read", "arguments": "{\"path\": \"a\"}"}}]}"#;
    assert_eq!(only(reply).arguments, json!({"path": "a"}));
}

// Pythonic.

#[test]
fn pythonic_calls() {
    let list = r#"[ws_read(path="a.py", offset=3), ws_grep(pattern='fn main')]"#;
    let reply = format!("Let me look: {list} and see.");
    let found = parse(&reply);
    assert_eq!(found.calls.len(), 2);
    assert_eq!(
        found.calls[0].arguments,
        json!({"path": "a.py", "offset": 3})
    );
    assert_eq!(found.calls[1].arguments, json!({"pattern": "fn main"}));
    for call in &found.calls {
        assert_eq!(call.format, CallFormat::Pythonic);
        assert_eq!(&reply[call.span.clone()], list);
    }

    let call = only("[ws_read(path=\"a.py\")]");
    assert_eq!(call.arguments, json!({"path": "a.py"}));
}

#[test]
fn pythonic_literals() {
    let reply = r#"[ws_grep(pattern=r"\d+\s", glob="*.rs", path=None, depth=-2, ratio=1.5e3, big=1_000, extra={'a': [1, 2.5, None], 'b': (True, 'x'), 3: False},)]"#;
    assert_eq!(
        only(reply).arguments,
        json!({
            "pattern": "\\d+\\s",
            "glob": "*.rs",
            "path": null,
            "depth": -2,
            "ratio": 1500.0,
            "big": 1000,
            "extra": {"a": [1, 2.5, null], "b": [true, "x"], "3": false},
        })
    );
}

#[test]
fn pythonic_strings_with_triple_quotes_and_escapes() {
    let reply = "[ws_edit(path='a.py', old_str=\"\"\"def f():\n    return \"x\"\n\"\"\", new_str='''def f():\n    return {'a': [1]}\n''', replace_all=False)]";
    assert_eq!(
        only(reply).arguments,
        json!({
            "path": "a.py",
            "old_str": "def f():\n    return \"x\"\n",
            "new_str": "def f():\n    return {'a': [1]}\n",
            "replace_all": false,
        })
    );

    let reply = r#"[ws_grep(pattern="a\tb\\n\"q\" \x41\u00e9\d", glob='it\'s' "!")]"#;
    assert_eq!(
        only(reply).arguments,
        json!({"pattern": "a\tb\\n\"q\" Aé\\d", "glob": "it's!"})
    );
}

#[test]
fn pythonic_positional_arguments_are_unreadable() {
    let found = parse(r#"[ws_read("a.py")]"#);
    assert!(found.calls.is_empty());
    assert_eq!(
        found.unreadable,
        ["a call to ws_read with positional arguments: use keyword arguments, e.g. ws_read(path=\"...\")"]
    );
    let found = parse("[ws_read(a.py)]");
    assert_eq!(found.unreadable.len(), 1);
    assert!(found.unreadable[0].contains("keyword arguments"));

    let found = parse(r#"[ws_read(path="a.py)]"#);
    assert_eq!(
        found.unreadable,
        ["a call to ws_read that could not be read: unterminated string"]
    );
}

#[test]
fn brackets_that_are_not_calls_are_ignored() {
    nothing("Use [x(1)] or [f(x) for x in xs] or [link](http://e.com) or arr[idx(2)].");
    nothing("[print(i) for i in range(3)] and [len(s), max(a, b)] and [a, b] and [] and [ x ]");
    nothing("See [the docs](https://example.com/a(b)) and [Foo(Bar=1)] and [foo(x)].");
    nothing("[ws_read]");
}

#[test]
fn print_wrapped_calls_in_tool_code() {
    let reply =
        "```tool_code\nprint(default_api.ws_read(path=\"a\"))\nprint(ws_grep(pattern=\"b\"))\n```";
    let names: Vec<_> = parse(reply).calls.into_iter().map(|c| c.name).collect();
    assert_eq!(names, ["ws_read", "ws_grep"]);
}

#[test]
fn pythonic_tool_like_names_are_unknown() {
    let found = parse(r#"[ws_move(src="a", dst="b")]"#);
    assert!(found.calls.is_empty());
    assert_eq!(found.unknown, ["ws_move"]);
}

// Names.

#[test]
fn prefixed_names_resolve() {
    for prefix in ["functions.", "tools.", "default_api."] {
        let reply = format!("<tool_call>{{\"name\": \"{prefix}ws_read\", \"arguments\": {{\"path\": \"a\"}}}}</tool_call>");
        assert_eq!(only(&reply).name, "ws_read", "{prefix}");
        let reply = format!("[{prefix}ws_read(path=\"a\")]");
        assert_eq!(only(&reply).name, "ws_read", "{prefix}");
        let reply =
            format!("<function={prefix}ws_read>\n<parameter=offset>\n4\n</parameter>\n</function>");
        let call = only(&reply);
        assert_eq!(call.arguments, json!({"offset": 4}), "{prefix}");
    }
    assert_eq!(
        parse(r#"<tool_call>{"name": "other.ws_read", "arguments": {}}</tool_call>"#).unknown,
        ["other.ws_read"]
    );
}

#[test]
fn unknown_names_are_listed_once_in_order() {
    let reply = "<tool_call>{\"name\": \"ws_delete\", \"arguments\": {}}</tool_call>\n[ws_move(src=\"a\", dst=\"b\")]\n<tool_call>{\"name\": \"ws_delete\", \"arguments\": {}}</tool_call>\n<function=ws_delete>\n</function>\n{\"name\": \"ws_run\", \"arguments\": {\"cmd\": \"ls\"}}\n<tool_call>{\"name\": \"ws_read\", \"arguments\": {}}</tool_call>";
    let found = parse(reply);
    assert_eq!(found.unknown, ["ws_delete", "ws_move", "ws_run"]);
    assert_eq!(found.calls.len(), 1);
    assert!(found.unreadable.is_empty());
}

#[test]
fn mixed_formats_come_out_in_text_order() {
    let reply = "a [ws_grep(pattern=\"p\")] b {\"name\": \"ws_read\", \"arguments\": {\"path\": \"x\"}} c\n<tool_call>{\"name\": \"ws_todo\", \"arguments\": {\"items\": []}}</tool_call>\n```json\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"y\"}}\n```\n<function=ws_edit>\n<parameter=path>\nz\n</parameter>\n</function>";
    let found = parse(reply);
    let formats: Vec<_> = found.calls.iter().map(|c| c.format).collect();
    assert_eq!(
        formats,
        [
            CallFormat::Pythonic,
            CallFormat::BareJson,
            CallFormat::Hermes,
            CallFormat::Fenced,
            CallFormat::QwenXml
        ]
    );
    let starts: Vec<_> = found.calls.iter().map(|c| c.span.start).collect();
    assert!(starts.windows(2).all(|w| w[0] < w[1]), "{starts:?}");
    for call in &found.calls {
        let at = &reply[call.span.clone()];
        assert!(["[", "{", "<tool_call>", "```", "<function="]
            .iter()
            .any(|p| at.starts_with(p)));
    }
}

#[test]
fn tags_named_in_prose_are_not_calls() {
    nothing("I'll use `<tool_call>` tags, or `<function=name>` blocks.");
    nothing("Qwen writes <function=foo> blocks and Hermes writes <tool_call> blocks.");
    let found = parse("Models emit <tool_call> blocks when asked.\n<tool_call>{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a\"}}</tool_call>");
    assert_eq!(found.calls.len(), 1);
    assert!(found.unreadable.is_empty());
    let call = only("<tool_call>\nSure:\n<function=ws_read>\n<parameter=path>\na\n</parameter>\n</function>\n</tool_call>");
    assert_eq!(call.format, CallFormat::QwenXml);
}

#[test]
fn code_and_braces_in_prose_are_not_calls() {
    nothing("function f() { return {name: x, args: y}; }");
    nothing("Use {x} and {it's fine} and {\"name\": 1, \"arguments\": 2");
    nothing("for (a in b) { if (c) { d(); } }\nfn main() { let v = vec![1]; }");
    let call = only(
        "Don't worry {it's fine} and {\"name\": \"ws_read\", \"arguments\": {\"path\": \"a\"}}",
    );
    assert_eq!(call.arguments, json!({"path": "a"}));
    let call = only("{name: \"ws_read\", arguments: {path: \"a\"}}");
    assert_eq!(call.repairs, ["unquoted keys"]);
}

// Repairs.

#[test]
fn valid_json_needs_no_repair() {
    assert_eq!(
        repaired(r#" {"a": [1, {"b": null}]} "#),
        (json!({"a": [1, {"b": null}]}), vec![])
    );
    assert_eq!(repaired(""), (json!({}), vec![]));
    assert_eq!(repaired("  \n\t"), (json!({}), vec![]));
}

#[test]
fn repair_each_alone() {
    let cases: &[(&str, Value, &str)] = &[
        (
            r#"{"a": 1, "b": [1, 2,],}"#,
            json!({"a": 1, "b": [1, 2]}),
            "trailing comma",
        ),
        (
            r#"{'a': 'say "hi"', 'b': 'it\'s'}"#,
            json!({"a": "say \"hi\"", "b": "it's"}),
            "single quotes",
        ),
        (
            r#"{"a": True, "b": False, "c": None, "d": "True"}"#,
            json!({"a": true, "b": false, "c": null, "d": "True"}),
            "python literals",
        ),
        (
            "{\"a\": \"l1\nl2\tx\r\"}",
            json!({"a": "l1\nl2\tx\r"}),
            "unescaped newlines",
        ),
        (
            r#"{path: "a", old_str: "b", $x-y: 1}"#,
            json!({"path": "a", "old_str": "b", "$x-y": 1}),
            "unquoted keys",
        ),
        (
            r#"{"a": {"b": [1, 2"#,
            json!({"a": {"b": [1, 2]}}),
            "missing closing brace",
        ),
        (
            r#"{"a": {"b": 1}"#,
            json!({"a": {"b": 1}}),
            "missing closing brace",
        ),
        (
            r#"Arguments: {"path": "a.py"} thanks"#,
            json!({"path": "a.py"}),
            "surrounding text",
        ),
        (
            "```json\n{\"path\": \"a.py\"}\n```",
            json!({"path": "a.py"}),
            "surrounding text",
        ),
        (r#"{"a": 1}}"#, json!({"a": 1}), "surrounding text"),
        (
            r#"{"pattern": "\d+\.rs", "b": "\q"}"#,
            json!({"pattern": "\\d+\\.rs", "b": "\\q"}),
            "invalid escape",
        ),
        (r#"{"a": "it\'s"}"#, json!({"a": "it's"}), "invalid escape"),
        (
            "{\"a\": \"x\u{1}y\"}",
            json!({"a": "x\u{1}y"}),
            "control characters",
        ),
        (
            r#""{\"path\": \"a\"}""#,
            json!({"path": "a"}),
            "arguments as a string",
        ),
    ];
    for (text, want, repair) in cases {
        assert_eq!(repaired(text), (want.clone(), vec![*repair]), "{text}");
    }
}

#[test]
fn repairs_combined() {
    let text = "Here you go: {path: 'src/é.py', force: True, pattern: '\\d+', body: \"l1\nl2\", items: ['a', 'b',]";
    let (value, mut repairs) = repaired(text);
    assert_eq!(
        value,
        json!({"path": "src/é.py", "force": true, "pattern": "\\d+", "body": "l1\nl2", "items": ["a", "b"]})
    );
    repairs.sort_unstable();
    assert_eq!(
        repairs,
        [
            "invalid escape",
            "missing closing brace",
            "python literals",
            "single quotes",
            "surrounding text",
            "trailing comma",
            "unescaped newlines",
            "unquoted keys"
        ]
    );
    let (value, _) = repaired(r#"{'a': "\u00e9", 'b': '\u00e9'}"#);
    assert_eq!(value, json!({"a": "é", "b": "é"}));
}

#[test]
fn repair_refuses_what_is_ambiguous() {
    let err = |t: &str| repair_json_object(t).unwrap_err();
    assert_eq!(
        err("[1, 2]"),
        "arguments must be a JSON object, not an array"
    );
    assert!(err("42").starts_with("arguments must be a JSON object"));
    assert!(err("\"text\"").starts_with("arguments must be a JSON object"));
    assert_eq!(
        err(r#"{"a": 1 "b": 2}"#),
        "expected `,` or `}` at line 1 column 9"
    );
    // Columns point into the text as written, not the repaired text.
    assert_eq!(
        err(r#"{a: 1 "b": 2}"#),
        "expected `,` or `}` at line 1 column 7"
    );
    assert_eq!(
        err("{\n  \"a\": 1\n  \"b\": 2\n}"),
        "expected `,` or `}` at line 3 column 3"
    );
    assert!(err(r#"{"a": "abc"#).starts_with("EOF while parsing a string"));
    assert!(err(r#"{"a":"#).contains("at line 1"));
    // Cut off after a comma: more was coming, so it is not closed for the model.
    assert!(err(r#"{"a": 1,"#).starts_with("trailing comma at line 1"));
    assert!(err(r#"{"a": 'it's'}"#).contains("at line 1"));
    assert!(err(r#"{"a": "print("hi")"}"#).contains("at line 1"));
    assert_eq!(
        err(r#"{"a": 1}, "b": 2}"#),
        "unexpected text after the object at line 1 column 9"
    );
    assert!(err("just words").starts_with("no JSON object found: "));
    // Two objects: which one was meant is not clear.
    assert_eq!(
        err(r#"{"a": 1} {"b": 2}"#),
        "unexpected text after the object at line 1 column 10"
    );
    assert!(err(r#"{"a": undefined}"#).contains("at line 1 column 7"));
}

// Text and robustness.

#[test]
fn multibyte_text_around_and_inside_calls() {
    let reply = "Voilà → je lis le fichier 🦀.\n<tool_call>{\"name\": \"ws_read\", \"arguments\": {\"path\": \"café/é→🦀.py\"}}</tool_call> ✅ fini";
    let call = only(reply);
    assert_eq!(call.arguments, json!({"path": "café/é→🦀.py"}));
    assert!(reply[call.span].starts_with("<tool_call>"));

    let reply =
        "é→🦀 <function=ws_edit>\n<parameter=new_str>\n  « 🦀 »\n</parameter>\n</function> é";
    assert_eq!(only(reply).arguments, json!({"new_str": "  « 🦀 »"}));

    let call = only("→ [ws_grep(pattern='→ 🦀', glob=\"*.é\")] ←");
    assert_eq!(call.arguments, json!({"pattern": "→ 🦀", "glob": "*.é"}));

    let call = only("🦀 {'name': 'ws_read', 'arguments': {'path': 'é→🦀'}} 🦀");
    assert_eq!(call.arguments, json!({"path": "é→🦀"}));

    let err = repair_json_object("{\"é\": 1 \"🦀\": 2}").unwrap_err();
    assert!(err.starts_with("expected `,` or `}` at line 1"));
    let found = parse("```json\n{\"name\": \"ws_read\", \"arguments\": {\"🦀\": é}}\n```");
    assert_eq!(found.unreadable.len(), 1);
}

#[test]
fn every_prefix_of_a_reply_is_safe() {
    let reply = "Plan → read.\n<tool_call>\n{\"name\": \"ws_read\", \"arguments\": {'path': 'é.py',}}\n</tool_call>\n<function=ws_edit>\n<parameter=old_str>\n  🦀\n</parameter>\n</function>\n```json\n{\"tool\": \"ws_grep\", \"args\": {\"pattern\": \"\\d\"}}\n```\n[ws_read(path='''a\nb''', offset=1)] {\"name\": \"ws_todo\", \"arguments\": {\"items\": [\"x\"]}}";
    for (at, _) in reply.char_indices() {
        check(&reply[..at]);
        check(&reply[at..]);
    }
    let found = parse(reply);
    assert_eq!(found.calls.len(), 5, "{found:#?}");
    assert!(found.unknown.is_empty() && found.unreadable.is_empty());
}

/// Parses `text` both ways and checks what must hold for any input.
fn check(text: &str) {
    let found = parse(text);
    for call in &found.calls {
        assert!(call.arguments.is_object(), "{text:?}");
        assert!(text.get(call.span.clone()).is_some(), "{text:?} {call:?}");
        assert!(call.span.start < call.span.end, "{text:?} {call:?}");
    }
    for message in &found.unreadable {
        assert!(!message.contains('\n'), "{message:?}");
    }
    if let Ok((value, _)) = repair_json_object(text) {
        assert!(value.is_object(), "{text:?}");
    }
}

#[test]
fn garbage_never_panics() {
    const PIECES: &[&str] = &[
        "<tool_call>",
        "</tool_call>",
        "<function=",
        "ws_read>",
        "ws_edit",
        "<parameter=",
        "path>",
        "</parameter>",
        "</function>",
        "```",
        "```json\n",
        "```tool_code\n",
        "{",
        "}",
        "[",
        "]",
        "(",
        ")",
        "\"",
        "'",
        "'''",
        "\"\"\"",
        "\\",
        "\\u00",
        "\\x4",
        ":",
        ",",
        "=",
        "name",
        "\"name\"",
        "\"arguments\"",
        "'args'",
        "ws_read(",
        "path=",
        "True",
        "None",
        "\n",
        " ",
        "\t",
        "é",
        "→",
        "🦀",
        "#",
        "1e5",
        "-",
        "_",
        "0",
        "functions.",
        "r'",
        "\"tool\":",
        "\r",
        "\u{0}",
        "<",
        ">",
    ];
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..4000 {
        let mut text = String::new();
        for _ in 0..(next() % 40) {
            let r = next();
            if r % 5 == 0 {
                text.push(char::from_u32((r >> 8) as u32 % 0x3000).unwrap_or('x'));
            } else {
                text.push_str(PIECES[(r >> 8) as usize % PIECES.len()]);
            }
        }
        check(&text);
    }
    let bytes: Vec<u8> = (0..5000).map(|_| next() as u8).collect();
    check(&String::from_utf8_lossy(&bytes));
}

#[test]
fn deep_nesting_is_refused_not_overflowed() {
    for text in [
        "[".repeat(50_000),
        "{".repeat(50_000),
        format!("{{\"a\": {}", "[".repeat(50_000)),
        format!("[ws_read(path={})]", "[".repeat(50_000)),
        format!("<tool_call>{}", "{\"a\":".repeat(20_000)),
        "<tool_call>".repeat(5_000),
        "<function=ws_read><parameter=a>".repeat(5_000),
    ] {
        check(&text);
    }
}
