//! What a command gets of its own: shared memory, caches, a private temp directory, and a memory
//! bound that stops it.

use super::*;

/// Test suites that use shared memory (Python's multiprocessing: a pool and a lock) run, in a
/// /dev/shm of the command's own.
#[test]
fn shared_memory_works_and_stays_private() {
    let p = Project::new();
    let text = allowed_script(
        &p,
        "pool.py",
        "import multiprocessing as mp, os\n\
         if __name__ == '__main__':\n\
         \x20   with mp.Pool(2) as pool:\n\
         \x20       print(pool.map(abs, [-1, -2]))\n\
         \x20   lock = mp.Lock()\n\
         \x20   open('/dev/shm/slmcode-test-marker', 'w').write('x')\n\
         \x20   print('lock ok')\n",
        &[],
    );
    let portable =
        slmcode_aci::platform::Platform::current() != slmcode_aci::platform::Platform::Linux;
    let full = !portable && require_full_sandbox(&text);
    if portable || full {
        assert!(text.contains("[1, 2]\nlock ok"), "{text}");
    }
    if portable {
        // Unconfined: the marker went to the machine's /dev/shm, and is removed.
        let _ = std::fs::remove_file("/dev/shm/slmcode-test-marker");
    } else if full {
        // Written inside, absent outside.
        assert!(!std::path::Path::new("/dev/shm/slmcode-test-marker").exists());
    }
}

/// Caches (go's build cache, pip's, npm's) are written to a directory of the project's own,
/// kept between calls; the user's own cache directory stays out of reach.
#[test]
fn caches_persist_in_a_directory_of_the_projects_own() {
    let p = Project::new();
    let user_cache = tempfile::tempdir().unwrap();
    let base = user_cache.path().display().to_string();
    p.write(
        "cache.py",
        "import os, sys\n\
         d = os.environ['XDG_CACHE_HOME']\n\
         os.makedirs(d + '/tool', exist_ok=True)\n\
         p = d + '/tool/count'\n\
         n = int(open(p).read()) if os.path.exists(p) else 0\n\
         open(p, 'w').write(str(n + 1))\n\
         print('count', n + 1)\n\
         try:\n\
         \x20   open(sys.argv[1] + '/go-build', 'w').write('poison')\n\
         \x20   print('POISONED')\n\
         except OSError:\n\
         \x20   print('DENIED')\n",
    );
    let command = format!("python3 cache.py {base}");
    // The user's own cache is out of reach only where writes are confined.
    let confined = common::native("the user's cache read-only to commands");
    for n in 1..=2 {
        let (text, err) = p.tool_env(
            "ws_shell",
            &json!({"command": command}).to_string(),
            &[
                ("SLMCODE_SHELL_ALLOW", command.as_str()),
                ("XDG_CACHE_HOME", base.as_str()),
            ],
        );
        assert!(!err, "{text}");
        assert!(text.contains(&format!("count {n}\n")), "{text}");
        assert!(!confined || text.contains("DENIED"), "{text}");
    }
    assert!(!confined || !user_cache.path().join("go-build").exists());
    assert!(user_cache.path().join("slmcode/sandbox").is_dir());
}

/// A project cloned where another was deleted starts with an empty cache: the cache is keyed
/// by the root's identity (device and inode) as well as its path, so nothing the old project's
/// builds left there (a poisoned build cache) reaches the new one.
#[test]
fn a_project_cloned_where_another_was_deleted_starts_with_an_empty_cache() {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("project");
    let user_cache = tempfile::tempdir().unwrap();
    let script = "import os\n\
                  p = os.environ['XDG_CACHE_HOME'] + '/planted'\n\
                  print('found' if os.path.exists(p) else 'empty')\n\
                  open(p, 'w').write('x')\n";
    let call = |root: &std::path::Path| -> String {
        std::fs::create_dir_all(root).unwrap();
        std::fs::write(root.join("c.py"), script).unwrap();
        let out = common::bin()
            .args([
                "tool",
                "ws_shell",
                r#"{"command": "python3 c.py"}"#,
                "--root",
            ])
            .arg(root)
            .env("SLMCODE_SHELL_ALLOW", "python3 c.py")
            .env("XDG_CACHE_HOME", user_cache.path())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let first = call(&root);
    assert!(first.contains("empty\n"), "{first}");
    let again = call(&root);
    assert!(
        again.contains("found\n"),
        "the project lost its cache: {again}"
    );
    // The project goes from its path (kept on disk, so its inode cannot be reused), and another
    // is cloned there.
    std::fs::rename(&root, base.path().join("deleted")).unwrap();
    let cloned = call(&root);
    assert!(cloned.contains("empty\n"), "{cloned}");
}

/// The call's temp directory is made fresh and private (mkdtemp, 0700) under a per-user
/// directory that must be this user's and private: one planted in a shared /tmp (a symlink, or
/// open to others) is refused, never used.
#[test]
fn the_temp_directory_is_private_and_never_a_planted_one() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let p = Project::new();
    let uid = std::fs::metadata("/proc/self").unwrap().uid();
    let run_with_tmp = |tmp: &std::path::Path| {
        p.tool_env(
            "ws_shell",
            &json!({"command": "echo \"$TMPDIR\"; stat -c %a \"$TMPDIR\"; echo x > \"$TMPDIR/f\""})
                .to_string(),
            &[("TMPDIR", tmp.to_str().unwrap())],
        )
    };
    // A normal call: a fresh 0700 directory, gone afterwards.
    let shared = tempfile::tempdir().unwrap();
    let (text, err) = run_with_tmp(shared.path());
    assert!(!err, "{text}");
    let dir = text.lines().next().unwrap().to_string();
    assert!(
        dir.starts_with(&format!("{}/slmcode-{uid}/shell-", shared.path().display())),
        "{text}"
    );
    assert_eq!(text.lines().nth(1), Some("700"), "{text}");
    assert!(
        !std::path::Path::new(&dir).exists(),
        "the temp dir outlived the call"
    );
    let (again, _) = run_with_tmp(shared.path());
    assert_ne!(
        again.lines().next(),
        Some(dir.as_str()),
        "names are not reused"
    );
    // A planted base: a symlink to somewhere the planter reads.
    let planted = tempfile::tempdir().unwrap();
    let watched = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        watched.path(),
        planted.path().join(format!("slmcode-{uid}")),
    )
    .unwrap();
    let (text, err) = run_with_tmp(planted.path());
    assert!(err, "{text}");
    assert!(
        text.contains("is not a private directory of this user"),
        "{text}"
    );
    assert_eq!(std::fs::read_dir(watched.path()).unwrap().count(), 0);
    // A base others may write.
    let open = tempfile::tempdir().unwrap();
    let base = open.path().join(format!("slmcode-{uid}"));
    std::fs::create_dir(&base).unwrap();
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (text, err) = run_with_tmp(open.path());
    assert!(
        err && text.contains("is not a private directory of this user"),
        "{text}"
    );
}

/// `shell_memory_max` bounds a command and everything it starts; going over is said in the
/// result, in words a model can act on. A project may lower the bound, never raise it.
#[test]
fn a_command_over_shell_memory_max_is_stopped_and_told() {
    let p = Project::new();
    let alloc = |mib: u32| {
        json!({"command": format!("python3 -c \"b = b'x' * ({mib} << 20); print('allocated', len(b) >> 20)\"")})
            .to_string()
    };
    // The user's bound, in the user's config.
    let user = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(user.path().join("slmcode")).unwrap();
    std::fs::write(
        user.path().join("slmcode/config.yaml"),
        "shell_memory_max: 128MiB\nshell_allow: [python3]\n",
    )
    .unwrap();
    let xdg = user.path().to_str().unwrap();
    let env = [("XDG_CONFIG_HOME", xdg)];
    let (text, err) = p.tool_env("ws_shell", &alloc(400), &env);
    assert!(!err, "{text}");
    assert!(!text.contains("allocated"), "{text}");
    assert!(
        text.contains("shell_memory_max (128 MiB")
            && text.contains("ask the user to raise shell_memory_max"),
        "{text}"
    );
    let (text, err) = p.tool_env("ws_shell", &alloc(16), &env);
    assert!(!err, "{text}");
    assert!(text.contains("allocated 16\n[exit code 0]"), "{text}");
    assert!(!text.contains("shell_memory_max"), "{text}");
    // The project asks for more: ignored, the user's bound stays, and config show says so.
    p.write(".slmcode/config.yaml", "shell_memory_max: 4GiB\n");
    let (text, _) = p.tool_env("ws_shell", &alloc(400), &env);
    assert!(text.contains("shell_memory_max (128 MiB"), "{text}");
    let out = common::bin()
        .args(["config", "show", "--root"])
        .arg(p.root())
        .env("XDG_CONFIG_HOME", xdg)
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    let line = shown
        .lines()
        .find(|l| l.contains("shell_memory_max"))
        .unwrap_or_default();
    assert!(line.contains("128MiB") && line.contains("4GiB"), "{shown}");
}
