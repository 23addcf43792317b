//! PID namespaces made ahead, so that a sandboxed launch with `isolateProcesses` only joins
//! one: making a namespace (unshare, the id maps, the init's clone and exec, its `/proc`
//! mount) cost ~200 µs on the spawn path, against ~20 µs to join one.
//!
//! One thread (started by the first launch that wants a namespace) keeps [`READY`] namespaces
//! ready: for each, a vfork child C unshares the namespaces and starts the init, which mounts
//! the namespace's `/proc` ([`pidns::create`]), as a child of this thread
//! (`CLONE_PARENT`), then exits. The thread never exits: the inits' parent-death signal is
//! tied to it. A [`Slot`] is the init and a pidfd of it; an unused one is killed when dropped.
//!
//! A namespace holds one terminal's processes and nothing else. A launch [`lend`]s the slot
//! to its terminal; at release the terminal's guard [`give_back`]s it, and the pool's thread
//! looks into the namespace's own `/proc`: when the init is the only process left there (the
//! command and everything it started are gone; nothing can enter a namespace with no process
//! in it but a privileged `setns` from outside), the namespace is as good as new and is made
//! ready again. Otherwise (a process is still there, even a zombie) the init is killed, and
//! the kernel with it kills everything in the namespace. Recycling saves making a namespace
//! and tearing one down (a mount tree copied and unmounted, a /proc mounted and unmounted, a
//! process started and ended) at each terminal: on two cores that background work competed
//! with the spawns themselves. A reused namespace has handed out pids before, so a command's
//! pid there is not always 2.
//!
//! Freshness: a namespace's mounts are a copy of Node's at the time it was made. `take`
//! polls `/proc/self/mounts` (which reports a change of Node's mount table) and throws away
//! every namespace made before a change, so a command never sees an older mount table than
//! Node had when its launch began.
//!
//! Where namespaces cannot be joined (a kernel without `setns` on a pidfd, a chroot'ed Node),
//! the first refusal turns the pool off for good, and every launch makes its own namespace.

use std::collections::VecDeque;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Condvar, Mutex, MutexGuard};

use super::child::Step;
use super::cleanup;
use super::pidns::{self, Join, NsPlan};

/// How many namespaces are made ahead.
pub const READY: usize = 2;
/// How many given-back namespaces are kept ready at most (more are ended).
pub const KEEP: usize = 4;

/// A namespace made ahead: its init (our unreaped child) and a pidfd of it.
#[derive(Debug)]
pub struct Slot {
    init_pid: i32,
    pidfd: OwnedFd,
    generation: u64,
}

impl Slot {
    /// The init's pid; the caller now owns it (kills and reaps it when done).
    pub fn into_init_pid(self) -> i32 {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again; the pidfd is moved out once, to be
        // closed here.
        drop(unsafe { std::ptr::read(&this.pidfd) });
        this.init_pid
    }

    /// What a launch needs to join this namespace with `cwd` as the working directory, or
    /// `None` when the directory's path or identity cannot be read (the launch then makes
    /// its own namespace).
    pub fn join(&self, cwd: RawFd, userns: bool) -> Option<Join> {
        let path = std::fs::read_link(format!("/proc/self/fd/{cwd}")).ok()?;
        if !path.is_absolute() {
            return None;
        }
        // With a user namespace, C joins all three and starts the command; without one (we
        // have CAP_SYS_ADMIN), the launcher joins the PID namespace for its next child and
        // that child the mount namespace.
        let flags = if userns {
            libc::CLONE_NEWUSER | libc::CLONE_NEWPID | libc::CLONE_NEWNS
        } else {
            libc::CLONE_NEWNS
        };
        Some(Join {
            pidfd: self.pidfd.as_raw_fd(),
            flags,
            cwd_path: crate::sys::spawn::cpath(&path).ok()?,
            cwd_id: pidns::fd_id(cwd).ok()?,
            root_id: *root_id()?,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        cleanup::kill_init(self.init_pid);
        cleanup::reap_and_remove_later(Some(self.init_pid), None);
    }
}

/// Counters of the pool (for tests and measurements).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Namespaces made.
    pub made: u64,
    /// Launches that took a ready namespace.
    pub taken: u64,
    /// Launches that found none ready (and made their own).
    pub missed: u64,
    /// Taken namespaces a launch could not use (the working directory was not found there
    /// as checked): that launch made its own.
    pub unusable: u64,
    /// Changes of Node's mount table seen (each retires every namespace made before it).
    pub mount_changes: u64,
    /// Namespaces thrown away because Node's mount table changed after they were made.
    pub stale: u64,
    /// Given-back namespaces made ready again.
    pub recycled: u64,
    /// Given-back namespaces ended because a process was still in them.
    pub not_empty: u64,
    /// Namespaces ready now (only filled in by [`stats`]).
    pub ready: u64,
}

#[derive(Debug)]
struct State {
    ready: VecDeque<Slot>,
    /// Bumped whenever Node's mount table is seen to change; slots of older generations are
    /// not used.
    generation: u64,
    /// Slots lent to terminals, by init pid.
    lent: std::collections::HashMap<i32, Slot>,
    /// Slots given back, with the terminal's TMPDIR (removed once the slot was checked).
    returned: Vec<(Slot, Option<std::path::PathBuf>)>,
    started: bool,
    /// Why the pool is off (`None`: on).
    off: Option<String>,
    /// `/proc/self/mounts`, polled for changes of Node's mount table.
    mounts: Option<std::fs::File>,
    stats: Stats,
}

static STATE: std::sync::LazyLock<Mutex<State>> = std::sync::LazyLock::new(|| {
    Mutex::new(State {
        ready: VecDeque::new(),
        generation: 0,
        lent: std::collections::HashMap::new(),
        returned: Vec::new(),
        started: false,
        off: None,
        mounts: None,
        stats: Stats::default(),
    })
});
static WAKE: Condvar = Condvar::new();

fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// The (device, inode) of our root directory, read once.
fn root_id() -> Option<&'static (u64, u64)> {
    static ID: std::sync::OnceLock<Option<(u64, u64)>> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/").ok().map(|m| (m.dev(), m.ino()))
    })
    .as_ref()
}

/// Whether Node's mount table changed since the last call (`POLLPRI` on /proc/self/mounts;
/// the poll itself clears it).
fn mounts_changed(mounts: &std::fs::File) -> bool {
    let mut p = libc::pollfd {
        fd: mounts.as_raw_fd(),
        events: libc::POLLPRI,
        revents: 0,
    };
    // SAFETY: one valid pollfd, no wait.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n > 0 && p.revents & (libc::POLLPRI | libc::POLLERR) != 0
}

/// Throws away every ready slot if Node's mount table changed since it was last looked at.
fn refresh(st: &mut State) {
    if st.mounts.as_ref().is_some_and(mounts_changed) {
        st.generation += 1;
        st.stats.mount_changes += 1;
        let n = st.ready.len() as u64;
        st.ready.clear();
        st.stats.stale += n;
    }
}

/// A ready namespace, or `None` (none ready, or the pool is off). The first call starts the
/// pool's thread; every call asks it to make up for what was taken.
pub fn take() -> Option<Slot> {
    let mut st = state();
    if st.off.is_some() {
        return None;
    }
    if !st.started {
        st.started = true;
        if std::env::var_os("ACP_TERMINAL_NO_NAMESPACE_POOL").is_some() {
            st.off = Some("ACP_TERMINAL_NO_NAMESPACE_POOL is set".into());
            return None;
        }
        match std::fs::File::open("/proc/self/mounts") {
            Ok(f) => st.mounts = Some(f),
            Err(e) => st.off = Some(format!("cannot watch the mount table: {e}")),
        }
        if st.off.is_none() {
            if let Err(e) = std::thread::Builder::new()
                .name("acp-terminal-namespaces".into())
                .spawn(factory)
            {
                st.off = Some(format!("cannot start its thread: {e}"));
            }
        }
        st.stats.missed += 1;
        return None;
    }
    refresh(&mut st);
    let slot = st.ready.pop_front();
    if slot.is_some() {
        st.stats.taken += 1;
    } else {
        st.stats.missed += 1;
    }
    WAKE.notify_all();
    slot
}

/// Lends a taken slot to the terminal whose command was started in it: returns the init's
/// pid, which the terminal's guard gives back ([`give_back`]) or ends ([`forget`]).
pub fn lend(slot: Slot) -> i32 {
    let pid = slot.init_pid;
    state().lent.insert(pid, slot);
    pid
}

/// The terminal of `init_pid` is done with its namespace (its processes were killed): the
/// pool's thread checks the namespace and makes it ready again or ends it, then removes
/// `tmpdir`. `Err` gives `tmpdir` back: `init_pid` is not a lent slot.
pub fn give_back(
    init_pid: i32,
    tmpdir: Option<std::path::PathBuf>,
) -> Result<(), Option<std::path::PathBuf>> {
    let mut st = state();
    match st.lent.remove(&init_pid) {
        Some(slot) => {
            if let Some(dir) = &tmpdir {
                cleanup::note_pending(dir);
            }
            st.returned.push((slot, tmpdir));
            WAKE.notify_all();
            Ok(())
        }
        None => Err(tmpdir),
    }
}

/// Forgets the lent slot of `init_pid` without ending it (the caller kills and reaps the
/// init itself).
pub fn forget(init_pid: i32) {
    if let Some(slot) = state().lent.remove(&init_pid) {
        let _ = slot.into_init_pid();
    }
}

/// Whether the namespace of `init_pid` holds no process but its init, seen in its own /proc.
/// Any doubt (an unreadable /proc) is "no".
fn only_init_left(init_pid: i32) -> bool {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{init_pid}/root/proc")) else {
        return false;
    };
    let mut init_seen = false;
    for entry in dir {
        let Ok(entry) = entry else { return false };
        let name = entry.file_name();
        let name = name.as_encoded_bytes();
        if name.is_empty() || !name.iter().all(u8::is_ascii_digit) {
            continue;
        }
        if name != b"1" {
            return false;
        }
        init_seen = true;
    }
    init_seen
}

/// The pool's thread's work on given-back slots: each is checked, made ready again or ended;
/// then its terminal's TMPDIR is removed.
fn recycle(returned: Vec<(Slot, Option<std::path::PathBuf>)>) {
    for (slot, tmpdir) in returned {
        let empty = only_init_left(slot.init_pid);
        let mut st = state();
        if empty {
            st.stats.recycled += 1;
            refresh(&mut st);
            if st.generation == slot.generation && st.off.is_none() && st.ready.len() < KEEP {
                st.ready.push_back(slot);
            } else {
                drop(st);
                drop(slot);
            }
            if let Some(dir) = tmpdir {
                cleanup::remove_later(dir);
            }
        } else {
            st.stats.not_empty += 1;
            drop(st);
            // The kernel kills what is left with the init; the TMPDIR goes once it is reaped.
            let pid = slot.into_init_pid();
            cleanup::kill_init(pid);
            cleanup::reap_and_remove_later(Some(pid), tmpdir);
        }
    }
}

/// A taken namespace could not be used for its launch (see [`Stats::unusable`]).
pub fn unusable(slot: Slot) {
    state().stats.unusable += 1;
    drop(slot);
}

/// Turns the pool off for good (namespaces cannot be joined here) and frees what is ready.
pub fn turn_off(why: String) {
    let mut st = state();
    st.off.get_or_insert(why);
    st.ready.clear();
    WAKE.notify_all();
}

/// The pool's counters.
#[cfg(test)]
pub fn stats() -> Stats {
    let st = state();
    Stats {
        ready: st.ready.len() as u64,
        ..st.stats
    }
}

/// Serializes the tests that launch with a PID namespace: the pool is one per process, and a
/// test that counts what its own launch took from it must be alone in using it.
#[cfg(test)]
pub fn test_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Why the pool is off, if it is.
#[cfg(test)]
pub fn off() -> Option<String> {
    state().off.clone()
}

/// The pool's thread: keeps [`READY`] namespaces ready, forever.
fn factory() {
    let plan = match super::support::isolation() {
        Ok(plan) => plan,
        Err(why) => {
            turn_off(why);
            park_forever();
        }
    };
    let mut failures = 0u32;
    loop {
        let generation = {
            let mut st = state();
            while st.returned.is_empty() && (st.off.is_some() || st.ready.len() >= READY) {
                st = WAKE.wait(st).unwrap_or_else(|p| p.into_inner());
            }
            if !st.returned.is_empty() {
                let returned = std::mem::take(&mut st.returned);
                drop(st);
                recycle(returned);
                continue;
            }
            st.generation
        };
        match make(&plan) {
            Ok((init_pid, pidfd)) => {
                failures = 0;
                let slot = Slot {
                    init_pid,
                    pidfd,
                    generation,
                };
                let mut st = state();
                st.stats.made += 1;
                // A slot made while the mount table changed is thrown away.
                if slot.generation == st.generation && st.off.is_none() {
                    st.ready.push_back(slot);
                }
            }
            Err(e) => {
                failures += 1;
                if failures >= 3 {
                    turn_off(format!("making a namespace failed: {e}"));
                } else {
                    std::thread::sleep(std::time::Duration::from_millis(10 << failures));
                }
            }
        }
    }
}

/// The thread outlives every init it started (their parent-death signal is tied to it).
fn park_forever() -> ! {
    loop {
        std::thread::park();
    }
}

/// Arguments of [`slot_main`].
struct SlotArgs {
    plan: *const NsPlan,
    init_stack: *mut u8,
    parent_pid: libc::pid_t,
    init_pid: libc::pid_t,
    errno: i32,
    step: i32,
}

/// `SlotArgs::step` when the thread that started C was gone (other values: a [`Step`]).
const STEP_PARENT_GONE: i32 = -1;

/// C of a namespace made ahead: unshares, starts the init as our parent's child, exits.
extern "C" fn slot_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the suspended parent's `SlotArgs`; the plan outlives the call; the
    // init's stack is ours alone.
    unsafe {
        let a = &mut *(arg as *mut SlotArgs);
        let fail = |a: &mut SlotArgs, step: i32, errno: i32| -> ! {
            a.errno = errno;
            a.step = step;
            libc::_exit(127)
        };
        crate::sys::spawn::default_signals();
        if let Err((step, e)) = pidns::create(&*a.plan, a.init_stack, &mut a.init_pid) {
            fail(a, step as i32, e);
        }
        // The init took our parent as its parent (and its death as its SIGKILL) only if it
        // was still our parent after the init was created.
        if libc::getppid() != a.parent_pid {
            fail(a, STEP_PARENT_GONE, libc::ESRCH);
        }
        libc::_exit(0)
    }
}

/// Makes one namespace: returns its init's pid and a pidfd of it.
fn make(plan: &NsPlan) -> std::io::Result<(i32, OwnedFd)> {
    const STACK: usize = 64 * 1024;
    let mut stack = vec![0u8; 2 * STACK];
    let base = stack.as_mut_ptr();
    // SAFETY: in bounds; 16-byte aligned tops.
    let (top, init_top) = unsafe {
        (
            (base.add(STACK) as usize & !15) as *mut u8,
            (base.add(2 * STACK) as usize & !15) as *mut u8,
        )
    };
    let mut args = SlotArgs {
        plan,
        init_stack: init_top,
        // SAFETY: getpid has no preconditions.
        parent_pid: unsafe { libc::getpid() },
        init_pid: 0,
        errno: 0,
        step: 0,
    };
    // SAFETY: `slot_main` only makes system calls on `args`, which outlives the suspended
    // clone; the stack is `stack`'s top.
    let pid = unsafe {
        crate::sys::spawn::clone_vfork(
            slot_main,
            top,
            // (C shares our descriptor table, as in a launch; the init gets a copy)
            libc::CLONE_FILES,
            &mut args as *mut SlotArgs as *mut libc::c_void,
        )
    }?;
    cleanup::reap(pid);
    drop(stack);
    // SAFETY: C has exited; nothing writes `args` any more.
    let (init_pid, errno, step) = unsafe {
        (
            std::ptr::read_volatile(&args.init_pid),
            std::ptr::read_volatile(&args.errno),
            std::ptr::read_volatile(&args.step),
        )
    };
    let end = |e: std::io::Error| {
        if init_pid > 0 {
            cleanup::kill_init(init_pid);
            cleanup::reap(init_pid);
        }
        Err(e)
    };
    if step != 0 {
        let what = match Step::from_i32(step) {
            Some(Step::Namespaces) => "creating the namespaces",
            Some(Step::Proc) => "mounting the namespace's /proc",
            Some(_) => "starting the init",
            None => "the parent was gone",
        };
        let e = std::io::Error::from_raw_os_error(errno);
        return end(std::io::Error::other(format!("{what}: {e}")));
    }
    // SAFETY: pidfd_open of our own unreaped child.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, init_pid, 0) };
    if fd < 0 {
        return end(std::io::Error::last_os_error());
    }
    // SAFETY: a new descriptor we own (close-on-exec by default for pidfds).
    Ok((init_pid, unsafe { OwnedFd::from_raw_fd(fd as RawFd) }))
}
