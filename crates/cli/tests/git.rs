//! git_status and git_diff through the real binary.

mod common;
use common::{git, Project};

fn repo() -> Project {
    let p = Project::new();
    p.write("a.txt", "one\ntwo\n").write("b.txt", "b\n");
    git(p.root(), &["init", "-q"]);
    git(p.root(), &["add", "."]);
    git(p.root(), &["commit", "-qm", "init"]);
    p
}

#[test]
fn status_is_short_and_clean_is_explicit() {
    let p = repo();
    assert_eq!(
        p.ok("git_status", "{}"),
        "(working tree clean: no changes and no untracked files)"
    );
    p.write("a.txt", "one\nTWO\n").write("new.txt", "n\n");
    assert_eq!(p.ok("git_status", "{}"), " M a.txt\n?? new.txt");
}

#[test]
fn status_does_not_write_the_index() {
    let p = repo();
    p.write("a.txt", "one\nTWO\n");
    let index = p.path(".git/index");
    let before = std::fs::read(&index).unwrap();
    // Make the index stat data stale so a normal `git status` would refresh and rewrite it.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    p.write("b.txt", "b\n");
    p.ok("git_status", "{}");
    assert_eq!(std::fs::read(&index).unwrap(), before);
}

#[test]
fn diff_whole_and_one_path() {
    let p = repo();
    p.write("a.txt", "one\nTWO\n").write("b.txt", "B\n");
    let text = p.ok("git_diff", "{}");
    assert!(
        text.contains("--- a/a.txt") && text.contains("+TWO") && text.contains("+B"),
        "{text}"
    );
    let text = p.ok("git_diff", r#"{"path":"a.txt"}"#);
    assert!(text.contains("+TWO") && !text.contains("+B"), "{text}");
    assert_eq!(
        p.ok("git_diff", r#"{"path":"nothing-here.txt"}"#),
        "(no unstaged changes in nothing-here.txt)"
    );
    let msg = p.err("git_diff", r#"{"path":"../x"}"#);
    assert!(msg.contains("\"..\" is refused"), "{msg}");
}

#[test]
fn staged_changes() {
    let p = repo();
    p.write("a.txt", "staged\n");
    git(p.root(), &["add", "a.txt"]);
    assert_eq!(p.ok("git_diff", "{}"), "(no unstaged changes)");
    assert!(p.ok("git_diff", r#"{"staged":true}"#).contains("+staged"));
}

#[test]
fn big_diff_is_capped_with_the_changed_files_named() {
    let p = repo();
    let big: String = (0..2000).map(|i| format!("changed line {i}\n")).collect();
    p.write("a.txt", &big).write("b.txt", &big);
    let text = p.ok("git_diff", "{}");
    assert!(text.chars().count() <= 8000);
    assert!(text.contains("chars in all"), "{text}");
    assert!(text.contains(r#"Pass a path to see one file: git_diff {"path":"a.txt"}. Changed files: a.txt, b.txt."#), "{text}");
}

#[test]
fn outside_a_repository_is_explained() {
    let p = Project::new();
    p.write("a.txt", "x\n");
    // A ceiling keeps git from finding a repository above the temp dir.
    let ceiling = p.root().parent().unwrap().to_str().unwrap();
    for tool in ["git_status", "git_diff"] {
        let (msg, err) = p.tool_env(tool, "{}", &[("GIT_CEILING_DIRECTORIES", ceiling)]);
        assert!(err, "{tool}");
        assert!(msg.starts_with("not a git repository"), "{tool}: {msg}");
    }
}

#[test]
fn without_git_installed_is_explained() {
    let p = repo();
    let empty = tempfile::tempdir().unwrap();
    let (msg, err) = p.tool_env(
        "git_status",
        "{}",
        &[("PATH", empty.path().to_str().unwrap())],
    );
    assert!(err);
    assert!(msg.starts_with("git is not installed"), "{msg}");
}
