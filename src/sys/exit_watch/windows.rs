//! Windows: a process handle is signalled when the process ends; its exit code is the full
//! 32-bit value (an NTSTATUS such as `0xC0000005` stays 3221225477).

use std::io;
use std::os::windows::io::{AsRawHandle, OwnedHandle};
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use super::Reaped;
use windows_sys::Win32::Foundation::{HANDLE, INVALID_HANDLE_VALUE, WAIT_OBJECT_0, WAIT_TIMEOUT};
use windows_sys::Win32::System::Threading::{
    GetExitCodeProcess, RegisterWaitForSingleObject, UnregisterWaitEx, WaitForSingleObject,
    INFINITE, WT_EXECUTEONLYONCE,
};

fn wait(process: &OwnedHandle, ms: u32) -> io::Result<bool> {
    // SAFETY: a valid process handle with SYNCHRONIZE access.
    match unsafe { WaitForSingleObject(process.as_raw_handle(), ms) } {
        WAIT_OBJECT_0 => Ok(true),
        WAIT_TIMEOUT => Ok(false),
        _ => Err(io::Error::last_os_error()),
    }
}

fn exit_code(process: &OwnedHandle) -> io::Result<u32> {
    let mut code = 0u32;
    // SAFETY: a valid process handle; `code` receives the exit code.
    if unsafe { GetExitCodeProcess(process.as_raw_handle(), &mut code) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(code)
}

/// Blocks until `process` has ended and returns its exit code (call it on a blocking thread).
pub fn wait_exit(process: &OwnedHandle) -> io::Result<u32> {
    wait(process, INFINITE)?;
    exit_code(process)
}

/// The exit code of `process` if it has ended, `None` while it runs (decided by the handle's
/// state, never by the code: a process may exit with 259, `STILL_ACTIVE`).
pub fn try_exit(process: &OwnedHandle) -> io::Result<Option<u32>> {
    if wait(process, 0)? {
        exit_code(process).map(Some)
    } else {
        Ok(None)
    }
}

/// What the wait callback signals: taken once.
type Slot = Mutex<Option<oneshot::Sender<()>>>;

/// A process's exit as something async code awaits, without a thread of its own: Windows'
/// thread pool waits on the process handle (`RegisterWaitForSingleObject`, as libuv does for
/// Node's children) and the callback wakes the waiter.
#[derive(Debug)]
pub struct ExitWait {
    process: Arc<OwnedHandle>,
    wait: HANDLE,
    slot: *const Slot,
    rx: Option<oneshot::Receiver<()>>,
}

// SAFETY: the wait handle and the slot pointer are used only by `Drop` (and the slot by the
// pool's callback, which is over once UnregisterWaitEx returns); both may move between threads.
unsafe impl Send for ExitWait {}
// SAFETY: shared references give access to nothing but `Arc<OwnedHandle>`.
unsafe impl Sync for ExitWait {}

unsafe extern "system" fn on_exit(ctx: *mut std::ffi::c_void, _timed_out: bool) {
    // SAFETY: `ctx` is the slot registered with this wait; it lives until the wait is
    // unregistered, which waits for this callback to return.
    let slot = unsafe { &*(ctx as *const Slot) };
    if let Some(tx) = slot.lock().unwrap_or_else(|p| p.into_inner()).take() {
        let _ = tx.send(());
    }
}

impl ExitWait {
    /// Starts watching `process` (which needs `SYNCHRONIZE` access).
    pub fn new(process: Arc<OwnedHandle>) -> io::Result<ExitWait> {
        let (tx, rx) = oneshot::channel();
        let slot: *const Slot = Box::into_raw(Box::new(Mutex::new(Some(tx))));
        let mut wait: HANDLE = std::ptr::null_mut();
        // SAFETY: a valid process handle (kept alive by `process`); the callback gets `slot`,
        // freed only after the wait is unregistered.
        let ok = unsafe {
            RegisterWaitForSingleObject(
                &mut wait,
                process.as_raw_handle(),
                Some(on_exit),
                slot.cast(),
                INFINITE,
                WT_EXECUTEONLYONCE,
            )
        };
        if ok == 0 {
            let e = io::Error::last_os_error();
            // SAFETY: never registered: ours alone.
            drop(unsafe { Box::from_raw(slot.cast_mut()) });
            return Err(e);
        }
        Ok(ExitWait {
            process,
            wait,
            slot,
            rx: Some(rx),
        })
    }

    /// Waits for the exit and returns the 32-bit exit code. Cancel-safe: a call dropped
    /// before the exit (a `select!` branch that lost) leaves the receiver in place, so the
    /// next call waits again rather than reading the code of a process still running.
    pub async fn exited(&mut self) -> io::Result<u32> {
        if let Some(rx) = self.rx.as_mut() {
            // A dropped sender cannot happen while the wait is registered.
            let _ = rx.await;
            self.rx = None;
        }
        exit_code(&self.process)
    }
}

impl Drop for ExitWait {
    fn drop(&mut self) {
        // SAFETY: registered in `new`; INVALID_HANDLE_VALUE makes the call wait for a callback
        // under way, after which nothing refers to the slot.
        unsafe {
            UnregisterWaitEx(self.wait, INVALID_HANDLE_VALUE);
            drop(Box::from_raw(self.slot.cast_mut()));
        }
    }
}

/// Our child: its process handle, shared with whoever else needs it (the exit wait).
#[derive(Debug, Clone)]
pub struct Child(Arc<OwnedHandle>);

impl Child {
    /// Our child `process` (a handle with SYNCHRONIZE and query access).
    pub fn from_handle(process: Arc<OwnedHandle>) -> Self {
        Child(process)
    }

    /// Its exit code if it has ended, `None` while it runs.
    pub fn try_reap(&mut self) -> Option<Reaped> {
        match try_exit(&self.0) {
            Ok(Some(code)) => Some(Reaped::Exited(code)),
            Ok(None) => None,
            Err(_) => Some(Reaped::Unknown),
        }
    }

    /// Blocks until it has ended (call it on a blocking thread).
    pub fn reap(&mut self) -> Reaped {
        wait_exit(&self.0).map_or(Reaped::Unknown, Reaped::Exited)
    }
}

/// A child's exit as something async code awaits (the thread pool's wait on its handle).
#[derive(Debug)]
pub struct ExitSignal(ExitWait);

impl ExitSignal {
    /// Resolves once the child has ended (at once on later calls).
    pub async fn wake(&mut self) -> io::Result<()> {
        self.0.exited().await.map(drop)
    }
}

/// The exit signal of `child`; Windows always has one.
pub fn exit_signal(child: &Child) -> io::Result<Option<ExitSignal>> {
    ExitWait::new(child.0.clone()).map(|w| Some(ExitSignal(w)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::job::{Job, JobLimits};
    use crate::sys::wintest::cmd_in;

    #[test]
    fn the_child_is_reaped_after_its_exit_signal_with_the_full_code() {
        let job = Job::create(&JobLimits::default()).unwrap();
        // 0xC0000005 (an access violation's NTSTATUS) as cmd's signed exit code.
        let (child, _output) = cmd_in(&job, "ping -n 2 127.0.0.1 >NUL & exit /b -1073741819");
        let mut child = Child::from_handle(Arc::new(child.process));
        assert_eq!(child.try_reap(), None, "reaped while it runs");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let mut signal = exit_signal(&child)
            .unwrap()
            .expect("Windows always has one");
        rt.block_on(signal.wake()).unwrap();
        assert_eq!(child.try_reap(), Some(Reaped::Exited(0xC000_0005)));
        assert_eq!(child.reap(), Reaped::Exited(0xC000_0005));
    }

    #[test]
    fn the_exit_wakes_an_async_waiter_with_the_code() {
        let job = Job::create(&JobLimits::default()).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let (quick, _quick_output) = cmd_in(&job, "exit /b 7");
        let (slow, _slow_output) = cmd_in(&job, "ping -n 300 127.0.0.1 >NUL");
        let slow_process = Arc::new(slow.process);
        rt.block_on(async {
            let mut wait = ExitWait::new(Arc::new(quick.process)).unwrap();
            assert_eq!(wait.exited().await.unwrap(), 7);
            // Still running: the waiter is not woken; a later end wakes it.
            let mut slow_wait = ExitWait::new(slow_process.clone()).unwrap();
            let early =
                tokio::time::timeout(std::time::Duration::from_millis(300), slow_wait.exited())
                    .await;
            assert!(early.is_err(), "woken while the command runs");
            job.terminate(9).unwrap();
            // The same waiter, whose first wait was dropped unfinished, sees the exit.
            assert_eq!(slow_wait.exited().await.unwrap(), 9);
        });
    }

    #[test]
    fn a_wait_dropped_unfinished_still_waits_for_the_exit() {
        // What the terminal's task does every round of its select!: a wait polled once while
        // the command runs, then dropped. The next wait must not answer until the exit (it
        // once read the exit code of the running process, 259, and every later wait at once).
        let job = Job::create(&JobLimits::default()).unwrap();
        let (child, _output) = cmd_in(&job, "ping -n 300 127.0.0.1 >NUL");
        let process = Arc::new(child.process);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut wait = ExitWait::new(process.clone()).unwrap();
            // A zero timeout polls the wait exactly once, then drops it: no timing involved.
            for round in 0..3 {
                let once = tokio::time::timeout(std::time::Duration::ZERO, wait.exited()).await;
                assert!(
                    once.is_err(),
                    "round {round}: answered {once:?} while the command runs"
                );
            }
            assert_eq!(try_exit(&process).unwrap(), None);
            job.terminate(5).unwrap();
            assert_eq!(wait.exited().await.unwrap(), 5);
            assert_eq!(
                wait.exited().await.unwrap(),
                5,
                "later calls answer at once"
            );
        });
    }
}
