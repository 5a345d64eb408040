//! The user's own configuration (`~/.config/slmcode/config.yaml`): the settings a project must
//! not be able to give itself. MCP servers are programs slmcode starts, so they are read from
//! here and never from a repository's `.slmcode/config.yaml` — a cloned repository must not be
//! able to give its model a shell.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use slmcode_aci::config::{ConfigFile, Layer};

/// Why the user's config could not be used. Each message names the file.
#[derive(Debug, thiserror::Error)]
pub enum UserConfigError {
    #[error("cannot read {0}: {1}")]
    Read(PathBuf, std::io::Error),
    #[error("{0}: {1}")]
    Invalid(PathBuf, String),
}

/// The user's config directory: `$XDG_CONFIG_HOME/slmcode`, else `~/.config/slmcode`. The same
/// layout on every Unix (macOS included), so the path the docs name is the path used.
pub fn config_dir() -> Option<PathBuf> {
    base_dir("XDG_CONFIG_HOME", ".config").map(|d| d.join("slmcode"))
}

fn base_dir(var: &str, fallback: &str) -> Option<PathBuf> {
    base_dir_from(std::env::var_os(var), std::env::var_os("HOME"), fallback)
}

pub use slmcode_aci::userdirs::base_dir_from;

/// The text of a file of the user's, through the size bound every file read back goes through.
fn read_text(path: &Path) -> std::io::Result<String> {
    let bytes = slmcode_aci::readback::read_path(path, slmcode_aci::readback::CONTROL_MAX_BYTES)?;
    String::from_utf8(bytes).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// The user's config file, whether or not it exists.
pub fn config_path() -> Option<PathBuf> {
    config_dir().map(|d| d.join("config.yaml"))
}

/// How to reach one MCP server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum McpTransport {
    /// A program speaking MCP on its stdin/stdout, started on first use.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    },
    /// A streamable HTTP endpoint.
    Http {
        url: String,
        /// The name of an environment variable holding a bearer token (never the token itself,
        /// so the config file can be shared).
        bearer_token_env: Option<String>,
    },
}

/// One entry of `mcp_servers:`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpServer {
    pub name: String,
    pub transport: McpTransport,
    /// How long one call may take before it is abandoned (seconds).
    pub timeout_sec: u64,
}

/// The default time one mcp_call may take.
pub const DEFAULT_MCP_TIMEOUT_SEC: u64 = 60;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
    bearer_token_env: Option<String>,
    timeout_sec: Option<u64>,
}

/// What the user's config says, as far as this crate reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserConfig {
    /// The file it came from (absent when there is none).
    pub path: Option<PathBuf>,
    /// Configured MCP servers, by name.
    pub mcp_servers: Vec<McpServer>,
}

impl UserConfig {
    /// The tokens this config gives MCP servers (a bearer token's variable, a stdio server's
    /// environment): no tool result may show them.
    pub fn add_secrets(&self, secrets: &mut slmcode_aci::secrets::Secrets) {
        for server in &self.mcp_servers {
            match &server.transport {
                McpTransport::Http {
                    bearer_token_env: Some(var),
                    ..
                } => {
                    if let Ok(value) = std::env::var(var) {
                        secrets.add(var, &value);
                    }
                }
                McpTransport::Stdio { env, .. } => {
                    for (name, value) in env {
                        if slmcode_aci::secrets::secret_name(name) {
                            secrets.add(name, value);
                        }
                    }
                }
                McpTransport::Http { .. } => {}
            }
        }
    }

    /// Reads the user's config file; a missing file is an empty config.
    pub fn load() -> Result<UserConfig, UserConfigError> {
        match config_path() {
            Some(path) => UserConfig::load_from(&path),
            None => Ok(UserConfig::default()),
        }
    }

    /// The user's config file as the bottom layer of the tool settings (every key but
    /// `mcp_servers` is read by [`slmcode_aci::Config::load`]); `None` when there is none.
    pub fn settings_file() -> Result<Option<ConfigFile>, UserConfigError> {
        let Some(path) = config_path() else {
            return Ok(None);
        };
        match read_text(&path) {
            Ok(text) => Ok(Some(ConfigFile {
                layer: Layer::User,
                source: path.display().to_string(),
                text,
            })),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(UserConfigError::Read(path, e)),
        }
    }

    /// Reads a config file at `path`; a missing file is an empty config.
    pub fn load_from(path: &Path) -> Result<UserConfig, UserConfigError> {
        let text = match read_text(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(UserConfig::default()),
            Err(e) => return Err(UserConfigError::Read(path.to_path_buf(), e)),
        };
        let mut config = UserConfig::parse(&text)
            .map_err(|e| UserConfigError::Invalid(path.to_path_buf(), e))?;
        config.path = Some(path.to_path_buf());
        Ok(config)
    }

    /// Parses the YAML text of the user's config. Keys other than `mcp_servers` belong to the
    /// tool settings and are read elsewhere.
    pub fn parse(text: &str) -> Result<UserConfig, String> {
        if text.trim().is_empty() {
            return Ok(UserConfig::default());
        }
        let value: serde_json::Value = serde_saphyr::from_str(text).map_err(|e| e.to_string())?;
        let mut map = match value {
            serde_json::Value::Null => return Ok(UserConfig::default()),
            serde_json::Value::Object(m) => m,
            _ => return Err("the file must be a mapping of keys to values".into()),
        };
        let servers = map.remove("mcp_servers");
        let raw: BTreeMap<String, RawServer> = match servers {
            None | Some(serde_json::Value::Null) => BTreeMap::new(),
            Some(v) => serde_json::from_value(v).map_err(|e| {
                format!(
                    "mcp_servers: {e}. Each server is `NAME: {{command: PROGRAM, args: [..], env: {{..}}}}` \
                     or `NAME: {{url: http://HOST/mcp, bearer_token_env: VAR}}`, with an optional timeout_sec"
                )
            })?,
        };
        let mut mcp_servers = Vec::new();
        for (name, s) in raw {
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return Err(format!(
                    "mcp_servers: the server name `{name}` may hold only letters, digits, `-` and `_` \
                     (a model calls it by that name)"
                ));
            }
            let transport = match (s.command, s.url) {
                (Some(command), None) if !command.trim().is_empty() => {
                    if s.bearer_token_env.is_some() {
                        return Err(format!(
                            "mcp_servers.{name}: bearer_token_env is for url servers"
                        ));
                    }
                    McpTransport::Stdio {
                        command,
                        args: s.args,
                        env: s.env,
                    }
                }
                (None, Some(url)) if url.starts_with("http://") || url.starts_with("https://") => {
                    if !s.args.is_empty() || !s.env.is_empty() {
                        return Err(format!(
                            "mcp_servers.{name}: args and env are for command servers"
                        ));
                    }
                    McpTransport::Http {
                        url,
                        bearer_token_env: s.bearer_token_env,
                    }
                }
                (None, Some(url)) => {
                    return Err(format!(
                        "mcp_servers.{name}: url `{url}` must start with http:// or https://"
                    ))
                }
                (Some(_), Some(_)) => {
                    return Err(format!(
                        "mcp_servers.{name}: give either command (a program to start) or url, not both"
                    ))
                }
                _ => {
                    return Err(format!(
                        "mcp_servers.{name}: needs command (a program speaking MCP on stdio) or url (streamable HTTP)"
                    ))
                }
            };
            let timeout_sec = match s.timeout_sec {
                None => DEFAULT_MCP_TIMEOUT_SEC,
                Some(0) => {
                    return Err(format!(
                        "mcp_servers.{name}: timeout_sec must be at least 1"
                    ))
                }
                Some(t) => t,
            };
            mcp_servers.push(McpServer {
                name,
                transport,
                timeout_sec,
            });
        }
        Ok(UserConfig {
            path: None,
            mcp_servers,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdio_and_http_servers_parse() {
        let c = UserConfig::parse(
            "max_tool_chars: 9000\nmcp_servers:\n  fs:\n    command: npx\n    args: [\"-y\", \"server\"]\n    env: {A: b}\n  docs:\n    url: http://127.0.0.1:9/mcp\n    bearer_token_env: DOCS_TOKEN\n    timeout_sec: 5\n",
        )
        .unwrap();
        assert_eq!(c.mcp_servers.len(), 2);
        assert_eq!(c.mcp_servers[0].name, "docs");
        assert_eq!(c.mcp_servers[0].timeout_sec, 5);
        assert_eq!(
            c.mcp_servers[1].transport,
            McpTransport::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "server".into()],
                env: BTreeMap::from([("A".into(), "b".into())]),
            }
        );
        assert_eq!(c.mcp_servers[1].timeout_sec, DEFAULT_MCP_TIMEOUT_SEC);
    }

    #[test]
    fn bad_entries_say_what_is_wrong() {
        for (yaml, want) in [
            ("mcp_servers:\n  a:\n    args: [x]\n", "needs command"),
            (
                "mcp_servers:\n  a:\n    command: x\n    url: http://h/\n",
                "not both",
            ),
            (
                "mcp_servers:\n  a:\n    url: ftp://h/\n",
                "must start with http",
            ),
            ("mcp_servers:\n  a.b:\n    command: x\n", "only letters"),
            (
                "mcp_servers:\n  a:\n    command: x\n    cmd: y\n",
                "unknown field",
            ),
            (
                "mcp_servers:\n  a:\n    command: x\n    timeout_sec: 0\n",
                "at least 1",
            ),
            ("- a\n", "mapping"),
        ] {
            let e = UserConfig::parse(yaml).unwrap_err();
            assert!(e.contains(want), "{yaml}: {e}");
        }
        assert!(UserConfig::parse("").unwrap().mcp_servers.is_empty());
    }

    #[test]
    fn a_missing_file_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let c = UserConfig::load_from(&dir.path().join("none.yaml")).unwrap();
        assert_eq!(c, UserConfig::default());
    }
}
