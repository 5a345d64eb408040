//! Where a session's messages and answers come from: a line editor on a terminal (history per
//! project, multi-line input, completion of slash commands and paths), or, when stdin is not a
//! terminal, one message per line (a JSON line `{"message": "…"}` for a message with newlines).

use std::borrow::Cow;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use reedline::{
    default_emacs_keybindings, ColumnarMenu, Completer, CompletionResult, Emacs, FileBackedHistory,
    KeyCode, KeyModifiers, MenuBuilder, Prompt, PromptEditMode, PromptHistorySearch, Reedline,
    ReedlineEvent, ReedlineMenu, Signal, Span, Suggestion, ValidationResult, Validator,
};

/// One thing the user did at the prompt.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    Text(String),
    /// Ctrl-C.
    Interrupted,
    /// Ctrl-D, or the end of the input.
    End,
}

/// The slash commands, for completion and `/help`.
pub const COMMANDS: &[(&str, &str)] = &[
    ("/help", "what you can type"),
    (
        "/undo",
        "put back what the last message's turns changed (/undo N: the last N)",
    ),
    ("/diff", "what this session changed"),
    ("/model", "list the models, or switch: /model NAME"),
    ("/add", "files the model should focus on: /add PATH…"),
    ("/drop", "forget the focus files (/drop PATH: one)"),
    ("/map", "the repo map the model is given"),
    ("/tokens", "where the context goes"),
    ("/compact", "elide old tool results now"),
    (
        "/clear",
        "start a new conversation (files stay as they are)",
    ),
    ("/mode", "ask | review | auto | plan"),
    ("/go", "run the plan (plan mode), a focused run per step"),
    (
        "/plan",
        "show the plan; /plan edit changes it, /plan drop discards it",
    ),
    ("/think", "show | fold the model's reasoning"),
    ("/verify", "run the project's verify command now"),
    ("/runs", "the project's runs"),
    ("/resume", "continue a run: /resume ID"),
    ("/exit", "leave (Ctrl-D does too)"),
];

/// Where lines come from.
pub enum Input {
    Editor {
        main: Box<Reedline>,
        /// Answers to approvals: no history, no completion.
        ask: Box<Reedline>,
    },
    Piped(Box<dyn BufRead + Send>),
}

impl Input {
    /// A line editor whose history lives in `history` (created if missing), completing
    /// commands and paths under `root`.
    pub fn editor(history: Option<PathBuf>, root: &Path) -> Input {
        let mut keys = default_emacs_keybindings();
        keys.add_binding(
            KeyModifiers::NONE,
            KeyCode::Tab,
            ReedlineEvent::UntilFound(vec![
                ReedlineEvent::Menu("completion".into()),
                ReedlineEvent::MenuNext,
            ]),
        );
        let mut main = Reedline::create()
            .with_edit_mode(Box::new(Emacs::new(keys)))
            .with_completer(Box::new(Completions {
                root: root.to_path_buf(),
            }))
            .with_menu(ReedlineMenu::EngineCompleter(Box::new(
                ColumnarMenu::default().with_name("completion"),
            )))
            .with_validator(Box::new(Continued))
            .with_ansi_colors(crate::terminal::colour_on());
        if let Some(h) = history.and_then(|p| FileBackedHistory::with_file(1000, p).ok()) {
            main = main.with_history(Box::new(h));
        }
        Input::Editor {
            main: Box::new(main),
            ask: Box::new(Reedline::create().with_ansi_colors(false)),
        }
    }

    /// The next message or command.
    pub fn message(&mut self) -> Line {
        match self {
            Input::Editor { main, .. } => read(main, &Shown("› ")).map(|text| {
                // A line ending in a backslash went on to the next: join them.
                Line::Text(text.replace("\\\n", "\n"))
            }),
            Input::Piped(lines) => match next_line(lines.as_mut()) {
                None => Line::End,
                Some(line) => Line::Text(message_of(&line)),
            },
        }
    }

    /// An answer to a question (an approval), after `question`.
    pub fn answer(&mut self, question: &str) -> Line {
        match self {
            Input::Editor { ask, .. } => read(ask, &Shown(question)).map(Line::Text),
            Input::Piped(lines) => match next_line(lines.as_mut()) {
                None => Line::End,
                Some(line) => Line::Text(message_of(&line)),
            },
        }
    }
}

trait MapText {
    fn map(self, f: impl FnOnce(String) -> Line) -> Line;
}

impl MapText for Line {
    fn map(self, f: impl FnOnce(String) -> Line) -> Line {
        match self {
            Line::Text(t) => f(t),
            other => other,
        }
    }
}

fn read(editor: &mut Reedline, prompt: &Shown) -> Line {
    match editor.read_line(prompt) {
        Ok(Signal::Success(text)) => Line::Text(text),
        Ok(Signal::CtrlC) => Line::Interrupted,
        Ok(Signal::CtrlD) | Err(_) => Line::End,
        Ok(_) => Line::Text(String::new()),
    }
}

/// A line from piped input, without its line ending; `None` at the end (or an unreadable
/// input, which ends the session the same way).
fn next_line(input: &mut dyn BufRead) -> Option<String> {
    let mut line = String::new();
    match input.read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_string()),
    }
}

/// A piped line's message: the line, or the `message` (or `text`) of a JSON object.
pub fn message_of(line: &str) -> String {
    if line.trim_start().starts_with('{') {
        if let Ok(serde_json::Value::Object(o)) = serde_json::from_str(line) {
            if let Some(text) = ["message", "text"]
                .iter()
                .find_map(|k| o.get(*k).and_then(serde_json::Value::as_str))
            {
                return text.to_string();
            }
        }
    }
    line.to_string()
}

/// The prompt: just its text.
struct Shown<'a>(&'a str);

impl Prompt for Shown<'_> {
    fn render_prompt_left(&self) -> Cow<'_, str> {
        Cow::Borrowed(self.0)
    }
    fn render_prompt_right(&self) -> Cow<'_, str> {
        Cow::Borrowed("")
    }
    fn render_prompt_indicator(&self, _: PromptEditMode) -> Cow<'_, str> {
        Cow::Borrowed("")
    }
    fn render_prompt_multiline_indicator(&self) -> Cow<'_, str> {
        Cow::Borrowed("· ")
    }
    fn render_prompt_history_search_indicator(&self, search: PromptHistorySearch) -> Cow<'_, str> {
        Cow::Owned(format!("(search: {}) ", search.term))
    }
}

/// A line ending in a backslash goes on (Alt-Enter inserts a newline too).
struct Continued;

impl Validator for Continued {
    fn validate(&self, line: &str) -> ValidationResult {
        if line.ends_with('\\') {
            ValidationResult::Incomplete
        } else {
            ValidationResult::Complete
        }
    }
}

/// Completes slash commands at the start of a line, and paths after `@`, `/add ` or `/drop `.
struct Completions {
    root: PathBuf,
}

impl Completer for Completions {
    fn complete(&mut self, line: &str, pos: usize) -> CompletionResult {
        let before = line.get(..pos).unwrap_or(line);
        let start = before
            .rfind(char::is_whitespace)
            .map(|i| i + 1)
            .unwrap_or(0);
        let word = &before[start..];
        let suggestion = |value: String, description: Option<&str>, start: usize| Suggestion {
            value,
            description: description.map(str::to_string),
            span: Span::new(start, pos),
            append_whitespace: false,
            ..Suggestion::default()
        };
        let mut out = Vec::new();
        if start == 0 && word.starts_with('/') {
            for (name, about) in COMMANDS {
                if name.starts_with(word) {
                    out.push(suggestion(name.to_string(), Some(about), 0));
                }
            }
        } else if let Some(partial) = word.strip_prefix('@') {
            for p in paths(&self.root, partial) {
                out.push(suggestion(format!("@{p}"), None, start));
            }
        } else if before.starts_with("/add ") || before.starts_with("/drop ") {
            for p in paths(&self.root, word) {
                out.push(suggestion(p, None, start));
            }
        }
        CompletionResult::fresh(out)
    }
}

/// Entries of the project that start with `partial` (a relative path), directories with a
/// trailing slash; hidden ones only when asked for; never outside the project.
fn paths(root: &Path, partial: &str) -> Vec<String> {
    if partial.starts_with('/') || partial.split('/').any(|c| c == "..") {
        return Vec::new();
    }
    let (dir, stem) = match partial.rfind('/') {
        Some(i) => (&partial[..=i], &partial[i + 1..]),
        None => ("", partial),
    };
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            if !name.starts_with(stem) || (name.starts_with('.') && !stem.starts_with('.')) {
                return None;
            }
            let slash = if e.file_type().ok()?.is_dir() {
                "/"
            } else {
                ""
            };
            Some(format!("{dir}{name}{slash}"))
        })
        .collect();
    out.sort();
    out.truncate(200);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_line_carries_a_message_with_newlines() {
        assert_eq!(message_of(r#"{"message": "a\nb"}"#), "a\nb");
        assert_eq!(message_of("plain words"), "plain words");
        assert_eq!(message_of("{not json"), "{not json");
    }

    #[test]
    fn commands_and_paths_complete() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/app.py"), "").unwrap();
        let mut c = Completions {
            root: dir.path().to_path_buf(),
        };
        let values = |r: CompletionResult| -> Vec<String> {
            r.suggestions().iter().map(|s| s.value.clone()).collect()
        };
        assert_eq!(values(c.complete("/un", 3)), vec!["/undo"]);
        assert_eq!(values(c.complete("look at @sr", 11)), vec!["@src/"]);
        assert_eq!(
            values(c.complete("look at @src/a", 14)),
            vec!["@src/app.py"]
        );
        assert_eq!(values(c.complete("/add src/", 9)), vec!["src/app.py"]);
        assert!(values(c.complete("@../", 4)).is_empty());
    }
}
