//! MCP both ways: [`server`] offers the ACI to any MCP client; [`call`] is the `mcp_call`
//! tool, through which a model reaches the MCP servers the user configured.

mod bounded;
pub mod call;
pub mod server;
mod sessions;

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
