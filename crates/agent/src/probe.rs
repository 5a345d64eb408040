//! `slmcode doctor --model M`: what a model on this server really does, found by asking it —
//! whether native tool calls work, how it writes a call when the tools are described in the
//! prompt, whether the context in force holds a long prompt whole, and how fast it reads and
//! writes — and the settings that follow from it.

use std::time::{Duration, Instant};

use serde_json::Value;
use slmcode_aci::Registry;

use crate::backend::{Backend, BackendError, ChatRequest, Message, Reply};
use crate::prompt;
use crate::runaway::RunawayLimits;
use crate::toolcall::{self, OfferedTool};

/// The word the truncation test hides at the start of a long prompt.
const NEEDLE: &str = "PELICAN-4417";

/// The most tokens the long prompt takes, whatever the window: a probe is a few requests, not
/// minutes of reading (about a megabyte of text).
pub const LONG_PROMPT_MOST_TOKENS: usize = 262_144;

/// How native tool calls fared.
#[derive(Clone, Debug, PartialEq)]
pub enum Native {
    /// The model answered with a native call to the tool it was asked to call.
    Works,
    /// The server refused the request's tools (its words).
    Refused(String),
    /// The request went through, but no native call came back.
    NoCall,
}

/// What the probe found.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub native: Native,
    /// The format of the call the model wrote when the tools were described in the prompt
    /// (its Debug name), or `None` when it wrote none that could be read.
    pub text_format: Option<String>,
    /// The long prompt: slmcode's estimate of its tokens, and what the server counted, when
    /// it said.
    pub long_prompt_tokens: u64,
    pub long_prompt_counted: Option<u64>,
    /// Whether the model recalled the long prompt's first line.
    pub recalled: bool,
    /// Prompt tokens read and tokens written per second, when measurable.
    pub read_per_sec: Option<f64>,
    pub write_per_sec: Option<f64>,
}

impl Report {
    /// The settings to use, as config keys and values.
    pub fn settings(&self, model: &str, window: usize) -> Vec<(&'static str, Value)> {
        let tool_mode = match (&self.native, &self.text_format) {
            (Native::Works, _) => "native",
            (_, Some(_)) => "text",
            // Neither worked: native is what the model is trained for, and text mode cannot
            // be read; auto lets a refusal switch.
            _ => "auto",
        };
        let window = match (self.cut(), self.long_prompt_counted) {
            // The server kept only what fit: that is its window.
            (Some(true), Some(counted)) => ((counted as usize) / 256 * 256).max(512),
            // Nothing said, and the start was lost: assume half.
            (None, _) if !self.recalled => (window / 2 / 256 * 256).max(512),
            _ => window,
        };
        vec![
            ("model", Value::from(model)),
            ("tool_mode", Value::from(tool_mode)),
            ("context_window", Value::from(window)),
        ]
    }

    /// Whether the server cut the long prompt, when it said how many tokens it read.
    fn cut(&self) -> Option<bool> {
        self.long_prompt_counted
            .map(|c| crate::run::prompt_was_cut(c, self.long_prompt_tokens as usize))
    }

    /// The report, a line per finding.
    pub fn lines(&self) -> Vec<String> {
        let native = match &self.native {
            Native::Works => "native tool calls: work".to_string(),
            Native::Refused(why) => format!("native tool calls: refused by the server ({why})"),
            Native::NoCall => "native tool calls: none came back when one was asked for".into(),
        };
        let text = match &self.text_format {
            Some(f) => format!(
                "tools described in the prompt: the model writes {f} calls, which slmcode reads"
            ),
            None => {
                "tools described in the prompt: the model wrote no call slmcode could read".into()
            }
        };
        let n = self.long_prompt_tokens;
        let context = match (self.cut(), self.recalled) {
            (Some(true), _) => format!(
                "context: the server read only {} of a {n}-token prompt: it cut it, so its window is smaller than the one in force",
                self.long_prompt_counted.unwrap_or(0)
            ),
            (_, true) => format!(
                "context: a {n}-token prompt reached the model whole (it recalled its first line)"
            ),
            (Some(false), false) => format!(
                "context: the server read all of a {n}-token prompt, but the model did not recall its first line (small models often cannot)"
            ),
            (None, false) => format!(
                "context: the model did not recall the first line of a {n}-token prompt: the server cut it, or the model cannot (the server did not say how much it read)"
            ),
        };
        let speed = match (self.read_per_sec, self.write_per_sec) {
            (Some(r), Some(w)) => {
                format!("speed: reads about {r:.0} tokens/s, writes about {w:.1} tokens/s")
            }
            (None, Some(w)) => format!("speed: writes about {w:.1} tokens/s"),
            (Some(r), None) => {
                format!("speed: reads about {r:.0} tokens/s (the count came back empty)")
            }
            _ => "speed: the server did not report token counts".into(),
        };
        vec![native, text, context, speed]
    }
}

/// Asks the model what a run would. `window` is the context in force; the long prompt fills
/// most of it.
pub async fn probe(
    backend: &Backend,
    model: &str,
    registry: &Registry,
    window: usize,
) -> Result<Report, BackendError> {
    // Whole replies: some servers (llama-cpp-python) send no usage in a stream, and the
    // counts are half of what the probe learns.
    let mut backend = backend.clone();
    backend.stop_streaming();
    let backend = &backend;
    let tools = prompt::tool_definitions(registry);
    let offered = OfferedTool::all_of(registry);
    let ask = "Read the file README.md. Answer with the tool call only.";
    let ask_native = [
        Message::system("You are a coding agent. Use the tools."),
        Message::user(ask),
    ];
    let native = match chat(backend, model, &ask_native, &tools, 300).await {
        Ok((reply, _))
            if reply
                .tool_calls
                .iter()
                .any(|c| c.function.name.contains("ws_read")) =>
        {
            Native::Works
        }
        Ok(_) => Native::NoCall,
        Err(BackendError::ToolsRefused { detail, .. }) => Native::Refused(detail),
        Err(e) => return Err(e),
    };
    let system = format!("You are a coding agent.{}", prompt::text_tools(registry));
    let ask_text = [Message::system(system), Message::user(ask)];
    let (reply, _) = chat(backend, model, &ask_text, &[], 300).await?;
    let found = toolcall::parse_text_calls(&reply.content, &offered);
    let text_format = found.calls.first().map(|c| format!("{:?}", c.format));

    // A long prompt with a word at its start: a server whose window is smaller cuts the start.
    let filler_lines = (window.min(LONG_PROMPT_MOST_TOKENS) * 7 / 10) * 7 / 2 / 60;
    let mut long = format!("Remember this word: {NEEDLE}.\n");
    for i in 0..filler_lines {
        long.push_str(&format!(
            "Line {i}: this line is filler text for a context test only.\n"
        ));
    }
    long.push_str("What was the word to remember? Answer with the word only.");
    let long = [Message::user(long)];
    let (reply, took) = chat(backend, model, &long, &[], 32).await?;
    let counted = reply.usage.map(|u| u.prompt_tokens).filter(|n| *n > 0);
    let long_prompt_tokens = crate::run::estimate_tokens(&long, &[]) as u64;
    let recalled = reply.content.contains(NEEDLE) || reply.reasoning.contains(NEEDLE);
    let read_per_sec = counted.map(|n| n as f64 / took.as_secs_f64().max(1e-3));

    let count = [Message::user(
        "Count from 1 to 60, numbers only, separated by spaces.",
    )];
    let (reply, took) = chat(backend, model, &count, &[], 200).await?;
    let write_per_sec = reply
        .usage
        .map(|u| u.completion_tokens)
        .filter(|n| *n > 0)
        .map(|n| n as f64 / took.as_secs_f64().max(1e-3));
    Ok(Report {
        native,
        text_format,
        long_prompt_tokens,
        long_prompt_counted: counted,
        recalled,
        read_per_sec,
        write_per_sec,
    })
}

/// `text` (a YAML config) with each top-level `key` set to its value: the key's line replaced
/// where there is one (with the lines that continue its value), appended otherwise; comments
/// and every other line kept as they are. Each value is written as YAML that reads back as
/// itself ([`yaml_value`]), whatever a model's name holds.
pub fn set_config_keys(text: &str, settings: &[(&str, Value)]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for (key, value) in settings {
        let line = format!("{key}: {}", yaml_value(value));
        let found = lines.iter().position(|l| {
            l.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        });
        match found {
            Some(i) => {
                // An indented line after a top-level key is more of that key's value (a block
                // scalar, a list, a quoted string that runs on): it goes with it.
                let mut end = i + 1;
                while lines
                    .get(end)
                    .is_some_and(|l| l.starts_with([' ', '\t']) || l.trim().is_empty())
                {
                    end += 1;
                }
                while end > i + 1 && lines.get(end - 1).is_some_and(|l| l.trim().is_empty()) {
                    end -= 1;
                }
                lines.splice(i..end, [line]);
            }
            None => lines.push(line),
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// A value as YAML that reads back as the same value: a number as it is, a string plain when
/// YAML reads it as that same string (`test-model`, `native`), double-quoted with escapes
/// otherwise — a colon, a `#`, a quote, a line break, a leading `-` or `[`, or a word YAML reads
/// as something else (`true`, `null`, `~`, `123`).
pub fn yaml_value(value: &Value) -> String {
    match value {
        Value::String(s) if plain_yaml(s) => s.clone(),
        Value::String(s) => yaml_quoted(s),
        other => other.to_string(),
    }
}

/// Whether `s` written as a plain YAML scalar reads back as the string `s`.
fn plain_yaml(s: &str) -> bool {
    const NOT_STRINGS: &[&str] = &[
        "true", "false", "yes", "no", "on", "off", "y", "n", "null", "nan", "inf",
    ];
    s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
        && !NOT_STRINGS.contains(&s.to_ascii_lowercase().as_str())
}

/// `s` as a YAML double-quoted scalar: `"` and `\\` escaped, and every character YAML does
/// not allow raw in a document (controls, DEL, C1, the line and paragraph separators, the
/// byte-order mark, the non-characters) as an escape.
fn yaml_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

async fn chat(
    backend: &Backend,
    model: &str,
    messages: &[Message],
    tools: &[Value],
    max_tokens: u32,
) -> Result<(Reply, Duration), BackendError> {
    let started = Instant::now();
    let reply = backend
        .chat(&ChatRequest {
            model,
            messages,
            tools,
            max_tokens: Some(max_tokens),
            sampling: &[],
            runaway: RunawayLimits::default(),
            think: "auto",
            think_budget: 0,
        })
        .await?;
    Ok((reply, started.elapsed()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(native: Native, text: Option<&str>, kept: bool) -> Report {
        Report {
            native,
            text_format: text.map(str::to_string),
            long_prompt_tokens: 6000,
            long_prompt_counted: Some(if kept { 6100 } else { 1000 }),
            recalled: kept,
            read_per_sec: Some(400.0),
            write_per_sec: Some(12.5),
        }
    }

    #[test]
    fn config_keys_are_set_in_place_and_comments_kept() {
        let text = "# mine\nmodel: old\nmax_turns: 20 # fewer\n";
        let out = set_config_keys(
            text,
            &[
                ("model", "qwen2.5-coder:7b".into()),
                ("tool_mode", "text".into()),
            ],
        );
        assert_eq!(
            out,
            "# mine\nmodel: \"qwen2.5-coder:7b\"\nmax_turns: 20 # fewer\ntool_mode: text\n"
        );
        assert_eq!(
            set_config_keys("", &[("context_window", 8192.into())]),
            "context_window: 8192\n"
        );
        // A value that ran on over indented lines is replaced whole.
        let text = "model: |\n  old\n  name\n\n# next\nmax_turns: 20\n";
        assert_eq!(
            set_config_keys(text, &[("model", "m".into())]),
            "model: m\n\n# next\nmax_turns: 20\n"
        );
    }

    /// The model as a config holding `text` gives it.
    fn model_of(text: &str) -> Result<Option<String>, String> {
        let mut config = slmcode_aci::Config::default();
        let mut warnings = Vec::new();
        config
            .apply_yaml(text, &mut warnings)
            .map_err(|e| e.to_string())?;
        Ok(config.model)
    }

    #[test]
    fn any_model_name_is_written_so_that_it_loads_back_as_itself() {
        let mut names: Vec<String> = [
            "qwen2.5-coder:7b",
            "hf.co/unsloth/Qwen3-Coder-30B-A3B-Instruct-GGUF:Q4_K_M",
            "a: b",
            "x #y",
            "#x",
            "\"quoted\"",
            "it's",
            "line\nbreak",
            "cr\rlf",
            "tab\there",
            " padded ",
            "- dash",
            "-",
            "? q",
            ": c",
            "[list]",
            "{map}",
            "&anchor",
            "*alias",
            "!tag",
            "!!str",
            "|",
            ">",
            "%YAML",
            "@at",
            "`tick`",
            "true",
            "False",
            "NULL",
            "~",
            "yes",
            "off",
            "y",
            "nan",
            ".inf",
            "123",
            "0x1F",
            "1e5",
            "0o17",
            "12:30",
            "2026-09-01",
            "back\\slash",
            "\\",
            "esc\u{1b}[31m",
            "bell\u{7}",
            "nul\u{0}",
            "del\u{7f}",
            "c1\u{85}\u{9b}",
            "sep\u{2028}\u{2029}",
            "\u{feff}bom",
            "nonchar\u{fffe}\u{ffff}",
            "bidi\u{202e}",
            "é中文🦀",
            "---",
            "...",
            "a,b",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // Every ASCII character and the controls, alone and inside a name.
        for b in 0u8..=0x7f {
            let c = b as char;
            names.push(c.to_string());
            names.push(format!("m{c}x"));
        }
        for name in names {
            // A config's values are read trimmed (as `doctor --model` takes the name), and a
            // blank name is refused before anything is written.
            let name = name.trim().to_string();
            if name.is_empty() {
                continue;
            }
            for before in [
                "",
                "# mine\nmodel: old\n",
                "model: >\n  folded\n  text\nmax_turns: 3\n",
            ] {
                let text = set_config_keys(
                    before,
                    &[
                        ("model", name.clone().into()),
                        ("context_window", 8192.into()),
                    ],
                );
                assert_eq!(
                    model_of(&text),
                    Ok(Some(name.clone())),
                    "{name:?} written as {text:?}"
                );
            }
        }
    }

    #[test]
    fn the_settings_follow_what_was_found() {
        let r = report(Native::Works, Some("Hermes"), true);
        assert_eq!(
            r.settings("m", 8192),
            vec![
                ("model", Value::from("m")),
                ("tool_mode", Value::from("native")),
                ("context_window", Value::from(8192))
            ]
        );
        let r = report(
            Native::Refused("does not support tools".into()),
            Some("Hermes"),
            false,
        );
        let s = r.settings("m", 8192);
        assert_eq!(s[1].1, "text");
        assert_eq!(s[2].1, 768);
        assert_eq!(
            report(Native::NoCall, None, true).settings("m", 8192)[1].1,
            "auto"
        );
        assert!(r.lines()[0].contains("refused by the server (does not support tools)"));
        assert!(r.lines()[2].contains("the server read only 1000 of a 6000-token prompt"));
        // Read whole but not recalled: the model's limit, not the server's window.
        let mut weak = report(Native::Works, None, true);
        weak.recalled = false;
        assert_eq!(weak.settings("m", 8192)[2].1, 8192);
        assert!(weak.lines()[2].contains("small models often cannot"));
    }
}
