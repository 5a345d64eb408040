//! The child side of the Linux sandbox: everything between fork and exec — the supervisor
//! (C), the namespace's init (G) and the command's last restrictions (H), see [`super`].
//! Async-signal-safe only: raw system calls on memory prepared before the fork (the
//! [`Confinement`]) or on the stack, no allocation.

use std::ffi::CStr;
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};

use landlock::RulesetStatus;

use super::{Confinement, ViewMounts};

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
pub(super) fn start(c: &Confinement, report: RawFd) -> io::Result<()> {
    // SAFETY: every call below is a raw system call on memory owned by `c` (prepared before
    // the fork) or on the stack; see the module docs for the process layout.
    unsafe {
        check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
        check(libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))?;
        let mut pid_ns = false;
        if let Some(ns) = &c.ns {
            // The harness is not dumpable, so its /proc files belong to root; the id maps
            // are written by this process itself, which only a dumpable one may do. It is made
            // not dumpable again right after, before anything of the command exists (its
            // memory is a copy of the harness's).
            libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0);
            let entered = check(libc::unshare(ns.flags)).and_then(|()| match &ns.maps {
                Some((uid, gid)) => write_file(c"/proc/self/setgroups", b"deny")
                    .and_then(|()| write_file(c"/proc/self/uid_map", uid.as_bytes()))
                    .and_then(|()| write_file(c"/proc/self/gid_map", gid.as_bytes())),
                None => Ok(()),
            });
            libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
            entered?;
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
    // Nothing the harness inherited from its own parent (an editor's socket, a terminal's
    // pipe) reaches the command: every descriptor above stderr closes at exec.
    if libc::syscall(
        libc::SYS_close_range,
        3u32,
        libc::c_uint::MAX,
        libc::CLOSE_RANGE_CLOEXEC,
    ) != 0
    {
        for fd in 3..c.max_fd {
            libc::fcntl(fd as libc::c_int, libc::F_SETFD, libc::FD_CLOEXEC);
        }
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

/// The mount namespace's view: private propagation, the read view, the protected paths
/// read-only over themselves, scratch read-write over that.
unsafe fn mounts(c: &Confinement) -> io::Result<()> {
    let null = std::ptr::null();
    check(libc::mount(
        null,
        c"/".as_ptr(),
        null,
        libc::MS_REC | libc::MS_PRIVATE,
        std::ptr::null(),
    ))?;
    if let Some(view) = &c.view {
        read_view(view)?;
    }
    let bind = |path: &CStr| {
        check(libc::mount(
            path.as_ptr(),
            path.as_ptr(),
            null,
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        ))
    };
    for b in &c.read_only {
        bind(&b.path)?;
    }
    for w in &c.writable {
        bind(w)?;
    }
    if let Some(shm) = &c.shm {
        check(libc::mount(
            shm.as_ptr(),
            c"/dev/shm".as_ptr(),
            null,
            libc::MS_BIND,
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

/// `open_tree`'s and `move_mount`'s flags (linux/mount.h).
const OPEN_TREE_CLONE: libc::c_uint = 1;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 4;

/// The read view: clone every shown place, cover the hidden places with empty file systems,
/// make the way back to each shown place and put its clone there, make the covers and the
/// read-only places read-only, mask the secret stores, and enter the working directory again.
unsafe fn read_view(v: &ViewMounts) -> io::Result<()> {
    let null = std::ptr::null();
    let flags =
        (OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint) | libc::AT_RECURSIVE as libc::c_uint;
    for ((path, _, _), fd) in v.shown.iter().zip(&v.fds) {
        let r = libc::syscall(libc::SYS_open_tree, libc::AT_FDCWD, path.as_ptr(), flags);
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        fd.store(r as libc::c_int, Ordering::Relaxed);
    }
    let tmpfs = c"tmpfs".as_ptr();
    let nosuid_nodev = libc::MS_NOSUID | libc::MS_NODEV;
    for (path, is_dir) in &v.covers {
        if *is_dir {
            check(libc::mount(
                tmpfs,
                path.as_ptr(),
                tmpfs,
                nosuid_nodev,
                c"mode=0755,size=1m".as_ptr().cast(),
            ))?;
        } else {
            check(libc::mount(
                c"/dev/null".as_ptr(),
                path.as_ptr(),
                null,
                libc::MS_BIND,
                null.cast(),
            ))?;
        }
    }
    for dir in &v.dirs {
        if libc::mkdir(dir.as_ptr(), 0o755) != 0 && errno() != libc::EEXIST {
            return Err(io::Error::last_os_error());
        }
    }
    for (link, target) in &v.links {
        if libc::symlink(target.as_ptr(), link.as_ptr()) != 0 && errno() != libc::EEXIST {
            return Err(io::Error::last_os_error());
        }
    }
    for ((path, is_dir, _), fd) in v.shown.iter().zip(&v.fds) {
        if !*is_dir {
            // A file's mount point: an empty file in the cover (or the file itself, when a
            // shown directory already holds it).
            let f = libc::open(
                path.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_CLOEXEC,
                0o644,
            );
            if f >= 0 {
                libc::close(f);
            }
        }
        let fd = fd.load(Ordering::Relaxed);
        let r = libc::syscall(
            libc::SYS_move_mount,
            fd,
            c"".as_ptr(),
            libc::AT_FDCWD,
            path.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        );
        libc::close(fd);
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    for (path, _, read_only) in &v.shown {
        if let Some(locked) = read_only {
            check(libc::mount(
                null,
                path.as_ptr(),
                null,
                libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | locked,
                null.cast(),
            ))?;
        }
    }
    for (path, is_dir) in &v.covers {
        if *is_dir {
            check(libc::mount(
                null,
                path.as_ptr(),
                null,
                libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | nosuid_nodev,
                null.cast(),
            ))?;
        }
    }
    for (path, is_dir) in &v.secrets {
        if *is_dir {
            check(libc::mount(
                tmpfs,
                path.as_ptr(),
                tmpfs,
                libc::MS_RDONLY | libc::MS_NOEXEC | nosuid_nodev,
                c"mode=0000,size=4k".as_ptr().cast(),
            ))?;
        } else {
            check(libc::mount(
                c"/dev/null".as_ptr(),
                path.as_ptr(),
                null,
                libc::MS_BIND,
                null.cast(),
            ))?;
        }
    }
    check(libc::chdir(v.cwd.as_ptr()))
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
}
