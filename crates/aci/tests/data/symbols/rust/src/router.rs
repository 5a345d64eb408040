//! Routing requests to handlers.

use std::collections::HashMap;

use crate::config::{Config, Validate};

/// A function that answers a request.
pub type Handler = fn(&Request) -> Response;

pub struct Request {
    pub method: String,
    pub path: String,
    pub body: Vec<u8>,
}

pub struct Response {
    pub status: u16,
    pub body: String,
}

/// Raw bytes of a header value, seen as a number or as text.
#[repr(C)]
pub union RawValue {
    pub number: u64,
    pub bytes: [u8; 8],
}

pub struct Router {
    config: Config,
    routes: HashMap<String, Handler>,
}

impl Router {
    pub fn new(config: Config) -> Self {
        Router { config, routes: HashMap::new() }
    }

    pub fn route(&mut self, path: &str, handler: Handler) -> &mut Self {
        self.routes.insert(path.to_string(), handler);
        self
    }

    pub fn dispatch(&self, request: &Request) -> Response {
        match self.routes.get(&request.path) {
            Some(handler) if self.config.is_valid() => handler(request),
            _ => not_found(request),
        }
    }
}

/// The default handler: answers "handler ok" to anything.
pub fn handler(_request: &Request) -> Response {
    Response { status: 200, body: "handler ok".to_string() }
}

fn not_found(request: &Request) -> Response {
    Response { status: 404, body: format!("no route for {}", request.path) }
}

/// Parse a request line such as `GET /path`.
pub fn parse(raw: &str) -> Result<Request, String> {
    fn word<'a, I>(words: &mut I, what: &str) -> Result<String, String>
    where
        I: Iterator<Item = &'a str>,
    {
        words.next().map(str::to_string).ok_or(format!("missing {what}"))
    }

    let mut words = raw.split_whitespace();
    let method = word(&mut words, "method")?;
    let path = word(&mut words, "path")?;
    Ok(Request { method, path, body: Vec::new() })
}

pub fn parse_header<'a>(
    line: &'a str,
    lowercase: bool,
) -> Option<(String, &'a str)> {
    let (name, value) = crate::util::split_once_at(line, ':')?;
    let name = if lowercase { crate::util::normalize(name) } else { name.to_string() };
    Some((name, value.trim()))
}
