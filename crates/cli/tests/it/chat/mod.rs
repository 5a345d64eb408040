//! `slmcode chat` (and `slmcode` alone) against the OpenAI test server: piped, as scripts use
//! it (messages in, events as JSON lines out), and through a real pseudo-terminal, as a person
//! does (the screen read as a terminal draws it).

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::{bin, within, Project};
use crate::openai::{FakeModel, Scripted};
use crate::run::{document_readme, fix_app, read_app, APP, APP_FIXED};
use serde_json::{json, Value};

mod piped;
mod pty;

/// The `slmcode chat` command for `p` against `model`, with a fresh learned state.
fn chat_command(p: &Project, model: &FakeModel, args: &[&str]) -> std::process::Command {
    for learned in ["evolve.json", "servers.json"] {
        let _ = std::fs::remove_file(crate::common::data_dir().join("slmcode").join(learned));
    }
    let mut cmd = bin();
    cmd.args(["chat", "--no-explore", "--endpoint", &model.url, "--root"])
        .arg(p.root())
        .args(args)
        .env("SLMCODE_RETRY_BASE_MS", "1");
    cmd
}

/// What a piped session printed: its events (JSON lines), its stderr, its exit code.
struct Piped {
    code: Option<i32>,
    events: Vec<Value>,
    stderr: String,
}

impl Piped {
    /// The events of one kind.
    fn of(&self, kind: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["event"] == kind).collect()
    }

    /// The session's own lines (answers to commands), joined.
    fn output(&self) -> String {
        self.of("output")
            .iter()
            .filter_map(|e| e["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Runs a piped session: `lines` on stdin, one a line.
fn piped(p: &Project, model: &FakeModel, args: &[&str], lines: &[&str]) -> Piped {
    let mut cmd = chat_command(p, model, args);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("start slmcode chat");
    let mut stdin = child.stdin.take().expect("stdin");
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().expect("slmcode chat ends");
    let _ = writer.join();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let events = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}")))
        .collect();
    Piped {
        code: out.status.code(),
        events,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The user messages of chat request `i`, in order.
fn user_messages(model: &FakeModel, i: usize) -> Vec<String> {
    model.requests()[i]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect()
}

/// `slmcode` in a pseudo-terminal: what is typed goes in as keys, the screen is read as a
/// terminal draws it (vt100), and everything written is kept raw as well.
pub struct Term {
    screen: Arc<Mutex<vt100::Parser>>,
    raw: Arc<Mutex<Vec<u8>>>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    cols: u16,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    _pair_master: Box<dyn portable_pty::MasterPty + Send>,
}

impl Term {
    /// Starts `slmcode ARGS` in a terminal of `cols` columns, with `env` on top of the test
    /// environment.
    pub fn start(args: &[&str], cols: u16, env: &[(&str, &str)]) -> Term {
        Term::start_in(None, args, cols, env)
    }

    /// [`Term::start`] in the directory `cwd`.
    pub fn start_in(cwd: Option<&Path>, args: &[&str], cols: u16, env: &[(&str, &str)]) -> Term {
        use portable_pty::{native_pty_system, CommandBuilder, PtySize};
        let rows = 60;
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("a pseudo-terminal");
        let template = bin();
        let mut cmd = CommandBuilder::new(template.get_program());
        cmd.env_clear();
        for (k, v) in std::env::vars_os() {
            let name = k.to_string_lossy();
            if !name.starts_with("SLMCODE_") && name != "NO_COLOR" {
                cmd.env(&k, &v);
            }
        }
        for (k, v) in template.get_envs() {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            }
        }
        cmd.env("TERM", "xterm-256color");
        cmd.env("SLMCODE_RETRY_BASE_MS", "1");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.args(args);
        if let Some(dir) = cwd {
            cmd.cwd(dir);
        }
        let child = pair.slave.spawn_command(cmd).expect("start slmcode");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("a reader");
        let writer = Arc::new(Mutex::new(pair.master.take_writer().expect("a writer")));
        let screen = Arc::new(Mutex::new(vt100::Parser::new(
            rows.try_into().expect("rows"),
            cols.try_into().expect("columns"),
            0,
        )));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let (s, r, w) = (screen.clone(), raw.clone(), writer.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut parser = s.lock().unwrap();
                parser.process(&buf[..n]);
                r.lock().unwrap().extend_from_slice(&buf[..n]);
                // A line editor asks where the cursor is; a terminal answers.
                if buf[..n].windows(4).any(|x| x == b"\x1b[6n") {
                    let (row, col) = parser.screen().cursor_position();
                    let answer = format!("\x1b[{};{}R", row + 1, col + 1);
                    let mut w = w.lock().unwrap();
                    let _ = w.write_all(answer.as_bytes());
                    let _ = w.flush();
                }
            }
        });
        Term {
            screen,
            raw,
            writer,
            cols,
            child,
            _pair_master: pair.master,
        }
    }

    /// Types `text` (a trailing "\r" is Enter).
    pub fn send(&mut self, text: &str) {
        let mut w = self.writer.lock().unwrap();
        w.write_all(text.as_bytes()).expect("type");
        w.flush().expect("type");
    }

    /// Types a line and Enter.
    pub fn line(&mut self, text: &str) {
        self.send(text);
        std::thread::sleep(Duration::from_millis(50));
        self.send("\r");
    }

    /// The screen as a person sees it, row by row, without colours; leading and trailing
    /// blank rows dropped.
    pub fn screen(&self) -> String {
        let parser = self.screen.lock().unwrap();
        let rows: Vec<String> = parser
            .screen()
            .rows(0, self.cols)
            .map(|r| r.trim_end().to_string())
            .collect();
        let start = rows.iter().position(|l| !l.is_empty()).unwrap_or(0);
        let end = rows
            .iter()
            .rposition(|l| !l.is_empty())
            .map_or(0, |i| i + 1);
        rows[start..end.max(start)].join("\n")
    }

    /// Everything written to the terminal, escape codes and all.
    pub fn raw(&self) -> String {
        String::from_utf8_lossy(&self.raw.lock().unwrap()).into_owned()
    }

    /// Waits until the screen shows `needle` (at least `times` times); the screen when it
    /// does, a panic with the screen when it does not within 20 s.
    pub fn wait_for_n(&self, needle: &str, times: usize) -> String {
        let shown = within(Duration::from_secs(20), || {
            Some(self.screen()).filter(|screen| screen.matches(needle).count() >= times)
        });
        shown.unwrap_or_else(|| {
            panic!(
                "the screen never showed {needle:?} ({times}x):\n{}",
                self.screen()
            )
        })
    }

    pub fn wait_for(&self, needle: &str) -> String {
        self.wait_for_n(needle, 1)
    }

    /// Leaves with Ctrl-D, as a person would: pressed again when the first came while no
    /// prompt was reading (the terminal's line discipline swallows it then). The exit code.
    pub fn leave(&mut self) -> u32 {
        for _ in 0..10 {
            self.send("\x04");
            let child = &mut self.child;
            let ended = within(Duration::from_secs(1), || {
                child
                    .try_wait()
                    .ok()
                    .flatten()
                    .map(|status| status.exit_code())
            });
            if let Some(code) = ended {
                return code;
            }
        }
        let _ = self.child.kill();
        panic!("Ctrl-D did not end slmcode:\n{}", self.screen());
    }

    /// Waits for the program to end: its exit code, or a panic after 20 s.
    pub fn wait_exit(&mut self) -> u32 {
        let child = &mut self.child;
        let ended = within(Duration::from_secs(20), || {
            child
                .try_wait()
                .ok()
                .flatten()
                .map(|status| status.exit_code())
        });
        ended.unwrap_or_else(|| {
            let _ = self.child.kill();
            panic!("slmcode did not end:\n{}", self.screen());
        })
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

/// The args that start a session for `p` against `model`.
fn session_args<'a>(p: &'a Project, model: &'a FakeModel, extra: &[&'a str]) -> Vec<&'a str> {
    for learned in ["evolve.json", "servers.json"] {
        let _ = std::fs::remove_file(crate::common::data_dir().join("slmcode").join(learned));
    }
    let root = p.root().to_str().expect("a UTF-8 temp path");
    let mut args = vec![
        "chat",
        "--no-explore",
        "--endpoint",
        &model.url,
        "--root",
        root,
    ];
    args.extend_from_slice(extra);
    args
}

/// Whether any process's command line holds `marker`.
fn process_with(marker: &str) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|e| {
        std::fs::read(Path::new(&e.path()).join("cmdline"))
            .map(|c| {
                String::from_utf8_lossy(&c)
                    .replace('\0', " ")
                    .contains(marker)
            })
            .unwrap_or(false)
    })
}
