//! `slmcode session`: JSON Lines in, JSON Lines out, one workspace for the whole stream. This
//! is how scripts, replays and benchmarks drive the tools with session state intact.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{json, Value};
use slmcode_aci::{Registry, Workspace};

use super::common::{open_workspace, registry};
use crate::terminal;

/// The arguments of `slmcode session`.
#[derive(clap::Args)]
pub struct SessionArgs {
    /// Project root (default: the current directory).
    #[arg(long)]
    root: Option<PathBuf>,
    /// Offer the specialist set too (mcp_call, with the user's MCP servers).
    #[arg(long)]
    specialist: bool,
}

/// `slmcode session`: stdin to stdout, until stdin ends.
pub fn run(args: SessionArgs) -> anyhow::Result<ExitCode> {
    let mut ws = open_workspace(args.root)?;
    let registry = registry(args.specialist, &mut ws)?;
    answer(
        &registry,
        &mut ws,
        std::io::stdin().lock(),
        terminal::machine_stdout(),
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Answers every line of `input` on `output`. A malformed line gets an error line and the
/// session goes on; only an I/O failure on the streams ends it.
fn answer(
    registry: &Registry,
    ws: &mut Workspace,
    mut input: impl BufRead,
    mut output: impl Write,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut number = 0usize;
    loop {
        buf.clear();
        if input.read_until(b'\n', &mut buf)? == 0 {
            return Ok(());
        }
        number += 1;
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let reply = match parse_line(line) {
            Ok(Line::Task(id)) => {
                ws.session.start_task();
                json!({"task": id, "is_error": false, "text": format!("(task {id} started: the loop guard's history is reset)")})
            }
            Ok(Line::Call(tool, args)) => {
                let result = registry.call(ws, &tool, &args);
                json!({"tool": tool, "is_error": result.is_error, "text": result.text})
            }
            Err(why) => json!({
                "tool": Value::Null,
                "is_error": true,
                "text": format!("line {number}: {why}. Send one JSON object a line: {{\"tool\": \"ws_read\", \"args\": {{\"path\": \"src/main.rs\"}}}}"),
            }),
        };
        serde_json::to_writer(&mut output, &reply)?;
        output.write_all(b"\n")?;
        output.flush()?;
    }
}

/// One input line: a tool call, or the start of a new task.
#[derive(Debug, PartialEq)]
enum Line {
    Call(String, Value),
    /// `{"task": "ID"}`: later calls belong to a new task (its own loop-guard history).
    Task(String),
}

/// Splits a line into the tool name and its arguments (`args`, or `arguments` as an alias),
/// or reads a task marker.
fn parse_line(line: &str) -> Result<Line, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not valid JSON ({e})"))?;
    let Value::Object(mut object) = value else {
        return Err("not a JSON object".to_string());
    };
    if !object.contains_key("tool") && !object.contains_key("name") {
        if let Some(task) = object.remove("task") {
            return match task {
                Value::String(id) => Ok(Line::Task(id)),
                Value::Number(n) => Ok(Line::Task(n.to_string())),
                _ => Err("\"task\" must be a string".to_string()),
            };
        }
    }
    let tool = match object.remove("tool").or_else(|| object.remove("name")) {
        Some(Value::String(t)) => t,
        Some(_) => return Err("\"tool\" must be a string".to_string()),
        None => return Err("missing \"tool\"".to_string()),
    };
    let args = object
        .remove("args")
        .or_else(|| object.remove("arguments"))
        .unwrap_or(Value::Null);
    Ok(Line::Call(tool, args))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_take_tool_and_args_or_their_aliases() {
        let Line::Call(t, a) = parse_line(r#"{"tool":"ws_read","args":{"path":"a"}}"#).unwrap()
        else {
            panic!("a call");
        };
        assert_eq!((t.as_str(), a["path"].as_str()), ("ws_read", Some("a")));
        let Line::Call(t, a) = parse_line(r#"{"name":"ws_list","arguments":{}}"#).unwrap() else {
            panic!("a call");
        };
        assert_eq!(t, "ws_list");
        assert!(a.is_object());
        assert_eq!(
            parse_line(r#"{"tool":"git_status"}"#).unwrap(),
            Line::Call("git_status".into(), Value::Null)
        );
        assert_eq!(
            parse_line(r#"{"task":"t2"}"#).unwrap(),
            Line::Task("t2".into())
        );
    }

    #[test]
    fn malformed_lines_say_what_is_wrong() {
        assert!(parse_line("{").unwrap_err().starts_with("not valid JSON"));
        assert_eq!(parse_line("3").unwrap_err(), "not a JSON object");
        assert_eq!(parse_line("{}").unwrap_err(), "missing \"tool\"");
        assert_eq!(
            parse_line(r#"{"tool":1}"#).unwrap_err(),
            "\"tool\" must be a string"
        );
    }
}
