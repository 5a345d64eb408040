//! Post-edit syntax checks with tree-sitter: no gofmt, python or node to shell out to,
//! TypeScript included, and fast enough to sit inside every write. Which grammar parses a
//! file is [`crate::lang`]'s table; a file without one is skipped, never read as broken.
//!
//! Every parse of the crate goes through here ([`parse_whole`] for the outline and the symbol
//! index, [`TreeCache`] for the checks), and so through the two things that keep a file from
//! ending slmcode: the guard ([`guard`]: what may go into the parser at all) and, in the
//! binary, the parser process ([`process`]: where the C code runs). A file either of them
//! keeps from an answer is [`Verdict::Skipped`], with the reason in words.

pub mod guard;
pub mod process;

use std::collections::HashMap;
use std::io::Read;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tree_sitter::{InputEdit, Language, Node, ParseOptions, Parser, Point, Tree};

pub use guard::Skip;
use process::{Failed, Reply, Request};

use crate::lang;
use crate::path::{Jail, RelPath};

/// Files larger than this are not parsed ahead of time.
const PREPARE_MAX_BYTES: u64 = 8 * 1024 * 1024;
/// How many parse trees a session keeps.
const CACHE_ENTRIES: usize = 64;
/// A parse (or a query over its tree) that runs longer than this is given up: the guard's
/// limits keep real files far below it, so it only ends what the guard did not foresee.
pub const PARSE_DEADLINE: Duration = Duration::from_secs(10);

/// A parse failure, located.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyntaxError {
    /// The grammar that was used, e.g. "rust".
    pub language: String,
    /// 1-based line and column.
    pub line: usize,
    pub column: usize,
    /// What went wrong: "unexpected `}`" or "missing `)`".
    pub what: String,
    /// The offending line, as it is in the file.
    pub source_line: String,
}

impl SyntaxError {
    /// `path:line:col: what` followed by the offending line.
    pub fn describe(&self, path: &RelPath) -> String {
        format!(
            "{}:{}:{}: {}\n    {}| {}",
            path,
            self.line,
            self.column,
            self.what,
            self.line,
            self.source_line.trim_end()
        )
    }
}

/// The outcome of a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    Parses,
    Broken(SyntaxError),
    /// No grammar for this file type (or not UTF-8 text): nothing is claimed.
    Unchecked,
    /// A grammar covers it, but it was not parsed, or the parse gave no answer: why.
    Skipped(Skip),
}

/// Why a file has no tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unparsed {
    /// No grammar covers the file.
    NoGrammar,
    /// Not UTF-8 text.
    NotText,
    /// The guard kept it from the parser, or the parse gave no answer.
    Skipped(Skip),
}

impl From<Skip> for Unparsed {
    fn from(skip: Skip) -> Unparsed {
        Unparsed::Skipped(skip)
    }
}

/// The grammar for a path, from the language table ([`crate::lang`]): its name in syntax
/// errors, and the tree-sitter language.
pub fn language_for(path: &RelPath) -> Option<(&'static str, Language)> {
    let grammar = lang::grammar_for(path.as_str())?;
    Some((grammar.name(), grammar.language()))
}

/// Parses `bytes` as the language of `path`, from scratch.
pub fn check(path: &RelPath, bytes: &[u8]) -> Verdict {
    let request = Request::Check {
        path: path.to_string(),
        before: false,
    };
    match process::call(path.as_str(), &request, &[bytes]) {
        Ok((Reply::Checked { after, .. }, _)) => after,
        Err(Failed::Skipped(skip)) => Verdict::Skipped(skip),
        Ok(_) | Err(Failed::Unavailable) => check_here(path, bytes),
    }
}

/// [`check`], in this process.
fn check_here(path: &RelPath, bytes: &[u8]) -> Verdict {
    match parse(path, bytes, None) {
        Ok((grammar, tree, text)) => verdict(grammar.name(), &tree, text),
        Err(Unparsed::Skipped(skip)) => Verdict::Skipped(skip),
        Err(_) => Verdict::Unchecked,
    }
}

/// Parses a whole file from scratch for reading its structure (the outline and the symbol
/// index), in this process: its grammar, the tree, and the text the tree's positions are in.
/// The symbols call this inside the parser process when there is one.
pub fn parse_whole<'a>(
    path: &RelPath,
    bytes: &'a [u8],
) -> Result<(lang::Grammar, Tree, &'a str), Unparsed> {
    parse(path, bytes, None)
}

/// The text tree-sitter sees: UTF-8 without a BOM.
fn source(bytes: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(bytes).ok()?;
    Some(text.strip_prefix('\u{feff}').unwrap_or(text))
}

/// A stop switch for a parse or a query: past [`PARSE_DEADLINE`] from now, it says stop.
pub(crate) struct Deadline(Instant);

impl Deadline {
    /// [`PARSE_DEADLINE`] from now.
    pub(crate) fn start() -> Deadline {
        Deadline(Instant::now() + PARSE_DEADLINE)
    }

    /// Whether the time is up.
    pub(crate) fn passed(&self) -> bool {
        Instant::now() >= self.0
    }

    /// What a parse or query that stopped at it says.
    pub(crate) fn skip() -> Skip {
        Skip::TimedOut {
            seconds: PARSE_DEADLINE.as_secs(),
        }
    }
}

/// Parses, reusing `old` (already edited to match) when given, so only what changed is
/// parsed again. The guard sees the text first; a parse past the deadline is given up.
fn parse<'a>(
    path: &RelPath,
    bytes: &'a [u8],
    old: Option<&Tree>,
) -> Result<(lang::Grammar, Tree, &'a str), Unparsed> {
    let grammar = lang::grammar_for(path.as_str()).ok_or(Unparsed::NoGrammar)?;
    let text = source(bytes).ok_or(Unparsed::NotText)?;
    if !(cfg!(debug_assertions) && std::env::var_os(process::UNGUARDED).is_some()) {
        guard::admit(grammar, text)?;
    }
    let mut parser = Parser::new();
    parser
        .set_language(&grammar.language())
        .map_err(|_| Unparsed::NoGrammar)?;
    let deadline = Deadline::start();
    let mut stop = |_: &tree_sitter::ParseState| {
        if deadline.passed() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let raw = text.as_bytes();
    let tree = parser
        .parse_with_options(
            &mut |at, _| raw.get(at..).unwrap_or_default(),
            old,
            Some(ParseOptions::new().progress_callback(&mut stop)),
        )
        .ok_or_else(|| Unparsed::Skipped(Deadline::skip()))?;
    Ok((grammar, tree, text))
}

fn verdict(name: &'static str, tree: &Tree, text: &str) -> Verdict {
    let root = tree.root_node();
    if !root.has_error() {
        return Verdict::Parses;
    }
    match first_error(root) {
        Some(node) => Verdict::Broken(locate(name, node, text)),
        None => Verdict::Unchecked,
    }
}

/// Parse trees of the files a session works on, keyed by path and content hash. A tree
/// parsed when the file was read makes the check after an edit incremental: tree-sitter
/// re-parses only around the change, a few milliseconds instead of a full parse. When the
/// parser runs in its own process ([`process`]) the trees live there, in the same cache.
#[derive(Clone, Default)]
pub struct TreeCache {
    trees: Arc<Mutex<HashMap<RelPath, Parsed>>>,
}

/// A file's tree and the BLAKE3 of the bytes it was parsed from.
type Parsed = ([u8; 32], Tree);

impl std::fmt::Debug for TreeCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TreeCache")
    }
}

impl TreeCache {
    fn get(&self, path: &RelPath, hash: &[u8; 32]) -> Option<Tree> {
        let trees = self.trees.lock().ok()?;
        trees
            .get(path)
            .filter(|(h, _)| h == hash)
            .map(|(_, t)| t.clone())
    }

    fn put(&self, path: &RelPath, hash: [u8; 32], tree: Tree) {
        if let Ok(mut trees) = self.trees.lock() {
            if trees.len() >= CACHE_ENTRIES && !trees.contains_key(path) {
                // Small and simple: forget everything rather than track recency.
                trees.clear();
            }
            trees.insert(path.clone(), (hash, tree));
        }
    }

    /// Parses a file that was just read, in the background, so a later edit's check is
    /// incremental. The file is read again through a clone of the jail's capability and
    /// used only if it still has the bytes the session read.
    pub fn prepare(&self, jail: &Jail, path: &RelPath, hash: [u8; 32], len: u64) {
        if len > PREPARE_MAX_BYTES
            || language_for(path).is_none()
            || self.get(path, &hash).is_some()
        {
            return;
        }
        let Ok(file) = jail.open_file(path) else {
            return;
        };
        let cache = self.clone();
        let path = path.clone();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if file.into_std().read_to_end(&mut bytes).is_err()
                || *blake3::hash(&bytes).as_bytes() != hash
            {
                return;
            }
            let request = Request::Prepare {
                path: path.to_string(),
            };
            match process::call(path.as_str(), &request, &[&bytes]) {
                Ok(_) | Err(Failed::Skipped(_)) => {}
                Err(Failed::Unavailable) => cache.prepare_here(&path, &bytes),
            }
        });
    }

    /// [`TreeCache::prepare`]'s parse, in this process: nothing when the tree is here already.
    fn prepare_here(&self, path: &RelPath, bytes: &[u8]) {
        let hash = *blake3::hash(bytes).as_bytes();
        if self.get(path, &hash).is_some() {
            return;
        }
        if let Ok((_, tree, _)) = parse(path, bytes, None) {
            self.put(path, hash, tree);
        }
    }

    /// Checks a change from `before` (absent for a new file) to `after`. Returns the verdict
    /// on `after`, and — only when `after` is broken — the verdict on `before`.
    pub fn check_change(
        &self,
        path: &RelPath,
        before: Option<&[u8]>,
        after: &[u8],
    ) -> (Verdict, Option<Verdict>) {
        let request = Request::Check {
            path: path.to_string(),
            before: before.is_some(),
        };
        let texts: Vec<&[u8]> = before.into_iter().chain([after]).collect();
        match process::call(path.as_str(), &request, &texts) {
            Ok((Reply::Checked { after, before }, _)) => (after, before),
            Err(Failed::Skipped(skip)) => (Verdict::Skipped(skip), None),
            Ok(_) | Err(Failed::Unavailable) => self.check_here(path, before, after),
        }
    }

    /// [`TreeCache::check_change`], in this process.
    fn check_here(
        &self,
        path: &RelPath,
        before: Option<&[u8]>,
        after: &[u8],
    ) -> (Verdict, Option<Verdict>) {
        let before_tree = before.and_then(|b| self.get(path, blake3::hash(b).as_bytes()));
        let edited = match (before.and_then(source), &before_tree, source(after)) {
            (Some(old_text), Some(tree), Some(new_text)) => {
                let mut tree = tree.clone();
                tree.edit(&input_edit(old_text, new_text));
                Some(tree)
            }
            _ => None,
        };
        let (grammar, tree, text) = match parse(path, after, edited.as_ref()) {
            Ok(parsed) => parsed,
            Err(Unparsed::Skipped(skip)) => return (Verdict::Skipped(skip), None),
            Err(_) => return (Verdict::Unchecked, None),
        };
        let name = grammar.name();
        let after_verdict = verdict(name, &tree, text);
        self.put(path, *blake3::hash(after).as_bytes(), tree);
        if !matches!(after_verdict, Verdict::Broken(_)) {
            return (after_verdict, None);
        }
        let before_verdict = before.map(|b| match (&before_tree, source(b)) {
            (Some(tree), Some(text)) => verdict(name, tree, text),
            _ => check_here(path, b),
        });
        (after_verdict, before_verdict)
    }
}

/// The one edit that turns `old` into `new`: everything between their common prefix and
/// common suffix.
fn input_edit(old: &str, new: &str) -> InputEdit {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let room = a.len().min(b.len()) - prefix;
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(room)
        .take_while(|(x, y)| x == y)
        .count();
    let point = |bytes: &[u8], at: usize| {
        let head = &bytes[..at];
        let row = memchr::memchr_iter(b'\n', head).count();
        let column = at - memchr::memrchr(b'\n', head).map_or(0, |i| i + 1);
        Point { row, column }
    };
    InputEdit {
        start_byte: prefix,
        old_end_byte: a.len() - suffix,
        new_end_byte: b.len() - suffix,
        start_position: point(a, prefix),
        old_end_position: point(a, a.len() - suffix),
        new_end_position: point(b, b.len() - suffix),
    }
}

/// The first ERROR or MISSING node in document order.
fn first_error(root: Node) -> Option<Node> {
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            return Some(node);
        }
        // Only descend where an error is.
        if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return None;
            }
        }
    }
}

fn locate(language: &str, node: Node, text: &str) -> SyntaxError {
    let at = node.start_position();
    let what = if node.is_missing() {
        format!("missing `{}`", node.kind())
    } else {
        let snippet = text
            .get(node.byte_range())
            .unwrap_or_default()
            .trim()
            .lines()
            .next()
            .unwrap_or_default();
        let snippet: String = snippet.chars().take(40).collect();
        if snippet.is_empty() {
            "syntax error".to_string()
        } else {
            format!("unexpected `{snippet}`")
        }
    };
    let line_start = node.start_byte().saturating_sub(at.column);
    let line = text
        .get(line_start..)
        .and_then(|rest| rest.lines().next())
        .unwrap_or_default();
    SyntaxError {
        language: language.to_string(),
        line: at.row + 1,
        column: at.column + 1,
        what,
        source_line: around(line, at.column),
    }
}

/// How much of the offending line a syntax error shows.
const SOURCE_LINE_CHARS: usize = 160;

/// `line` when it is short; else the part of it around byte `column`, with "…" where it was
/// cut (a minified file is one line of a megabyte).
fn around(line: &str, column: usize) -> String {
    if line.char_indices().nth(SOURCE_LINE_CHARS).is_none() {
        return line.to_string();
    }
    let boundary = |mut i: usize| {
        i = i.min(line.len());
        while !line.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let from = boundary(column.saturating_sub(SOURCE_LINE_CHARS / 3));
    let rest = line.get(from..).unwrap_or_default();
    let shown: String = rest.chars().take(SOURCE_LINE_CHARS).collect();
    let before = if from > 0 { "…" } else { "" };
    let after = if shown.len() < rest.len() { "…" } else { "" };
    format!("{before}{shown}{after}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn rel(s: &str) -> RelPath {
        RelPath::parse(s, Path::new("/p")).unwrap()
    }

    fn broken(path: &str, text: &str) -> SyntaxError {
        match check(&rel(path), text.as_bytes()) {
            Verdict::Broken(e) => e,
            other => panic!("{path}: expected broken, got {other:?}"),
        }
    }

    #[test]
    fn good_files_parse() {
        for (path, text) in [
            ("a.rs", "fn main() { println!(\"hi\"); }\n"),
            ("a.py", "def f(x):\n    return x + 1\n"),
            (
                "a.go",
                "package main\n\nfunc main() {\n\tx := 1\n\t_ = x\n}\n",
            ),
            ("a.js", "const f = (x) => x + 1;\n"),
            ("a.ts", "function f(x: number): number { return x; }\n"),
            ("a.tsx", "const A = () => <div>hi</div>;\n"),
            ("a.json", "{\"a\": [1, 2]}\n"),
            ("a.toml", "[package]\nname = \"x\"\n"),
            ("a.yaml", "a: 1\nb:\n  - c\n"),
            ("a.c", "int main(void) { return 0; }\n"),
            ("a.cpp", "int main() { return 0; }\n"),
            ("A.java", "class A { void f() {} }\n"),
            ("a.sh", "if true; then echo hi; fi\n"),
        ] {
            assert_eq!(
                check(&rel(path), text.as_bytes()),
                Verdict::Parses,
                "{path}"
            );
        }
    }

    #[test]
    fn broken_files_are_located() {
        let e = broken("a.rs", "fn main() {\n    let x = (1 + 2;\n}\n");
        assert_eq!(e.language, "rust");
        assert_eq!(e.line, 2);
        let e = broken("a.py", "def f(x):\n    return (x +\n");
        assert_eq!(e.language, "python");
        broken("a.go", "package main\nfunc main() {\n");
        broken("a.ts", "function f(x: number { return x; }\n");
        broken("a.json", "{\"a\": [1, 2}\n");
    }

    #[test]
    fn incremental_checks_agree_with_full_parses() {
        let cache = TreeCache::default();
        let path = rel("a.rs");
        let v1 = b"fn a() {}\nfn b() { let x = 1; }\n".to_vec();
        cache.put(
            &path,
            *blake3::hash(&v1).as_bytes(),
            parse(&path, &v1, None).unwrap().1,
        );
        let v2 = b"fn a() {}\nfn b() { let x = (1; }\n".to_vec();
        let (after, before) = cache.check_change(&path, Some(&v1), &v2);
        assert_eq!(after, check(&path, &v2));
        assert!(matches!(after, Verdict::Broken(_)));
        assert_eq!(before, Some(Verdict::Parses));
        // The broken tree is cached now; fixing it again is incremental and agrees.
        let (after, before) = cache.check_change(&path, Some(&v2), &v1);
        assert_eq!((after, before), (Verdict::Parses, None));
    }

    #[test]
    fn a_long_line_is_shown_around_the_error() {
        let line = format!(
            "{}let x = (1 + ;{}",
            "a;".repeat(50_000),
            "b;".repeat(50_000)
        );
        let e = broken("a.rs", &format!("fn f() {{ {line} }}\n"));
        assert!(
            e.source_line.chars().count() <= SOURCE_LINE_CHARS + 2,
            "{}",
            e.source_line.len()
        );
        assert!(e.source_line.starts_with('…') && e.source_line.ends_with('…'));
        assert!(e.source_line.contains("(1 + ;"), "{}", e.source_line);
        assert_eq!(around("short line", 3), "short line");
        assert_eq!(
            around(&"é".repeat(400), 1),
            format!("{}…", "é".repeat(SOURCE_LINE_CHARS))
        );
    }

    #[test]
    fn unknown_extensions_are_unchecked() {
        assert_eq!(check(&rel("notes.txt"), b"(((("), Verdict::Unchecked);
        assert_eq!(check(&rel("Makefile"), b"all:\n"), Verdict::Unchecked);
    }
}
