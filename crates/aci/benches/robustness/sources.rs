//! Where the real source files come from: found on this machine at run time, never copied into
//! the repository. Sorted walks and fixed caps keep the sample deterministic for a given machine.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What a file is written in; decides the comment marker of an inserted line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    Rust,
    Python,
    JavaScript,
    Go,
    Other,
}

impl Lang {
    fn of(path: &Path) -> Lang {
        match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
            "rs" => Lang::Rust,
            "py" => Lang::Python,
            "js" | "mjs" | "cjs" => Lang::JavaScript,
            "go" => Lang::Go,
            _ => Lang::Other,
        }
    }

    /// The line-comment marker used for an inserted line.
    pub fn comment(self, path_name: &str) -> &'static str {
        match self {
            Lang::Python => "#",
            Lang::Other
                if [".sh", ".rb", ".pl", ".toml", ".yaml", ".yml"]
                    .iter()
                    .any(|e| path_name.ends_with(e)) =>
            {
                "#"
            }
            _ => "//",
        }
    }
}

/// One real file, loaded.
pub struct SourceFile {
    /// Shown in reports: the set's label and the path inside its directory.
    pub label: String,
    /// The file name used inside the temporary workspace.
    pub name: String,
    pub lang: Lang,
    pub text: String,
}

/// One directory the files came from.
pub struct SourceSet {
    pub title: String,
    pub dir: Option<PathBuf>,
    pub files: Vec<SourceFile>,
    /// Why the set is empty, or how it was chosen.
    pub note: String,
}

/// The selection rule for one directory.
struct Rule<'a> {
    exts: &'a [&'a str],
    min_lines: usize,
    max_lines: usize,
    max_files: usize,
    /// Paths (relative to the directory) to leave out.
    skip: &'a dyn Fn(&str) -> bool,
}

const SKIP_DIRS: &[&str] = &[
    "target",
    "node_modules",
    "site-packages",
    "__pycache__",
    "testdata",
    ".git",
];

/// Every file under `dir` in sorted depth-first order (directory entries sorted by name).
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().to_string();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            if !name.starts_with('.') && !SKIP_DIRS.contains(&name.as_str()) {
                walk(&e.path(), out);
            }
        } else if ft.is_file() {
            out.push(e.path());
        }
    }
}

fn collect(title: &str, dir: &Path, rule: &Rule) -> SourceSet {
    let mut paths = Vec::new();
    walk(dir, &mut paths);
    let mut files = Vec::new();
    let mut seen = 0usize;
    for p in paths {
        if files.len() >= rule.max_files {
            break;
        }
        let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !rule.exts.contains(&ext) {
            continue;
        }
        let rel = p
            .strip_prefix(dir)
            .unwrap_or(&p)
            .to_string_lossy()
            .to_string();
        if (rule.skip)(&rel) {
            continue;
        }
        seen += 1;
        let Ok(bytes) = std::fs::read(&p) else {
            continue;
        };
        // CR and NUL bytes would blur what the CRLF drift tests; non-UTF-8 is refused by design.
        if bytes.contains(&b'\r') || bytes.contains(&0) {
            continue;
        }
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        let n = text.lines().count();
        if n < rule.min_lines || n > rule.max_lines {
            continue;
        }
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_else(|| "file".into());
        files.push(SourceFile {
            label: format!("{title}:{rel}"),
            name,
            lang: Lang::of(&p),
            text,
        });
    }
    let note = format!(
        "{} file(s) of {}–{} lines (first {} in sorted order, .{}; {} candidates looked at)",
        files.len(),
        rule.min_lines,
        rule.max_lines,
        rule.max_files,
        rule.exts.join("/."),
        seen
    );
    SourceSet {
        title: title.to_string(),
        dir: Some(dir.to_path_buf()),
        files,
        note,
    }
}

fn command_line(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

/// A source set this machine lacks: said in the report and counted as a skip.
fn empty(title: &str, note: &str) -> SourceSet {
    crate::skip::skip(&format!("robustness bench: the {title} sources"), note);
    SourceSet {
        title: title.to_string(),
        dir: None,
        files: Vec::new(),
        note: note.to_string(),
    }
}

/// The sets to sample: `ROBUSTNESS_DIRS` (colon-separated) when given, else this repository's
/// Rust sources, the Python stdlib, npm's own JavaScript and any Go tree.
pub fn gather() -> Vec<SourceSet> {
    let no_skip = |_: &str| false;
    if let Ok(dirs) = std::env::var("ROBUSTNESS_DIRS") {
        let rule = Rule {
            exts: &[
                "rs", "py", "js", "mjs", "cjs", "go", "ts", "c", "h", "java", "rb", "sh",
            ],
            min_lines: 20,
            max_lines: 3000,
            max_files: 60,
            skip: &no_skip,
        };
        return dirs
            .split(':')
            .filter(|d| !d.trim().is_empty())
            .map(|d| {
                let p = PathBuf::from(d);
                if p.is_dir() {
                    collect(d, &p, &rule)
                } else {
                    empty(d, "not a directory")
                }
            })
            .collect();
    }

    let mut sets = Vec::new();

    // This repository's own Rust sources (the benchmark itself is left out so editing it does
    // not move the sample).
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let crates = crates.canonicalize().unwrap_or(crates);
    let skip_self = |rel: &str| rel.contains("benches/robustness");
    sets.push(collect(
        "slmcode",
        &crates,
        &Rule {
            exts: &["rs"],
            min_lines: 30,
            max_lines: 3000,
            max_files: 200,
            skip: &skip_self,
        },
    ));

    match command_line(
        "python3",
        &[
            "-c",
            "import sysconfig;print(sysconfig.get_paths()[\"stdlib\"])",
        ],
    ) {
        Some(dir) => sets.push(collect(
            "python-stdlib",
            Path::new(&dir),
            &Rule {
                exts: &["py"],
                min_lines: 100,
                max_lines: 1500,
                max_files: 30,
                skip: &no_skip,
            },
        )),
        None => sets.push(empty("python-stdlib", "python3 not found; skipped")),
    }

    match command_line("npm", &["root", "-g"]) {
        Some(root) => {
            let dir = Path::new(&root).join("npm").join("lib");
            if dir.is_dir() {
                sets.push(collect(
                    "npm",
                    &dir,
                    &Rule {
                        exts: &["js"],
                        min_lines: 50,
                        max_lines: 1500,
                        max_files: 30,
                        skip: &no_skip,
                    },
                ));
            } else {
                sets.push(empty(
                    "npm",
                    &format!("{} not found; skipped", dir.display()),
                ));
            }
        }
        None => sets.push(empty("npm", "npm not found; skipped")),
    }

    let mut go_roots: Vec<PathBuf> = std::fs::read_dir("/usr/lib")
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| {
                    let n = e.file_name().to_string_lossy().to_string();
                    n == "go" || n.starts_with("go-") || n.starts_with("go1") || n == "golang"
                })
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    // Debian's golang-*-src packages put the tree under /usr/share.
    if let Ok(rd) = std::fs::read_dir("/usr/share") {
        go_roots.extend(
            rd.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("go-"))
                .map(|e| e.path()),
        );
    }
    go_roots.sort();
    go_roots.push(PathBuf::from("/usr/local/go"));
    let go_rule = Rule {
        exts: &["go"],
        min_lines: 50,
        max_lines: 1500,
        max_files: 30,
        skip: &no_skip,
    };
    let go = go_roots
        .iter()
        .filter(|r| r.is_dir())
        .map(|r| collect("go", &r.join("src"), &go_rule))
        .find(|s| !s.files.is_empty());
    sets.push(go.unwrap_or_else(|| {
        empty(
            "go",
            "no Go files found under /usr/lib/go*, /usr/share/go-* or /usr/local/go; skipped",
        )
    }));
    sets
}
