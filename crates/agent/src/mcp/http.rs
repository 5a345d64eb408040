//! `slmcode mcp --http`: the handler served as streamable HTTP at `http://BIND/mcp`, with the
//! exposure rules (loopback unless opted out with a token), a cap on sessions and connections,
//! deadlines for slow clients, and every body checked as JSON-RPC before the library sees it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use slmcode_aci::workspace::SharedReads;
use slmcode_aci::{Config, Registry, Workspace};

use super::jsonrpc::{self, Verdict};
use super::server::SlmcodeServer;
pub use super::sessions::DEFAULT_MAX_SESSIONS;
use super::sessions::{CappedSessions, Full};
use super::McpError as ServeError;
pub use crate::local_http::MAX_HTTP_CONNECTIONS;
use crate::local_http::{listen, same_secret, serve_connections, LOCAL_ORIGINS};

/// The largest HTTP request body; a larger one is answered 413 without being read.
pub const MAX_HTTP_BODY_BYTES: usize = 16 * 1024 * 1024;

/// How `slmcode mcp --http` is exposed.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    pub bind: SocketAddr,
    /// A bind address that is not loopback; refused unless this is set and a token is given.
    pub allow_remote: bool,
    /// When set, every request must carry `Authorization: Bearer <token>`.
    pub token: Option<String>,
    /// The most sessions held at once; see `CappedSessions`.
    pub max_sessions: usize,
    /// How long a client may take to send a request's headers, and again its body. A client
    /// slower than that (or one that opens connections and sends nothing) is disconnected,
    /// so that idle sockets cannot pile up.
    pub read_timeout: Duration,
}

impl HttpOptions {
    /// Local defaults: the given address, no token, [`DEFAULT_MAX_SESSIONS`] and
    /// [`DEFAULT_READ_TIMEOUT`].
    pub fn new(bind: SocketAddr) -> HttpOptions {
        HttpOptions {
            bind,
            allow_remote: false,
            token: None,
            max_sessions: DEFAULT_MAX_SESSIONS,
            read_timeout: DEFAULT_READ_TIMEOUT,
        }
    }
}

/// Time for a request's headers, and again for its body: ample on any link a person would
/// serve tools over, short enough that connections which never finish a request are dropped.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long an HTTP session may sit idle before it is closed.
pub const HTTP_SESSION_IDLE: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// The shortest bearer token accepted for a server reachable from other machines.
pub const MIN_TOKEN_CHARS: usize = 16;

/// Checks the exposure rules before anything is bound: loopback unless the caller opted out
/// with both a flag and a token.
pub fn check_http_options(options: &HttpOptions) -> Result<(), ServeError> {
    let token_ok = options
        .token
        .as_deref()
        .is_some_and(|t| t.chars().count() >= MIN_TOKEN_CHARS);
    if let Some(t) = options.token.as_deref() {
        if t.trim().is_empty() {
            return Err(ServeError::Exposure(
                "the bearer token is empty; set it to a long random string".into(),
            ));
        }
    }
    if !options.bind.ip().is_loopback() {
        if !options.allow_remote {
            return Err(ServeError::Exposure(format!(
                "{} is not a loopback address, so other machines could reach the tools (and \
                 ws_shell). Bind 127.0.0.1, or pass --allow-remote with a bearer token in \
                 SLMCODE_MCP_TOKEN",
                options.bind
            )));
        }
        if !token_ok {
            return Err(ServeError::Exposure(format!(
                "--allow-remote needs a bearer token of at least {MIN_TOKEN_CHARS} characters in \
                 SLMCODE_MCP_TOKEN (e.g. SLMCODE_MCP_TOKEN=$(openssl rand -hex 24))"
            )));
        }
    }
    Ok(())
}

/// Serves `registry` as streamable HTTP at `http://BIND/mcp` until `shutdown` resolves.
///
/// One workspace per MCP session (`Mcp-Session-Id`) for the revisions with a handshake. The
/// 2026-07-28 revision has no sessions — every request stands alone, with a workspace of its
/// own — so what was read is kept server-wide ([`SharedReads`]): such a request may edit a
/// file whose current bytes this server showed to any client. Run one server per trust
/// domain.
pub async fn serve_http(
    registry: Arc<Registry>,
    jail: slmcode_aci::path::Jail,
    config: Config,
    options: HttpOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), ServeError> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

    check_http_options(&options)?;
    let cancel = tokio_util::sync::CancellationToken::new();
    let mut http_config = StreamableHttpServerConfig::default()
        .with_cancellation_token(cancel.child_token())
        .with_allowed_origins(LOCAL_ORIGINS.iter().copied())
        .with_max_request_body_bytes(MAX_HTTP_BODY_BYTES);
    if options.allow_remote {
        // Reached by a name or address the server cannot know; the token guards it instead.
        http_config = http_config.disable_allowed_hosts();
    }
    let jail = Arc::new(jail);
    let shown = SharedReads::new();
    let mut local = LocalSessionManager::default();
    // A small model on a CPU can think for minutes between calls; its session (what it read)
    // should outlive that. Idle sessions still end, so abandoned ones do not pile up.
    local.session_config.keep_alive = Some(HTTP_SESSION_IDLE);
    let sessions = Arc::new(CappedSessions::new(local, options.max_sessions));
    let service = StreamableHttpService::new(
        move || {
            let ws = Workspace::new(jail.try_clone()?, config.clone());
            Ok(SlmcodeServer::new(registry.clone(), ws).sessionless_through(shown.clone()))
        },
        sessions.clone(),
        http_config,
    );
    let token = options.token.clone().map(Arc::<str>::from);
    let read_timeout = options.read_timeout;
    // Outermost first: the token, then the body deadline and the session cap, so that a
    // client without the token can neither hold a connection open nor evict a session.
    let router = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(move |req, next| {
            admit(sessions.clone(), read_timeout, req, next)
        }))
        .layer(axum::middleware::from_fn(move |req, next| {
            require_token(token.clone(), req, next)
        }));
    let (listener, local) = listen(options.bind)
        .await
        .map_err(|e| ServeError::Bind(options.bind, e))?;
    ready(local);
    serve_connections(listener, router, read_timeout, shutdown).await;
    cancel.cancel();
    Ok(())
}

/// Reads the whole request body within `read_timeout` (408 when the client is slower, 413 when
/// it is larger than [`MAX_HTTP_BODY_BYTES`]), then makes room for a new session when the
/// request is an `initialize` without a session (503 with [`Full`]'s text when none can be
/// made).
async fn admit(
    sessions: Arc<CappedSessions>,
    read_timeout: Duration,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::{header, StatusCode};
    use axum::response::IntoResponse;

    let (parts, body) = req.into_parts();
    let bytes = match tokio::time::timeout(
        read_timeout,
        axum::body::to_bytes(body, MAX_HTTP_BODY_BYTES),
    )
    .await
    {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(_)) => {
            return (
                StatusCode::PAYLOAD_TOO_LARGE,
                [(header::CONNECTION, "close")],
                format!("the request body is over {MAX_HTTP_BODY_BYTES} bytes\n"),
            )
                .into_response()
        }
        Err(_) => {
            return (
                StatusCode::REQUEST_TIMEOUT,
                [(header::CONNECTION, "close")],
                format!(
                    "the request body did not arrive within {} s\n",
                    read_timeout.as_secs_f64()
                ),
            )
                .into_response()
        }
    };
    // A body that is no JSON-RPC message is answered here, as JSON-RPC says: 400 with the
    // error (id null). A handshake without its params gets -32602 like any bad params.
    if parts.method == axum::http::Method::POST {
        let verdict = jsonrpc::parse(&bytes).map(|message| {
            let verdict = jsonrpc::check_message(&message);
            (message, verdict)
        });
        let message = match verdict {
            Ok((message, Verdict::Pass)) => message,
            Ok((_, Verdict::Answer(error))) | Err(error) => return refused_message(error),
        };
        // A new session: room is made for it first.
        if message["method"] == "initialize" && !parts.headers.contains_key("mcp-session-id") {
            if let Err(full) = sessions.make_room().await {
                return session_table_full(full, message["id"].clone());
            }
        }
    }
    next.run(axum::extract::Request::from_parts(
        parts,
        axum::body::Body::from(bytes),
    ))
    .await
}

/// A message answered before the library sees it: 400 for a body that is no JSON-RPC
/// message, 200 for a handshake whose params do not fit (an ordinary error response).
fn refused_message(error: Value) -> axum::response::Response {
    use axum::http::{header, StatusCode};
    use axum::response::IntoResponse;
    let status = if error["error"]["code"] == jsonrpc::INVALID_PARAMS {
        StatusCode::OK
    } else {
        StatusCode::BAD_REQUEST
    };
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        error.to_string(),
    )
        .into_response()
}

/// 503 with a JSON-RPC error answering the refused `initialize`, so that an MCP client shows
/// the reason rather than a bare status.
fn session_table_full(full: Full, id: Value) -> axum::response::Response {
    use axum::http::{header, StatusCode};
    use axum::response::IntoResponse;
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32000, "message": full.to_string()},
    });
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::RETRY_AFTER, "5"),
        ],
        body.to_string(),
    )
        .into_response()
}

/// Refuses a request without the bearer token (when one is set) before rmcp sees it.
async fn require_token(
    token: Option<Arc<str>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::{header, StatusCode};
    use axum::response::IntoResponse;
    if let Some(token) = token {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or("");
        if !same_secret(given.as_bytes(), token.as_bytes()) {
            return (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, "Bearer")],
                "a bearer token is required: send Authorization: Bearer <SLMCODE_MCP_TOKEN>\n",
            )
                .into_response();
        }
    }
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(bind: &str, allow_remote: bool, token: Option<&str>) -> HttpOptions {
        HttpOptions {
            allow_remote,
            token: token.map(str::to_string),
            ..HttpOptions::new(bind.parse().unwrap())
        }
    }

    #[test]
    fn loopback_needs_nothing_remote_needs_flag_and_token() {
        assert!(check_http_options(&opts("127.0.0.1:0", false, None)).is_ok());
        assert!(check_http_options(&opts("[::1]:0", false, None)).is_ok());
        let e = check_http_options(&opts("0.0.0.0:8080", false, None))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--allow-remote"), "{e}");
        let e = check_http_options(&opts("0.0.0.0:8080", true, None))
            .unwrap_err()
            .to_string();
        assert!(e.contains("bearer token of at least 16"), "{e}");
        assert!(check_http_options(&opts("0.0.0.0:8080", true, Some("short"))).is_err());
        assert!(check_http_options(&opts("0.0.0.0:8080", true, Some("0123456789abcdef"))).is_ok());
        assert!(check_http_options(&opts("127.0.0.1:0", false, Some("  "))).is_err());
    }
}
