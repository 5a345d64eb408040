//! ws_symbols: where a symbol is defined across the project — the definitions, not every line
//! that mentions the name (ws_grep's job) — best match first, each with how often the project
//! names it, from the symbol index.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};

use crate::error::{RefusalClass, ToolError};
use crate::path::Jail;
use crate::path::PathError;
use crate::registry::{Args, Effect, Kind, Param, Reply, Tool, ToolSpec};
use crate::suggest::{did_you_mean, similar_paths, Want};
use crate::symbols::find::{self, Hit, Match};
use crate::symbols::{self, index::MAX_INDEXED_BYTES};
use crate::workspace::Workspace;

/// At most this many definitions are listed.
pub const MAX_SYMBOL_HITS: usize = 50;
/// A query longer than this is not a name (a pasted file, a sentence): it is refused before
/// any name is compared with it.
pub const MAX_QUERY_CHARS: usize = 256;

pub struct SymbolsTool;

static SPEC: ToolSpec = ToolSpec {
    name: "ws_symbols",
    description: Cow::Borrowed("Where a name is defined (not every use), best match first."),
    params: &[
        Param {
            name: "query",
            kind: Kind::String,
            required: true,
            description: "name, e.g. Config.load",
            aliases: &["name", "symbol", "pattern", "q"],
        },
        Param {
            name: "kind",
            kind: Kind::String,
            required: false,
            description: "e.g. function, class",
            aliases: &["type", "symbol_kind"],
        },
        Param {
            name: "path",
            kind: Kind::String,
            required: false,
            description: "file or directory",
            aliases: &["dir", "directory", "file", "file_path", "in"],
        },
    ],
    example: "{\"query\":\"parse_config\"}",
    effect: Effect::READ_ONLY,
    passes_unknown_args: false,
    rest_hint: "Narrow with kind= (e.g. \"function\") or path= (a directory).",
};

impl Tool for SymbolsTool {
    fn spec(&self) -> &ToolSpec {
        &SPEC
    }

    fn run(&self, ws: &mut Workspace, args: &Args) -> Result<Reply, ToolError> {
        let text = args.str("query").unwrap_or_default().trim().to_string();
        if text.is_empty() {
            return Err(ToolError::refused(
                RefusalClass::Args,
                "query is empty. Send a name, e.g. {\"query\":\"parse_config\"}.".into(),
            ));
        }
        let length = text.chars().count();
        if length > MAX_QUERY_CHARS {
            let start: String = text.chars().take(40).collect();
            return Err(ToolError::refused(
                RefusalClass::Args,
                format!(
                    "query is {length} characters long; a name is at most {MAX_QUERY_CHARS}. Send one name, e.g. {{\"query\":\"parse_config\"}}; to find a piece of text, use ws_grep {{\"pattern\":\"{}\"}}.",
                    grep_pattern(&start)
                ),
            ));
        }
        let kind = kind_of(args)?;
        let under = ws.jail.parse_or_root(args.str("path"))?;
        if !under.is_root() {
            if let Err(PathError::NotFound { .. }) = ws.jail.metadata(&under) {
                let similar = similar_paths(&ws.jail, &under, Want::File);
                return Err(ToolError::refused(RefusalClass::NotFound, format!(
                    "no such file or directory: {under}.{} Leave path out to search the whole project.",
                    did_you_mean(&similar)
                )));
            }
        }
        let Workspace {
            jail,
            session,
            control,
            ..
        } = ws;
        let refreshed = session.symbols.refresh(jail, control);
        let query = find::Query {
            text: &text,
            kind,
            under: (!under.is_root()).then_some(under.as_str()),
        };
        let hits = find::find(&session.symbols, &query);
        if hits.is_empty() {
            let kind_words = kind.map_or(String::new(), |k| format!(" {k}"));
            let within = if under.is_root() {
                String::new()
            } else {
                format!(" under {under}")
            };
            return Ok(format!(
                "no{kind_words} definition matches \"{text}\"{within} ({} code files indexed; files over {} KiB, ignored by .gitignore or in other languages are not). If it is only used here, or defined in another language, search the text: ws_grep {{\"pattern\":\"{}\"}}.",
                refreshed.files,
                MAX_INDEXED_BYTES / 1024,
                grep_pattern(&text)
            )
            .into());
        }
        Ok(listing(jail, &text, &hits).into())
    }
}

/// The `kind` argument: a kind word or synonym, or none; anything else is refused with the
/// kinds there are.
fn kind_of(args: &Args) -> Result<Option<symbols::Kind>, ToolError> {
    let Some(word) = args.str("kind").map(str::trim).filter(|k| !k.is_empty()) else {
        return Ok(None);
    };
    symbols::Kind::parse(word).map(Some).ok_or_else(|| {
        let kinds: Vec<&str> = symbols::Kind::ALL
            .iter()
            .filter(|k| k.is_code())
            .map(|k| k.as_str())
            .collect();
        ToolError::refused(
            RefusalClass::Args,
            format!(
                "kind \"{word}\" is not one of: {}. Or leave kind out.",
                kinds.join(", ")
            ),
        )
    })
}

/// The hits as the model reads them: at most [`MAX_SYMBOL_HITS`], each with its signature
/// line read from its file, and a last line naming the next call.
fn listing(jail: &Jail, text: &str, hits: &[Hit]) -> String {
    let mut out = String::new();
    let Some(first) = hits.first() else {
        return out;
    };
    if first.matched > Match::ExactIgnoringCase {
        out.push_str(&format!(
            "nothing is named \"{text}\"; the closest names:\n"
        ));
    }
    let shown = &hits[..hits.len().min(MAX_SYMBOL_HITS)];
    let mut lines: HashMap<&str, BTreeSet<u32>> = HashMap::new();
    for hit in shown {
        lines
            .entry(hit.path)
            .or_default()
            .insert(hit.definition.start);
    }
    let sigs: HashMap<&str, HashMap<u32, String>> = lines
        .iter()
        .map(|(path, at)| (*path, symbols::signatures(jail, path, at)))
        .collect();
    for hit in shown {
        let d = hit.definition;
        let signature = sigs
            .get(hit.path)
            .and_then(|s| s.get(&d.start))
            .map_or(d.name.as_str(), String::as_str);
        out.push_str(&format!(
            "{}:{} {} {}  ({} {})\n",
            hit.path,
            d.start,
            d.kind,
            signature,
            hit.references,
            if hit.references == 1 { "ref" } else { "refs" }
        ));
    }
    if hits.len() > MAX_SYMBOL_HITS {
        out.push_str(&format!(
            "[{MAX_SYMBOL_HITS} of {} definitions shown, best first; narrow with kind= or path=]",
            hits.len()
        ));
    } else {
        out.push_str(&format!(
            "({} {}; read one with {})",
            hits.len(),
            if hits.len() == 1 {
                "definition"
            } else {
                "definitions"
            },
            first.definition.read_call(first.path)
        ));
    }
    out
}

/// A regex that finds the name's mentions: its last component, escaped.
fn grep_pattern(text: &str) -> String {
    let last = text
        .rsplit([':', '.', '#', '>'])
        .find(|s| !s.is_empty())
        .unwrap_or(text);
    regex::escape(last)
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
}
