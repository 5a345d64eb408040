//! slmcode-agent: the harness around the ACI. Async (tokio), and the only crate that talks
//! to the network: the MCP server and the `mcp_call` client live here, over the one registry
//! of `slmcode-aci`.

pub mod approvals;
pub mod backend;
pub mod blocking;
pub mod evolve;
pub mod find_models;
pub mod hooks;
pub mod mcp;
pub mod prompt;
pub mod run;
pub mod skills;
pub mod specialist;
pub mod toolcall;
pub mod trajectory;
pub mod user_config;
