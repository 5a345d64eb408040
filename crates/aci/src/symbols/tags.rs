//! One file's definitions and references, read with a tag query per grammar (`queries/*.scm`,
//! written in the `tags.scm` convention: `@definition.<kind>` is the item, `@name` its name).
//! The grammars' own `tags.scm` files are too coarse for an outline (a Rust struct, enum and
//! type alias are all "class" there, impl blocks are missing), so ours keep their form but say
//! what each item is.
//!
//! The parse and the query run in the parser process when the binary has one
//! ([`crate::syntax::process`]): [`extract`] asks it, and it answers with [`extract_encoded`].

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use tree_sitter::{Node, Query, QueryCursor, QueryCursorOptions, StreamingIterator, Tree};

use super::{Definition, Kind, SIGNATURE_CHARS};
use crate::lang::Grammar;
use crate::path::RelPath;
use crate::syntax::process::{self, Failed, Reply, Request};
use crate::syntax::{self, Deadline, Unparsed};

/// What one file defines and names.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSymbols {
    /// The grammar's name, e.g. "rust", "tsx", "c++".
    pub language: String,
    /// Lines in the file.
    pub lines: u32,
    /// In source order; a definition's `depth` says how many of those before it enclose it.
    pub definitions: Vec<Definition>,
    /// Every identifier the file names (outside the names of its own definitions), with how
    /// many times, sorted by name.
    pub references: Vec<(String, u32)>,
}

/// Reads `bytes` as the language of `path`: in the parser process when there is one, else
/// here. Why not, when no grammar covers the file, it is not UTF-8 text, or the guard or the
/// parser gave no answer.
pub fn extract(path: &RelPath, bytes: &[u8]) -> Result<FileSymbols, Unparsed> {
    let request = Request::Extract {
        path: path.to_string(),
    };
    match process::call(path.as_str(), &request, &[bytes]) {
        Ok((Reply::Extracted, encoded)) => {
            postcard::from_bytes(&encoded).unwrap_or_else(|_| extract_here(path, bytes))
        }
        Err(Failed::Skipped(skip)) => Err(Unparsed::Skipped(skip)),
        Ok(_) | Err(Failed::Unavailable) => extract_here(path, bytes),
    }
}

/// [`extract`] in this process, encoded: the parser process's answer.
pub fn extract_encoded(path: &RelPath, bytes: &[u8]) -> Vec<u8> {
    postcard::to_stdvec(&extract_here(path, bytes)).unwrap_or_default()
}

/// [`extract`], in this process.
fn extract_here(path: &RelPath, bytes: &[u8]) -> Result<FileSymbols, Unparsed> {
    let (grammar, tree, text) = syntax::parse_whole(path, bytes)?;
    read_tree(grammar, &tree, text)
}

/// Whether files of this grammar hold code (indexed) rather than data (outlined only).
pub fn is_code(grammar: Grammar) -> bool {
    !matches!(grammar, Grammar::Json | Grammar::Toml | Grammar::Yaml)
}

fn read_tree(grammar: Grammar, tree: &Tree, text: &str) -> Result<FileSymbols, Unparsed> {
    let root = tree.root_node();
    let lines = u32::try_from(text.lines().count()).unwrap_or(u32::MAX);
    let Some(query) = query(grammar) else {
        return Ok(FileSymbols {
            language: grammar.name().to_string(),
            lines,
            ..FileSymbols::default()
        });
    };
    let deadline = Deadline::start();
    let found = definitions(query, root, text, grammar, &deadline)?;
    let name_starts: std::collections::HashSet<usize> =
        found.iter().filter_map(|f| f.name_at).collect();
    let references = if is_code(grammar) {
        references(root, text, &name_starts, &deadline)?
    } else {
        Vec::new()
    };
    Ok(FileSymbols {
        language: grammar.name().to_string(),
        lines,
        definitions: nest(found, text),
        references,
    })
}

/// The compiled query of a grammar, once per process and only for the grammars used (some
/// take tens of milliseconds to compile). A query that does not compile against its grammar
/// (a grammar upgrade renamed a node) gives no definitions rather than a panic; a unit test
/// compiles every one.
fn query(grammar: Grammar) -> Option<&'static Query> {
    static QUERIES: [OnceLock<Option<Query>>; Grammar::ALL.len()] =
        [const { OnceLock::new() }; Grammar::ALL.len()];
    let slot = QUERIES.get(Grammar::ALL.iter().position(|&g| g == grammar)?)?;
    slot.get_or_init(|| Query::new(&grammar.language(), source(grammar)).ok())
        .as_ref()
}

fn source(grammar: Grammar) -> &'static str {
    match grammar {
        Grammar::Rust => include_str!("queries/rust.scm"),
        Grammar::Python => include_str!("queries/python.scm"),
        Grammar::Go => include_str!("queries/go.scm"),
        Grammar::JavaScript => include_str!("queries/javascript.scm"),
        Grammar::TypeScript | Grammar::Tsx => include_str!("queries/typescript.scm"),
        Grammar::Json => include_str!("queries/json.scm"),
        Grammar::Toml => include_str!("queries/toml.scm"),
        Grammar::Yaml => include_str!("queries/yaml.scm"),
        Grammar::C => include_str!("queries/c.scm"),
        Grammar::Cpp => include_str!("queries/cpp.scm"),
        Grammar::Java => include_str!("queries/java.scm"),
        Grammar::Bash => include_str!("queries/bash.scm"),
    }
}

/// A definition as the query found it, before nesting.
struct Found {
    kind: Kind,
    name: String,
    /// Where the name token starts, so it is not also counted as a reference.
    name_at: Option<usize>,
    start_byte: usize,
    end_byte: usize,
    start: u32,
    end: u32,
}

/// The definitions the query captures. When several patterns capture one item the earliest
/// pattern wins (the queries list the specific before the general: a method before a
/// function); one pattern may name several items at once (`const a, b = 1, 2`).
fn definitions(
    query: &Query,
    root: Node,
    text: &str,
    grammar: Grammar,
    deadline: &Deadline,
) -> Result<Vec<Found>, Unparsed> {
    let names = query.capture_names();
    let mut best: HashMap<usize, (usize, Vec<Found>)> = HashMap::new();
    let mut cursor = QueryCursor::new();
    let mut stop = |_: &tree_sitter::QueryCursorState| {
        if deadline.passed() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let options = QueryCursorOptions::new().progress_callback(&mut stop);
    let mut matches = cursor.matches_with_options(query, root, text.as_bytes(), options);
    while let Some(m) = matches.next() {
        let mut item = None;
        let mut name_node = None;
        for capture in m.captures() {
            let capture_name = names.get(capture.index as usize).copied().unwrap_or("");
            if capture_name == "name" {
                name_node = Some(capture.node);
            } else if let Some(kind) = capture_name
                .strip_prefix("definition.")
                .and_then(Kind::parse)
            {
                item = Some((kind, capture.node));
            }
        }
        let Some((kind, node)) = item else { continue };
        let name_node = name_node.or_else(|| declarator_name(node, grammar));
        let Some(name) = name_node
            .and_then(|n| text.get(n.byte_range()))
            .map(clean_name)
            .filter(|n| !n.is_empty())
        else {
            continue;
        };
        let begins = item_start(node);
        let found = Found {
            kind,
            name,
            name_at: name_node.map(|n| n.start_byte()),
            start_byte: begins.start_byte(),
            end_byte: node.end_byte(),
            start: line_of(begins.start_position().row),
            end: last_line(node, text),
        };
        let slot = best
            .entry(node.id())
            .or_insert((m.pattern_index, Vec::new()));
        if m.pattern_index < slot.0 {
            *slot = (m.pattern_index, vec![found]);
        } else if m.pattern_index == slot.0 && !slot.1.iter().any(|f| f.name == found.name) {
            slot.1.push(found);
        }
    }
    let mut all: Vec<Found> = best.into_values().flat_map(|(_, f)| f).collect();
    all.sort_by(|a, b| {
        (a.start_byte, std::cmp::Reverse(a.end_byte), a.name_at).cmp(&(
            b.start_byte,
            std::cmp::Reverse(b.end_byte),
            b.name_at,
        ))
    });
    if deadline.passed() {
        return Err(Unparsed::Skipped(Deadline::skip()));
    }
    Ok(all)
}

/// Where an item itself begins: past the annotations, attributes, decorators and comments
/// some grammars put inside the item's node (Java's `@Override` in its modifiers, C++'s
/// `[[nodiscard]]`, a TypeScript class's decorators). Those are not part of the range.
fn item_start(node: Node) -> Node {
    const PREAMBLE: &[&str] = &[
        "annotation",
        "marker_annotation",
        "decorator",
        "attribute_declaration",
        "attribute_specifier",
        "attribute_item",
        "comment",
        "line_comment",
        "block_comment",
    ];
    fn first_own(node: Node) -> Option<Node> {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        children.into_iter().find_map(|c| {
            if PREAMBLE.contains(&c.kind()) {
                None
            } else if c.kind() == "modifiers" {
                first_own(c)
            } else {
                Some(c)
            }
        })
    }
    first_own(node).unwrap_or(node)
}

/// The name of a C or C++ item whose name sits at the bottom of a chain of declarators
/// (`int *(*f)(void)`, `Foo::bar`, `~Foo`, `operator==`), or of a typedef.
fn declarator_name(item: Node, grammar: Grammar) -> Option<Node> {
    if !matches!(grammar, Grammar::C | Grammar::Cpp) {
        return None;
    }
    let mut node = item.child_by_field_name("declarator")?;
    for _ in 0..32 {
        match node.kind() {
            "identifier" | "field_identifier" | "type_identifier" | "destructor_name"
            | "operator_name" | "primitive_type" => return Some(node),
            "qualified_identifier" | "template_function" | "template_method" => {
                node = node.child_by_field_name("name")?;
            }
            _ => {
                node = match node.child_by_field_name("declarator") {
                    Some(inner) => inner,
                    None => first_named_child(node)?,
                };
            }
        }
    }
    None
}

fn first_named_child(node: Node) -> Option<Node> {
    let mut cursor = node.walk();
    let child = node.named_children(&mut cursor).next();
    child
}

/// A name as the tools show it: without the quotes of a quoted key.
fn clean_name(raw: &str) -> String {
    let t = raw.trim();
    let unquoted = ['"', '\'', '`']
        .iter()
        .find_map(|q| t.strip_prefix(*q).and_then(|r| r.strip_suffix(*q)));
    unquoted.unwrap_or(t).trim().to_string()
}

fn line_of(row: usize) -> u32 {
    u32::try_from(row + 1).unwrap_or(u32::MAX)
}

/// The last line of a node holding more than white space (a TOML table's node runs on to
/// the next table, over the blank lines between).
fn last_line(node: Node, text: &str) -> u32 {
    let body = text.get(node.byte_range()).unwrap_or_default();
    let trailing = &body[body.trim_end().len()..];
    let blank_lines = trailing.bytes().filter(|&b| b == b'\n').count();
    let row = node
        .end_position()
        .row
        .saturating_sub(blank_lines)
        .max(node.start_position().row);
    line_of(row)
}

/// Gives each definition its depth (how many earlier ones enclose it) and its signature.
fn nest(found: Vec<Found>, text: &str) -> Vec<Definition> {
    let lines = LineIndex::new(text);
    let mut open: Vec<usize> = Vec::new(); // end bytes of the enclosing definitions
    let mut out = Vec::with_capacity(found.len());
    for f in found {
        while open.last().is_some_and(|&end| f.start_byte >= end) {
            open.pop();
        }
        // Two items sharing a range (a Go const group's names) are siblings, not nested.
        let depth = u16::try_from(open.len()).unwrap_or(u16::MAX);
        out.push(Definition {
            kind: f.kind,
            name: f.name,
            start: f.start,
            end: f.end,
            depth,
            signature: signature_of_line(lines.line_at(text, f.start_byte)),
        });
        open.push(f.end_byte);
    }
    out
}

/// Where each line of a text starts, so the line holding a byte is found in O(log n): a
/// minified file is one line holding every definition.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        LineIndex { starts }
    }

    /// The line holding byte `at`, without its line ending.
    fn line_at<'t>(&self, text: &'t str, at: usize) -> &'t str {
        let i = self.starts.partition_point(|&s| s <= at).saturating_sub(1);
        let begin = self.starts.get(i).copied().unwrap_or(0);
        let end = self
            .starts
            .get(i + 1)
            .map_or(text.len(), |next| next.saturating_sub(1));
        text.get(begin..end).unwrap_or_default()
    }
}

/// A source line as a signature: trimmed, and cut at [`SIGNATURE_CHARS`] with "…". Only the
/// characters kept are counted, so a line of a megabyte costs what a short one does.
pub fn signature_of_line(line: &str) -> String {
    let line = line.trim();
    if line.char_indices().nth(SIGNATURE_CHARS).is_none() {
        return line.to_string();
    }
    let cut: String = line.chars().take(SIGNATURE_CHARS - 1).collect();
    format!("{}…", cut.trim_end())
}

/// Every identifier token of the file, counted by name, except the names of its own
/// definitions. Comments and strings hold no identifier tokens; in bash a command's name is
/// a word under `command_name`. The walk keeps the kinds of the nodes above it, so asking
/// for a parent costs nothing however deep the tree.
fn references(
    root: Node,
    text: &str,
    definition_names: &std::collections::HashSet<usize>,
    deadline: &Deadline,
) -> Result<Vec<(String, u32)>, Unparsed> {
    let mut counts: HashMap<&str, u32> = HashMap::new();
    let mut cursor = root.walk();
    let mut above: Vec<&str> = Vec::new();
    let mut visited = 0usize;
    'walk: loop {
        let node = cursor.node();
        visited += 1;
        if visited.is_multiple_of(4096) && deadline.passed() {
            return Err(Unparsed::Skipped(Deadline::skip()));
        }
        if cursor.goto_first_child() {
            above.push(node.kind());
            continue;
        }
        let is_name = node.is_named()
            && (node.kind().contains("identifier")
                || (node.kind() == "word" && above.last() == Some(&"command_name")));
        if is_name && !definition_names.contains(&node.start_byte()) {
            if let Some(name) = text.get(node.byte_range()).filter(|n| !n.is_empty()) {
                *counts.entry(name).or_default() += 1;
            }
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
            above.pop();
        }
    }
    let mut refs: Vec<(String, u32)> = counts
        .into_iter()
        .map(|(n, c)| (n.to_string(), c))
        .collect();
    refs.sort();
    Ok(refs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn outline(path: &str, text: &str) -> Vec<String> {
        let rel = RelPath::parse(path, Path::new("/p")).unwrap();
        extract(&rel, text.as_bytes())
            .unwrap()
            .definitions
            .iter()
            .map(Definition::brief)
            .collect()
    }

    #[test]
    fn every_query_compiles_against_its_grammar() {
        for g in Grammar::ALL {
            if let Err(e) = Query::new(&g.language(), source(g)) {
                panic!("{}: {e}", g.name());
            }
        }
    }

    #[test]
    fn rust_items_nest_and_methods_are_told_from_functions() {
        let text = "#[derive(Debug)]\npub struct Config {\n    a: u8,\n}\n\nimpl<T> Display for Wrapper<T> {\n    fn fmt(&self) {}\n}\n\nmod inner {\n    pub fn free() {}\n    const MAX: usize = 3;\n}\n";
        assert_eq!(
            outline("a.rs", text),
            [
                "struct Config 2-4",
                "impl Wrapper 6-8",
                "  method fmt 7-7",
                "module inner 10-13",
                "  function free 11-11",
                "  constant MAX 12-12",
            ]
        );
    }

    #[test]
    fn c_names_come_from_the_declarator_chain() {
        let text = "static int *make(void) { return 0; }\nint count(int a);\ntypedef struct node { int v; } node_t;\n#define MAX 3\n#define SQ(x) ((x)*(x))\n";
        assert_eq!(
            outline("a.c", text),
            [
                "function make 1-1",
                "function count 2-2",
                "type node_t 3-3",
                "  struct node 3-3",
                "constant MAX 4-4",
                "macro SQ 5-5",
            ]
        );
    }

    #[test]
    fn references_skip_definition_names_comments_and_strings() {
        let rel = RelPath::parse("a.py", Path::new("/p")).unwrap();
        let text = "def parse(x):\n    return x\n\n# parse here\nprint(parse(\"parse\"))\n";
        let s = extract(&rel, text.as_bytes()).unwrap();
        let count = |n: &str| s.references.iter().find(|(r, _)| r == n).map(|(_, c)| *c);
        assert_eq!(count("parse"), Some(1));
        assert_eq!(count("x"), Some(2));
        assert_eq!(count("print"), Some(1));
    }

    #[test]
    fn data_files_have_keys_and_no_references() {
        let rel = RelPath::parse("Cargo.toml", Path::new("/p")).unwrap();
        let s = extract(&rel, b"[package]\nname = \"x\"\n\n[[bin]]\nname = \"y\"\n").unwrap();
        assert!(s.references.is_empty());
        assert_eq!(
            outline(
                "Cargo.toml",
                "[package]\nname = \"x\"\n\n[[bin]]\nname = \"y\"\n"
            ),
            [
                "table package 1-2",
                "  key name 2-2",
                "table bin 4-5",
                "  key name 5-5"
            ]
        );
    }

    #[test]
    fn long_signatures_are_cut() {
        let long = format!("fn f() {{ let s = \"{}\"; }}\n", "x".repeat(300));
        let rel = RelPath::parse("a.rs", Path::new("/p")).unwrap();
        let s = extract(&rel, long.as_bytes()).unwrap();
        assert_eq!(s.definitions[0].signature.chars().count(), SIGNATURE_CHARS);
        assert!(s.definitions[0].signature.ends_with('…'));
    }
}
