//! A Job Object per terminal (see the module docs in `mod.rs`).

use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};

use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectBasicAccountingInformation,
    JobObjectExtendedLimitInformation, QueryInformationJobObject, SetInformationJobObject,
    TerminateJobObject, JOBOBJECT_BASIC_ACCOUNTING_INFORMATION,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JOB_OBJECT_LIMIT_ACTIVE_PROCESS,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, JOB_OBJECT_LIMIT_PROCESS_MEMORY,
    JOB_OBJECT_LIMIT_PROCESS_TIME,
};

use super::JobLimits;

/// One terminal's job. Dropping it closes our handle: with `KILL_ON_JOB_CLOSE`, Windows then
/// ends every process still in the job.
#[derive(Debug)]
pub struct Job {
    handle: OwnedHandle,
}

/// What the job's accounting says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobCounts {
    /// Processes alive in the job now.
    pub active: u32,
    /// Processes ever started in it.
    pub total: u32,
}

impl Job {
    /// Creates an unnamed job with `KILL_ON_JOB_CLOSE`, no breakaway, and `limits`.
    pub fn create(limits: &JobLimits) -> io::Result<Job> {
        // SAFETY: both pointers may be null (default security, no name); the returned handle
        // is checked before it is owned.
        let raw = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if raw.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a valid job handle we own from here on.
        let handle = unsafe { OwnedHandle::from_raw_handle(raw) };
        let job = Job { handle };
        // SAFETY: the structure is plain data; all-zero is "no limit" for every field.
        let mut info: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        let basic = &mut info.BasicLimitInformation;
        // No JOB_OBJECT_LIMIT_BREAKAWAY_OK / SILENT_BREAKAWAY_OK: nothing leaves the job.
        basic.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        if let Some(n) = limits.active_processes {
            basic.LimitFlags |= JOB_OBJECT_LIMIT_ACTIVE_PROCESS;
            basic.ActiveProcessLimit = n;
        }
        if let Some(t) = limits.process_user_time {
            basic.LimitFlags |= JOB_OBJECT_LIMIT_PROCESS_TIME;
            basic.PerProcessUserTimeLimit = t;
        }
        if let Some(bytes) = limits.process_memory {
            basic.LimitFlags |= JOB_OBJECT_LIMIT_PROCESS_MEMORY;
            info.ProcessMemoryLimit = bytes;
        }
        // SAFETY: `info` is the structure this information class takes, with its size.
        let ok = unsafe {
            SetInformationJobObject(
                job.raw(),
                JobObjectExtendedLimitInformation,
                (&info as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
                std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(job)
    }

    fn raw(&self) -> windows_sys::Win32::Foundation::HANDLE {
        self.handle.as_raw_handle()
    }

    /// Puts `process` (a handle with `PROCESS_SET_QUOTA | PROCESS_TERMINATE`, created
    /// suspended so it has started nothing yet) in the job.
    pub fn assign(&self, process: &OwnedHandle) -> io::Result<()> {
        // SAFETY: both handles are valid for the duration of the call.
        if unsafe { AssignProcessToJobObject(self.raw(), process.as_raw_handle()) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Ends every process in the job with `exit_code` (the tree, detached ones included).
    pub fn terminate(&self, exit_code: u32) -> io::Result<()> {
        // SAFETY: a valid job handle.
        if unsafe { TerminateJobObject(self.raw(), exit_code) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// How many processes are in the job now, and were ever.
    pub fn counts(&self) -> io::Result<JobCounts> {
        // SAFETY: plain data, filled in by the call.
        let mut info: JOBOBJECT_BASIC_ACCOUNTING_INFORMATION = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is this class's structure, with its size; the length is optional.
        let ok = unsafe {
            QueryInformationJobObject(
                self.raw(),
                JobObjectBasicAccountingInformation,
                (&mut info as *mut JOBOBJECT_BASIC_ACCOUNTING_INFORMATION).cast(),
                std::mem::size_of::<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION>() as u32,
                std::ptr::null_mut(),
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(JobCounts {
            active: info.ActiveProcesses,
            total: info.TotalProcesses,
        })
    }
}
