//! The Linux sandbox: namespaces, read-only mounts, Landlock, no capabilities — and the
//! supervisor that leaves nothing running.
//!
//! The harness spawns a supervisor ("C"), which is the only process the harness waits for.
//! Between fork and exec, C becomes a child subreaper and (where the kernel allows) enters new
//! user, mount, PID, network and IPC namespaces; it mounts every protected path read-only over
//! itself and brings up loopback when asked. It then forks:
//!
//! ```text
//! harness ── C (supervisor, subreaper; never execs)
//!             └─ G (PID 1 of the new PID namespace: mounts /proc, reaps, never execs)
//!                 └─ H (Landlock, no capabilities, then exec /bin/sh -c COMMAND)
//! ```
//!
//! Without a PID namespace there is no G: C forks H directly. When H ends, G exits and the
//! kernel ends every process of the namespace; C then reaps them, kills whatever else it still
//! has as a descendant (orphans are re-parented to C, the nearest subreaper, whatever session,
//! group or environment they moved to) and writes what happened to a report pipe. On timeout
//! the harness sends C `SIGTERM`, and C does the same after killing H.
//!
//! Everything that runs between fork and exec is async-signal-safe: raw syscalls on memory
//! prepared in the parent, no allocation.

use std::ffi::{CStr, CString};
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicI32;
use std::sync::{Arc, Mutex, OnceLock};

use landlock::{
    path_beneath_rules, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, Scope, ABI,
};

use super::reads::{self, View};
use super::{Network, Plan, Processes, Reads, Report, Writes};
use crate::config::ShellNetwork;

mod child;

/// Everything the child side needs, prepared in the parent.
pub struct Confinement {
    ns: Option<Namespaces>,
    /// Mounted read-only over themselves, parents first.
    read_only: Vec<Bind>,
    /// Mounted read-write over themselves after the read-only ones are bound (scratch).
    writable: Vec<CString>,
    /// A directory of the call's temp directory, mounted over `/dev/shm`: POSIX shared memory
    /// and semaphores (Python's multiprocessing) work, privately.
    shm: Option<CString>,
    /// What the command may read, as mounts (with a mount namespace).
    view: Option<ViewMounts>,
    loopback: bool,
    landlock: Mutex<Option<RulesetCreated>>,
    drop_caps: bool,
    cap_last: libc::c_int,
    max_fd: libc::c_uint,
}

struct Namespaces {
    flags: libc::c_int,
    /// `uid_map` and `gid_map` lines when a user namespace is made.
    maps: Option<(CString, CString)>,
    pid: bool,
    /// Mount a `/proc` of the new PID namespace.
    proc: bool,
}

struct Bind {
    path: CString,
    /// Flags of the underlying mount a remount in a user namespace must keep.
    locked: libc::c_ulong,
}

/// The read view as mounts: every shown place is cloned (`open_tree`) before the hidden places
/// are covered with empty file systems, then put back where it was; secret stores are masked.
struct ViewMounts {
    /// Shown places, parents first: the clone's path, and whether it is a directory and
    /// read-only (with the flags a remount must keep).
    shown: Vec<(CString, bool, Option<libc::c_ulong>)>,
    /// The clones, between taking them and putting them back.
    fds: Vec<AtomicI32>,
    /// Hidden places: a directory gets an empty tmpfs, a file `/dev/null`.
    covers: Vec<(CString, bool)>,
    /// Directories to make inside the covers, parents first.
    dirs: Vec<CString>,
    /// Symbolic links to make again inside the covers: (where, what it says).
    links: Vec<(CString, CString)>,
    /// Secret stores in what is visible: a directory gets an empty read-only tmpfs, a file
    /// `/dev/null`.
    secrets: Vec<(CString, bool)>,
    /// The working directory, entered again in the new view (the one std entered before is
    /// the old tree, whose `..` leads past the covers).
    cwd: CString,
}

/// What this kernel lets an unprivileged (or root) process do, found once by trying.
#[derive(Debug, Clone, Copy)]
struct Abilities {
    namespaces: bool,
    user: bool,
    proc: bool,
}

/// Builds the confinement for one call.
pub(super) fn prepare(plan: &Plan) -> (Confinement, Report) {
    let ab = abilities();
    let abi = landlock_abi();
    let root = plan.root;
    let view = plan.view(reads::Layout::Linux);
    let words = view.describe(plan.home.and_then(|h| h.canonicalize().ok()).as_deref());
    let mut read_only = Vec::new();
    let mut writable = Vec::new();
    let ns = if ab.namespaces && plan.namespaces {
        let mut flags = libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC;
        if plan.network != ShellNetwork::Allow {
            flags |= libc::CLONE_NEWNET;
        }
        if ab.user {
            flags |= libc::CLONE_NEWUSER;
        }
        for (path, _) in plan.protected.absolute(root) {
            if let Some(path) = cstring(&path) {
                let locked = locked_flags(&path);
                read_only.push(Bind { path, locked });
            }
        }
        if let Some(s) = &plan.protected.scratch {
            if let Some(p) = cstring(&root.join(s.path.as_path())) {
                writable.push(p);
            }
        }
        Some(Namespaces {
            flags,
            maps: ab.user.then(id_maps),
            pid: true,
            proc: ab.proc,
        })
    } else {
        None
    };
    // Landlock: the project (whole, or entry by entry around the protected places when no
    // mount can make them read-only), the temp directory and /dev/null.
    let mut grants: Vec<PathBuf> = Vec::new();
    if ns.is_some() {
        grants.push(root.to_path_buf());
    } else {
        let protected: Vec<PathBuf> = plan
            .protected
            .absolute(root)
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        entry_grants(root, &protected, &mut grants);
        if let Some(s) = &plan.protected.scratch {
            grants.push(root.join(s.path.as_path()));
        }
    }
    grants.push(plan.temp.to_path_buf());
    grants.extend(plan.cache.map(Path::to_path_buf));
    grants.push(PathBuf::from("/dev/null"));
    // Landlock follows a bind mount's own root, so the shm directory is granted by name.
    let shm = if ns.is_some() && Path::new("/dev/shm").is_dir() {
        let dir = plan.temp.join("shm");
        std::fs::create_dir(&dir).ok().and_then(|()| {
            grants.push(dir.clone());
            cstring(&dir)
        })
    } else {
        None
    };
    let netns = ns
        .as_ref()
        .is_some_and(|n| n.flags & libc::CLONE_NEWNET != 0);
    let tcp_rules =
        plan.network == ShellNetwork::Deny || (plan.network == ShellNetwork::Loopback && !netns);
    let mounted_view = match (&ns, can_move_mounts()) {
        (Some(_), true) => Some(view_mounts(&view, root)),
        _ => None,
    };
    // Landlock's read rules: the system around what is hidden and the secrets, and each shown
    // place around the secrets. With the view mounted, every directory may be listed: what is
    // hidden is not there to list (and Landlock ignores the rules of a covered mount point, so
    // the covers could not be granted alone).
    let mut read_grants = Vec::new();
    let mut fences: Vec<PathBuf> = view.hidden_all.clone();
    fences.extend(view.secrets.iter().cloned());
    entry_grants(Path::new("/"), &fences, &mut read_grants);
    for s in &view.shown {
        entry_grants(&s.path, &view.secrets, &mut read_grants);
    }
    let listable: Vec<PathBuf> = if mounted_view.is_some() {
        vec![PathBuf::from("/")]
    } else {
        Vec::new()
    };
    let landlock = match abi {
        Some(_) => build_ruleset(
            &grants,
            &read_grants,
            &listable,
            tcp_rules,
            plan.network != ShellNetwork::Allow,
        )
        .map_err(|e| format!("the Landlock ruleset could not be built: {e}")),
        None => Err("the kernel has no Landlock".to_string()),
    };
    let network = match (plan.network, netns) {
        (ShellNetwork::Allow, _) => Network::On,
        (ShellNetwork::Deny, true) => Network::Off,
        (ShellNetwork::Loopback, true) => Network::LoopbackOnly,
        (_, false) if landlock.is_ok() && abi.is_some_and(|v| v >= 4) => Network::TcpOff,
        (_, false) => Network::NotIsolated(
            "no network namespace here, and no Landlock ABI 4 for TCP rules".to_string(),
        ),
    };
    let writes = match (&ns, &landlock) {
        (Some(_), Ok(_)) => Writes::Mounts,
        (None, Ok(_)) => Writes::Entries,
        (Some(_), Err(e)) => Writes::Off(format!("{e}; only .git/ and .slmcode/ are read-only")),
        (None, Err(e)) => Writes::Off(format!("{e}, and there are no mount namespaces")),
    };
    let reads = match (&mounted_view, &landlock, &ns) {
        (Some(_), _, _) => Reads::View(words),
        (None, Ok(_), _) => Reads::Landlock(words),
        (None, Err(e), Some(_)) => Reads::Off(format!(
            "{e}, and this kernel cannot move mounts (open_tree, Linux 5.2)"
        )),
        (None, Err(e), None) => Reads::Off(format!("{e}, and there are no mount namespaces")),
    };
    let report = Report {
        processes: if ns.is_some() {
            Processes::Namespace
        } else {
            Processes::Walk
        },
        writes,
        reads,
        network,
        private_proc: ns.as_ref().is_some_and(|n| n.proc),
        landlock_abi: abi,
    };
    let confinement = Confinement {
        loopback: plan.network == ShellNetwork::Loopback && netns,
        ns,
        read_only,
        writable,
        shm,
        view: mounted_view,
        landlock: Mutex::new(landlock.ok()),
        drop_caps: true,
        cap_last: cap_last(),
        max_fd: max_fd(),
    };
    (confinement, report)
}

/// The supervisor and nothing else: the user's own hooks are contained, not sandboxed.
pub(super) fn processes_only() -> Confinement {
    Confinement {
        ns: None,
        read_only: Vec::new(),
        writable: Vec::new(),
        shm: None,
        view: None,
        loopback: false,
        landlock: Mutex::new(None),
        drop_caps: false,
        cap_last: cap_last(),
        max_fd: max_fd(),
    }
}

/// What an unconfined call still gets.
pub(super) fn unconfined() -> (Processes, Option<u8>) {
    (Processes::Walk, landlock_abi())
}

/// Every Linux runs ws_shell.
pub(super) fn unavailable() -> Option<String> {
    None
}

/// `/bin/sh -c COMMAND`: the confinement is entered between fork and exec.
pub(super) fn shell_command(_c: &Confinement, command: &str) -> Command {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c").arg(command);
    cmd
}

/// Sets `cmd` up to run under `c`; `report` is the write end of the report pipe (close-on-exec,
/// so only the supervisor and the init keep it). The process group is
/// [`crate::shell::contain`]'s.
pub(super) fn install(cmd: &mut Command, c: Arc<Confinement>, report: &std::io::PipeWriter) {
    use std::os::fd::AsRawFd;
    harden_harness();
    let report: RawFd = report.as_raw_fd();
    // SAFETY: `start` runs in the forked child before exec and only makes async-signal-safe
    // system calls on memory prepared before the fork (see the module docs).
    unsafe {
        cmd.pre_exec(move || child::start(&c, report));
    }
}

/// Once per process: the harness is the subreaper of last resort, and not dumpable, so no
/// process of the same user can read its memory or `/proc/<pid>/environ` (the API key).
fn harden_harness() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        // SAFETY: prctl with integer arguments only; it changes flags of this process.
        unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
            libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        }
    });
}

/// The kernel's Landlock ABI version, if it has Landlock.
fn landlock_abi() -> Option<u8> {
    // SAFETY: landlock_create_ruleset with LANDLOCK_CREATE_RULESET_VERSION and no attributes
    // only reports the ABI version.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    u8::try_from(v).ok().filter(|v| *v >= 1)
}

/// The ruleset: writes only to `grants`, reads (and programs) only from `reads`, listing
/// `listable` (with the view mounted, every directory); TCP refused when `tcp`.
fn build_ruleset(
    grants: &[PathBuf],
    reads: &[PathBuf],
    listable: &[PathBuf],
    tcp: bool,
    scope_sockets: bool,
) -> Result<RulesetCreated, landlock::RulesetError> {
    let write = AccessFs::from_write(ABI::V8);
    let read = AccessFs::ReadFile | AccessFs::ReadDir | AccessFs::Execute;
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(write | read)?;
    if tcp {
        ruleset = ruleset.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)?;
    }
    ruleset = ruleset.scope(Scope::Signal)?;
    if scope_sockets {
        ruleset = ruleset.scope(Scope::AbstractUnixSocket)?;
    }
    ruleset
        .create()?
        .add_rules(path_beneath_rules(grants, write))?
        .add_rules(path_beneath_rules(reads, read))?
        .add_rules(path_beneath_rules(listable, AccessFs::ReadDir))
}

/// Whether this kernel has `open_tree` (Linux 5.2), which the read view clones shown places
/// with. Asked without cloning, which needs no privilege.
fn can_move_mounts() -> bool {
    static CAN: OnceLock<bool> = OnceLock::new();
    *CAN.get_or_init(|| {
        // SAFETY: open_tree without OPEN_TREE_CLONE only opens a path (like O_PATH); the
        // descriptor is closed at once.
        unsafe {
            let fd = libc::syscall(
                libc::SYS_open_tree,
                libc::AT_FDCWD,
                c"/".as_ptr(),
                libc::O_CLOEXEC as libc::c_uint,
            );
            if fd < 0 {
                return false;
            }
            libc::close(fd as libc::c_int);
            true
        }
    })
}

/// The view as mounts, everything prepared here so the child only makes system calls.
fn view_mounts(view: &View, cwd: &Path) -> ViewMounts {
    let inside_cover = |p: &Path| view.hidden.iter().find(|h| p.starts_with(h) && p != *h);
    let mut dirs: Vec<PathBuf> = Vec::new();
    // Every directory between a cover and a place inside it; the place too when a directory.
    let mut make = |p: &Path, itself: bool| {
        if let Some(cover) = inside_cover(p) {
            let mut parents: Vec<PathBuf> = p
                .ancestors()
                .skip(1)
                .take_while(|a| a.starts_with(cover) && *a != cover.as_path())
                .map(Path::to_path_buf)
                .collect();
            if itself {
                parents.push(p.to_path_buf());
            }
            dirs.extend(parents);
        }
    };
    for s in &view.shown {
        make(&s.path, s.is_dir);
    }
    for (link, _) in &view.links {
        make(link, false);
    }
    dirs.sort();
    dirs.dedup();
    let shown = view
        .shown
        .iter()
        .filter_map(|s| {
            let path = cstring(&s.path)?;
            let read_only = (!s.writable).then(|| locked_flags(&path));
            Some((path, s.is_dir, read_only))
        })
        .collect::<Vec<_>>();
    ViewMounts {
        fds: shown.iter().map(|_| AtomicI32::new(-1)).collect(),
        shown,
        covers: view
            .hidden
            .iter()
            .filter_map(|h| Some((cstring(h)?, h.is_dir())))
            .collect(),
        dirs: dirs.iter().filter_map(|d| cstring(d)).collect(),
        links: view
            .links
            .iter()
            .filter_map(|(l, t)| Some((cstring(l)?, cstring(t)?)))
            .collect(),
        secrets: view
            .secrets
            .iter()
            .filter_map(|s| Some((cstring(s)?, s.is_dir())))
            .collect(),
        cwd: cstring(cwd).unwrap_or_else(|| c"/".to_owned()),
    }
}

/// Landlock grants that cover `dir` except the protected paths: a directory with nothing
/// protected beneath it is granted whole; otherwise its entries are, one by one. Symlinks are
/// never granted (a grant follows them, and one could lead into a protected place).
fn entry_grants(dir: &Path, protected: &[PathBuf], out: &mut Vec<PathBuf>) {
    if !protected.iter().any(|p| p.starts_with(dir) && p != dir) {
        out.push(dir.to_path_buf());
        return;
    }
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in read.flatten() {
        let path = entry.path();
        if protected.contains(&path) {
            continue;
        }
        match entry.file_type() {
            Ok(t) if t.is_dir() => entry_grants(&path, protected, out),
            Ok(t) if t.is_file() => out.push(path),
            _ => {}
        }
    }
}

fn cstring(path: &Path) -> Option<CString> {
    CString::new(path.as_os_str().as_bytes()).ok()
}

/// The mount flags a bind remount inside a user namespace must keep (the kernel refuses to
/// clear nosuid, nodev, noexec or the atime flags of a mount it locked).
fn locked_flags(path: &CStr) -> libc::c_ulong {
    // SAFETY: statvfs writes into the zeroed struct we pass; the path is NUL-terminated.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(path.as_ptr(), &mut st) } != 0 {
        return 0;
    }
    let mut flags = 0;
    for (st_flag, ms_flag) in [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ] {
        if st.f_flag & st_flag != 0 {
            flags |= ms_flag;
        }
    }
    flags
}

/// `uid_map` and `gid_map` that map our own ids to themselves.
fn id_maps() -> (CString, CString) {
    // SAFETY: geteuid and getegid cannot fail.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let line = |id: u32| CString::new(format!("{id} {id} 1\n")).unwrap_or_default();
    (line(uid), line(gid))
}

fn cap_last() -> libc::c_int {
    std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(63)
}

fn max_fd() -> libc::c_uint {
    // SAFETY: getrlimit writes into the struct we pass.
    let mut rl: libc::rlimit = unsafe { std::mem::zeroed() };
    let n = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) } == 0 {
        rl.rlim_cur
    } else {
        1024
    };
    libc::c_uint::try_from(n.min(65_536)).unwrap_or(1024)
}

/// Finds out once which namespaces work here, by starting `:` through the real sequence.
fn abilities() -> Abilities {
    static ABILITIES: OnceLock<Abilities> = OnceLock::new();
    *ABILITIES.get_or_init(|| {
        // SAFETY: geteuid cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        let mut tries = vec![(true, true), (true, false)];
        if root {
            tries.extend([(false, true), (false, false)]);
        }
        for (user, proc) in tries {
            let mut flags =
                libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC | libc::CLONE_NEWNET;
            if user {
                flags |= libc::CLONE_NEWUSER;
            }
            let c = Confinement {
                ns: Some(Namespaces {
                    flags,
                    maps: user.then(id_maps),
                    pid: true,
                    proc,
                }),
                read_only: Vec::new(),
                writable: Vec::new(),
                shm: None,
                view: None,
                loopback: true,
                landlock: Mutex::new(None),
                drop_caps: true,
                cap_last: cap_last(),
                max_fd: max_fd(),
            };
            if try_run(c) {
                return Abilities {
                    namespaces: true,
                    user,
                    proc,
                };
            }
        }
        Abilities {
            namespaces: false,
            user: false,
            proc: false,
        }
    })
}

/// Runs `:` under `c`; true when it ran and reported success.
fn try_run(c: Confinement) -> bool {
    let Ok((mut reader, writer)) = std::io::pipe() else {
        return false;
    };
    let mut cmd = Command::new("/bin/sh");
    cmd.args(["-c", ":"])
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    install(&mut cmd, Arc::new(c), &writer);
    let spawned = cmd.spawn();
    drop(cmd);
    drop(writer);
    let Ok(mut child) = spawned else {
        return false;
    };
    let waited = child.wait();
    let mut bytes = Vec::new();
    let _ = std::io::Read::read_to_end(&mut reader, &mut bytes);
    let record = crate::shell::run::Records::parse(&bytes);
    waited.is_ok_and(|s| s.success()) && record.status() == Some(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_grants_go_around_protected_paths() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for d in [
            "src",
            "vendor/lib/.git",
            "vendor/other",
            ".git",
            ".slmcode/scratch",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("vendor/lib/a.c"), "").unwrap();
        std::fs::write(root.join("Cargo.toml"), "").unwrap();
        let protected = vec![
            root.join(".git"),
            root.join(".slmcode"),
            root.join("vendor/lib/.git"),
        ];
        let mut grants = Vec::new();
        entry_grants(&root, &protected, &mut grants);
        grants.sort();
        let rel: Vec<String> = grants
            .iter()
            .map(|g| g.strip_prefix(&root).unwrap().display().to_string())
            .collect();
        assert_eq!(rel, ["Cargo.toml", "src", "vendor/lib/a.c", "vendor/other"]);
    }
}
