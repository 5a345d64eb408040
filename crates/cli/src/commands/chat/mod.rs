//! `slmcode chat`, and `slmcode` alone: a session a person works in. Each message runs its
//! turns as `slmcode run` does — the same agent, saved as a run — and the person watches them
//! stream, stops one with Ctrl-C, answers approvals inline, undoes a message, looks at the
//! diff, switches the model, and goes on. Everything shown comes from the event stream.
//!
//! With stdin not a terminal, messages are read one a line (or as JSON lines) and the events
//! are printed as JSON lines on stdout, for scripts and tests.

mod input;
mod plans;
mod render;
mod slash;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{bail, Context, Result};
use serde_json::json;
use slmcode_aci::approval::{Answer, Approver, Request};
use slmcode_aci::config::{PermissionMode, ShellPermission};
use slmcode_aci::{Config, Registry, Workspace};
use slmcode_agent::launch::{self, Kit, Launch, LaunchOptions, Learning};
use slmcode_agent::run::{Agent, Decision, Event, Outcome, SavedRun};
use tokio_util::sync::CancellationToken;

use crate::terminal::{self, Paint};
use input::{Input, Line};
use render::Screen;

/// The arguments of `slmcode chat` (and of `slmcode` alone, with their defaults).
#[derive(clap::Args, Clone, Default)]
pub struct ChatArgs {
    /// Continue a run's conversation: `--resume` the project's last run, `--resume ID` another
    /// (see `slmcode runs list`).
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,
    /// How much the session asks first: ask (commands), review (commands and changes), auto
    /// (as the config says), plan (a message is planned with read-only tools; /go runs the plan).
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,
    /// Print the event stream as JSON lines on stdout (the default when stdin is not a
    /// terminal).
    #[arg(long)]
    pub events: bool,
    #[command(flatten)]
    pub settings: super::run::SettingsFlags,
}

/// How much the session asks before acting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Commands ask first; changes are written.
    Ask,
    /// Commands and every change ask first.
    Review,
    /// Nothing asks beyond what the config says (a `deny` stays a deny).
    Auto,
    /// Read-only tools only; the model answers with a plan and changes nothing.
    Plan,
}

impl Mode {
    fn parse(s: &str) -> Option<Mode> {
        match s.trim() {
            "ask" => Some(Mode::Ask),
            "review" => Some(Mode::Review),
            "auto" => Some(Mode::Auto),
            "plan" => Some(Mode::Plan),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Mode::Ask => "ask",
            Mode::Review => "review",
            Mode::Auto => "auto",
            Mode::Plan => "plan",
        }
    }

    /// The mode the config amounts to.
    fn of(config: &Config) -> Mode {
        if config.permission_mode == PermissionMode::Review {
            Mode::Review
        } else if config.shell_permission == ShellPermission::Ask {
            Mode::Ask
        } else {
            Mode::Auto
        }
    }
}

/// Where the conversation is: set up and waiting for its first message, or going.
enum Conversation {
    Ready {
        launch: Box<Launch>,
        follows: Option<Box<SavedRun>>,
    },
    Going {
        agent: Box<Agent>,
        kit: Box<Kit>,
        learning: Learning,
        endpoint: String,
        last: Option<Box<Outcome>>,
    },
    /// Only while one becomes the other.
    Between,
}

/// A session.
pub struct Chat {
    runtime: tokio::runtime::Runtime,
    workspace: Arc<Mutex<Workspace>>,
    /// The config as loaded, which `/mode auto` goes back to.
    base: Config,
    conversation: Conversation,
    screen: Arc<Mutex<Screen>>,
    /// Events as JSON lines on stdout, not drawn.
    json: bool,
    input: Arc<Mutex<Input>>,
    /// The running message's stop switch.
    turn: Arc<Mutex<Option<CancellationToken>>>,
    mode: Mode,
    /// Files the model is told to focus on (`/add`).
    focus: Vec<String>,
    /// Command output the user gave the model (`!!cmd`), sent with the next message.
    for_model: Vec<String>,
    show_thinking: Arc<AtomicBool>,
    stream: bool,
    explore: bool,
    /// The user's words of the last message, for `/map`.
    last_message: String,
    /// A plan waiting for `/go` (plan mode).
    plan: Option<plans::Pending>,
    /// The steps of plans run in this session, with their checkpoints, for `/undo`.
    steps_done: Vec<(String, Option<String>)>,
}

/// `slmcode chat`.
pub fn run(args: ChatArgs, ws: Workspace) -> Result<ExitCode> {
    let interactive = std::io::stdin().is_terminal();
    let follows = match &args.resume {
        None => None,
        Some(id) => Some(Box::new(saved_run(&ws, id)?)),
    };
    let mode = match &args.mode {
        None => Mode::of(&ws.config),
        Some(m) => match Mode::parse(m) {
            Some(m) => m,
            None => bail!("--mode takes ask, review, auto or plan, not `{m}`"),
        },
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let stream = !args.settings.no_stream;
    let explore = !args.settings.no_explore;
    let launch = runtime.block_on(launch::prepare(
        &ws,
        LaunchOptions {
            stream,
            explore,
            task: None,
            follows: follows.as_deref(),
            model_flag: args.settings.model.is_some(),
            role_model: None,
            notices: None,
        },
        &mut super::run::say,
    ))?;
    let root = ws.jail.root().to_path_buf();
    let input = if interactive {
        Input::editor(history_file(&root), &root)
    } else {
        Input::Piped(Box::new(std::io::BufReader::new(std::io::stdin())))
    };
    let show_thinking = Arc::new(AtomicBool::new(false));
    let colour = terminal::colour_on();
    let mut chat = Chat {
        runtime,
        base: ws.config.clone(),
        workspace: Arc::new(Mutex::new(ws)),
        conversation: Conversation::Ready {
            launch: Box::new(launch),
            follows,
        },
        screen: Arc::new(Mutex::new(Screen::new(colour, show_thinking.clone()))),
        json: args.events || !interactive,
        input: Arc::new(Mutex::new(input)),
        turn: Arc::default(),
        mode,
        focus: Vec::new(),
        for_model: Vec::new(),
        show_thinking,
        stream,
        explore,
        last_message: String::new(),
        plan: None,
        steps_done: Vec::new(),
    };
    chat.set_mode(mode);
    chat.watch_ctrl_c(interactive);
    chat.banner();
    chat.session();
    Ok(ExitCode::SUCCESS)
}

/// The saved run `--resume` or `/resume` names (empty: the project's last).
fn saved_run(ws: &Workspace, id: &str) -> Result<SavedRun> {
    let id = match id.trim() {
        "" => match slmcode_agent::run::latest_saved_run(&ws.jail)? {
            Some(id) => id,
            None => bail!("there is no run to resume in this project yet"),
        },
        given => given.to_string(),
    };
    Ok(slmcode_agent::run::load_saved_run(&ws.jail, &id)?)
}

/// The project's line history, in the user's data directory (a project's prompts are not
/// written into the project).
fn history_file(root: &std::path::Path) -> Option<PathBuf> {
    let dir = slmcode_aci::userdirs::data_dir()?.join("history");
    std::fs::create_dir_all(&dir).ok()?;
    let key = blake3::hash(root.to_string_lossy().as_bytes()).to_hex();
    Some(dir.join(format!("{}.txt", &key[..16])))
}

impl Chat {
    fn lock_ws(&self) -> std::sync::MutexGuard<'_, Workspace> {
        self.workspace
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// A line of the session's own (a command's answer): drawn, or a JSON line.
    fn say(&self, text: &str, style: Paint) {
        if self.json {
            let line = json!({"event": "output", "text": text});
            let _ = writeln!(terminal::machine_stdout(), "{line}");
        } else {
            self.screen
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .say(text, style);
        }
    }

    /// Ctrl-C stops the running message; with no message running and no line editor (which
    /// reads Ctrl-C itself), it leaves.
    fn watch_ctrl_c(&self, interactive: bool) {
        let turn = self.turn.clone();
        self.runtime.spawn(async move {
            while tokio::signal::ctrl_c().await.is_ok() {
                let running = turn.lock().unwrap_or_else(PoisonError::into_inner).clone();
                match running {
                    Some(t) => t.cancel(),
                    None if !interactive => std::process::exit(130),
                    None => {}
                }
            }
        });
    }

    fn banner(&self) {
        let (model, context, endpoint) = match &self.conversation {
            Conversation::Ready { launch, .. } => (
                launch.settings.model.clone(),
                launch.window.describe(),
                launch.backend.endpoint().to_string(),
            ),
            _ => return,
        };
        let resumed = match &self.conversation {
            Conversation::Ready {
                follows: Some(s), ..
            } => format!(", continuing run {}", s.run_id),
            _ => String::new(),
        };
        let parts = [
            "slmcode".to_string(),
            format!("{model} at {endpoint}"),
            context,
            format!("mode {}{resumed}", self.mode.name()),
        ];
        let width = if self.json {
            usize::MAX
        } else {
            render::width()
        };
        self.say(
            &format!(
                "{}\n{}",
                render::fit(&parts, width),
                render::fit(
                    &["/help for commands", "Ctrl-C stops a turn", "Ctrl-D leaves"],
                    width
                )
            ),
            Paint::Dim,
        );
    }

    /// Reads and does until the user leaves.
    fn session(&mut self) {
        let mut interrupted = false;
        loop {
            let line = self
                .input
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .message();
            match line {
                Line::End => break,
                Line::Interrupted if interrupted => break,
                Line::Interrupted => {
                    interrupted = true;
                    self.say("(Ctrl-C again, or Ctrl-D, leaves)", Paint::Dim);
                }
                Line::Text(text) => {
                    interrupted = false;
                    let text = text.trim().to_string();
                    if text.is_empty() {
                        continue;
                    }
                    if !self.command(&text) {
                        break;
                    }
                }
            }
        }
        self.end_conversation();
        if let Conversation::Going { agent, .. } = &self.conversation {
            let id = agent.trajectory().id.clone();
            self.say(
                &format!("saved as run {id}; go on with slmcode --resume {id}"),
                Paint::Dim,
            );
        }
    }

    /// What the model learns from the conversation so far (the bandit, a server's refusal
    /// of tools); said once at its end.
    fn end_conversation(&mut self) {
        if let Conversation::Going {
            agent,
            learning,
            endpoint,
            last: Some(outcome),
            ..
        } = &self.conversation
        {
            let model = agent.model().to_string();
            let mut said = Vec::new();
            learning.record(outcome, endpoint, &model, &mut |s| said.push(s));
            for s in said {
                super::run::say(s);
            }
        }
    }

    /// Sends a message: its turns run to an answer, or until Ctrl-C. In plan mode, the
    /// message is planned instead, and the plan waits for `/go`.
    fn send(&mut self, text: String) {
        if self.mode == Mode::Plan {
            return self.make_plan(text);
        }
        let Some(message) = self.compose(&text) else {
            return;
        };
        self.last_message = text;
        let cancel = CancellationToken::new();
        *self.turn.lock().unwrap_or_else(PoisonError::into_inner) = Some(cancel.clone());
        if let Conversation::Ready { .. } = self.conversation {
            self.begin(&message);
            let result = match &mut self.conversation {
                Conversation::Going { agent, .. } => {
                    self.runtime.block_on(agent.first_message(cancel))
                }
                _ => return,
            };
            self.finished(result);
        } else if let Conversation::Going { agent, .. } = &mut self.conversation {
            let result = self.runtime.block_on(agent.follow(&message, cancel));
            self.finished(result);
        }
        *self.turn.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    fn finished(&mut self, result: Result<Outcome, slmcode_agent::run::RunError>) {
        // An error is on the stream already; the conversation stays as it was.
        if let (Ok(outcome), Conversation::Going { last, .. }) = (result, &mut self.conversation) {
            *last = Some(Box::new(outcome));
        }
    }

    /// The agent for the first message, with the session's approver and mode.
    fn begin(&mut self, message: &str) {
        let Conversation::Ready { launch, follows } =
            std::mem::replace(&mut self.conversation, Conversation::Between)
        else {
            return;
        };
        let kit = launch.kit.clone();
        let learning = launch.learning.clone();
        let endpoint = launch.backend.endpoint().to_string();
        let sink = self.sink();
        let mut agent = match follows {
            Some(saved) => {
                let mut agent = launch.resume(*saved, message, self.workspace.clone(), sink);
                // /undo takes back this session's messages, not the saved run's.
                agent.separate_checkpoints();
                agent
            }
            None => launch.start(message, self.workspace.clone(), sink),
        };
        let input = self.input.clone();
        let screen = self.screen.clone();
        let turn = self.turn.clone();
        let json = self.json;
        agent.approve_with(move |request| ask(&input, &screen, &turn, json, request));
        if self.mode == Mode::Plan {
            agent.set_tools(kit.read_only(agent_arm(&agent)));
        }
        self.conversation = Conversation::Going {
            agent: Box::new(agent),
            kit: Box::new(kit),
            learning,
            endpoint,
            last: None,
        };
    }

    /// Where the agent's events go: the screen, or JSON lines.
    fn sink(&self) -> Box<dyn FnMut(&Event) + Send> {
        sink_for(self.screen.clone(), self.json)
    }

    /// The message as the model gets it: the user's words, what `@path` attaches, the focus
    /// files, command output given to it, plan mode's rule. `None` (said why) when an `@path`
    /// cannot be attached: nothing is sent, and the line is in the history to fix.
    fn compose(&mut self, text: &str) -> Option<String> {
        let mut message = String::new();
        for given in self.for_model.drain(..) {
            message.push_str(&given);
            message.push_str("\n\n");
        }
        message.push_str(text);
        for path in attached(text) {
            match self.attachment(&path) {
                Ok(body) => message.push_str(&format!("\n\n[@{path}]\n{body}")),
                Err(why) => {
                    self.say(&format!("@{path}: {why} — nothing was sent"), Paint::Red);
                    return None;
                }
            }
        }
        if !self.focus.is_empty() {
            message.push_str(&format!(
                "\n\n[files to focus on: {}]",
                self.focus.join(", ")
            ));
        }
        Some(message)
    }

    /// A tool call the user made (`@path`, `!cmd`, `/verify`): through the tools' jail,
    /// policy and sandbox like any call, but the user's own — nothing asks them about it, and
    /// the model's loop guard does not count it.
    /// Ctrl-C stops it, as it stops a turn.
    fn user_call(&self, tool: &str, args: &serde_json::Value) -> slmcode_aci::ToolResult {
        let stop = CancellationToken::new();
        let control = slmcode_aci::control::CallControl::new();
        let (watch, cancel) = (stop.clone(), control.clone());
        self.runtime.spawn(async move {
            watch.cancelled().await;
            cancel.cancel();
        });
        *self.turn.lock().unwrap_or_else(PoisonError::into_inner) = Some(stop.clone());
        let result = {
            let mut ws = self.lock_ws();
            let asker = ws.approver.replace(Approver::new(|_| Answer::Yes));
            let guard = std::mem::take(&mut ws.session.loop_guard);
            let result = Registry::coding().call_with(&mut ws, tool, args, &control);
            ws.session.loop_guard = guard;
            ws.approver = asker;
            result
        };
        *self.turn.lock().unwrap_or_else(PoisonError::into_inner) = None;
        // Ends the watch (the call is over; cancelling it now changes nothing).
        stop.cancel();
        result
    }

    /// A file's outline (or, when it has none, its first lines), through the tools.
    fn attachment(&self, path: &str) -> Result<String, String> {
        let outline = self.user_call("ws_outline", &json!({ "path": path }));
        if !outline.is_error && !outline.text.trim().is_empty() {
            return Ok(outline.text);
        }
        let read = self.user_call("ws_read", &json!({ "path": path }));
        if read.is_error {
            Err(read
                .text
                .lines()
                .next()
                .unwrap_or("cannot be read")
                .to_string())
        } else {
            Ok(read.text)
        }
    }

    /// Applies a mode to the workspace (and to the tools offered, for plan).
    fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
        {
            let base = self.base.clone();
            let mut ws = self.lock_ws();
            let (shell, permission) = match mode {
                Mode::Ask => (ShellPermission::Ask, PermissionMode::Auto),
                Mode::Review => (ShellPermission::Ask, PermissionMode::Review),
                Mode::Auto | Mode::Plan => (
                    match base.shell_permission {
                        ShellPermission::Deny => ShellPermission::Deny,
                        _ => ShellPermission::Allow,
                    },
                    PermissionMode::Auto,
                ),
            };
            // A deny in the config is the user's: no mode lifts it.
            ws.config.shell_permission = if base.shell_permission == ShellPermission::Deny {
                ShellPermission::Deny
            } else {
                shell
            };
            ws.config.permission_mode = if base.permission_mode == PermissionMode::DryRun {
                PermissionMode::DryRun
            } else {
                permission
            };
        }
        if let Conversation::Going { agent, kit, .. } = &mut self.conversation {
            let arm = agent_arm(agent);
            if mode == Mode::Plan {
                agent.set_tools(kit.read_only(arm));
            } else {
                agent.set_tools(kit.registry(arm));
            }
        }
    }
}

/// A front end's sink for a run's events: drawn on `screen`, or JSON lines.
fn sink_for(screen: Arc<Mutex<Screen>>, json: bool) -> Box<dyn FnMut(&Event) + Send> {
    if json {
        Box::new(|event: &Event| {
            let _ = writeln!(terminal::machine_stdout(), "{}", event.to_json_line());
        })
    } else {
        Box::new(move |event: &Event| {
            screen
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .show(event)
        })
    }
}

/// The edit format the agent teaches now.
fn agent_arm(agent: &Agent) -> slmcode_agent::evolve::Arm {
    agent.edit_format()
}

/// The `@path` words of a message (an `@` at a word's start; trailing punctuation dropped).
fn attached(text: &str) -> Vec<String> {
    text.split_whitespace()
        .filter_map(|w| w.strip_prefix('@'))
        .map(|p| p.trim_end_matches([',', '.', ';', ':', '?', '!', ')']))
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

/// Asks the user about a request (on the agent's tool thread): y, n with an optional reason,
/// a(lways), e(xplain). Ctrl-C says no and stops the message; the end of input says no.
fn ask(
    input: &Mutex<Input>,
    screen: &Mutex<Screen>,
    turn: &Mutex<Option<CancellationToken>>,
    json: bool,
    request: &Request,
) -> Decision {
    let say = |text: &str| {
        if json {
            let line = json!({"event": "output", "text": text});
            let _ = writeln!(terminal::machine_stdout(), "{line}");
        } else {
            screen
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .say(text, Paint::Plain);
        }
    };
    loop {
        let answer = input
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .answer("allow? y / n [reason] / a(lways) / e(xplain) › ");
        let text = match answer {
            Line::Text(t) => t,
            Line::Interrupted => {
                if let Some(t) = turn.lock().unwrap_or_else(PoisonError::into_inner).as_ref() {
                    t.cancel();
                }
                return Decision::Stop;
            }
            Line::End => return Decision::No { reason: None },
        };
        match parse_answer(&text) {
            Some(Answered::Decided(d)) => return d,
            Some(Answered::Explain) => say(&explain(request)),
            None => say("answer y (yes), n (no; a reason may follow: n use pytest instead), a (yes, and always for this this session) or e (explain)"),
        }
    }
}

enum Answered {
    Decided(Decision),
    Explain,
}

fn parse_answer(text: &str) -> Option<Answered> {
    let text = text.trim();
    let (word, rest) = match text.find(char::is_whitespace) {
        Some(i) => (&text[..i], text[i..].trim()),
        None => (text, ""),
    };
    Some(match word.to_ascii_lowercase().as_str() {
        "y" | "yes" => Answered::Decided(Decision::Yes),
        "a" | "always" => Answered::Decided(Decision::Always),
        "e" | "explain" | "?" => Answered::Explain,
        "n" | "no" => Answered::Decided(Decision::No {
            reason: (!rest.is_empty()).then(|| rest.to_string()),
        }),
        _ => return None,
    })
}

/// What a yes would do, in slmcode's terms.
fn explain(request: &Request) -> String {
    match request {
        Request::Command { command } => format!(
            "y runs `{command}` once in the project root under ws_shell's sandbox (it may write only inside the project, not .slmcode/, and the temp directory; secret stores outside the project are hidden; it is killed with everything it started at its timeout or on Ctrl-C). a runs it and, for the rest of this session, every command that starts with `{}` without asking. n refuses it; words after the n go to the model as your reason.",
            slmcode_agent::run::always_key(request)
        ),
        Request::Change { path, tool, diff } => format!(
            "{tool} wants to write this change to {path} (checkpointed first, so /undo takes it back):\n{diff}\ny writes it, a writes it and every later change to {path} this session, n refuses it (a reason after the n goes to the model)."
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_read_as_a_person_types_them() {
        assert!(matches!(
            parse_answer(" Y "),
            Some(Answered::Decided(Decision::Yes))
        ));
        assert!(matches!(
            parse_answer("n use pytest instead"),
            Some(Answered::Decided(Decision::No { reason: Some(r) })) if r == "use pytest instead"
        ));
        assert!(matches!(
            parse_answer("no"),
            Some(Answered::Decided(Decision::No { reason: None }))
        ));
        assert!(matches!(
            parse_answer("a"),
            Some(Answered::Decided(Decision::Always))
        ));
        assert!(matches!(parse_answer("e"), Some(Answered::Explain)));
        assert!(parse_answer("maybe").is_none());
        assert!(parse_answer("").is_none());
    }

    #[test]
    fn at_words_are_attachments() {
        assert_eq!(
            attached("fix @src/app.py, then @README.md. not me@x"),
            vec!["src/app.py", "README.md"]
        );
    }
}
