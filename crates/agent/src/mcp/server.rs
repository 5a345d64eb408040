//! `slmcode mcp`: the registry served to any MCP client, over stdio or streamable HTTP.
//!
//! The handler is written by hand over the one [`Registry`] (rmcp's `#[tool]` macros would
//! define every schema a second time), so an MCP client sees the same names, schemas,
//! descriptions and refusal texts as a model driven by `slmcode run`. Each connection owns a
//! [`Workspace`] of its own: what it read, its checklist, its loop guard and its checkpoint
//! session never mix with another connection's.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, Implementation, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use slmcode_aci::{Config, Outcome, Registry, ToolSpec, Workspace};

use super::bounded::{BoundedLines, OVERSIZED_METHOD};
pub use super::sessions::DEFAULT_MAX_SESSIONS;
use super::sessions::{CappedSessions, Full};
use super::McpError as ServeError;

/// The largest JSON-RPC message read from stdin; a longer line is dropped unread (and logged)
/// while the connection goes on serving. Large enough for a ws_write of a big file.
pub const MAX_STDIO_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// The largest HTTP request body; a larger one is answered 413 without being read.
pub const MAX_HTTP_BODY_BYTES: usize = 16 * 1024 * 1024;

/// What one MCP connection talks to: the shared tool set and this connection's session.
#[derive(Clone)]
pub struct SlmcodeServer {
    registry: Arc<Registry>,
    tools: Arc<Vec<Tool>>,
    workspace: Arc<Mutex<Workspace>>,
    /// stdio serves every protocol era; HTTP only the eras with a session (see
    /// [`serve_http`]), so that the read-before-edit state has a connection to live in.
    versions: Cow<'static, [ProtocolVersion]>,
    instructions: String,
}

impl SlmcodeServer {
    /// A server for one connection over `workspace`.
    pub fn new(registry: Arc<Registry>, workspace: Workspace) -> SlmcodeServer {
        let tools = Arc::new(registry.specs().map(mcp_tool).collect());
        let instructions = instructions(&workspace);
        SlmcodeServer {
            registry,
            tools,
            workspace: Arc::new(Mutex::new(workspace)),
            versions: Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS),
            instructions,
        }
    }

    fn handshake_only(mut self) -> SlmcodeServer {
        self.versions = Cow::Owned(
            ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .filter(|v| v.has_initialize())
                .cloned()
                .collect(),
        );
        self
    }

    /// Runs one call on this connection's workspace. Tools are synchronous and may block
    /// (ws_shell waits for its command), so the call runs on the blocking pool; calls of one
    /// connection run one at a time, in the order they arrive at the lock.
    async fn run(&self, name: String, args: Value) -> Result<slmcode_aci::ToolResult, McpError> {
        let registry = self.registry.clone();
        let workspace = self.workspace.clone();
        tokio::task::spawn_blocking(move || {
            let mut ws = workspace.lock().unwrap_or_else(PoisonError::into_inner);
            registry.call(&mut ws, &name, &args)
        })
        .await
        .map_err(|e| McpError::internal_error(format!("the tool call was lost: {e}"), None))
    }
}

/// The MCP form of a tool spec. All four annotations are set: an omitted hint means
/// "destructive" and "open world" to a client.
fn mcp_tool(spec: &ToolSpec) -> Tool {
    let schema = match spec.schema() {
        Value::Object(o) => o,
        _ => serde_json::Map::new(),
    };
    let effect = spec.effect;
    Tool::new(spec.name, spec.description.clone().into_owned(), schema).with_annotations(
        ToolAnnotations::new()
            .read_only(effect.read_only)
            .destructive(effect.destructive)
            .idempotent(effect.idempotent)
            .open_world(effect.open_world),
    )
}

fn instructions(ws: &Workspace) -> String {
    format!(
        "slmcode: coding tools jailed to the project at {}. Paths are relative to that root. \
         ws_read a file before ws_edit, ws_patch or overwriting it with ws_write (and again if it \
         changed on disk). Edits land through a match ladder and say which rung matched; a refusal \
         says how to retry. Every result is capped and says how to get the rest.",
        ws.jail.root().display()
    )
}

impl ServerHandler for SlmcodeServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = Implementation::from_build_env();
        info.name = "slmcode".into();
        info.title = Some("slmcode coding tools".into());
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(info)
            .with_instructions(self.instructions.clone())
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.versions.clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        if request.method == OVERSIZED_METHOD {
            let bytes = request
                .params
                .as_ref()
                .and_then(|p| p.get("bytes"))
                .and_then(Value::as_u64)
                .unwrap_or(0);
            return Err(McpError::invalid_request(
                format!(
                    "the request was {bytes} bytes and was not read; the limit is 16 MiB \
                     ({MAX_STDIO_MESSAGE_BYTES} bytes). Send less: write a large file in parts \
                     (ws_write the first part, then ws_edit to add the rest)"
                ),
                None,
            ));
        }
        Err(McpError::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            format!("unknown method {}", request.method),
            None,
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if !self.tools.iter().any(|t| t.name == name) {
            // A protocol error, as MCP asks; its text is the registry's, naming every tool.
            let unknown = self.run(name, Value::Null).await?;
            return Err(McpError::invalid_params(unknown.text, None));
        }
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let result = self.run(name, args).await?;
        let content = vec![ContentBlock::text(result.text)];
        let mut reply = if result.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        };
        // What the call did, as data beside the text (the rung an edit landed on, a refusal's
        // class), so a client never has to parse the words to learn it. A read or a search has
        // nothing typed to add, and sends none: a client that prefers structured content must
        // not be shown `{"outcome":"done"}` instead of the file.
        if result.outcome != Outcome::Done {
            reply.structured_content = serde_json::to_value(&result.outcome).ok();
        }
        Ok(reply.into())
    }
}

/// Serves `registry` over stdin/stdout until the client closes stdin. Only JSON-RPC goes to
/// stdout; anything else the process says goes to stderr.
pub async fn serve_stdio(registry: Arc<Registry>, workspace: Workspace) -> Result<(), ServeError> {
    let server = SlmcodeServer::new(registry, workspace);
    let (stdin, stdout) = rmcp::transport::stdio();
    let stdin = BoundedLines::new(stdin, MAX_STDIO_MESSAGE_BYTES);
    // Lines reaching rmcp are already bounded; its own limit stays above ours so that every
    // over-long message is answered by the stand-in rather than dropped.
    let transport = rmcp::transport::async_rw::AsyncRwTransport::new_server(stdin, stdout)
        .with_max_line_length(MAX_STDIO_MESSAGE_BYTES + 4096);
    let running = server
        .serve(transport)
        .await
        .map_err(|e| ServeError::Handshake(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| ServeError::Handshake(e.to_string()))?;
    Ok(())
}

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

/// Open connections served at once. Past this the server stops accepting until one closes, so
/// a flood of connections waits in the kernel's queue instead of using up descriptors.
pub const MAX_HTTP_CONNECTIONS: usize = 256;

/// How long an HTTP session may sit idle before it is closed.
pub const HTTP_SESSION_IDLE: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// The shortest bearer token accepted for a server reachable from other machines.
pub const MIN_TOKEN_CHARS: usize = 16;

/// Browser origins that may call the server: pages served from this machine only. A request
/// without an Origin header (any non-browser client) is not affected.
const LOCAL_ORIGINS: &[&str] = &[
    "http://localhost:*",
    "https://localhost:*",
    "http://127.0.0.1:*",
    "https://127.0.0.1:*",
    "http://[::1]:*",
    "https://[::1]:*",
];

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
/// One workspace per MCP session (`Mcp-Session-Id`). The 2026-07-28 protocol era has no
/// sessions — every request stands alone — so it is not offered here: a client that probes
/// with `server/discover` is told the handshake versions and falls back to `initialize`,
/// which gives it a session. Over stdio the connection itself is the session, so every era
/// is served there.
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
    let mut local = LocalSessionManager::default();
    // A small model on a CPU can think for minutes between calls; its session (what it read)
    // should outlive that. Idle sessions still end, so abandoned ones do not pile up.
    local.session_config.keep_alive = Some(HTTP_SESSION_IDLE);
    let sessions = Arc::new(CappedSessions::new(local, options.max_sessions));
    let service = StreamableHttpService::new(
        move || {
            let ws = Workspace::new(jail.try_clone()?, config.clone());
            Ok(SlmcodeServer::new(registry.clone(), ws).handshake_only())
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
    let listener = tokio::net::TcpListener::bind(options.bind)
        .await
        .map_err(|e| ServeError::Bind(options.bind, e))?;
    let local = listener
        .local_addr()
        .map_err(|e| ServeError::Bind(options.bind, e))?;
    ready(local);
    serve_connections(listener, router, read_timeout, shutdown).await;
    cancel.cancel();
    Ok(())
}

/// How long connections get to finish after shutdown is asked for.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Accepts and serves HTTP/1.1 connections until `shutdown` resolves: at most
/// [`MAX_HTTP_CONNECTIONS`] at once, each dropped when its headers take longer than
/// `read_timeout`. (axum's own `serve` sets no header timeout.)
async fn serve_connections(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    read_timeout: Duration,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::service::TowerToHyperService;

    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_HTTP_CONNECTIONS));
    let stop = tokio_util::sync::CancellationToken::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => slot,
            () = &mut shutdown => break,
        };
        let Ok(slot) = slot else { break };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of descriptors, or a connection reset before it was accepted: the
                    // listener itself is fine, so wait a moment and go on.
                    tracing::warn!("accepting a connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let service = TowerToHyperService::new(router.clone());
        let stop = stop.child_token();
        tokio::spawn(async move {
            let _slot = slot;
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(read_timeout);
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                () = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(SHUTDOWN_GRACE, connection).await;
                }
            }
        });
    }
    stop.cancel();
    // Every connection holds a slot until it is done: getting them all back means all closed.
    let all = u32::try_from(MAX_HTTP_CONNECTIONS).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, slots.acquire_many(all)).await;
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
    if parts.method == axum::http::Method::POST && !parts.headers.contains_key("mcp-session-id") {
        #[derive(serde::Deserialize)]
        struct Probe {
            method: Option<String>,
            id: Option<Value>,
        }
        if let Ok(probe) = serde_json::from_slice::<Probe>(&bytes) {
            if probe.method.as_deref() == Some("initialize") {
                if let Err(full) = sessions.make_room().await {
                    return session_table_full(full, probe.id.unwrap_or(Value::Null));
                }
            }
        }
    }
    next.run(axum::extract::Request::from_parts(
        parts,
        axum::body::Body::from(bytes),
    ))
    .await
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

/// Compares two secrets in time that depends only on their lengths.
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    if given.len() != expected.len() {
        return false;
    }
    given
        .iter()
        .zip(expected)
        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
        == 0
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

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abd", b"abc"));
        assert!(!same_secret(b"ab", b"abc"));
        assert!(!same_secret(b"", b"abc"));
    }

    #[test]
    fn annotations_follow_the_effect() {
        let registry = Registry::coding();
        let tools: Vec<Tool> = registry.specs().map(mcp_tool).collect();
        let get = |n: &str| {
            tools
                .iter()
                .find(|t| t.name == n)
                .and_then(|t| t.annotations.clone())
                .unwrap()
        };
        for name in [
            "ws_read",
            "ws_list",
            "ws_glob",
            "ws_grep",
            "ws_todo",
            "git_status",
            "git_diff",
        ] {
            let a = get(name);
            assert_eq!(a.read_only_hint, Some(true), "{name}");
            assert_eq!(a.destructive_hint, Some(false), "{name}");
            assert_eq!(a.open_world_hint, Some(false), "{name}");
        }
        for name in [
            "ws_write",
            "ws_edit",
            "ws_patch",
            "ws_mv",
            "ws_delete",
            "ws_shell",
        ] {
            let a = get(name);
            assert_eq!(a.read_only_hint, Some(false), "{name}");
            assert_eq!(a.destructive_hint, Some(true), "{name}");
            assert!(a.idempotent_hint.is_some() && a.open_world_hint.is_some());
        }
        assert_eq!(get("ws_shell").open_world_hint, Some(true));
    }
}
