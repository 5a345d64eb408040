//! Where a config comes from and what each source may set: the user's file (trusted with every
//! key), a project's file (tighten-only unless the user approved its exact content), the
//! environment and flags, merged in that order.

use super::*;

/// Keys a project's own config may not set; only the user's config is trusted with them:
/// programs to start (`mcp_servers`, `shell_allow`) and where prompts and the key go.
pub const USER_ONLY_KEYS: &[&str] = &["mcp_servers", "endpoint", "api_key_env", "shell_allow"];

/// Keys a project's config, even one the user approved, may only narrow: a subset of what is in
/// force. A repository must not choose what of the user's files its commands read.
pub const NARROW_ONLY_KEYS: &[&str] = &["shell_read_allow"];

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
                // What commands may read is the user's to widen: even an approved project
                // config only narrows it.
                Some(key)
                    if file.layer == Layer::Project || NARROW_ONLY_KEYS.contains(&key.name) =>
                {
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
        // A project may protect more, never less: its globs join the ones in force.
        if key.name == "protect" {
            for g in asked.protect {
                if !self.protect.contains(&g) {
                    self.protect.push(g);
                }
            }
            self.origins.insert("protect", source.to_string());
            return Ok(());
        }
        // A list of places to read is stricter when it is a subset of the one in force.
        let widens = key.name == "shell_read_allow"
            && asked
                .shell_read_allow
                .iter()
                .any(|p| !self.shell_read_allow.contains(p));
        match (strictness(key.name, self), strictness(key.name, &asked)) {
            _ if widens => {
                let ignored = Ignored {
                    key: key.name,
                    asked: key.show(&asked),
                    kept: key.show(self),
                    source: source.to_string(),
                };
                warnings.push(format!(
                    "{source}: `{}: {}` is ignored: it would let commands read more than `{}: {}`, and only your own config may widen what commands read",
                    ignored.key, ignored.asked, ignored.key, ignored.kept
                ));
                self.ignored.push(ignored);
            }
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

    /// Adds globs to `protect` from a flag (`--protect`): a flag protects more, on top of
    /// what the config protects. Each glob must compile.
    pub fn add_protect(&mut self, globs: &[String], source: &str) -> Result<(), ConfigError> {
        let mut asked = self.clone();
        let key = KEYS.iter().find(|k| k.name == "protect");
        if let Some(k) = key {
            k.apply(&mut asked, &serde_json::json!(globs), source)?;
        }
        for g in asked.protect {
            if !self.protect.contains(&g) {
                self.protect.push(g);
            }
        }
        self.origins.insert("protect", source.to_string());
        Ok(())
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
pub(super) fn strictness(key: &str, c: &Config) -> Option<i64> {
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
pub(super) fn content_hash(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex().to_string()
}

pub(super) fn read_project_file(jail: &Jail) -> Result<Option<String>, ConfigError> {
    let path = RelPath::parse(CONFIG_PATH, jail.root())?;
    let file = match jail.open_file(&path) {
        Ok(f) => f,
        Err(PathError::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let read = |file: cap_std::fs::File| -> std::io::Result<String> {
        let bytes = crate::readback::read(file.into_std(), crate::readback::CONTROL_MAX_BYTES)?;
        String::from_utf8(bytes)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
    };
    read(file)
        .map(Some)
        .map_err(|e| ConfigError::Read(CONFIG_PATH.into(), e))
}
