//! What a line does: a slash command, a command for the shell (`!cmd`, `!!cmd`), or a message
//! for the model.

use std::sync::PoisonError;

use serde_json::json;
use slmcode_aci::path::RelPath;
use slmcode_agent::launch::{self, LaunchOptions};
use slmcode_agent::run::UndoError;
use slmcode_agent::{find_models, prompt, trajectory};

use super::input::COMMANDS;
use super::{saved_run, Chat, Conversation, Mode};
use crate::terminal::Paint;

impl Chat {
    /// Does what `line` says; false when the session ends.
    pub(super) fn command(&mut self, line: &str) -> bool {
        if let Some(rest) = line.strip_prefix("!!") {
            self.shell(rest.trim(), true);
            return true;
        }
        if let Some(rest) = line.strip_prefix('!') {
            self.shell(rest.trim(), false);
            return true;
        }
        if !line.starts_with('/') {
            self.send(line.to_string());
            return true;
        }
        let (name, rest) = match line.find(char::is_whitespace) {
            Some(i) => (&line[..i], line[i..].trim()),
            None => (line, ""),
        };
        match name {
            "/exit" | "/quit" => return false,
            "/help" => self.help(),
            "/undo" if rest.is_empty() && self.undo_step().is_some() => {}
            "/undo" => self.undo(rest),
            "/go" => self.go(),
            "/plan" => self.plan_command(rest),
            "/diff" => self.diff(),
            "/model" => self.model(rest),
            "/add" => self.add(rest),
            "/drop" => self.drop_focus(rest),
            "/map" => self.map(),
            "/tokens" => self.tokens(),
            "/compact" => self.compact(),
            "/clear" => self.clear(None),
            "/mode" => match Mode::parse(rest) {
                Some(mode) => {
                    self.set_mode(mode);
                    self.say(
                        &format!("mode {}{}", mode.name(), mode_note(mode)),
                        Paint::Dim,
                    );
                }
                None => self.say(
                    &format!(
                        "mode {} · /mode ask | review | auto | plan",
                        self.mode.name()
                    ),
                    Paint::Plain,
                ),
            },
            "/think" => match rest {
                "show" | "fold" => {
                    self.show_thinking
                        .store(rest == "show", std::sync::atomic::Ordering::Relaxed);
                    self.say(&format!("reasoning: {rest}"), Paint::Dim);
                }
                _ => self.say("/think show | fold", Paint::Plain),
            },
            "/verify" => self.verify(),
            "/runs" => {
                let listed = trajectory::list(&self.lock_ws().jail);
                match listed {
                    Ok(l) if l.is_empty() => self.say("no runs yet", Paint::Plain),
                    Ok(l) => self.say(&l.join("\n"), Paint::Plain),
                    Err(e) => self.say(&e.to_string(), Paint::Red),
                }
            }
            "/resume" => {
                let saved = saved_run(&self.lock_ws(), rest);
                match saved {
                    Ok(saved) => self.clear(Some(saved)),
                    Err(e) => self.say(&format!("{e:#}"), Paint::Red),
                }
            }
            other => self.say(
                &format!(
                    "{other} is not a command; /help lists them (a message cannot start with /)"
                ),
                Paint::Red,
            ),
        }
        true
    }

    fn help(&self) {
        let mut text = String::from("Type a message for the model. Lines ending in \\ (or Alt-Enter) go on.\n@path attaches a file's outline · !cmd runs a command (policy and sandbox as ws_shell) · !!cmd also gives its output to the model\n");
        for (name, about) in COMMANDS {
            text.push_str(&format!("{name:<9} {about}\n"));
        }
        text.push_str("Ctrl-C stops a turn; twice at the prompt, or Ctrl-D, leaves.");
        self.say(&text, Paint::Plain);
    }

    fn undo(&mut self, rest: &str) {
        let n = match rest {
            "" => 1,
            n => match n.parse::<usize>() {
                Ok(n) if n > 0 => n,
                _ => {
                    self.say("/undo takes a number of messages: /undo 2", Paint::Red);
                    return;
                }
            },
        };
        let Conversation::Going { agent, .. } = &mut self.conversation else {
            self.say(&UndoError::Nothing.to_string(), Paint::Plain);
            return;
        };
        match agent.undo(n) {
            Ok(undone) => {
                let mut text = format!("undid {} message(s):", undone.messages.len());
                for m in &undone.messages {
                    text.push_str(&format!("\n  “{}”", clip(m, 70)));
                }
                if undone.restored.is_empty() {
                    text.push_str("\nno files had changed");
                }
                for r in &undone.restored {
                    text.push_str(&format!("\n  {r}"));
                }
                self.say(&text, Paint::Plain);
            }
            Err(e) => self.say(&e.to_string(), Paint::Red),
        }
    }

    fn diff(&mut self) {
        let Conversation::Going { agent, .. } = &self.conversation else {
            self.say("no changes yet", Paint::Plain);
            return;
        };
        let diffs = agent.session_diff();
        if diffs.is_empty() {
            self.say("no changes yet", Paint::Plain);
            return;
        }
        if self.json {
            for d in diffs {
                self.say(&d.diff, Paint::Plain);
            }
            return;
        }
        let mut screen = self.screen.lock().unwrap_or_else(PoisonError::into_inner);
        for d in diffs {
            screen.say(
                &format!("{} · +{} −{}", d.path, d.added, d.removed),
                Paint::Bold,
            );
            screen.diff(&d.diff, usize::MAX);
        }
    }

    fn model(&mut self, rest: &str) {
        if rest.is_empty() {
            let config = self.lock_ws().config.clone();
            let listed = launch::backend(&config, self.stream, &mut |_| {})
                .map_err(|e| e.to_string())
                .and_then(|b| {
                    let endpoint = b.endpoint().to_string();
                    self.runtime
                        .block_on(b.models())
                        .map(|l| (l, endpoint))
                        .map_err(|e| e.to_string())
                });
            match listed {
                Ok((listed, endpoint)) => {
                    let now = self.current_model();
                    let text = find_models::describe(&listed, None, 30, &endpoint);
                    self.say(
                        &format!("now: {now}\n{text}\n/model NAME switches"),
                        Paint::Plain,
                    );
                }
                Err(e) => self.say(&e, Paint::Red),
            }
            return;
        }
        let name = rest.to_string();
        match &mut self.conversation {
            Conversation::Going { agent, kit, .. } => {
                let switched = self.runtime.block_on(agent.switch_model(&name, kit));
                match switched {
                    Ok(s) => {
                        let unlisted = if s.listed {
                            ""
                        } else {
                            " (the server does not list it; asking for it anyway)"
                        };
                        let text =
                            format!("model {name}{unlisted} · {} · {}", s.context, s.edit_format);
                        if self.mode == Mode::Plan {
                            self.set_mode(Mode::Plan);
                        }
                        self.say(&text, Paint::Dim);
                    }
                    Err(e) => self.say(&e.to_string(), Paint::Red),
                }
            }
            _ => {
                // Not started: set up again with this model.
                let applied = self.lock_ws().config.apply_flag("model", &name, "/model");
                if let Err(e) = applied {
                    self.say(&e.to_string(), Paint::Red);
                    return;
                }
                self.clear(None);
            }
        }
    }

    pub(super) fn current_model(&self) -> String {
        match &self.conversation {
            Conversation::Going { agent, .. } => agent.model().to_string(),
            Conversation::Ready { launch, .. } => launch.settings.model.clone(),
            Conversation::Between => String::new(),
        }
    }

    fn add(&mut self, rest: &str) {
        if rest.is_empty() {
            self.say("/add PATH… (files the model should focus on)", Paint::Plain);
            return;
        }
        for word in rest.split_whitespace() {
            let found = {
                let ws = self.lock_ws();
                RelPath::parse(word, ws.jail.root())
                    .map_err(|e| e.to_string())
                    .and_then(|p| {
                        ws.jail
                            .symlink_metadata(&p)
                            .map(|_| p.to_string())
                            .map_err(|e| e.to_string())
                    })
            };
            match found {
                Ok(path) if !self.focus.contains(&path) => self.focus.push(path),
                Ok(_) => {}
                Err(e) => self.say(&format!("{word}: {e}"), Paint::Red),
            }
        }
        self.say(&format!("focus: {}", self.focus.join(", ")), Paint::Dim);
    }

    fn drop_focus(&mut self, rest: &str) {
        if rest.is_empty() {
            self.focus.clear();
        } else {
            self.focus
                .retain(|f| !rest.split_whitespace().any(|w| w == f));
        }
        let now = if self.focus.is_empty() {
            "none".to_string()
        } else {
            self.focus.join(", ")
        };
        self.say(&format!("focus: {now}"), Paint::Dim);
    }

    fn map(&mut self) {
        let task = self.last_message.clone();
        let text = {
            let mut ws = self.lock_ws();
            let instructions = prompt::project_instructions(&ws.jail);
            let window = match &self.conversation {
                Conversation::Ready { launch, .. } => launch.window.tokens,
                _ => ws.config.context_window,
            };
            let budget = prompt::repo_map_budget(ws.config.repo_map_tokens, window);
            prompt::repo_map(&mut ws, &task, instructions.as_deref(), budget).map(|m| m.text)
        };
        match text {
            Some(t) => self.say(&t, Paint::Plain),
            None => self.say(
                "no repo map (repo_map_tokens is 0, or no symbols were found)",
                Paint::Plain,
            ),
        }
    }

    fn tokens(&mut self) {
        let Conversation::Going { agent, .. } = &self.conversation else {
            self.say(
                "nothing in the context yet: send a message first",
                Paint::Plain,
            );
            return;
        };
        let mut text = String::new();
        for (what, tokens) in agent.token_use() {
            text.push_str(&format!("{tokens:>8}  {what}\n"));
        }
        self.say(text.trim_end(), Paint::Plain);
    }

    fn compact(&mut self) {
        let Conversation::Going { agent, .. } = &mut self.conversation else {
            self.say("nothing to compact yet", Paint::Plain);
            return;
        };
        if agent.compact_now() == 0 {
            self.say("nothing to compact: no old tool results left", Paint::Plain);
        }
    }

    /// A new conversation (the files stay as they are), or one that continues `saved`.
    fn clear(&mut self, saved: Option<slmcode_agent::run::SavedRun>) {
        self.end_conversation();
        let before = match &self.conversation {
            Conversation::Going { agent, .. } => Some(agent.trajectory().id.clone()),
            _ => None,
        };
        let prepared = {
            let ws = self.lock_ws();
            self.runtime.block_on(launch::prepare(
                &ws,
                LaunchOptions {
                    stream: self.stream,
                    explore: self.explore,
                    task: None,
                    follows: saved.as_ref(),
                    model_flag: false,
                    role_model: None,
                    notices: None,
                },
                &mut crate::commands::run::say,
            ))
        };
        match prepared {
            Ok(launch) => {
                let model = launch.settings.model.clone();
                let text = match &saved {
                    Some(s) => format!(
                        "continuing run {} with {model}: type your message",
                        s.run_id
                    ),
                    None => format!(
                        "new conversation with {model}{}; the files stay as they are",
                        before
                            .map(|b| format!(" (the last was run {b})"))
                            .unwrap_or_default()
                    ),
                };
                self.conversation = Conversation::Ready {
                    launch: Box::new(launch),
                    follows: saved.map(Box::new),
                };
                self.say(&text, Paint::Dim);
            }
            Err(e) => self.say(&e.to_string(), Paint::Red),
        }
    }

    fn verify(&mut self) {
        let verify = self.lock_ws().config.verify.clone();
        match verify.filter(|v| !v.trim().is_empty()) {
            Some(command) => self.shell(&command, false),
            None => self.say(
                "no verify command: set verify in .slmcode/config.yaml, or start with --verify \"CMD\"",
                Paint::Plain,
            ),
        }
    }

    /// Runs a command the user typed through ws_shell — its policy, sandbox and limits — and
    /// shows the result; with `give`, the model gets it with the next message. The user typed
    /// it, so it is not asked about again.
    pub(super) fn shell(&mut self, command: &str, give: bool) {
        if command.is_empty() {
            self.say(
                "!cmd runs a command; !!cmd also gives its output to the model",
                Paint::Plain,
            );
            return;
        }
        let result = self.user_call("ws_shell", &json!({ "command": command }));
        let style = if result.is_error {
            Paint::Red
        } else {
            Paint::Plain
        };
        self.say(&format!("$ {command}\n{}", result.text.trim_end()), style);
        if give {
            self.for_model
                .push(format!("[I ran `{command}`:]\n{}", result.text.trim_end()));
            self.say(
                "(the output goes to the model with your next message)",
                Paint::Dim,
            );
        }
    }
}

fn mode_note(mode: Mode) -> &'static str {
    match mode {
        Mode::Ask => ": commands ask first",
        Mode::Review => ": commands and changes ask first",
        Mode::Auto => ": nothing asks beyond the config",
        Mode::Plan => ": a message is planned (read-only tools); /go runs the plan",
    }
}

fn clip(s: &str, max: usize) -> String {
    let first = s.lines().next().unwrap_or("");
    if first.chars().count() <= max && !s.contains('\n') {
        first.to_string()
    } else {
        format!("{}…", first.chars().take(max).collect::<String>())
    }
}
