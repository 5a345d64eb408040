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
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use landlock::{
    path_beneath_rules, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};

use super::{Network, Plan, Processes, Report, Writes};
use crate::config::ShellNetwork;

/// Everything the child side needs, prepared in the parent.
pub struct Confinement {
    ns: Option<Namespaces>,
    /// Mounted read-only over themselves, parents first.
    read_only: Vec<Bind>,
    /// Mounted read-write over themselves after the read-only ones are bound (scratch).
    writable: Vec<CString>,
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
    let mut read_only = Vec::new();
    let mut writable = Vec::new();
    let ns = if ab.namespaces {
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
    grants.push(PathBuf::from("/dev/null"));
    let netns = ns
        .as_ref()
        .is_some_and(|n| n.flags & libc::CLONE_NEWNET != 0);
    let tcp_rules =
        plan.network == ShellNetwork::Deny || (plan.network == ShellNetwork::Loopback && !netns);
    let landlock = match abi {
        Some(_) => build_ruleset(&grants, tcp_rules, plan.network != ShellNetwork::Allow)
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
    let report = Report {
        processes: if ns.is_some() {
            Processes::Namespace
        } else {
            Processes::Walk
        },
        writes,
        network,
        private_proc: ns.as_ref().is_some_and(|n| n.proc),
        landlock_abi: abi,
    };
    let confinement = Confinement {
        loopback: plan.network == ShellNetwork::Loopback && netns,
        ns,
        read_only,
        writable,
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

/// Sets `cmd` up to run under `c`; `report` is the write end of the report pipe (close-on-exec,
/// so only the supervisor and the init keep it).
pub fn install(cmd: &mut Command, c: Arc<Confinement>, report: RawFd) {
    harden_harness();
    cmd.process_group(0);
    // SAFETY: `start` runs in the forked child before exec and only makes async-signal-safe
    // system calls on memory prepared before the fork (see the module docs).
    unsafe {
        cmd.pre_exec(move || start(&c, report));
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

fn build_ruleset(
    grants: &[PathBuf],
    tcp: bool,
    scope_sockets: bool,
) -> Result<RulesetCreated, landlock::RulesetError> {
    let write = AccessFs::from_write(ABI::V8);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(write)?;
    if tcp {
        ruleset = ruleset.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)?;
    }
    ruleset = ruleset.scope(Scope::Signal)?;
    if scope_sockets {
        ruleset = ruleset.scope(Scope::AbstractUnixSocket)?;
    }
    ruleset
        .create()?
        .add_rules(path_beneath_rules(grants, write))
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
    use std::os::fd::AsRawFd;
    install(&mut cmd, Arc::new(c), writer.as_raw_fd());
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

// ---- The child side: between fork and exec. Async-signal-safe only. ----

/// Set by the supervisor's SIGTERM handler: the harness says time is up.
static TERM: AtomicBool = AtomicBool::new(false);

extern "C" fn on_term(_: libc::c_int) {
    TERM.store(true, Ordering::SeqCst);
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn errno() -> libc::c_int {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// The supervisor's part, then the fork into the command's side.
fn start(c: &Confinement, report: RawFd) -> io::Result<()> {
    // SAFETY: every call below is a raw system call on memory owned by `c` (prepared before
    // the fork) or on the stack; see the module docs for the process layout.
    unsafe {
        check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
        check(libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))?;
        let mut pid_ns = false;
        if let Some(ns) = &c.ns {
            check(libc::unshare(ns.flags))?;
            if let Some((uid, gid)) = &ns.maps {
                write_file(c"/proc/self/setgroups", b"deny")?;
                write_file(c"/proc/self/uid_map", uid.as_bytes())?;
                write_file(c"/proc/self/gid_map", gid.as_bytes())?;
            }
            mounts(c)?;
            if c.loopback {
                loopback_up()?;
            }
            pid_ns = ns.pid;
        }
        let g = libc::fork();
        if g < 0 {
            return Err(io::Error::last_os_error());
        }
        if g == 0 {
            if !pid_ns {
                return command_side(c);
            }
            // G: PID 1 of the new namespace.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            if c.ns.as_ref().is_some_and(|n| n.proc) {
                check(libc::mount(
                    c"proc".as_ptr(),
                    c"/proc".as_ptr(),
                    c"proc".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    std::ptr::null(),
                ))?;
            }
            let h = libc::fork();
            if h < 0 {
                return Err(io::Error::last_os_error());
            }
            if h == 0 {
                return command_side(c);
            }
            close_others(report, c.max_fd);
            init(h, report)
        }
        close_others(report, c.max_fd);
        supervise(g, report)
    }
}

/// H: the last restrictions, then std execs the command.
unsafe fn command_side(c: &Confinement) -> io::Result<()> {
    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
    let ruleset = c.landlock.lock().ok().and_then(|mut r| r.take());
    if let Some(ruleset) = ruleset {
        match ruleset.restrict_self() {
            Ok(status) if status.ruleset != RulesetStatus::NotEnforced => {}
            Ok(_) => return Err(io::Error::from_raw_os_error(libc::ENOSYS)),
            Err(_) => return Err(io::Error::from_raw_os_error(libc::EPERM)),
        }
    }
    if c.drop_caps {
        drop_capabilities(c.cap_last)?;
    }
    Ok(())
}

/// No capabilities now or after exec, even for uid 0: the bounding and ambient sets emptied,
/// then the rest. Nothing can regain them (no_new_privs is set by Landlock, or here).
unsafe fn drop_capabilities(last: libc::c_int) -> io::Result<()> {
    libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    libc::prctl(
        libc::PR_CAP_AMBIENT,
        libc::PR_CAP_AMBIENT_CLEAR_ALL,
        0,
        0,
        0,
    );
    for cap in 0..=last {
        // EPERM without CAP_SETPCAP (an ordinary user has nothing to drop): ignored.
        libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
    }
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    let header = Header {
        version: 0x2008_0522,
        pid: 0,
    };
    let data = [
        Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        },
        Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        },
    ];
    let r = libc::syscall(libc::SYS_capset, &header as *const Header, data.as_ptr());
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The mount namespace's view: private propagation, the protected paths read-only over
/// themselves, scratch read-write over that.
unsafe fn mounts(c: &Confinement) -> io::Result<()> {
    let null = std::ptr::null();
    check(libc::mount(
        null,
        c"/".as_ptr(),
        null,
        libc::MS_REC | libc::MS_PRIVATE,
        std::ptr::null(),
    ))?;
    for b in &c.read_only {
        check(libc::mount(
            b.path.as_ptr(),
            b.path.as_ptr(),
            null,
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        ))?;
    }
    for w in &c.writable {
        check(libc::mount(
            w.as_ptr(),
            w.as_ptr(),
            null,
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        ))?;
    }
    for b in &c.read_only {
        check(libc::mount(
            null,
            b.path.as_ptr(),
            null,
            libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | b.locked,
            std::ptr::null(),
        ))?;
    }
    Ok(())
}

/// Brings up `lo` in the new network namespace.
unsafe fn loopback_up() -> io::Result<()> {
    let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut ifr: libc::ifreq = std::mem::zeroed();
    ifr.ifr_name[0] = b'l' as libc::c_char;
    ifr.ifr_name[1] = b'o' as libc::c_char;
    let mut r = libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut ifr);
    if r == 0 {
        ifr.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        r = libc::ioctl(fd, libc::SIOCSIFFLAGS, &ifr);
    }
    let err = io::Error::last_os_error();
    libc::close(fd);
    if r != 0 {
        return Err(err);
    }
    Ok(())
}

unsafe fn write_file(path: &CStr, data: &[u8]) -> io::Result<()> {
    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let n = libc::write(fd, data.as_ptr().cast(), data.len());
    let err = io::Error::last_os_error();
    libc::close(fd);
    if n != data.len() as isize {
        return Err(err);
    }
    Ok(())
}

/// Closes every descriptor but stdin, stdout, stderr and the report pipe (the exec-error pipe
/// of std among them, so the harness's spawn returns once the command has exec'd).
unsafe fn close_others(keep: RawFd, max: libc::c_uint) {
    let keep = keep as libc::c_uint;
    let ranges = [(3, keep.saturating_sub(1)), (keep + 1, libc::c_uint::MAX)];
    for (first, last) in ranges {
        if first > last {
            continue;
        }
        if libc::syscall(libc::SYS_close_range, first, last, 0) != 0 {
            for fd in first..=last.min(max) {
                libc::close(fd as libc::c_int);
            }
        }
    }
}

/// Appends one record to the report pipe: a tag and little-endian fields.
unsafe fn record(report: RawFd, bytes: &[u8]) {
    libc::write(report, bytes.as_ptr().cast(), bytes.len());
}

/// G: reaps everything re-parented to it; when the command ends, kills and reaps the rest of
/// the namespace (counting them), reports, and exits.
unsafe fn init(h: libc::pid_t, report: RawFd) -> ! {
    loop {
        let mut status = 0;
        let r = libc::waitpid(-1, &mut status, 0);
        if r == h {
            let mut killed = 0u32;
            // As PID 1, -1 means every other process of this namespace and nothing outside it.
            if libc::getpid() == 1 {
                libc::kill(-1, libc::SIGKILL);
                while libc::waitpid(-1, std::ptr::null_mut(), 0) > 0 {
                    killed += 1;
                }
            }
            let s = status.to_le_bytes();
            let k = killed.to_le_bytes();
            record(
                report,
                &[b'H', s[0], s[1], s[2], s[3], k[0], k[1], k[2], k[3]],
            );
            libc::_exit(0);
        }
        if r < 0 && errno() != libc::EINTR {
            libc::_exit(1);
        }
    }
}

/// C: waits for G (or H), on SIGTERM kills it, then kills and reaps every descendant left and
/// reports.
unsafe fn supervise(g: libc::pid_t, report: RawFd) -> ! {
    let mut action: libc::sigaction = std::mem::zeroed();
    action.sa_sigaction = on_term as *const () as libc::sighandler_t;
    libc::sigemptyset(&mut action.sa_mask);
    libc::sigaction(libc::SIGTERM, &action, std::ptr::null_mut());
    let mut status: libc::c_int = -1;
    let mut timed_out = false;
    loop {
        if TERM.load(Ordering::SeqCst) && !timed_out {
            timed_out = true;
            libc::kill(g, libc::SIGKILL);
        }
        let mut st = 0;
        let r = libc::waitpid(-1, &mut st, 0);
        if r == g {
            status = st;
            break;
        }
        if r < 0 && errno() != libc::EINTR {
            break;
        }
    }
    let killed = kill_descendants();
    let s = status.to_le_bytes();
    let k = killed.to_le_bytes();
    record(
        report,
        &[
            b'C',
            s[0],
            s[1],
            s[2],
            s[3],
            k[0],
            k[1],
            k[2],
            k[3],
            u8::from(timed_out),
        ],
    );
    libc::_exit(0)
}

/// Kills every remaining descendant: they are all our children or below, and killing a child
/// re-parents its own children to us. Returns how many were reaped.
unsafe fn kill_descendants() -> u32 {
    let mut reaped = 0u32;
    for _ in 0..100_000 {
        while libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) > 0 {
            reaped += 1;
        }
        let mut any = false;
        for_each_child(|pid| {
            any = true;
            libc::kill(pid, libc::SIGKILL);
        });
        if !any {
            match libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) {
                r if r > 0 => reaped += 1,
                0 => {
                    let pause = libc::timespec {
                        tv_sec: 0,
                        tv_nsec: 1_000_000,
                    };
                    libc::nanosleep(&pause, std::ptr::null_mut());
                }
                _ => return reaped,
            }
            continue;
        }
        if libc::waitpid(-1, std::ptr::null_mut(), 0) > 0 {
            reaped += 1;
        }
    }
    reaped
}

/// Calls `f` with each child of this (single-threaded) process: from
/// `/proc/thread-self/children`, or by scanning `/proc` when the kernel lacks that file.
unsafe fn for_each_child(mut f: impl FnMut(libc::pid_t)) {
    let mut buf = [0u8; 4096];
    let fd = libc::open(
        c"/proc/thread-self/children".as_ptr(),
        libc::O_RDONLY | libc::O_CLOEXEC,
    );
    if fd >= 0 {
        let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        if n > 0 {
            parse_pids(&buf[..n as usize], &mut f);
        }
        return;
    }
    scan_proc(libc::getpid(), &mut f);
}

fn parse_pids(bytes: &[u8], f: &mut impl FnMut(libc::pid_t)) {
    let mut pid: libc::pid_t = 0;
    let mut digits = false;
    for &b in bytes {
        if b.is_ascii_digit() {
            pid = pid
                .saturating_mul(10)
                .saturating_add((b - b'0') as libc::pid_t);
            digits = true;
        } else {
            if digits && pid > 0 {
                f(pid);
            }
            pid = 0;
            digits = false;
        }
    }
    if digits && pid > 0 {
        f(pid);
    }
}

/// Every process whose parent is `me`, found in `/proc/<pid>/stat`.
unsafe fn scan_proc(me: libc::pid_t, f: &mut impl FnMut(libc::pid_t)) {
    let dir = libc::open(
        c"/proc".as_ptr(),
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
    );
    if dir < 0 {
        return;
    }
    let mut buf = [0u8; 8192];
    loop {
        let n = libc::syscall(libc::SYS_getdents64, dir, buf.as_mut_ptr(), buf.len());
        if n <= 0 {
            break;
        }
        let mut off = 0usize;
        while off + 19 <= n as usize {
            let reclen = u16::from_ne_bytes([buf[off + 16], buf[off + 17]]) as usize;
            if reclen == 0 {
                break;
            }
            let name = &buf[off + 19..(off + reclen).min(n as usize)];
            let len = name.iter().position(|b| *b == 0).unwrap_or(name.len());
            let name = &name[..len];
            if !name.is_empty() && name.iter().all(u8::is_ascii_digit) {
                let mut pid: libc::pid_t = 0;
                for &b in name {
                    pid = pid
                        .saturating_mul(10)
                        .saturating_add((b - b'0') as libc::pid_t);
                }
                if parent_of(dir, name) == Some(me) {
                    f(pid);
                }
            }
            off += reclen;
        }
    }
    libc::close(dir);
}

/// The parent pid from `/proc/<name>/stat` (the field after the `)` that ends the command name).
unsafe fn parent_of(proc_dir: RawFd, name: &[u8]) -> Option<libc::pid_t> {
    let mut path = [0u8; 32];
    if name.len() + 6 >= path.len() {
        return None;
    }
    path[..name.len()].copy_from_slice(name);
    path[name.len()..name.len() + 5].copy_from_slice(b"/stat");
    let fd = libc::openat(
        proc_dir,
        path.as_ptr().cast(),
        libc::O_RDONLY | libc::O_CLOEXEC,
    );
    if fd < 0 {
        return None;
    }
    let mut buf = [0u8; 512];
    let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
    libc::close(fd);
    if n <= 0 {
        return None;
    }
    let stat = &buf[..n as usize];
    let close = stat.iter().rposition(|b| *b == b')')?;
    // ") S PPID ..."
    let rest = stat.get(close + 2..)?;
    let mut fields = rest.split(|b| *b == b' ');
    fields.next()?;
    let ppid = fields.next()?;
    let mut v: libc::pid_t = 0;
    for &b in ppid {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v
            .saturating_mul(10)
            .saturating_add((b - b'0') as libc::pid_t);
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pids_are_read_from_the_children_file() {
        let mut seen = Vec::new();
        parse_pids(b"12 345 6\n", &mut |p| seen.push(p));
        assert_eq!(seen, [12, 345, 6]);
        seen.clear();
        parse_pids(b"", &mut |p| seen.push(p));
        assert!(seen.is_empty());
    }

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
