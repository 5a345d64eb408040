//! Tool limits: built-in defaults, then `.slmcode/config.yaml` in the project, then `SLMCODE_*`
//! environment variables. A bad value is an error that names the key and what it takes — a
//! silently ignored limit is worse than a refusal to start. An unknown key is only a warning,
//! naming the known ones, so a config written for a newer slmcode still loads.

use std::collections::BTreeMap;

use crate::output::MIN_MAX_TOOL_CHARS;
use crate::path::{Jail, PathError, RelPath};

/// The project config file, relative to the root: `layout::path(layout::CONFIG)` spelled out
/// as a constant for messages (a test keeps the two the same).
pub const CONFIG_PATH: &str = ".slmcode/config.yaml";

/// What a write does: the permission mode of the one mutation path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PermissionMode {
    /// Writes go to disk.
    #[default]
    Auto,
    /// Writes are reported (with a diff) and nothing is written.
    DryRun,
    /// Writes are staged under `.slmcode/pending/` for `slmcode pending apply`.
    Review,
}

impl PermissionMode {
    fn parse(s: &str) -> Option<PermissionMode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(PermissionMode::Auto),
            "dry-run" | "dry_run" | "dryrun" => Some(PermissionMode::DryRun),
            "review" => Some(PermissionMode::Review),
            _ => None,
        }
    }
}

/// The limits and switches the tools run under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Every result is capped at this many characters (~4 chars a token).
    pub max_tool_chars: usize,
    /// Lines in a ws_read window when the call gives no `limit`.
    pub read_window_lines: usize,
    /// The model's context window in tokens; one ws_read may use about 15% of it.
    pub context_window: usize,
    /// Editing or overwriting a file needs a ws_read of it in this session.
    pub read_before_edit: bool,
    /// An edit or patch that replaces most of a file is refused in favour of ws_write.
    pub over_edit_guard: bool,
    /// auto, dry-run or review.
    pub permission_mode: PermissionMode,
    /// Skip the post-edit syntax check (and its revert).
    pub disable_syntax_check: bool,
    /// Save a file's first version of the session before changing it.
    pub file_checkpoints: bool,
    /// Files larger than this are not checkpointed (the result says so): a copy of a dataset
    /// would cost as much disk again.
    pub checkpoint_max_bytes: u64,
    /// When not empty, writes are allowed only to paths matching one of these globs.
    pub focus: Vec<String>,
    /// ws_shell's default timeout, in seconds.
    pub shell_timeout: usize,
    /// The most a call's `timeout_sec` may ask for.
    pub shell_timeout_max: usize,
    /// Command prefixes the user allows beyond the built-in tiers ("make test").
    pub shell_allow: Vec<String>,
    /// allow, ask or deny.
    pub shell_permission: ShellPermission,
    /// How ws_shell commands are confined.
    pub sandbox: SandboxMode,
    /// What network a ws_shell command gets.
    pub shell_network: ShellNetwork,
    /// The memory one ws_shell command may use, its children included.
    pub shell_memory_max: u64,
    /// The model `slmcode run` asks for; none means the server's first model.
    pub model: Option<String>,
    /// The most turns one `slmcode run` may take.
    pub max_turns: usize,
    /// The most tokens one model reply may take.
    pub max_tokens: usize,
    /// The model server's base URL (user-only: a repository must not choose where prompts go).
    pub endpoint: Option<String>,
    /// The environment variable holding the endpoint's API key (user-only; never the key).
    pub api_key_env: Option<String>,
    /// Where each key that is not at its default was set (the file, or the variable).
    pub origins: std::collections::BTreeMap<&'static str, String>,
    /// A project's focus, which narrows the user's: a change must match both.
    pub focus_project: Vec<String>,
    /// What a project's config asked for and did not get, because it would loosen a safety
    /// setting (see [`Config::load`]).
    pub ignored: Vec<Ignored>,
}

/// A project value that was not applied: it would loosen a safety setting, and the user has not
/// approved that exact project config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ignored {
    pub key: &'static str,
    /// What the project asked for.
    pub asked: String,
    /// What stays in force.
    pub kept: String,
    /// The file that asked.
    pub source: String,
}

/// One row of `slmcode config show`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shown {
    pub key: &'static str,
    pub value: String,
    /// The layer that set it, or `default`.
    pub from: String,
    /// What a project asked for instead and did not get.
    pub ignored: Option<Ignored>,
}

/// Whether ws_shell runs commands the policy allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ShellPermission {
    #[default]
    Allow,
    /// Ask on the terminal each time; refused when there is none.
    Ask,
    Deny,
}

/// How ws_shell commands are confined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// Namespaces and Landlock, as far as the kernel allows.
    #[default]
    Auto,
    /// Landlock only, no namespaces: the weaker sandbox a kernel without user namespaces
    /// gives, chosen (for a system where namespaces misbehave, or to test it).
    Landlock,
    /// None: commands are confined only by the policy.
    Off,
}

impl SandboxMode {
    /// The config spelling.
    pub fn name(self) -> &'static str {
        match self {
            SandboxMode::Auto => "auto",
            SandboxMode::Landlock => "landlock",
            SandboxMode::Off => "off",
        }
    }
}

/// What network a ws_shell command gets. Off by default: an allowed `npm test` must not be
/// able to send a project file anywhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ShellNetwork {
    /// No network at all.
    #[default]
    Deny,
    /// A loopback of the command's own: servers a test starts are reachable, nothing on this
    /// machine or beyond is.
    Loopback,
    /// The machine's network.
    Allow,
}

impl ShellNetwork {
    /// The config spelling.
    pub fn name(self) -> &'static str {
        match self {
            ShellNetwork::Deny => "deny",
            ShellNetwork::Loopback => "loopback",
            ShellNetwork::Allow => "allow",
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_tool_chars: 8000,
            read_window_lines: 120,
            context_window: 8192,
            read_before_edit: true,
            over_edit_guard: true,
            permission_mode: PermissionMode::Auto,
            disable_syntax_check: false,
            file_checkpoints: true,
            checkpoint_max_bytes: DEFAULT_CHECKPOINT_MAX_BYTES,
            focus: Vec::new(),
            shell_timeout: 120,
            shell_timeout_max: 900,
            shell_allow: Vec::new(),
            shell_permission: ShellPermission::Allow,
            sandbox: SandboxMode::Auto,
            shell_network: ShellNetwork::Deny,
            shell_memory_max: default_shell_memory_max(),
            model: None,
            max_turns: 30,
            max_tokens: 4096,
            endpoint: None,
            api_key_env: None,
            origins: std::collections::BTreeMap::new(),
            focus_project: Vec::new(),
            ignored: Vec::new(),
        }
    }
}

/// Files up to this size are checkpointed unless `checkpoint_max_bytes` says otherwise.
pub const DEFAULT_CHECKPOINT_MAX_BYTES: u64 = 256 << 20;

/// Half the machine's memory, in whole GiB (at least 1 GiB): room for a test suite, and the
/// machine stays usable when a command runs away. 4 GiB where the memory cannot be learned.
pub fn default_shell_memory_max() -> u64 {
    physical_memory().map_or(4 << 30, |ram| ((ram / 2) >> 30 << 30).max(1 << 30))
}

/// The machine's memory in bytes.
#[cfg(unix)]
fn physical_memory() -> Option<u64> {
    // SAFETY: sysconf reads a system value and has no preconditions.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    let pages = u64::try_from(pages).ok()?;
    let size = u64::try_from(size).ok()?;
    pages.checked_mul(size).filter(|b| *b > 0)
}

/// The machine's memory in bytes: not learned on this platform.
#[cfg(not(unix))]
fn physical_memory() -> Option<u64> {
    None
}

/// A size as a config file writes it: binary units when exact (`256MiB`), else bytes.
fn show_bytes(n: u64) -> String {
    for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if n != 0 && n.is_multiple_of(1u64 << shift) {
            return format!("{}{unit}", n >> shift);
        }
    }
    n.to_string()
}

/// How a key's value is read and where it goes.
enum Slot {
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
    ShellPermission,
    /// `auto`, `landlock` or `off`.
    Sandbox,
    ShellNetwork,
    /// A non-empty string.
    Text(fn(&mut Config) -> &mut Option<String>),
    /// A size in bytes: a number, or text with a binary unit (`512M`, `2GiB`).
    Bytes {
        min: u64,
        field: fn(&mut Config) -> &mut u64,
    },
}

struct Key {
    name: &'static str,
    slot: Slot,
}

const KEYS: &[Key] = &[
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
];

impl Key {
    /// The key's current value, as a config file would write it.
    fn show(&self, config: &Config) -> String {
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
            Slot::Strings(field) | Slot::Globs(field) => {
                serde_json::to_string(field(&mut c)).unwrap_or_default()
            }
            Slot::Bytes { field, .. } => show_bytes(*field(&mut c)),
        }
    }

    /// Sets this key from a YAML value; environment values arrive as strings and are read the
    /// same way.
    fn apply(
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

/// A config that cannot be used as written.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{CONFIG_PATH}: {0}")]
    Path(#[from] PathError),
    #[error("{0} could not be read: {1}")]
    Read(String, std::io::Error),
    #[error("{0} is not valid YAML: {1}")]
    Yaml(String, String),
    #[error("{0} must be a mapping of keys to values (e.g. \"max_tool_chars: 8000\")")]
    NotAMapping(String),
    #[error("{source_name}: {key} must be {expected}, got {got}")]
    Value {
        source_name: String,
        key: &'static str,
        expected: String,
        got: String,
    },
}

/// A YAML list of strings, or one comma-separated string (from the environment).
fn string_list(value: &serde_json::Value) -> Option<Vec<String>> {
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

/// Keys a project's own config may not set; only the user's config is trusted with them:
/// programs to start (`mcp_servers`, `shell_allow`) and where prompts and the key go.
pub const USER_ONLY_KEYS: &[&str] = &["mcp_servers", "endpoint", "api_key_env", "shell_allow"];

/// Which file a config text came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    /// The user's own `~/.config/slmcode/config.yaml`: trusted with every key.
    User,
    /// A project's `.slmcode/config.yaml`: everything but [`USER_ONLY_KEYS`], and the safety
    /// settings only to make them stricter.
    Project,
    /// A project's config the user approved (its exact content): everything but
    /// [`USER_ONLY_KEYS`].
    ApprovedProject,
}

/// One config file: its layer, the path shown in messages, and its text.
#[derive(Clone, Debug)]
pub struct ConfigFile {
    pub layer: Layer,
    pub source: String,
    pub text: String,
}

impl Config {
    /// The names of every key this version understands.
    pub fn known_keys() -> Vec<&'static str> {
        KEYS.iter().map(|k| k.name).collect()
    }

    /// The effective config: built-in defaults < the user's file < the project's
    /// `.slmcode/config.yaml` (read through the jail) < `SLMCODE_<KEY>` variables. Flags go on
    /// top with [`Config::apply_flag`]. Returns the config and any warnings for the user.
    ///
    /// A repository carries its config with it, so the project's file may only make the
    /// safety settings stricter — deny over ask over allow, review over dry-run over auto, the
    /// sandbox on over off, the network off over on, a narrower focus, smaller limits, the
    /// guards on — unless `approved` says the user approved this exact content (its BLAKE3
    /// hash, as `slmcode config trust` records it). A loosening value is ignored with a
    /// warning and kept in [`Config::ignored`]. User-only keys are ignored either way.
    pub fn load(
        jail: &Jail,
        user: Option<&ConfigFile>,
        env: impl IntoIterator<Item = (String, String)>,
        approved: impl Fn(&str) -> bool,
    ) -> Result<(Config, Vec<String>), ConfigError> {
        let mut config = Config::default();
        let mut warnings = Vec::new();
        if let Some(file) = user {
            config.apply_file(file, &mut warnings)?;
        }
        if let Some(text) = read_project_file(jail)? {
            let trusted = approved(&content_hash(&text));
            let project = ConfigFile {
                layer: if trusted {
                    Layer::ApprovedProject
                } else {
                    Layer::Project
                },
                source: CONFIG_PATH.into(),
                text,
            };
            config.apply_file(&project, &mut warnings)?;
        }
        config.apply_env(env)?;
        Ok((config, warnings))
    }

    /// The BLAKE3 hash (hex) of the project's config file as it is now, which `slmcode config
    /// trust` records; `None` when there is none.
    pub fn project_hash(jail: &Jail) -> Result<Option<String>, ConfigError> {
        Ok(read_project_file(jail)?.map(|t| content_hash(&t)))
    }

    /// Applies YAML text as a project config the user approved (every key but the user-only
    /// ones): what tests and `slmcode init`'s template check against.
    pub fn apply_yaml(
        &mut self,
        text: &str,
        warnings: &mut Vec<String>,
    ) -> Result<(), ConfigError> {
        let file = ConfigFile {
            layer: Layer::ApprovedProject,
            source: CONFIG_PATH.into(),
            text: text.into(),
        };
        self.apply_file(&file, warnings)
    }

    /// Applies one config file of either layer.
    pub fn apply_file(
        &mut self,
        file: &ConfigFile,
        warnings: &mut Vec<String>,
    ) -> Result<(), ConfigError> {
        let source = file.source.as_str();
        if file.text.trim().is_empty() {
            return Ok(());
        }
        let value: serde_json::Value = serde_saphyr::from_str(&file.text)
            .map_err(|e| ConfigError::Yaml(source.into(), e.to_string()))?;
        let map: BTreeMap<String, serde_json::Value> = match value {
            serde_json::Value::Null => return Ok(()),
            serde_json::Value::Object(m) => m.into_iter().collect(),
            _ => return Err(ConfigError::NotAMapping(source.into())),
        };
        for (name, value) in map {
            let user_only = USER_ONLY_KEYS.contains(&name.as_str());
            if user_only && file.layer != Layer::User {
                warnings.push(format!(
                    "{source}: `{name}` is ignored here: it is read only from the user's config \
                     (~/.config/slmcode/config.yaml), because a repository must not choose the \
                     programs its model may run, nor where your prompts and API key are sent"
                ));
                continue;
            }
            match KEYS.iter().find(|k| k.name == name) {
                Some(key) if file.layer == Layer::Project => {
                    self.tighten(key, &value, source, warnings)?
                }
                Some(key) => key.apply(self, &value, source)?,
                // Read by the harness from the same file (the MCP servers).
                None if user_only => {}
                None => warnings.push(format!(
                    "{source}: unknown key `{name}` is ignored (known keys: {})",
                    Config::known_keys().join(", ")
                )),
            }
        }
        Ok(())
    }

    /// Applies one key of an unapproved project file: a setting that is not about safety as
    /// it is; a safety setting only when it is at least as strict as what is in force; a focus
    /// as a second one a change must also match.
    fn tighten(
        &mut self,
        key: &Key,
        value: &serde_json::Value,
        source: &str,
        warnings: &mut Vec<String>,
    ) -> Result<(), ConfigError> {
        let mut asked = self.clone();
        key.apply(&mut asked, value, source)?;
        if key.name == "focus" {
            self.focus_project = asked.focus;
            self.origins.insert("focus", source.to_string());
            return Ok(());
        }
        match (strictness(key.name, self), strictness(key.name, &asked)) {
            (Some(now), Some(then)) if then < now => {
                let ignored = Ignored {
                    key: key.name,
                    asked: key.show(&asked),
                    kept: key.show(self),
                    source: source.to_string(),
                };
                warnings.push(format!(
                    "{source}: `{}: {}` is ignored: it would loosen `{}: {}`, and a project may only make safety settings stricter. If you mean it, review the file and run `slmcode config trust`",
                    ignored.key, ignored.asked, ignored.key, ignored.kept
                ));
                self.ignored.push(ignored);
            }
            _ => *self = asked,
        }
        Ok(())
    }

    /// Applies a command-line flag, the top layer (`source` is the flag as typed).
    pub fn apply_flag(&mut self, key: &str, value: &str, source: &str) -> Result<(), ConfigError> {
        match KEYS.iter().find(|k| k.name == key) {
            Some(k) => k.apply(self, &serde_json::Value::String(value.into()), source),
            None => Ok(()),
        }
    }

    /// Every key with its effective value and where it came from (`default` when nothing set
    /// it), for `slmcode config show`.
    pub fn show(&self) -> Vec<Shown> {
        KEYS.iter()
            .map(|k| {
                let from = self
                    .origins
                    .get(k.name)
                    .cloned()
                    .unwrap_or_else(|| "default".into());
                let mut value = k.show(self);
                if k.name == "focus" && !self.focus_project.is_empty() {
                    value = format!(
                        "{value} and {}",
                        serde_json::to_string(&self.focus_project).unwrap_or_default()
                    );
                }
                Shown {
                    key: k.name,
                    value,
                    from,
                    ignored: self.ignored.iter().rev().find(|i| i.key == k.name).cloned(),
                }
            })
            .collect()
    }

    /// Applies `SLMCODE_<KEY>` overrides; other variables are left alone, since the harness
    /// has `SLMCODE_*` variables of its own.
    pub fn apply_env(
        &mut self,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<(), ConfigError> {
        for (var, raw) in env {
            let Some(name) = var.strip_prefix("SLMCODE_") else {
                continue;
            };
            let name = name.to_ascii_lowercase();
            if let Some(key) = KEYS.iter().find(|k| k.name == name) {
                key.apply(self, &serde_json::Value::String(raw), &var)?;
            }
        }
        Ok(())
    }

    /// Whether `key` was set by a file or a variable rather than left at its default.
    pub fn is_set(&self, key: &str) -> bool {
        self.origins.contains_key(key)
    }

    /// The hard ceiling of one ws_read, in characters: about 15% of the context window at
    /// ~4 characters a token.
    pub fn read_ceiling_chars(&self) -> usize {
        self.context_window * 4 * 15 / 100
    }
}

/// How strict a safety setting is in `c` (higher is stricter); `None` for a key that is not
/// about safety.
fn strictness(key: &str, c: &Config) -> Option<i64> {
    Some(match key {
        "shell_permission" => match c.shell_permission {
            ShellPermission::Allow => 0,
            ShellPermission::Ask => 1,
            ShellPermission::Deny => 2,
        },
        "permission_mode" => match c.permission_mode {
            PermissionMode::Auto => 0,
            PermissionMode::DryRun => 1,
            PermissionMode::Review => 2,
        },
        "sandbox" => match c.sandbox {
            SandboxMode::Off => 0,
            SandboxMode::Landlock => 1,
            SandboxMode::Auto => 2,
        },
        "shell_network" => match c.shell_network {
            ShellNetwork::Allow => 0,
            ShellNetwork::Loopback => 1,
            ShellNetwork::Deny => 2,
        },
        "shell_timeout" => -(c.shell_timeout as i64),
        "shell_timeout_max" => -(c.shell_timeout_max as i64),
        "read_before_edit" => i64::from(c.read_before_edit),
        "over_edit_guard" => i64::from(c.over_edit_guard),
        "file_checkpoints" => i64::from(c.file_checkpoints),
        // More undo is safer; less memory for a command is safer.
        "checkpoint_max_bytes" => i64::try_from(c.checkpoint_max_bytes).unwrap_or(i64::MAX),
        "shell_memory_max" => -i64::try_from(c.shell_memory_max).unwrap_or(i64::MAX),
        "disable_syntax_check" => i64::from(!c.disable_syntax_check),
        _ => return None,
    })
}

/// The hash the user's approval of a project config is kept by.
fn content_hash(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex().to_string()
}

fn read_project_file(jail: &Jail) -> Result<Option<String>, ConfigError> {
    let path = RelPath::parse(CONFIG_PATH, jail.root())?;
    let mut file = match jail.open_file(&path) {
        Ok(f) => f,
        Err(PathError::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let mut text = String::new();
    std::io::Read::read_to_string(&mut file, &mut text)
        .map_err(|e| ConfigError::Read(CONFIG_PATH.into(), e))?;
    Ok(Some(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_sets_known_keys_and_warns_on_unknown() {
        let mut c = Config::default();
        let mut w = Vec::new();
        c.apply_yaml(
            "max_tool_chars: 2000\nread_window_lines: 40\nbogus: 1\n",
            &mut w,
        )
        .unwrap();
        assert_eq!(c.max_tool_chars, 2000);
        assert_eq!(c.read_window_lines, 40);
        assert_eq!(w.len(), 1);
        assert!(
            w[0].contains("`bogus`") && w[0].contains("context_window"),
            "{w:?}"
        );
    }

    #[test]
    fn bad_values_name_the_key_and_range() {
        let mut c = Config::default();
        let e = c
            .apply_yaml("max_tool_chars: ten\n", &mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("max_tool_chars must be a whole number from 500"),
            "{e}"
        );
        let e = c
            .apply_yaml("read_window_lines: 0\n", &mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(e.contains("read_window_lines"), "{e}");
        assert!(matches!(
            c.apply_yaml("- a\n- b\n", &mut Vec::new()),
            Err(ConfigError::NotAMapping(_))
        ));
        assert!(matches!(
            c.apply_yaml("a: [\n", &mut Vec::new()),
            Err(ConfigError::Yaml(..))
        ));
    }

    #[test]
    fn env_overrides_and_rejects_garbage() {
        let mut c = Config::default();
        c.apply_env([
            ("SLMCODE_CONTEXT_WINDOW".to_string(), "32768".to_string()),
            ("SLMCODE_ENDPOINT".to_string(), "http://x".to_string()),
            ("PATH".to_string(), "/bin".to_string()),
        ])
        .unwrap();
        assert_eq!(c.context_window, 32768);
        let e = c
            .apply_env([("SLMCODE_MAX_TOOL_CHARS".to_string(), "lots".to_string())])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("SLMCODE_MAX_TOOL_CHARS: max_tool_chars"),
            "{e}"
        );
    }

    #[test]
    fn the_sandbox_is_on_and_the_network_off_by_default() {
        let c = Config::default();
        assert_eq!(c.sandbox, SandboxMode::Auto);
        assert_eq!(c.shell_network, ShellNetwork::Deny);
        let mut c = Config::default();
        // A bare `off` is a YAML boolean; it still means off.
        c.apply_yaml("shell_network: loopback\nsandbox: off\n", &mut Vec::new())
            .unwrap();
        assert_eq!(c.shell_network, ShellNetwork::Loopback);
        assert_eq!(c.sandbox, SandboxMode::Off);
        c.apply_yaml("sandbox: landlock\n", &mut Vec::new())
            .unwrap();
        assert_eq!(c.sandbox, SandboxMode::Landlock);
        c.apply_env([("SLMCODE_SHELL_NETWORK".to_string(), "allow".to_string())])
            .unwrap();
        assert_eq!(c.shell_network, ShellNetwork::Allow);
        let e = c
            .apply_yaml("shell_network: sometimes\n", &mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("shell_network must be one of deny, loopback, allow"),
            "{e}"
        );
    }

    #[test]
    fn switches_and_mode() {
        let mut c = Config::default();
        c.apply_yaml(
            "read_before_edit: false
permission_mode: dry-run
",
            &mut Vec::new(),
        )
        .unwrap();
        assert!(!c.read_before_edit);
        assert_eq!(c.permission_mode, PermissionMode::DryRun);
        c.apply_env([
            ("SLMCODE_PERMISSION_MODE".to_string(), "review".to_string()),
            ("SLMCODE_OVER_EDIT_GUARD".to_string(), "off".to_string()),
        ])
        .unwrap();
        assert_eq!(c.permission_mode, PermissionMode::Review);
        assert!(!c.over_edit_guard);
        let e = c
            .apply_yaml(
                "permission_mode: yolo
",
                &mut Vec::new(),
            )
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("permission_mode must be one of auto, dry-run, review"),
            "{e}"
        );
    }

    #[test]
    fn read_ceiling_is_fifteen_percent() {
        assert_eq!(Config::default().read_ceiling_chars(), 4915);
    }

    #[test]
    fn sizes_take_units_and_bad_ones_name_the_range() {
        let mut c = Config::default();
        let mut w = Vec::new();
        c.apply_yaml(
            "shell_memory_max: 512M\ncheckpoint_max_bytes: 1000\n",
            &mut w,
        )
        .unwrap();
        assert_eq!(c.shell_memory_max, 512 << 20);
        assert_eq!(c.checkpoint_max_bytes, 1000);
        c.apply_yaml("shell_memory_max: 1.5GiB\n", &mut w).unwrap();
        assert_eq!(c.shell_memory_max, 3 << 29);
        let e = c
            .apply_yaml("shell_memory_max: lots\n", &mut w)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("a size in bytes of at least 16MiB, e.g. 512MiB or 2G"),
            "{e}"
        );
        assert!(c.apply_yaml("shell_memory_max: 1M\n", &mut w).is_err());
        assert!(Config::default().shell_memory_max >= 1 << 30);
    }

    #[test]
    fn a_project_may_lower_the_memory_bound_and_raise_the_checkpoint_limit_only() {
        let mut c = Config::default();
        let base = (c.shell_memory_max, c.checkpoint_max_bytes);
        let project = |text: &str| ConfigFile {
            layer: Layer::Project,
            source: CONFIG_PATH.into(),
            text: text.into(),
        };
        let mut w = Vec::new();
        c.apply_file(
            &project("shell_memory_max: 64TiB\ncheckpoint_max_bytes: 10\n"),
            &mut w,
        )
        .unwrap();
        assert_eq!((c.shell_memory_max, c.checkpoint_max_bytes), base);
        assert_eq!(c.ignored.len(), 2, "{w:?}");
        c.apply_file(
            &project("shell_memory_max: 64MiB\ncheckpoint_max_bytes: 1GiB\n"),
            &mut w,
        )
        .unwrap();
        assert_eq!(c.shell_memory_max, 64 << 20);
        assert_eq!(c.checkpoint_max_bytes, 1 << 30);
    }
}
