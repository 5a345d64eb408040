//! `mcp_call {server, tool, arguments}`: one tool of the specialist set through which a model
//! reaches the MCP servers in the user's config. The registry is synchronous, so the client
//! side runs on a [`BlockingRuntime`] of its own.
//!
//! Servers are connected with the `initialize` handshake (some servers never answer the newer
//! `server/discover` probe, and a client would wait for it), their stderr is drained, and every
//! request has a timeout. A server that times out or dies is dropped and started again on the
//! next call.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, ResourceContents};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use slmcode_aci::registry::{Args, Effect, Kind, Param, Reply, Tool, ToolError, ToolSpec};
use slmcode_aci::RefusalClass;
use slmcode_aci::Workspace;
use tokio::io::AsyncBufReadExt;
use tokio::sync::Mutex as AsyncMutex;

use crate::blocking::BlockingRuntime;
use crate::user_config::{McpServer, McpTransport};

/// How many `server.tool` names the description lists; the rest are named on request.
pub const LISTED_TOOL_NAMES: usize = 12;

/// How long starting a server and listing its tools may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Lines of a server's stderr kept for error messages.
const STDERR_TAIL_LINES: usize = 8;

const PARAMS: &[Param] = &[
    Param {
        name: "server",
        kind: Kind::String,
        required: false,
        description: "the MCP server's name from the list above (or give tool as \"server.tool\")",
        aliases: &["server_name", "mcp_server"],
    },
    Param {
        name: "tool",
        kind: Kind::String,
        required: true,
        description: "the tool's name on that server",
        aliases: &["name", "tool_name"],
    },
    Param {
        name: "arguments",
        kind: Kind::Object,
        required: false,
        description: "the tool's arguments as a JSON object (default {})",
        aliases: &["args", "params", "input", "parameters"],
    },
];

/// A connected server: its client handle, its tools, and the tail of its stderr.
struct Connection {
    client: RunningService<RoleClient, ()>,
    tools: Vec<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

/// The mcp_call tool over the user's configured servers.
pub struct McpCallTool {
    spec: ToolSpec,
    servers: Vec<McpServer>,
    root: PathBuf,
    runtime: BlockingRuntime,
    connections: Arc<AsyncMutex<HashMap<String, Connection>>>,
}

impl McpCallTool {
    /// Connects to every configured server (in parallel, each bounded by [`CONNECT_TIMEOUT`])
    /// to learn its tools for the description. A server that is down at this point is named
    /// as such and tried again when a call names it. Stdio servers start in `root`.
    pub fn connect(servers: Vec<McpServer>, root: &Path) -> std::io::Result<McpCallTool> {
        let runtime = BlockingRuntime::new("slmcode-mcp-call")?;
        let mut tool = McpCallTool {
            spec: ToolSpec {
                name: "mcp_call",
                description: Cow::Borrowed(""),
                params: PARAMS,
                example: "{\"server\":\"docs\",\"tool\":\"search\",\"arguments\":{\"query\":\"retry policy\"}}",
                effect: Effect {
                    read_only: false,
                    destructive: true,
                    idempotent: false,
                    open_world: true,
                },
                rest_hint: "ask the server for less (a narrower query, a smaller range)",
                passes_unknown_args: false,
            },
            servers,
            root: root.to_path_buf(),
            runtime,
            connections: Arc::new(AsyncMutex::new(HashMap::new())),
        };
        let names: Vec<String> = tool.servers.iter().map(|s| s.name.clone()).collect();
        let listed = tool
            .runtime
            .wait(tool.connect_all(names))
            .unwrap_or_default();
        tool.spec.description = Cow::Owned(describe(&tool.servers, &listed));
        Ok(tool)
    }

    fn connect_all(
        &self,
        names: Vec<String>,
    ) -> impl std::future::Future<Output = Vec<(String, Result<Vec<String>, String>)>> + Send + 'static
    {
        let servers = self.servers.clone();
        let root = self.root.clone();
        let connections = self.connections.clone();
        async move {
            let tasks: Vec<_> = names
                .into_iter()
                .filter_map(|n| servers.iter().find(|s| s.name == n).cloned())
                .map(|server| {
                    let root = root.clone();
                    tokio::spawn(async move {
                        let result = start(&server, &root).await;
                        (server.name.clone(), result)
                    })
                })
                .collect();
            let mut out = Vec::new();
            for task in tasks {
                if let Ok((name, result)) = task.await {
                    match result {
                        Ok(conn) => {
                            out.push((name.clone(), Ok(conn.tools.clone())));
                            connections.lock().await.insert(name, conn);
                        }
                        Err(e) => out.push((name, Err(e))),
                    }
                }
            }
            out
        }
    }
}

/// The model-facing description: what the tool is for and up to [`LISTED_TOOL_NAMES`]
/// `server.tool` names.
fn describe(servers: &[McpServer], listed: &[(String, Result<Vec<String>, String>)]) -> String {
    if servers.is_empty() {
        return "Call a tool of another MCP server. No servers are configured: the user adds them \
                under mcp_servers: in ~/.config/slmcode/config.yaml."
            .to_string();
    }
    let mut names = Vec::new();
    let mut total = 0;
    let mut down = Vec::new();
    for server in servers {
        match listed.iter().find(|(n, _)| *n == server.name) {
            Some((_, Ok(tools))) => {
                total += tools.len();
                for t in tools {
                    if names.len() < LISTED_TOOL_NAMES {
                        names.push(format!("{}.{t}", server.name));
                    }
                }
            }
            _ => down.push(server.name.as_str()),
        }
    }
    let mut text = String::from(
        "Call a tool of another MCP server: give server, tool and arguments (a JSON object). ",
    );
    if names.is_empty() {
        text.push_str("No tools are known yet.");
    } else {
        text.push_str(&format!("Tools: {}", names.join(", ")));
        if total > names.len() {
            text.push_str(&format!(
                " and {} more (a wrong tool name gets the server's full list)",
                total - names.len()
            ));
        }
        text.push('.');
    }
    if !down.is_empty() {
        text.push_str(&format!(
            " Not reachable at start: {} (tried again on a call).",
            down.join(", ")
        ));
    }
    text
}

/// Starts (or dials) one server, shakes hands and lists its tools, within [`CONNECT_TIMEOUT`]
/// (not the per-call timeout: a first start may install or compile something).
async fn start(server: &McpServer, root: &Path) -> Result<Connection, String> {
    let stderr = Arc::new(Mutex::new(VecDeque::new()));
    let mut reader = None;
    let connecting = async {
        let client = match &server.transport {
            McpTransport::Stdio { command, args, env } => {
                let mut cmd = tokio::process::Command::new(command);
                cmd.args(args).envs(env).current_dir(root);
                let (transport, child_stderr) = rmcp::transport::TokioChildProcess::builder(cmd)
                    .stderr(Stdio::piped())
                    .spawn()
                    .map_err(|e| format!("cannot start `{command}`: {e}"))?;
                if let Some(err) = child_stderr {
                    reader = Some(drain(err, stderr.clone()));
                }
                ().serve(transport).await.map_err(|e| e.to_string())?
            }
            McpTransport::Http {
                url,
                bearer_token_env,
            } => {
                use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                if let Some(var) = bearer_token_env {
                    let token = std::env::var(var).map_err(|_| {
                        format!("its bearer token variable {var} is not set in the environment")
                    })?;
                    config = config.auth_header(token);
                }
                let transport = rmcp::transport::StreamableHttpClientTransport::from_config(config);
                ().serve(transport).await.map_err(|e| e.to_string())?
            }
        };
        let tools = client
            .list_all_tools()
            .await
            .map_err(|e| format!("it did not list its tools: {e}"))?
            .into_iter()
            .map(|t| t.name.to_string())
            .collect();
        Ok::<_, String>(Connection {
            client,
            tools,
            stderr: stderr.clone(),
        })
    };
    let outcome = tokio::time::timeout(CONNECT_TIMEOUT, connecting).await;
    if !matches!(outcome, Ok(Ok(_))) {
        // A server that failed to start usually said why on stderr just before exiting.
        if let Some(reader) = reader {
            let _ = tokio::time::timeout(Duration::from_millis(500), reader).await;
        }
    }
    match outcome {
        Ok(Ok(c)) => Ok(c),
        Ok(Err(e)) => Err(with_stderr(e, &stderr)),
        Err(_) => Err(with_stderr(
            format!(
                "it did not answer the MCP handshake within {} s",
                CONNECT_TIMEOUT.as_secs()
            ),
            &stderr,
        )),
    }
}

/// Reads a child's stderr to the end so it can never block on a full pipe, keeping the last
/// lines for error messages.
fn drain(
    err: tokio::process::ChildStderr,
    tail: Arc<Mutex<VecDeque<String>>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(err).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
            if tail.len() == STDERR_TAIL_LINES {
                tail.pop_front();
            }
            let mut line = line;
            if line.len() > 300 {
                let cut = (0..=300)
                    .rev()
                    .find(|i| line.is_char_boundary(*i))
                    .unwrap_or(0);
                line.truncate(cut);
                line.push('…');
            }
            tail.push_back(line);
        }
    })
}

fn with_stderr(message: String, tail: &Arc<Mutex<VecDeque<String>>>) -> String {
    let tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
    if tail.is_empty() {
        message
    } else {
        let lines: Vec<&str> = tail.iter().map(String::as_str).collect();
        format!("{message}; its stderr ended with:\n{}", lines.join("\n"))
    }
}

/// Why one call did not give a result, for the model.
enum CallFailure {
    UnknownServer,
    Down(String),
    UnknownTool(Vec<String>),
    Failed(String),
    Timeout(u64),
}

impl Tool for McpCallTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn run(&self, _ws: &mut Workspace, args: &Args) -> Result<Reply, ToolError> {
        let given_tool = args.str("tool").unwrap_or_default().trim().to_string();
        let (server, tool) = match args.str("server").map(str::trim).filter(|s| !s.is_empty()) {
            Some(s) => {
                // "fs.read_file" with server "fs" as well: the prefix is the server's name.
                let t = given_tool
                    .strip_prefix(&format!("{s}."))
                    .unwrap_or(&given_tool);
                (s.to_string(), t.to_string())
            }
            None => match given_tool.split_once('.') {
                Some((s, t)) if self.servers.iter().any(|x| x.name == s) => {
                    (s.to_string(), t.to_string())
                }
                _ => {
                    return Err(ToolError::Args(format!(
                        "mcp_call needs \"server\": one of {}. Example: mcp_call {}",
                        self.server_list(),
                        self.spec.example
                    )))
                }
            },
        };
        let Some(config) = self.servers.iter().find(|s| s.name == server).cloned() else {
            return Err(self.failure(&server, &tool, CallFailure::UnknownServer));
        };
        let arguments = args.object("arguments").cloned().unwrap_or_default();
        let root = self.root.clone();
        let connections = self.connections.clone();
        let (name, tool_name) = (server.clone(), tool.clone());
        let outcome = self.runtime.wait(async move {
            let mut pool = connections.lock().await;
            if pool.get(&name).is_some_and(|c| c.client.is_closed()) {
                pool.remove(&name);
            }
            if !pool.contains_key(&name) {
                match start(&config, &root).await {
                    Ok(c) => {
                        pool.insert(name.clone(), c);
                    }
                    Err(e) => return Err(CallFailure::Down(e)),
                }
            }
            let Some(conn) = pool.get(&name) else {
                return Err(CallFailure::Down("it is not connected".into()));
            };
            if !conn.tools.contains(&tool_name) {
                return Err(CallFailure::UnknownTool(conn.tools.clone()));
            }
            let params = CallToolRequestParams::new(tool_name).with_arguments(arguments);
            let timeout = Duration::from_secs(config.timeout_sec);
            match tokio::time::timeout(timeout, conn.client.call_tool(params)).await {
                Ok(Ok(result)) => Ok(result),
                Ok(Err(e)) => {
                    let gone = matches!(
                        e,
                        rmcp::ServiceError::TransportClosed | rmcp::ServiceError::TransportSend(_)
                    );
                    // Give the stderr reader a moment to catch the last words of a dying server.
                    if gone {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    let message = with_stderr(e.to_string(), &conn.stderr);
                    if gone || conn.client.is_closed() {
                        pool.remove(&name);
                        return Err(CallFailure::Down(message));
                    }
                    Err(CallFailure::Failed(message))
                }
                Err(_) => {
                    // A server stuck on one call may be stuck for good: start it afresh next time.
                    pool.remove(&name);
                    Err(CallFailure::Timeout(config.timeout_sec))
                }
            }
        });
        match outcome {
            Some(Ok(result)) => {
                let text = result_text(&result);
                if result.is_error == Some(true) {
                    Err(ToolError::refused(
                        RefusalClass::Other,
                        format!("{server}.{tool} returned an error:\n{text}"),
                    ))
                } else {
                    Ok(Reply::from(text))
                }
            }
            Some(Err(f)) => Err(self.failure(&server, &tool, f)),
            None => Err(self.failure(
                &server,
                &tool,
                CallFailure::Failed("the call was lost inside slmcode".into()),
            )),
        }
    }
}

impl McpCallTool {
    fn server_list(&self) -> String {
        if self.servers.is_empty() {
            return "(none configured: the user adds mcp_servers: to ~/.config/slmcode/config.yaml)"
                .into();
        }
        self.servers
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn failure(&self, server: &str, tool: &str, failure: CallFailure) -> ToolError {
        ToolError::refused(RefusalClass::Other, match failure {
            CallFailure::UnknownServer => format!(
                "mcp_call: there is no MCP server \"{server}\". Servers: {}",
                self.server_list()
            ),
            CallFailure::Down(why) => format!(
                "mcp_call: MCP server \"{server}\" is not available: {why}. It is started again on the next call"
            ),
            CallFailure::UnknownTool(tools) => format!(
                "mcp_call: server \"{server}\" has no tool \"{tool}\". Its tools: {}",
                if tools.is_empty() {
                    "(none)".to_string()
                } else {
                    tools.join(", ")
                }
            ),
            CallFailure::Failed(why) => format!("mcp_call: {server}.{tool} failed: {why}"),
            CallFailure::Timeout(secs) => format!(
                "mcp_call: {server}.{tool} did not answer within {secs} s, so it was abandoned and the \
                 server will be restarted on the next call. Ask for less, or try another way"
            ),
        })
    }
}

/// A remote result as text: text blocks as they are, other blocks named with their size,
/// structured content as JSON when there is no text.
fn result_text(result: &CallToolResult) -> String {
    let mut parts = Vec::new();
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => parts.push(t.text.clone()),
            ContentBlock::Image(i) => parts.push(format!(
                "[image {}, {} bytes of base64 not shown]",
                i.mime_type,
                i.data.len()
            )),
            ContentBlock::Audio(a) => parts.push(format!(
                "[audio {}, {} bytes of base64 not shown]",
                a.mime_type,
                a.data.len()
            )),
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    parts.push(format!("[resource {uri}]\n{text}"))
                }
                ResourceContents::BlobResourceContents { uri, blob, .. } => parts.push(format!(
                    "[resource {uri}: {} bytes of base64 not shown]",
                    blob.len()
                )),
                other => parts.push(
                    serde_json::to_string(other).unwrap_or_else(|_| "[unreadable resource]".into()),
                ),
            },
            ContentBlock::ResourceLink(l) => parts.push(format!("[resource link {}]", l.uri)),
            #[allow(unreachable_patterns)]
            other => parts.push(
                serde_json::to_string(other).unwrap_or_else(|_| "[unreadable content]".into()),
            ),
        }
    }
    if parts.is_empty() {
        if let Some(structured) = &result.structured_content {
            return serde_json::to_string_pretty(structured).unwrap_or_default();
        }
        return "(no content)".into();
    }
    parts.join("\n")
}
