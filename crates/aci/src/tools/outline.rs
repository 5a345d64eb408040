//! ws_outline: what a file defines, nested as in the code, each with its line range, so the
//! next call is a `ws_read` of exactly the part that matters; for a directory, each file's
//! top-level definitions from the symbol index.

use std::borrow::Cow;

use crate::error::{RefusalClass, ToolError};
use crate::fsx;
use crate::lang;
use crate::path::{PathError, RelPath};
use crate::registry::{Args, Effect, Kind, Param, Reply, Tool, ToolSpec, ANY_PATH_ALIASES};
use crate::suggest::{did_you_mean, similar_paths, Want};
use crate::symbols;
use crate::syntax::Unparsed;
use crate::workspace::Workspace;

pub struct OutlineTool;

static SPEC: ToolSpec = ToolSpec {
    name: "ws_outline",
    description: Cow::Borrowed(
        "A file's functions, classes… with line ranges; or a directory's files.",
    ),
    params: &[Param {
        name: "path",
        kind: Kind::String,
        required: false,
        description: "file or directory (default: the root)",
        aliases: ANY_PATH_ALIASES,
    }],
    example: "{\"path\":\"src/main.rs\"}",
    effect: Effect::READ_ONLY,
    passes_unknown_args: false,
    rest_hint: "Outline one file or a subdirectory with ws_outline {\"path\":…}.",
};

/// The languages an outline reads, for the refusal of any other file.
const LANGUAGES: &str =
    "rust, python, go, javascript, typescript, c, c++, java, bash, json, toml and yaml";

impl Tool for OutlineTool {
    fn spec(&self) -> &ToolSpec {
        &SPEC
    }

    fn run(&self, ws: &mut Workspace, args: &Args) -> Result<Reply, ToolError> {
        let path = ws.jail.parse_or_root(args.str("path"))?;
        match ws.jail.metadata(&path) {
            Ok(meta) if meta.is_dir() => Ok(directory(ws, &path).into()),
            Ok(_) => file(ws, &path).map(Reply::from),
            Err(PathError::NotFound { .. }) => {
                let similar = similar_paths(&ws.jail, &path, Want::File);
                Err(ToolError::refused(RefusalClass::NotFound, format!(
                    "no such file or directory: {path}.{} Find it with ws_glob {{\"pattern\":\"**/{}\"}}, or outline the directory with ws_outline {{\"path\":\"{}\"}}.",
                    did_you_mean(&similar),
                    path.file_name(),
                    path.parent()
                )))
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// One file's outline, every definition at its depth.
fn file(ws: &Workspace, path: &RelPath) -> Result<String, ToolError> {
    if lang::grammar_for(path.as_str()).is_none() {
        let key = lang::key_of(path.as_str());
        let what = if key == lang::OTHER {
            "this file type".to_string()
        } else {
            format!("{key} files")
        };
        return Err(ToolError::refused(RefusalClass::Other, format!(
            "ws_outline has no grammar for {what} ({path}); it reads {LANGUAGES}. Search the file with ws_grep {{\"pattern\":\"…\",\"path\":\"{path}\"}} or read it with ws_read {{\"path\":\"{path}\"}}."
        )));
    }
    let bytes = fsx::read_all(&ws.jail, path)?;
    let found = match symbols::extract(path, &bytes) {
        Ok(found) => found,
        Err(Unparsed::Skipped(skip)) => {
            return Err(ToolError::refused(RefusalClass::Other, format!(
                "ws_outline cannot outline {path}: {}. Read it in parts with ws_read {{\"path\":\"{path}\",\"offset\":1,\"limit\":120}}, or search it with ws_grep {{\"pattern\":\"…\",\"path\":\"{path}\"}}.",
                skip.why()
            )))
        }
        Err(Unparsed::NotText | Unparsed::NoGrammar) => {
            return Err(ToolError::refused(RefusalClass::Other, format!(
                "{path} is not UTF-8 text, so it has no outline. Search it with ws_grep {{\"pattern\":\"…\",\"path\":\"{path}\"}}."
            )))
        }
    };
    let defs = &found.definitions;
    let head = format!(
        "{path} ({}, {} lines, {} symbols)",
        found.language,
        found.lines,
        defs.len()
    );
    let Some(first) = defs.first() else {
        return Ok(format!(
            "{head}: no functions, classes or other definitions. Read it with ws_read {{\"path\":\"{path}\"}}."
        ));
    };
    let last = format!("(read one with {})", first.read_call(path.as_str()));
    // Room for the definitions: the cap's, less the first and last lines and a note.
    let room = ws
        .config
        .max_tool_chars
        .saturating_sub(head.chars().count() + last.chars().count() + 240);
    Ok(render(path, &head, defs, room, &last))
}

/// The outline's lines within `room` characters: all of them when they fit, else the first
/// ones and the last ones around a line naming what was left out and the read that shows it.
/// Only what is shown is ever built, so a file of a hundred thousand nested definitions costs
/// no more memory than one of ten.
fn render(
    path: &RelPath,
    head: &str,
    defs: &[symbols::Definition],
    room: usize,
    last: &str,
) -> String {
    let widths: Vec<usize> = defs
        .iter()
        .map(|d| d.outline_line(d.depth).chars().count() + 1)
        .collect();
    let total: usize = widths.iter().sum();
    let mut out = String::from(head);
    let push = |out: &mut String, d: &symbols::Definition| {
        out.push('\n');
        out.push_str(&d.outline_line(d.depth));
    };
    if total <= room {
        for d in defs {
            push(&mut out, d);
        }
    } else {
        let fits = |budget: usize, widths: &mut dyn Iterator<Item = &usize>| {
            let mut used = 0;
            widths
                .take_while(|w| {
                    used += **w;
                    used <= budget
                })
                .count()
        };
        let shown_head = fits(room * 3 / 4, &mut widths.iter()).max(1);
        let shown_tail =
            fits(room / 4, &mut widths.iter().rev()).min(defs.len().saturating_sub(shown_head));
        let tail_from = defs.len() - shown_tail;
        for d in &defs[..shown_head] {
            push(&mut out, d);
        }
        if let (Some(a), Some(b)) = (defs.get(shown_head), defs.get(tail_from.saturating_sub(1))) {
            let (from, to) = (a.start, b.end.max(a.start));
            out.push_str(&format!(
                "\n[… {} definitions not shown, lines {from}-{to}; read them with ws_read {{\"path\":\"{path}\",\"offset\":{from},\"limit\":120}} …]",
                tail_from - shown_head
            ));
        }
        for d in &defs[tail_from..] {
            push(&mut out, d);
        }
    }
    out.push('\n');
    out.push_str(last);
    out
}

/// Each indexed file's top-level definitions, files in walk order, within the result cap:
/// past it, the files left out are counted and a narrower call is named.
fn directory(ws: &mut Workspace, dir: &RelPath) -> String {
    let Workspace {
        jail,
        session,
        control,
        config,
        ..
    } = ws;
    session.symbols.refresh(jail, control);
    let prefix = if dir.is_root() {
        String::new()
    } else {
        format!("{dir}/")
    };
    let mut files: Vec<(&str, &symbols::index::Entry)> = session
        .symbols
        .files()
        .filter(|(p, e)| p.starts_with(&prefix) && e.definitions.iter().any(|d| d.depth == 0))
        .collect();
    // Walk order: a directory's entries by name, a subdirectory's files before the next name.
    files.sort_by(|a, b| a.0.split('/').cmp(b.0.split('/')));
    let shown_dir = if dir.is_root() {
        "the project"
    } else {
        dir.as_str()
    };
    if files.is_empty() {
        return format!(
            "no definitions in {shown_dir}: no {LANGUAGES} code files outside .gitignore. List it with ws_list {{\"path\":\"{dir}\"}}."
        );
    }
    // Room for the last line, which names the next call.
    let room = config.max_tool_chars.saturating_sub(240);
    let mut out = String::new();
    let mut shown = 0;
    for (path, entry) in &files {
        let mut block = format!("{path} ({}, {} lines)", entry.language, entry.lines);
        let top: Vec<&symbols::Definition> =
            entry.definitions.iter().filter(|d| d.depth == 0).collect();
        let sigs = symbols::signatures(jail, path, &top.iter().map(|d| d.start).collect());
        for d in top {
            let shown = symbols::Definition {
                signature: sigs.get(&d.start).cloned().unwrap_or_default(),
                ..d.clone()
            };
            block.push('\n');
            block.push_str(&shown.outline_line(0));
        }
        if !out.is_empty() && out.chars().count() + block.chars().count() + 1 > room {
            break;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&block);
        shown += 1;
    }
    if shown < files.len() {
        let next = files
            .get(shown)
            .map_or(dir.to_string(), |(p, _)| parent_of(p));
        out.push_str(&format!(
            "\n[{shown} of {} files shown; outline a subdirectory, e.g. ws_outline {{\"path\":\"{next}\"}}, or one file]",
            files.len()
        ));
    } else {
        let first = files.first().map_or("", |(p, _)| *p);
        out.push_str(&format!(
            "\n({} files; see a file's methods and nested items with ws_outline {{\"path\":\"{first}\"}})",
            files.len()
        ));
    }
    out
}

fn parent_of(path: &str) -> String {
    path.rsplit_once('/').map_or(".", |(p, _)| p).to_string()
}
