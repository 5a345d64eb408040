//! What a person sees of a session's events: the reply as it streams, reasoning dimmed and
//! folded to one line (unless `/think show`), one line per tool call with its outcome and the
//! lines it changed, the change's diff (coloured, capped), a status line after each reply.
//! Made from the event stream alone.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::Value;
use slmcode_aci::approval::Request;
use slmcode_aci::outcome::Applied;
use slmcode_aci::Outcome;
use slmcode_agent::run::Event;

use crate::terminal::{paint, Paint};

/// Diff lines shown per change; `/diff` shows them all.
pub const SHOWN_DIFF_LINES: usize = 40;

/// The screen's state between events.
pub struct Screen {
    colour: bool,
    /// `/think show`: reasoning streams in full (dimmed).
    pub show_thinking: Arc<AtomicBool>,
    /// Text was written without its newline yet.
    line_open: bool,
    /// Characters of reasoning folded into the open "thinking" line.
    thinking: Option<usize>,
    /// The last call: its tool and what it named, for its result's line.
    call: Option<(String, String)>,
    /// A result's line, waiting to learn the lines its change added and removed.
    pending: Option<String>,
    turn: (usize, usize),
    /// The reply has shown (or held back) text already.
    text_seen: bool,
    /// A reply that looks written for the harness (a final answer's JSON, a call in text),
    /// held until it ends: its call line or the answer's summary says it better.
    held: Option<String>,
}

impl Screen {
    pub fn new(colour: bool, show_thinking: Arc<AtomicBool>) -> Screen {
        Screen {
            colour,
            show_thinking,
            line_open: false,
            thinking: None,
            call: None,
            pending: None,
            turn: (0, 0),
            text_seen: false,
            held: None,
        }
    }

    fn out(&mut self, text: &str, style: Paint) {
        if text.is_empty() {
            return;
        }
        paint(text, style, self.colour);
        self.line_open = !text.ends_with('\n');
    }

    /// Ends whatever line is open: folded reasoning, streamed text, a result's line.
    fn settle(&mut self) {
        if let Some(chars) = self.thinking.take() {
            self.out(&format!(" {chars} chars (/think show)\n"), Paint::Dim);
        }
        if let Some(line) = self.pending.take() {
            self.close();
            self.out(&format!("{line}\n"), Paint::Plain);
        }
        self.close();
    }

    fn close(&mut self) {
        if self.line_open {
            self.out("\n", Paint::Plain);
        }
    }

    /// Shows one event.
    pub fn show(&mut self, event: &Event) {
        match event {
            Event::Text { text } => self.text(text),
            Event::Reasoning { text } => {
                if self.show_thinking.load(Ordering::Relaxed) {
                    self.out(text, Paint::Dim);
                } else {
                    match &mut self.thinking {
                        Some(chars) => *chars += text.chars().count(),
                        None => {
                            self.settle();
                            self.out("thinking…", Paint::Dim);
                            self.thinking = Some(text.chars().count());
                        }
                    }
                }
            }
            Event::FileChanged {
                path,
                added,
                removed,
                diff,
            } => {
                self.thinking_done();
                let line = match self.pending.take() {
                    Some(line) => line,
                    None => format!("  {path}"),
                };
                self.close();
                self.out(&line, Paint::Plain);
                self.out(&format!(" · +{added} −{removed}\n"), Paint::Plain);
                self.diff(diff, SHOWN_DIFF_LINES);
            }
            // Waiting notices come often; the status line says what matters.
            Event::Loading { .. } | Event::PromptProgress { .. } => {}
            other => {
                if matches!(
                    other,
                    Event::Reply { .. }
                        | Event::Turn { .. }
                        | Event::TurnEnded { .. }
                        | Event::Final { .. }
                        | Event::Error { .. }
                ) {
                    self.reply_over();
                }
                self.settle();
                self.show_settled(other);
            }
        }
    }

    fn text(&mut self, text: &str) {
        if let Some(held) = &mut self.held {
            held.push_str(text);
            return;
        }
        let text = if self.text_seen {
            text
        } else {
            let start = text.trim_start();
            if start.is_empty() {
                return;
            }
            self.text_seen = true;
            if start.starts_with(['{', '<', '`']) {
                self.held = Some(start.to_string());
                return;
            }
            start
        };
        if self.thinking.is_some() || self.pending.is_some() {
            self.settle();
        }
        self.out(text, Paint::Plain);
    }

    /// The reply is over: held text that was not for the harness after all is shown.
    fn reply_over(&mut self) {
        self.text_seen = false;
        if let Some(held) = self.held.take() {
            if !for_the_harness(&held) {
                self.settle();
                self.out(&format!("{}\n", held.trim_end()), Paint::Plain);
            }
        }
    }

    fn thinking_done(&mut self) {
        if let Some(chars) = self.thinking.take() {
            self.out(&format!(" {chars} chars (/think show)\n"), Paint::Dim);
        }
    }

    fn show_settled(&mut self, event: &Event) {
        match event {
            Event::Turn { number, max } => self.turn = (*number, *max),
            Event::Reply {
                tokens,
                tokens_per_sec,
                prompt_tokens,
                cached_tokens,
                window,
                ..
            } => {
                let mut parts = vec![
                    format!("turn {}/{}", self.turn.0, self.turn.1),
                    format!("{tokens} tok"),
                    format!("{tokens_per_sec:.1} tok/s"),
                ];
                if let Some(p) = prompt_tokens {
                    parts.push(format!("context {}/{}", short(*p), short(*window as u64)));
                }
                if let Some(c) = cached_tokens {
                    parts.push(format!("{} cached", short(*c)));
                }
                self.out(&format!("{}\n", fit(&parts, width())), Paint::Dim);
            }
            Event::Call { name, args, .. } => {
                self.call = Some((name.clone(), target(args)));
            }
            Event::Result {
                name,
                outcome,
                is_error,
                text,
                ..
            } => {
                let target = match &self.call {
                    Some((called, t)) if called == name => t.clone(),
                    _ => String::new(),
                };
                let head = if target.is_empty() {
                    format!("  {name}")
                } else {
                    format!("  {name} {target}")
                };
                if *is_error {
                    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
                    self.out(&format!("{head} · "), Paint::Plain);
                    self.out(&format!("✗ {}\n", clip(first, 200)), Paint::Red);
                } else {
                    self.pending = Some(format!("{head} · {}", label(outcome)));
                }
            }
            Event::Compacted { before, after } => self.out(
                &format!("  [context compacted: about {before} → {after} tokens]\n"),
                Paint::Dim,
            ),
            Event::Final {
                answer,
                turns,
                elapsed_ms,
            } => {
                let files = crate::commands::common::files_changed(&answer.files_changed);
                let summary = answer.summary.trim();
                if !summary.is_empty() {
                    self.out(&format!("{summary}\n"), Paint::Bold);
                }
                let parts = [
                    answer.status.clone(),
                    files,
                    format!("{turns} turn(s)"),
                    format!("{:.1} s", *elapsed_ms as f64 / 1000.0),
                ];
                self.out(&format!("{}\n", fit(&parts, width())), Paint::Dim);
            }
            Event::Error { message } => self.out(&format!("error: {message}\n"), Paint::Red),
            Event::Note { text } => self.out(&format!("  [{text}]\n"), Paint::Dim),
            Event::Warning { text } => self.out(&format!("warning: {text}\n"), Paint::Yellow),
            Event::Approval { request } => match request {
                Request::Command { command } => {
                    self.out("  ws_shell wants to run ", Paint::Plain);
                    self.out(&format!("{command}\n"), Paint::Bold);
                }
                Request::Change { path, tool, diff } => {
                    self.out(&format!("  {tool} wants to change {path}:\n"), Paint::Plain);
                    self.diff(diff, SHOWN_DIFF_LINES);
                }
            },
            Event::Approved {
                allowed: true,
                always: true,
                reason: None,
            } => self.out("  (allowed: you said always)\n", Paint::Dim),
            _ => {}
        }
    }

    /// A unified diff, coloured by line, at most `max` lines (then how many more).
    pub fn diff(&mut self, diff: &str, max: usize) {
        let lines: Vec<&str> = diff.lines().collect();
        for line in lines.iter().take(max) {
            let style = if line.starts_with("+++") || line.starts_with("---") {
                Paint::Bold
            } else if line.starts_with('+') {
                Paint::Green
            } else if line.starts_with('-') {
                Paint::Red
            } else if line.starts_with("@@") {
                Paint::Cyan
            } else {
                Paint::Plain
            };
            self.out(&format!("    {line}\n"), style);
        }
        if lines.len() > max {
            self.out(
                &format!(
                    "    … {} more line(s); /diff shows them all\n",
                    lines.len() - max
                ),
                Paint::Dim,
            );
        }
    }

    /// A line the session itself says (a command's answer), after anything open.
    pub fn say(&mut self, text: &str, style: Paint) {
        self.settle();
        self.out(&format!("{}\n", text.trim_end_matches('\n')), style);
    }
}

/// Whether a reply's text was written for the harness: a JSON object (the final answer, a
/// call), possibly fenced, or a call in the text format.
fn for_the_harness(text: &str) -> bool {
    let t = text.trim();
    let t = t
        .strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .map(|inner| inner.trim().trim_end_matches("```").trim())
        .unwrap_or(t);
    t.contains("<tool_call>") || serde_json::from_str::<Value>(t).is_ok_and(|v| v.is_object())
}

/// What a call names, for its line: the path, command, pattern or query it was given.
fn target(args: &Value) -> String {
    ["path", "command", "pattern", "query", "name", "symbol"]
        .iter()
        .find_map(|k| args.get(k).and_then(Value::as_str))
        .map(|s| clip(s, 80))
        .unwrap_or_default()
}

/// The outcome in a word or two: the rung an edit landed on, what a write did, a command's
/// exit.
fn label(outcome: &Outcome) -> String {
    let applied = |a: Applied| match a {
        Applied::Written => "",
        Applied::DryRun => " (dry run)",
        Applied::Staged => " (staged for review)",
    };
    match outcome {
        Outcome::Done => "ok".into(),
        Outcome::Edited(e) => format!("{}{}", e.rung.name(), applied(e.applied)),
        Outcome::Written(w) => format!(
            "{}{}",
            match (w.created, w.changed) {
                (true, _) => "created",
                (false, true) => "written",
                (false, false) => "unchanged",
            },
            applied(w.applied)
        ),
        Outcome::Ran(r) if r.timed_out => "timed out".into(),
        Outcome::Ran(r) => match r.exit_code {
            Some(c) => format!("exit {c}"),
            None => "killed".into(),
        },
        Outcome::Refused(class) => serde_json::to_value(class)
            .ok()
            .and_then(|v| v.get("class").and_then(Value::as_str).map(str::to_string))
            .map(|c| format!("refused ({c})"))
            .unwrap_or_else(|| "refused".into()),
    }
}

/// The terminal's width, when there is one.
pub fn width() -> usize {
    crossterm::terminal::size()
        .map(|(cols, _)| usize::from(cols))
        .unwrap_or(usize::MAX)
}

/// Parts joined with " · ", broken between parts so that a line stays within `width`
/// (continuation lines indented), for narrow terminals.
pub fn fit<S: AsRef<str>>(parts: &[S], width: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for part in parts {
        let part = part.as_ref();
        let len = part.chars().count();
        if line == 0 {
            out.push_str(part);
            line = len;
        } else if line + 3 + len <= width {
            out.push_str(" · ");
            out.push_str(part);
            line += 3 + len;
        } else {
            out.push_str("\n  ");
            out.push_str(part);
            line = 2 + len;
        }
    }
    out
}

/// Token counts the way a status line reads them: 950, 3.1k, 32k.
fn short(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1000..=9999 => format!("{:.1}k", n as f64 / 1000.0),
        _ => format!("{}k", (n + 500) / 1000),
    }
}

/// At most `max` characters, with an ellipsis when cut.
fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(max).collect();
        out.push('…');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_for_the_harness_are_known() {
        assert!(for_the_harness("{\"status\": \"done\"}"));
        assert!(for_the_harness("```json\n{\"status\": \"done\"}\n```"));
        assert!(for_the_harness("<tool_call>{}</tool_call>"));
        assert!(!for_the_harness("`total` sums the list"));
        assert!(!for_the_harness("{not json} but words"));
    }

    #[test]
    fn parts_break_between_parts_on_a_narrow_terminal() {
        let parts = ["turn 1/30", "20 tok", "31.5 tok/s", "context 1.8k/8.2k"];
        assert_eq!(
            fit(&parts, 40),
            "turn 1/30 · 20 tok · 31.5 tok/s\n  context 1.8k/8.2k"
        );
        assert_eq!(fit(&parts, 200).lines().count(), 1);
    }

    #[test]
    fn counts_read_short() {
        assert_eq!(short(950), "950");
        assert_eq!(short(3120), "3.1k");
        assert_eq!(short(32768), "33k");
    }

    #[test]
    fn a_call_names_its_path_or_command() {
        assert_eq!(
            target(&serde_json::json!({"path": "src/app.py", "old_str": "x"})),
            "src/app.py"
        );
        assert_eq!(
            target(&serde_json::json!({"command": "cargo test"})),
            "cargo test"
        );
        assert_eq!(target(&serde_json::json!({})), "");
    }
}
