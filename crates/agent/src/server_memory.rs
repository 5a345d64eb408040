//! What slmcode learned about a server and model pair that the next run should not have to
//! learn again: that it refuses `tools` (or cannot parse the model's calls), so runs with
//! `tool_mode: auto` describe the tools in the prompt from their first request. Kept in the
//! user's data directory (`$XDG_DATA_HOME/slmcode/servers.json`), never in a project: a
//! repository must not decide how prompts reach the user's server.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One endpoint and model's learned settings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Learned {
    /// Why tools go in the prompt for this pair: the server's words when it refused them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_tools: Option<String>,
    /// When that was learned, in seconds since the epoch.
    #[serde(default)]
    pub since: u64,
}

/// Everything learned, keyed by `endpoint model`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerMemory {
    #[serde(default)]
    pub servers: BTreeMap<String, Learned>,
}

fn key(endpoint: &str, model: &str) -> String {
    format!("{} {model}", endpoint.trim_end_matches('/'))
}

impl ServerMemory {
    /// Where it lives: beside the edit-format state, `$XDG_DATA_HOME/slmcode/servers.json`
    /// (else `$HOME/.local/share/slmcode/servers.json`).
    pub fn default_path() -> Option<PathBuf> {
        crate::user_config::base_dir_from(
            std::env::var_os("XDG_DATA_HOME"),
            std::env::var_os("HOME"),
            ".local/share",
        )
        .map(|d| d.join("slmcode").join("servers.json"))
    }

    /// The memory at `path`; empty when there is none, or when it cannot be read (it is only
    /// a shortcut: what it would have said is learned again).
    pub fn load(path: &Path) -> ServerMemory {
        slmcode_aci::readback::read_path(path, slmcode_aci::readback::CONTROL_MAX_BYTES)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Writes it, privately and atomically.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let mut json = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        json.push(b'\n');
        slmcode_aci::fsx::save_private(path, &json)
    }

    /// Why this pair gets its tools in the prompt, when it was learned that it must.
    pub fn text_tools(&self, endpoint: &str, model: &str) -> Option<&str> {
        self.servers
            .get(&key(endpoint, model))
            .and_then(|l| l.text_tools.as_deref())
    }

    /// Remembers that this pair refused tools, with the server's words.
    pub fn remember_text_tools(&mut self, endpoint: &str, model: &str, why: &str, now: u64) {
        let entry = self.servers.entry(key(endpoint, model)).or_default();
        entry.text_tools = Some(why.chars().take(300).collect());
        entry.since = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembered_per_endpoint_and_model_and_saved() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("slmcode/servers.json");
        let mut m = ServerMemory::load(&path);
        assert_eq!(m.text_tools("http://h/v1", "gemma3:4b"), None);
        m.remember_text_tools("http://h/v1/", "gemma3:4b", "does not support tools", 7);
        m.save(&path).unwrap();
        let back = ServerMemory::load(&path);
        assert_eq!(
            back.text_tools("http://h/v1", "gemma3:4b"),
            Some("does not support tools")
        );
        assert_eq!(back.text_tools("http://h/v1", "qwen3:8b"), None);
        assert_eq!(back.text_tools("http://other/v1", "gemma3:4b"), None);
        std::fs::write(&path, "not json").unwrap();
        assert_eq!(ServerMemory::load(&path), ServerMemory::default());
    }
}
