//! Platform seams: every mechanism that differs between operating systems sits behind one small
//! interface here, one directory per concern, with one file per platform selected by `cfg`
//! (`linux.rs`, `macos.rs`, `windows.rs`; `cgroup/none.rs` where there are no cgroups). Another platform is a
//! new file per concern, not edits across the tree; shared logic lives in each `mod.rs` or above
//! these modules and never repeats per platform.
//!
//! | concern | interface | Linux | macOS | Windows |
//! |---|---|---|---|---|
//! | [`spawn`] | `rules` (shell argv, env names, program lookup, argument check); `open_ends(Io)` then `spawn(Command, Ends) -> (Started, Leader)` (Unix also `spawn_detached`, for the guardian); the `Join` of the launch's steps (`spawn/steps/`: session, parent death, rlimits, cgroup, job), made by `contain`; `ChildSteps` a higher layer runs in the child (Linux only); `failed_step`, `child_errno` | `sh -c`, execvp's lookup; `clone(CLONE_VM \| CLONE_VFORK)`, `prctl(PR_SET_PDEATHSIG)`, raw `rt_sigaction` | `posix_spawn` (`spawn/posix_spawn.rs`); `fork` + `POSIX_SPAWN_SETEXEC` for a controlling tty or rlimits | `%ComSpec% /d /s /c`, `PATH`+`PATHEXT`, names without case (`spawn/wincmd.rs`); `CreateProcessW` suspended, joined to the job, resumed |
//! | [`exit_watch`] | `Child` (`try_reap` / `reap` into a `Reaped`; on Unix, dropped unreaped, reaped by the reaper thread: `reap_later`), `exit_signal(&Child)`: an `ExitSignal` that wakes once it can be reaped | pid + `waitpid`; `pidfd_open` in the reactor (ENOSYS remembered: `None`) | pid + `waitpid`; one thread on a kqueue of `NOTE_EXIT` filters closes a pipe per child | process handle + `GetExitCodeProcess`; `ExitWait` (`RegisterWaitForSingleObject`) |
//! | [`pty`] | a `Control` per pty terminal: `set_size`, `foreground_group`, `modes` / `restore_modes`, `awaits_replies`; Unix: `open(size)` | `posix_openpt` + `TIOCGPTPEER` / `ptsname_r` | `posix_openpt` + `TIOCPTYGNAME` | `ConPty`: `CreatePseudoConsole`, `ResizePseudoConsole` |
//! | [`procs`] | `list()`, `start_time`, `session_tree`, `wait_state`, `exec_stamp`, `with_environment_entry`, `GUARDIAN_KILL` | `/proc/<pid>/stat`, `syscall`, `environ` | libproc + `getsid` (no wait state, exec stamp or environment: `Unknown`, `None`, none); the guardian uses `ps` | `start_time` (`GetProcessTimes`); no `list` / `live_where` / `session_tree` (no groups or sessions: the job holds the tree); no guardian (the job's `KILL_ON_JOB_CLOSE`) |
//! | [`guardian`] | `track(pgid, cgroup)`, `untrack`, `guardian_pid()`: what kills a terminal's processes when Node dies without running our code | a process (`sh` exec'ing `awk`, `guardian/unix/`) that SIGKILLs every listed group and cgroup when its pipe from Node ends | the same | none (`guardian/none.rs`): the job's `KILL_ON_JOB_CLOSE` |
//! | [`cwd`] | `open_dir` (a `Dir`), `dir_path`, `fd_path` (Unix), `process_cwd` | `O_PATH`, `/proc/self/fd`, `/proc/<pid>/cwd` | `O_SEARCH`, `F_GETPATH`, `PROC_PIDVNODEPATHINFO` | `open_dir` (a handle without `FILE_SHARE_DELETE`: pinned), `dir_path` (`GetFinalPathNameByHandleW`); `process_cwd` is `None` |
//! | [`errname`] | `name(raw)`: an OS error's `code` | the errno's name (`nix`) | the errno's name (`nix`) | the errno name Node reports for the Win32 error (`ERROR_FILE_NOT_FOUND`: `ENOENT`), else `UNKNOWN` |
//! | [`bash`] | `session_bash()`: a ShellSession's default bash | `bash` (from `PATH`) | `bash` (from `PATH`) | Git for Windows' `bash.exe` (`spawn::wincmd::find_bash`), else `NotFound` |
//! | [`cgroup`] | `Cgroup`, `PidsCgroup`, `base`, `pids_base` | cgroup v2 (`cgroup.kill`), v1 `pids` | none (`none.rs`) | [`job`]: a Job Object per terminal |
//! | [`contain`] | `Holder` (`new(limits)`, `join(own_session)`: the launch's `Join`, `contain(leader)`), `Held` (`signal(Stop)`, `alive`, `stopped_by`, `pgid`) | process group, a pty's session, cgroups (`cgroup.kill`) | process group and a pty's session | the terminal's Job Object with job limits (`ENOTSUP` for the rest); `Term`: Ctrl+C to a pty's console, else `TerminateJobObject`; `Kill`: `TerminateJobObject` |
//! | [`symbol`] | `lookup(name)`: a host-process function at run time | `dlsym(RTLD_DEFAULT)` | `dlsym(RTLD_DEFAULT)` | `GetProcAddress` on the executable (node.exe) |
//! | [`pipe`] | `pipe_cloexec`, `OutputReader` (`read`, `read_now`), `InputWriter` (`try_write`, `writable`), `reader_gone` | `pipe2(O_CLOEXEC)`, `F_SETPIPE_SZ`; a flood's paced reads wait on a `timerfd` | `pipe` + `FD_CLOEXEC`; no resizing, no pacing | `pipe`, `null_input` (`CreatePipe`, `NUL`), `PipeReader` / `PipeWriter` (a thread per pipe, bounded queues); `OutputReader` over a `PipeReader`, `InputWriter` over a `PipeWriter` |
//! | [`signals`] | `name(signo)`; `Stop` (Term, Continue, Kill: what containment asks) | `nix`'s names, `SIGRTMIN`..`SIGRTMAX`; `Stop` as its signal | `nix`'s names; `Stop` as its signal | the numbers Node names on Windows (`SIGTERM` 15, `SIGKILL` 9); no signals otherwise (a pty terminal's graceful stop is Ctrl+C, ETX written to its input) |
//! | [`attach`] | `Listener` (`bind`, `path`, `accept`), `attach(path)`, `random_token` | a unix socket in a fresh 0700 directory of the temp dir | as Linux | none (`Unsupported`) |
//! | [`reactor`] | `register_readable`, `register_writable` | tokio's `AsyncFd` (epoll) | tokio's `AsyncFd` (kqueue) | none (not compiled: the Windows pipes are read and written by threads, `PipeReader` / `PipeWriter`) |

pub mod attach;
pub mod bash;
pub mod cgroup;
pub mod contain;
pub mod cwd;
pub mod errname;
pub mod exit_watch;
pub mod guardian;
pub mod job;
pub mod pipe;
pub mod procs;
pub mod pty;
#[cfg(unix)]
pub mod reactor;
pub mod signals;
pub mod spawn;
pub mod symbol;
#[cfg(all(unix, test))]
pub mod unixtest;
#[cfg(all(windows, test))]
pub mod wintest;
