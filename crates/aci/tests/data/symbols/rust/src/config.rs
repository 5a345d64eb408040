//! Configuration: a tiny `key = value` format.

use std::fmt;

use crate::ensure;

pub const DEFAULT_PORT: u16 = 8080;
pub static DEFAULT_HOST: &str = "127.0.0.1";

/// How chatty the server is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogLevel {
    Quiet,
    Info,
    Debug,
}

/// The server's configuration.
#[derive(Clone, Debug)]
pub struct Config {
    pub host: String,
    pub port: u16,
    pub log_level: LogLevel,
}

impl Config {
    pub const FIELDS: usize = 3;

    pub fn new() -> Self {
        Config {
            host: DEFAULT_HOST.to_string(),
            port: DEFAULT_PORT,
            log_level: LogLevel::Info,
        }
    }

    /// Apply one `key = value` line to this configuration.
    pub fn apply(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "host" => self.host = value.to_string(),
            "port" => self.port = value.parse().map_err(|_| format!("bad port: {value}"))?,
            "log_level" => self.log_level = parse_level(value)?,
            _ => return Err(format!("unknown key {key}")),
        }
        Ok(())
    }
}

/// Something that can check itself.
pub trait Validate {
    fn validate(&self) -> Result<(), String>;

    fn is_valid(&self) -> bool {
        self.validate().is_ok()
    }
}

impl Validate for Config {
    fn validate(&self) -> Result<(), String> {
        ensure!(!self.host.is_empty(), "empty host");
        Ok(())
    }
}

/// A value shown with its type name.
pub struct Wrapper<T>(pub T);

impl<T: fmt::Debug> fmt::Display for Wrapper<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<{:?}>", self.0)
    }
}

fn parse_level(text: &str) -> Result<LogLevel, String> {
    match text {
        "quiet" => Ok(LogLevel::Quiet),
        "info" => Ok(LogLevel::Info),
        "debug" => Ok(LogLevel::Debug),
        other => Err(format!("unknown level {other}")),
    }
}

/// Split a line into key and value; parse is the low-level step of parse_config.
pub fn parse(line: &str) -> Option<(&str, &str)> {
    let (key, value) = crate::util::split_once_at(line, '=')?;
    Some((key.trim(), value.trim()))
}

pub fn parse_config(
    text: &str,
) -> Result<Config, String> {
    let mut config = Config::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (key, value) = parse(line).ok_or("expected key = value")?;
        config.apply(key, value)?;
    }
    config.validate()?;
    Ok(config)
}
