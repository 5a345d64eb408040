//! `slmcode mcp`: serves the coding tools to any MCP client, over stdin/stdout or over
//! streamable HTTP; each connection is its own session.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use slmcode_aci::Registry;
use slmcode_agent::mcp::server::{self, HttpOptions};

use super::common::{open_workspace, with_project_hooks};
use crate::terminal::{self, errln};

/// The arguments of `slmcode mcp`.
#[derive(clap::Args)]
pub struct McpArgs {
    /// Project root (default: the current directory).
    #[arg(long)]
    root: Option<PathBuf>,
    /// Serve streamable HTTP on this address (e.g. 127.0.0.1:8765; port 0 picks one)
    /// instead of stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// Allow a non-loopback --http address. Needs a bearer token of at least 16
    /// characters in SLMCODE_MCP_TOKEN; clients send `Authorization: Bearer <token>`.
    #[arg(long, requires = "http")]
    allow_remote: bool,
    /// With --http: the most MCP sessions held at once. When all are taken, the one idle
    /// the longest is closed for a new client; when all are running a call, the new
    /// client is refused (503) until one finishes.
    #[arg(long, requires = "http", value_name = "N", default_value_t = server::DEFAULT_MAX_SESSIONS,
          value_parser = clap::builder::TypedValueParser::map(clap::value_parser!(u16).range(1..), usize::from))]
    max_sessions: usize,
    /// With --http: seconds a client may take to send a request's headers, and again its
    /// body, before it is disconnected.
    #[arg(long, requires = "http", value_name = "SECS", default_value_t = server::DEFAULT_READ_TIMEOUT.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    read_timeout: u64,
}

/// `slmcode mcp`.
pub fn run(args: McpArgs) -> Result<ExitCode> {
    let http = args.http.map(|bind| HttpOptions {
        allow_remote: args.allow_remote,
        token: std::env::var("SLMCODE_MCP_TOKEN").ok(),
        max_sessions: args.max_sessions,
        read_timeout: std::time::Duration::from_secs(args.read_timeout),
        ..HttpOptions::new(bind)
    });
    serve(args.root, http)
}

/// Stdio by default, streamable HTTP with --http. Logs (rmcp's included) go to stderr only;
/// stdout carries JSON-RPC and nothing else.
fn serve(root: Option<PathBuf>, http: Option<HttpOptions>) -> Result<ExitCode> {
    tracing_subscriber::fmt()
        .with_writer(terminal::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SLMCODE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("error")),
        )
        .init();
    let ws = open_workspace(root)?;
    let registry = Arc::new(with_project_hooks(Registry::coding(), &ws)?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    match http {
        None => runtime.block_on(server::serve_stdio(registry, ws))?,
        Some(options) => {
            let root = ws.jail.root().to_path_buf();
            runtime.block_on(server::serve_http(
                registry,
                ws.jail,
                ws.config,
                options,
                async {
                    let _ = tokio::signal::ctrl_c().await;
                },
                |addr| {
                    errln!(
                        "slmcode mcp: serving http://{addr}/mcp for {}",
                        root.display()
                    )
                },
            ))?
        }
    }
    Ok(ExitCode::SUCCESS)
}
