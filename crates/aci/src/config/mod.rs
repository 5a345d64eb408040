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
    /// Paths the task must be solved without changing (e.g. `tests/**`): refused by every
    /// edit tool, put back after a command or a run that changed them ([`crate::protect`]).
    pub protect: Vec<String>,
    /// ws_shell's default timeout, in seconds.
    pub shell_timeout: usize,
    /// The most a call's `timeout_sec` may ask for.
    pub shell_timeout_max: usize,
    /// Command prefixes the user allows beyond the built-in tiers ("make test").
    pub shell_allow: Vec<String>,
    /// Places a command may read beyond the project, the system and the toolchains' own
    /// directories (`~/.config`, `/srv/data`): under the home (`~/…`) or absolute. The user's
    /// to extend; a project may only narrow it. Secret stores stay unreadable whatever it says.
    pub shell_read_allow: Vec<String>,
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
    /// Plan mode's roles: the model that plans (with read-only tools) and the one that does
    /// each step; unset, `model`.
    pub plan_model: Option<String>,
    pub edit_model: Option<String>,
    /// The most turns one `slmcode run` may take.
    pub max_turns: usize,
    /// The most tokens one model reply may take.
    pub max_tokens: usize,
    /// The check a run's `done` must pass (`cargo test`, `pytest -x`), run through ws_shell.
    pub verify: Option<String>,
    /// How many times a failed check goes back to the model before the run ends blocked.
    pub verify_retries: usize,
    /// A reply whose last this-many characters are one span repeated is stopped (0: never).
    pub runaway_loop_chars: usize,
    /// A reply that writes this many characters with no sign of a call or an answer is
    /// stopped (0: never).
    pub runaway_text_chars: usize,
    /// How tools reach the model: `native` (the API's `tools`), `text` (described in the
    /// prompt, calls written as text), or `auto` (native, switching to text for the rest of
    /// the run when the server refuses tools or cannot parse the model's calls).
    pub tool_mode: &'static str,
    /// A thinking model's thinking: `auto` (the server's default, nothing sent), `on`, `off`,
    /// or an effort `low` / `medium` / `high` (gpt-oss), mapped to each server's switch.
    pub think: &'static str,
    /// Tokens of reasoning one reply may spend (0: no budget): past it the reply is stopped,
    /// its thinking kept as notes, and the turn asked again with thinking off.
    pub think_budget: usize,
    /// Seconds a request may wait for the first sign of a reply (slow hardware reading a long
    /// prompt); separate from the silence allowed once a reply flows.
    pub first_token_timeout: usize,
    /// Seconds one reply may take once it has begun: a server that keeps a stream open with
    /// empty deltas or keep-alive comments is never silent, so only this ends it.
    pub reply_timeout: usize,
    /// Tokens the repo map in `slmcode run`'s task message may take (0: no map). The default
    /// fits an 8K context; a smaller context gets at most an eighth of it.
    pub repo_map_tokens: usize,
    /// Sampling settings the user gave (`temperature`, `top_p`, `top_k`, `min_p`,
    /// `repeat_penalty`, `presence_penalty`, `seed`); the rest come from the model family's
    /// card. `temperature: server` sends none of them.
    pub sampling: std::collections::BTreeMap<&'static str, Sample>,
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

/// One sampling setting as the config gives it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sample {
    /// Send none: the server's (or Ollama's Modelfile's) own applies.
    Server,
    Value(f64),
}

// Values are checked against a range when read, so NaN never gets in.
impl Eq for Sample {}

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
            protect: Vec::new(),
            shell_timeout: 120,
            shell_timeout_max: 900,
            shell_allow: Vec::new(),
            shell_read_allow: Vec::new(),
            shell_permission: ShellPermission::Allow,
            sandbox: SandboxMode::Auto,
            shell_network: ShellNetwork::Deny,
            shell_memory_max: default_shell_memory_max(),
            model: None,
            plan_model: None,
            edit_model: None,
            max_turns: 30,
            max_tokens: 4096,
            verify: None,
            verify_retries: 2,
            runaway_loop_chars: 3000,
            runaway_text_chars: 20_000,
            tool_mode: "auto",
            think: "auto",
            think_budget: 2048,
            first_token_timeout: 900,
            reply_timeout: DEFAULT_REPLY_TIMEOUT,
            repo_map_tokens: 1024,
            sampling: std::collections::BTreeMap::new(),
            endpoint: None,
            api_key_env: None,
            origins: std::collections::BTreeMap::new(),
            focus_project: Vec::new(),
            ignored: Vec::new(),
        }
    }
}

/// Seconds one model reply may take once it has begun, unless `reply_timeout` says otherwise:
/// 4,096 tokens at 2–3 tokens a second (a CPU with a 30B model) fit.
pub const DEFAULT_REPLY_TIMEOUT: usize = 1800;

/// Files up to this size are checkpointed unless `checkpoint_max_bytes` says otherwise.
pub const DEFAULT_CHECKPOINT_MAX_BYTES: u64 = 256 << 20;

/// Half the machine's memory, in whole GiB (at least 1 GiB): room for a test suite, and the
/// machine stays usable when a command runs away. 4 GiB where the memory cannot be learned.
pub fn default_shell_memory_max() -> u64 {
    crate::platform::host::physical_memory()
        .map_or(4 << 30, |ram| ((ram / 2) >> 30 << 30).max(1 << 30))
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

mod keys;
mod layers;

use keys::{Key, KEYS};
pub use layers::{ConfigFile, Layer, NARROW_ONLY_KEYS, USER_ONLY_KEYS};

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

    /// `shell_read_allow` adds places beyond the toolchains' own; each entry is a path under
    /// the home (`~/…`) or absolute, never relative or with `..`. A project may narrow what the
    /// user allowed, never add to it — not even a project config the user approved.
    #[test]
    fn read_allow_takes_home_and_absolute_paths_and_a_project_only_narrows_it() {
        let mut c = Config::default();
        assert!(c.shell_read_allow.is_empty());
        c.apply_env([(
            "SLMCODE_SHELL_READ_ALLOW".to_string(),
            "~/.config, /srv/data".to_string(),
        )])
        .unwrap();
        assert_eq!(c.shell_read_allow, ["~/.config", "/srv/data"]);
        for bad in ["[\"rel/path\"]", "[\"~/../etc\"]", "[\"~other/x\"]", "7"] {
            let e = c
                .clone()
                .apply_yaml(&format!("shell_read_allow: {bad}\n"), &mut Vec::new())
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("shell_read_allow must be a list of paths under your home (~/.cargo) or absolute"),
                "{bad}: {e}"
            );
        }
        let file = |layer, text: &str| ConfigFile {
            layer,
            source: CONFIG_PATH.into(),
            text: text.into(),
        };
        for layer in [Layer::Project, Layer::ApprovedProject] {
            let mut p = c.clone();
            let mut w = Vec::new();
            p.apply_file(
                &file(layer, "shell_read_allow: [\"~/.config\", \"~/.ssh\"]\n"),
                &mut w,
            )
            .unwrap();
            assert_eq!(p.shell_read_allow, ["~/.config", "/srv/data"], "{layer:?}");
            assert!(
                w.iter().any(
                    |w| w.contains("`shell_read_allow: [\"~/.config\",\"~/.ssh\"]` is ignored")
                ),
                "{layer:?}: {w:?}"
            );
            p.apply_file(&file(layer, "shell_read_allow: [\"~/.config\"]\n"), &mut w)
                .unwrap();
            assert_eq!(p.shell_read_allow, ["~/.config"], "{layer:?}");
        }
    }
}
