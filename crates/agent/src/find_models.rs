//! `find_models {query, limit}` (specialist set) and `slmcode models`: the models the endpoint
//! serves, from `/v1/models` and, for Ollama, `/api/tags` (size and quantization).

use std::borrow::Cow;

use slmcode_aci::registry::{Args, Effect, Kind, Param, Reply, Tool, ToolError, ToolSpec};
use slmcode_aci::RefusalClass;
use slmcode_aci::Workspace;

use crate::backend::{Backend, BackendError, ModelInfo};
use crate::blocking::BlockingRuntime;

/// Models listed when no limit is given.
pub const DEFAULT_LIMIT: usize = 20;

const PARAMS: &[Param] = &[
    Param {
        name: "query",
        kind: Kind::String,
        required: false,
        description: "part of the model name, e.g. \"coder\" (default: all)",
        aliases: &["filter", "name", "q"],
    },
    Param {
        name: "limit",
        kind: Kind::Integer { min: 1 },
        required: false,
        description: "how many to list (default 20)",
        aliases: &["max", "n"],
    },
];

/// The models whose id contains `query` (case-insensitive), as lines of text.
pub fn describe(models: &[ModelInfo], query: Option<&str>, limit: usize, endpoint: &str) -> String {
    let q = query
        .map(str::trim)
        .filter(|q| !q.is_empty())
        .map(str::to_lowercase);
    let matching: Vec<&ModelInfo> = models
        .iter()
        .filter(|m| q.as_ref().is_none_or(|q| m.id.to_lowercase().contains(q)))
        .collect();
    let mut lines: Vec<String> = matching
        .iter()
        .take(limit)
        .map(|m| {
            let mut extra = Vec::new();
            if !m.details.is_empty() {
                extra.push(m.details.clone());
            }
            if let Some(c) = m.context {
                extra.push(format!("context {c}"));
            }
            if extra.is_empty() {
                m.id.clone()
            } else {
                format!("{}  ({})", m.id, extra.join(", "))
            }
        })
        .collect();
    let plural = |n: usize| if n == 1 { "model" } else { "models" };
    let what = match &q {
        Some(q) => format!(
            "{} of {} {} match \"{q}\"",
            matching.len(),
            models.len(),
            plural(models.len())
        ),
        None => format!("{} {}", models.len(), plural(models.len())),
    };
    if matching.len() > limit {
        lines.push(format!(
            "({what} at {endpoint}; showing {limit}, raise limit for more)"
        ));
    } else {
        lines.push(format!("({what} at {endpoint})"));
    }
    lines.join("\n")
}

/// The find_models tool over one backend.
pub struct FindModelsTool {
    spec: ToolSpec,
    backend: Backend,
    runtime: BlockingRuntime,
}

impl FindModelsTool {
    pub fn new(backend: Backend) -> std::io::Result<FindModelsTool> {
        Ok(FindModelsTool {
            spec: ToolSpec {
                name: "find_models",
                description: Cow::Borrowed(
                    "List the models the model server offers, optionally filtered by name.",
                ),
                params: PARAMS,
                example: "{\"query\":\"coder\",\"limit\":10}",
                effect: Effect {
                    read_only: true,
                    destructive: false,
                    idempotent: true,
                    open_world: true,
                },
                rest_hint: "narrow with query or lower limit",
                passes_unknown_args: false,
            },
            backend,
            runtime: BlockingRuntime::new("slmcode-find-models")?,
        })
    }
}

impl Tool for FindModelsTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn run(&self, _ws: &mut Workspace, args: &Args) -> Result<Reply, ToolError> {
        let backend = self.backend.clone();
        let listed: Option<Result<Vec<ModelInfo>, BackendError>> =
            self.runtime.wait(async move { backend.models().await });
        let models = match listed {
            Some(Ok(m)) => m,
            Some(Err(e)) => {
                return Err(ToolError::refused(
                    RefusalClass::Io,
                    format!("find_models: {e}"),
                ))
            }
            None => {
                return Err(ToolError::refused(
                    RefusalClass::Io,
                    "find_models: the request was lost".into(),
                ))
            }
        };
        let limit = args.int("limit").map_or(DEFAULT_LIMIT, |n| n as usize);
        Ok(Reply::from(describe(
            &models,
            args.str("query"),
            limit,
            self.backend.endpoint(),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_and_limits() {
        let m = |id: &str, d: &str| ModelInfo {
            id: id.into(),
            details: d.into(),
            context: None,
            context_source: None,
            trained: None,
        };
        let models = vec![
            m("qwen2.5-coder:7b", "7.6B, Q4_K_M"),
            m("llama3.2:3b", ""),
            m("qwen3-coder:30b", ""),
        ];
        let t = describe(&models, Some("CODER"), 20, "http://x/v1");
        assert_eq!(t, "qwen2.5-coder:7b  (7.6B, Q4_K_M)\nqwen3-coder:30b\n(2 of 3 models match \"coder\" at http://x/v1)");
        let t = describe(&models, None, 1, "e");
        assert!(
            t.ends_with("(3 models at e; showing 1, raise limit for more)"),
            "{t}"
        );
    }
}
