//! `slmcode mcp`: the registry served to any MCP client — the handler both transports share
//! ([`serve_stdio`], [`serve_http`]).
//!
//! The handler is written by hand over the one [`Registry`] (rmcp's `#[tool]` macros would
//! define every schema a second time), so an MCP client sees the same names, schemas,
//! descriptions and refusal texts as a model driven by `slmcode run`. Each connection owns a
//! [`Workspace`] of its own: what it read, its checklist, its loop guard and its checkpoint
//! session never mix with another connection's.

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, Implementation, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;
use slmcode_aci::control::CallControl;
use slmcode_aci::workspace::SharedReads;
use slmcode_aci::{Outcome, Registry, ToolSpec, Workspace};

use super::bounded::OVERSIZED_METHOD;
pub use super::http::{
    check_http_options, serve_http, HttpOptions, DEFAULT_READ_TIMEOUT, HTTP_SESSION_IDLE,
    MAX_HTTP_BODY_BYTES, MAX_HTTP_CONNECTIONS, MIN_TOKEN_CHARS,
};
pub use super::sessions::DEFAULT_MAX_SESSIONS;
pub use super::stdio::{serve_stdio, MAX_STDIO_MESSAGE_BYTES};
use super::{jsonrpc, progress};

/// What one MCP connection talks to: the shared tool set and this connection's session.
#[derive(Clone)]
pub struct SlmcodeServer {
    registry: Arc<Registry>,
    tools: Arc<Vec<Tool>>,
    workspace: Arc<Mutex<Workspace>>,
    /// Over HTTP: what the server showed any client, for requests without a session.
    shown: Option<Arc<SharedReads>>,
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
            shown: None,
            instructions,
        }
    }

    /// This server, for a request that may come without a session (HTTP, MCP 2026-07-28):
    /// such a request reads and edits through `shown`, what the server showed any client.
    pub(super) fn sessionless_through(mut self, shown: Arc<SharedReads>) -> SlmcodeServer {
        self.shown = Some(shown);
        self
    }

    /// The server-wide record of what was shown, when this request has no session: it states
    /// its protocol revision inline, as revisions from 2026-07-28 on do.
    fn sessionless(&self, context: &RequestContext<RoleServer>) -> Option<Arc<SharedReads>> {
        let version = context.meta.protocol_version()?;
        (version.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
            .then(|| self.shown.clone())
            .flatten()
    }

    /// Runs one call on this connection's workspace under `control`. Tools are synchronous
    /// and may block (ws_shell waits for its command), so the call runs on the blocking pool;
    /// calls of one connection run one at a time, in the order they arrive at the lock.
    async fn run(
        &self,
        name: String,
        args: Value,
        control: CallControl,
        shown: Option<Arc<SharedReads>>,
    ) -> Result<slmcode_aci::ToolResult, McpError> {
        let registry = self.registry.clone();
        let workspace = self.workspace.clone();
        tokio::task::spawn_blocking(move || {
            let mut ws = workspace.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(shown) = shown {
                ws.session.share_reads(shown);
            }
            registry.call_with(&mut ws, &name, &args, &control)
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
        // from_build_env names the MCP library's version; a client must see slmcode's own.
        info.name = "slmcode".into();
        info.version = env!("CARGO_PKG_VERSION").into();
        info.title = Some("slmcode coding tools".into());
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(info)
            .with_instructions(self.instructions.clone())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        // The whole list fits one page, so this server never hands out a cursor.
        if let Some(cursor) = request.and_then(|r| r.cursor) {
            return Err(McpError::invalid_params(
                format!("unknown cursor {cursor:?}: this server never gave it (tools/list answers in one page; call it without a cursor)"),
                None,
            ));
        }
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
        // A method MCP defines arrives here only when its params did not parse.
        if let Some(why) = jsonrpc::bad_params(&request.method, request.params.as_ref()) {
            return Err(McpError::invalid_params(why, None));
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
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if !self.tools.iter().any(|t| t.name == name) {
            // A protocol error, as MCP asks; its text is the registry's, naming every tool.
            let unknown = self
                .run(name, Value::Null, CallControl::new(), None)
                .await?;
            return Err(McpError::invalid_params(unknown.text, None));
        }
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let (control, progress) = match context.meta.get_progress_token() {
            Some(token) => progress::forward(token, context.peer.clone()),
            None => (CallControl::new(), None),
        };
        let call = self.run(name, args, control.clone(), self.sessionless(&context));
        let result = tokio::select! {
            result = call => result,
            // The client cancelled: the tool stops (a command's process tree is killed), the
            // workspace is free for the next call at once, and no reply is sent.
            () = context.ct.cancelled() => {
                control.cancel();
                return Err(McpError::internal_error("cancelled by the client", None));
            }
        };
        // Every progress report goes out before the result.
        drop(control);
        if let Some(forwarding) = progress {
            let _ = forwarding.await;
        }
        let result = result?;
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

#[cfg(test)]
mod tests {
    use super::*;

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
