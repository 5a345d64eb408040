//! The model family: a model id reduced to what it is, so evidence learned on one size,
//! quantization or provider's build of a model applies to the others.

/// Tokens that describe a build of a model rather than the model itself.
const FAMILY_NOISE_WORDS: &[&str] = &[
    "instruct",
    "chat",
    "it",
    "gguf",
    "ggml",
    "base",
    "hf",
    "awq",
    "gptq",
    "exl2",
    "mlx",
    "fp16",
    "fp8",
    "fp32",
    "bf16",
    "f16",
    "f32",
    "int4",
    "int8",
    "4bit",
    "8bit",
    "latest",
    "quantized",
    "imatrix",
];

/// Names that keep the dash before a bare version number (`gpt-4`). After any other
/// all-letter word the number is glued on (`llama-3.1` → `llama3.1`), so Hugging Face names
/// meet Ollama's.
const NO_VERSION_JOIN: &[&str] = &["gpt", "claude", "gemini", "o"];

/// File extensions that model paths may end with.
const MODEL_FILE_EXTENSIONS: &[&str] = &[".gguf", ".ggml", ".bin", ".safetensors", ".onnx"];

/// Reduces a model id to its family, so that evidence learned on one size, quantization or
/// provider's build of a model applies to the others.
///
/// `qwen2.5-coder:7b` → `qwen2.5-coder`;
/// `hf.co/bartowski/Qwen2.5-Coder-7B-Instruct-GGUF:Q4_K_M` → `qwen2.5-coder`;
/// `Qwen/Qwen3-Coder-30B-A3B-Instruct` → `qwen3-coder`; `llama3.1:8b-instruct-q4_K_M` →
/// `llama3.1`; `deepseek-coder-v2:16b` → `deepseek-coder-v2`; `gpt-4o-mini` → `gpt-4o-mini`.
///
/// Lowercases; drops everything up to the last `/` (registry, org), the `:tag`, a model file
/// extension, and then keeps the `-`-separated words before the first one that describes the
/// build: a size (`7b`, `1.5b`, `8x7b`, `a3b`, `128k`), `instruct`, `chat`, `it`, `gguf`, a
/// quantization (`q4_k_m`, `iq4_xs`, `fp16`, `awq`, `gptq`…) or a date (`2024…`). A bare
/// version number is glued to an all-letter word before it, except `gpt`, `claude`, `gemini`
/// (`Meta-Llama-3.1-8B` → `llama3.1`, `gemma-2-9b-it` → `gemma2`), and a leading `meta-` is
/// dropped. Never empty: falls back to the lowercased input, or `unknown`.
pub fn model_family(model_id: &str) -> String {
    let lower = model_id.trim().to_lowercase();
    let fallback = || {
        if lower.is_empty() {
            "unknown".to_string()
        } else {
            lower.clone()
        }
    };
    let base = lower.rsplit(['/', '\\']).next().unwrap_or_default();
    let base = base.split(':').next().unwrap_or_default();
    let mut base = base;
    for ext in MODEL_FILE_EXTENSIONS {
        if let Some(stripped) = base.strip_suffix(ext) {
            base = stripped;
        }
    }
    // `name.Q4_K_M` (a file name): cut at the first dot-separated piece that is a build tag.
    let mut cut = base.len();
    for (at, _) in base.match_indices('.') {
        let rest = base.get(at + 1..).unwrap_or_default();
        let piece = rest.split('.').next().unwrap_or_default();
        if is_quant(piece) || FAMILY_NOISE_WORDS.contains(&piece) {
            cut = at;
            break;
        }
    }
    let base = base.get(..cut).unwrap_or(base);

    let mut kept: Vec<String> = Vec::new();
    for token in base.split('-').filter(|t| !t.is_empty()) {
        if is_build_token(token) {
            break;
        }
        let joins = is_version(token)
            && kept.last().is_some_and(|prev| {
                prev.chars().all(|c| c.is_ascii_alphabetic())
                    && !NO_VERSION_JOIN.contains(&prev.as_str())
            });
        match kept.last_mut() {
            Some(prev) if joins => prev.push_str(token),
            _ => kept.push(token.to_string()),
        }
    }
    if kept.len() > 1 && kept.first().is_some_and(|t| t == "meta") {
        kept.remove(0);
    }
    if kept.is_empty() {
        fallback()
    } else {
        kept.join("-")
    }
}

/// True for a word that describes a build (size, tuning, format, quantization, date).
fn is_build_token(token: &str) -> bool {
    FAMILY_NOISE_WORDS.contains(&token)
        || is_size(token)
        || is_quant(token)
        || (token.len() >= 4 && token.chars().all(|c| c.is_ascii_digit()))
}

/// `7b`, `1.5b`, `135m`, `128k`, `8x7b`, and the active-parameter forms `a3b`, `e4b`.
fn is_size(token: &str) -> bool {
    let t = token
        .strip_prefix('a')
        .or_else(|| token.strip_prefix('e'))
        .unwrap_or(token);
    let Some(num) = t.strip_suffix(['b', 'm', 'k']) else {
        return false;
    };
    num.starts_with(|c: char| c.is_ascii_digit())
        && num.ends_with(|c: char| c.is_ascii_digit())
        && num
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == 'x')
}

/// `q4_k_m`, `q8_0`, `q4`, `iq4_xs`.
fn is_quant(token: &str) -> bool {
    let rest = token.strip_prefix("iq").or_else(|| token.strip_prefix('q'));
    rest.is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
}

/// `3`, `3.1`, `2.5`: a bare version number.
fn is_version(token: &str) -> bool {
    token.starts_with(|c: char| c.is_ascii_digit())
        && token.chars().all(|c| c.is_ascii_digit() || c == '.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_family_examples() {
        let cases = [
            ("qwen2.5-coder:7b", "qwen2.5-coder"),
            (
                "hf.co/bartowski/Qwen2.5-Coder-7B-Instruct-GGUF:Q4_K_M",
                "qwen2.5-coder",
            ),
            ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3-coder"),
            ("llama3.1:8b-instruct-q4_K_M", "llama3.1"),
            ("deepseek-coder-v2:16b", "deepseek-coder-v2"),
            ("gpt-4o-mini", "gpt-4o-mini"),
            ("gpt-4", "gpt-4"),
            ("meta-llama/Meta-Llama-3.1-8B-Instruct", "llama3.1"),
            ("mistralai/Mistral-7B-Instruct-v0.3", "mistral"),
            ("mixtral:8x7b", "mixtral"),
            ("google/gemma-2-9b-it", "gemma2"),
            ("gemma3:12b", "gemma3"),
            ("microsoft/Phi-3.5-mini-instruct", "phi3.5-mini"),
            ("codellama:7b-instruct", "codellama"),
            ("deepseek-coder:6.7b-instruct-q8_0", "deepseek-coder"),
            ("Qwen2.5-Coder-14B-Instruct-AWQ", "qwen2.5-coder"),
            ("qwen2.5-coder-7b-instruct-fp16", "qwen2.5-coder"),
            (
                "/models/qwen2.5-coder-7b-instruct.Q4_K_M.gguf",
                "qwen2.5-coder",
            ),
            ("qwen2.5-coder-32b-instruct-q5_k_m.gguf", "qwen2.5-coder"),
            ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
            ("starcoder2:15b", "starcoder2"),
            ("gpt-oss:20b", "gpt-oss"),
            ("ollama.com/library/qwen3:30b-a3b", "qwen3"),
            ("  QWEN2.5-CODER:latest ", "qwen2.5-coder"),
            ("devstral", "devstral"),
        ];
        for (id, want) in cases {
            assert_eq!(model_family(id), want, "{id}");
        }
    }

    #[test]
    fn model_family_is_never_empty() {
        assert_eq!(model_family(""), "unknown");
        assert_eq!(model_family("   "), "unknown");
        assert_eq!(model_family("7B"), "7b");
        assert_eq!(model_family("org/"), "org/");
        assert_eq!(model_family(":7b"), ":7b");
        for weird in [
            "/", ":", "-", "---", "a/b/c:", "..", ".gguf", "é-7b", "\u{0}",
        ] {
            assert!(!model_family(weird).is_empty(), "{weird:?}");
        }
    }
}
