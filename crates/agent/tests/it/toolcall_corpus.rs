//! The tool-call corpus: replies small models wrote, and what [`parse_text_calls`] (or, for
//! an arguments string, [`repair_json_object`]) must make of each. The cases are data so that
//! a reviewer reads a reply as the model wrote it, and a real transcript that went wrong
//! becomes a case by saving two files.
//!
//! Layout, under `tests/toolcall/` (a case's name is its path there without the suffix, e.g.
//! `hermes/call_between_prose`; groups are directories and may nest):
//!
//! - `<group>/<case>.reply.txt`: the model's text exactly as written, byte for byte; nothing
//!   is trimmed and no final newline is added (`.gitattributes` keeps line ends as they are).
//! - `<group>/<case>.expect.json`: what must come of it, compared exactly. Either a parse,
//!   `{"calls": [...], "unknown": [...], "unreadable": [...]}` (all three required), each call
//!   `{"name", "arguments", "format", "span": {"start", "text"}, "repairs"}`, where `format` is
//!   `hermes`, `qwen_xml`, `fenced`, `bare_json`, `pythonic`, `mistral`, `harmony`, `kimi`,
//!   `deepseek`, `dsml`, `minimax`, `gemma`, `olmo`, `apertus`, `glm` or `functionary`,
//!   `span.start` is the call's
//!   byte offset in the reply and `span.text` the reply's text it covers; or a repair of the
//!   reply as an arguments string, `{"repair": {"value": {...}, "repairs": [...]}}` or
//!   `{"repair": {"error": "..."}}`. Either may carry a `"note"` saying why the case exists.
//! - `tools.json`: the tools offered, `[{"name": "ws_read", "params": [["path", "string"],
//!   ...]}]`, kinds being `string`, `integer`, `boolean`, `string_list` and `object`. The one
//!   at the top is the default; a `tools.json` in a group directory is that group's, and a
//!   `<group>/<case>.tools.json` is one case's.
//!
//! `peers/<family>/` holds replies taken from other projects' tool-parser tests (vLLM, SGLang,
//! llama.cpp, Ollama), up to 20 a family, each expectation's `note` naming its source test;
//! their tools are that test's own. Three cases the peers expect otherwise are left out: a
//! FunctionGemma value quoted as a string that vLLM turns into a number with no schema saying
//! so, a Kimi call named only by its index (`0`), and a Functionary v3.2 reply whose first
//! recipient the prompt wrote.
//!
//! A reply with no expectation, an expectation or tools file with no reply, and any other
//! file all fail the run: no data is skipped in silence. Every case runs and every failure is
//! reported, with a line diff of expected and actual; for a reply with no expectation the
//! report holds what the parser made of it, to check by eye and save as `<case>.expect.json`.
//! `TOOLCALL_FILTER=text` runs only the cases whose name contains `text`.
//!
//! The other tests here check what must hold for any input, which no list of cases can
//! show: every prefix and suffix of every reply, generated garbage, and deep nesting.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use slmcode_aci::registry::Kind;
use slmcode_agent::toolcall::{
    parse_text_calls, repair_json_object, CallFormat, OfferedTool, TextCalls,
};

const REPLY: &str = ".reply.txt";
const EXPECT: &str = ".expect.json";
const TOOLS: &str = ".tools.json";
const GROUP_TOOLS: &str = "tools.json";

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/toolcall")
}

/// One case as loaded: its reply, tools and expectation, or why it cannot run.
struct Case {
    name: String,
    reply_path: PathBuf,
    reply: Result<String, String>,
    expect: Option<Result<Value, String>>,
    tools: Result<Vec<OfferedTool>, String>,
}

/// The whole corpus: its cases by name, and the files that belong to no case.
struct Corpus {
    cases: Vec<Case>,
    stray: Vec<String>,
}

/// The files of one case, as found.
#[derive(Default)]
struct Files {
    reply: Option<PathBuf>,
    expect: Option<PathBuf>,
    tools: Option<PathBuf>,
}

/// Every case under the corpus directory, loaded as far as it loads: a broken case is kept
/// with why it is broken, to fail the run with the others.
fn load() -> Corpus {
    let root = corpus_dir();
    let mut files: BTreeMap<String, Files> = BTreeMap::new();
    let mut stray = Vec::new();
    walk(&root, &root, &mut files, &mut stray);
    let cases = files
        .into_iter()
        .map(|(name, f)| {
            let Some(reply_path) = f.reply else {
                let what = if f.expect.is_some() {
                    "an expectation"
                } else {
                    "a tools file"
                };
                return Case {
                    name,
                    reply_path: f.expect.or(f.tools).unwrap_or_default(),
                    reply: Err(format!("{what} with no {REPLY} file")),
                    expect: None,
                    tools: Ok(Vec::new()),
                };
            };
            let reply = std::fs::read(&reply_path)
                .map_err(|e| e.to_string())
                .and_then(|b| String::from_utf8(b).map_err(|e| e.to_string()));
            let expect = f.expect.map(|p| read_json(&p));
            let tools = match f.tools {
                Some(p) => read_tools(&p),
                None => group_tools(&root, &reply_path),
            };
            Case {
                name,
                reply_path,
                reply,
                expect,
                tools,
            }
        })
        .collect();
    Corpus { cases, stray }
}

/// Sorts the files under `dir` into cases by name; what fits no case is `stray`.
fn walk(root: &Path, dir: &Path, files: &mut BTreeMap<String, Files>, stray: &mut Vec<String>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let rel = path
            .strip_prefix(root)
            .expect("under the corpus")
            .to_string_lossy()
            .replace('\\', "/");
        let file_name = path
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        if path.is_dir() {
            walk(root, &path, files, stray);
            continue;
        }
        if file_name == GROUP_TOOLS || file_name == ".gitattributes" {
            continue;
        }
        if let Some(name) = rel.strip_suffix(REPLY) {
            files.entry(name.to_string()).or_default().reply = Some(path);
        } else if let Some(name) = rel.strip_suffix(EXPECT) {
            files.entry(name.to_string()).or_default().expect = Some(path);
        } else if let Some(name) = rel.strip_suffix(TOOLS) {
            files.entry(name.to_string()).or_default().tools = Some(path);
        } else {
            stray.push(rel);
        }
    }
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The tools of the nearest `tools.json` from the reply's directory up to the corpus root.
fn group_tools(root: &Path, reply: &Path) -> Result<Vec<OfferedTool>, String> {
    let mut dir = reply.parent();
    while let Some(d) = dir {
        let file = d.join(GROUP_TOOLS);
        if file.is_file() {
            return read_tools(&file);
        }
        if d == root {
            break;
        }
        dir = d.parent();
    }
    Err(format!("no {GROUP_TOOLS} at {}", root.display()))
}

fn read_tools(path: &Path) -> Result<Vec<OfferedTool>, String> {
    let bad = |why: &str| format!("{}: {why}", path.display());
    let Value::Array(tools) = read_json(path)? else {
        return Err(bad("not a list of tools"));
    };
    tools
        .iter()
        .map(|t| {
            let name = t["name"]
                .as_str()
                .ok_or_else(|| bad("a tool without a name"))?;
            let params = t["params"]
                .as_array()
                .ok_or_else(|| bad("a tool without params"))?
                .iter()
                .map(|p| match (p[0].as_str(), p[1].as_str().map(kind)) {
                    (Some(param), Some(Some(kind))) => Ok((param.to_string(), kind)),
                    _ => Err(bad(&format!("{p} is not [name, kind]"))),
                })
                .collect::<Result<_, _>>()?;
            Ok(OfferedTool {
                name: name.to_string(),
                params,
            })
        })
        .collect()
}

fn kind(name: &str) -> Option<Kind> {
    Some(match name {
        "string" => Kind::String,
        "integer" => Kind::Integer { min: 0 },
        "boolean" => Kind::Boolean,
        "string_list" => Kind::StringList,
        "object" => Kind::Object,
        _ => return None,
    })
}

fn format_name(format: CallFormat) -> &'static str {
    match format {
        CallFormat::Hermes => "hermes",
        CallFormat::QwenXml => "qwen_xml",
        CallFormat::Fenced => "fenced",
        CallFormat::BareJson => "bare_json",
        CallFormat::Pythonic => "pythonic",
        CallFormat::Mistral => "mistral",
        CallFormat::Harmony => "harmony",
        CallFormat::Kimi => "kimi",
        CallFormat::DeepSeek => "deepseek",
        CallFormat::Dsml => "dsml",
        CallFormat::MiniMax => "minimax",
        CallFormat::Gemma => "gemma",
        CallFormat::Olmo => "olmo",
        CallFormat::Apertus => "apertus",
        CallFormat::Glm => "glm",
        CallFormat::Functionary => "functionary",
    }
}

/// What the parser made of `reply`, in the expectation's shape.
fn parsed(reply: &str, found: &TextCalls) -> Value {
    let calls: Vec<Value> = found
        .calls
        .iter()
        .map(|c| {
            json!({
                "name": c.name,
                "arguments": c.arguments,
                "format": format_name(c.format),
                "span": {"start": c.span.start, "text": reply.get(c.span.clone())},
                "repairs": c.repairs,
            })
        })
        .collect();
    json!({"calls": calls, "unknown": found.unknown, "unreadable": found.unreadable})
}

/// What the repair made of `text`, in the expectation's shape.
fn repaired(text: &str) -> Value {
    let result = match repair_json_object(text) {
        Ok((value, repairs)) => json!({"value": value, "repairs": repairs}),
        Err(error) => json!({"error": error}),
    };
    json!({ "repair": result })
}

/// Runs one case: what it must produce (the expectation without its note) and what it did.
fn run(case: &Case, reply: &str, tools: &[OfferedTool]) -> Result<(Value, Value), String> {
    let Some(expect) = &case.expect else {
        let actual = parsed(reply, &parse_text_calls(reply, tools));
        let shown = serde_json::to_string_pretty(&actual).unwrap_or_default();
        return Err(format!("no {EXPECT} file; the parser made of it:\n{shown}"));
    };
    let mut expect = expect.clone()?;
    let Some(fields) = expect.as_object_mut() else {
        return Err("the expectation is not a JSON object".to_string());
    };
    if fields.remove("note").is_some_and(|n| !n.is_string()) {
        return Err("\"note\" is not a string".to_string());
    }
    let keys: Vec<&str> = fields.keys().map(String::as_str).collect();
    let actual = match keys.as_slice() {
        ["repair"] => repaired(reply),
        _ => {
            let mut sorted = keys.clone();
            sorted.sort_unstable();
            if sorted != ["calls", "unknown", "unreadable"] {
                return Err(format!(
                    "the expectation has keys {keys:?}: a parse needs \"calls\", \"unknown\" and \
                     \"unreadable\", a repair only \"repair\" (and either may have a \"note\")"
                ));
            }
            parsed(reply, &parse_text_calls(reply, tools))
        }
    };
    Ok((expect, actual))
}

#[test]
fn corpus() {
    let corpus = load();
    let filter = std::env::var("TOOLCALL_FILTER").unwrap_or_default();
    let mut report = String::new();
    for rel in &corpus.stray {
        let _ = writeln!(
            report,
            "--- {rel}: not part of a case (a case is <name>{REPLY} + <name>{EXPECT}, with an \
             optional <name>{TOOLS}; a group's tools are {GROUP_TOOLS})\n"
        );
    }
    let mut failed = 0;
    let mut ran = 0;
    for case in corpus.cases.iter().filter(|c| c.name.contains(&filter)) {
        ran += 1;
        let outcome = case
            .reply
            .as_ref()
            .map_err(String::clone)
            .and_then(|reply| {
                let tools = case.tools.as_ref().map_err(String::clone)?;
                run(case, reply, tools)
            });
        let problem = match outcome {
            Ok((expect, actual)) if expect == actual => continue,
            Ok((expect, actual)) => diff(&expect, &actual),
            Err(why) => why,
        };
        failed += 1;
        let _ = writeln!(report, "--- {} ({})", case.name, case.reply_path.display());
        if let Some(Ok(note)) = &case.expect {
            if let Some(note) = note.get("note").and_then(Value::as_str) {
                let _ = writeln!(report, "note: {note}");
            }
        }
        if let Ok(reply) = &case.reply {
            let _ = writeln!(report, "reply: {}", shorten(reply));
        }
        let _ = writeln!(report, "{problem}\n");
    }
    assert!(
        ran > 0,
        "no toolcall corpus case matches TOOLCALL_FILTER={filter:?} under {}",
        corpus_dir().display()
    );
    assert!(
        report.is_empty(),
        "{failed} of {ran} toolcall corpus cases failed ({} stray files):\n\n{report}",
        corpus.stray.len()
    );
}

/// `text` quoted, its start only when it is long.
fn shorten(text: &str) -> String {
    const MAX: usize = 400;
    match text.char_indices().nth(MAX) {
        Some((at, _)) => format!("{:?}… ({} bytes)", &text[..at], text.len()),
        None => format!("{text:?}"),
    }
}

/// A line diff of two values, pretty-printed with their keys sorted: `-` lines are expected
/// only, `+` lines actual only.
fn diff(expect: &Value, actual: &Value) -> String {
    let pretty = |v: &Value| serde_json::to_string_pretty(&sorted(v)).unwrap_or_default();
    let (a, b) = (pretty(expect), pretty(actual));
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    // Longest common subsequence, by the classic table.
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut out = String::from("expected (-) and actual (+) differ:\n");
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            let _ = writeln!(out, "  {}", a[i]);
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            let _ = writeln!(out, "- {}", a[i]);
            i += 1;
        } else {
            let _ = writeln!(out, "+ {}", b[j]);
            j += 1;
        }
    }
    out
}

/// `v` with every object's keys in order, so a diff shows only real differences.
fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                out.insert(k.clone(), sorted(&m[k]));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        _ => v.clone(),
    }
}

/// The default tools, from the corpus's top `tools.json`.
fn default_tools() -> Vec<OfferedTool> {
    read_tools(&corpus_dir().join(GROUP_TOOLS)).unwrap_or_else(|e| panic!("{e}"))
}

/// Parses `text` both ways and checks what must hold for any input.
fn check(text: &str, tools: &[OfferedTool]) {
    let found = parse_text_calls(text, tools);
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
fn every_prefix_and_suffix_of_every_reply_is_safe() {
    let corpus = load();
    let mut checked = 0;
    for case in &corpus.cases {
        // A case that does not load fails the corpus test; here it has nothing to check.
        let (Ok(reply), Ok(tools)) = (&case.reply, &case.tools) else {
            continue;
        };
        for (at, _) in reply.char_indices() {
            check(&reply[..at], tools);
            check(&reply[at..], tools);
        }
        checked += 1;
    }
    assert!(checked > 0, "no reply under {}", corpus_dir().display());
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
    let tools = default_tools();
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
        check(&text, &tools);
    }
    let bytes: Vec<u8> = (0..5000).map(|_| next() as u8).collect();
    check(&String::from_utf8_lossy(&bytes), &tools);
}

#[test]
fn deep_nesting_is_refused_not_overflowed() {
    let tools = default_tools();
    for text in [
        "[".repeat(50_000),
        "{".repeat(50_000),
        format!("{{\"a\": {}", "[".repeat(50_000)),
        format!("[ws_read(path={})]", "[".repeat(50_000)),
        format!("<tool_call>{}", "{\"a\":".repeat(20_000)),
        "<tool_call>".repeat(5_000),
        "<function=ws_read><parameter=a>".repeat(5_000),
    ] {
        check(&text, &tools);
    }
}
