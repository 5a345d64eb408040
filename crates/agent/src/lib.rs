//! slmcode-agent: the harness around the ACI. Async (tokio), and the only crate that talks
//! to the network; everything here drives the one registry of `slmcode-aci`.
//!
//! - The run: [`run`] (the agent loop), [`prompt`] (what the model is told), [`toolcall`]
//!   (calls written as text, and argument repair), [`foreign`] (other harnesses' tool names),
//!   [`trajectory`] (the log of a run).
//! - Learning: [`evolve`], the bandit that picks the edit format per model family and language.
//! - The model: [`backend`] (OpenAI-compatible chat, streaming, retries), [`runaway`] (a reply
//!   that loops or rambles, stopped on the stream), [`sampling`] (each family's settings), [`served_context`] (the context the server
//!   really loaded), [`probe`] (what a model on a server really does), [`server_memory`] (what a server refused, remembered), [`find_models`].
//! - Around the tools: [`hooks`] (the project's pre/post commands), [`approvals`] (which
//!   control files the user trusts), [`skills`], [`specialist`] (the tools that reach the
//!   network), [`blocking`] (async tools from the sync registry).
//! - MCP both ways: [`mcp`] (the server over the ACI, and the `mcp_call` client).
//! - Looking at runs: [`view`] (`slmcode view`, a local web page over the trajectories and
//!   bench reports, live), on [`local_http`] (what slmcode's HTTP servers share).
//! - [`user_config`]: the settings only the user, never a project, may give.

pub mod approvals;
pub mod backend;
pub mod bench;
pub mod blocking;
pub mod events;
pub mod evolve;
pub mod find_models;
pub mod foreign;
pub mod hooks;
pub mod launch;
pub mod local_http;
pub mod mcp;
pub mod plan;
pub mod probe;
pub mod prompt;
pub mod run;
pub mod runaway;
pub mod sampling;
pub mod served_context;
pub mod server_memory;
pub mod skills;
pub mod specialist;
pub mod toolcall;
pub mod trajectory;
pub mod user_config;
pub mod view;
