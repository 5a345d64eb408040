//! What a file defines and what it names, read with tree-sitter tag queries: the outline of
//! ws_outline, the index behind ws_symbols, and the graph the repo map is ranked over. A small
//! model with an 8K context cannot read its way around a project; these give it the shape of
//! the code for a few hundred tokens, exactly (from the grammar, never a regex guess).
//!
//! - [`tags`]: one file's definitions (nested, with kind, name, lines and signature line) and
//!   references (every identifier it names, counted), from the queries in `queries/`.
//! - [`index`]: those records for every code file of the project, kept in
//!   `.slmcode/cache/symbols.idx`, refreshed per file by size and mtime, and told by the
//!   mutation path which files it changed.
//! - [`find`]: where a name is defined — exact, then prefix, then fuzzy.
//! - [`map`]: the definitions most related to a task, ranked over the definition → reference
//!   graph (personalized PageRank, as aider ranks), rendered within a token budget.

pub mod find;
pub mod index;
pub mod map;
pub mod tags;

use serde::{Deserialize, Serialize};

pub use index::SymbolIndex;

use std::collections::{BTreeSet, HashMap};

use crate::fsx;
use crate::path::Jail;
pub use tags::{extract, FileSymbols};

/// What a definition is. The words are the ones the tools print and `kind=` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Kind {
    Function,
    Method,
    Class,
    Struct,
    Enum,
    Trait,
    Impl,
    Interface,
    Type,
    Constant,
    Module,
    Macro,
    /// A key of a data file (JSON, TOML, YAML): outlined, never indexed.
    Key,
    /// A TOML table.
    Table,
}

impl Kind {
    /// Every kind, in the order `kind=` lists them.
    pub const ALL: [Kind; 14] = [
        Kind::Function,
        Kind::Method,
        Kind::Class,
        Kind::Struct,
        Kind::Enum,
        Kind::Trait,
        Kind::Impl,
        Kind::Interface,
        Kind::Type,
        Kind::Constant,
        Kind::Module,
        Kind::Macro,
        Kind::Key,
        Kind::Table,
    ];

    /// The word for this kind.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Function => "function",
            Kind::Method => "method",
            Kind::Class => "class",
            Kind::Struct => "struct",
            Kind::Enum => "enum",
            Kind::Trait => "trait",
            Kind::Impl => "impl",
            Kind::Interface => "interface",
            Kind::Type => "type",
            Kind::Constant => "constant",
            Kind::Module => "module",
            Kind::Macro => "macro",
            Kind::Key => "key",
            Kind::Table => "table",
        }
    }

    /// The kind a word names; a few common synonyms a model may send are accepted
    /// (`fn`, `func`, `def`, `const`, `namespace`…).
    pub fn parse(word: &str) -> Option<Kind> {
        let word = word.trim().to_ascii_lowercase();
        let one = |w: &str| -> Option<Kind> {
            if let Some(k) = Kind::ALL.into_iter().find(|k| k.as_str() == w) {
                return Some(k);
            }
            Some(match w {
                "fn" | "func" | "def" | "procedure" => Kind::Function,
                "constructor" => Kind::Method,
                "record" => Kind::Class,
                "union" => Kind::Struct,
                "implementation" => Kind::Impl,
                "protocol" => Kind::Interface,
                "typedef" | "alias" => Kind::Type,
                "const" | "static" => Kind::Constant,
                "mod" | "namespace" | "package" => Kind::Module,
                "define" => Kind::Macro,
                _ => return None,
            })
        };
        // A plural is a kind too: "functions", "classes".
        one(&word)
            .or_else(|| word.strip_suffix("es").and_then(one))
            .or_else(|| word.strip_suffix('s').and_then(one))
    }

    /// Whether the symbol index keeps this kind: keys and tables of data files are outlined
    /// but are not definitions a task looks for.
    pub fn is_code(self) -> bool {
        !matches!(self, Kind::Key | Kind::Table)
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One definition in a file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Definition {
    pub kind: Kind,
    pub name: String,
    /// 1-based first and last line of the item itself (attributes, decorators and doc
    /// comments before it are not part of it).
    pub start: u32,
    pub end: u32,
    /// How many definitions enclose this one (0: top level).
    pub depth: u16,
    /// The source line the definition starts on, trimmed and cut at [`SIGNATURE_CHARS`].
    /// Empty in the index, which would otherwise hold a copy of every such line of the
    /// project: [`signatures`] reads them from the file when they are shown.
    pub signature: String,
}

impl Definition {
    /// The `ws_read` arguments that show exactly this definition.
    pub fn read_call(&self, path: &str) -> String {
        format!(
            "ws_read {{\"path\":\"{path}\",\"offset\":{},\"limit\":{}}}",
            self.start,
            self.end.saturating_sub(self.start) + 1
        )
    }

    /// `kind name start-end`, indented by depth: the outline without signatures, as the
    /// symbol corpus writes its expectations.
    pub fn brief(&self) -> String {
        format!(
            "{}{} {} {}-{}",
            "  ".repeat(usize::from(self.depth)),
            self.kind,
            self.name,
            self.start,
            self.end
        )
    }

    /// The outline line: `%6d|` and the signature, indented by depth, then what it is. Past
    /// [`SHOWN_DEPTH`] levels the indentation stops growing and a `…` says the line is deeper,
    /// so a line's length never depends on how deep the file nests; a name is cut like a
    /// signature.
    pub fn outline_line(&self, depth: u16) -> String {
        let depth = usize::from(depth);
        let deeper = if depth > SHOWN_DEPTH { "… " } else { "" };
        let name = if self.name.char_indices().nth(SIGNATURE_CHARS).is_some() {
            tags::signature_of_line(&self.name)
        } else {
            self.name.clone()
        };
        format!(
            "{:>6}|{}{deeper}{}  [{} {name} {}-{}]",
            self.start,
            "  ".repeat(depth.min(SHOWN_DEPTH)),
            self.signature,
            self.kind,
            self.start,
            self.end
        )
    }
}

/// How many levels of nesting an outline line's indentation shows.
pub const SHOWN_DEPTH: usize = 32;

/// Signatures longer than this are cut (with "…"): a minified line must not fill a result.
pub const SIGNATURE_CHARS: usize = 120;

/// The signatures of the definitions starting on `lines` of an indexed file, read from the
/// file as it is now (the index was refreshed just before). A file that cannot be read gives
/// none; the caller shows the definition without one.
pub fn signatures(jail: &Jail, path: &str, lines: &BTreeSet<u32>) -> HashMap<u32, String> {
    let Some(bytes) = jail
        .parse(path)
        .ok()
        .and_then(|rel| fsx::read_all(jail, &rel).ok())
    else {
        return HashMap::new();
    };
    let text = String::from_utf8_lossy(&bytes);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut out = HashMap::new();
    let Some(&last) = lines.last() else {
        return out;
    };
    for (n, line) in (1u32..).zip(text.lines()) {
        if n > last {
            break;
        }
        if lines.contains(&n) {
            out.insert(n, tags::signature_of_line(line));
        }
    }
    out
}
