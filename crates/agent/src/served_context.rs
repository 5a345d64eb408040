//! The context the model server really serves, asked of the server itself: a run that assumes
//! a bigger window than the server loaded has its prompt cut from the front without a word
//! (the most common failure small-model users report), and one that assumes a smaller window
//! compacts for nothing.
//!
//! Each server says it its own way, and only the *loaded* length counts — never the length the
//! model was trained for (a 128K-trained model is often loaded with 4K):
//! - llama.cpp's `llama-server`: `/props` → `default_generation_settings.n_ctx` (per slot;
//!   `?model=` for router mode), or `meta.n_ctx` in `/v1/models`;
//! - vLLM and SGLang: `max_model_len` in `/v1/models`;
//! - LM Studio: the loaded instance's context (`/api/v1/models`, or `loaded_context_length` in
//!   `/api/v0/models`);
//! - Ollama: the loaded model's `context_length` in `/api/ps`, else the Modelfile's `num_ctx`
//!   (`/api/show`); the `/v1` endpoint cannot change it.
//!
//! The config's `context_window` wins over all of these ([`window_in_force`]); `slmcode
//! doctor` and the run's first line say what is in force and where it came from.

use std::time::Duration;

use serde_json::{json, Value};

use crate::backend::{Backend, ModelInfo};

/// How long one probe may take: they are asked of a local server, and a server that does not
/// know the path answers 404 at once.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// The most context a server is believed to serve a model with: the largest any model claims
/// (Llama 4 Scout, 10M tokens). A server that says more — broken or hostile, 10^12 — is
/// clamped to this, and the clamp is said, so that no window, prompt or request is sized by
/// its number.
pub const MOST_TOKENS: u64 = 10_000_000;

/// What the server said about the context it serves a model with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServedContext {
    /// The loaded context length in tokens, when the server said.
    pub tokens: Option<u64>,
    /// Where it was read, e.g. `llama.cpp /props (n_ctx)`.
    pub source: Option<String>,
    /// The length the model was trained for, shown beside the loaded one, never used as it.
    pub trained: Option<u64>,
    /// Something the user should know when the loaded length is unknown (Ollama with the model
    /// not loaded and no `num_ctx` set).
    pub note: Option<String>,
    /// What the server claimed when it claimed more than [`MOST_TOKENS`] (then `tokens` is
    /// [`MOST_TOKENS`]).
    pub claimed: Option<u64>,
}

impl ServedContext {
    /// The server says it serves `tokens`, read at `source`: believed up to [`MOST_TOKENS`].
    fn serves(&mut self, tokens: u64, source: String) {
        self.claimed = (tokens > MOST_TOKENS).then_some(tokens);
        self.tokens = Some(tokens.min(MOST_TOKENS));
        self.source = Some(source);
    }
}

/// Where the window a run uses came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WindowSource {
    /// `context_window`, set by this layer (a file, a variable or a flag).
    Config(String),
    /// The server, as [`ServedContext::source`] says.
    Server(String),
    /// Neither said: the built-in default.
    Default,
}

/// The context window a run works within, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextWindow {
    pub tokens: usize,
    pub from: WindowSource,
    /// What the server said, whether or not it won.
    pub served: ServedContext,
}

impl ContextWindow {
    /// One line for `slmcode doctor` and the run's header: the window, where it came from, and
    /// what the server said when that is different.
    pub fn describe(&self) -> String {
        let mut text = format!("context {} tokens", self.tokens);
        match &self.from {
            WindowSource::Config(origin) => {
                text.push_str(&format!(" (context_window from {origin}"));
                match (self.served.tokens, &self.served.source) {
                    (Some(n), Some(src)) => {
                        text.push_str(&format!("; the server serves {n}, {src}"))
                    }
                    _ => text.push_str("; the server does not say its own"),
                }
                text.push(')');
            }
            WindowSource::Server(src) => text.push_str(&format!(" ({src})")),
            WindowSource::Default => text.push_str(
                " (default; the server does not say its context, set context_window to match it)",
            ),
        }
        if let Some(t) = self.served.trained.filter(|t| *t as usize != self.tokens) {
            text.push_str(&format!(", trained for {t}"));
        }
        if let Some(claimed) = self.served.claimed {
            text.push_str(&format!(
                "; the server claims {claimed} tokens of context; not believed, {MOST_TOKENS} used"
            ));
        }
        text
    }

    /// A warning when the window in force is larger than what the server loaded (its prompts
    /// would be cut), or when the server's context could not be known.
    pub fn warning(&self) -> Option<String> {
        if let (WindowSource::Config(origin), Some(served)) = (&self.from, self.served.tokens) {
            if self.tokens as u64 > served {
                return Some(format!(
                    "context_window {} (from {origin}) is larger than the {served} tokens the server serves ({}): prompts past {served} tokens will be cut by the server. Lower context_window or load the model with a larger context",
                    self.tokens,
                    self.served.source.as_deref().unwrap_or("as it says")
                ));
            }
        }
        match self.from {
            WindowSource::Config(_) => None,
            _ => self.served.note.clone(),
        }
    }
}

/// The window a run uses: the config's `context_window` when a file, variable or flag set it
/// (`config_origin`), else the loaded context the server reported, else `default`.
pub fn window_in_force(
    config_value: usize,
    config_origin: Option<&str>,
    served: ServedContext,
) -> ContextWindow {
    let (tokens, from) = match (config_origin, served.tokens, &served.source) {
        (Some(origin), _, _) => (config_value, WindowSource::Config(origin.to_string())),
        (None, Some(n), Some(src)) if n > 0 => (
            usize::try_from(n).unwrap_or(usize::MAX),
            WindowSource::Server(src.clone()),
        ),
        _ => (config_value, WindowSource::Default),
    };
    ContextWindow {
        tokens,
        from,
        served,
    }
}

impl Backend {
    /// Asks the server what context it serves `model` with. Every probe is a cheap GET (or
    /// Ollama's `/api/show` POST) on the server's root; a server that does not know a path
    /// answers 404 and the probe says nothing. Never fails: what cannot be learned is `None`.
    pub async fn served_context(&self, model: &str, listed: &[ModelInfo]) -> ServedContext {
        let entry = listed.iter().find(|m| m.id == model);
        let root = self.root().to_string();
        let urls = [
            format!("{root}/props?model={}", query_value(model)),
            format!("{root}/api/ps"),
            format!("{root}/api/show"),
            format!("{root}/api/v1/models"),
            format!("{root}/api/v0/models"),
        ];
        let show_body = json!({ "model": model });
        let (props, ps, show, lms1, lms0) = tokio::join!(
            self.probe_get(&urls[0]),
            self.probe_get(&urls[1]),
            self.probe_post(&urls[2], &show_body),
            self.probe_get(&urls[3]),
            self.probe_get(&urls[4]),
        );
        let trained = entry.and_then(|m| m.trained);
        let mut found = ServedContext {
            trained,
            ..ServedContext::default()
        };
        // In order of trust: what the server's own page for the loaded model says first.
        let candidates: [Option<(u64, String)>; 4] = [
            props.as_ref().and_then(from_llama_props),
            entry.and_then(|m| Some((m.context?, m.context_source?.to_string()))),
            lms1.as_ref()
                .and_then(|v| from_lmstudio_v1(v, model))
                .or_else(|| lms0.as_ref().and_then(|v| from_lmstudio_v0(v, model))),
            ps.as_ref().and_then(|v| from_ollama_ps(v, model)),
        ];
        if let Some((n, src)) = candidates.into_iter().flatten().next() {
            found.serves(n, src);
        }
        if let Some(show) = &show {
            let (num_ctx, trained) = from_ollama_show(show);
            found.trained = found.trained.or(trained);
            if found.tokens.is_none() {
                match num_ctx {
                    Some(n) => found.serves(n, "Ollama /api/show (the Modelfile's num_ctx)".into()),
                    None if ps.is_some() => {
                        found.note = Some(format!(
                            "Ollama has not loaded {model} yet and its Modelfile sets no num_ctx, so the server's default context applies (OLLAMA_CONTEXT_LENGTH; 4096 on many installs) and slmcode cannot read it: set context_window to the context the server loads"
                        ));
                    }
                    None => {}
                }
            }
        }
        if found.trained.is_none() {
            found.trained = lms1
                .as_ref()
                .and_then(|v| lmstudio_max(v, model, "models", "key"))
                .or_else(|| {
                    lms0.as_ref()
                        .and_then(|v| lmstudio_max(v, model, "data", "id"))
                });
        }
        found
    }

    async fn probe_get(&self, url: &str) -> Option<Value> {
        let sent = self.get(url).timeout(PROBE_TIMEOUT).send().await.ok()?;
        json_body(sent).await
    }

    async fn probe_post(&self, url: &str, body: &Value) -> Option<Value> {
        let sent = self
            .post(url)
            .timeout(PROBE_TIMEOUT)
            .json(body)
            .send()
            .await
            .ok()?;
        json_body(sent).await
    }
}

async fn json_body(response: reqwest::Response) -> Option<Value> {
    if !response.status().is_success() {
        return None;
    }
    crate::backend::page_json(response)
        .await
        .filter(Value::is_object)
}

/// A model name as a query value: the few characters a name may hold that a URL may not.
fn query_value(name: &str) -> String {
    name.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// The fields of a `/v1/models` entry that give the context the model is served with, and the
/// ones that give only what it was trained for.
pub(crate) fn listed_context(m: &Value) -> (Option<(u64, &'static str)>, Option<u64>) {
    let served = [
        ("max_model_len", "vLLM /v1/models (max_model_len)"),
        ("context_length", "/v1/models (context_length)"),
        ("context_window", "/v1/models (context_window)"),
    ]
    .iter()
    .find_map(|(k, src)| m[*k].as_u64().filter(|n| *n > 0).map(|n| (n, *src)))
    .or_else(|| {
        m["meta"]["n_ctx"]
            .as_u64()
            .filter(|n| *n > 0)
            .map(|n| (n, "llama.cpp /v1/models (meta.n_ctx)"))
    });
    let trained = m["meta"]["n_ctx_train"]
        .as_u64()
        .or_else(|| m["max_context_length"].as_u64());
    (served, trained)
}

/// llama.cpp's `/props`: the context of one slot.
fn from_llama_props(v: &Value) -> Option<(u64, String)> {
    v["default_generation_settings"]["n_ctx"]
        .as_u64()
        .or_else(|| v["n_ctx"].as_u64())
        .filter(|n| *n > 0)
        .map(|n| (n, "llama.cpp /props (n_ctx)".to_string()))
}

/// Ollama's `/api/ps`: the context the model is loaded with right now.
fn from_ollama_ps(v: &Value, model: &str) -> Option<(u64, String)> {
    v["models"].as_array()?.iter().find(|m| {
        same_ollama_name(m["name"].as_str(), model) || same_ollama_name(m["model"].as_str(), model)
    })?["context_length"]
        .as_u64()
        .filter(|n| *n > 0)
        .map(|n| {
            (
                n,
                "Ollama /api/ps (the loaded model's context_length)".to_string(),
            )
        })
}

/// Ollama names a model `name:tag`, with `latest` when no tag is given.
fn same_ollama_name(listed: Option<&str>, model: &str) -> bool {
    let norm = |s: &str| {
        if s.contains(':') {
            s.to_string()
        } else {
            format!("{s}:latest")
        }
    };
    listed.is_some_and(|l| norm(l) == norm(model))
}

/// Ollama's `/api/show`: the Modelfile's `num_ctx`, and the trained length in `model_info`.
fn from_ollama_show(v: &Value) -> (Option<u64>, Option<u64>) {
    let num_ctx = v["parameters"].as_str().and_then(|params| {
        params.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("num_ctx"))
                .then(|| words.next()?.parse::<u64>().ok())
                .flatten()
        })
    });
    let trained = v["model_info"].as_object().and_then(|info| {
        info.iter()
            .find(|(k, _)| k.ends_with(".context_length"))
            .and_then(|(_, v)| v.as_u64())
    });
    (num_ctx.filter(|n| *n > 0), trained)
}

/// LM Studio's `/api/v1/models`: the first loaded instance's context.
fn from_lmstudio_v1(v: &Value, model: &str) -> Option<(u64, String)> {
    let m = v["models"]
        .as_array()?
        .iter()
        .find(|m| m["key"].as_str() == Some(model))?;
    m["loaded_instances"]
        .as_array()?
        .iter()
        .find_map(|i| i["config"]["context_length"].as_u64())
        .filter(|n| *n > 0)
        .map(|n| {
            (
                n,
                "LM Studio /api/v1/models (the loaded instance's context_length)".to_string(),
            )
        })
}

/// LM Studio's `/api/v0/models`: `loaded_context_length` of a loaded model.
fn from_lmstudio_v0(v: &Value, model: &str) -> Option<(u64, String)> {
    v["data"]
        .as_array()?
        .iter()
        .find(|m| m["id"].as_str() == Some(model))?["loaded_context_length"]
        .as_u64()
        .filter(|n| *n > 0)
        .map(|n| {
            (
                n,
                "LM Studio /api/v0/models (loaded_context_length)".to_string(),
            )
        })
}

/// LM Studio's `max_context_length`: what the model supports, not what is loaded.
fn lmstudio_max(v: &Value, model: &str, list: &str, key: &str) -> Option<u64> {
    v[list]
        .as_array()?
        .iter()
        .find(|m| m[key].as_str() == Some(model))?["max_context_length"]
        .as_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llama_props_give_the_slot_context() {
        let v = json!({"default_generation_settings": {"n_ctx": 16384}, "total_slots": 1});
        assert_eq!(from_llama_props(&v).map(|x| x.0), Some(16384));
        assert_eq!(
            from_llama_props(&json!({"n_ctx": 4096})).map(|x| x.0),
            Some(4096)
        );
        assert_eq!(from_llama_props(&json!({"model_path": "m.gguf"})), None);
    }

    #[test]
    fn the_trained_length_is_never_the_served_one() {
        let (served, trained) =
            listed_context(&json!({"id": "m", "meta": {"n_ctx_train": 131072}}));
        assert_eq!(served, None);
        assert_eq!(trained, Some(131072));
        let (served, _) =
            listed_context(&json!({"id": "m", "meta": {"n_ctx": 8192, "n_ctx_train": 131072}}));
        assert_eq!(served.map(|s| s.0), Some(8192));
        let (served, trained) = listed_context(&json!({"id": "m", "max_context_length": 32768}));
        assert_eq!((served, trained), (None, Some(32768)));
        let (served, _) = listed_context(&json!({"id": "m", "max_model_len": 32768}));
        assert_eq!(served, Some((32768, "vLLM /v1/models (max_model_len)")));
    }

    #[test]
    fn ollama_loaded_context_and_modelfile() {
        let ps = json!({"models": [{"name": "qwen2.5-coder:7b", "model": "qwen2.5-coder:7b", "context_length": 4096}]});
        assert_eq!(
            from_ollama_ps(&ps, "qwen2.5-coder:7b").map(|x| x.0),
            Some(4096)
        );
        assert_eq!(from_ollama_ps(&ps, "qwen2.5-coder:14b"), None);
        let ps = json!({"models": [{"name": "llama3.2:latest", "context_length": 8192}]});
        assert_eq!(from_ollama_ps(&ps, "llama3.2").map(|x| x.0), Some(8192));
        let show = json!({"parameters": "stop \"<|im_end|>\"\nnum_ctx                        12288\ntemperature 0.2",
                          "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768}});
        assert_eq!(from_ollama_show(&show), (Some(12288), Some(32768)));
        assert_eq!(
            from_ollama_show(&json!({"parameters": "num_ctx x"})),
            (None, None)
        );
    }

    #[test]
    fn lm_studio_loaded_instances() {
        let v1 = json!({"models": [{"key": "qwen3-8b", "max_context_length": 40960,
                         "loaded_instances": [{"id": "qwen3-8b", "config": {"context_length": 8192}}]}]});
        assert_eq!(from_lmstudio_v1(&v1, "qwen3-8b").map(|x| x.0), Some(8192));
        assert_eq!(lmstudio_max(&v1, "qwen3-8b", "models", "key"), Some(40960));
        let unloaded = json!({"models": [{"key": "qwen3-8b", "loaded_instances": []}]});
        assert_eq!(from_lmstudio_v1(&unloaded, "qwen3-8b"), None);
        let v0 = json!({"data": [{"id": "qwen3-8b", "state": "loaded", "max_context_length": 40960, "loaded_context_length": 16384}]});
        assert_eq!(from_lmstudio_v0(&v0, "qwen3-8b").map(|x| x.0), Some(16384));
    }

    #[test]
    fn a_claimed_context_past_any_model_is_clamped_and_said() {
        let mut served = ServedContext::default();
        served.serves(1_000_000_000_000, "vLLM /v1/models (max_model_len)".into());
        let w = window_in_force(8192, None, served.clone());
        assert_eq!(w.tokens, MOST_TOKENS as usize);
        assert_eq!(
            w.describe(),
            "context 10000000 tokens (vLLM /v1/models (max_model_len)); the server claims 1000000000000 tokens of context; not believed, 10000000 used"
        );
        // A claim the size of a real model's is believed as it is.
        served.serves(131_072, "x".into());
        assert_eq!((served.tokens, served.claimed), (Some(131_072), None));
    }

    #[test]
    fn the_config_wins_and_says_what_the_server_serves() {
        let served = ServedContext {
            tokens: Some(4096),
            source: Some("llama.cpp /props (n_ctx)".into()),
            trained: Some(131072),
            ..ServedContext::default()
        };
        let w = window_in_force(16384, Some(".slmcode/config.yaml"), served.clone());
        assert_eq!(w.tokens, 16384);
        assert_eq!(
            w.describe(),
            "context 16384 tokens (context_window from .slmcode/config.yaml; the server serves 4096, llama.cpp /props (n_ctx)), trained for 131072"
        );
        assert!(w
            .warning()
            .is_some_and(|t| t.contains("prompts past 4096 tokens will be cut")));
        let w = window_in_force(8192, None, served);
        assert_eq!(w.tokens, 4096);
        assert_eq!(
            w.describe(),
            "context 4096 tokens (llama.cpp /props (n_ctx)), trained for 131072"
        );
        assert_eq!(w.warning(), None);
        let w = window_in_force(8192, None, ServedContext::default());
        assert_eq!((w.tokens, w.from.clone()), (8192, WindowSource::Default));
        let smaller = window_in_force(
            2048,
            Some("SLMCODE_CONTEXT_WINDOW"),
            ServedContext {
                tokens: Some(4096),
                source: Some("x".into()),
                ..ServedContext::default()
            },
        );
        assert_eq!(smaller.warning(), None);
    }

    #[test]
    fn model_names_are_query_safe() {
        assert_eq!(query_value("org/model:Q4 K"), "org%2Fmodel%3AQ4%20K");
    }
}
