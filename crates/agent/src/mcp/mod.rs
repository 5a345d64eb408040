//! MCP both ways: [`server`] offers the ACI to any MCP client (over stdio and streamable
//! HTTP, every message checked by [`jsonrpc`] first); [`call`] is the `mcp_call` tool, through
//! which a model reaches the MCP servers the user configured.

mod bounded;
pub mod call;
mod http;
pub mod jsonrpc;
mod progress;
pub mod server;
mod sessions;
mod stdio;

use std::net::SocketAddr;

/// Why `slmcode mcp` could not serve.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("refused to serve: {0}")]
    Exposure(String),
    #[error("cannot listen on {0}: {1}")]
    Bind(SocketAddr, std::io::Error),
    #[error("the MCP connection failed: {0}")]
    Handshake(String),
}
