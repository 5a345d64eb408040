//! Nothing from outside reaches the terminal raw. A model server (its model names, its
//! errors), a model (its calls, its summary) and a repository (file names, file lines,
//! hooks.json, config.yaml, staged changes) can all hold control characters; a terminal obeys
//! them — `ESC[2K` erases a line, U+009B is an 8-bit CSI, U+202E reverses what follows. Every
//! command a person reads is driven here through the real binary with such text from the
//! source it trusts least, and its stdout and stderr are checked by effect: no control
//! character arrives raw, and the text arrives escaped, not dropped. Machine outputs (`tool`,
//! `session`, `--json`) are the opposite: byte-exact, for the program that reads them.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::{bin, Project};
use crate::openai::{FakeModel, Scripted};
use serde_json::{json, Value};

/// ESC (an erase-line CSI), BEL, C1 CSI (U+009B) and a right-to-left override (U+202E).
const EVIL: &str = "\u{1b}[2K\u{7}\u{9b}1A\u{202e}";
/// [`EVIL`] as a person must see it.
const SHOWN: &str = "\\x1b[2K\\x07\\x9b1A\\u{202e}";

/// What a terminal would act on: a control character but newline and tab, or a bidi control.
fn acted_on(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c as u32, 0x061C | 0x200E | 0x200F | 0x202A..=0x202E | 0x2066..=0x2069)
}

/// The text of a stream a person reads; fails if any byte of it would reach the terminal as
/// a control (an invalid UTF-8 byte too: a lone 0x9b is a CSI to an 8-bit terminal).
fn readable(what: &str, bytes: &[u8]) -> String {
    let text = match String::from_utf8(bytes.to_vec()) {
        Ok(t) => t,
        Err(e) => panic!("{what}: bytes that are not UTF-8 reach the terminal: {e}"),
    };
    if let Some(c) = text.chars().find(|c| acted_on(*c)) {
        panic!("{what}: {c:?} reaches the terminal raw:\n{text:?}");
    }
    text
}

/// Both streams of a command a person runs, checked by [`readable`].
fn shown(what: &str, out: &Output) -> (String, String) {
    (
        readable(&format!("{what} (stdout)"), &out.stdout),
        readable(&format!("{what} (stderr)"), &out.stderr),
    )
}

/// `s` as a YAML double-quoted scalar, every non-ASCII or control character as `\uXXXX`.
fn yaml_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_ascii() && !c.is_ascii_control() => out.push(c),
            c => out.push_str(&format!("\\u{:04x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// A server that serves one model whose name carries [`EVIL`].
fn evil_model_name() -> String {
    format!("m-server{EVIL}")
}

/// `slmcode ARGS` in `p` (as its current directory and, where the command takes one, root).
fn slmcode(p: &Project, args: &[&str], data: &Path) -> Command {
    let mut cmd = bin();
    cmd.args(args)
        .current_dir(p.root())
        .env("XDG_DATA_HOME", data)
        .env("SLMCODE_RETRY_BASE_MS", "1");
    cmd
}

/// The file a run edits, named by the repository.
fn evil_file() -> String {
    format!("evil{EVIL}.py")
}

/// A project whose files carry [`EVIL`] in a name and in a first line, and a model, served
/// under a name carrying it, that reads both, edits one and answers with it in its summary.
fn hostile_run() -> (Project, FakeModel, tempfile::TempDir, Output) {
    let p = Project::new();
    p.write("notes.txt", format!("repo{EVIL}\nsecond\n"));
    p.write(&evil_file(), "def f():\n    return 1\n");
    let model = FakeModel::with_models(
        vec![
            Scripted::call("ws_read", json!({"path": "notes.txt"})),
            Scripted::call("ws_read", json!({"path": evil_file()})),
            Scripted::call(
                "ws_edit",
                json!({"path": evil_file(), "old_str": "    return 1", "new_str": "    return 2"}),
            ),
            Scripted::text(
                json!({"status": "done", "summary": format!("model{EVIL}"),
                       "files_changed": [evil_file()], "notes": ""})
                .to_string(),
            ),
        ],
        vec![json!({"id": evil_model_name(), "object": "model"})],
    );
    let data = tempfile::tempdir().unwrap();
    let out = slmcode(
        &p,
        &[
            "run",
            "tidy the notes",
            "--json",
            "--no-explore",
            "--endpoint",
            &model.url,
        ],
        data.path(),
    )
    .output()
    .unwrap();
    (p, model, data, out)
}

/// `slmcode run`'s progress and final lines show the server's model name, the model's call
/// and summary, and the repository's file names and lines escaped; `--json` keeps the
/// model's bytes exact.
#[test]
fn run_shows_server_model_and_repository_text_escaped() {
    let (p, _model, _data, out) = hostile_run();
    let err = readable("run (stderr)", &out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    for (source, expected) in [
        ("the model name in the header", format!("m-server{SHOWN}")),
        ("a file's first line in a result", format!("repo{SHOWN}")),
        // The call line is the arguments as JSON: ESC and BEL are JSON escapes there.
        ("the model's call", "\\x9b1A\\u{202e}.py".to_string()),
        ("the files changed", format!("evil{SHOWN}.py")),
        ("the model's summary", format!("model{SHOWN}")),
    ] {
        assert!(err.contains(&expected), "{source}: {expected}\n{err}");
    }
    // The machine output is the model's, byte for byte.
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["summary"], json!(format!("model{EVIL}")));
    assert_eq!(answer["files_changed"], json!([evil_file()]));
    assert_eq!(
        std::fs::read_to_string(p.path(&evil_file())).unwrap(),
        "def f():\n    return 2\n"
    );
}

/// What a run leaves behind — its log, its checkpoints, what the bandit learned under the
/// model's family — is shown escaped by `runs`, `checkpoints` and `evolve`.
#[test]
fn runs_checkpoints_and_evolve_show_what_a_run_left_escaped() {
    let (p, _model, data, out) = hostile_run();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cli = |args: &[&str]| -> (String, String) {
        let out = slmcode(&p, args, data.path()).output().unwrap();
        let (o, e) = shown(&args.join(" "), &out);
        assert!(out.status.success(), "{args:?}: {o}{e}");
        (o, e)
    };
    let (list, _) = cli(&["runs", "list"]);
    let id = list.split_whitespace().next().unwrap().to_string();
    let (transcript, _) = cli(&["runs", "show", &id]);
    // The final answer is shown as the JSON it was: ESC and BEL are JSON escapes there.
    for expected in [
        format!("repo{SHOWN}"),
        format!("m-server{SHOWN}"),
        "\"summary\": \"model\\u001b[2K\\u0007\\x9b1A\\u{202e}\"".to_string(),
    ] {
        assert!(transcript.contains(&expected), "{expected}\n{transcript}");
    }
    let (sessions, _) = cli(&["checkpoints", "list"]);
    let session = sessions.split_whitespace().next().unwrap().to_string();
    let (saved, _) = cli(&["checkpoints", "show", &session]);
    assert!(saved.contains(&format!("evil{SHOWN}.py")), "{saved}");
    // The family is the model name's, lowercased: `[2k`.
    let (stats, _) = cli(&["evolve", "stats"]);
    assert!(
        stats.contains("m-server\\x1b[2k\\x07\\x9b1a\\u{202e}"),
        "{stats}"
    );
}

/// A server listing one model whose name carries [`EVIL`].
fn evil_server() -> FakeModel {
    FakeModel::with_models(
        vec![],
        vec![json!({"id": evil_model_name(), "object": "model"})],
    )
}

/// `slmcode models` shows the names a server lists escaped.
#[test]
fn models_shows_a_served_name_escaped() {
    let p = Project::new();
    let data = tempfile::tempdir().unwrap();
    let model = evil_server();
    let out = slmcode(&p, &["models", "--endpoint", &model.url], data.path())
        .output()
        .unwrap();
    let (listed, err) = shown("models", &out);
    assert!(out.status.success(), "{listed}{err}");
    assert!(listed.contains(&format!("m-server{SHOWN}")), "{listed}");
}

/// `slmcode doctor` shows the names a server lists escaped.
#[test]
fn doctor_shows_a_served_name_escaped() {
    let p = Project::new();
    let data = tempfile::tempdir().unwrap();
    let model = evil_server();
    let out = slmcode(&p, &["doctor"], data.path())
        .env("SLMCODE_ENDPOINT", &model.url)
        .output()
        .unwrap();
    let (report, err) = shown("doctor", &out);
    assert!(
        report.contains(&format!("the server's first, m-server{SHOWN}")),
        "{report}{err}"
    );
}

/// An error the server sends back, printed by the binary as it exits, is escaped.
#[test]
fn a_server_error_is_shown_escaped() {
    let p = Project::new();
    let data = tempfile::tempdir().unwrap();
    let model = FakeModel::start(vec![Scripted::Status(
        400,
        json!({"error": {"message": format!("bad{EVIL}")}}).to_string(),
    )]);
    let out = slmcode(
        &p,
        &["run", "anything", "--endpoint", &model.url],
        data.path(),
    )
    .output()
    .unwrap();
    let (_, err) = shown("run against a refusing server", &out);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains(&format!("bad{SHOWN}")), "{err}");
}

/// `slmcode map` shows the repository's file names and definition lines escaped.
#[test]
fn map_shows_file_names_and_lines_escaped() {
    let p = Project::new();
    let data = tempfile::tempdir().unwrap();
    p.write(
        &evil_file(),
        format!("def handler_for_orders(x):  # line{EVIL}\n    return x\n"),
    );
    let out = slmcode(&p, &["map", "change handler_for_orders"], data.path())
        .output()
        .unwrap();
    let (map, err) = shown("map", &out);
    assert!(out.status.success(), "{err}");
    assert!(map.contains(&format!("evil{SHOWN}.py")), "{map}{err}");
    assert!(map.contains(&format!("# line{SHOWN}")), "{map}{err}");
}

/// `slmcode hooks list` shows a hook's command escaped, and the error for a matcher that is
/// not a regex (`[` opens a class [`EVIL`] never closes) too.
#[test]
fn hooks_list_shows_the_file_and_its_errors_escaped() {
    let p = Project::new();
    let data = tempfile::tempdir().unwrap();
    p.write(
        ".slmcode/hooks.json",
        json!({"PreToolUse": [{"matcher": "ws_read", "command": format!("echo cmd{EVIL}")}]})
            .to_string(),
    );
    let out = slmcode(&p, &["hooks", "list"], data.path())
        .output()
        .unwrap();
    let (list, err) = shown("hooks list", &out);
    assert!(out.status.success(), "{err}");
    assert!(list.contains(&format!("echo cmd{SHOWN}")), "{list}");

    p.write(
        ".slmcode/hooks.json",
        json!({"PreToolUse": [{"matcher": format!("ws_read{EVIL}"), "command": "true"}]})
            .to_string(),
    );
    let out = slmcode(&p, &["hooks", "list"], data.path())
        .output()
        .unwrap();
    let (_, err) = shown("hooks list of a broken file", &out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains(&format!("matcher `ws_read{SHOWN}`")), "{err}");
}

/// `slmcode pending list` and `show` show a staged change's path and text escaped.
#[test]
fn pending_shows_a_staged_change_escaped() {
    let p = Project::new();
    let data = tempfile::tempdir().unwrap();
    let name = format!("staged{EVIL}.txt");
    let results = p.session_env(
        &format!(
            "{}\n",
            json!({"tool": "ws_write", "args": {"path": name, "content": format!("text{EVIL}\n")}})
        ),
        // The same data directory (the state key) as the commands that read the change back.
        &[
            ("SLMCODE_PERMISSION_MODE", "review"),
            ("XDG_DATA_HOME", data.path().to_str().unwrap()),
        ],
    );
    assert_eq!(results[0]["is_error"], false, "{results:?}");
    let out = slmcode(&p, &["pending", "list"], data.path())
        .output()
        .unwrap();
    let (list, err) = shown("pending list", &out);
    assert!(out.status.success(), "{err}");
    assert!(list.contains(&format!("staged{SHOWN}.txt")), "{list}");
    let id = list.split_whitespace().next().unwrap().to_string();
    let out = slmcode(&p, &["pending", "show", &id], data.path())
        .output()
        .unwrap();
    let (diff, err) = shown("pending show", &out);
    assert!(out.status.success(), "{err}");
    assert!(diff.contains(&format!("+text{SHOWN}")), "{diff}");
}

/// `slmcode config show` shows the project's values and its warnings escaped; `--json` keeps
/// the value exact.
#[test]
fn config_show_shows_values_and_warnings_escaped() {
    let p = Project::new();
    let data = tempfile::tempdir().unwrap();
    p.write(
        ".slmcode/config.yaml",
        format!(
            "model: {}\n{}: 1\n",
            yaml_quoted(&format!("cfg{EVIL}")),
            yaml_quoted(&format!("key{EVIL}"))
        ),
    );
    let out = slmcode(&p, &["config", "show"], data.path())
        .output()
        .unwrap();
    let (table, err) = shown("config show", &out);
    assert!(out.status.success(), "{err}");
    assert!(table.contains(&format!("cfg{SHOWN}")), "{table}");
    assert!(err.contains(&format!("unknown key `key{SHOWN}`")), "{err}");

    let out = slmcode(&p, &["config", "show", "--json"], data.path())
        .output()
        .unwrap();
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let model = rows.iter().find(|r| r["key"] == "model").unwrap();
    assert_eq!(model["value"], json!(format!("cfg{EVIL}")));
}

/// `slmcode evolve why` names the configured model's family escaped.
#[test]
fn evolve_why_shows_the_family_escaped() {
    let p = Project::new();
    let data = tempfile::tempdir().unwrap();
    p.write(
        ".slmcode/config.yaml",
        format!("model: {}\n", yaml_quoted(&evil_model_name())),
    );
    let out = slmcode(&p, &["evolve", "why"], data.path())
        .output()
        .unwrap();
    let (why, err) = shown("evolve why", &out);
    assert!(out.status.success(), "{err}");
    assert!(
        why.contains("m-server\\x1b[2k\\x07\\x9b1a\\u{202e}"),
        "{why}"
    );
}

/// ws_shell's question under `shell_permission: ask` shows the model's command escaped on the
/// terminal it asks on: an erase-line cannot put a harmless command where the real one is.
/// `script` gives the binary a terminal; the person answers no.
#[test]
fn the_shell_approval_prompt_shows_the_command_escaped() {
    let p = Project::new();
    p.write(".slmcode/config.yaml", "shell_permission: ask\n");
    // The model's command, as JSON escapes (the shell line stays ASCII).
    // The result is for the model: kept apart from the terminal, byte-exact.
    let result = p.root().join("result.txt");
    let call = r#"{"command":"cargo test \u001b[2K\u0007\u009b1A\u202e --release"}"#;
    let mut child = Command::new("script")
        .args([
            "-qec",
            &format!(
                "{} tool ws_shell '{call}' --root {} > {}",
                env!("CARGO_BIN_EXE_slmcode"),
                p.root().display(),
                result.display()
            ),
            "/dev/null",
        ])
        .env("XDG_CONFIG_HOME", p.root().join("no-user-config"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("script (util-linux)");
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"n\n").unwrap();
    let out = child.wait_with_output().unwrap();
    // What the terminal got. Its line discipline turns each newline into CR LF: those are
    // the terminal's own, so only what the command carried is looked for.
    let screen = String::from_utf8(out.stdout).expect("UTF-8 on the terminal");
    assert!(
        screen.contains(
            "allow ws_shell to run `cargo test \\x1b[2K\\x07\\x9b1A\\u{202e} --release`?"
        ),
        "{screen:?}"
    );
    for raw in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}'] {
        assert!(
            !screen.contains(raw),
            "{raw:?} reached the terminal: {screen:?}"
        );
    }
    let result = std::fs::read_to_string(&result).unwrap();
    assert!(
        result.contains(
            "`cargo test \u{1b}[2K\u{7}\u{9b}1A\u{202e} --release` needs the user's approval"
        ),
        "{result:?}"
    );
}

/// What a program reads is left as it is: `slmcode tool` prints what the model sees, and
/// `session` answers in JSON, byte for byte.
#[test]
fn machine_outputs_keep_the_bytes() {
    let p = Project::new();
    p.write("notes.txt", format!("repo{EVIL}\n"));
    let (text, err) = p.tool("ws_read", r#"{"path": "notes.txt"}"#);
    assert!(!err, "{text}");
    assert_eq!(text, format!("     1|repo{EVIL}"));
    let out = p.session(&format!(
        "{}\n",
        json!({"tool": "ws_read", "args": {"path": "notes.txt"}})
    ));
    assert_eq!(out[0]["text"], json!(format!("     1|repo{EVIL}")));
}

/// Where a source file may reach a terminal itself, and why: everything else writes through
/// `crates/cli/src/terminal.rs`, whose streams for a person escape what they show.
const RAW_STREAMS_ALLOWED: &[(&str, &str, &str)] = &[
    (
        "crates/agent/src/mcp/stdio.rs",
        "io::stdout",
        "JSON-RPC for the MCP client, byte-exact",
    ),
    (
        "crates/aci/src/syntax/process.rs",
        "io::stdout",
        "the parser process's frames to the slmcode that started it, byte-exact",
    ),
    (
        "crates/aci/src/tools/shell.rs",
        "\"/dev/tty\"",
        "the approval question, written through slmcode_aci::terminal::Human",
    ),
];

/// What in a line of code writes to stdout or stderr without `terminal.rs`, if anything.
fn raw_stream(line: &str) -> Option<&'static str> {
    let mut code = line.split("//").next().unwrap_or("").to_string();
    for own in [
        "terminal::stdout",
        "terminal::stderr",
        "terminal::machine_stdout",
    ] {
        code = code.replace(own, "");
    }
    [
        "println!",
        "print!",
        "eprintln!",
        "eprint!",
        "dbg!",
        "io::stdout",
        "io::stderr",
        "stdout()",
        "stderr()",
        "Stdio::inherit",
        "\"/dev/tty\"",
    ]
    .into_iter()
    .find(|w| code.contains(w))
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// The lines of a file's code (before its `#[cfg(test)] mod tests`) that reach a stream raw.
fn raw_writes(text: &str) -> Vec<(usize, &'static str)> {
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .windows(2)
        .position(|w| {
            w[0].trim_start().starts_with("#[cfg(test)]") && w[1].trim_start().starts_with("mod ")
        })
        .unwrap_or(lines.len());
    lines[..end]
        .iter()
        .enumerate()
        .filter_map(|(i, l)| raw_stream(l).map(|w| (i + 1, w)))
        .collect()
}

/// A new command cannot print outside text raw: no source of any crate writes to stdout,
/// stderr or the terminal but `terminal.rs` (and the few places named above).
#[test]
fn only_terminal_rs_writes_to_the_terminal() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for krate in ["aci", "agent", "cli"] {
        sources(&repo.join("crates").join(krate).join("src"), &mut files);
    }
    let mut bad = Vec::new();
    for file in files {
        let rel = file
            .strip_prefix(&repo)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel == "crates/cli/src/terminal.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (line, what) in raw_writes(&text) {
            if !RAW_STREAMS_ALLOWED
                .iter()
                .any(|(f, w, _)| *f == rel && *w == what)
            {
                bad.push(format!("{rel}:{line}: {what}"));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "writes to the terminal outside crates/cli/src/terminal.rs (use terminal::stdout(), \
         terminal::stderr() or errln! for a person, terminal::machine_stdout() for a program):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_stream_check_finds_what_it_looks_for() {
    let code = "fn a() {}\nprintln!(\"x\");\nlet e = std::io::stderr().lock();\n// eprintln! in a comment\n.with_writer(std::io::stderr)\neprint!(\"y\");\nlet o = terminal::stdout();\nwriteln!(terminal::machine_stdout(), \"{j}\")?;\nlet s = stdout();\nlet t = open(\"/dev/tty\");\n#[cfg(test)]\nmod tests { fn t() { eprintln!(\"ok\"); } }\n";
    let found: Vec<usize> = raw_writes(code).into_iter().map(|(l, _)| l).collect();
    assert_eq!(found, vec![2, 3, 5, 6, 9, 10]);
}
