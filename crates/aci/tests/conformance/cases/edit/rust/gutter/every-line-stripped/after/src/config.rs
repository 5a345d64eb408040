use std::collections::HashMap;
use std::fmt;

/// Settings loaded from the environment.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub host: String,
    /// TCP port, 1-65535.
    pub port: u16,
    pub retries: u32,
    pub labels: HashMap<String, String>,
}

impl Settings {
    pub fn from_env(vars: &HashMap<String, String>) -> Result<Settings, String> {
        let host = vars
            .get("APP_HOST")
            .cloned()
            .unwrap_or_else(|| "127.0.0.1".to_string());
        let port = match vars.get("APP_PORT") {
            Some(p) => p.parse::<u16>().map_err(|e| format!("bad port: {e}"))?,
            None => 8080,
        };
        let retries = match vars.get("APP_RETRIES") {
            Some(r) => r.parse::<u32>().map_err(|e| format!("bad retries: {e}"))?,
            None => 3,
        };
        Ok(Settings {
            host,
            port,
            retries,
            labels: HashMap::new(),
        })
    }

    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

impl fmt::Display for Settings {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{} (retries: {})", self.address(), self.retries)
    }
}
