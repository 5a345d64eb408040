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
    /// The settings to use, as config lines.
    pub fn settings(&self, model: &str, window: usize) -> Vec<(&'static str, String)> {
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
            ("model", model.to_string()),
            ("tool_mode", tool_mode.to_string()),
            ("context_window", window.to_string()),
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
    let filler_lines = (window * 7 / 10) * 7 / 2 / 60;
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
/// where there is one, appended otherwise; comments and every other line kept as they are.
pub fn set_config_keys(text: &str, settings: &[(&str, String)]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for (key, value) in settings {
        let value = if value.contains([':', '#', '"', '\'']) || value.trim() != value {
            serde_json::to_string(value).unwrap_or_default()
        } else {
            value.clone()
        };
        let line = format!("{key}: {value}");
        match lines.iter().position(|l| {
            l.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        }) {
            Some(i) => lines[i] = line,
            None => lines.push(line),
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
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
            set_config_keys("", &[("context_window", "8192".into())]),
            "context_window: 8192\n"
        );
    }

    #[test]
    fn the_settings_follow_what_was_found() {
        let r = report(Native::Works, Some("Hermes"), true);
        assert_eq!(
            r.settings("m", 8192),
            vec![
                ("model", "m".to_string()),
                ("tool_mode", "native".to_string()),
                ("context_window", "8192".to_string())
            ]
        );
        let r = report(
            Native::Refused("does not support tools".into()),
            Some("Hermes"),
            false,
        );
        let s = r.settings("m", 8192);
        assert_eq!(s[1].1, "text");
        assert_eq!(s[2].1, "768");
        assert_eq!(
            report(Native::NoCall, None, true).settings("m", 8192)[1].1,
            "auto"
        );
        assert!(r.lines()[0].contains("refused by the server (does not support tools)"));
        assert!(r.lines()[2].contains("the server read only 1000 of a 6000-token prompt"));
        // Read whole but not recalled: the model's limit, not the server's window.
        let mut weak = report(Native::Works, None, true);
        weak.recalled = false;
        assert_eq!(weak.settings("m", 8192)[2].1, "8192");
        assert!(weak.lines()[2].contains("small models often cannot"));
    }
}
