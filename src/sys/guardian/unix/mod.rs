//! The guardian: one small process per Node process that kills every terminal still listed
//! when Node goes away in a way that runs no code of ours (SIGKILL, SIGINT or SIGTERM with
//! default handling, a crash). It runs in its own session (a Ctrl-C to Node's terminal does
//! not reach it) and ignores the usual termination signals. See [`process`] for the process
//! and its protocol; this module keeps its list.
//!
//! Invariants:
//! - Listing and unlisting never block the caller: [`Guardian::track`] and
//!   [`Guardian::untrack`] update the live set and append a line to a bounded queue under a
//!   short lock, and write only as much as the (non-blocking) pipe takes at once. A writer
//!   thread of its own sends the rest.
//! - The queue is bounded ([`PENDING_MAX`]): past it, the queue is replaced by a reset and the
//!   full live set, which the live set always has exactly.
//! - A guardian that stops reading (no progress for [`STALL`]: stopped, hung), is gone
//!   (EPIPE), or is seen stopped or dead by the idle writer's check (every [`HEALTH_CHECK`],
//!   `waitpid(WUNTRACED)` on our own child) is replaced: it is SIGKILLed first (so it never
//!   acts on a stale list), then a fresh one is started and sent the full live set. A stopped
//!   guardian costs its own job.

mod process;

use std::collections::HashMap;
use std::os::fd::AsFd;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

use process::Process;

/// Most bytes of lines queued for the guardian; past it, a reset and the full set replace them.
const PENDING_MAX: usize = 1 << 20;
/// A guardian that takes nothing for this long is replaced.
const STALL: Duration = Duration::from_secs(1);
/// How long the writer waits for the pipe to take more, between checks.
const POLL_STEP: Duration = Duration::from_millis(50);
/// How often an idle writer checks that the guardian still runs (not stopped, not dead).
const HEALTH_CHECK: Duration = Duration::from_secs(1);

/// What the guardian is told, and who tells it.
struct State {
    /// Listed entries (`<pgid>@<cgroup>`), with how often each was listed.
    live: HashMap<String, usize>,
    /// Lines not yet written to the current guardian.
    pending: Vec<u8>,
    /// The current guardian; `None` when none could be started (nothing guards then).
    process: Option<Process>,
    /// The guardian is being replaced by the writer thread.
    replacing: bool,
    /// Guardians replaced so far.
    replaced: u64,
    /// Set when the [`Guardian`] is dropped (tests): the writer thread ends.
    closed: bool,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    /// Starts a guardian process (a fake in tests).
    start: fn() -> Option<Process>,
}

/// The list of terminals a guardian process watches, and that process.
pub struct Guardian {
    shared: Arc<Shared>,
}

/// The guardian of this Node process (started on first use).
fn global() -> &'static Guardian {
    static G: OnceLock<Guardian> = OnceLock::new();
    G.get_or_init(|| Guardian::new(process::start))
}

/// Starts the guardian if none runs yet: before a terminal's launch, so that a Node gone
/// before that terminal is listed still has a guardian (which kills what every cgroup of this
/// Node process holds).
pub fn start() {
    global();
}

/// Lists a terminal's process group (and cgroup) with the guardian.
pub fn track(pgid: i32, cgroup: Option<&Path>) {
    global().track(pgid, cgroup);
}

/// Unlists it (its processes are gone).
pub fn untrack(pgid: i32, cgroup: Option<&Path>) {
    global().untrack(pgid, cgroup);
}

/// Pid of the current guardian process, if one runs.
pub fn guardian_pid() -> Option<i32> {
    global().pid()
}

fn entry(pgid: i32, cgroup: Option<&Path>) -> String {
    let cg = cgroup.map_or("-".to_string(), |p| p.display().to_string());
    format!("{pgid}@{cg}")
}

impl Guardian {
    /// Starts a guardian process with `start`, and the thread that writes to it.
    fn new(start: fn() -> Option<Process>) -> Self {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                live: HashMap::new(),
                pending: Vec::new(),
                process: start(),
                replacing: false,
                replaced: 0,
                closed: false,
            }),
            wake: Condvar::new(),
            start,
        });
        let s = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("acp-terminal-guardian".into())
            .spawn(move || s.writer());
        if spawned.is_err() {
            // Without the writer, what the pipe does not take at once waits for the next call.
            shared.lock().replacing = true;
        }
        Self { shared }
    }

    fn track(&self, pgid: i32, cgroup: Option<&Path>) {
        let e = entry(pgid, cgroup);
        let mut st = self.shared.lock();
        *st.live.entry(e.clone()).or_insert(0) += 1;
        self.shared.send(st, &format!("+{e}\n"));
    }

    fn untrack(&self, pgid: i32, cgroup: Option<&Path>) {
        let e = entry(pgid, cgroup);
        let mut st = self.shared.lock();
        match st.live.get_mut(&e) {
            Some(n) if *n > 1 => *n -= 1,
            Some(_) => {
                st.live.remove(&e);
            }
            None => return,
        }
        self.shared.send(st, &format!("-{e}\n"));
    }

    fn pid(&self) -> Option<i32> {
        self.shared.lock().process.as_ref().map(|p| p.pid)
    }
}

impl Drop for Guardian {
    fn drop(&mut self) {
        let mut st = self.shared.lock();
        st.closed = true;
        // Dropping the pipe is Node going away for this guardian: it kills what is listed.
        st.process = None;
        self.shared.wake.notify_all();
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues `line` and writes what the pipe takes now; the writer thread does the rest.
    fn send(&self, mut st: MutexGuard<'_, State>, line: &str) {
        if st.pending.len() + line.len() > PENDING_MAX {
            let full = full_list(&st.live);
            st.pending = full;
        } else {
            st.pending.extend_from_slice(line.as_bytes());
        }
        if !st.replacing {
            // A failure (EPIPE) is the writer's to handle.
            let _ = flush(&mut st);
        }
        if !st.pending.is_empty() {
            self.wake.notify_all();
        }
    }

    /// The writer thread: sends what is pending, replaces a guardian that stalls or is gone.
    fn writer(&self) {
        let mut stalled_since: Option<Instant> = None;
        let mut st = self.lock();
        loop {
            while st.pending.is_empty() && !st.closed {
                st = match self.wake.wait_timeout(st, HEALTH_CHECK) {
                    Ok((g, _)) => g,
                    Err(p) => p.into_inner().0,
                };
                if st.process.as_mut().is_some_and(|p| !p.running()) {
                    st = self.replace(st);
                }
            }
            if st.closed {
                return;
            }
            let before = st.pending.len();
            let ok = flush(&mut st);
            if st.pending.is_empty() {
                stalled_since = None;
                continue;
            }
            if st.pending.len() < before {
                stalled_since = None;
            }
            let stalled = stalled_since.get_or_insert_with(Instant::now).elapsed() >= STALL;
            if !ok || stalled || st.process.is_none() {
                stalled_since = None;
                st = self.replace(st);
                continue;
            }
            // Wait for the pipe to take more, without the lock.
            let pipe = st.process.as_ref().map(|p| p.pipe.clone());
            drop(st);
            if let Some(pipe) = pipe {
                wait_writable(&pipe);
            }
            st = self.lock();
        }
    }

    /// Discards the current guardian and starts a fresh one, which gets the full list. The
    /// lock is not held while processes are killed and started.
    fn replace<'a>(&'a self, mut st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        st.replacing = true;
        let old = st.process.take();
        drop(st);
        if let Some(old) = old {
            old.discard();
        }
        let fresh = (self.start)();
        let mut st = self.lock();
        st.replacing = false;
        st.replaced += 1;
        st.pending = full_list(&st.live);
        st.process = fresh;
        if st.process.is_none() {
            // Nothing to write to: keep the list for a later attempt, without spinning.
            drop(st);
            std::thread::sleep(STALL);
            return self.lock();
        }
        st
    }
}

/// A reset followed by every listed entry.
fn full_list(live: &HashMap<String, usize>) -> Vec<u8> {
    let mut out = b"=\n".to_vec();
    for e in live.keys() {
        out.push(b'+');
        out.extend_from_slice(e.as_bytes());
        out.push(b'\n');
    }
    out
}

/// Writes as much of the pending lines as the pipe takes without blocking. False when the
/// guardian is gone (EPIPE or another error).
fn flush(st: &mut State) -> bool {
    let Some(p) = st.process.as_ref() else {
        return true;
    };
    while !st.pending.is_empty() {
        match nix::unistd::write(&p.pipe, &st.pending) {
            Ok(n) => {
                st.pending.drain(..n);
            }
            Err(Errno::EINTR) => {}
            Err(Errno::EAGAIN) => return true,
            Err(_) => return false,
        }
    }
    true
}

/// Waits (at most [`POLL_STEP`]) for the pipe to take more.
fn wait_writable(pipe: &impl AsFd) {
    let mut fds = [PollFd::new(pipe.as_fd(), PollFlags::POLLOUT)];
    let step = PollTimeout::try_from(POLL_STEP).unwrap_or(PollTimeout::ZERO);
    let _ = poll(&mut fds, step);
}

#[cfg(test)]
mod tests;
