//! The one table of languages: which files are in which language, for every part of slmcode
//! that asks.
//!
//! A row of [`LANGUAGES`] gives a language key, the files it covers (extensions, and a few
//! whole file names), the tree-sitter grammar the post-edit syntax check parses them with (if
//! any) and the language's comment syntax. It is read by:
//!
//! - the syntax check ([`crate::syntax::language_for`]), through [`grammar_for`];
//! - placeholder detection ([`crate::placeholder`]), through [`comment_forms`]: every comment
//!   form at once, since a placeholder is looked for on any line whatever the file type;
//! - the evolve bandit of `slmcode-agent`, which learns per language key ([`key_of`],
//!   [`dominant`]);
//! - the language of a task at `slmcode run` ([`dominant`] of the files it names, else
//!   [`dominant_in`] the project).
//!
//! The keys are stored in users' evolve state files: renaming one orphans what was learned
//! under it. A language may span several rows (TSX has its own grammar but is `typescript` to
//! the bandit); the first row of a key sets its place in the tie order of [`dominant`].

use std::sync::OnceLock;

use tree_sitter::Language;

use crate::path::Jail;

/// The key of a file no row covers. The bandit learns such runs under it too.
pub const OTHER: &str = "other";

/// A tree-sitter grammar the syntax check can parse with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Grammar {
    Rust,
    Python,
    Go,
    JavaScript,
    TypeScript,
    Tsx,
    Json,
    Toml,
    Yaml,
    C,
    Cpp,
    Java,
    Bash,
}

impl Grammar {
    /// Every grammar, for whatever must cover them all (the outline's queries, tests).
    pub const ALL: [Grammar; 13] = [
        Grammar::Rust,
        Grammar::Python,
        Grammar::Go,
        Grammar::JavaScript,
        Grammar::TypeScript,
        Grammar::Tsx,
        Grammar::Json,
        Grammar::Toml,
        Grammar::Yaml,
        Grammar::C,
        Grammar::Cpp,
        Grammar::Java,
        Grammar::Bash,
    ];

    /// The name a syntax error reports (`SyntaxError::language`), e.g. "rust", "tsx", "c++".
    pub fn name(self) -> &'static str {
        match self {
            Grammar::Rust => "rust",
            Grammar::Python => "python",
            Grammar::Go => "go",
            Grammar::JavaScript => "javascript",
            Grammar::TypeScript => "typescript",
            Grammar::Tsx => "tsx",
            Grammar::Json => "json",
            Grammar::Toml => "toml",
            Grammar::Yaml => "yaml",
            Grammar::C => "c",
            Grammar::Cpp => "c++",
            Grammar::Java => "java",
            Grammar::Bash => "bash",
        }
    }

    /// The tree-sitter language to parse with.
    pub fn language(self) -> Language {
        match self {
            Grammar::Rust => tree_sitter_rust::LANGUAGE.into(),
            Grammar::Python => tree_sitter_python::LANGUAGE.into(),
            Grammar::Go => tree_sitter_go::LANGUAGE.into(),
            Grammar::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Grammar::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Grammar::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Grammar::Json => tree_sitter_json::LANGUAGE.into(),
            Grammar::Toml => tree_sitter_toml_ng::LANGUAGE.into(),
            Grammar::Yaml => tree_sitter_yaml::LANGUAGE.into(),
            Grammar::C => tree_sitter_c::LANGUAGE.into(),
            Grammar::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            Grammar::Java => tree_sitter_java::LANGUAGE.into(),
            Grammar::Bash => tree_sitter_bash::LANGUAGE.into(),
        }
    }
}

/// How a language writes comments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Comments {
    /// Markers that start a comment running to the end of the line: `//`, `#`.
    pub line: &'static [&'static str],
    /// Opening and closing markers of block comments: `/*` … `*/`, `<!--` … `-->`.
    pub block: &'static [(&'static str, &'static str)],
}

const C_LIKE: Comments = Comments {
    line: &["//"],
    block: &[("/*", "*/")],
};
const HASH: Comments = Comments {
    line: &["#"],
    block: &[],
};
const NONE: Comments = Comments {
    line: &[],
    block: &[],
};
const HTML: Comments = Comments {
    line: &[],
    block: &[("<!--", "-->")],
};

/// One row of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// The language key the bandit learns under (stored in state files: never rename one).
    pub key: &'static str,
    /// Lowercase extensions, without the dot. A name that is only a dot and an extension
    /// (`.py`) has no extension.
    pub extensions: &'static [&'static str],
    /// Whole file names, matched ignoring ASCII case.
    pub names: &'static [&'static str],
    /// The grammar the syntax check parses these files with; `None`: not checked.
    pub grammar: Option<Grammar>,
    pub comments: Comments,
}

/// Every language slmcode tells apart. The order of first appearance of each key breaks ties
/// in [`dominant`]: code before configuration and prose.
pub static LANGUAGES: &[Row] = &[
    Row {
        key: "rust",
        extensions: &["rs"],
        names: &[],
        grammar: Some(Grammar::Rust),
        comments: C_LIKE,
    },
    Row {
        key: "python",
        extensions: &["py", "pyi", "pyw"],
        names: &[],
        grammar: Some(Grammar::Python),
        comments: HASH,
    },
    Row {
        key: "go",
        extensions: &["go"],
        names: &[],
        grammar: Some(Grammar::Go),
        comments: C_LIKE,
    },
    Row {
        key: "typescript",
        extensions: &["ts", "mts", "cts"],
        names: &[],
        grammar: Some(Grammar::TypeScript),
        comments: C_LIKE,
    },
    // TSX needs its own grammar (`<div>` is a cast in plain TypeScript), not its own key.
    Row {
        key: "typescript",
        extensions: &["tsx"],
        names: &[],
        grammar: Some(Grammar::Tsx),
        comments: C_LIKE,
    },
    Row {
        key: "javascript",
        extensions: &["js", "mjs", "cjs", "jsx"],
        names: &[],
        grammar: Some(Grammar::JavaScript),
        comments: C_LIKE,
    },
    Row {
        key: "c",
        extensions: &["c", "h"],
        names: &[],
        grammar: Some(Grammar::C),
        comments: C_LIKE,
    },
    Row {
        key: "cpp",
        extensions: &["cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "h++", "ipp"],
        names: &[],
        grammar: Some(Grammar::Cpp),
        comments: C_LIKE,
    },
    Row {
        key: "java",
        extensions: &["java"],
        names: &[],
        grammar: Some(Grammar::Java),
        comments: C_LIKE,
    },
    Row {
        key: "bash",
        extensions: &["sh", "bash"],
        names: &[".bashrc", ".bash_profile", ".bash_aliases", ".profile"],
        grammar: Some(Grammar::Bash),
        comments: HASH,
    },
    // Zsh is learned with bash, but not parsed as bash: valid zsh (`${(j:,:)a}`, glob
    // qualifiers) is broken bash, and a false "broken" reverts the edit.
    Row {
        key: "bash",
        extensions: &["zsh"],
        names: &[".zshrc"],
        grammar: None,
        comments: HASH,
    },
    Row {
        key: "json",
        extensions: &["json"],
        names: &[],
        grammar: Some(Grammar::Json),
        comments: NONE,
    },
    // Comments, trailing commas, unquoted keys: not JSON to the JSON grammar.
    Row {
        key: "json",
        extensions: &["jsonc", "json5"],
        names: &[],
        grammar: None,
        comments: C_LIKE,
    },
    Row {
        key: "yaml",
        extensions: &["yaml", "yml"],
        names: &[],
        grammar: Some(Grammar::Yaml),
        comments: HASH,
    },
    Row {
        key: "toml",
        extensions: &["toml"],
        names: &[],
        grammar: Some(Grammar::Toml),
        comments: HASH,
    },
    Row {
        key: "markdown",
        extensions: &["md", "markdown", "mdx"],
        names: &[],
        grammar: None,
        comments: HTML,
    },
    // Generated, and in every Rust project: checked as TOML, but no language a task is in
    // (as `toml` it would outvote the one `main.rs` of a new crate).
    Row {
        key: OTHER,
        extensions: &[],
        names: &["Cargo.lock"],
        grammar: Some(Grammar::Toml),
        comments: HASH,
    },
];

/// The row of a file, by its name (a path's last component, `/` or `\` separated): a whole
/// file name first, else the extension, ignoring case.
pub fn row_for(path: &str) -> Option<&'static Row> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or_default();
    if let Some(row) = LANGUAGES
        .iter()
        .find(|r| r.names.iter().any(|n| n.eq_ignore_ascii_case(name)))
    {
        return Some(row);
    }
    let (stem, ext) = name.rsplit_once('.')?;
    if stem.is_empty() {
        return None;
    }
    let ext = ext.to_ascii_lowercase();
    LANGUAGES
        .iter()
        .find(|r| r.extensions.contains(&ext.as_str()))
}

/// The language key of a file, [`OTHER`] when no row covers it.
pub fn key_of(path: &str) -> &'static str {
    row_for(path).map_or(OTHER, |r| r.key)
}

/// The grammar of a file, `None` when it is not syntax-checked.
pub fn grammar_for(path: &str) -> Option<Grammar> {
    row_for(path).and_then(|r| r.grammar)
}

/// The language a set of files is mostly in, so one run feeds one key. The most frequent
/// key wins; ties go to the earlier one in the table (code before configuration and prose);
/// [`OTHER`] wins only when nothing else was seen, and is also the answer for no paths.
pub fn dominant<'a>(paths: impl IntoIterator<Item = &'a str>) -> &'static str {
    // Counted at the first row of each key.
    let mut counts = vec![0usize; LANGUAGES.len()];
    for path in paths {
        let key = key_of(path);
        if let Some(slot) = LANGUAGES
            .iter()
            .position(|r| r.key == key)
            .and_then(|i| counts.get_mut(i))
        {
            *slot += 1;
        }
    }
    let mut best = OTHER;
    let mut best_count = 0;
    for (row, count) in LANGUAGES.iter().zip(counts) {
        if row.key != OTHER && count > best_count {
            best = row.key;
            best_count = count;
        }
    }
    best
}

/// The project's most common language: [`dominant`] of the first `limit` files the tools see
/// (the one walker: `.gitignore` honoured, hidden entries skipped, in file-name order).
pub fn dominant_in(jail: &Jail, limit: usize) -> &'static str {
    let files = crate::walk::files(jail, limit);
    dominant(files.iter().map(|p| p.as_str()))
}

/// Every comment form of the table, each once, in table order.
#[derive(Debug)]
pub struct CommentForms {
    pub line: Vec<&'static str>,
    pub block: Vec<(&'static str, &'static str)>,
}

/// The comment forms of all rows together, for readers that look for comments whatever the
/// file type (placeholder detection).
pub fn comment_forms() -> &'static CommentForms {
    static FORMS: OnceLock<CommentForms> = OnceLock::new();
    FORMS.get_or_init(|| {
        let mut forms = CommentForms {
            line: Vec::new(),
            block: Vec::new(),
        };
        for row in LANGUAGES {
            for m in row.comments.line {
                if !forms.line.contains(m) {
                    forms.line.push(m);
                }
            }
            for pair in row.comments.block {
                if !forms.block.contains(pair) {
                    forms.block.push(*pair);
                }
            }
        }
        forms
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// The keys in the tie order of `dominant`, each once.
    fn keys() -> Vec<&'static str> {
        let mut keys: Vec<&'static str> = Vec::new();
        for row in LANGUAGES {
            if !keys.contains(&row.key) {
                keys.push(row.key);
            }
        }
        keys
    }

    #[test]
    fn every_extension_and_name_is_in_exactly_one_row() {
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (i, row) in LANGUAGES.iter().enumerate() {
            assert!(
                !row.extensions.is_empty() || !row.names.is_empty(),
                "row {i} covers nothing"
            );
            for ext in row.extensions {
                assert_eq!(*ext, ext.to_ascii_lowercase(), "{ext}: lowercase");
                assert!(!ext.contains('.') && !ext.is_empty(), "{ext:?}");
                let prev = seen.insert(format!("*.{ext}"), i);
                assert_eq!(prev, None, "*.{ext} is in rows {prev:?} and {i}");
                assert_eq!(row_for(&format!("x.{ext}")), Some(row), "{ext}");
            }
            for name in row.names {
                let prev = seen.insert(name.to_ascii_lowercase(), i);
                assert_eq!(prev, None, "{name} is in rows {prev:?} and {i}");
                assert_eq!(row_for(name), Some(row), "{name}");
            }
        }
    }

    #[test]
    fn the_persisted_keys_and_their_tie_order_are_kept() {
        // evolve's LANGUAGES before the table, `other` last: these strings are in users'
        // state files.
        assert_eq!(
            keys(),
            [
                "rust",
                "python",
                "go",
                "typescript",
                "javascript",
                "c",
                "cpp",
                "java",
                "bash",
                "json",
                "yaml",
                "toml",
                "markdown",
                "other",
            ]
        );
    }

    #[test]
    fn grammar_names_are_kept_and_every_grammar_loads() {
        // The names syntax errors reported before the table.
        let names: Vec<&str> = Grammar::ALL
            .iter()
            .map(|g| {
                let mut parser = tree_sitter::Parser::new();
                assert!(parser.set_language(&g.language()).is_ok(), "{g:?}");
                g.name()
            })
            .collect();
        assert_eq!(
            names,
            [
                "rust",
                "python",
                "go",
                "javascript",
                "typescript",
                "tsx",
                "json",
                "toml",
                "yaml",
                "c",
                "c++",
                "java",
                "bash"
            ]
        );
    }

    /// The three old mappings, side by side with the table's answers:
    /// (path, syntax::language_for before, grammar now, evolve::language_of before, key now).
    /// `task_language` used evolve's mapping, so its column is evolve's.
    type OldAndNew = (
        &'static str,
        Option<&'static str>,
        Option<&'static str>,
        &'static str,
        &'static str,
    );

    #[rustfmt::skip]
    const OLD_AND_NEW: &[OldAndNew] = &[
        // Unchanged.
        ("src/main.rs", Some("rust"), Some("rust"), "rust", "rust"),
        ("app.py", Some("python"), Some("python"), "python", "python"),
        ("stubs/x.pyi", Some("python"), Some("python"), "python", "python"),
        ("cmd/main.go", Some("go"), Some("go"), "go", "go"),
        ("web/index.js", Some("javascript"), Some("javascript"), "javascript", "javascript"),
        ("a.mjs", Some("javascript"), Some("javascript"), "javascript", "javascript"),
        ("a.cjs", Some("javascript"), Some("javascript"), "javascript", "javascript"),
        ("web/App.jsx", Some("javascript"), Some("javascript"), "javascript", "javascript"),
        ("web/app.ts", Some("typescript"), Some("typescript"), "typescript", "typescript"),
        ("a.mts", Some("typescript"), Some("typescript"), "typescript", "typescript"),
        ("a.cts", Some("typescript"), Some("typescript"), "typescript", "typescript"),
        // The grammar and the key differ on purpose (see the table).
        ("web/App.TSX", Some("tsx"), Some("tsx"), "typescript", "typescript"),
        ("lib/x.c", Some("c"), Some("c"), "c", "c"),
        ("lib/x.h", Some("c"), Some("c"), "c", "c"),
        ("lib/x.cpp", Some("c++"), Some("c++"), "cpp", "cpp"),
        ("lib/x.cc", Some("c++"), Some("c++"), "cpp", "cpp"),
        ("lib/x.cxx", Some("c++"), Some("c++"), "cpp", "cpp"),
        ("lib/x.hpp", Some("c++"), Some("c++"), "cpp", "cpp"),
        ("lib/x.hh", Some("c++"), Some("c++"), "cpp", "cpp"),
        ("lib/x.hxx", Some("c++"), Some("c++"), "cpp", "cpp"),
        ("Main.java", Some("java"), Some("java"), "java", "java"),
        ("package.json", Some("json"), Some("json"), "json", "json"),
        (".github/workflows/ci.yml", Some("yaml"), Some("yaml"), "yaml", "yaml"),
        ("config.yaml", Some("yaml"), Some("yaml"), "yaml", "yaml"),
        ("Cargo.toml", Some("toml"), Some("toml"), "toml", "toml"),
        ("scripts/run.sh", Some("bash"), Some("bash"), "bash", "bash"),
        ("x.bash", Some("bash"), Some("bash"), "bash", "bash"),
        ("x.zsh", None, None, "bash", "bash"),
        ("/home/u/.zshrc", None, None, "bash", "bash"),
        ("x.jsonc", None, None, "json", "json"),
        ("x.json5", None, None, "json", "json"),
        ("README.md", None, None, "markdown", "markdown"),
        ("x.markdown", None, None, "markdown", "markdown"),
        ("x.mdx", None, None, "markdown", "markdown"),
        // Checked as TOML, learned as `other`, as before.
        ("Cargo.lock", Some("toml"), Some("toml"), "other", "other"),
        ("Makefile", None, None, "other", "other"),
        (".gitignore", None, None, "other", "other"),
        ("image.png", None, None, "other", "other"),
        ("notes.txt", None, None, "other", "other"),
        ("dir.rs/file", None, None, "other", "other"),
        ("C:\\work\\lib.rs", Some("rust"), Some("rust"), "rust", "rust"),
        ("", None, None, "other", "other"),
        // Intentional changes, all to the syntax check (no key changed):
        // a Python file evolve knew and the check skipped is now checked;
        ("gui.pyw", None, Some("python"), "python", "python"),
        // C++ extensions evolve knew and the check skipped are now checked as C++;
        ("x.c++", None, Some("c++"), "cpp", "cpp"),
        ("x.h++", None, Some("c++"), "cpp", "cpp"),
        ("x.ipp", None, Some("c++"), "cpp", "cpp"),
        // bash start-up files evolve knew and the check skipped are now checked as bash;
        ("/home/u/.bashrc", None, Some("bash"), "bash", "bash"),
        (".bash_profile", None, Some("bash"), "bash", "bash"),
        (".bash_aliases", None, Some("bash"), "bash", "bash"),
        (".profile", None, Some("bash"), "bash", "bash"),
        // a name that is only a dot and an extension had a grammar and no key: it has
        // neither now (evolve's rule: it is a hidden file, not a `.py` file);
        (".py", Some("python"), None, "other", "other"),
        // file names are matched ignoring case, as evolve did.
        ("CARGO.LOCK", None, Some("toml"), "other", "other"),
    ];

    #[test]
    fn the_old_answers_are_kept_or_changed_on_purpose() {
        for (path, _old_grammar, grammar, _old_key, key) in OLD_AND_NEW {
            assert_eq!(grammar_for(path).map(Grammar::name), *grammar, "{path}");
            assert_eq!(key_of(path), *key, "{path}");
        }
        // No key changed; the grammar changed for exactly the paths listed last.
        assert!(OLD_AND_NEW.iter().all(|(_, _, _, old, new)| old == new));
        let changed: Vec<&str> = OLD_AND_NEW
            .iter()
            .filter(|(_, old, new, _, _)| old != new)
            .map(|(path, ..)| *path)
            .collect();
        assert_eq!(
            changed,
            [
                "gui.pyw",
                "x.c++",
                "x.h++",
                "x.ipp",
                "/home/u/.bashrc",
                ".bash_profile",
                ".bash_aliases",
                ".profile",
                ".py",
                "CARGO.LOCK",
            ]
        );
    }

    #[test]
    fn dominant_counts_and_ties() {
        assert_eq!(dominant(["a.py", "b.py", "c.rs"]), "python");
        // A tie goes to the fixed order: rust before python, code before config.
        assert_eq!(dominant(["a.py", "c.rs"]), "rust");
        assert_eq!(dominant(["Cargo.toml", "src/lib.rs"]), "rust");
        assert_eq!(
            dominant(["Cargo.toml", "Cargo.lock", "src/main.rs"]),
            "rust"
        );
        // TSX counts with TypeScript, not after JavaScript.
        assert_eq!(dominant(["a.js", "b.tsx"]), "typescript");
        // `other` only when nothing else was seen.
        assert_eq!(dominant(["Makefile", "x.png", "a.go"]), "go");
        assert_eq!(dominant(["Makefile"]), "other");
        assert_eq!(dominant(std::iter::empty()), "other");
        let owned = ["a.ts".to_string(), "b.ts".to_string()];
        assert_eq!(dominant(owned.iter().map(String::as_str)), "typescript");
    }

    #[test]
    fn the_project_language_is_what_the_tools_see() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |p: &str| {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        };
        write("src/main.rs");
        // Ignored and hidden files are not the project's.
        std::fs::write(root.join(".gitignore"), "gen/\n").unwrap();
        for p in ["gen/a.py", "gen/b.py", ".venv/c.py", ".venv/d.py"] {
            write(p);
        }
        let jail = Jail::open(root).unwrap();
        assert_eq!(dominant_in(&jail, 5000), "rust");
        write("tools/x.py");
        write("tools/y.py");
        assert_eq!(dominant_in(&jail, 5000), "python");
        // The limit counts files in file-name order: the first is src/main.rs.
        assert_eq!(dominant_in(&jail, 1), "rust");
        assert_eq!(dominant_in(&jail, 0), "other");
    }

    #[test]
    fn placeholder_detection_reads_every_comment_form() {
        let forms = comment_forms();
        assert_eq!(forms.line, ["//", "#"]);
        assert_eq!(forms.block, [("/*", "*/"), ("<!--", "-->")]);
        for row in LANGUAGES {
            for m in row.comments.line {
                let line = format!("    {m} ... existing code ...");
                assert!(crate::placeholder::is_placeholder(&line), "{line}");
            }
            for (open, close) in row.comments.block {
                let line = format!("{open} ... rest of the file ... {close}");
                assert!(crate::placeholder::is_placeholder(&line), "{line}");
            }
        }
    }
}
