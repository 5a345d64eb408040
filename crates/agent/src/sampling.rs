//! Sampling settings for a run: the model family's recommended ones (from the model cards),
//! under what the user set. Small models are sensitive to them — Qwen2.5-Coder repeats itself
//! at a server's default temperature, Devstral wants 0.15 — and servers default to one set for
//! every model. `temperature: server` sends none, so the server's or Ollama's Modelfile's own
//! settings apply.

use std::collections::BTreeMap;

use slmcode_aci::config::Sample;

/// The settings a request carries, by name (as vLLM, llama.cpp and Ollama spell them).
pub type Sampling = Vec<(&'static str, f64)>;

/// A family: the names that mark it, and its recommended settings.
type Family = (&'static [&'static str], &'static [(&'static str, f64)]);

/// The recommended settings of a model family, matched on the model's name (the first match
/// wins, so the more specific names come first).
const FAMILIES: &[Family] = &[
    // OpenAI's gpt-oss card: temperature 1.0, top_p 1.0.
    (&["gpt-oss"], &[("temperature", 1.0), ("top_p", 1.0)]),
    // Qwen3-Coder's card.
    (
        &["qwen3-coder", "qwen3_coder"],
        &[
            ("temperature", 0.7),
            ("top_p", 0.8),
            ("top_k", 20.0),
            ("repeat_penalty", 1.05),
        ],
    ),
    // Qwen3 (thinking mode, its default).
    (
        &["qwen3"],
        &[
            ("temperature", 0.6),
            ("top_p", 0.95),
            ("top_k", 20.0),
            ("min_p", 0.0),
        ],
    ),
    // Qwen2.5 and Qwen2.5-Coder's generation_config.
    (
        &["qwen"],
        &[
            ("temperature", 0.7),
            ("top_p", 0.8),
            ("top_k", 20.0),
            ("repeat_penalty", 1.05),
        ],
    ),
    // Gemma 3's recommended settings.
    (
        &["gemma"],
        &[
            ("temperature", 1.0),
            ("top_p", 0.95),
            ("top_k", 64.0),
            ("min_p", 0.0),
        ],
    ),
    // Mistral's coding and small models (Devstral, Codestral, Mistral Small): 0.15.
    (
        &["devstral", "codestral", "mistral", "ministral"],
        &[("temperature", 0.15)],
    ),
    // DeepSeek-R1 and its distills.
    (&["deepseek"], &[("temperature", 0.6), ("top_p", 0.95)]),
    // Llama 3's generation_config.
    (&["llama"], &[("temperature", 0.6), ("top_p", 0.9)]),
];

/// The settings for `model`: its family's, with the user's on top (`server` for one key
/// drops it; `temperature: server` drops them all).
pub fn for_model(model: &str, configured: &BTreeMap<&'static str, Sample>) -> Sampling {
    if configured.get("temperature") == Some(&Sample::Server) {
        return Vec::new();
    }
    let name = model.to_ascii_lowercase();
    let mut out: BTreeMap<&'static str, f64> = FAMILIES
        .iter()
        .find(|(names, _)| names.iter().any(|n| name.contains(n)))
        .map(|(_, values)| values.iter().copied().collect())
        .unwrap_or_default();
    for (key, sample) in configured {
        match sample {
            Sample::Server => {
                out.remove(key);
            }
            Sample::Value(v) => {
                out.insert(key, *v);
            }
        }
    }
    out.into_iter().collect()
}

/// Whether a setting is a whole number on the wire.
pub fn is_integer(key: &str) -> bool {
    matches!(key, "top_k" | "seed")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(s: &Sampling, key: &str) -> Option<f64> {
        s.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    #[test]
    fn each_family_gets_its_card_and_the_user_wins() {
        let none = BTreeMap::new();
        let q = for_model("qwen2.5-coder:7b", &none);
        assert_eq!(
            (get(&q, "temperature"), get(&q, "top_k")),
            (Some(0.7), Some(20.0))
        );
        assert_eq!(
            get(&for_model("Qwen3-Coder-30B-A3B", &none), "repeat_penalty"),
            Some(1.05)
        );
        assert_eq!(get(&for_model("qwen3:8b", &none), "temperature"), Some(0.6));
        assert_eq!(get(&for_model("gemma3:4b", &none), "top_k"), Some(64.0));
        assert_eq!(
            get(&for_model("devstral-small-2505", &none), "temperature"),
            Some(0.15)
        );
        assert_eq!(
            get(&for_model("openai/gpt-oss-20b", &none), "top_p"),
            Some(1.0)
        );
        assert!(for_model("some-other-model", &none).is_empty());
        let mut mine = BTreeMap::new();
        mine.insert("top_k", Sample::Value(40.0));
        mine.insert("repeat_penalty", Sample::Server);
        mine.insert("seed", Sample::Value(7.0));
        let q = for_model("qwen2.5-coder:7b", &mine);
        assert_eq!(get(&q, "top_k"), Some(40.0));
        assert_eq!(get(&q, "repeat_penalty"), None);
        assert_eq!(get(&q, "seed"), Some(7.0));
        mine.insert("temperature", Sample::Server);
        assert!(for_model("qwen2.5-coder:7b", &mine).is_empty());
    }
}
