//! The job step (Windows): the child, created suspended, joins the terminal's Job Object
//! (`sys::job`, made by the containment with the request's limits) and only then runs, so
//! nothing it starts can be outside the job.

use std::io;
use std::os::windows::io::{AsRawHandle, OwnedHandle};

use windows_sys::Win32::System::Threading::{ResumeThread, TerminateProcess};

use crate::sys::job::Job;

/// Puts the suspended `process` in `job`, then resumes its primary `thread`. A child that
/// cannot join (or resume) is terminated before it ran, and the error returned.
pub fn join_then_resume(job: &Job, process: &OwnedHandle, thread: &OwnedHandle) -> io::Result<()> {
    let started = job.assign(process).and_then(|()| {
        // SAFETY: the primary thread of the suspended child.
        if unsafe { ResumeThread(thread.as_raw_handle()) } == u32::MAX {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    });
    if started.is_err() {
        // SAFETY: our own suspended child, which has run nothing.
        unsafe { TerminateProcess(process.as_raw_handle(), 1) };
    }
    started
}
