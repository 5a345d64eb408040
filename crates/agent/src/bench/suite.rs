//! A benchmark suite in the layout of Aider's polyglot benchmark repository:
//! `<language>/exercises/practice/<exercise>/`, each with `.meta/config.json` naming its
//! solution, test and example files (`{"files": {"solution": […], "test": […], "example":
//! […]}}`) and its instructions in `.docs/instructions*.md`. What an exercise is, how its
//! tests run, and the fresh copy a run works in (the example solution never copied).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::BenchError;

/// One exercise of a suite.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exercise {
    pub language: String,
    pub name: String,
    pub dir: PathBuf,
    /// The files the model is to change (relative to the exercise).
    pub solution: Vec<String>,
    /// The test files: protected during the run.
    pub test: Vec<String>,
    /// The reference solution: never copied.
    pub example: Vec<String>,
    /// `.docs/instructions.md`, then `.docs/instructions.append.md` when there is one.
    pub instructions: String,
}

impl Exercise {
    /// `language/name`, the key results and shards go by.
    pub fn key(&self) -> String {
        format!("{}/{}", self.language, self.name)
    }

    /// The task a model is given: the same words for every model and language.
    pub fn task(&self) -> String {
        format!(
            "{}\n\nSolve this exercise by changing {}. Keep the names of the functions, classes and types that are there: the tests use them. Use only the language's standard library. Do not change the tests.",
            self.instructions.trim(),
            self.solution.join(", ")
        )
    }
}

/// The exercises of `suite`, sorted by language and name: the languages given (all when
/// empty), the names matching `pattern` (a glob; all when `None`).
pub fn discover(
    suite: &Path,
    languages: &[String],
    pattern: Option<&str>,
) -> Result<Vec<Exercise>, BenchError> {
    let glob = match pattern {
        Some(p) => Some(
            globset::Glob::new(p)
                .map_err(|e| BenchError::Usage(format!("--exercises {p}: {e}")))?
                .compile_matcher(),
        ),
        None => None,
    };
    let mut out = Vec::new();
    let entries = std::fs::read_dir(suite).map_err(|e| {
        BenchError::Usage(format!("cannot read the suite {}: {e}", suite.display()))
    })?;
    let mut langs: Vec<String> = entries
        .flatten()
        .filter(|e| e.path().join("exercises/practice").is_dir())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    langs.sort();
    for wanted in languages {
        if !langs.contains(wanted) {
            return Err(BenchError::Usage(format!(
                "the suite has no language {wanted} (it has: {})",
                langs.join(", ")
            )));
        }
    }
    for language in langs
        .iter()
        .filter(|l| languages.is_empty() || languages.contains(l))
    {
        let practice = suite.join(language).join("exercises/practice");
        let mut names: Vec<String> = std::fs::read_dir(&practice)
            .map_err(|e| BenchError::Usage(format!("cannot read {}: {e}", practice.display())))?
            .flatten()
            .filter(|e| e.path().join(".meta/config.json").is_file())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| glob.as_ref().is_none_or(|g| g.is_match(n)))
            .collect();
        names.sort();
        for name in names {
            out.push(read_exercise(language, &name, &practice.join(&name))?);
        }
    }
    Ok(out)
}

fn read_exercise(language: &str, name: &str, dir: &Path) -> Result<Exercise, BenchError> {
    let config_path = dir.join(".meta/config.json");
    let text = std::fs::read_to_string(&config_path)
        .map_err(|e| BenchError::Suite(format!("{}: {e}", config_path.display())))?;
    let config: Value = serde_json::from_str(&text)
        .map_err(|e| BenchError::Suite(format!("{}: {e}", config_path.display())))?;
    let files = |kind: &str| -> Vec<String> {
        config["files"][kind]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f.as_str().map(str::to_string))
            .collect()
    };
    let solution = files("solution");
    if solution.is_empty() {
        return Err(BenchError::Suite(format!(
            "{} names no solution files",
            config_path.display()
        )));
    }
    let mut instructions = String::new();
    for doc in ["instructions.md", "instructions.append.md"] {
        if let Ok(t) = std::fs::read_to_string(dir.join(".docs").join(doc)) {
            instructions.push_str(t.trim());
            instructions.push_str("\n\n");
        }
    }
    Ok(Exercise {
        language: language.to_string(),
        name: name.to_string(),
        dir: dir.to_path_buf(),
        solution,
        test: files("test"),
        example: files("example"),
        instructions,
    })
}

/// The language's test command, detected from the exercise unless the suite's config names
/// one for the language.
pub fn test_command(ex: &Exercise, overrides: &BTreeMap<String, String>) -> Option<String> {
    if let Some(c) = overrides.get(&ex.language) {
        return Some(c.clone());
    }
    let has = |f: &str| ex.dir.join(f).exists();
    Some(
        if has("Cargo.toml") {
            "cargo test -- --include-ignored"
        } else if has("go.mod") {
            "go test ./..."
        } else if has("package.json") {
            "npm test"
        } else if has("gradlew") {
            "./gradlew test --offline"
        } else if has("CMakeLists.txt") {
            "cmake -S . -B build && cmake --build build && ctest --test-dir build --output-on-failure"
        } else if ex.language == "python" || ex.test.iter().any(|t| t.ends_with(".py")) {
            "pytest -q"
        } else {
            return None;
        }
        .to_string(),
    )
}

/// Per-language test commands from the suite's `slmcode-bench.yaml` (`test_commands:
/// {python: "pytest -q"}`), when it has one.
pub fn test_commands_of(suite: &Path) -> Result<BTreeMap<String, String>, BenchError> {
    #[derive(serde::Deserialize, Default)]
    struct SuiteConfig {
        #[serde(default)]
        test_commands: BTreeMap<String, String>,
    }
    let file = suite.join("slmcode-bench.yaml");
    let Ok(text) = std::fs::read_to_string(&file) else {
        return Ok(BTreeMap::new());
    };
    let parsed: SuiteConfig = serde_saphyr::from_str(&text)
        .map_err(|e| BenchError::Suite(format!("{} is not valid: {e}", file.display())))?;
    Ok(parsed.test_commands)
}

/// Copies the exercise into `into` — everything but `.meta/` (where the example lives), the
/// example files, and `.git` — so the model starts from the stub and the tests.
pub fn copy_exercise(ex: &Exercise, into: &Path) -> std::io::Result<()> {
    copy_dir(&ex.dir, into, &ex.dir, &ex.example)
}

fn copy_dir(from: &Path, to: &Path, root: &Path, skip: &[String]) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let path = entry.path();
        let rel = path
            .strip_prefix(root)
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        let name = entry.file_name();
        if name == ".meta" || name == ".git" || skip.contains(&rel) {
            continue;
        }
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_dir(&path, &to.join(&name), root, skip)?;
        } else if kind.is_file() {
            std::fs::copy(&path, to.join(&name))?;
        }
    }
    Ok(())
}

/// Shard `i` of `n` (1-based): every `n`th exercise of the sorted list, from the `i`th — a
/// deterministic slice, so shards on different machines never overlap and together cover all.
pub fn shard(exercises: Vec<Exercise>, i: usize, n: usize) -> Vec<Exercise> {
    exercises
        .into_iter()
        .enumerate()
        .filter(|(k, _)| k % n == i - 1)
        .map(|(_, e)| e)
        .collect()
}

/// `I/N` as `--shard` takes it.
pub fn parse_shard(text: &str) -> Result<(usize, usize), BenchError> {
    let bad = || BenchError::Usage(format!("--shard takes I/N with 1 <= I <= N, not `{text}`"));
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if i == 0 || n == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exercise(dir: &Path, lang: &str, name: &str) -> PathBuf {
        let ex = dir.join(lang).join("exercises/practice").join(name);
        std::fs::create_dir_all(ex.join(".meta")).unwrap();
        std::fs::create_dir_all(ex.join(".docs")).unwrap();
        std::fs::write(
            ex.join(".meta/config.json"),
            format!(r#"{{"files": {{"solution": ["{name}.py"], "test": ["{name}_test.py"], "example": [".meta/example.py"]}}}}"#),
        )
        .unwrap();
        std::fs::write(ex.join(".meta/example.py"), "SECRET = 1\n").unwrap();
        std::fs::write(
            ex.join(".docs/instructions.md"),
            "# Add\nAdd two numbers.\n",
        )
        .unwrap();
        std::fs::write(ex.join(format!("{name}.py")), "def add(a, b):\n    pass\n").unwrap();
        std::fs::write(ex.join(format!("{name}_test.py")), "from add import add\n").unwrap();
        ex
    }

    #[test]
    fn exercises_are_found_filtered_and_copied_without_the_example() {
        let suite = tempfile::tempdir().unwrap();
        exercise(suite.path(), "python", "add");
        exercise(suite.path(), "python", "bob");
        exercise(suite.path(), "rust", "add");
        let all = discover(suite.path(), &[], None).unwrap();
        let keys: Vec<String> = all.iter().map(Exercise::key).collect();
        assert_eq!(keys, vec!["python/add", "python/bob", "rust/add"]);
        let some = discover(suite.path(), &["python".into()], Some("a*")).unwrap();
        assert_eq!(some.len(), 1);
        assert!(some[0]
            .task()
            .starts_with("# Add\nAdd two numbers.\n\nSolve this exercise by changing add.py."));
        assert_eq!(
            test_command(&some[0], &BTreeMap::new()).as_deref(),
            Some("pytest -q")
        );
        let work = tempfile::tempdir().unwrap();
        copy_exercise(&some[0], work.path()).unwrap();
        assert!(work.path().join("add.py").exists() && work.path().join("add_test.py").exists());
        assert!(!work.path().join(".meta").exists());
        let err = discover(suite.path(), &["cobol".into()], None).unwrap_err();
        assert!(
            err.to_string()
                .contains("no language cobol (it has: python, rust)"),
            "{err}"
        );
    }

    #[test]
    fn shards_cover_everything_once() {
        let suite = tempfile::tempdir().unwrap();
        for n in ["a", "b", "c", "d", "e"] {
            exercise(suite.path(), "python", n);
        }
        let all = discover(suite.path(), &[], None).unwrap();
        let mut seen: Vec<String> = Vec::new();
        for i in 1..=3 {
            for e in shard(all.clone(), i, 3) {
                assert!(!seen.contains(&e.key()));
                seen.push(e.key());
            }
        }
        seen.sort();
        assert_eq!(seen, all.iter().map(Exercise::key).collect::<Vec<_>>());
        assert_eq!(parse_shard("2/3").unwrap(), (2, 3));
        for bad in ["0/3", "4/3", "x", "1/0"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }
}
