//! Whether a JSON value is a tool call, and which offered tool a written name means. Models
//! name the tool and its arguments under many keys, wrap calls in `function` or `tool_calls`,
//! and put namespaces before names; data objects and echoed schemas must not pass for calls.

use serde_json::{Map, Value};

use super::json_repair::note;
use super::lex::skip_ws;
use super::repair_json_object;
use super::OfferedTool;

/// Keys that name the tool in a JSON call object, in order of preference.
pub(super) const NAME_KEYS: &[&str] = &["name", "tool", "tool_name", "function"];

/// Keys that hold the arguments in a JSON call object, in order of preference.
pub(super) const ARGS_KEYS: &[&str] = &["arguments", "parameters", "args", "tool_input", "input"];

/// Other keys a bare or fenced call object may carry and still count as a call.
pub(super) const EXTRA_KEYS: &[&str] = &[
    "type",
    "id",
    "call_id",
    "index",
    "thought",
    "thoughts",
    "reason",
    "reasoning",
    "explanation",
    // Cohere Command R7B's action list: `{"tool_call_id": "0", "tool_name": …, "parameters": …}`.
    "tool_call_id",
];

/// Namespaces models put before a tool name.
const NAME_PREFIXES: &[&str] = &["functions.", "function.", "tools.", "tool.", "default_api."];

/// What a JSON value is, read as a call object.
pub(super) enum Classified {
    NotCall,
    Call {
        name: String,
        args: Value,
        repairs: Vec<&'static str>,
    },
    /// A call attempt that cannot be run; the text completes "a … block ".
    Broken(String),
}

/// The calls in a value: the elements of an array, the `tool_calls` of a message object, or
/// the value itself.
pub(super) fn classify_all(v: &Value, strict: bool) -> Vec<Classified> {
    match v {
        Value::Array(items) if !items.is_empty() => {
            items.iter().map(|item| classify(item, strict)).collect()
        }
        Value::Object(obj) => match obj.get("tool_calls") {
            Some(Value::Array(items)) if !items.is_empty() => {
                items.iter().map(|item| classify(item, strict)).collect()
            }
            _ => vec![classify(v, strict)],
        },
        _ => vec![classify(v, strict)],
    }
}

/// Reads `v` as a call object. `strict` (bare JSON, JSON fences) wants a name key, an
/// arguments key and no unrelated keys, so data objects are not taken for calls; inside a
/// tag anything goes, and what cannot be run is `Broken`.
fn classify(v: &Value, strict: bool) -> Classified {
    let Some(obj) = v.as_object() else {
        return if strict {
            Classified::NotCall
        } else {
            Classified::Broken("that is not a JSON object".to_string())
        };
    };
    if let Some(Value::Object(inner)) = obj.get("function") {
        if strict
            && obj
                .keys()
                .any(|k| k != "function" && !EXTRA_KEYS.contains(&k.as_str()))
        {
            return Classified::NotCall;
        }
        return classify_fields(inner, strict, true);
    }
    classify_fields(obj, strict, false)
}

fn classify_fields(obj: &Map<String, Value>, strict: bool, wrapped: bool) -> Classified {
    let name = NAME_KEYS.iter().find_map(|k| obj.get(*k));
    let args_key = ARGS_KEYS.iter().copied().find(|k| obj.contains_key(*k));
    if strict {
        let other = |k: &String| {
            let k = k.as_str();
            !NAME_KEYS.contains(&k) && !ARGS_KEYS.contains(&k) && !EXTRA_KEYS.contains(&k)
        };
        if name.is_none() || args_key.is_none() || obj.keys().any(other) {
            return Classified::NotCall;
        }
    }
    let name = match name {
        Some(Value::String(s)) => s.trim().to_string(),
        Some(_) if strict => return Classified::NotCall,
        Some(_) => return Classified::Broken("whose \"name\" is not a string".to_string()),
        None => return Classified::Broken("with no \"name\"".to_string()),
    };
    if !is_tool_name(&name) {
        return if strict {
            Classified::NotCall
        } else {
            Classified::Broken(format!("whose name {name:?} is not a tool name"))
        };
    }
    let call = |args: Value, repairs: Vec<&'static str>| Classified::Call {
        name: name.clone(),
        args,
        repairs,
    };
    match args_key.and_then(|k| obj.get(k)) {
        None | Some(Value::Null) => call(Value::Object(Map::new()), Vec::new()),
        Some(Value::Object(m)) if strict && looks_like_schema(m) => Classified::NotCall,
        Some(Value::Object(m)) => call(Value::Object(m.clone()), Vec::new()),
        Some(Value::String(s)) => match repair_json_object(s) {
            Ok((args, mut repairs)) => {
                if !wrapped {
                    note(&mut repairs, "arguments as a string");
                }
                call(args, repairs)
            }
            Err(e) => Classified::Broken(format!(
                "for {name} whose arguments string could not be read: {e}"
            )),
        },
        Some(_) => Classified::Broken(format!("for {name} whose arguments are not a JSON object")),
    }
}

/// Whether an "arguments" object is a tool's parameter schema, echoed rather than called.
fn looks_like_schema(m: &Map<String, Value>) -> bool {
    m.get("type").and_then(Value::as_str) == Some("object") && m.contains_key("properties")
}

/// The offered tool `name` stands for: exactly, or with a namespace prefix removed.
pub(super) fn resolve<'o>(name: &str, offered: &'o [OfferedTool]) -> Option<&'o OfferedTool> {
    let name = name.trim();
    offered.iter().find(|t| t.name == name).or_else(|| {
        let base = base_name(name);
        offered.iter().find(|t| t.name == base)
    })
}

pub(super) fn base_name(name: &str) -> &str {
    NAME_PREFIXES
        .iter()
        .find_map(|p| name.strip_prefix(p))
        .unwrap_or(name)
}

/// Whether `name` could be a tool's name at all (not prose, not a path).
pub(super) fn is_tool_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && b.first()
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b':'))
}

pub(super) fn is_snake(name: &str) -> bool {
    let b = name.as_bytes();
    b.first().is_some_and(u8::is_ascii_lowercase)
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
}

/// Whether `text` has a name key with a string value and an arguments key, quoted or not.
pub(super) fn looks_like_call(text: &str) -> bool {
    !key_offsets(text, NAME_KEYS, true).is_empty()
        && !key_offsets(text, ARGS_KEYS, false).is_empty()
}

/// Where `keys` appear in `text` as object keys (`"key":`, `'key':` or `key:`), with a
/// quoted value if `string`; in order.
pub(super) fn key_offsets(text: &str, keys: &[&str], string: bool) -> Vec<usize> {
    let mut offsets: Vec<usize> = keys
        .iter()
        .flat_map(|key| key_matches(text, key, string))
        .collect();
    offsets.sort_unstable();
    offsets
}

fn key_matches<'t>(text: &'t str, key: &'t str, string: bool) -> impl Iterator<Item = usize> + 't {
    let b = text.as_bytes();
    text.match_indices(key)
        .map(|(at, _)| at)
        .filter(move |&at| {
            let before = at.checked_sub(1).and_then(|p| b.get(p)).copied();
            let after = at + key.len();
            let colon_from = match (before, b.get(after).copied()) {
                (Some(q @ (b'"' | b'\'')), Some(c)) if c == q => after + 1,
                (Some(c), _) if c == b'{' || c == b',' || c.is_ascii_whitespace() => after,
                _ => return false,
            };
            let colon = skip_ws(b, colon_from);
            b.get(colon) == Some(&b':')
                && (!string || matches!(b.get(skip_ws(b, colon + 1)), Some(b'"' | b'\'')))
        })
}
