//! The wrapper table: programs that run another program given in their arguments (`env`,
//! `xargs`, `timeout`, `sudo`, `nice`, the dynamic loader, ...), each with its real option
//! grammar (read by `options.rs`) and what its options mean for the program it runs. Data only.

use super::options::Spec;

/// A wrapper's grammar and the meaning of its options.
#[derive(Default, Clone, Copy)]
pub struct Wrapper {
    /// Its options.
    pub spec: Spec,
    /// Operands before the command (`timeout DURATION`, `chroot ROOT`).
    pub positional: usize,
    /// `NAME=VALUE` words before the command are assignments (`env`, `sudo`).
    pub assignments: bool,
    /// Options after which no command runs (`command -v`).
    pub no_run: &'static [&'static str],
    /// Options whose value is a shell line (`su -c LINE`).
    pub line: &'static [&'static str],
    /// Options whose value is split into a command by the wrapper (`env -S`).
    pub split: &'static [&'static str],
    /// Options that start the command in another directory (`env -C`, `sudo -D`).
    pub chdir: &'static [&'static str],
    /// The command always starts elsewhere (`chroot`).
    pub moves: bool,
    /// The words after the options are joined into a shell line (`watch`).
    pub joins: bool,
    /// Its operands are a user and a shell's arguments, not a command (`su`).
    pub shell: bool,
    /// Options that name another process (by pid, group or user) for it to act on
    /// (`taskset -p`, `strace -p`).
    pub pid: &'static [&'static str],
    /// Options that make it start a login shell (`su -l`), which runs start-up files.
    pub login: &'static [&'static str],
}

const fn gnu(short: &'static str, long: &'static [&'static str]) -> Spec {
    Spec {
        short,
        long,
        abbreviate: true,
        permute: false,
        numeric: false,
    }
}

const fn permuted(short: &'static str, long: &'static [&'static str]) -> Spec {
    Spec {
        permute: true,
        ..gnu(short, long)
    }
}

/// True for the dynamic loader run as a program (`/lib64/ld-linux-x86-64.so.2 /bin/rm`).
pub fn is_ld_so(name: &str) -> bool {
    name == "ld.so"
        || (name.starts_with("ld-") || name.starts_with("ld64.so")) && name.contains(".so")
}

/// The wrapper named `name`, if it is one.
pub fn wrapper(name: &str) -> Option<Wrapper> {
    let w = match name {
        "env" => Wrapper {
            spec: gnu(
                "i0vu:C:S:",
                &[
                    "ignore-environment",
                    "null",
                    "debug",
                    "list-signal-handling",
                    "unset=",
                    "chdir=",
                    "split-string=",
                    "default-signal==",
                    "ignore-signal==",
                    "block-signal==",
                ],
            ),
            assignments: true,
            split: &["S", "split-string"],
            chdir: &["C", "chdir"],
            ..Wrapper::default()
        },
        "command" => Wrapper {
            spec: Spec {
                short: "pvV",
                ..Spec::default()
            },
            no_run: &["v", "V"],
            ..Wrapper::default()
        },
        "builtin" | "nohup" | "unbuffer" | "caffeinate" => Wrapper::default(),
        "exec" => Wrapper {
            spec: Spec {
                short: "cla:",
                ..Spec::default()
            },
            ..Wrapper::default()
        },
        "nice" => Wrapper {
            spec: Spec {
                numeric: true,
                ..gnu("n:", &["adjustment="])
            },
            ..Wrapper::default()
        },
        "timeout" => Wrapper {
            spec: gnu(
                "fpvk:s:",
                &[
                    "foreground",
                    "preserve-status",
                    "verbose",
                    "kill-after=",
                    "signal=",
                ],
            ),
            positional: 1,
            ..Wrapper::default()
        },
        "xargs" => Wrapper {
            spec: gnu(
                "0rtpxoa:d:E:I:L:n:P:s:e::i::l::",
                &[
                    "null",
                    "no-run-if-empty",
                    "verbose",
                    "interactive",
                    "exit",
                    "open-tty",
                    "show-limits",
                    "arg-file=",
                    "delimiter=",
                    "max-args=",
                    "max-procs=",
                    "max-chars=",
                    "process-slot-var=",
                    "eof==",
                    "replace==",
                    "max-lines==",
                ],
            ),
            ..Wrapper::default()
        },
        "stdbuf" => Wrapper {
            spec: gnu("i:o:e:", &["input=", "output=", "error="]),
            ..Wrapper::default()
        },
        "setsid" => Wrapper {
            spec: gnu("cfw", &["ctty", "fork", "wait"]),
            ..Wrapper::default()
        },
        "time" => Wrapper {
            spec: gnu(
                "pvqaf:o:",
                &[
                    "portability",
                    "verbose",
                    "quiet",
                    "append",
                    "format=",
                    "output=",
                ],
            ),
            ..Wrapper::default()
        },
        "ionice" => Wrapper {
            spec: gnu("tpPuc:n:", &["ignore", "class=", "classdata="]),
            no_run: &["p", "P", "u"],
            pid: &["p", "P", "u"],
            ..Wrapper::default()
        },
        "chrt" => Wrapper {
            spec: gnu(
                "abdfioRrmvpT:P:D:",
                &[
                    "all-tasks",
                    "batch",
                    "deadline",
                    "fifo",
                    "idle",
                    "other",
                    "rr",
                    "reset-on-fork",
                    "max",
                    "verbose",
                    "pid",
                    "sched-runtime=",
                    "sched-period=",
                    "sched-deadline=",
                ],
            ),
            no_run: &["p", "pid"],
            pid: &["p", "pid"],
            positional: 1,
            ..Wrapper::default()
        },
        "taskset" => Wrapper {
            spec: gnu("acp", &["all-tasks", "cpu-list", "pid"]),
            no_run: &["p", "pid"],
            pid: &["p", "pid"],
            positional: 1,
            ..Wrapper::default()
        },
        "sudo" => Wrapper {
            spec: gnu(
                "AbEHKkNnPSsielvVC:D:g:h:p:R:r:T:t:U:u:",
                &[
                    "askpass",
                    "background",
                    "preserve-env",
                    "set-home",
                    "login",
                    "non-interactive",
                    "preserve-groups",
                    "stdin",
                    "shell",
                    "edit",
                    "list",
                    "validate",
                    "version",
                    "close-from=",
                    "chdir=",
                    "group=",
                    "host=",
                    "prompt=",
                    "chroot=",
                    "role=",
                    "type=",
                    "command-timeout=",
                    "other-user=",
                    "user=",
                ],
            ),
            no_run: &["e", "l", "v", "V", "edit", "list", "validate", "version"],
            assignments: true,
            chdir: &["D", "chdir", "R", "chroot"],
            ..Wrapper::default()
        },
        "su" | "runuser" => Wrapper {
            spec: permuted(
                "lmpfPg:G:s:u:w:c:",
                &[
                    "login",
                    "preserve-environment",
                    "pty",
                    "fast",
                    "group=",
                    "supp-group=",
                    "shell=",
                    "user=",
                    "whitelist-environment=",
                    "session-command=",
                    "command=",
                ],
            ),
            line: &["c", "command", "session-command"],
            login: &["l", "login"],
            shell: true,
            ..Wrapper::default()
        },
        "doas" => Wrapper {
            spec: Spec {
                short: "nsLC:u:",
                ..Spec::default()
            },
            ..Wrapper::default()
        },
        "chroot" => Wrapper {
            spec: gnu("", &["skip-chdir", "userspec=", "groups="]),
            positional: 1,
            moves: true,
            ..Wrapper::default()
        },
        "flock" => Wrapper {
            spec: gnu(
                "sxeunoFw:E:c:",
                &[
                    "shared",
                    "exclusive",
                    "unlock",
                    "nonblock",
                    "close",
                    "no-fork",
                    "verbose",
                    "timeout=",
                    "conflict-exit-code=",
                    "command=",
                ],
            ),
            line: &["c", "command"],
            positional: 1,
            ..Wrapper::default()
        },
        "watch" => Wrapper {
            spec: gnu(
                "bcegptwxrfn:q:d::",
                &[
                    "beep",
                    "color",
                    "no-color",
                    "errexit",
                    "chgexit",
                    "precise",
                    "no-title",
                    "no-wrap",
                    "exec",
                    "no-rerun",
                    "follow",
                    "interval=",
                    "equexit=",
                    "differences==",
                ],
            ),
            joins: true,
            ..Wrapper::default()
        },
        // e2fsprogs' `logsave [-asv] LOGFILE PROG [ARGS]`
        "logsave" => Wrapper {
            spec: Spec {
                short: "asv",
                ..Spec::default()
            },
            positional: 1,
            ..Wrapper::default()
        },
        "strace" | "ltrace" => Wrapper {
            spec: Spec {
                short: "cCdDfFhiqrtTvVwxyzkna:b:e:E:I:o:O:p:P:s:S:u:U:X:",
                ..Spec::default()
            },
            pid: &["p"],
            ..Wrapper::default()
        },
        _ if is_ld_so(name) => Wrapper {
            spec: Spec {
                long: &[
                    "inhibit-cache",
                    "library-path=",
                    "inhibit-rpath=",
                    "audit=",
                    "preload=",
                    "argv0=",
                    "glibc-hwcaps-prepend=",
                    "glibc-hwcaps-mask=",
                ],
                ..Spec::default()
            },
            ..Wrapper::default()
        },
        _ => return None,
    };
    Some(w)
}

/// Reserved words that cannot start a command.
pub const RESERVED: &[&str] = &[
    "fi", "done", "esac", "then", "else", "elif", "do", "in", "}", "{",
];

/// Shells whose `-c` argument is a line.
pub const SHELLS: &[&str] = &[
    "sh", "bash", "rbash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "fish", "busybox",
];

/// Builtins that change the directory later commands run in.
pub const CHDIR_BUILTINS: &[&str] = &["cd", "pushd", "popd"];
