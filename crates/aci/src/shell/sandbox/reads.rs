//! What a command may read: the view every platform's sandbox builds its read rules from.
//!
//! A command sees the system (`/usr`, `/etc`, `/opt`…), the project, the call's temp and cache
//! directories, the directories on `PATH`, and from the home only what toolchains need
//! ([`TOOLCHAINS`], read-only) plus what the user's `shell_read_allow` adds. Hidden: the rest
//! of the home, every other home, the shared temp directories, `/run/user`, and every top-level
//! directory that is not the system's (`/srv`, `/mnt`, `/work`…) — so what lies beside a
//! project there is hidden too. Secret stores ([`SECRET_STORES`] in any home, and the
//! system's own) are never readable, whatever the list says.
//!
//! Toolchain directories are read-only on purpose: a command writes its caches to the
//! project's own cache directory (`XDG_CACHE_HOME`, `npm_config_cache`), because a writable
//! `~/.cargo/registry` or `~/go/pkg/mod` would let a project plant code that the user's own
//! builds, outside any sandbox, then compile and run.
//!
//! This computes paths only (asking the file system what exists); the platform modules turn
//! the [`View`] into mounts, Landlock rules or a Seatbelt profile.

use std::path::{Component, Path, PathBuf};

/// Entries of the home every command may read (read-only): toolchains, their caches and
/// installs, git's own settings. Each is shown only where it exists.
pub const TOOLCHAINS: &[&str] = &[
    ".cargo",
    ".rustup",
    ".npm",
    ".nvm",
    ".yarn",
    ".bun",
    ".deno",
    ".volta",
    ".cache/pip",
    ".pyenv",
    ".local/bin",
    ".local/lib",
    ".local/share/uv",
    ".local/share/mise",
    ".asdf",
    ".rbenv",
    ".gem",
    "go",
    ".m2",
    ".gradle",
    ".sdkman",
    ".gitconfig",
    ".config/git",
    ".CFUserTextEncoding",
];

/// Secret stores, relative to a home: keys, tokens, credentials, shell histories, browser
/// profiles. Never readable by a command, even inside a place the user allowed.
pub const SECRET_STORES: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".oci",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".config/gh",
    ".config/hub",
    ".npmrc",
    ".yarnrc.yml",
    ".pypirc",
    ".gem/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".gradle/gradle.properties",
    ".terraform.d/credentials.tfrc.json",
    ".vault-token",
    ".password-store",
    ".local/share/keyrings",
    ".pgpass",
    ".my.cnf",
    ".bash_history",
    ".zsh_history",
    ".local/share/fish/fish_history",
    ".mozilla",
    ".thunderbird",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    ".config/vivaldi",
    ".config/op",
    "Library/Keychains",
    "Library/Cookies",
    "Library/Safari",
    "Library/Mail",
    "Library/Messages",
    "Library/Application Support/Google/Chrome",
    "Library/Application Support/Chromium",
    "Library/Application Support/Firefox",
    "Library/Application Support/BraveSoftware",
    "Library/Application Support/Microsoft Edge",
];

/// Which file system layout the view is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    Linux,
    MacOs,
}

impl Layout {
    /// Top-level directories that are the system's: visible. Every other top-level entry is
    /// hidden.
    fn system(self) -> &'static [&'static str] {
        match self {
            Layout::Linux => &[
                "bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "opt", "proc", "run",
                "sbin", "sys", "usr", "var", "nix", "gnu", "snap",
            ],
            Layout::MacOs => &[
                "Applications",
                "Library",
                "System",
                "bin",
                "dev",
                "etc",
                "opt",
                "private",
                "sbin",
                "usr",
                "var",
            ],
        }
    }

    /// Places under the system's directories that hold other users' or other programs' files:
    /// hidden too (their real paths are taken).
    fn hidden(self) -> &'static [&'static str] {
        match self {
            Layout::Linux => &[
                "/home",
                "/root",
                "/tmp",
                "/var/tmp",
                "/var/mail",
                "/run/user",
            ],
            Layout::MacOs => &[
                "/Users",
                "/private/tmp",
                "/private/var/tmp",
                "/System/Volumes/Data/Users",
            ],
        }
    }

    /// The system's own secrets a process of this user might read (the shadow files when it
    /// is root).
    fn system_secrets(self) -> &'static [&'static str] {
        match self {
            Layout::Linux => &[
                "/etc/shadow",
                "/etc/shadow-",
                "/etc/gshadow",
                "/etc/gshadow-",
                "/etc/ssl/private",
                "/etc/ssh/ssh_host_rsa_key",
                "/etc/ssh/ssh_host_ecdsa_key",
                "/etc/ssh/ssh_host_ed25519_key",
                "/etc/ssh/ssh_host_dsa_key",
            ],
            Layout::MacOs => &["/Library/Keychains", "/private/var/db/sudo"],
        }
    }
}

/// What the view is built from.
pub struct Inputs<'a> {
    pub layout: Layout,
    /// `/`, or a directory standing for it in tests.
    pub fs_root: &'a Path,
    /// The user's home (`HOME`), if any.
    pub home: Option<&'a Path>,
    /// The user's `shell_read_allow`.
    pub allow: &'a [String],
    /// The project (writable).
    pub root: &'a Path,
    /// The call's temp directory (writable).
    pub temp: &'a Path,
    /// The project's cache directory (writable).
    pub cache: Option<&'a Path>,
    /// The directories programs come from.
    pub path_dirs: &'a [PathBuf],
}

/// Why a place is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    Project,
    Temp,
    Cache,
    Toolchain,
    /// The user's `shell_read_allow`.
    Allowed,
    /// A directory on `PATH`.
    Path,
}

/// A place shown inside a hidden one (its real path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub path: PathBuf,
    pub writable: bool,
    pub is_dir: bool,
    pub why: Why,
}

/// What a command sees.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct View {
    /// Places whose contents are hidden (real paths), outermost first; none inside another.
    pub hidden: Vec<PathBuf>,
    /// Every hidden place, nested ones included (Landlock and Seatbelt need them all).
    pub hidden_all: Vec<PathBuf>,
    /// Places inside hidden ones shown again, parents first.
    pub shown: Vec<Shown>,
    /// Symbolic links inside hidden places that are recreated: (where, what it says).
    pub links: Vec<(PathBuf, PathBuf)>,
    /// Secret stores in visible places: unreadable.
    pub secrets: Vec<PathBuf>,
    /// Entries of `shell_read_allow` that are not shown, and why.
    pub refused: Vec<(String, &'static str)>,
}

fn real(path: &Path) -> Option<PathBuf> {
    path.canonicalize().ok()
}

/// `path` is `base` or beneath it.
fn within(path: &Path, base: &Path) -> bool {
    path.starts_with(base)
}

/// A lexically clean absolute path: no `.`/`..`.
fn clean(path: &Path) -> bool {
    path.is_absolute()
        && path
            .components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
}

/// Builds the view for one call.
pub fn view(input: &Inputs) -> View {
    let layout = input.layout;
    let under_root = |p: &str| input.fs_root.join(p.trim_start_matches('/'));
    let home = input
        .home
        .filter(|h| clean(h))
        .and_then(real)
        .filter(|h| h.parent().is_some() && h.is_dir());
    // Hidden: the top-level entries that are not the system's, the homes and the shared
    // temp directories.
    let mut hidden: Vec<PathBuf> = Vec::new();
    if let Ok(entries) = std::fs::read_dir(input.fs_root) {
        for e in entries.flatten() {
            let name = e.file_name();
            let system = name.to_str().is_some_and(|n| layout.system().contains(&n));
            let link = e.file_type().is_ok_and(|t| t.is_symlink());
            if !system && !link {
                hidden.extend(real(&e.path()));
            }
        }
    }
    for p in layout.hidden() {
        hidden.extend(real(&under_root(p)));
    }
    hidden.extend(home.clone());
    // Shown: the project, temp and cache (writable), then what may be read.
    let mut wanted: Vec<(PathBuf, bool, Why)> = vec![
        (input.root.to_path_buf(), true, Why::Project),
        (input.temp.to_path_buf(), true, Why::Temp),
    ];
    wanted.extend(input.cache.map(|c| (c.to_path_buf(), true, Why::Cache)));
    let mut links = Vec::new();
    let mut refused = Vec::new();
    let mut lexical: Vec<(PathBuf, Why, Option<&String>)> = Vec::new();
    if let Some(h) = &home {
        for t in TOOLCHAINS {
            lexical.push((h.join(t), Why::Toolchain, None));
        }
    }
    for entry in input.allow {
        let path = match entry.strip_prefix('~') {
            Some(rest) => match &home {
                Some(h) => h.join(rest.trim_start_matches('/')),
                None => {
                    refused.push((entry.clone(), "there is no home directory"));
                    continue;
                }
            },
            None => under_root(entry),
        };
        lexical.push((path, Why::Allowed, Some(entry)));
    }
    let secret_names: Vec<PathBuf> = home
        .iter()
        .flat_map(|h| SECRET_STORES.iter().map(move |s| h.join(s)))
        .collect();
    // Where the home's secret stores really are (one may be a link elsewhere), found once.
    let secret_targets: Vec<PathBuf> = secret_names.iter().filter_map(|s| real(s)).collect();
    for (path, why, entry) in lexical {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            if let Some(e) = entry {
                refused.push((e.clone(), "it does not exist"));
            }
            continue;
        };
        let Some(target) = real(&path) else {
            continue;
        };
        // A secret store by its name in the home, or by where it really is.
        let secret = secret_names.iter().any(|s| within(&path, s))
            || secret_targets.iter().any(|s| within(&target, s))
            || layout
                .system_secrets()
                .iter()
                .any(|s| within(&target, &under_root(s)));
        if secret {
            if let Some(e) = entry {
                refused.push((e.clone(), "it is a secret store"));
            }
            continue;
        }
        if meta.file_type().is_symlink() {
            if let Ok(text) = std::fs::read_link(&path) {
                links.push((path.clone(), text));
            }
        }
        wanted.push((target, false, why));
    }
    for dir in input.path_dirs {
        let Some(target) = real(dir) else { continue };
        // Never a directory that holds a hidden place (a PATH entry of `~` or `/home`).
        if hidden.iter().any(|h| within(h, &target)) {
            continue;
        }
        wanted.push((target, false, Why::Path));
    }
    // A place the project, temp, cache or the user's list shows is no longer hidden beneath.
    hidden.retain(|h| {
        !wanted.iter().any(|(w, _, why)| {
            within(h, w) && matches!(why, Why::Project | Why::Temp | Why::Cache | Why::Allowed)
        })
    });
    hidden.sort();
    hidden.dedup();
    let hidden_all = hidden.clone();
    let outer: Vec<PathBuf> = hidden
        .iter()
        .filter(|h| !hidden.iter().any(|o| o != *h && within(h, o)))
        .cloned()
        .collect();
    // Shown only what lies in a hidden place; a read-only place inside another shown one is
    // already there.
    let in_hidden = |p: &Path| hidden.iter().any(|h| within(p, h));
    let mut shown: Vec<Shown> = Vec::new();
    wanted.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    for (path, writable, why) in &wanted {
        if !in_hidden(path) {
            continue;
        }
        if shown.iter().any(|s| s.path == *path) {
            continue;
        }
        let inside_other = wanted
            .iter()
            .any(|(o, w, _)| o != path && within(path, o) && in_hidden(o) && (*w || !*writable));
        if !*writable && inside_other {
            continue;
        }
        shown.push(Shown {
            path: path.clone(),
            writable: *writable,
            is_dir: path.is_dir(),
            why: *why,
        });
    }
    shown.sort_by_key(|s| s.path.components().count());
    links.retain(|(l, _)| in_hidden(l));
    // Secrets: the stores of every home and the system's, where something visible holds them.
    let visible = |p: &Path| !in_hidden(p) || shown.iter().any(|s| within(p, &s.path));
    let mut homes: Vec<PathBuf> = home.iter().cloned().collect();
    homes.extend(real(&under_root("/root")));
    for base in ["/home", "/Users"] {
        let base = under_root(base);
        let relevant = shown
            .iter()
            .any(|s| within(&s.path, &base) || within(&base, &s.path))
            || !in_hidden(&base);
        if relevant {
            if let Ok(entries) = std::fs::read_dir(&base) {
                homes.extend(entries.flatten().filter_map(|e| real(&e.path())));
            }
        }
    }
    homes.sort();
    homes.dedup();
    let mut secrets = Vec::new();
    for h in &homes {
        for s in SECRET_STORES {
            let p = h.join(s);
            // A store that holds the project is the user's choice of project: left as it is
            // (the file tools read it anyway), or the mask would hide the project itself.
            if std::fs::symlink_metadata(&p).is_err() || within(input.root, &p) {
                continue;
            }
            // The store by its name, and where it really is when it links elsewhere.
            if visible(&p) {
                secrets.push(p.clone());
            }
            secrets.extend(real(&p).filter(|r| *r != p && visible(r)));
        }
    }
    for s in layout.system_secrets() {
        let p = under_root(s);
        // Only what this user could read at all.
        let readable = if p.is_dir() {
            std::fs::read_dir(&p).is_ok()
        } else {
            std::fs::File::open(&p).is_ok()
        };
        if readable && visible(&p) {
            secrets.push(p);
        }
    }
    secrets.sort();
    secrets.dedup();
    View {
        hidden: outer,
        hidden_all,
        shown,
        links,
        secrets,
        refused,
    }
}

impl View {
    /// What a command may read, in words, for `slmcode doctor`: the places shown from the
    /// home and elsewhere, the secret stores kept unreadable, the entries not shown.
    pub fn describe(&self, home: Option<&Path>) -> String {
        let name = |p: &Path| match home.and_then(|h| p.strip_prefix(h).ok()) {
            Some(rel) if rel.as_os_str().is_empty() => "~".to_string(),
            Some(rel) => format!("~/{}", rel.display()),
            None => p.display().to_string(),
        };
        let list = |why: &[Why]| -> Vec<String> {
            self.shown
                .iter()
                .filter(|s| why.contains(&s.why))
                .map(|s| name(&s.path))
                .collect()
        };
        let mut out =
            String::from("the system, the project, the call's temp and cache directories and PATH");
        let toolchains = list(&[Why::Toolchain]);
        if !toolchains.is_empty() {
            out.push_str(&format!(
                "; toolchains (read-only): {}",
                toolchains.join(", ")
            ));
        }
        let allowed = list(&[Why::Allowed]);
        if !allowed.is_empty() {
            out.push_str(&format!(
                "; shell_read_allow (read-only): {}",
                allowed.join(", ")
            ));
        }
        out.push_str("; hidden: the rest of the home, other homes, the shared temp directories and what lies beside the project there");
        if !self.secrets.is_empty() {
            let names: Vec<String> = self.secrets.iter().map(|s| name(s)).collect();
            out.push_str(&format!(
                "; secret stores kept unreadable inside what is shown: {}",
                names.join(", ")
            ));
        }
        for (entry, why) in &self.refused {
            out.push_str(&format!("; `{entry}` not shown: {why}"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake file system: `/` is a temp directory.
    struct Fs {
        dir: tempfile::TempDir,
    }

    impl Fs {
        fn new(paths: &[&str]) -> Fs {
            let dir = tempfile::tempdir().unwrap();
            for p in paths {
                let full = dir.path().join(p.trim_start_matches('/'));
                if let Some(file) = p.strip_suffix('!') {
                    let full = dir.path().join(file.trim_start_matches('/'));
                    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
                    std::fs::write(full, "x").unwrap();
                } else {
                    std::fs::create_dir_all(full).unwrap();
                }
            }
            Fs { dir }
        }

        fn p(&self, rel: &str) -> PathBuf {
            self.dir
                .path()
                .canonicalize()
                .unwrap()
                .join(rel.trim_start_matches('/'))
        }

        fn view(&self, allow: &[&str], path: &[&str]) -> View {
            let allow: Vec<String> = allow.iter().map(|s| s.to_string()).collect();
            let path: Vec<PathBuf> = path.iter().map(|p| self.p(p)).collect();
            let (home, root, temp, cache) = (
                self.p("/home/me"),
                self.p("/home/me/src/proj"),
                self.p("/tmp/slmcode-1/shell-x"),
                self.p("/home/me/.cache/slmcode/sandbox/k"),
            );
            view(&Inputs {
                layout: Layout::Linux,
                fs_root: &self.p("/"),
                home: Some(&home),
                allow: &allow,
                root: &root,
                temp: &temp,
                cache: Some(&cache),
                path_dirs: &path,
            })
        }

        fn rel(&self, paths: impl IntoIterator<Item = PathBuf>) -> Vec<String> {
            let root = self.p("/");
            paths
                .into_iter()
                .map(|p| format!("/{}", p.strip_prefix(&root).unwrap().display()))
                .collect()
        }
    }

    const TREE: &[&str] = &[
        "/usr/bin",
        "/etc",
        "/opt/go/bin",
        "/srv/other",
        "/work/main",
        "/home/me/src/proj",
        "/home/me/src/sibling",
        "/home/me/.cargo/bin",
        "/home/me/.cargo/credentials.toml!",
        "/home/me/.ssh/id_rsa!",
        "/home/me/.config/gh",
        "/home/me/.config/tool",
        "/home/me/.gitconfig!",
        "/home/me/.cache/slmcode/sandbox/k",
        "/home/you/.ssh",
        "/root",
        "/tmp/slmcode-1/shell-x",
        "/tmp/other",
        "/var/tmp",
        "/var/lib",
    ];

    #[test]
    fn the_home_shows_only_toolchains_and_the_project_and_the_rest_is_hidden() {
        let fs = Fs::new(TREE);
        let v = fs.view(&[], &["/usr/bin", "/home/me/.cargo/bin"]);
        assert_eq!(
            fs.rel(v.hidden.clone()),
            ["/home", "/root", "/srv", "/tmp", "/var/tmp", "/work"]
        );
        let shown: Vec<(String, bool)> = v
            .shown
            .iter()
            .map(|s| (fs.rel([s.path.clone()])[0].clone(), s.writable))
            .collect();
        assert_eq!(
            shown,
            [
                ("/home/me/.cargo".to_string(), false),
                ("/home/me/.gitconfig".to_string(), false),
                ("/tmp/slmcode-1/shell-x".to_string(), true),
                ("/home/me/src/proj".to_string(), true),
                ("/home/me/.cache/slmcode/sandbox/k".to_string(), true),
            ]
        );
        // The toolchain's own secret is kept unreadable; the other home's are hidden already.
        assert_eq!(
            fs.rel(v.secrets.clone()),
            ["/home/me/.cargo/credentials.toml"]
        );
        assert!(v.refused.is_empty());
    }

    #[test]
    fn secret_stores_stay_unreadable_whatever_the_list_says() {
        let fs = Fs::new(TREE);
        let v = fs.view(
            &[
                "~/.config",
                "~/.ssh",
                "~/.ssh/id_rsa",
                "/srv/other",
                "~/gone",
            ],
            &[],
        );
        let shown = fs.rel(v.shown.iter().map(|s| s.path.clone()));
        assert!(shown.contains(&"/home/me/.config".to_string()), "{shown:?}");
        assert!(shown.contains(&"/srv/other".to_string()), "{shown:?}");
        assert!(!shown.iter().any(|s| s.contains(".ssh")), "{shown:?}");
        assert_eq!(
            fs.rel(v.secrets.clone()),
            ["/home/me/.cargo/credentials.toml", "/home/me/.config/gh"]
        );
        let refused: Vec<&str> = v.refused.iter().map(|(e, _)| e.as_str()).collect();
        assert_eq!(refused, ["~/.ssh", "~/.ssh/id_rsa", "~/gone"]);
        assert_eq!(v.refused[0].1, "it is a secret store");
    }

    /// Allowing the whole home (or `/`) un-hides it; its secret stores, and other homes' when
    /// they come into view, stay unreadable.
    #[test]
    fn allowing_a_whole_home_keeps_every_secret_store_unreadable() {
        let fs = Fs::new(TREE);
        let v = fs.view(&["/home"], &[]);
        assert!(!fs.rel(v.hidden.clone()).contains(&"/home".to_string()));
        assert_eq!(
            fs.rel(v.secrets.clone()),
            [
                "/home/me/.cargo/credentials.toml",
                "/home/me/.config/gh",
                "/home/me/.ssh",
                "/home/you/.ssh"
            ]
        );
    }

    /// A PATH entry is shown, but never one that holds a hidden place.
    #[test]
    fn path_directories_are_shown_unless_they_hold_a_hidden_place() {
        let fs = Fs::new(TREE);
        let v = fs.view(&[], &["/work/main", "/home", "/usr/bin"]);
        let shown = fs.rel(v.shown.iter().map(|s| s.path.clone()));
        assert!(shown.contains(&"/work/main".to_string()), "{shown:?}");
        assert!(!shown.contains(&"/home".to_string()), "{shown:?}");
        assert!(!shown.contains(&"/usr/bin".to_string()), "{shown:?}");
    }

    /// A dotfile that links elsewhere in the home is recreated, and its target shown.
    #[test]
    fn a_linked_toolchain_entry_is_recreated_and_its_target_shown() {
        let fs = Fs::new(&[
            "/home/me/dotfiles/gitconfig!",
            "/home/me/src/proj",
            "/tmp/slmcode-1/shell-x",
            "/home/me/.cache/slmcode/sandbox/k",
        ]);
        std::os::unix::fs::symlink("dotfiles/gitconfig", fs.p("/home/me/.gitconfig")).unwrap();
        let v = fs.view(&[], &[]);
        assert_eq!(
            v.links,
            [(
                fs.p("/home/me/.gitconfig"),
                PathBuf::from("dotfiles/gitconfig")
            )]
        );
        let shown = fs.rel(v.shown.iter().map(|s| s.path.clone()));
        assert!(
            shown.contains(&"/home/me/dotfiles/gitconfig".to_string()),
            "{shown:?}"
        );
    }

    /// A secret store that links elsewhere stays unreadable where it really is, even when the
    /// user shows that place.
    #[test]
    fn a_secret_store_linked_elsewhere_is_unreadable_where_it_is() {
        let fs = Fs::new(&[
            "/home/me/dotfiles/ssh/id_rsa!",
            "/home/me/dotfiles/vimrc!",
            "/home/me/src/proj",
            "/tmp/slmcode-1/shell-x",
            "/home/me/.cache/slmcode/sandbox/k",
        ]);
        std::os::unix::fs::symlink("dotfiles/ssh", fs.p("/home/me/.ssh")).unwrap();
        let v = fs.view(&["~/dotfiles"], &[]);
        let shown = fs.rel(v.shown.iter().map(|s| s.path.clone()));
        assert!(
            shown.contains(&"/home/me/dotfiles".to_string()),
            "{shown:?}"
        );
        assert_eq!(fs.rel(v.secrets.clone()), ["/home/me/dotfiles/ssh"]);
        let v = fs.view(&["~/dotfiles/ssh"], &[]);
        assert_eq!(
            v.refused,
            [("~/dotfiles/ssh".to_string(), "it is a secret store")]
        );
    }

    /// The system's own secrets this user can read (as root: the shadow files, the host's
    /// SSH keys) are masked; the rest of /etc stays readable.
    #[test]
    fn the_systems_readable_secrets_are_masked() {
        let fs = Fs::new(&[
            "/etc/shadow!",
            "/etc/ssh/ssh_host_ed25519_key!",
            "/etc/ssh/ssh_config!",
            "/home/me/src/proj",
            "/tmp/slmcode-1/shell-x",
            "/home/me/.cache/slmcode/sandbox/k",
        ]);
        let v = fs.view(&[], &[]);
        assert_eq!(
            fs.rel(v.secrets.clone()),
            ["/etc/shadow", "/etc/ssh/ssh_host_ed25519_key"]
        );
    }

    /// A project that is itself inside a secret store is not masked away.
    #[test]
    fn a_project_inside_a_secret_store_stays_visible() {
        let fs = Fs::new(&[
            "/home/me/.config/gh/proj",
            "/tmp/slmcode-1/shell-x",
            "/home/me/.cache/slmcode/sandbox/k",
        ]);
        let root = fs.p("/home/me/.config/gh/proj");
        let (home, temp) = (fs.p("/home/me"), fs.p("/tmp/slmcode-1/shell-x"));
        let v = view(&Inputs {
            layout: Layout::Linux,
            fs_root: &fs.p("/"),
            home: Some(&home),
            allow: &["~/.config".to_string()],
            root: &root,
            temp: &temp,
            cache: None,
            path_dirs: &[],
        });
        assert!(v.secrets.is_empty(), "{:?}", v.secrets);
        assert!(v.shown.iter().any(|s| s.path == root && s.writable));
    }
}
