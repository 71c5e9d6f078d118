//! Containment by the kernel, for every command (and language server) the
//! sandbox starts. Between fork and exec the child:
//!
//! 1. enters its own user, mount and PID namespaces (where the kernel
//!    allows unprivileged user namespaces), and there bind-mounts the
//!    places that run code later (`.git/hooks`, `.git/config`, `.agent/`,
//!    `.gitmodules`, agent's own files, `PATH` directories) read-only, and
//!    pins `.git` (a mount point cannot be renamed away and replaced);
//! 2. restricts itself with Landlock (done by `Sandbox::apply`, after 1:
//!    a Landlock domain may not change mounts, so nothing undoes them);
//! 3. forks: the child becomes the command (PID 1 of its namespace, so
//!    when it ends the kernel kills everything it left, `setsid` and
//!    double forks included), and the parent stays behind as its keeper.
//!    The keeper holds nothing open but the read end of the agent's
//!    lifeline pipe: when the agent dies, however it dies, the pipe
//!    closes and the keeper kills the command. The command dies with the
//!    keeper (`PR_SET_PDEATHSIG`), and the keeper exits as the command did.
//!
//! Without user namespaces (some distributions restrict them) step 1 is
//! skipped: the keeper and Landlock remain, protected places inside the
//! project stay writable, and processes that leave the command's process
//! group are not followed. `agent doctor` and the log say so.
//!
//! Everything the child does is prepared in the parent: after a fork in a
//! threaded program the child must not allocate, so it only makes system
//! calls on bytes built beforehand. Written by hand because no crate does
//! this from `pre_exec` (bubblewrap is a program, not a library).

use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// What the child sets up before it runs the command.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    namespaces: bool,
    /// Bind-mounted onto themselves, read-only.
    read_only: Vec<CString>,
    /// Bind-mounted onto themselves (writable), so they cannot be renamed.
    pinned: Vec<CString>,
    /// Directories replaced by an empty private tmpfs: the person's IPC
    /// sockets (tmux, screen, D-Bus, systemd, X11) and agent's records.
    masked_dirs: Vec<CString>,
    /// Sockets replaced by `/dev/null` (the Docker daemon's).
    masked_files: Vec<CString>,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

/// Where the person's session servers listen: a command that reached one
/// (`tmux run-shell`, `systemd-run --user`, D-Bus, an X server) would run
/// code outside its sandbox. `{uid}` is the person's user id.
const IPC_DIRS: &[&str] = &[
    "/tmp/tmux-{uid}",
    "/run/user/{uid}",
    "/tmp/.X11-unix",
    "/tmp/.ICE-unix",
    "/run/screen",
    "/var/run/screen",
];
const IPC_SOCKETS: &[&str] = &[
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/run/podman/podman.sock",
    "/run/containerd/containerd.sock",
];

/// Environment variables that point a command at those servers.
pub const IPC_ENV: &[&str] = &[
    "TMUX",
    "TMUX_PANE",
    "STY",
    "DBUS_SESSION_BUS_ADDRESS",
    "DOCKER_HOST",
];

impl Plan {
    /// A plan keeping `read_only` (those that exist) read-only, `pinned`
    /// in place and `hidden` directories empty, in namespaces when the
    /// kernel allows them.
    pub fn new(read_only: &[PathBuf], pinned: &[PathBuf], hidden: &[PathBuf]) -> Plan {
        let namespaces = namespaces_available();
        let c = |p: &PathBuf| CString::new(p.as_os_str().as_bytes()).ok();
        let existing = |v: &[PathBuf]| -> Vec<CString> {
            if !namespaces {
                return Vec::new();
            }
            let mut v: Vec<PathBuf> = v.iter().filter_map(|p| p.canonicalize().ok()).collect();
            v.sort();
            v.dedup();
            v.iter().filter_map(c).collect()
        };
        // SAFETY: getuid/getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let mut dirs: Vec<PathBuf> = IPC_DIRS
            .iter()
            .map(|d| PathBuf::from(d.replace("{uid}", &uid.to_string())))
            .filter(|d| d.is_dir())
            .collect();
        dirs.extend(hidden.iter().filter(|d| d.is_dir()).cloned());
        let sockets: Vec<PathBuf> = IPC_SOCKETS
            .iter()
            .map(PathBuf::from)
            .filter(|s| s.exists())
            .collect();
        Plan {
            namespaces,
            read_only: existing(read_only),
            pinned: existing(pinned),
            masked_dirs: existing(&dirs),
            masked_files: existing(&sockets),
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
        }
    }

    pub fn namespaces(&self) -> bool {
        self.namespaces
    }

    /// Step 1, in the child (no allocation).
    pub fn enter(&self) -> io::Result<()> {
        close_lifeline_writer();
        // A session of its own: no controlling terminal, so the command
        // cannot push keystrokes into the person's (TIOCSTI on /dev/tty).
        // SAFETY: setsid in the child, which leads no group yet.
        if unsafe { libc::setsid() } < 0 {
            return Err(io::Error::last_os_error());
        }
        if !self.namespaces {
            return Ok(());
        }
        // SAFETY: plain system calls on buffers built before the fork.
        unsafe {
            if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID) != 0 {
                return Err(io::Error::last_os_error());
            }
            write_file(c"/proc/self/setgroups", b"deny")?;
            write_file(c"/proc/self/uid_map", &self.uid_map)?;
            write_file(c"/proc/self/gid_map", &self.gid_map)?;
            // Nothing done here reaches the agent's mount namespace.
            check(libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            for p in &self.pinned {
                check(libc::mount(
                    p.as_ptr(),
                    p.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND,
                    std::ptr::null(),
                ))?;
            }
            for p in &self.read_only {
                check(libc::mount(
                    p.as_ptr(),
                    p.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                ))?;
                // A remount inside a user namespace must keep the flags
                // the mount already has (nosuid, nodev...).
                let mut st: libc::statvfs = std::mem::zeroed();
                check(libc::statvfs(p.as_ptr(), &mut st))?;
                let mut flags = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY;
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
                check(libc::mount(
                    std::ptr::null(),
                    p.as_ptr(),
                    std::ptr::null(),
                    flags,
                    std::ptr::null(),
                ))?;
            }
            for d in &self.masked_dirs {
                check(libc::mount(
                    c"tmpfs".as_ptr(),
                    d.as_ptr(),
                    c"tmpfs".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    c"size=16m,mode=700".as_ptr().cast(),
                ))?;
            }
            for s in &self.masked_files {
                check(libc::mount(
                    c"/dev/null".as_ptr(),
                    s.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND,
                    std::ptr::null(),
                ))?;
            }
        }
        Ok(())
    }

    /// Step 3, in the child after Landlock: returns in the command's
    /// process; the keeper (and the namespace's init) never return.
    /// `report`: a descriptor (close-on-exec) the init writes to: `L` when
    /// processes were still running after the command ended, `S` and a
    /// signal number when the command was killed by one.
    /// `restrict` (Landlock) runs in the command's branch, after its own
    /// `/proc` is mounted: the keeper runs nothing but this code.
    pub fn fork_keeper(
        &self,
        report: RawFd,
        restrict: &mut dyn FnMut() -> io::Result<()>,
    ) -> io::Result<()> {
        // SAFETY: fork in a single-threaded child; each side only makes
        // system calls from here on.
        unsafe {
            let pid = libc::fork();
            if pid < 0 {
                return Err(io::Error::last_os_error());
            }
            if pid == 0 {
                // It dies with its keeper.
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if !self.namespaces {
                    return restrict();
                }
                // PID 1 here: a `/proc` of this namespace shows the command
                // its own processes only, not the agent's (its environment,
                // its memory). Best effort: some containers forbid it.
                libc::mount(
                    c"proc".as_ptr(),
                    c"/proc".as_ptr(),
                    c"proc".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    std::ptr::null(),
                );
                restrict()?;
                // PID 1 of the new namespace: an init that runs the
                // command as its child and reaps what it leaves.
                let command = libc::fork();
                if command < 0 {
                    return Err(io::Error::last_os_error());
                }
                if command == 0 {
                    return Ok(());
                }
                init(command, report)
            }
            keep(pid, self.namespaces)
        }
    }
}

/// After the command ends, processes it left get this long to finish
/// (writing their last output) before the namespace ends with them.
const LEFTOVER_GRACE_MS: i64 = 300;

/// PID 1 of a command's namespace: waits for the command, gives what it
/// left a moment, reports, and exits (the kernel then kills the rest).
///
/// # Safety
/// Called in a forked child: only system calls.
unsafe fn init(command: libc::pid_t, report: RawFd) -> ! {
    // SAFETY: the caller's.
    unsafe {
        close_all_but(report);
        let mut status: libc::c_int = 0;
        loop {
            let mut st = 0;
            let r = libc::waitpid(-1, &mut st, 0);
            if r == command {
                status = st;
                break;
            }
            if r < 0 && *libc::__errno_location() == libc::ECHILD {
                break;
            }
        }
        let mut waited = 0;
        let mut left = false;
        loop {
            let mut st = 0;
            let r = libc::waitpid(-1, &mut st, libc::WNOHANG);
            if r > 0 {
                continue;
            }
            if r < 0 {
                break;
            }
            if waited >= LEFTOVER_GRACE_MS {
                left = true;
                break;
            }
            let pause = libc::timespec {
                tv_sec: 0,
                tv_nsec: 10_000_000,
            };
            libc::nanosleep(&pause, std::ptr::null_mut());
            waited += 10;
        }
        if report >= 0 {
            if left {
                libc::write(report, b"L".as_ptr().cast(), 1);
            }
            if libc::WIFSIGNALED(status) {
                let msg = [b'S', libc::WTERMSIG(status) as u8];
                libc::write(report, msg.as_ptr().cast(), 2);
            }
        }
        // PID 1 cannot die of a signal it sends itself; the report says it.
        if libc::WIFEXITED(status) {
            libc::_exit(libc::WEXITSTATUS(status));
        }
        libc::_exit(128 + libc::WTERMSIG(status))
    }
}

/// # Safety
/// Called in a forked child: only system calls.
unsafe fn write_file(path: &std::ffi::CStr, bytes: &[u8]) -> io::Result<()> {
    // SAFETY: the caller's; the path is NUL-terminated and bytes valid.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        libc::close(fd);
        if n != bytes.len() as isize {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The keeper: waits for the command, kills it if the agent goes away,
/// and exits as it did.
///
/// # Safety
/// Called in a forked child: only system calls.
unsafe fn keep(pid: libc::pid_t, namespaces: bool) -> ! {
    let lifeline = LIFELINE.get().map_or(-1, |l| l.0);
    // SAFETY: the caller's.
    unsafe {
        // Hold nothing open (the output pipe, the spawn error pipe) but
        // the lifeline, so EOF and spawn results come from the command.
        close_all_but(lifeline);
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGPIPE] {
            libc::signal(sig, libc::SIG_IGN);
        }
        let pidfd = libc::syscall(libc::SYS_pidfd_open, pid, 0) as libc::c_int;
        let mut status: libc::c_int = 0;
        loop {
            if pidfd >= 0 && lifeline >= 0 {
                let mut fds = [
                    libc::pollfd {
                        fd: lifeline,
                        events: libc::POLLIN,
                        revents: 0,
                    },
                    libc::pollfd {
                        fd: pidfd,
                        events: libc::POLLIN,
                        revents: 0,
                    },
                ];
                if libc::poll(fds.as_mut_ptr(), 2, -1) < 0 {
                    continue;
                }
                if fds[0].revents != 0 && fds[1].revents == 0 {
                    // The agent is gone: so is the command (and, as PID 1
                    // of its namespace, everything it started).
                    if namespaces {
                        libc::kill(pid, libc::SIGKILL);
                    } else {
                        libc::kill(-libc::getpgrp(), libc::SIGKILL);
                    }
                    libc::waitpid(pid, &mut status, 0);
                    libc::_exit(137);
                }
            }
            let flags = if pidfd >= 0 && lifeline >= 0 {
                libc::WNOHANG
            } else {
                0
            };
            let r = libc::waitpid(pid, &mut status, flags);
            if r == pid {
                break;
            }
            if r < 0 && *libc::__errno_location() != libc::EINTR {
                libc::_exit(125);
            }
        }
        if libc::WIFEXITED(status) {
            libc::_exit(libc::WEXITSTATUS(status));
        }
        let sig = libc::WTERMSIG(status);
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::kill(libc::getpid(), sig);
        libc::_exit(128 + sig)
    }
}

/// # Safety
/// Called in a forked child: only system calls.
unsafe fn close_all_but(keep: RawFd) {
    // SAFETY: the caller's.
    unsafe {
        let max = libc::c_uint::MAX;
        if keep < 0 {
            if libc::syscall(libc::SYS_close_range, 0u32, max, 0u32) == 0 {
                return;
            }
        } else {
            let k = keep as libc::c_uint;
            let low = k == 0 || libc::syscall(libc::SYS_close_range, 0u32, k - 1, 0u32) == 0;
            if low && libc::syscall(libc::SYS_close_range, k + 1, max, 0u32) == 0 {
                return;
            }
        }
        for fd in 0..4096 {
            if fd != keep {
                libc::close(fd);
            }
        }
    }
}

/// The agent's end of every keeper's lifeline: (read, write), both
/// close-on-exec. The agent never writes; its death closes the write end.
static LIFELINE: OnceLock<(RawFd, RawFd)> = OnceLock::new();

/// Opens the lifeline (once, in the agent, before the first command).
pub fn lifeline() -> bool {
    LIFELINE
        .get_or_init(|| {
            let mut fds = [-1; 2];
            // SAFETY: pipe2 fills the array it is given.
            if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == 0 {
                (fds[0], fds[1])
            } else {
                (-1, -1)
            }
        })
        .0
        >= 0
}

/// In a forked child that will not exec at once: its copy of the write end
/// would keep every lifeline open.
fn close_lifeline_writer() {
    if let Some(&(_, w)) = LIFELINE.get()
        && w >= 0
    {
        // SAFETY: closes a descriptor of this (forked) process.
        unsafe { libc::close(w) };
    }
}

/// Whether this kernel lets us make user, mount and PID namespaces (probed
/// once by starting `true` in them). `AGENT_NO_NAMESPACES=1` turns them off.
pub fn namespaces_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        if std::env::var_os("AGENT_NO_NAMESPACES").is_some_and(|v| v == "1") {
            return false;
        }
        let probe = Plan {
            namespaces: true,
            ..Plan::new_without_probe()
        };
        let mut cmd = std::process::Command::new("true");
        cmd.stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        // SAFETY: the closure only makes system calls (see `Plan::enter`).
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || probe.enter());
        }
        cmd.status().is_ok_and(|s| s.success())
    })
}

impl Plan {
    fn new_without_probe() -> Plan {
        // SAFETY: getuid/getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        Plan {
            namespaces: false,
            read_only: Vec::new(),
            pinned: Vec::new(),
            masked_dirs: Vec::new(),
            masked_files: Vec::new(),
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
        }
    }
}

/// The places inside `workspace` that run code later and must stay
/// read-only to commands, and the directory to pin.
pub fn project_places(workspace: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let git = workspace.join(".git");
    // Missing ones cannot be mounted over: a command may create `.agent/`;
    // what it asks for then waits for the person's trust like any other.
    let mut read_only = vec![workspace.join(".agent"), workspace.join(".gitmodules")];
    let mut pinned = Vec::new();
    if git.is_dir() {
        // A repository without hooks yet gets the (empty) directory git
        // itself would create, so commands cannot add hooks there.
        let _ = std::fs::create_dir(git.join("hooks"));
        read_only.extend([git.join("hooks"), git.join("config")]);
        pinned.push(git);
    }
    (read_only, pinned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_answers() {
        // Either answer is fine; it must not hang or panic.
        let _ = namespaces_available();
    }
}
