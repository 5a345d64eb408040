//! Post-edit syntax checks, in process, with tree-sitter: no gofmt, python or node to shell out
//! to, TypeScript included, and fast enough to sit inside every write. A file whose extension
//! has no grammar is skipped, never read as broken.

use tree_sitter::{Language, Node, Parser};

use crate::path::RelPath;

/// A parse failure, located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// The grammar that was used, e.g. "rust".
    pub language: &'static str,
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Parses,
    Broken(SyntaxError),
    /// No grammar for this file type (or not UTF-8 text): nothing is claimed.
    Unchecked,
}

/// The grammar for a path, by extension (or a few well-known names).
pub fn language_for(path: &RelPath) -> Option<(&'static str, Language)> {
    let name = path.file_name();
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    let lang: (&'static str, Language) = match ext.as_deref() {
        Some("rs") => ("rust", tree_sitter_rust::LANGUAGE.into()),
        Some("py" | "pyi") => ("python", tree_sitter_python::LANGUAGE.into()),
        Some("go") => ("go", tree_sitter_go::LANGUAGE.into()),
        Some("js" | "mjs" | "cjs" | "jsx") => {
            ("javascript", tree_sitter_javascript::LANGUAGE.into())
        }
        Some("ts" | "mts" | "cts") => (
            "typescript",
            tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        ),
        Some("tsx") => ("tsx", tree_sitter_typescript::LANGUAGE_TSX.into()),
        Some("json") => ("json", tree_sitter_json::LANGUAGE.into()),
        Some("toml") => ("toml", tree_sitter_toml_ng::LANGUAGE.into()),
        Some("yaml" | "yml") => ("yaml", tree_sitter_yaml::LANGUAGE.into()),
        Some("c" | "h") => ("c", tree_sitter_c::LANGUAGE.into()),
        Some("cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx") => {
            ("c++", tree_sitter_cpp::LANGUAGE.into())
        }
        Some("java") => ("java", tree_sitter_java::LANGUAGE.into()),
        Some("sh" | "bash") => ("bash", tree_sitter_bash::LANGUAGE.into()),
        _ => match name {
            "Cargo.lock" => ("toml", tree_sitter_toml_ng::LANGUAGE.into()),
            _ => return None,
        },
    };
    Some(lang)
}

/// Parses `bytes` as the language of `path`.
pub fn check(path: &RelPath, bytes: &[u8]) -> Verdict {
    let Some((name, language)) = language_for(path) else {
        return Verdict::Unchecked;
    };
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Verdict::Unchecked;
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut parser = Parser::new();
    if parser.set_language(&language).is_err() {
        return Verdict::Unchecked;
    }
    let Some(tree) = parser.parse(text, None) else {
        return Verdict::Unchecked;
    };
    let root = tree.root_node();
    if !root.has_error() {
        return Verdict::Parses;
    }
    match first_error(root) {
        Some(node) => Verdict::Broken(locate(name, node, text)),
        None => Verdict::Unchecked,
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

fn locate(language: &'static str, node: Node, text: &str) -> SyntaxError {
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
    SyntaxError {
        language,
        line: at.row + 1,
        column: at.column + 1,
        what,
        source_line: text.lines().nth(at.row).unwrap_or_default().to_string(),
    }
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
    fn unknown_extensions_are_unchecked() {
        assert_eq!(check(&rel("notes.txt"), b"(((("), Verdict::Unchecked);
        assert_eq!(check(&rel("Makefile"), b"all:\n"), Verdict::Unchecked);
    }
}
