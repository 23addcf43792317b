//! A launch expressed as `posix_spawn` attributes and file actions: the new process group
//! (`POSIX_SPAWN_SETPGROUP`) or session (`POSIX_SPAWN_SETSID`), every signal at its default
//! and none blocked (`POSIX_SPAWN_SETSIGDEF`, `POSIX_SPAWN_SETSIGMASK`), the working directory
//! changed to the request's directory descriptor and stdio moved into place (file actions, in
//! that order, so stdio cannot overwrite the directory descriptor). On macOS
//! `POSIX_SPAWN_CLOEXEC_DEFAULT` also closes every descriptor the file actions do not name, so
//! a launch never leaks one, whatever its close-on-exec flag.
//!
//! macOS's launcher ([`super::macos`]) is the user. The module is also compiled for Linux's
//! unit tests (glibc has the same calls), so the stdio planning and real spawns through it run
//! on the Linux CI; the Linux build itself launches with `clone` and does not contain it.
//!
//! Invariant: [`Prepared`] owns the attribute and file-action objects and borrows the
//! [`LaunchSpec`] whose strings its argv/envp arrays point into; it is only read after
//! construction, so a forked child may use it (no allocation, no lock).

use std::ffi::c_int;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::RawFd;

use super::{LaunchSpec, Stage};

/// `POSIX_SPAWN_SETSID` (macOS 10.15+, glibc 2.26+): the child leads a new session.
#[cfg(target_os = "macos")]
const POSIX_SPAWN_SETSID: c_int = 0x0400;
#[cfg(not(target_os = "macos"))]
const POSIX_SPAWN_SETSID: c_int = libc::POSIX_SPAWN_SETSID as c_int;

/// How the spawned process relates to groups and sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Grouping {
    /// Leader of a new process group (`POSIX_SPAWN_SETPGROUP` with pgroup 0).
    NewGroup,
    /// Leader of a new session, without a controlling terminal (`POSIX_SPAWN_SETSID`).
    NewSession,
    /// Whatever the calling process already arranged (a forked child that did it itself).
    AsIs,
}

/// The attribute flags of a launch: signals reset and unblocked, the grouping, `extra` (e.g.
/// macOS's `POSIX_SPAWN_SETEXEC`), and on macOS `POSIX_SPAWN_CLOEXEC_DEFAULT`.
pub(crate) fn flags(grouping: Grouping, extra: c_int) -> c_int {
    let mut f =
        libc::POSIX_SPAWN_SETSIGDEF as c_int | libc::POSIX_SPAWN_SETSIGMASK as c_int | extra;
    match grouping {
        Grouping::NewGroup => f |= libc::POSIX_SPAWN_SETPGROUP as c_int,
        Grouping::NewSession => f |= POSIX_SPAWN_SETSID,
        Grouping::AsIs => {}
    }
    #[cfg(target_os = "macos")]
    {
        f |= libc::POSIX_SPAWN_CLOEXEC_DEFAULT;
    }
    f
}

/// One file action, planned before any is added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FdAction {
    /// `dup2(from, to)`.
    Dup2 {
        /// Source descriptor.
        from: RawFd,
        /// Target descriptor.
        to: RawFd,
    },
    /// `close(fd)`.
    Close(RawFd),
}

/// The file actions that make `stdio[i]` the child's descriptor `i` (0, 1, 2).
///
/// The actions run one after the other in the child, so a source that is itself 0, 1 or 2
/// could be overwritten before it is used (`[5, 0, 0]`: after `dup2(5, 0)`, "0" is no longer
/// the caller's 0). Every such source is first copied above all sources, moved from there and
/// closed at the end. The plan never contains `dup2(fd, fd)`, whose effect on the close-on-exec
/// flag differs between implementations.
pub(crate) fn stdio_plan(stdio: [RawFd; 3]) -> Vec<FdAction> {
    let mut plan = Vec::with_capacity(9);
    let mut next_free = stdio.iter().copied().max().unwrap_or(0).max(2) + 1;
    let mut temps: Vec<(RawFd, RawFd)> = Vec::new();
    let mut sources = stdio;
    for src in sources.iter_mut() {
        if *src > 2 {
            continue;
        }
        let temp = match temps.iter().find(|(orig, _)| orig == src) {
            Some(&(_, t)) => t,
            None => {
                let t = next_free;
                next_free += 1;
                plan.push(FdAction::Dup2 { from: *src, to: t });
                temps.push((*src, t));
                t
            }
        };
        *src = temp;
    }
    for (target, &from) in sources.iter().enumerate() {
        plan.push(FdAction::Dup2 {
            from,
            to: target as RawFd,
        });
    }
    plan.extend(temps.into_iter().map(|(_, t)| FdAction::Close(t)));
    plan
}

fn check(rc: c_int) -> io::Result<()> {
    // posix_spawn* return the error number instead of setting errno.
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

/// A `posix_spawnattr_t`, destroyed on drop.
struct Attrs(libc::posix_spawnattr_t);

impl Attrs {
    fn new(flags: c_int) -> io::Result<Self> {
        let mut raw = MaybeUninit::<libc::posix_spawnattr_t>::uninit();
        // SAFETY: init fills the object; it is only used (and destroyed) after a success.
        check(unsafe { libc::posix_spawnattr_init(raw.as_mut_ptr()) })?;
        // SAFETY: initialized just above.
        let mut attrs = Attrs(unsafe { raw.assume_init() });
        let mut all = MaybeUninit::<libc::sigset_t>::uninit();
        let mut none = MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: the sets are filled before use; the attribute object is initialized.
        unsafe {
            libc::sigfillset(all.as_mut_ptr());
            libc::sigemptyset(none.as_mut_ptr());
            check(libc::posix_spawnattr_setsigdefault(
                &mut attrs.0,
                all.as_ptr(),
            ))?;
            check(libc::posix_spawnattr_setsigmask(
                &mut attrs.0,
                none.as_ptr(),
            ))?;
            check(libc::posix_spawnattr_setflags(&mut attrs.0, flags as _))?;
            // pgroup 0: a new group whose id is the child's pid (used with SETPGROUP only).
            check(libc::posix_spawnattr_setpgroup(&mut attrs.0, 0))?;
        }
        Ok(attrs)
    }
}

impl Drop for Attrs {
    fn drop(&mut self) {
        // SAFETY: initialized in `new`, destroyed once.
        unsafe { libc::posix_spawnattr_destroy(&mut self.0) };
    }
}

/// A `posix_spawn_file_actions_t`, destroyed on drop.
struct Actions(libc::posix_spawn_file_actions_t);

impl Actions {
    fn new(stdio: [RawFd; 3], cwd: RawFd) -> io::Result<Self> {
        let mut raw = MaybeUninit::<libc::posix_spawn_file_actions_t>::uninit();
        // SAFETY: init fills the object; it is only used (and destroyed) after a success.
        check(unsafe { libc::posix_spawn_file_actions_init(raw.as_mut_ptr()) })?;
        // SAFETY: initialized just above.
        let mut actions = Actions(unsafe { raw.assume_init() });
        // SAFETY: the object is initialized; descriptors are plain integers here (they are
        // only used in the child).
        check(unsafe { libc::posix_spawn_file_actions_addfchdir_np(&mut actions.0, cwd) })?;
        for a in stdio_plan(stdio) {
            // SAFETY: as above.
            check(unsafe {
                match a {
                    FdAction::Dup2 { from, to } => {
                        libc::posix_spawn_file_actions_adddup2(&mut actions.0, from, to)
                    }
                    FdAction::Close(fd) => {
                        libc::posix_spawn_file_actions_addclose(&mut actions.0, fd)
                    }
                }
            })?;
        }
        Ok(actions)
    }
}

impl Drop for Actions {
    fn drop(&mut self) {
        // SAFETY: initialized in `new`, destroyed once.
        unsafe { libc::posix_spawn_file_actions_destroy(&mut self.0) };
    }
}

/// Everything `posix_spawn` takes, built from a [`LaunchSpec`] before any process exists.
pub(crate) struct Prepared<'a> {
    spec: &'a LaunchSpec,
    attrs: Attrs,
    actions: Actions,
    argv: Vec<*mut libc::c_char>,
    envp: Vec<*mut libc::c_char>,
}

impl<'a> Prepared<'a> {
    /// Prepares `spec` with the attribute `flags` (see [`flags`]). The rlimits, the
    /// parent-death signal, cgroups and a controlling terminal are not expressed here: the
    /// caller handles (or refuses) them.
    pub(crate) fn new(spec: &'a LaunchSpec, flags: c_int) -> io::Result<Self> {
        let ptrs = |v: &[std::ffi::CString]| -> Vec<*mut libc::c_char> {
            v.iter()
                .map(|s| s.as_ptr() as *mut libc::c_char)
                .chain(std::iter::once(std::ptr::null_mut()))
                .collect()
        };
        Ok(Prepared {
            spec,
            attrs: Attrs::new(flags)?,
            actions: Actions::new(spec.stdio, spec.cwd)?,
            argv: ptrs(&spec.argv),
            envp: ptrs(&spec.envp),
        })
    }

    /// Calls `posix_spawn`; the child's pid, or the error number it returned. With macOS's
    /// `POSIX_SPAWN_SETEXEC` it only returns on failure. Async-signal-safe on macOS (a system
    /// call over memory prepared beforehand), so a forked child may call it.
    pub(crate) fn spawn(&self) -> Result<i32, c_int> {
        let mut pid: libc::pid_t = 0;
        loop {
            // SAFETY: every pointer refers to memory owned by `self` or the borrowed spec, alive
            // for this call; argv and envp are NULL-terminated arrays of C strings.
            let rc = unsafe {
                libc::posix_spawn(
                    &mut pid,
                    self.spec.program.as_ptr(),
                    &self.actions.0,
                    &self.attrs.0,
                    self.argv.as_ptr(),
                    self.envp.as_ptr(),
                )
            };
            match rc {
                0 => return Ok(pid),
                libc::EINTR => continue,
                e => return Err(e),
            }
        }
    }
}

/// Which step a failed `posix_spawn` most likely failed at, for the error message: it returns
/// one error number for every step. The inputs are looked at again: a working-directory
/// descriptor that is no longer an open directory, then a stdio descriptor that is not open;
/// otherwise the exec itself.
pub(crate) fn failed_stage(spec: &LaunchSpec) -> Stage {
    let open = |fd: RawFd| {
        // SAFETY: F_GETFD only inspects the descriptor table.
        unsafe { libc::fcntl(fd, libc::F_GETFD) >= 0 }
    };
    let is_dir = |fd: RawFd| {
        let mut st = MaybeUninit::<libc::stat>::uninit();
        // SAFETY: fstat fills `st` on success, and it is only read then.
        unsafe {
            libc::fstat(fd, st.as_mut_ptr()) == 0
                && st.assume_init().st_mode & libc::S_IFMT == libc::S_IFDIR
        }
    };
    if !is_dir(spec.cwd) {
        Stage::Cwd
    } else if !spec.stdio.iter().all(|&fd| open(fd)) {
        Stage::Stdio
    } else {
        Stage::Exec
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::spawn::steps::session::SessionMode;
    use std::ffi::CString;
    use std::io::Read;
    use std::os::fd::{AsRawFd, OwnedFd};
    use std::path::Path;
    use FdAction::*;

    #[test]
    fn flags_reset_signals_and_set_the_grouping() {
        let base = (libc::POSIX_SPAWN_SETSIGDEF | libc::POSIX_SPAWN_SETSIGMASK) as c_int;
        let group = libc::POSIX_SPAWN_SETPGROUP as c_int;
        for (grouping, expected) in [
            (Grouping::NewGroup, group),
            (Grouping::NewSession, POSIX_SPAWN_SETSID),
            (Grouping::AsIs, 0),
        ] {
            let f = flags(grouping, 0);
            assert_eq!(f & base, base, "{grouping:?}");
            assert_eq!(f & (group | POSIX_SPAWN_SETSID), expected, "{grouping:?}");
            #[cfg(target_os = "macos")]
            assert_ne!(f & libc::POSIX_SPAWN_CLOEXEC_DEFAULT, 0, "{grouping:?}");
        }
        assert_ne!(
            flags(Grouping::AsIs, 0x4_0000) & 0x4_0000,
            0,
            "extra flags are kept"
        );
    }

    #[test]
    fn stdio_sources_above_2_move_directly() {
        assert_eq!(
            stdio_plan([7, 8, 8]),
            vec![
                Dup2 { from: 7, to: 0 },
                Dup2 { from: 8, to: 1 },
                Dup2 { from: 8, to: 2 }
            ]
        );
    }

    #[test]
    fn low_sources_are_copied_out_of_the_way_first() {
        // After dup2(5, 0), "0" would be 5's copy: 0 is saved to 6 before anything moves.
        assert_eq!(
            stdio_plan([5, 0, 0]),
            vec![
                Dup2 { from: 0, to: 6 },
                Dup2 { from: 5, to: 0 },
                Dup2 { from: 6, to: 1 },
                Dup2 { from: 6, to: 2 },
                Close(6),
            ]
        );
        // Swapped stdout and stderr, and a descriptor onto itself: never dup2(fd, fd).
        let plan = stdio_plan([0, 2, 1]);
        assert!(plan
            .iter()
            .all(|a| !matches!(a, Dup2 { from, to } if from == to)));
        assert_eq!(simulate(&plan, [10, 11, 12]), [10, 12, 11]);
    }

    /// Runs a plan on a table "descriptor -> what it refers to" (0, 1, 2 hold `initial`).
    fn simulate(plan: &[FdAction], initial: [i32; 3]) -> [i32; 3] {
        let mut table: std::collections::HashMap<RawFd, i32> =
            (0..3).map(|fd| (fd, initial[fd as usize])).collect();
        for a in plan {
            match *a {
                Dup2 { from, to } => {
                    let v = table[&from];
                    table.insert(to, v);
                }
                Close(fd) => {
                    table.remove(&fd);
                }
            }
        }
        assert!(
            table.keys().all(|&fd| fd < 3),
            "temporaries are closed: {table:?}"
        );
        [table[&0], table[&1], table[&2]]
    }

    #[test]
    fn every_permutation_of_low_sources_lands_right() {
        for a in 0..3 {
            for b in 0..3 {
                for c in 0..3 {
                    let plan = stdio_plan([a, b, c]);
                    let got = simulate(&plan, [10, 11, 12]);
                    assert_eq!(got, [10 + a, 10 + b, 10 + c], "{plan:?}");
                }
            }
        }
    }

    fn pipe() -> (std::fs::File, std::fs::File) {
        let (r, w) = crate::sys::pipe::pipe_cloexec().unwrap();
        (std::fs::File::from(r), std::fs::File::from(w))
    }

    fn dir(path: &str) -> OwnedFd {
        crate::sys::cwd::open_dir(Path::new(path)).unwrap()
    }

    fn spec(argv: &[&str], stdin: RawFd, stdout: RawFd, cwd: &OwnedFd) -> LaunchSpec {
        LaunchSpec {
            program: CString::new(argv[0]).unwrap(),
            argv: argv.iter().map(|s| CString::new(*s).unwrap()).collect(),
            envp: vec![CString::new("PATH=/usr/bin:/bin").unwrap()],
            cwd: cwd.as_raw_fd(),
            stdio: [stdin, stdout, stdout],
            session: SessionMode::NewGroup,
            rlimits: Vec::new(),
            cgroup_procs: Vec::new(),
            steps: None,
        }
    }

    /// Spawns `sh -c <script>; read x` and returns its pid, group, session and output (the
    /// ids are read while it waits on its stdin, then its stdin is closed).
    fn ids_and_output(script: &str, cwd: &str, grouping: Grouping) -> (i32, i32, i32, String) {
        let (out_r, out_w) = pipe();
        let (in_r, in_w) = pipe();
        let line = format!("{script}; read x || :");
        let cwd = dir(cwd);
        let s = spec(
            &["/bin/sh", "-c", &line],
            in_r.as_raw_fd(),
            out_w.as_raw_fd(),
            &cwd,
        );
        let pid = Prepared::new(&s, flags(grouping, 0))
            .unwrap()
            .spawn()
            .unwrap();
        drop((out_w, in_r));
        // SAFETY: plain queries about our own child, which waits on its stdin until in_w closes.
        let (pgid, sid) = unsafe { (libc::getpgid(pid), libc::getsid(pid)) };
        drop(in_w);
        let mut out = String::new();
        let mut out_r = out_r;
        out_r.read_to_string(&mut out).unwrap();
        let mut status = 0;
        // SAFETY: reaping our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(status, 0, "{out}");
        (pid, pgid, sid, out)
    }

    #[test]
    fn spawns_in_a_new_group_in_the_directory_with_default_signals() {
        let script = if cfg!(target_os = "linux") {
            "pwd; grep -E '^(SigIgn|SigBlk)' /proc/self/status"
        } else {
            "pwd"
        };
        let (pid, pgid, sid, out) = ids_and_output(script, "/usr", Grouping::NewGroup);
        assert_eq!(out.lines().next(), Some("/usr"), "{out}");
        assert_eq!(pgid, pid, "leads its own process group");
        // SAFETY: getsid(0) asks about this process.
        assert_eq!(sid, unsafe { libc::getsid(0) }, "in the caller's session");
        if cfg!(target_os = "linux") {
            // The runner may ignore or block signals; the child starts with none of the
            // standard ones (1..=31) ignored or blocked. glibc's posix_spawn cannot reset the
            // two it reserves (32, 33): macOS has no such signals.
            let mask = |name: &str| {
                let line = out.lines().find(|l| l.starts_with(name)).unwrap();
                u64::from_str_radix(line[name.len()..].trim(), 16).unwrap() & 0x7fff_ffff
            };
            assert_eq!(mask("SigIgn:"), 0, "{out}");
            assert_eq!(mask("SigBlk:"), 0, "{out}");
        }
    }

    #[test]
    fn spawns_a_session_leader() {
        let (pid, pgid, sid, _) = ids_and_output("true", "/", Grouping::NewSession);
        assert_eq!((pgid, sid), (pid, pid));
    }

    #[test]
    fn failures_return_the_error_and_name_the_step() {
        let (_r, w) = pipe();
        let (root, file) = (dir("/"), std::fs::File::open("/dev/null").unwrap());
        let failure = |s: &LaunchSpec| {
            let e = Prepared::new(s, flags(Grouping::NewGroup, 0))
                .unwrap()
                .spawn()
                .unwrap_err();
            (e, failed_stage(s))
        };
        let s = spec(&["/no/such/program"], w.as_raw_fd(), w.as_raw_fd(), &root);
        assert_eq!(failure(&s), (libc::ENOENT, Stage::Exec));
        let mut s = spec(&["/bin/true"], w.as_raw_fd(), w.as_raw_fd(), &root);
        s.cwd = file.as_raw_fd();
        assert_eq!(failure(&s), (libc::ENOTDIR, Stage::Cwd));
        let mut s = spec(&["/bin/true"], w.as_raw_fd(), w.as_raw_fd(), &root);
        // The highest descriptor number allowed, which nothing here opens.
        // SAFETY: getdtablesize and F_GETFD only read the process's limits and table.
        s.stdio[0] = unsafe { libc::getdtablesize() } - 1;
        // SAFETY: as above.
        assert!(unsafe { libc::fcntl(s.stdio[0], libc::F_GETFD) } < 0);
        assert_eq!(failure(&s), (libc::EBADF, Stage::Stdio));
    }
}
