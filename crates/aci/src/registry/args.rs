//! Arguments as a model sends them, normalized before anything looks at them: aliases
//! resolved to canonical names, values coerced to the declared kinds, unknown keys named in
//! the refusal. The loop guard and the hooks see only the normalized form.

use serde_json::{Map, Value};

use super::{Kind, Param, ToolSpec};
use crate::error::ToolError;

/// Arguments after normalization: canonical names only, values of the declared kinds.
#[derive(Debug, Default)]
pub struct Args(Map<String, Value>, Vec<String>);

impl Args {
    /// A string argument, if given.
    pub fn str(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(Value::as_str)
    }

    /// A whole-number argument, if given.
    pub fn int(&self, name: &str) -> Option<u64> {
        self.0.get(name).and_then(Value::as_u64)
    }

    /// A boolean argument; absent is false.
    pub fn flag(&self, name: &str) -> bool {
        self.0.get(name).and_then(Value::as_bool).unwrap_or(false)
    }

    /// A list-of-strings argument, if given.
    pub fn list(&self, name: &str) -> Option<Vec<&str>> {
        self.0
            .get(name)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
    }

    /// An object argument, if given.
    pub fn object(&self, name: &str) -> Option<&Map<String, Value>> {
        self.0.get(name).and_then(Value::as_object)
    }

    /// Argument names the spec does not know (only for specs that pass them on).
    pub fn unknown(&self) -> &[String] {
        &self.1
    }

    /// The arguments as one JSON object under their canonical names and types: what the
    /// loop guard, the hooks and the trajectory see.
    pub fn canonical(&self) -> Value {
        Value::Object(self.0.clone())
    }

    /// Normalizes raw call arguments against a spec.
    pub fn normalize(spec: &ToolSpec, raw: &Value) -> Result<Args, ToolError> {
        let object = match raw {
            Value::Null => Map::new(),
            Value::Object(o) => o.clone(),
            // Some models double-encode: the arguments arrive as a JSON string of an object.
            Value::String(s) => match serde_json::from_str::<Value>(s) {
                Ok(Value::Object(o)) => o,
                Ok(Value::Null) => Map::new(),
                _ if s.trim().is_empty() => Map::new(),
                _ => return Err(not_an_object(spec)),
            },
            _ => return Err(not_an_object(spec)),
        };

        let mut out = Map::new();
        let mut unknown = Vec::new();
        // Canonical names first, so they win over an alias given alongside.
        for (key, value) in &object {
            if spec.params.iter().any(|p| p.name == key) {
                out.insert(key.clone(), value.clone());
            }
        }
        for (key, value) in &object {
            if spec.params.iter().any(|p| p.name == key) {
                continue;
            }
            match spec
                .params
                .iter()
                .find(|p| p.aliases.contains(&key.as_str()))
            {
                Some(p) => {
                    out.entry(p.name.to_string())
                        .or_insert_with(|| value.clone());
                }
                None => unknown.push(key.clone()),
            }
        }
        if !unknown.is_empty() && !spec.passes_unknown_args {
            return Err(unknown_args_error(spec, &unknown));
        }

        let mut args = Map::new();
        for p in spec.params {
            let value = match out.remove(p.name) {
                None | Some(Value::Null) => None,
                Some(v) => Some(v),
            };
            match value {
                Some(v) => {
                    let v = coerce(p, v).map_err(|got| {
                        ToolError::Args(format!(
                            "{}: \"{}\" must be a {}, got {got}. Example: {} {}",
                            spec.name,
                            p.name,
                            p.kind.describe(),
                            spec.name,
                            spec.example
                        ))
                    })?;
                    args.insert(p.name.into(), v);
                }
                None if p.required => {
                    let what = if p.description.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", p.description)
                    };
                    return Err(ToolError::Args(format!(
                        "{} needs \"{}\" ({}){what}. Example: {} {}",
                        spec.name,
                        p.name,
                        p.kind.describe(),
                        spec.name,
                        spec.example
                    )));
                }
                None => {}
            }
        }
        Ok(Args(args, unknown))
    }
}

/// The refusal for argument names a tool does not take: names them and the accepted ones.
pub fn unknown_args_error(spec: &ToolSpec, unknown: &[String]) -> ToolError {
    let names = unknown
        .iter()
        .map(|k| format!("\"{k}\""))
        .collect::<Vec<_>>()
        .join(", ");
    ToolError::Args(format!(
        "{} does not take {} {names}. It accepts: {}. Example: {} {}",
        spec.name,
        if unknown.len() == 1 {
            "the argument"
        } else {
            "the arguments"
        },
        spec.accepted(),
        spec.name,
        spec.example
    ))
}

fn not_an_object(spec: &ToolSpec) -> ToolError {
    ToolError::Args(format!(
        "{} arguments must be a JSON object, e.g. {} {}",
        spec.name, spec.name, spec.example
    ))
}

/// Converts a value to the parameter's kind where the intent is unambiguous ("120" for a
/// number, "true" for a boolean); otherwise returns a description of what was sent.
fn coerce(p: &Param, v: Value) -> Result<Value, String> {
    let shown = || {
        let s = v.to_string();
        if s.chars().count() > 60 {
            format!("{}…", s.chars().take(60).collect::<String>())
        } else {
            s
        }
    };
    match p.kind {
        Kind::String => match &v {
            Value::String(_) => Ok(v),
            Value::Number(n) => Ok(Value::String(n.to_string())),
            Value::Bool(b) => Ok(Value::String(b.to_string())),
            _ => Err(shown()),
        },
        Kind::Integer { min } => {
            let n = match &v {
                Value::Number(n) => n.as_u64().or_else(|| {
                    n.as_f64()
                        .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                        .map(|f| f as u64)
                }),
                Value::String(s) => s.trim().parse::<u64>().ok(),
                _ => None,
            };
            match n {
                Some(n) if n >= min => Ok(Value::from(n)),
                Some(_) => Err(format!("{} (the smallest allowed is {min})", shown())),
                None if is_negative(&v) => {
                    Err(format!("{} (the smallest allowed is {min})", shown()))
                }
                None => Err(shown()),
            }
        }
        Kind::Boolean => match &v {
            Value::Bool(_) => Ok(v),
            Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
                "true" | "yes" | "1" => Ok(Value::Bool(true)),
                "false" | "no" | "0" => Ok(Value::Bool(false)),
                _ => Err(shown()),
            },
            Value::Number(n) if n.as_u64() == Some(0) => Ok(Value::Bool(false)),
            Value::Number(n) if n.as_u64() == Some(1) => Ok(Value::Bool(true)),
            _ => Err(shown()),
        },
        Kind::Object => match v {
            Value::Object(_) => Ok(v),
            // Double-encoded, as some models send nested arguments.
            Value::String(ref s) => match serde_json::from_str::<Value>(s) {
                Ok(o @ Value::Object(_)) => Ok(o),
                _ => Err(shown()),
            },
            _ => Err(shown()),
        },
        Kind::StringList => match v {
            Value::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    match item {
                        Value::String(s) => out.push(Value::String(s)),
                        Value::Object(o) => out.push(Value::String(checklist_object_text(&o)?)),
                        other => return Err(format!("a list holding {other}")),
                    }
                }
                Ok(Value::Array(out))
            }
            Value::String(s) => Ok(Value::Array(
                s.lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| Value::String(l.to_string()))
                    .collect(),
            )),
            _ => Err(shown()),
        },
    }
}

fn is_negative(v: &Value) -> bool {
    match v {
        Value::Number(n) => {
            n.as_i64().is_some_and(|i| i < 0) || n.as_f64().is_some_and(|f| f < 0.0)
        }
        Value::String(s) => s.trim().starts_with('-'),
        _ => false,
    }
}

/// Models often send checklist items as objects (`{"task": "…", "status": "done"}`); they are
/// turned into the `[x] text` form the checklist keeps.
fn checklist_object_text(o: &Map<String, Value>) -> Result<String, String> {
    let text = ["text", "content", "task", "title", "item", "description"]
        .iter()
        .find_map(|k| o.get(*k).and_then(Value::as_str))
        .ok_or_else(|| {
            format!(
                "an item without text: {} (give each item as a string, e.g. \"[ ] add the flag\")",
                Value::Object(o.clone())
            )
        })?;
    let done = match o
        .get("done")
        .or_else(|| o.get("completed"))
        .or_else(|| o.get("checked"))
    {
        Some(Value::Bool(b)) => *b,
        _ => matches!(
            o.get("status")
                .and_then(Value::as_str)
                .map(str::to_ascii_lowercase)
                .as_deref(),
            Some("done" | "completed" | "complete" | "finished")
        ),
    };
    Ok(format!("[{}] {text}", if done { "x" } else { " " }))
}
