//! The macOS sandbox profile for one ws_shell call.
//!
//! On macOS a command runs as `/usr/bin/sandbox-exec -p PROFILE -D KEY=VALUE ... /bin/sh -c
//! COMMAND`; Seatbelt then holds the command and everything it starts to the profile, which is
//! written here in SBPL. It denies by default and allows:
//!
//! - **Reads** of the system, and of what [`super::reads`] shows inside the hidden places
//!   (the project, temp and cache, the toolchains' directories of the home, the user's
//!   `shell_read_allow`); never of the secret stores. Metadata (`stat`) anywhere: `realpath` and
//!   `getcwd` walk every parent of the working directory.
//! - **Writes** in the project but its protected places (`.slmcode/` and every git directory),
//!   the scratch directories' contents, the call's temp directory, the cache, `/dev/null`.
//! - **Processes**: exec, fork, signals within this sandbox, and what sh, cargo, python, node,
//!   git and make need to start at all (a few sysctls, user lookups, preferences, semaphores).
//! - **Network**: none, but Unix-domain sockets where writes are allowed; all of it when the
//!   call allows the network.
//!
//! Every path goes in as a `-D` parameter and never into the text, so a path holding `"`, `)`
//! or a newline cannot change the rules. This is a pure function of its input (no I/O, no OS
//! calls): it compiles everywhere, and its tests, which parse the profile and evaluate what it
//! allows, run on Linux.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What one call's profile grants. Paths must already be absolute and canonical (the caller
/// resolves symlinks such as macOS's /var -> /private/var; Seatbelt matches real paths).
pub struct Grants<'a> {
    /// The project root: writable, but for `protected`.
    pub root: &'a Path,
    /// Read-only places in the project: `.slmcode/` and every git directory or `.git` file.
    pub protected: &'a [PathBuf],
    /// Directories inside protected places whose contents are writable again.
    pub scratch: &'a [PathBuf],
    /// The call's own temp directory (`TMPDIR`), writable.
    pub temp: &'a Path,
    /// The project's cache directory outside the project, writable when given.
    pub cache: Option<&'a Path>,
    /// Whether the command may use the network (`shell_network: allow`).
    pub network: bool,
    /// Places whose contents cannot be read (the homes, the shared temp directories…).
    pub hidden: &'a [PathBuf],
    /// Places inside hidden ones that can be read again.
    pub shown: &'a [PathBuf],
    /// Secret stores: never read, wherever they are.
    pub secrets: &'a [PathBuf],
}

/// A generated profile: the SBPL text and the parameters it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// The SBPL text; it depends only on how many paths there are, never on what they are.
    pub text: String,
    /// `(name, path)` for each `(param "name")` the text reads.
    pub params: Vec<(String, PathBuf)>,
}

/// The part of every profile that does not depend on the grants. Every rule is an `allow`
/// besides `(deny default)`, so no two rules conflict and their order does not matter.
const BASE: &str = r#"(version 1)
; Nothing is allowed unless a rule below allows it.
(deny default)

; Metadata anywhere: realpath and getcwd stat every parent of the working directory.
(allow file-read-metadata)

; Running programs; what they start inherits this profile.
(allow process-exec process-fork)
; Signals and process inspection within this sandbox only: not the harness, not the user's.
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
; What runtimes size and identify themselves by: CPUs and their features, memory, page size,
; uname, argument limits, their own processes. Not kern.procargs2, which would show other
; processes' environments (the harness's API key among them).
(allow sysctl-read
  (sysctl-name-prefix "hw.") (sysctl-name-prefix "machdep.cpu.")
  (sysctl-name "kern.argmax") (sysctl-name "kern.hostname")
  (sysctl-name "kern.maxfilesperproc") (sysctl-name "kern.maxproc")
  (sysctl-name "kern.osproductversion") (sysctl-name "kern.osrelease")
  (sysctl-name "kern.ostype") (sysctl-name "kern.osvariant_status")
  (sysctl-name "kern.osversion") (sysctl-name "kern.secure_kernel")
  (sysctl-name "kern.usrstack64") (sysctl-name "kern.version")
  (sysctl-name "sysctl.proc_cputype") (sysctl-name "vm.loadavg")
  (sysctl-name-prefix "kern.proc.pgrp.") (sysctl-name-prefix "kern.proc.pid."))
; Mach host statistics: Node's os.cpus() (npm and yarn size their workers by it) is empty without.
(allow mach-host*)
; User and group lookups (getpwuid): git, ssh, Python and cargo find the home directory so.
(allow mach-lookup (global-name "com.apple.system.opendirectoryd.libinfo"))
; Preferences, read-only: Apple's tools (the xcrun shims behind /usr/bin/git, make and cc) and
; frameworks read their settings through cfprefsd.
(allow user-preference-read)
(allow ipc-posix-shm-read* (ipc-posix-name-prefix "apple.cfprefs."))
(allow mach-lookup
  (global-name "com.apple.cfprefsd.daemon")
  (global-name "com.apple.cfprefsd.agent")
  (local-name "com.apple.cfprefsd.agent"))
; Power management (power assertions, sleep state), which runtimes and build tools query; it
; holds no files or secrets. Codex CLI allows the same.
(allow iokit-open (iokit-registry-entry-class "RootDomainUserClient"))
(allow mach-lookup (global-name "com.apple.PowerManagement.control"))
; POSIX semaphores: Python's multiprocessing locks.
(allow ipc-posix-sem)
; New pseudo-terminals (Python's pty, expect-style tests): the multiplexer, and only terminals
; this sandbox opened (Seatbelt gives it an extension for each), never the user's.
(allow pseudo-tty)
(allow file-write-data file-ioctl (literal "/dev/ptmx"))
(allow file-write-data file-ioctl
  (require-all (subpath "/dev") (extension "com.apple.sandbox.pty")))
; The null device, and /dev/fd/N (`>/dev/stderr`), which only reopens a descriptor the command
; holds, in no wider mode. Not /dev/tty: the user's terminal is no output channel.
(allow file-write-data (literal "/dev/null") (subpath "/dev/fd"))
; Creating Unix-domain sockets; what they may bind or reach is by path, below.
(allow system-socket (socket-domain AF_UNIX))
"#;

/// With the network: all of it (DNS goes through mDNSResponder's socket), and the services
/// that resolving names and checking TLS certificates ask.
const NETWORK: &str = r#"
; Network (shell_network: allow): all of it; the routing and kernel-control sockets and the
; routing table that network libraries inspect interfaces with; DNS and proxy configuration;
; the trust services that check TLS certificates.
(allow network*)
(allow system-socket)
(allow sysctl-read (sysctl-name-prefix "net.routetable."))
(allow mach-lookup
  (global-name "com.apple.SystemConfiguration.DNSConfiguration")
  (global-name "com.apple.SystemConfiguration.configd")
  (global-name "com.apple.networkd")
  (global-name "com.apple.trustd.agent")
  (global-name "com.apple.SecurityServer")
  (global-name "com.apple.ocspd"))
"#;

/// The profile for one call, with its parameters.
pub fn profile(grants: &Grants) -> Profile {
    let mut params = vec![
        ("ROOT".to_string(), grants.root.to_path_buf()),
        ("TEMP".to_string(), grants.temp.to_path_buf()),
    ];
    let mut writable = String::from("  (require-all (subpath (param \"ROOT\"))");
    for (i, path) in grants.protected.iter().enumerate() {
        let key = format!("PROTECTED_{i}");
        writable.push_str(&format!(
            "\n    (require-not (literal (param \"{key}\")))\n    (require-not (subpath (param \"{key}\")))"
        ));
        params.push((key, path.clone()));
    }
    writable.push(')');
    for (i, path) in grants.scratch.iter().enumerate() {
        let key = format!("SCRATCH_{i}");
        writable.push_str(&format!(
            "\n  (require-all (subpath (param \"{key}\")) (require-not (literal (param \"{key}\"))))"
        ));
        params.push((key, path.clone()));
    }
    writable.push_str("\n  (subpath (param \"TEMP\"))");
    if let Some(cache) = grants.cache {
        writable.push_str("\n  (subpath (param \"CACHE\"))");
        params.push(("CACHE".to_string(), cache.to_path_buf()));
    }
    let mut text = String::from(BASE);
    text.push_str(&read_rules(grants, &mut params));
    text.push_str(&format!(
        "
; Writes: the project but its protected places (the places themselves too, so they cannot be
; created, removed or replaced; the literal as well, as Codex CLI found subpath alone let
; `mkdir` create a missing one); the contents of the scratch directories inside them (not the
; directories themselves, which stay where the harness put them); the temp dir; the cache.
(allow file-write*
{writable})
; Unix-domain sockets, where writes are allowed: tools' own IPC (Node's IPC pipes in TMPDIR,
; build servers). Not the Docker socket, the ssh agent, or mDNSResponder's (DNS would leak).
(allow network-bind network-outbound
{writable})
"
    ));
    if grants.network {
        text.push_str(NETWORK);
    }
    Profile { text, params }
}

/// The read rules: everything but the hidden places and the secret stores; the shown places,
/// the project, temp and cache, but the secret stores.
fn read_rules(grants: &Grants, params: &mut Vec<(String, PathBuf)>) -> String {
    let mut not_secret = String::new();
    for (i, path) in grants.secrets.iter().enumerate() {
        let key = format!("SECRET_{i}");
        not_secret.push_str(&format!("\n    (require-not (subpath (param \"{key}\")))"));
        params.push((key, path.clone()));
    }
    let mut system = String::new();
    for (i, path) in grants.hidden.iter().enumerate() {
        let key = format!("HIDDEN_{i}");
        system.push_str(&format!("\n    (require-not (subpath (param \"{key}\")))"));
        params.push((key, path.clone()));
    }
    let mut shown = vec!["ROOT".to_string(), "TEMP".to_string()];
    if grants.cache.is_some() {
        shown.push("CACHE".to_string());
    }
    for (i, path) in grants.shown.iter().enumerate() {
        let key = format!("SHOWN_{i}");
        params.push((key.clone(), path.clone()));
        shown.push(key);
    }
    let mut out = String::from(
        "\n; Reads: the system but the hidden places (the homes, the shared temp directories) and\n; the secret stores; inside hidden places, what is shown, but the secret stores.\n(allow file-read*\n",
    );
    if system.is_empty() && not_secret.is_empty() {
        out.push_str("  (subpath \"/\"))\n");
    } else {
        out.push_str(&format!("  (require-all{system}{not_secret}))\n"));
    }
    out.push_str("(allow file-read*");
    for key in shown {
        if not_secret.is_empty() {
            out.push_str(&format!("\n  (subpath (param \"{key}\"))"));
        } else {
            out.push_str(&format!(
                "\n  (require-all (subpath (param \"{key}\")){not_secret})"
            ));
        }
    }
    out.push_str(")\n");
    out
}

impl Profile {
    /// The arguments for `/usr/bin/sandbox-exec` before the command: `-p TEXT` then
    /// `-D KEY=VALUE` for each parameter.
    pub fn args(&self) -> Vec<OsString> {
        let mut args = Vec::with_capacity(2 + 2 * self.params.len());
        args.push(OsString::from("-p"));
        args.push(OsString::from(&self.text));
        for (key, path) in &self.params {
            let mut define = OsString::from(format!("{key}="));
            define.push(path.as_os_str());
            args.push(OsString::from("-D"));
            args.push(define);
        }
        args
    }
}

#[cfg(test)]
mod tests {
    //! A small SBPL reader: an s-expression parser and an evaluator for the subset the profile
    //! uses. Semantics assumed: `(deny default)` first, then any rule whose operation matches
    //! (`file-write*` matches `file-write-data`) and any of whose filters matches (no filters:
    //! all) decides, a later rule over an earlier one, as in Seatbelt. The profile has no deny
    //! besides the default (a test checks), so the order never matters. Filters on other
    //! objects (services, sysctls, processes, socket domains) never match a path or an address,
    //! and the requests evaluated hold no sandbox extension.
    use super::*;
    use std::collections::HashMap;

    #[derive(Debug, Clone, PartialEq)]
    enum Sx {
        Str(String),
        Sym(String),
        List(Vec<Sx>),
    }

    fn parse(text: &str) -> Vec<Sx> {
        let mut chars = text.chars().peekable();
        let mut stack = vec![Vec::new()];
        while let Some(c) = chars.next() {
            let atom = match c {
                ';' => {
                    chars.by_ref().take_while(|&c| c != '\n').for_each(drop);
                    continue;
                }
                '(' => {
                    stack.push(Vec::new());
                    continue;
                }
                ')' => Sx::List(stack.pop().unwrap()),
                '"' => {
                    let mut s = String::new();
                    loop {
                        match chars.next().expect("unterminated string") {
                            '"' => break Sx::Str(s),
                            '\\' => s.push(chars.next().expect("dangling escape")),
                            c => s.push(c),
                        }
                    }
                }
                c if c.is_whitespace() => continue,
                c => {
                    let mut s = String::from(c);
                    while let Some(n) =
                        chars.next_if(|n| !n.is_whitespace() && !"()\";".contains(*n))
                    {
                        s.push(n);
                    }
                    Sx::Sym(s)
                }
            };
            stack.last_mut().expect("unbalanced )").push(atom);
        }
        assert_eq!(stack.len(), 1, "unbalanced (");
        stack.pop().unwrap()
    }

    fn sym(x: &Sx) -> &str {
        match x {
            Sx::Sym(s) => s,
            other => panic!("not a symbol: {other:?}"),
        }
    }

    fn list(x: &Sx) -> &[Sx] {
        match x {
            Sx::List(l) if !l.is_empty() => l,
            other => panic!("not a form: {other:?}"),
        }
    }

    /// What a request is about: a file or a Unix socket by path, or an IP endpoint (host:port).
    #[derive(Clone, Copy)]
    enum On<'t> {
        Path(&'t str),
        Ip(&'t str),
    }

    /// Filters that select other objects than paths and IP endpoints.
    const OTHER_OBJECTS: &str = "global-name local-name sysctl-name sysctl-name-prefix target \
        iokit-registry-entry-class ipc-posix-name-prefix socket-domain extension";

    /// The rules: (allow?, operations, filters).
    fn rules(p: &Profile) -> Vec<(bool, Vec<String>, Vec<Sx>)> {
        let mut out = Vec::new();
        for form in parse(&p.text) {
            let items = list(&form);
            let allow = match sym(&items[0]) {
                "version" => continue,
                "allow" => true,
                "deny" => false,
                other => panic!("unknown form {other}"),
            };
            let ops: Vec<String> = items[1..]
                .iter()
                .take_while(|x| matches!(x, Sx::Sym(_)))
                .map(|x| sym(x).to_string())
                .collect();
            assert!(!ops.is_empty(), "a rule without operations");
            out.push((allow, ops.clone(), items[1 + ops.len()..].to_vec()));
        }
        out
    }

    fn allows(p: &Profile, op: &str, on: On) -> bool {
        if let On::Ip(endpoint) = on {
            assert!(endpoint.contains(':'), "not host:port: {endpoint}");
        }
        let params: HashMap<&str, &str> = p
            .params
            .iter()
            .map(|(k, v)| (k.as_str(), v.to_str().unwrap()))
            .collect();
        let mut verdict = None;
        for (allow, ops, filters) in rules(p) {
            let op_matches = |r: &String| match r.strip_suffix('*') {
                Some(prefix) => op.starts_with(prefix),
                None => r == op || r == "default",
            };
            if ops.iter().any(op_matches)
                && (filters.is_empty() || filters.iter().any(|f| matches(f, on, &params)))
            {
                verdict = Some(allow);
            }
        }
        verdict.expect("no default rule")
    }

    fn matches(f: &Sx, on: On, params: &HashMap<&str, &str>) -> bool {
        let (kind, args) = (sym(&list(f)[0]), &list(f)[1..]);
        match kind {
            "require-all" => args.iter().all(|a| matches(a, on, params)),
            "require-any" => args.iter().any(|a| matches(a, on, params)),
            "require-not" => !matches(&args[0], on, params),
            "subpath" | "literal" => {
                let On::Path(path) = on else { return false };
                let base = value(&args[0], params);
                let beneath = path.strip_prefix(base).is_some_and(|r| r.starts_with('/'));
                path == base || kind == "subpath" && beneath
            }
            _ if OTHER_OBJECTS.split_whitespace().any(|k| k == kind) => false,
            _ => panic!("unknown filter {kind}"),
        }
    }

    fn value<'p>(x: &'p Sx, params: &HashMap<&str, &'p str>) -> &'p str {
        match x {
            Sx::Str(s) => s,
            Sx::List(l) if sym(&l[0]) == "param" => match &l[1] {
                Sx::Str(key) => params.get(key.as_str()).expect("an undefined param"),
                other => panic!("param name {other:?}"),
            },
            other => panic!("not a path value: {other:?}"),
        }
    }

    const ROOT: &str = "/Users/me/proj";
    const TEMP: &str = "/private/var/folders/xy/T/slmcode-501/shell-ab12";
    const CACHE: &str = "/Users/me/Library/Caches/slmcode/sandbox/0123";
    const WRITES: [&str; 3] = ["file-write-data", "file-write-create", "file-write-unlink"];

    fn sample_at(root: &str, network: bool, cache: bool) -> Profile {
        let protected = [".slmcode", ".git", "vendor/lib/.git"].map(|p| Path::new(root).join(p));
        let scratch = [Path::new(root).join(".slmcode/scratch")];
        let hidden = ["/Users", "/private/tmp", "/Volumes"].map(PathBuf::from);
        let shown = ["/Users/me/.cargo", "/Users/me/.gitconfig"].map(PathBuf::from);
        let secrets =
            ["/Users/me/.cargo/credentials.toml", "/Library/Keychains"].map(PathBuf::from);
        profile(&Grants {
            root: Path::new(root),
            protected: &protected,
            scratch: &scratch,
            temp: Path::new(TEMP),
            cache: cache.then_some(Path::new(CACHE)),
            network,
            hidden: &hidden,
            shown: &shown,
            secrets: &secrets,
        })
    }

    fn sample(network: bool) -> Profile {
        sample_at(ROOT, network, true)
    }

    #[test]
    fn the_reader_reads_strings_symbols_lists_and_comments() {
        let forms = parse("(a \"b\\\"c)\" ; (x\n (d))");
        let expected = Sx::List(vec![
            Sx::Sym("a".into()),
            Sx::Str("b\"c)".into()),
            Sx::List(vec![Sx::Sym("d".into())]),
        ]);
        assert_eq!(forms, [expected]);
    }

    #[test]
    fn the_profile_is_balanced_and_starts_with_its_version() {
        for network in [false, true] {
            let forms = parse(&sample(network).text);
            assert_eq!(forms[..2], parse("(version 1) (deny default)"));
        }
    }

    #[test]
    fn the_only_deny_is_the_default_and_every_param_is_given_and_read() {
        for network in [false, true] {
            let p = sample(network);
            for (allow, ops, _) in rules(&p) {
                assert!(allow || ops == ["default"], "deny {ops:?}");
            }
            for (key, _) in &p.params {
                assert!(
                    p.text.contains(&format!("(param \"{key}\")")),
                    "{key} unread"
                );
            }
            // Every (param) read is given: a write outside walks all the write filters.
            assert!(!allows(&p, "file-write-data", On::Path("/nowhere")));
        }
    }

    #[test]
    fn writes_are_allowed_in_the_project_scratch_temp_and_cache() {
        let p = sample(false);
        let (temp, cache) = (format!("{TEMP}/x"), format!("{CACHE}/x"));
        let places = "/Users/me/proj/src/main.rs /Users/me/proj /Users/me/proj/.gitignore
            /Users/me/proj/.slmcode/scratch/notes.md /Users/me/proj/vendor/lib/src/.gitkeep";
        for path in places.split_whitespace().chain([temp.as_str(), &cache]) {
            for op in WRITES {
                assert!(allows(&p, op, On::Path(path)), "{op} {path}");
            }
        }
        for path in ["/dev/null", "/dev/fd/1", "/dev/ptmx"] {
            assert!(allows(&p, "file-write-data", On::Path(path)), "{path}");
        }
    }

    #[test]
    fn writes_are_denied_in_protected_places_and_outside() {
        let p = sample(false);
        let places = "/Users/me/proj/.git/config /Users/me/proj/.git /Users/me/proj/.slmcode
            /Users/me/proj/.slmcode/config.yaml /Users/me/proj/.slmcode/scratchy
            /Users/me/proj/.slmcode/scratch /Users/me/proj/vendor/lib/.git/hooks/pre-commit
            /Users/me/proj2/x /Users/me /etc/hosts /tmp/x /private/tmp/x /dev/tty /dev/ttys003
            /Users/me/.ssh/authorized_keys";
        for path in places.split_whitespace() {
            for op in WRITES {
                assert!(!allows(&p, op, On::Path(path)), "{op} {path}");
            }
        }
        assert!(!allows(&p, "file-write-unlink", On::Path("/dev/null")));
    }

    /// The system, the project, temp, cache and the shown places can be read; the rest of
    /// the home, other homes and the shared temp directory cannot, nor a secret store even
    /// inside a shown place. Metadata can be read anywhere.
    #[test]
    fn reads_are_confined_to_the_view() {
        let p = sample(false);
        let (temp, cache) = (format!("{TEMP}/x"), format!("{CACHE}/x"));
        let readable = "/Users/me/proj/.git/config /Users/me/proj/src/main.rs /etc/hosts
            /usr/lib/libSystem.B.dylib /Users/me/.cargo/bin/cargo /Users/me/.gitconfig
            /opt/homebrew/bin/python3";
        for path in readable.split_whitespace().chain([temp.as_str(), &cache]) {
            for op in ["file-read-data", "file-read-metadata", "file-read-xattr"] {
                assert!(allows(&p, op, On::Path(path)), "{op} {path}");
            }
        }
        let secret = "/Users/me/.ssh/id_rsa /Users/me/notes.txt /Users/you/.aws/credentials
            /Users/me/proj2/.env /private/tmp/other/x /Volumes/Backup/x
            /Users/me/.cargo/credentials.toml /Library/Keychains/System.keychain /Users/me";
        for path in secret.split_whitespace() {
            for op in ["file-read-data", "file-read-xattr"] {
                assert!(!allows(&p, op, On::Path(path)), "{op} {path}");
            }
            assert!(allows(&p, "file-read-metadata", On::Path(path)), "{path}");
        }
    }

    #[test]
    fn the_network_is_off_unless_allowed() {
        let (off, on) = (sample(false), sample(true));
        for op in ["network-outbound", "network-bind", "network-inbound"] {
            assert!(!allows(&off, op, On::Ip("93.184.216.34:443")), "{op}");
            assert!(!allows(&off, op, On::Ip("127.0.0.1:8080")), "{op}");
            assert!(allows(&on, op, On::Ip("93.184.216.34:443")), "{op}");
        }
        // Unix sockets: the command's own, where it may write; not the host's daemons.
        let own = format!("{TEMP}/ipc.sock");
        for p in [&off, &on] {
            assert!(allows(p, "network-bind", On::Path(&own)));
            assert!(allows(p, "network-outbound", On::Path(&own)));
        }
        for daemon in [
            "/private/var/run/mDNSResponder",
            "/private/var/run/docker.sock",
        ] {
            assert!(
                !allows(&off, "network-outbound", On::Path(daemon)),
                "{daemon}"
            );
            assert!(
                allows(&on, "network-outbound", On::Path(daemon)),
                "{daemon}"
            );
        }
        let git_daemon = "/Users/me/proj/.git/fsmonitor--daemon.ipc";
        assert!(!allows(&off, "network-outbound", On::Path(git_daemon)));
    }

    #[test]
    fn without_a_cache_there_is_no_cache_param_or_grant() {
        let p = sample_at(ROOT, false, false);
        assert!(p.params.iter().all(|(k, _)| k != "CACHE"));
        assert!(!p.text.contains("CACHE"));
        assert!(!allows(
            &p,
            "file-write-data",
            On::Path(&format!("{CACHE}/x"))
        ));
        assert!(allows(
            &p,
            "file-write-data",
            On::Path(&format!("{TEMP}/x"))
        ));
    }

    #[test]
    fn paths_never_reach_the_text() {
        let odd_root = "/Users/me/a\"b) (allow file-write*)\n;c";
        let (plain, odd) = (sample(false), sample_at(odd_root, false, true));
        assert_eq!(plain.text, odd.text);
        assert_eq!(odd.args()[3], OsString::from(format!("ROOT={odd_root}")));
        let write = |path: &str| allows(&odd, "file-write-data", On::Path(path));
        assert!(write(&format!("{odd_root}/x")));
        assert!(!write(&format!("{odd_root}/.git/x")));
        assert!(!write("/etc/hosts"));
    }

    #[test]
    fn args_are_the_text_then_each_param() {
        let p = sample(false);
        let mut expected = vec![OsString::from("-p"), OsString::from(&p.text)];
        for define in [
            format!("ROOT={ROOT}"),
            format!("TEMP={TEMP}"),
            format!("PROTECTED_0={ROOT}/.slmcode"),
            format!("PROTECTED_1={ROOT}/.git"),
            format!("PROTECTED_2={ROOT}/vendor/lib/.git"),
            format!("SCRATCH_0={ROOT}/.slmcode/scratch"),
            format!("CACHE={CACHE}"),
            "SECRET_0=/Users/me/.cargo/credentials.toml".to_string(),
            "SECRET_1=/Library/Keychains".to_string(),
            "HIDDEN_0=/Users".to_string(),
            "HIDDEN_1=/private/tmp".to_string(),
            "HIDDEN_2=/Volumes".to_string(),
            "SHOWN_0=/Users/me/.cargo".to_string(),
            "SHOWN_1=/Users/me/.gitconfig".to_string(),
        ] {
            expected.extend([OsString::from("-D"), OsString::from(define)]);
        }
        assert_eq!(p.args(), expected);
    }
}
