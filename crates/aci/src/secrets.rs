//! Values no tool result may show: the API key the harness sends to the model server, and
//! any token, key, secret or password in the harness's environment. A command cannot read them
//! from the harness (a clean environment, no `/proc` of ours, not dumpable), but a project file
//! can hold one (`.env`), and a result goes to the model and into the run's trajectory. So the
//! one result path ([`crate::Registry::call`]) replaces each value with a note naming its
//! variable.

use std::borrow::Cow;

/// Shorter values are not redacted: `1` or `true` in `CI_TOKEN=1` would blank out every digit.
const MIN_SECRET_LEN: usize = 8;

/// The secret values of this process, by variable name.
#[derive(Debug, Clone, Default)]
pub struct Secrets {
    values: Vec<(String, String)>,
}

impl Secrets {
    /// The variables named in `named` (the config's `api_key_env`, MCP servers'
    /// `bearer_token_env`) and every variable whose name says it holds a secret.
    pub fn gather(named: &[&str]) -> Secrets {
        let mut out = Secrets::default();
        for (name, value) in std::env::vars_os() {
            let name = name.to_string_lossy();
            if named.contains(&name.as_ref()) || secret_name(&name) {
                if let Some(value) = value.to_str() {
                    out.add(&name, value);
                }
            }
        }
        for name in named {
            if let Ok(value) = std::env::var(name) {
                out.add(name, &value);
            }
        }
        out
    }

    /// Adds one value (ignored when too short to be a secret, or already known).
    pub fn add(&mut self, name: &str, value: &str) {
        let value = value.trim();
        if value.len() >= MIN_SECRET_LEN && !self.values.iter().any(|(_, v)| v == value) {
            self.values.push((name.to_string(), value.to_string()));
            // Longest first, so a value that contains another is replaced whole.
            self.values.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
        }
    }

    /// `text` with every secret value replaced by `[redacted: NAME]`.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for (name, value) in &self.values {
            if out.contains(value.as_str()) {
                out = Cow::Owned(out.replace(value.as_str(), &format!("[redacted: {name}]")));
            }
        }
        out
    }
}

/// Names that say their variable holds a secret.
pub fn secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    [
        "_KEY",
        "_TOKEN",
        "_SECRET",
        "_PASSWORD",
        "_PASSWD",
        "_APIKEY",
        "_CREDENTIALS",
    ]
    .iter()
    .any(|s| upper.ends_with(s))
        || ["API_KEY", "TOKEN", "SECRET", "PASSWORD"].contains(&upper.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_replaced_by_their_name() {
        let mut s = Secrets::default();
        s.add("OPENAI_API_KEY", "sk-abcdef123456");
        s.add("SHORT_TOKEN", "1");
        s.add("DOCS_TOKEN", "sk-abcdef123456-longer");
        let text = "key=sk-abcdef123456 other=sk-abcdef123456-longer flag=1";
        assert_eq!(
            s.redact(text),
            "key=[redacted: OPENAI_API_KEY] other=[redacted: DOCS_TOKEN] flag=1"
        );
        assert!(matches!(s.redact("nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn secret_names() {
        for n in [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "DB_PASSWORD",
            "aws_secret",
            "TOKEN",
        ] {
            assert!(secret_name(n), "{n}");
        }
        for n in ["PATH", "HOME", "KEYBOARD", "TOKENIZERS_PARALLELISM"] {
            assert!(!secret_name(n), "{n}");
        }
    }
}
