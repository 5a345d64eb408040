//! A tiny request router with a typed configuration.

pub mod config;
pub mod router;

use crate::config::{parse_config, Config, LogLevel};
use crate::router::{Request, Response, Router};

/// The largest body the server accepts, in bytes.
pub const MAX_BODY: usize = 64 * 1024;

/// Return early with an error message when a condition does not hold.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $msg:expr) => {
        if !$cond {
            return Err($msg.to_string());
        }
    };
}

pub mod util {
    /// Trim and lowercase a header name.
    pub fn normalize(name: &str) -> String {
        name.trim().to_ascii_lowercase()
    }

    pub fn split_once_at(text: &str, sep: char) -> Option<(&str, &str)> {
        let at = text.find(sep)?;
        Some((&text[..at], &text[at + 1..]))
    }
}

/// Build a router from a configuration text and serve one request.
pub fn run(config_text: &str, raw: &str) -> Result<Response, String> {
    let config: Config = parse_config(config_text)?;
    ensure!(config.port != 0, "port must not be zero");
    let mut router = Router::new(config.clone());
    router.route("/health", router::handler);
    let request = router::parse(raw)?;
    if request.body.len() > MAX_BODY {
        return Err("body too large".to_string());
    }
    if config.log_level == LogLevel::Debug {
        eprintln!("{} {}", request.method, util::normalize(&request.path));
    }
    Ok(router.dispatch(&request))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_health_check() {
        let response = run("port = 8080", "GET /health").unwrap();
        assert_eq!(response.status, 200);
    }
}
