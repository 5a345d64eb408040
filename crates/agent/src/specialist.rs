//! The specialist tool set (the spec's `SpecialistToolNames()`): the coding tools plus the
//! meta-tools that reach beyond the project. They live here, not in `slmcode-aci`, because
//! they talk to the network; they join the one registry through [`Registry::with`].

use std::path::Path;
use std::sync::Arc;

use slmcode_aci::{tool_names, Registry};

use crate::backend::Backend;
use crate::find_models::FindModelsTool;
use crate::mcp::call::McpCallTool;
use crate::user_config::UserConfig;

/// The meta-tools the specialist set adds to the coding set, in order.
pub const META_TOOLS: &[&str] = &["find_models", "mcp_call"];

/// The specialist tool names: the coding set, then the meta-tools.
pub fn specialist_tool_names() -> Vec<&'static str> {
    let mut names = tool_names();
    names.extend_from_slice(META_TOOLS);
    names
}

/// Whether `name` is a tool only the specialist set offers.
pub fn is_meta_tool(name: &str) -> bool {
    META_TOOLS.contains(&name)
}

/// The coding registry plus the meta-tools: find_models over `backend`, and mcp_call with the
/// servers of the user's config only. Starts (or dials) those servers to learn their tools.
pub fn specialist_registry(
    user: &UserConfig,
    root: &Path,
    backend: Backend,
) -> std::io::Result<Registry> {
    let find_models = FindModelsTool::new(backend)?;
    let mcp_call = McpCallTool::connect(user.mcp_servers.clone(), root)?;
    Ok(Registry::coding()
        .with(Arc::new(find_models))
        .with(Arc::new(mcp_call)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{BackendOptions, DEFAULT_ENDPOINT};

    #[test]
    fn the_registry_offers_exactly_the_specialist_names() {
        let dir = tempfile::tempdir().unwrap();
        let backend = Backend::new(DEFAULT_ENDPOINT, None, BackendOptions::default()).unwrap();
        let registry = specialist_registry(&UserConfig::default(), dir.path(), backend).unwrap();
        assert_eq!(registry.names(), specialist_tool_names());
        assert!(is_meta_tool("mcp_call") && !is_meta_tool("ws_read"));
    }
}
