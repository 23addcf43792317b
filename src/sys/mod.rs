//! Platform seams: every mechanism that differs between operating systems sits behind one small
//! interface here, one directory per concern, with one file per platform selected by `cfg`
//! (`linux.rs` today). Another platform is a new file per concern, not edits across the tree;
//! shared logic lives in each `mod.rs` or above these modules and never repeats per platform.
//!
//! | concern | interface | Linux mechanism |
//! |---|---|---|
//! | [`spawn`] | `launch(LaunchSpec) -> pid` | `clone(CLONE_VM \| CLONE_VFORK)`, `prctl(PR_SET_PDEATHSIG)`, raw `rt_sigaction` |
//! | [`exit_watch`] | `exit_fd(pid)`: readable once it exited | `pidfd_open` (ENOSYS remembered) |
//! | [`pty`] | `open(size)`, `set_size`, `foreground_group` | `posix_openpt` + `TIOCGPTPEER` / `ptsname_r` |
//! | [`procs`] | `list()`, `info(pid)`: pid, ppid, pgrp, sid, live | `/proc/<pid>/stat` |
//! | [`cwd`] | `open_dir`, `fd_path`, `process_cwd` | `O_PATH`, `/proc/self/fd`, `/proc/<pid>/cwd` |
//! | [`cgroup`] | `Cgroup`, `PidsCgroup`, `base`, `pids_base` | cgroup v2 (`cgroup.kill`), v1 `pids` |
//! | [`pipe`] | `pipe_cloexec`, `grow` | `pipe2(O_CLOEXEC)`, `F_SETPIPE_SZ` |
//! | [`signals`] | `realtime_name` | `SIGRTMIN`..`SIGRTMAX` |

pub mod cgroup;
pub mod cwd;
pub mod exit_watch;
pub mod pipe;
pub mod procs;
pub mod pty;
pub mod signals;
pub mod spawn;
