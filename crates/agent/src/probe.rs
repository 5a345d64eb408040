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
    /// The size of the long prompt (tokens, as the server counted it when it said) and
    /// whether the model still saw its first line.
    pub long_prompt_tokens: u64,
    pub kept_the_start: bool,
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
        let window = if self.kept_the_start {
            window
        } else {
            // The start was lost: the server's real window is smaller than the one in force.
            (self.long_prompt_tokens as usize / 2).max(2048)
        };
        vec![
            ("model", model.to_string()),
            ("tool_mode", tool_mode.to_string()),
            ("context_window", window.to_string()),
        ]
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
        let context = if self.kept_the_start {
            format!(
                "context: a {}-token prompt reached the model whole (it recalled its first line)",
                self.long_prompt_tokens
            )
        } else {
            format!(
                "context: a {}-token prompt lost its start (the model could not recall its first line): the server's window is smaller than the one in force",
                self.long_prompt_tokens
            )
        };
        let speed = match (self.read_per_sec, self.write_per_sec) {
            (Some(r), Some(w)) => {
                format!("speed: reads about {r:.0} tokens/s, writes about {w:.1} tokens/s")
            }
            (None, Some(w)) => format!("speed: writes about {w:.1} tokens/s"),
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
    let tools = prompt::tool_definitions(registry);
    let offered: Vec<OfferedTool> = registry
        .specs()
        .map(|s| OfferedTool {
            name: s.name.to_string(),
            params: s
                .params
                .iter()
                .map(|p| (p.name.to_string(), p.kind))
                .collect(),
        })
        .collect();
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
    let (reply, took) = chat(backend, model, &[Message::user(long.clone())], &[], 32).await?;
    let counted = reply.usage.map(|u| u.prompt_tokens).filter(|n| *n > 0);
    let long_prompt_tokens =
        counted.unwrap_or_else(|| crate::run::estimate_tokens(&[Message::user(long)], &[]) as u64);
    let kept_the_start = reply.content.contains(NEEDLE) || reply.reasoning.contains(NEEDLE);
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
        kept_the_start,
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
            kept_the_start: kept,
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
        assert_eq!(s[2].1, "3000");
        assert_eq!(
            report(Native::NoCall, None, true).settings("m", 8192)[1].1,
            "auto"
        );
        assert!(r.lines()[0].contains("refused by the server (does not support tools)"));
        assert!(r.lines()[2].contains("lost its start"));
    }
}
