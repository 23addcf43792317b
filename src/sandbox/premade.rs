//! Whole sandboxes made ahead, off the launch path: the namespaces (user when not root, mount,
//! PID, IPC and, unless `network: true`, network), the read-only tree with its writable roots,
//! `/dev` and the private `/tmp`, and the namespace's init with its `/proc`: everything
//! [`super::namespaces`] makes for a launch that does not depend on the command. A background
//! thread keeps up to [`DEPTH`] ready for each of the [`SHAPES`] shapes (writable roots,
//! `tmpBytes`, own network namespace or not) launched most recently in a burst (two launches
//! less than [`IDLE`] apart; they are ended [`IDLE`] after its last launch); a pipe launch of that
//! shape takes one and its intermediate process joins it (one `setns` on a pidfd of its init),
//! then does what is the launch's own (the proxy's listener, the Landlock rule for its `/tmp`,
//! the working directory) and starts the command in it. A launch that finds none ready (the
//! first of a shape, a burst, a pty launch, whose `/dev` holds its terminal) makes its own, as
//! before.
//!
//! Invariants, so that a command cannot tell a sandbox made ahead from one made for it:
//! - each serves one command, and nothing but its maker (system calls only) and its init
//!   (`pause`) ran in it before: its `/tmp` is empty, its IPC and network namespaces unused;
//! - it is used only while the host's mount table is unchanged since it was made
//!   ([`super::roots::mount_generation`]): its tree is the tree a launch would copy now; one made
//!   under an older table is discarded;
//! - it is used only while each writable root is still the pinned directory at its path
//!   (found without following a symlink), as a launch making its own checks (a root moved since
//!   fails the create there, not here);
//! - its init is owned by the pool until a launch takes it, then by the terminal's guard (a
//!   failed launch drops it): it is SIGKILLed and reaped exactly once, and its parent-death
//!   signal is SIGKILL with the pool's thread, which lives as long as the process.
//!
//! The pool makes nothing while a sandboxed launch is in flight (from its [`take`] until its
//! command has started, [`InFlight`]), at most [`DEFER`]: making one (the network namespace
//! above all, about a millisecond of the kernel's time) beside a launch competed with it for the
//! CPU, and on a machine of two cores it made the launch that had just taken a sandbox made
//! ahead slower than the refill saved.

use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::mounts::MountPlan;
use super::namespaces::NsPlan;

/// What a sandbox made ahead is made for: everything of a launch's namespaces and tree that
/// does not depend on the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// The writable roots: resolved paths and pinned (device, inode).
    pub roots: Vec<(PathBuf, (u64, u64))>,
    /// The size of the private /tmp.
    pub tmp_bytes: u64,
    /// A network namespace of its own (`network: false` or `{ allow }`).
    pub net: bool,
}

impl Shape {
    /// The shape of a launch with the pinned `roots`.
    pub fn of(roots: &super::roots::Roots, tmp_bytes: u64, net: bool) -> Shape {
        Shape {
            roots: roots.roots.iter().map(|r| (r.path.clone(), r.id)).collect(),
            tmp_bytes,
            net,
        }
    }
}

/// How many sandboxes of one shape are kept ready: two absorb a burst of launches.
const DEPTH: usize = 2;
/// How many shapes are kept (the ones launched most recently): a host interleaving a few
/// configurations (`network: false` and `true`, two sets of roots) keeps a sandbox of each.
const SHAPES: usize = 3;

/// A sandbox made ahead: its init, our unreaped child (so its pid names it until it is reaped;
/// no descriptor is kept: the launch's intermediate process opens its own pidfd).
#[derive(Debug)]
pub struct Premade {
    /// The init's pid; 0 once handed over ([`Premade::into_init`]).
    pid: i32,
    shape: Arc<Shape>,
    /// The mount generation it was made under.
    generation: u64,
}

impl Premade {
    /// The init's pid, whose namespaces the launch's intermediate process joins.
    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// Hands the init over to the caller (the terminal's guard ends it from now on).
    pub fn into_init(mut self) -> i32 {
        std::mem::replace(&mut self.pid, 0)
    }
}

impl Drop for Premade {
    fn drop(&mut self) {
        if self.pid > 0 {
            super::cleanup::kill_init(self.pid);
            super::cleanup::reap_later(self.pid);
        }
    }
}

/// A shape launched recently.
struct Seen {
    shape: Arc<Shape>,
    /// Its last launch.
    last: Instant,
    /// Its last two launches were less than [`IDLE`] apart.
    burst: bool,
}

impl Seen {
    /// Whether sandboxes of this shape are kept ready now: it is launched in a burst (two
    /// launches less than [`IDLE`] apart), the last one less than [`IDLE`] ago.
    fn wanted(&self, now: Instant) -> bool {
        self.burst && now.duration_since(self.last) < IDLE
    }
}

/// How long a shape stays wanted after its last launch; its sandboxes made ahead are ended
/// then. A host that launches less often than this makes none ahead (nothing is made for
/// nothing), and nothing made ahead outlives a burst by more than this.
const IDLE: Duration = Duration::from_secs(2);

/// How long the pool waits for sandboxed launches in flight to end before it makes one anyway
/// (a host launching without pause still has its sandboxes made ahead).
const DEFER: Duration = Duration::from_millis(20);

#[derive(Default)]
struct Pool {
    ready: Vec<Premade>,
    /// The shapes launched most recently, most recent first (at most [`SHAPES`]).
    seen: Vec<Seen>,
    /// Sandboxed launches in flight ([`InFlight`]).
    launching: usize,
}

impl Pool {
    /// Removes (into `out`) the sandboxes made for a shape no longer wanted at `now`.
    fn expire(&mut self, now: Instant, out: &mut Vec<Premade>) {
        let seen = &self.seen;
        let wanted = |p: &Premade| {
            seen.iter()
                .any(|s| Arc::ptr_eq(&s.shape, &p.shape) && s.wanted(now))
        };
        let mut i = 0;
        while i < self.ready.len() {
            if wanted(&self.ready[i]) {
                i += 1;
            } else {
                out.push(self.ready.swap_remove(i));
            }
        }
    }
}

struct Shared {
    pool: Mutex<Pool>,
    wake: Condvar,
}

/// The pool and its thread, started by the first [`take`].
static SHARED: OnceLock<Option<&'static Shared>> = OnceLock::new();

#[cfg(test)]
fn static_shared() -> Option<&'static Shared> {
    SHARED.get().copied().flatten()
}

/// A sandboxed launch in flight, from its [`take`] until this is dropped (once its command has
/// started, or the launch has failed): the pool makes nothing meanwhile.
pub struct InFlight(&'static Shared);

impl std::fmt::Debug for InFlight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InFlight")
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut pool = self.0.pool.lock().unwrap_or_else(|p| p.into_inner());
        pool.launching -= 1;
        if pool.launching == 0 {
            self.0.wake.notify_one();
        }
    }
}

/// Takes a sandbox of `shape` made ahead, if one is ready and still current, and has the pool
/// keep this shape ready while it is launched in a burst; the [`InFlight`] holds the pool back
/// until the launch is done with it. `userns` is how this process makes namespaces (fixed for
/// its lifetime: [`super::support::fixed`]).
pub fn take(shape: Shape, userns: bool) -> (Option<Premade>, Option<InFlight>) {
    let shared = *SHARED.get_or_init(|| {
        let shared: &'static Shared = Box::leak(Box::new(Shared {
            pool: Mutex::new(Pool::default()),
            wake: Condvar::new(),
        }));
        std::thread::Builder::new()
            .name("acp-terminal-premade".into())
            .spawn(move || refill(shared, userns))
            .ok()
            .map(|_| shared)
    });
    let Some(shared) = shared else {
        return (None, None);
    };
    let generation = super::roots::mount_generation();
    let now = Instant::now();
    let mut dropped = Vec::new();
    let taken = {
        let mut pool = shared.pool.lock().unwrap_or_else(|p| p.into_inner());
        let mut i = 0;
        while i < pool.ready.len() {
            if pool.ready[i].generation != generation {
                dropped.push(pool.ready.swap_remove(i));
            } else {
                i += 1;
            }
        }
        let taken = pool
            .ready
            .iter()
            .position(|p| *p.shape == shape)
            .map(|i| pool.ready.swap_remove(i));
        let seen = match pool.seen.iter().position(|s| *s.shape == shape) {
            Some(i) => {
                let mut s = pool.seen.remove(i);
                s.burst = now.duration_since(s.last) < IDLE;
                s.last = now;
                s
            }
            None => Seen {
                shape: Arc::new(shape),
                last: now,
                burst: false,
            },
        };
        pool.seen.insert(0, seen);
        pool.seen.truncate(SHAPES);
        pool.expire(now, &mut dropped);
        pool.launching += 1;
        shared.wake.notify_one();
        taken
    };
    let in_flight = Some(InFlight(shared));
    drop(dropped);
    let Some(premade) = taken else {
        return (None, in_flight);
    };
    // Each root still the pinned directory at its path, as a launch making its own requires.
    let current = premade.shape.roots.iter().all(|(path, id)| {
        super::namespaces::open_no_symlinks(path)
            .and_then(|fd| super::namespaces::fd_id(fd.as_raw_fd()))
            .is_ok_and(|found| found == *id)
    });
    (current.then_some(premade), in_flight)
}

/// How many sandboxes of `shape` are ready (tests wait for one before changing the host).
#[cfg(test)]
pub fn ready(shape: &Shape) -> usize {
    // Through `take`'s pool: none exists before the first take.
    static_shared().map_or(0, |shared| {
        let pool = shared.pool.lock().unwrap_or_else(|p| p.into_inner());
        pool.ready.iter().filter(|p| *p.shape == *shape).count()
    })
}

/// The pool's thread: makes a sandbox of a wanted shape whenever fewer than [`DEPTH`] are
/// ready, and ends those of shapes no longer wanted.
fn refill(shared: &'static Shared, userns: bool) {
    loop {
        let mut dropped = Vec::new();
        // Since when launches in flight have held the next make back.
        let mut deferred: Option<Instant> = None;
        let shape = {
            let mut pool = shared.pool.lock().unwrap_or_else(|p| p.into_inner());
            loop {
                let now = Instant::now();
                pool.expire(now, &mut dropped);
                if !dropped.is_empty() {
                    break None;
                }
                if pool.launching > 0 {
                    let since = *deferred.get_or_insert(now);
                    let left = DEFER.saturating_sub(now.duration_since(since));
                    if !left.is_zero() {
                        pool = shared
                            .wake
                            .wait_timeout(pool, left)
                            .unwrap_or_else(|p| p.into_inner())
                            .0;
                        continue;
                    }
                }
                let short = pool.seen.iter().find(|s| {
                    s.wanted(now)
                        && pool
                            .ready
                            .iter()
                            .filter(|p| Arc::ptr_eq(&p.shape, &s.shape))
                            .count()
                            < DEPTH
                });
                if let Some(s) = short {
                    break Some(Arc::clone(&s.shape));
                }
                // Until the next launch, or until the first wanted shape expires.
                let expiry = pool
                    .seen
                    .iter()
                    .filter(|s| s.wanted(now))
                    .map(|s| IDLE.saturating_sub(now.duration_since(s.last)))
                    .min();
                pool = match expiry {
                    Some(d) => {
                        shared
                            .wake
                            .wait_timeout(pool, d + Duration::from_millis(1))
                            .unwrap_or_else(|p| p.into_inner())
                            .0
                    }
                    None => shared.wake.wait(pool).unwrap_or_else(|p| p.into_inner()),
                };
            }
        };
        // Ended outside the lock.
        drop(dropped);
        let Some(shape) = shape else { continue };
        let generation = super::roots::mount_generation();
        let made = make(&shape, userns, generation);
        let mut pool = shared.pool.lock().unwrap_or_else(|p| p.into_inner());
        match made {
            // Kept only while wanted (ended by the next `expire` otherwise).
            Some(p) => pool.ready.push(p),
            // This shape cannot be made ahead now (a root removed, a kernel refusal): it is
            // tried again only after its next burst of launches (each of which makes its own
            // and reports what fails).
            None => {
                if let Some(s) = pool.seen.iter_mut().find(|s| Arc::ptr_eq(&s.shape, &shape)) {
                    s.burst = false;
                }
            }
        }
    }
}

/// What the maker child needs and writes back.
struct MakeArgs {
    plan: *const NsPlan,
    /// Our pid: the maker's parent while the pool's thread lives.
    parent_pid: libc::pid_t,
    init_stack: *mut u8,
    init_pid: libc::pid_t,
    failed: bool,
}

/// Size of each stack the maker and the init run on (system calls only).
const STACK: usize = 64 << 10;

/// Makes one sandbox of `shape` in a `CLONE_VM | CLONE_VFORK` child (its descriptors are its
/// own and go with it); `None` if anything fails (then nothing of it is left).
fn make(shape: &Arc<Shape>, userns: bool, generation: u64) -> Option<Premade> {
    let (sleep, null_fd, _) = super::support::fixed().ok()?;
    let mounts = MountPlan::of(&shape.roots, shape.tmp_bytes, None).ok()?;
    let mut plan = NsPlan::new(userns, sleep, null_fd, mounts);
    plan.net = shape.net;
    let mut stack = vec![0u8; 2 * STACK];
    let base = stack.as_mut_ptr();
    // SAFETY: in bounds of `stack`; tops rounded down to 16 bytes (stacks grow down on every
    // Linux architecture we build for).
    let top = |i: usize| unsafe { (base.add(STACK * (i + 1)) as usize & !15) as *mut u8 };
    let mut args = MakeArgs {
        plan: &plan,
        // SAFETY: getpid has no preconditions.
        parent_pid: unsafe { libc::getpid() },
        init_stack: top(1),
        init_pid: 0,
        failed: false,
    };
    // SAFETY: the child runs `maker` on the first stack with system calls only and ends in
    // `_exit`; CLONE_VFORK suspends this thread until then (and the init it starts on the
    // second stack has exec'd by then), so `args`, `plan` and `stack` outlive both. All
    // signals are blocked around the clone so that no handler of Node runs in the child.
    let pid = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let pid = libc::clone(
            maker,
            top(0) as *mut libc::c_void,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            &mut args as *mut MakeArgs as *mut libc::c_void,
        );
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        pid
    };
    if pid < 0 {
        return None;
    }
    super::cleanup::reap(pid);
    drop(stack);
    // SAFETY: the maker has exited; nothing writes `args` any more.
    let (init_pid, failed) = unsafe {
        (
            std::ptr::read_volatile(&args.init_pid),
            std::ptr::read_volatile(&args.failed),
        )
    };
    let end = |pid: i32| {
        if pid > 0 {
            super::cleanup::kill_init(pid);
            super::cleanup::reap(pid);
        }
    };
    if failed || init_pid <= 0 {
        end(init_pid);
        return None;
    }
    Some(Premade {
        pid: init_pid,
        shape: Arc::clone(shape),
        generation,
    })
}

/// The maker child: [`super::namespaces::make_ahead`], then exit.
extern "C" fn maker(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the suspended thread's `MakeArgs`, its plan alive; only system calls
    // until `_exit`.
    unsafe {
        let a = &mut *(arg as *mut MakeArgs);
        if super::namespaces::make_ahead(&*a.plan, a.init_stack, &mut a.init_pid).is_err() {
            a.failed = true;
            libc::_exit(1)
        }
        // The init armed SIGKILL for the death of the pool's thread before its exec, which
        // this vfork waited for: it is sent only if the thread still lived then. Outside the
        // init's PID namespace the maker can tell; a thread gone by now (Node SIGKILLed
        // mid-make) will end nothing, so the maker ends the init itself.
        if libc::getppid() != a.parent_pid {
            libc::kill(a.init_pid, libc::SIGKILL);
            a.failed = true;
            libc::_exit(1)
        }
        libc::_exit(0)
    }
}
