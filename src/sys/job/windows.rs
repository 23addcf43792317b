//! A Job Object per terminal (see the module docs in `mod.rs`).

use std::fs::File;
use std::io::{self, Write};
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::sync::atomic::{AtomicU8, Ordering};

use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectBasicAccountingInformation,
    JobObjectExtendedLimitInformation, QueryInformationJobObject, SetInformationJobObject,
    TerminateJobObject, JOBOBJECT_BASIC_ACCOUNTING_INFORMATION,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JOB_OBJECT_LIMIT_ACTIVE_PROCESS,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, JOB_OBJECT_LIMIT_PROCESS_MEMORY,
    JOB_OBJECT_LIMIT_PROCESS_TIME,
};

use super::JobLimits;
use crate::sys::signals::Stop;

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

    /// The ids of the processes in the job now (at most `max`): what the tests look at.
    #[cfg(test)]
    pub fn pids(&self, max: usize) -> io::Result<Vec<u32>> {
        use windows_sys::Win32::System::JobObjects::{
            JobObjectBasicProcessIdList, JOBOBJECT_BASIC_PROCESS_ID_LIST,
        };
        // The structure's header (two u32) then `max` ids, as usize, in usize-aligned storage.
        let header = 2 * std::mem::size_of::<u32>() / std::mem::size_of::<usize>();
        let mut buf = vec![0usize; header.max(1) + max.max(1)];
        let bytes = std::mem::size_of_val(buf.as_slice());
        // SAFETY: `buf` is `bytes` long and aligned for JOBOBJECT_BASIC_PROCESS_ID_LIST, which
        // the call fills in (header, then as many ids as fit).
        let ok = unsafe {
            QueryInformationJobObject(
                self.raw(),
                JobObjectBasicProcessIdList,
                buf.as_mut_ptr().cast(),
                bytes as u32,
                std::ptr::null_mut(),
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        let list = buf.as_ptr().cast::<JOBOBJECT_BASIC_PROCESS_ID_LIST>();
        // SAFETY: the call wrote the header; `NumberOfProcessIdsInList` ids follow it, within
        // `buf` (Windows never lists more than fit).
        let ids = unsafe {
            let n = (*list).NumberOfProcessIdsInList as usize;
            std::slice::from_raw_parts(std::ptr::addr_of!((*list).ProcessIdList).cast::<usize>(), n)
        };
        Ok(ids.iter().map(|&id| id as u32).collect())
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

/// The exit code `TerminateJobObject` gives every process it ends: 1, as libuv's (Node's)
/// kill on Windows (`TerminateProcess(process, 1)`).
const TERMINATED_EXIT_CODE: u32 = 1;

/// Ctrl+C as console input: a pseudo console turns it into `CTRL_C_EVENT` for every process
/// attached to it.
const ETX: u8 = 0x03;

/// `stopped_by`'s states.
const NOT_STOPPED: u8 = 0;
const STOPPED_BY_TERM: u8 = 1;
const STOPPED_BY_KILL: u8 = 2;

/// A started terminal's job: every process of the command, detached ones included, and how
/// containment's `Stop`s act on it (Windows has no signals). Dropping it closes the job's
/// handle, and `KILL_ON_JOB_CLOSE` ends whatever is left.
#[derive(Debug)]
pub struct TerminalJob {
    job: Job,
    /// The leader's pid (what `pgid` answers: there are no process groups).
    pid: i32,
    /// A pty terminal's console input, where `Term` writes Ctrl+C.
    console_input: Option<File>,
    /// Which `Stop` terminated the job ([`NOT_STOPPED`] until one did).
    stopped_by: AtomicU8,
}

impl TerminalJob {
    /// The job `job` of leader `pid`; `console_input` is a pty terminal's (`None` on pipes).
    pub fn new(job: Job, pid: i32, console_input: Option<OwnedHandle>) -> TerminalJob {
        TerminalJob {
            job,
            pid,
            console_input: console_input.map(File::from),
            stopped_by: AtomicU8::new(NOT_STOPPED),
        }
    }

    /// The leader's pid (Windows has no process groups; the job holds the tree).
    pub fn pgid(&self) -> i32 {
        self.pid
    }

    /// No cgroup: the job holds the tree (what the guardian would empty on Unix).
    pub fn cgroup_dir(&self) -> Option<&std::path::Path> {
        None
    }

    /// `Term`: Ctrl+C on a pty's console; on pipes, which have no graceful stop on Windows,
    /// the job is terminated. `Kill`: the job is terminated. `Continue`: nothing (there is
    /// no stopped state to leave).
    pub fn signal(&self, stop: Stop) {
        match (stop, &self.console_input) {
            (Stop::Continue, _) => {}
            (Stop::Term, Some(input)) => {
                if !self.alive() {
                    return;
                }
                // A command that ends on this Ctrl+C was ended by the terminal's kill: it
                // reports SIGTERM, as a TerminateJobObject would.
                let _ = self.stopped_by.compare_exchange(
                    NOT_STOPPED,
                    STOPPED_BY_TERM,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                );
                let mut input: &File = input;
                // Best effort, like a signal to a process that is gone: the escalation
                // terminates the job after the grace whatever happened here.
                let _ = input.write_all(&[ETX]);
            }
            (Stop::Term, None) | (Stop::Kill, _) => self.terminate(stop),
        }
    }

    /// `TerminateJobObject`, remembered as `stop`'s doing when something was alive (the
    /// first such stop only: a later `Kill` finds the job already ended by `Term`).
    fn terminate(&self, stop: Stop) {
        if !self.alive() {
            return;
        }
        let state = if stop == Stop::Kill {
            STOPPED_BY_KILL
        } else {
            STOPPED_BY_TERM
        };
        // Recorded before the termination, so whoever sees the leader's exit sees it too.
        let _ = self.stopped_by.compare_exchange(
            NOT_STOPPED,
            state,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
        let _ = self.job.terminate(TERMINATED_EXIT_CODE);
    }

    /// True while the job has an active process.
    pub fn alive(&self) -> bool {
        self.job.counts().is_ok_and(|c| c.active > 0)
    }

    /// The `Stop` that ended the job, if one did: `TerminateJobObject`, or on a pty the
    /// Ctrl+C of `Term`.
    pub fn stopped_by(&self) -> Option<Stop> {
        match self.stopped_by.load(Ordering::Acquire) {
            STOPPED_BY_TERM => Some(Stop::Term),
            STOPPED_BY_KILL => Some(Stop::Kill),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::job::JobLimits;
    use crate::sys::spawn::WinChild;
    use crate::sys::wintest::{cmd_in, under_wine, wait_until};
    use std::io::Read;

    #[test]
    fn output_of_both_streams_arrives_on_one_pipe_with_the_32_bit_exit_code() {
        let job = Job::create(&JobLimits::default()).unwrap();
        let (child, mut out) = cmd_in(&job, "echo one& echo two 1>&2& exit /b -1073741819");
        let code = crate::sys::exit_watch::wait_exit(&child.process).unwrap();
        assert_eq!(code, 0xC000_0005);
        let mut text = String::new();
        out.read_to_string(&mut text).unwrap();
        assert_eq!(text, "one\r\ntwo \r\n");
    }

    #[test]
    fn terminating_the_job_ends_the_tree_including_a_detached_grandchild() {
        let job = Job::create(&JobLimits::default()).unwrap();
        // `start /b` runs the grandchild detached from cmd's wait; it outlives cmd.
        let (child, _out) = cmd_in(
            &job,
            "start /b cmd /d /c ping -n 300 127.0.0.1 >NUL & ping -n 300 127.0.0.1 >NUL",
        );
        wait_until("the grandchild", || job.counts().unwrap().active >= 3);
        let pids = job.pids(64).unwrap();
        assert!(pids.len() >= 3 && pids.contains(&child.pid), "{pids:?}");
        job.terminate(1).unwrap();
        wait_until("an empty job", || job.counts().unwrap().active == 0);
        assert_eq!(
            crate::sys::exit_watch::try_exit(&child.process).unwrap(),
            Some(1)
        );
    }

    #[test]
    fn closing_the_job_ends_the_tree() {
        let job = Job::create(&JobLimits::default()).unwrap();
        let (child, _out) = cmd_in(&job, "ping -n 300 127.0.0.1 >NUL");
        assert_eq!(
            crate::sys::exit_watch::try_exit(&child.process).unwrap(),
            None
        );
        drop(job);
        // ping would run for 300 s: it ends when the job's last handle closes.
        wait_until("the end of the child", || {
            crate::sys::exit_watch::try_exit(&child.process)
                .unwrap()
                .is_some()
        });
    }

    #[test]
    fn the_process_limit_refuses_one_more_process() {
        // Wine 8 accepts JOB_OBJECT_LIMIT_ACTIVE_PROCESS but does not enforce it (the inner cmd
        // runs); the workflow's Windows runners require it (ACP_TERMINAL_REQUIRE=job-limits).
        if !crate::test_util::require(
            "job-limits",
            !under_wine(),
            "Wine does not enforce a job's active-process limit",
        ) {
            return;
        }
        let job = Job::create(&JobLimits {
            active_processes: Some(1),
            ..JobLimits::default()
        })
        .unwrap();
        let (child, mut out) = cmd_in(&job, "cmd /d /c echo inner& echo after %errorlevel%");
        crate::sys::exit_watch::wait_exit(&child.process).unwrap();
        let mut text = String::new();
        out.read_to_string(&mut text).unwrap();
        assert!(!text.contains("inner"), "{text}");
        assert!(text.contains("after"), "{text}");
        assert_eq!(job.counts().unwrap().total, 1, "{text}");
    }

    /// A pipe terminal's job running `ping` for 300 s (`alive` until something ends it).
    fn pipe_terminal(console_input: Option<OwnedHandle>) -> (TerminalJob, WinChild) {
        let job = Job::create(&JobLimits::default()).unwrap();
        let (child, _out) = cmd_in(&job, "ping -n 300 127.0.0.1 >NUL");
        let pid = child.pid as i32;
        let held = TerminalJob::new(job, pid, console_input);
        wait_until("the command", || held.alive());
        (held, child)
    }

    #[test]
    fn term_on_pipes_terminates_the_job_and_says_so() {
        let (held, child) = pipe_terminal(None);
        assert_eq!(held.stopped_by(), None);
        held.signal(Stop::Continue);
        assert!(held.alive(), "Continue does nothing");
        held.signal(Stop::Term);
        wait_until("an empty job", || !held.alive());
        assert_eq!(
            crate::sys::exit_watch::wait_exit(&child.process).unwrap(),
            TERMINATED_EXIT_CODE
        );
        assert_eq!(held.stopped_by(), Some(Stop::Term));
        // The escalation's later Kill finds nothing alive: the job was ended by Term.
        held.signal(Stop::Kill);
        assert_eq!(held.stopped_by(), Some(Stop::Term));
        assert_eq!(held.pgid(), child.pid as i32);
    }

    #[test]
    fn kill_terminates_the_job_and_says_so() {
        let (held, child) = pipe_terminal(None);
        held.signal(Stop::Kill);
        wait_until("an empty job", || !held.alive());
        crate::sys::exit_watch::wait_exit(&child.process).unwrap();
        assert_eq!(held.stopped_by(), Some(Stop::Kill));
    }

    #[test]
    fn a_command_that_ended_by_itself_is_not_reported_as_stopped() {
        let job = Job::create(&JobLimits::default()).unwrap();
        let (child, _out) = cmd_in(&job, "exit /b 3");
        let held = TerminalJob::new(job, child.pid as i32, None);
        assert_eq!(
            crate::sys::exit_watch::wait_exit(&child.process).unwrap(),
            3
        );
        wait_until("an empty job", || !held.alive());
        held.signal(Stop::Kill);
        assert_eq!(held.stopped_by(), None);
    }

    #[test]
    fn term_on_a_pty_writes_ctrl_c_to_its_console_input_and_leaves_the_job() {
        // The console input of a pty terminal, as a pipe whose other end the test reads.
        let (read, write) = crate::sys::pipe::pipe().unwrap();
        let (held, child) = pipe_terminal(Some(write));
        held.signal(Stop::Term);
        let mut byte = [0u8; 1];
        std::fs::File::from(read).read_exact(&mut byte).unwrap();
        assert_eq!(byte, [ETX]);
        // Ctrl+C is the command's to act on: nothing was terminated, but an end from here
        // on is the kill's (SIGTERM), and stays so when the grace's Kill follows.
        assert!(held.alive());
        assert_eq!(held.stopped_by(), Some(Stop::Term));
        held.signal(Stop::Kill);
        crate::sys::exit_watch::wait_exit(&child.process).unwrap();
        assert_eq!(held.stopped_by(), Some(Stop::Term));
    }

    #[test]
    fn ctrl_c_to_a_pty_whose_command_ended_by_itself_is_not_a_stop() {
        let (read, write) = crate::sys::pipe::pipe().unwrap();
        let job = Job::create(&JobLimits::default()).unwrap();
        let (child, _out) = cmd_in(&job, "exit /b 0");
        let held = TerminalJob::new(job, child.pid as i32, Some(write));
        crate::sys::exit_watch::wait_exit(&child.process).unwrap();
        wait_until("an empty job", || !held.alive());
        held.signal(Stop::Term);
        assert_eq!(held.stopped_by(), None);
        drop(held);
        // Nothing was written: the input ends empty once its writer is gone.
        let mut rest = Vec::new();
        std::fs::File::from(read).read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty(), "{rest:?}");
    }
}
