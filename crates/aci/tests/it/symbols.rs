//! The symbol corpus (`tests/data/symbols/`): a small project per language with the outline
//! of every file and the answers to symbol queries, derived with an independent tree-sitter
//! script and checked by eye (see its README). Each language directory is copied into a
//! fresh project, indexed, and asked.

use std::fs;
use std::path::{Path, PathBuf};

use slmcode_aci::control::CallControl;
use slmcode_aci::path::Jail;
use slmcode_aci::symbols::find::{self, Query};
use slmcode_aci::symbols::{self, Kind, SymbolIndex};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/symbols")
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "expected" {
            continue;
        }
        let target = to.join(&name);
        if entry.file_type().unwrap().is_dir() {
            fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn languages() -> Vec<String> {
    let mut langs: Vec<String> = fs::read_dir(corpus())
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    langs.sort();
    langs
}

#[test]
fn every_language_of_the_syntax_check_has_a_corpus() {
    let langs = languages();
    for lang in [
        "rust",
        "python",
        "go",
        "javascript",
        "typescript",
        "tsx",
        "c",
        "cpp",
        "java",
        "bash",
        "json",
        "toml",
        "yaml",
    ] {
        assert!(langs.iter().any(|l| l == lang), "no corpus for {lang}");
    }
}

#[test]
fn outlines_match_the_corpus() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for lang in languages() {
        let root = corpus().join(&lang);
        let expected_dir = root.join("expected/outline");
        let mut expected_files = Vec::new();
        files_under(&expected_dir, &mut expected_files);
        assert!(!expected_files.is_empty(), "{lang}: no expected outlines");
        let jail = Jail::open(&root).unwrap();
        for expected_file in expected_files {
            let rel = expected_file
                .strip_prefix(&expected_dir)
                .unwrap()
                .to_string_lossy()
                .trim_end_matches(".txt")
                .to_string();
            let bytes = fs::read(root.join(&rel)).unwrap();
            let path = jail.parse(&rel).unwrap();
            let found = symbols::extract(&path, &bytes)
                .unwrap_or_else(|e| panic!("{lang}/{rel}: not read: {e:?}"));
            let got: Vec<String> = found.definitions.iter().map(|d| d.brief()).collect();
            let want: Vec<String> = fs::read_to_string(&expected_file)
                .unwrap()
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_string)
                .collect();
            checked += 1;
            if got != want {
                failures.push(format!("{lang}/{rel}:\n{}", diff(&want, &got)));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 30, "only {checked} files checked");
}

/// One `? query [kind=K] [path=P]` case and the lines it must answer.
struct Case {
    query: String,
    kind: Option<Kind>,
    under: Option<String>,
    want: Vec<String>,
}

fn cases(text: &str) -> Vec<Case> {
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let mut lines = block.lines().filter(|l| !l.trim().is_empty());
        let Some(head) = lines.next() else { continue };
        let head = head.strip_prefix("? ").expect("a case starts with `? `");
        let mut words = head.split_whitespace();
        let query = words.next().unwrap().to_string();
        let mut kind = None;
        let mut under = None;
        for w in words {
            if let Some(k) = w.strip_prefix("kind=") {
                kind = Some(Kind::parse(k).unwrap());
            } else if let Some(p) = w.strip_prefix("path=") {
                under = Some(p.to_string());
            } else {
                panic!("unknown case word {w}");
            }
        }
        let want: Vec<String> = lines
            .filter(|l| *l != "(none)")
            .map(str::to_string)
            .collect();
        out.push(Case {
            query,
            kind,
            under,
            want,
        });
    }
    out
}

#[test]
fn symbol_queries_match_the_corpus() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for lang in languages() {
        let expected = corpus().join(&lang).join("expected/symbols.txt");
        let Ok(text) = fs::read_to_string(&expected) else {
            continue; // data languages: outlines only
        };
        let project = tempfile::tempdir().unwrap();
        copy_tree(&corpus().join(&lang), project.path());
        let jail = Jail::open(project.path()).unwrap();
        let mut index = SymbolIndex::default();
        index.refresh(&jail, &CallControl::default());
        for case in cases(&text) {
            let q = Query {
                text: &case.query,
                kind: case.kind,
                under: case.under.as_deref(),
            };
            let got: Vec<String> = find::find(&index, &q)
                .iter()
                .map(|h| {
                    format!(
                        "{}:{} {} {} refs={}",
                        h.path,
                        h.definition.start,
                        h.definition.kind,
                        h.definition.name,
                        h.references
                    )
                })
                .collect();
            checked += 1;
            if got != case.want {
                failures.push(format!(
                    "{lang}: ? {}{}{}\n{}",
                    case.query,
                    case.kind.map_or(String::new(), |k| format!(" kind={k}")),
                    case.under
                        .as_deref()
                        .map_or(String::new(), |p| format!(" path={p}")),
                    diff(&case.want, &got)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 60, "only {checked} cases checked");
}

/// The lines wanted and got, as a diff (`-` wanted, `+` got).
fn diff(want: &[String], got: &[String]) -> String {
    let (want, got) = (want.join("\n") + "\n", got.join("\n") + "\n");
    similar::TextDiff::from_lines(&want, &got)
        .unified_diff()
        .context_radius(1)
        .to_string()
}

/// Every corpus file, as (path relative to its language directory, text).
fn corpus_sources() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for lang in languages() {
        let root = corpus().join(&lang);
        let mut files = Vec::new();
        files_under(&root, &mut files);
        for f in files {
            let rel = f
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel.starts_with("expected") {
                continue;
            }
            if let Ok(text) = fs::read_to_string(&f) {
                out.push((rel, text));
            }
        }
    }
    out
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 400, .. Default::default() })]

    /// Any file, however a model or a merge broke it, gives an outline without a panic, and
    /// every range lies in the file, starts before it ends, and nests inside its parent.
    #[test]
    fn broken_files_never_panic_and_ranges_stay_in_the_file(
        pick in proptest::prelude::any::<proptest::sample::Index>(),
        at in proptest::prelude::any::<proptest::sample::Index>(),
        cut in 0usize..200,
        insert in proptest::prop_oneof![
            proptest::strategy::Just(""), proptest::strategy::Just("{"), proptest::strategy::Just("}\n"),
            proptest::strategy::Just("\"é"), proptest::strategy::Just("\n\n    def x(:\n"),
            proptest::strategy::Just("/*"), proptest::strategy::Just("\u{feff}"),
        ],
    ) {
        let sources = corpus_sources();
        let (rel, text) = &sources[pick.index(sources.len())];
        let mut start = at.index(text.len() + 1);
        while !text.is_char_boundary(start) { start -= 1; }
        let mut end = (start + cut).min(text.len());
        while !text.is_char_boundary(end) { end += 1; }
        let broken = format!("{}{}{}", &text[..start], insert, &text[end..]);
        let path = slmcode_aci::path::RelPath::parse(rel, Path::new("/p")).unwrap();
        let Ok(found) = symbols::extract(&path, broken.as_bytes()) else { return Ok(()); };
        let lines = broken.lines().count().max(1) as u32;
        let mut open: Vec<(u16, u32, u32)> = Vec::new();
        for d in &found.definitions {
            proptest::prop_assert!(1 <= d.start && d.start <= d.end && d.end <= lines, "{rel}: {d:?} in {lines} lines");
            while open.last().is_some_and(|(depth, ..)| *depth >= d.depth) { open.pop(); }
            if let Some((_, ps, pe)) = open.last() {
                proptest::prop_assert!(*ps <= d.start && d.end <= *pe, "{rel}: {d:?} outside its parent");
            }
            proptest::prop_assert_eq!(usize::from(d.depth), open.len(), "{}: {:?}", rel, d);
            open.push((d.depth, d.start, d.end));
        }
    }
}
