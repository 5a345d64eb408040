//! The config keys as data: each key's name, how its value is read and checked, and where it
//! goes in [`Config`]. One row per key, so a new setting is one row (and a test), and loading,
//! showing and tightening all read the same table.

use super::*;

/// How a key's value is read and where it goes.
pub(super) enum Slot {
    Count {
        min: usize,
        max: usize,
        field: fn(&mut Config) -> &mut usize,
    },
    Flag(fn(&mut Config) -> &mut bool),
    Mode,
    /// A list of globs (a YAML list, or a comma-separated string from the environment).
    Globs(fn(&mut Config) -> &mut Vec<String>),
    /// A list of strings, read the same way.
    Strings(fn(&mut Config) -> &mut Vec<String>),
    /// A list of paths, each under the home (`~/…`) or absolute, none with `..`.
    ReadPaths(fn(&mut Config) -> &mut Vec<String>),
    ShellPermission,
    /// `auto`, `landlock` or `off`.
    Sandbox,
    ShellNetwork,
    /// A non-empty string.
    Text(fn(&mut Config) -> &mut Option<String>),
    /// A sampling setting: a number in `min..=max`, or `server` (send none: the server's or
    /// the Modelfile's own applies). Kept in `Config::sampling` under the key's name.
    Sample {
        min: f64,
        max: f64,
    },
    /// One of a few words (any case), stored as given in the list.
    Choice {
        options: &'static [&'static str],
        field: fn(&mut Config) -> &mut &'static str,
    },
    /// A size in bytes: a number, or text with a binary unit (`512M`, `2GiB`).
    Bytes {
        min: u64,
        field: fn(&mut Config) -> &mut u64,
    },
}

pub(super) struct Key {
    pub(super) name: &'static str,
    pub(super) slot: Slot,
}

pub(super) const KEYS: &[Key] = &[
    Key {
        name: "max_tool_chars",
        slot: Slot::Count {
            min: MIN_MAX_TOOL_CHARS,
            max: 10_000_000,
            field: |c| &mut c.max_tool_chars,
        },
    },
    Key {
        name: "read_window_lines",
        slot: Slot::Count {
            min: 1,
            max: 100_000,
            field: |c| &mut c.read_window_lines,
        },
    },
    Key {
        name: "context_window",
        slot: Slot::Count {
            min: 512,
            max: 100_000_000,
            field: |c| &mut c.context_window,
        },
    },
    Key {
        name: "read_before_edit",
        slot: Slot::Flag(|c| &mut c.read_before_edit),
    },
    Key {
        name: "over_edit_guard",
        slot: Slot::Flag(|c| &mut c.over_edit_guard),
    },
    Key {
        name: "permission_mode",
        slot: Slot::Mode,
    },
    Key {
        name: "disable_syntax_check",
        slot: Slot::Flag(|c| &mut c.disable_syntax_check),
    },
    Key {
        name: "file_checkpoints",
        slot: Slot::Flag(|c| &mut c.file_checkpoints),
    },
    Key {
        name: "checkpoint_max_bytes",
        slot: Slot::Bytes {
            min: 0,
            field: |c| &mut c.checkpoint_max_bytes,
        },
    },
    Key {
        name: "focus",
        slot: Slot::Globs(|c| &mut c.focus),
    },
    Key {
        name: "protect",
        slot: Slot::Globs(|c| &mut c.protect),
    },
    Key {
        name: "shell_timeout",
        slot: Slot::Count {
            min: 1,
            max: 86_400,
            field: |c| &mut c.shell_timeout,
        },
    },
    Key {
        name: "shell_timeout_max",
        slot: Slot::Count {
            min: 1,
            max: 86_400,
            field: |c| &mut c.shell_timeout_max,
        },
    },
    Key {
        name: "shell_allow",
        slot: Slot::Strings(|c| &mut c.shell_allow),
    },
    Key {
        name: "shell_read_allow",
        slot: Slot::ReadPaths(|c| &mut c.shell_read_allow),
    },
    Key {
        name: "shell_permission",
        slot: Slot::ShellPermission,
    },
    Key {
        name: "sandbox",
        slot: Slot::Sandbox,
    },
    Key {
        name: "shell_network",
        slot: Slot::ShellNetwork,
    },
    Key {
        name: "shell_memory_max",
        slot: Slot::Bytes {
            min: 16 << 20,
            field: |c| &mut c.shell_memory_max,
        },
    },
    Key {
        name: "model",
        slot: Slot::Text(|c| &mut c.model),
    },
    Key {
        name: "plan_model",
        slot: Slot::Text(|c| &mut c.plan_model),
    },
    Key {
        name: "edit_model",
        slot: Slot::Text(|c| &mut c.edit_model),
    },
    Key {
        name: "max_turns",
        slot: Slot::Count {
            min: 1,
            max: 1000,
            field: |c| &mut c.max_turns,
        },
    },
    Key {
        name: "endpoint",
        slot: Slot::Text(|c| &mut c.endpoint),
    },
    Key {
        name: "api_key_env",
        slot: Slot::Text(|c| &mut c.api_key_env),
    },
    Key {
        name: "max_tokens",
        slot: Slot::Count {
            min: 64,
            max: 1_000_000,
            field: |c| &mut c.max_tokens,
        },
    },
    Key {
        name: "verify",
        slot: Slot::Text(|c| &mut c.verify),
    },
    Key {
        name: "verify_retries",
        slot: Slot::Count {
            min: 0,
            max: 10,
            field: |c| &mut c.verify_retries,
        },
    },
    Key {
        name: "runaway_loop_chars",
        slot: Slot::Count {
            min: 0,
            max: 1_000_000,
            field: |c| &mut c.runaway_loop_chars,
        },
    },
    Key {
        name: "runaway_text_chars",
        slot: Slot::Count {
            min: 0,
            max: 10_000_000,
            field: |c| &mut c.runaway_text_chars,
        },
    },
    Key {
        name: "temperature",
        slot: Slot::Sample { min: 0.0, max: 5.0 },
    },
    Key {
        name: "top_p",
        slot: Slot::Sample { min: 0.0, max: 1.0 },
    },
    Key {
        name: "top_k",
        slot: Slot::Sample {
            min: 0.0,
            max: 1000.0,
        },
    },
    Key {
        name: "min_p",
        slot: Slot::Sample { min: 0.0, max: 1.0 },
    },
    Key {
        name: "repeat_penalty",
        slot: Slot::Sample { min: 0.0, max: 5.0 },
    },
    Key {
        name: "presence_penalty",
        slot: Slot::Sample {
            min: -2.0,
            max: 2.0,
        },
    },
    Key {
        name: "seed",
        slot: Slot::Sample {
            min: 0.0,
            max: 4294967295.0,
        },
    },
    Key {
        name: "first_token_timeout",
        slot: Slot::Count {
            min: 1,
            max: 86_400,
            field: |c| &mut c.first_token_timeout,
        },
    },
    Key {
        name: "reply_timeout",
        slot: Slot::Count {
            min: 1,
            max: 86_400,
            field: |c| &mut c.reply_timeout,
        },
    },
    Key {
        name: "repo_map_tokens",
        slot: Slot::Count {
            min: 0,
            max: 32_768,
            field: |c| &mut c.repo_map_tokens,
        },
    },
    Key {
        name: "think",
        slot: Slot::Choice {
            options: &["auto", "on", "off", "low", "medium", "high"],
            field: |c| &mut c.think,
        },
    },
    Key {
        name: "think_budget",
        slot: Slot::Count {
            min: 0,
            max: 1_000_000,
            field: |c| &mut c.think_budget,
        },
    },
    Key {
        name: "tool_mode",
        slot: Slot::Choice {
            options: &["auto", "native", "text"],
            field: |c| &mut c.tool_mode,
        },
    },
];

impl Key {
    /// The key's current value, as a config file would write it.
    pub(super) fn show(&self, config: &Config) -> String {
        let mut c = config.clone();
        match &self.slot {
            Slot::Count { field, .. } => field(&mut c).to_string(),
            Slot::Flag(field) => field(&mut c).to_string(),
            Slot::Mode => match c.permission_mode {
                PermissionMode::Auto => "auto",
                PermissionMode::DryRun => "dry-run",
                PermissionMode::Review => "review",
            }
            .into(),
            Slot::ShellPermission => match c.shell_permission {
                ShellPermission::Allow => "allow",
                ShellPermission::Ask => "ask",
                ShellPermission::Deny => "deny",
            }
            .into(),
            Slot::Sandbox => c.sandbox.name().into(),
            Slot::ShellNetwork => c.shell_network.name().into(),
            Slot::Text(field) => field(&mut c).clone().unwrap_or_else(|| "(none)".into()),
            Slot::Choice { field, .. } => (*field(&mut c)).to_string(),
            Slot::Sample { .. } => match c.sampling.get(self.name) {
                Some(Sample::Server) => "server".into(),
                Some(Sample::Value(v)) => v.to_string(),
                None => "(the model's default)".into(),
            },
            Slot::Strings(field) | Slot::Globs(field) | Slot::ReadPaths(field) => {
                serde_json::to_string(field(&mut c)).unwrap_or_default()
            }
            Slot::Bytes { field, .. } => show_bytes(*field(&mut c)),
        }
    }

    /// Sets this key from a YAML value; environment values arrive as strings and are read the
    /// same way.
    pub(super) fn apply(
        &self,
        config: &mut Config,
        value: &serde_json::Value,
        source: &str,
    ) -> Result<(), ConfigError> {
        let text = value.as_str().map(str::trim);
        let bad = |expected: String| ConfigError::Value {
            source_name: source.to_string(),
            key: self.name,
            expected,
            got: value.to_string(),
        };
        match &self.slot {
            Slot::Count { min, max, field } => {
                let n = value
                    .as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .or_else(|| text.and_then(|t| t.parse().ok()))
                    .filter(|n| (*min..=*max).contains(n))
                    .ok_or_else(|| bad(format!("a whole number from {min} to {max}")))?;
                *field(config) = n;
            }
            Slot::Flag(field) => {
                let b = value
                    .as_bool()
                    .or_else(|| match text.map(str::to_ascii_lowercase).as_deref() {
                        Some("true" | "yes" | "on" | "1") => Some(true),
                        Some("false" | "no" | "off" | "0") => Some(false),
                        _ => None,
                    })
                    .ok_or_else(|| bad("true or false".to_string()))?;
                *field(config) = b;
            }
            Slot::Mode => {
                config.permission_mode = text
                    .and_then(PermissionMode::parse)
                    .ok_or_else(|| bad("one of auto, dry-run, review".to_string()))?;
            }
            Slot::ShellPermission => {
                config.shell_permission = match text.map(str::to_ascii_lowercase).as_deref() {
                    Some("allow") => ShellPermission::Allow,
                    Some("ask") => ShellPermission::Ask,
                    Some("deny") => ShellPermission::Deny,
                    _ => return Err(bad("one of allow, ask, deny".to_string())),
                };
            }
            Slot::Sandbox => {
                // YAML reads a bare `off` as false.
                config.sandbox = match (
                    value.as_bool(),
                    text.map(str::to_ascii_lowercase).as_deref(),
                ) {
                    (Some(true), _) | (_, Some("auto") | Some("on")) => SandboxMode::Auto,
                    (_, Some("landlock")) => SandboxMode::Landlock,
                    (Some(false), _) | (_, Some("off")) => SandboxMode::Off,
                    _ => return Err(bad("one of auto, landlock, off".to_string())),
                };
            }
            Slot::ShellNetwork => {
                config.shell_network = match (
                    value.as_bool(),
                    text.map(str::to_ascii_lowercase).as_deref(),
                ) {
                    (Some(false), _) | (_, Some("deny") | Some("off")) => ShellNetwork::Deny,
                    (_, Some("loopback")) => ShellNetwork::Loopback,
                    (Some(true), _) | (_, Some("allow") | Some("on")) => ShellNetwork::Allow,
                    _ => return Err(bad("one of deny, loopback, allow".to_string())),
                };
            }
            Slot::Bytes { min, field } => {
                let expected = || {
                    bad(format!(
                        "a size in bytes of at least {}, e.g. 512MiB or 2G",
                        show_bytes(*min)
                    ))
                };
                let n = match value.as_u64() {
                    Some(n) => n,
                    None => parse_size::Config::new()
                        .with_binary()
                        .parse_size(text.ok_or_else(expected)?)
                        .map_err(|_| expected())?,
                };
                if n < *min {
                    return Err(expected());
                }
                *field(config) = n;
            }
            Slot::Sample { min, max } => {
                let expected = || bad(format!("a number from {min} to {max}, or server"));
                let sample = match (value.as_f64(), text.map(str::to_ascii_lowercase)) {
                    (_, Some(t)) if t == "server" => Sample::Server,
                    (Some(v), _) => Sample::Value(v),
                    (None, Some(t)) => t
                        .parse::<f64>()
                        .map(Sample::Value)
                        .map_err(|_| expected())?,
                    (None, None) => return Err(expected()),
                };
                if let Sample::Value(v) = sample {
                    if !(*min..=*max).contains(&v) {
                        return Err(expected());
                    }
                }
                config.sampling.insert(self.name, sample);
            }
            Slot::Choice { options, field } => {
                let t = text.map(str::to_ascii_lowercase);
                *field(config) = options
                    .iter()
                    .find(|o| Some(**o) == t.as_deref())
                    .copied()
                    .ok_or_else(|| bad(format!("one of {}", options.join(", "))))?;
            }
            Slot::Text(field) => {
                let t = text
                    .filter(|t| !t.is_empty())
                    .ok_or_else(|| bad("a non-empty string".to_string()))?;
                *field(config) = Some(t.to_string());
            }
            Slot::Strings(field) => {
                *field(config) = string_list(value)
                    .ok_or_else(|| bad("a list of strings, e.g. [\"make test\"]".to_string()))?;
            }
            Slot::ReadPaths(field) => {
                let paths = string_list(value)
                    .filter(|paths| paths.iter().all(|p| read_path_ok(p)))
                    .ok_or_else(|| {
                        bad("a list of paths under your home (~/.cargo) or absolute (/srv/data), without ..".to_string())
                    })?;
                *field(config) = paths;
            }
            Slot::Globs(field) => {
                let expected =
                    || bad("a list of globs, e.g. [\"src/**\", \"tests/**\"]".to_string());
                let globs: Vec<String> = match value {
                    serde_json::Value::Array(items) => items
                        .iter()
                        .map(|i| i.as_str().map(str::to_string))
                        .collect::<Option<_>>()
                        .ok_or_else(expected)?,
                    serde_json::Value::String(s) => s
                        .split(',')
                        .map(|g| g.trim().to_string())
                        .filter(|g| !g.is_empty())
                        .collect(),
                    serde_json::Value::Null => Vec::new(),
                    _ => return Err(expected()),
                };
                for g in &globs {
                    globset::Glob::new(g).map_err(|e| bad(format!("valid globs ({e})")))?;
                }
                *field(config) = globs;
            }
        }
        config.origins.insert(self.name, source.to_string());
        Ok(())
    }
}

/// A YAML list of strings, or one comma-separated string (from the environment).
pub(super) fn string_list(value: &serde_json::Value) -> Option<Vec<String>> {
    match value {
        serde_json::Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().map(|s| s.trim().to_string()))
            .collect(),
        serde_json::Value::String(s) => Some(
            s.split(',')
                .map(|g| g.trim().to_string())
                .filter(|g| !g.is_empty())
                .collect(),
        ),
        serde_json::Value::Null => Some(Vec::new()),
        _ => None,
    }
}

/// An entry of `shell_read_allow`: `~`, `~/…` or absolute, with no `..` (what it names is what
/// `slmcode doctor` shows, not a path that climbs out of it).
fn read_path_ok(path: &str) -> bool {
    let rest = match path.strip_prefix('~') {
        Some("") => return true,
        Some(rest) if rest.starts_with('/') => rest,
        Some(_) => return false,
        None if path.starts_with('/') => path,
        None => return false,
    };
    !rest.split('/').any(|c| c == "..")
}
