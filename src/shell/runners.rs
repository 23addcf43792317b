//! The code-runner table: programs that can run code given in their arguments, options or stdin,
//! so that allowing the program would allow any command. Each is read with its real option
//! grammar (`options.rs`): a code-running option (`tar --to-com=`, `git fetch --upload-pack`,
//! `node --import data:...`) is a [`Verdict::Code`], an option the grammar does not list is a
//! [`Verdict::Unknown`]; an allow list refuses both unless the host opts the program in
//! (`codeRunners`). The table is what docs/host-policy.md lists. Data and pure functions only.

use super::options::{parse, Opt, Spec};
use super::words::Word;
use super::wrappers::is_ld_so;

/// What an allow list must know about a program's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// It would run code given in its arguments or stdin: why.
    Code(String),
    /// An option its grammar does not list (so what it does is not known): which.
    Unknown(String),
}

/// The verdict on running `name` with `args`, if there is one. `moved`: a command before it
/// changed the directory (`cd`, `env -C`), to this directory when it is known: a relative script
/// operand is judged where it is opened (`cd /dev && python3 stdin` reads the here-document),
/// and refused when that is not known.
pub fn judge(
    name: &str,
    args: &[Word],
    moved: Option<&Option<String>>,
    start_is_real: bool,
) -> Option<Verdict> {
    if !in_table(name) {
        return None;
    }
    CWD_MOVED.with(|m| m.replace(moved.cloned()));
    let real = match moved {
        Some(Some(dir)) if start_is_real && dir.starts_with('/') => dir
            .split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .count(),
        _ => 0,
    };
    CWD_REAL.with(|r| r.replace(real));
    if let Some(d) = args.iter().find(|a| a.dynamic) {
        return code(format!(
            "`{name}` with an argument known only at run time (`{}`)",
            d.text
        ));
    }
    let a: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
    if LAUNCHERS.contains(&name) {
        return code(format!(
            "`{name}` runs another program, or commands given in its arguments or stdin, through options this analysis does not read"
        ));
    }
    match name {
        "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => awk(name, &a),
        "sed" | "gsed" => sed(name, &a),
        "git" => git(&a),
        "tar" | "gtar" => tar(name, &a),
        "sort" => grammar(name, &SORT, &a, &["compress-program"]),
        "make" | "gmake" => make(name, &a),
        "node" | "nodejs" => node(name, &a),
        "rg" => named(name, &a, &["pre", "hostname-bin"], "", false),
        "ssh" | "scp" => ssh(name, &a),
        // sftp reads commands from its stdin or a batch file (`-b`), `!cmd` among them: a local
        // shell command. Whatever its options, what it runs comes from data nobody checked.
        "sftp" => code(
            "`sftp` runs the `!cmd` lines of its stdin or batch file as local shell commands".into(),
        ),
        "kill" => kill(&a),
        "pkill" | "killall" | "skill" | "snice" | "renice" => other_process(name, a.first().copied().unwrap_or("")),
        "split" => grammar(name, &SPLIT, &a, &["filter"]),
        "install" => grammar(name, &INSTALL, &a, &["strip-program", "s", "strip"]),
        "sdiff" => named(name, &a, &["diff-program", "output"], "o", true),
        "diff3" => named(name, &a, &["diff-program"], "", true),
        "capsh" => capsh(&a),
        "start-stop-daemon" => code(
            "`start-stop-daemon` starts a program (`--exec`, `--startas`) or signals other processes".into(),
        ),
        "zip" => zip(&a),
        "wget" => wget(&a),
        // `-C`/`--config-file`: a man-db config whose DEFINE lines name the programs man runs
        "man" => named(name, &a, &["pager", "html", "config-file"], "PHC", true),
        "npx" | "bunx" | "pnpx" => code(format!(
            "`{name}` runs a package's code (fetched if missing)"
        )),
        "npm" => npm_cli(&a),
        "pnpm" | "yarn" => npm(name, &a),
        "find" => a
            .iter()
            .find(|a| matches!(**a, "-exec" | "-execdir" | "-ok" | "-okdir"))
            .and_then(|a| code(format!("`find {a}` runs a command for each file"))),
        "xargs" => code("`xargs` appends words read from stdin to the command it runs".into()),
        "env" => a
            .iter()
            .take_while(|a| a.starts_with('-'))
            .find(|a| {
                a.strip_prefix("--")
                    .map_or(a.contains('S'), |l| prefix_of(l, &["split-string"]))
            })
            .and_then(|_| code("`env -S` splits a string into a command".into())),
        "rsync" => a
            .iter()
            .find(|a| {
                a.starts_with("-e")
                    || a.strip_prefix("--")
                        .is_some_and(|l| prefix_of(l, &["rsh", "rsync-path"]))
            })
            .and_then(|a| code(format!("`rsync {a}` runs a command"))),
        "less" | "more" | "most" | "vi" | "vim" | "nvim" | "view" | "vimdiff" | "ex" | "ed"
        | "emacs" | "nano" => code(format!(
            "`{name}` runs commands typed at its prompt or given in its options (`!cmd`, `-c`)"
        )),
        _ if is_ld_so(name) => a
            .iter()
            .take_while(|a| a.starts_with("--"))
            .find(|a| {
                [
                    "--preload",
                    "--audit",
                    "--library-path",
                    "--glibc-hwcaps-prepend",
                    "--argv0",
                ]
                .iter()
                .any(|o| a.starts_with(o))
            })
            .and_then(|a| {
                code(format!(
                    "the dynamic loader's `{a}` loads code into the program or renames it"
                ))
            }),
        "python" | "python3" | "python2" | "pypy" | "pypy3" => python(name, &a),
        _ if name.starts_with("python") || name.starts_with("pypy") => python(name, &a),
        "perl" => perl(&a),
        "bun" | "deno" => interpreter(name, &a, "ep").map(Verdict::Code),
        // `-d auto_prepend_file=/dev/stdin`, `-c INI` (the same from a file) and `-z EXT` load code
        "php" => interpreter(name, &a, "rRBEcdz").map(Verdict::Code),
        _ => interpreter(name, &a, "e").map(Verdict::Code),
    }
}

/// Programs that run another program, or commands given in their arguments or stdin, through a
/// grammar this analysis does not read (`setpriv PROG`, `valgrind PROG`, `script -c LINE`,
/// `gdb -ex '!cmd'`, `sqlite3 .shell`): always [`Verdict::Code`].
pub const LAUNCHERS: &[&str] = &[
    "bwrap",
    "dbus-launch",
    "dbus-run-session",
    "expect",
    "fakechroot",
    "fakeroot",
    "firejail",
    "gdb",
    "i386",
    "linux32",
    "linux64",
    "lldb",
    "newgrp",
    "nsenter",
    "parallel",
    "perf",
    "prlimit",
    "proot",
    "rr",
    "run-parts",
    "screen",
    "script",
    "setarch",
    "setpriv",
    "sg",
    "sqlite3",
    "ssh-agent",
    "systemd-run",
    "tmux",
    "unshare",
    "valgrind",
    "x86_64",
];

/// True for a program of the table.
pub fn in_table(name: &str) -> bool {
    LAUNCHERS.contains(&name)
        || matches!(
            name,
            "awk"
                | "gawk"
                | "mawk"
                | "nawk"
                | "busybox-awk"
                | "sed"
                | "gsed"
                | "git"
                | "tar"
                | "gtar"
                | "sort"
                | "make"
                | "gmake"
                | "node"
                | "nodejs"
                | "rg"
                | "ssh"
                | "scp"
                | "sftp"
                | "kill"
                | "pkill"
                | "killall"
                | "skill"
                | "snice"
                | "renice"
                | "split"
                | "install"
                | "sdiff"
                | "diff3"
                | "capsh"
                | "start-stop-daemon"
                | "zip"
                | "wget"
                | "man"
                | "npx"
                | "bunx"
                | "pnpx"
                | "npm"
                | "pnpm"
                | "yarn"
                | "find"
                | "xargs"
                | "env"
                | "rsync"
                | "less"
                | "more"
                | "most"
                | "vi"
                | "vim"
                | "nvim"
                | "view"
                | "vimdiff"
                | "ex"
                | "ed"
                | "emacs"
                | "nano"
                | "perl"
                | "bun"
                | "deno"
                | "php"
                | "ruby"
                | "irb"
                | "lua"
                | "luajit"
                | "Rscript"
                | "tclsh"
                | "wish"
                | "osascript"
        )
        || is_ld_so(name)
        || name.starts_with("python")
        || name.starts_with("pypy")
}

fn code(why: String) -> Option<Verdict> {
    Some(Verdict::Code(why))
}

/// True when the long option `given` (`name` or `name=value`) is, or abbreviates, one of `names`.
fn prefix_of(given: &str, names: &[&str]) -> bool {
    let given = given.split('=').next().unwrap_or(given);
    !given.is_empty() && names.iter().any(|n| n.starts_with(given))
}

/// Reads `args` with `spec`: an unknown option, else the first option named in `runs`.
fn grammar(name: &str, spec: &Spec, args: &[&str], runs: &[&str]) -> Option<Verdict> {
    match parse(spec, args) {
        Err(option) => Some(unknown(name, &option)),
        Ok(p) => p
            .opts
            .iter()
            .find(|o| runs.contains(&o.name.as_str()))
            .and_then(|o| code(runs_a_command(name, o))),
    }
}

fn unknown(name: &str, option: &str) -> Verdict {
    Verdict::Unknown(format!(
        "`{name}` option {option}, which this analysis does not know"
    ))
}

fn runs_a_command(name: &str, o: &Opt) -> String {
    format!("`{name} {}` runs a command or loads code", o.written)
}

const TAR: Spec = Spec {
    short: "ABGJMOPRSUWZacdhijklmnoprstuvwxzb:C:f:F:g:H:I:K:L:N:T:V:X:",
    long: &[
        "absolute-names",
        "acls",
        "add-file=",
        "after-date=",
        "anchored",
        "append",
        "atime-preserve==",
        "auto-compress",
        "backup==",
        "block-number",
        "blocking-factor=",
        "bzip2",
        "catenate",
        "check-device",
        "check-links",
        "checkpoint-action=",
        "checkpoint==",
        "clamp-mtime",
        "compare",
        "compress",
        "concatenate",
        "confirmation",
        "create",
        "delay-directory-restore",
        "delete",
        "dereference",
        "diff",
        "directory=",
        "exclude-backups",
        "exclude-caches",
        "exclude-caches-all",
        "exclude-caches-under",
        "exclude-from=",
        "exclude-ignore-recursive=",
        "exclude-ignore=",
        "exclude-tag-all=",
        "exclude-tag-under=",
        "exclude-tag=",
        "exclude-vcs",
        "exclude-vcs-ignores",
        "exclude=",
        "extract",
        "file=",
        "files-from=",
        "force-local",
        "format=",
        "full-time",
        "get",
        "group-map=",
        "group=",
        "gunzip",
        "gzip",
        "hard-dereference",
        "help",
        "hole-detection=",
        "ignore-case",
        "ignore-command-error",
        "ignore-failed-read",
        "ignore-zeros",
        "incremental",
        "index-file=",
        "info-script=",
        "interactive",
        "keep-directory-symlink",
        "keep-newer-files",
        "keep-old-files",
        "label=",
        "level=",
        "list",
        "listed-incremental=",
        "lzip",
        "lzma",
        "lzop",
        "mode=",
        "mtime=",
        "multi-volume",
        "new-volume-script=",
        "newer-mtime=",
        "newer=",
        "no-acls",
        "no-anchored",
        "no-auto-compress",
        "no-check-device",
        "no-delay-directory-restore",
        "no-ignore-case",
        "no-ignore-command-error",
        "no-null",
        "no-overwrite-dir",
        "no-quote-chars=",
        "no-recursion",
        "no-same-owner",
        "no-same-permissions",
        "no-seek",
        "no-selinux",
        "no-unquote",
        "no-verbatim-files-from",
        "no-wildcards",
        "no-wildcards-match-slash",
        "no-xattrs",
        "null",
        "numeric-owner",
        "occurrence==",
        "old-archive",
        "one-file-system",
        "one-top-level==",
        "overwrite",
        "overwrite-dir",
        "owner-map=",
        "owner=",
        "pax-option=",
        "portability",
        "posix",
        "preserve-order",
        "preserve-permissions",
        "quote-chars=",
        "quoting-style=",
        "read-full-records",
        "record-size=",
        "recursion",
        "recursive-unlink",
        "remove-files",
        "restrict",
        "rmt-command=",
        "rsh-command=",
        "same-order",
        "same-owner",
        "same-permissions",
        "seek",
        "selinux",
        "show-defaults",
        "show-omitted-dirs",
        "show-snapshot-field-ranges",
        "show-stored-names",
        "show-transformed-names",
        "skip-old-files",
        "sort=",
        "sparse",
        "sparse-version=",
        "starting-file=",
        "strip-components=",
        "suffix=",
        "tape-length=",
        "test-label",
        "to-command=",
        "to-stdout",
        "totals==",
        "touch",
        "transform=",
        "uncompress",
        "ungzip",
        "unlink-first",
        "unquote",
        "update",
        "usage",
        "use-compress-program=",
        "utc",
        "verbatim-files-from",
        "verbose",
        "verify",
        "version",
        "volno-file=",
        "warning=",
        "wildcards",
        "wildcards-match-slash",
        "xattrs",
        "xattrs-exclude=",
        "xattrs-include=",
        "xform=",
        "xz",
        "zstd",
    ],
    abbreviate: true,
    permute: true,
    numeric: false,
};

/// GNU tar, old-style letters (`tar xIf prog a.tar`) included; `-f host:file` runs rsh/ssh.
fn tar(name: &str, args: &[&str]) -> Option<Verdict> {
    let mut words: Vec<String> = Vec::new();
    let mut rest = args;
    if let Some(first) = args
        .first()
        .filter(|f| !f.starts_with('-') && !f.is_empty())
    {
        // Traditional syntax: the letters of the first word, their values in the next words.
        rest = &args[1..];
        for c in first.chars() {
            words.push(format!("-{c}"));
            if TAR.short.contains(&format!("{c}:")) && !rest.is_empty() {
                words.push(rest[0].to_string());
                rest = &rest[1..];
            }
        }
    }
    words.extend(rest.iter().map(|s| s.to_string()));
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    const RUNS: &[&str] = &[
        "I",
        "F",
        "to-command",
        "checkpoint-action",
        "use-compress-program",
        "info-script",
        "new-volume-script",
        "rsh-command",
        "rmt-command",
    ];
    match parse(&TAR, &words) {
        Err(option) => Some(unknown(name, &option)),
        Ok(p) => {
            if let Some(o) = p.opts.iter().find(|o| RUNS.contains(&o.name.as_str())) {
                return code(runs_a_command(name, o));
            }
            // A multi-volume archive (`-M`, or `-L N`, which implies it) prompts for the next
            // volume on stdin (or /dev/tty), and the answer `!` starts `$SHELL -i`: commands
            // read from the line's own here-document.
            if let Some(o) = p
                .opts
                .iter()
                .find(|o| matches!(o.name.as_str(), "M" | "multi-volume" | "L" | "tape-length"))
            {
                return code(format!(
                    "`{name} {}` prompts for volumes on stdin, where `!` starts a shell that reads commands",
                    o.written
                ));
            }
            let local = p.opts.iter().any(|o| o.name == "force-local");
            p.opts
                .iter()
                .find(|o| {
                    !local
                        && matches!(o.name.as_str(), "f" | "file")
                        && o.value.as_deref().is_some_and(|v| v.contains(':'))
                })
                .and_then(|o| {
                    code(format!(
                        "`{name} {}` names a remote archive, which tar reaches by running rsh/ssh",
                        o.written
                    ))
                })
        }
    }
}

const SORT: Spec = Spec {
    short: "bcCdfghiMmnRrsuVzk:o:S:t:T:",
    long: &[
        "batch-size=",
        "buffer-size=",
        "check==",
        "compress-program=",
        "debug",
        "dictionary-order",
        "field-separator=",
        "files0-from=",
        "general-numeric-sort",
        "help",
        "human-numeric-sort",
        "ignore-case",
        "ignore-leading-blanks",
        "ignore-nonprinting",
        "key=",
        "merge",
        "month-sort",
        "numeric-sort",
        "output=",
        "parallel=",
        "random-sort",
        "random-source=",
        "reverse",
        "sort=",
        "stable",
        "temporary-directory=",
        "unique",
        "version",
        "version-sort",
        "zero-terminated",
    ],
    abbreviate: true,
    permute: true,
    numeric: false,
};

const MAKE: Spec = Spec {
    short: "bBdehikLmnpqrRsStvwC:E:f:I:o:W:j::l::O::",
    long: &[
        "always-make",
        "assume-new=",
        "assume-old=",
        "check-symlink-times",
        "debug==",
        "directory=",
        "dry-run",
        "environment-overrides",
        "eval=",
        "file=",
        "help",
        "ignore-errors",
        "include-dir=",
        "jobs==",
        "just-print",
        "keep-going",
        "load-average==",
        "makefile=",
        "max-load==",
        "new-file=",
        "no-builtin-rules",
        "no-builtin-variables",
        "no-keep-going",
        "no-print-directory",
        "no-silent",
        "old-file=",
        "output-sync==",
        "print-data-base",
        "print-directory",
        "question",
        "quiet",
        "recon",
        "silent",
        "stop",
        "touch",
        "trace",
        "version",
        "warn-undefined-variables",
        "what-if=",
    ],
    abbreviate: true,
    permute: true,
    numeric: false,
};

/// GNU make: `--eval`, and `NAME=VALUE` operands (they override what the recipes run, `SHELL`
/// included).
fn make(name: &str, args: &[&str]) -> Option<Verdict> {
    match parse(&MAKE, args) {
        Err(option) => Some(unknown(name, &option)),
        Ok(p) => {
            if let Some(o) = p.opts.iter().find(|o| o.name == "E" || o.name == "eval") {
                return code(runs_a_command(name, o));
            }
            // `-C DIR` (each one relative to the one before) runs make in DIR: a relative
            // makefile is opened there (`make -C /dev -f stdin`)
            let dir = p
                .opts
                .iter()
                .filter(|o| o.name == "C" || o.name == "directory")
                .filter_map(|o| o.value.as_deref())
                .fold(String::new(), |d, c| join(&d, c));
            if let Some(o) = p.opts.iter().find(|o| {
                matches!(o.name.as_str(), "f" | "file" | "makefile")
                    && o.value
                        .as_deref()
                        .is_some_and(|f| reads_stdin(&join(&dir, f)))
            }) {
                return code(format!(
                    "`{name} {}` reads its makefile from stdin or a device",
                    o.written
                ));
            }
            p.operands
                .iter()
                .map(|&i| args[i])
                .find(|a| a.contains('='))
                .and_then(|a| {
                    code(format!(
                        "`{name} {a}` sets a variable that can change what the recipes run"
                    ))
                })
        }
    }
}

/// The code-running options of a program whose other options are not read (rg, man): long
/// `names` (abbreviated when `abbreviate`), short `letters` anywhere in a cluster.
fn named(
    name: &str,
    args: &[&str],
    names: &[&str],
    letters: &str,
    abbreviate: bool,
) -> Option<Verdict> {
    args.iter()
        .take_while(|a| **a != "--")
        .find(|a| match a.strip_prefix("--") {
            Some(l) if abbreviate => prefix_of(l, names),
            Some(l) => names.contains(&l.split('=').next().unwrap_or(l)),
            None => a.starts_with('-') && a[1..].chars().any(|c| letters.contains(c)),
        })
        .and_then(|a| code(format!("`{name} {a}` runs a command")))
}

const NODE: Spec = Spec {
    short: "chivC:e:p:r:",
    long: &[
        "abort-on-uncaught-exception",
        "allow-addons",
        "allow-child-process",
        "allow-fs-read=",
        "allow-fs-write=",
        "allow-wasi",
        "allow-worker",
        "check",
        "conditions=",
        "cpu-prof",
        "cpu-prof-dir=",
        "cpu-prof-interval=",
        "cpu-prof-name=",
        "debug-port=",
        "diagnostic-dir=",
        "disable-proto=",
        "disable-warning=",
        "disable-wasm-trap-handler",
        "disallow-code-generation-from-strings",
        "dns-result-order=",
        "enable-source-maps",
        "env-file=",
        "env-file-if-exists=",
        "eval=",
        "experimental-default-type=",
        "experimental-detect-module",
        "experimental-loader=",
        "experimental-require-module",
        "experimental-strip-types",
        "experimental-test-coverage",
        "experimental-vm-modules",
        "experimental-wasm-modules",
        "expose-gc",
        "frozen-intrinsics",
        "heap-prof",
        "heap-prof-dir=",
        "heap-prof-interval=",
        "heap-prof-name=",
        "heapsnapshot-near-heap-limit=",
        "heapsnapshot-signal=",
        "help",
        "icu-data-dir=",
        "import=",
        "input-type=",
        "insecure-http-parser",
        "inspect==",
        "inspect-brk==",
        "inspect-port=",
        "inspect-wait==",
        "interactive",
        "jitless",
        "loader=",
        "max-http-header-size=",
        "max-old-space-size=",
        "max-semi-space-size=",
        "no-addons",
        "no-deprecation",
        "no-experimental-detect-module",
        "no-experimental-fetch",
        "no-experimental-require-module",
        "no-global-search-paths",
        "no-warnings",
        "openssl-config=",
        "pending-deprecation",
        "preserve-symlinks",
        "preserve-symlinks-main",
        "print=",
        "prof",
        "redirect-warnings=",
        "report-compact",
        "report-dir=",
        "report-directory=",
        "report-filename=",
        "report-on-fatalerror",
        "report-on-signal",
        "report-signal=",
        "report-uncaught-exception",
        "require=",
        "run=",
        "stack-size=",
        "stack-trace-limit=",
        "test",
        "test-concurrency=",
        "test-force-exit",
        "test-name-pattern=",
        "test-only",
        "test-reporter=",
        "test-reporter-destination=",
        "test-shard=",
        "test-skip-pattern=",
        "test-timeout=",
        "throw-deprecation",
        "title=",
        "trace-deprecation",
        "trace-exit",
        "trace-sync-io",
        "trace-uncaught",
        "trace-warnings",
        "unhandled-rejections=",
        "use-bundled-ca",
        "use-openssl-ca",
        "v8-pool-size=",
        "version",
        "watch",
        "watch-path=",
        "watch-preserve-output",
        "zero-fill-buffers",
        "experimental-config-file=",
        "experimental-default-config-file",
    ],
    abbreviate: false,
    permute: false,
    numeric: false,
};

/// The test reporters built into node (`--test-reporter=NAME`); any other value names a module.
const NODE_REPORTERS: &[&str] = &["spec", "tap", "dot", "junit", "lcov"];

/// Node: code given as an option (`-e`, `-p`, `--import data:...`, a `--test-reporter` module,
/// `--run`'s package.json script), options that load code or open a debugger (`--inspect*`, the
/// `inspect` subcommand), a program read from stdin.
fn node(name: &str, args: &[&str]) -> Option<Verdict> {
    let p = match parse(&NODE, args) {
        Err(option) => return Some(unknown(name, &option)),
        Ok(p) => p,
    };
    for o in &p.opts {
        let url = o.value.as_deref().is_some_and(|v| v.contains(':'));
        let runs = match o.name.as_str() {
            "e" | "eval" | "p" | "print" | "i" | "interactive" => true,
            "env-file"
            | "env-file-if-exists"
            | "openssl-config"
            | "experimental-config-file"
            | "experimental-default-config-file" => true,
            n if n.starts_with("inspect") || n == "debug-port" => true,
            // a preload is a program too: a URL, or a path read as the script operand is
            // (`-r /dev/stdin`, `-r dev/stdin` started in `/`)
            "import" | "loader" | "experimental-loader" | "r" | "require" => {
                url || o.value.as_deref().is_some_and(reads_stdin)
            }
            // a reporter is a module loaded by name, path or URL unless it is a built-in one
            "test-reporter" => !o
                .value
                .as_deref()
                .is_some_and(|v| NODE_REPORTERS.contains(&v)),
            "test-reporter-destination" => url,
            // `--run` runs a package.json script through a shell
            "run" => true,
            _ => false,
        };
        if runs {
            return code(runs_a_command(name, o));
        }
    }
    let ends = p.opts.iter().any(|o| {
        matches!(
            o.name.as_str(),
            "test" | "v" | "version" | "h" | "help" | "c" | "check"
        )
    });
    // `node --test FILE...` runs each file as a program
    if let Some(s) = p
        .opts
        .iter()
        .any(|o| o.name == "test")
        .then(|| p.operands.iter().map(|&i| args[i]).find(|s| reads_stdin(s)))
        .flatten()
    {
        return code(format!(
            "`{name} --test {s}` runs a program read from stdin or a device"
        ));
    }
    match p.operands.first().map(|&i| args[i]) {
        Some(s) if node_global_module(s) => code(format!(
            "`{name} {s}` runs a globally installed package's program (npm's `npm-cli.js`/`npx-cli.js` run commands given in their arguments); name that program in the allow list instead"
        )),
        Some(s) if reads_stdin(s) => code(format!(
            "`{name} {s}` reads its program from stdin or a device"
        )),
        Some(s @ ("inspect" | "debug")) if !ends => code(format!(
            "`{name} {s}` runs its script under a debugger that any local process can connect to"
        )),
        None if !ends => code(format!(
            "`{name}` without a script reads its program from stdin"
        )),
        _ => None,
    }
}

thread_local! {
    /// Set by [`judge`] for the program being judged: where a command before it changed the
    /// directory to (`Some(None)`: somewhere not known).
    static CWD_MOVED: std::cell::RefCell<Option<Option<String>>> = const { std::cell::RefCell::new(None) };
    /// Set by [`judge`]: how many components of that directory are the start directory as the
    /// host resolved it (no symlink in them; 0 after a `cd` or without a start).
    static CWD_REAL: std::cell::RefCell<usize> = const { std::cell::RefCell::new(0) };
}

/// `path` seen from `dir` (`""`: where the command starts): itself when absolute.
fn join(dir: &str, path: &str) -> String {
    if dir.is_empty() || path.starts_with('/') {
        path.to_string()
    } else {
        format!("{dir}/{path}")
    }
}

/// Where a script operand is opened: after a change of directory, the directory joined in front
/// of a relative path; `None` when that directory is not known.
fn opened_at(path: &str) -> Option<String> {
    match CWD_MOVED.with(|m| m.borrow().clone()) {
        Some(_) if path.starts_with('/') => Some(path.to_string()),
        Some(dir) => dir.map(|d| join(&d, path)),
        None => Some(path.to_string()),
    }
}

/// A script or makefile path that is stdin or a device (`-`, `/dev/stdin`, `/dev/fd/0`,
/// `/proc/self/fd/0`, anything under `/sys`), not a file, however it is spelled: repeated
/// slashes and `.` are dropped (`//dev/stdin`, `/dev/./stdin`). A relative path after a change
/// of directory is judged where it is opened, the directory joined in front (`cd /dev && make
/// -f stdin`, `cd /proc/self/fd && perl 0`), and is stdin-like when that directory is not known.
///
/// `..` is followed only out of the start directory (resolved by the host, no symlink in it, and
/// named by no `cd`): after any other name it lands where that name's symlink, if it is one,
/// points, which this analysis does not see (`/run/shm/../stdin` is `/dev/stdin`; `cd /run/shm &&
/// perl ../stdin`), so such a path is stdin-like. Above a start that is not known (no start
/// given), what follows the last `..` is judged (`../../dev/stdin`).
fn reads_stdin(path: &str) -> bool {
    if path == "-" {
        return true;
    }
    let Some(opened) = opened_at(path) else {
        return true;
    };
    // How many leading components of `opened` are the real start directory.
    let real = if path.starts_with('/') {
        0
    } else {
        CWD_REAL.with(|r| *r.borrow())
    };
    let mut names: Vec<(&str, bool)> = Vec::new();
    for (i, c) in opened
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .enumerate()
    {
        if c != ".." {
            names.push((c, i < real));
            continue;
        }
        match names.last() {
            None if opened.starts_with('/') => {} // `/..` is `/`
            None | Some(("..", _)) => names.push(("..", false)), // above a start not known
            Some((_, true)) => {
                names.pop(); // out of the real start directory
            }
            Some((_, false)) => return true, // after a name that may be a symlink
        }
    }
    let names: Vec<&str> = names.iter().map(|(c, _)| *c).collect();
    let device = |rest: &[&str]| matches!(rest.first(), Some(&"dev" | &"proc" | &"sys"));
    match names.iter().rposition(|c| *c == "..") {
        Some(last) => device(&names[last + 1..]),
        None => opened.starts_with('/') && device(&names),
    }
}

/// A python script path inside python's own library (`/usr/lib/python3.11/timeit.py`,
/// `/usr/local/lib/python3.12/...`, any `site-packages` or `dist-packages`), however it is
/// spelled (`.` and repeated slashes dropped, relative paths and `..` included): running it is
/// `python -m MODULE`, which is refused. Symlinks are not followed (no file-system access here):
/// a link the agent made is a file the agent wrote (docs/host-policy.md, limits).
fn python_library(path: &str) -> bool {
    let Some(path) = opened_at(path) else {
        return false; // a relative script in a directory not known: `reads_stdin` refuses it
    };
    let parts: Vec<&str> = path
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    parts
        .windows(2)
        .any(|w| w[0] == "lib" && (w[1].starts_with("python") || w[1].starts_with("pypy")))
        || parts
            .iter()
            .any(|c| matches!(*c, "site-packages" | "dist-packages"))
}

/// A node script path inside a global `lib/node_modules` or Debian's `share/nodejs` (npm's
/// `npm-cli.js`, `npx-cli.js`, corepack, yarn, pnpm: programs with their own grammars, which
/// `node SCRIPT` would bypass), or inside the `npm`/`npx`/`corepack` package wherever it is
/// installed, however it is spelled.
fn node_global_module(path: &str) -> bool {
    let Some(path) = opened_at(path) else {
        return false; // a relative script in a directory not known: `reads_stdin` refuses it
    };
    let parts: Vec<&str> = path
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    parts.windows(2).any(|w| {
        (w[0] == "lib" && w[1] == "node_modules")
            || (w[0] == "share" && w[1] == "nodejs")
            || (w[0] == "node_modules" && matches!(w[1], "npm" | "corepack" | "npx"))
    })
}

const PYTHON: Spec = Spec {
    short: "bBdEhiIOPqsSuvVxc:m:W:X:",
    long: &[
        "check-hash-based-pycs=",
        "help",
        "help-env",
        "help-xoptions",
        "help-all",
        "version",
    ],
    abbreviate: false,
    permute: false,
    numeric: false,
};

/// Python: `-c`, `-i` (a prompt on stdin), `-m` (a module: many run code given in their
/// arguments or stdin), a program read from stdin.
fn python(name: &str, args: &[&str]) -> Option<Verdict> {
    // `-c` and `-m` end the options: what follows is the program's.
    let end = args
        .iter()
        .position(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(['c', 'm']))
        .map_or(args.len(), |i| (i + 2).min(args.len()));
    let p = match parse(&PYTHON, &args[..end]) {
        Err(option) => return Some(unknown(name, &option)),
        Ok(p) => p,
    };
    if let Some(o) = p.opts.iter().find(|o| o.name == "c" || o.name == "i") {
        return code(format!(
            "`{name} {}` runs code given as an argument or on stdin",
            o.written
        ));
    }
    if let Some(o) = p.opts.iter().find(|o| o.name == "m") {
        return code(format!(
            "`{name} {}` runs a module, and what a module does with its arguments is not read (`timeit`, `cProfile`, `code`, `asyncio` run code given in them or on stdin)",
            o.written
        ));
    }
    let ends = p.opts.iter().any(|o| {
        o.name == "m"
            || o.name.starts_with("help")
            || o.name == "h"
            || o.name == "V"
            || o.name == "version"
    });
    match p.operands.first().map(|&i| args[i]) {
        Some(s) if !ends && python_library(s) => code(format!(
            "`{name} {s}` runs a module of python's own library as a script, the same as `-m` (`timeit.py`, `code.py`, `pdb.py` run code given in their arguments or on stdin)"
        )),
        Some(s) if !ends && reads_stdin(s) => code(format!(
            "`{name} {s}` reads its program from stdin or a device"
        )),
        None if !ends => code(format!(
            "`{name}` without a script reads its program from stdin"
        )),
        _ => None,
    }
}

const SSH: Spec = Spec {
    short: "346AaCfGgKkMNnqrsTtVvXxYyB:b:c:D:E:e:F:I:i:J:L:l:m:O:o:P:p:Q:R:S:W:w:",
    long: &[],
    abbreviate: false,
    permute: false,
    numeric: false,
};

/// ssh's `-o` keywords whose value is data: a port, a user, a timeout, a key file read, an
/// algorithm list, a yes/no. Every other keyword is refused: some run a local program
/// (`ProxyCommand`, `LocalCommand`, `KnownHostsCommand`, `XAuthLocation`, `Match exec`), load a
/// library (`PKCS11Provider`, `SecurityKeyProvider`), read another config (`Include`) or write a
/// file the agent names (`UserKnownHostsFile`, `ControlPath`), and ssh gains keywords with
/// every release.
const SSH_DATA_KEYS: &[&str] = &[
    "addressfamily",
    "batchmode",
    "ciphers",
    "compression",
    "connectionattempts",
    "connecttimeout",
    "hostkeyalgorithms",
    "identitiesonly",
    "identityfile",
    "kbdinteractiveauthentication",
    "kexalgorithms",
    "loglevel",
    "macs",
    "numberofpasswordprompts",
    "passwordauthentication",
    "port",
    "preferredauthentications",
    "pubkeyauthentication",
    "requesttty",
    "serveralivecountmax",
    "serveraliveinterval",
    "stricthostkeychecking",
    "tcpkeepalive",
    "user",
];

/// ssh `-o` keywords that run a program or load code.
const SSH_CODE_KEYS: &[&str] = &[
    "include",
    // OpenSSH reaches each jump host by a ProxyCommand it builds (`ssh -W` run through the
    // shell), with the value's options pasted in: a command line of the agent's
    "proxyjump",
    "knownhostscommand",
    "localcommand",
    "match",
    "permitlocalcommand",
    "pkcs11provider",
    "proxycommand",
    "securitykeyprovider",
    "xauthlocation",
];

/// ssh, scp: `-o` read with ssh's keyword table (only [`SSH_DATA_KEYS`] pass), a config file
/// (`-F`), a PKCS#11 library (`-I`), a jump host (`-J`, a ProxyCommand run through the shell), a
/// program run instead of ssh (`scp -S`).
///
/// ssh reads options again after the destination (ssh.c: `if (ac > 1 && !opt_terminated) goto
/// again`), up to the remote command, unless `--` came before the destination: those are read with
/// the same table. scp reads them only before its operands.
fn ssh(name: &str, args: &[&str]) -> Option<Verdict> {
    let p = match parse(&SSH, args) {
        Err(option) => return Some(unknown(name, &option)),
        Ok(p) => p,
    };
    let mut opts = p.opts;
    if let Some(&host) = p.operands.first() {
        let terminated = host > 0 && args[host - 1] == "--";
        if name == "ssh" && !terminated {
            match parse(&SSH, &args[host + 1..]) {
                Err(option) => return Some(unknown(name, &option)),
                Ok(again) => opts.extend(again.opts),
            }
        }
    }
    for o in &opts {
        match o.name.as_str() {
            "o" => {
                // ssh strips quotes around the keyword (`"ProxyCommand" x`) and reads it
                // case-insensitively.
                let v = o
                    .value
                    .as_deref()
                    .unwrap_or("")
                    .replace('"', "")
                    .trim_start()
                    .to_ascii_lowercase();
                let key = v
                    .split(|c: char| c == '=' || c.is_whitespace())
                    .next()
                    .unwrap_or("");
                if SSH_CODE_KEYS.contains(&key) {
                    return code(runs_a_command(name, o));
                }
                if !SSH_DATA_KEYS.contains(&key) {
                    return Some(Verdict::Unknown(format!(
                        "`{name} {}` (the ssh keyword `{key}` is not among those this analysis knows to be data)",
                        o.written
                    )));
                }
            }
            // `-J`: `-o ProxyJump`, which runs a ProxyCommand through the shell
            "F" | "I" | "J" => return code(runs_a_command(name, o)),
            "S" | "D" if name != "ssh" => return code(runs_a_command(name, o)),
            _ => {}
        }
    }
    None
}

/// Why an option that names another process (by pid, process group, user or name) is refused:
/// the sandbox's pid namespace contains such a program, an allow list alone does not.
fn other_process(name: &str, option: &str) -> Option<Verdict> {
    code(format!(
        "pid-option: `{name} {option}` acts on another process (by pid, group, user or name), which an allow list cannot confine; the sandbox's pid namespace does"
    ))
}

/// `kill` (procps, busybox's applet, bash's builtin): `kill [SIGNAL] [--] %JOB...` and the list
/// forms (`-l`, `-L`, `--list`, `--table` first) are the only ones allowed. Every other word is a
/// pid, a process group (`-PGID`; `-1` is every process the user may signal) or a name, read as
/// such whatever its spelling: procps reads `-1NNNN` as pid -1, so a dash word is a signal only
/// where every kill reads it as one (the first word, a signal number 0..=64 or a name).
fn kill(args: &[&str]) -> Option<Verdict> {
    if args.first().is_some_and(|a| {
        matches!(*a, "-l" | "-L" | "--list" | "--table") || a.starts_with("--list=")
    }) {
        return None;
    }
    let mut i = 0;
    match args.first().copied() {
        Some("-s" | "-n" | "--signal") if args.len() > 1 && is_signal(args[1]) => i = 2,
        Some(a) if a.strip_prefix("--signal=").is_some_and(is_signal) => i = 1,
        Some(a)
            if a.strip_prefix('-')
                .is_some_and(|s| s != "-" && is_signal(s)) =>
        {
            i = 1
        }
        _ => {}
    }
    if args.get(i) == Some(&"--") {
        i += 1;
    }
    let rest = &args[i..];
    match rest.iter().find(|a| !a.starts_with('%') || a.len() < 2) {
        Some(a) => other_process("kill", a),
        None if rest.is_empty() => other_process("kill", args.last().copied().unwrap_or("")),
        None => None,
    }
}

/// A signal as every kill reads it: a number 0..=64 without sign or leading zero, or a name
/// (`KILL`, `SIGKILL`, `RTMIN+1`).
fn is_signal(s: &str) -> bool {
    if s.bytes().all(|b| b.is_ascii_digit()) {
        return !s.is_empty()
            && (s == "0" || !s.starts_with('0'))
            && s.len() <= 2
            && s.parse::<u8>().is_ok_and(|n| n <= 64);
    }
    let name = s.strip_prefix("SIG").unwrap_or(s);
    !name.is_empty()
        && name.bytes().next().is_some_and(|b| b.is_ascii_uppercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'+' || b == b'-')
}

/// libcap's capsh: `--` and `-c` run bash, `==` runs capsh again, `--shell=`/`--justexec=` name
/// the program run; only the options listed here are data.
fn capsh(args: &[&str]) -> Option<Verdict> {
    const DATA: &[&str] = &[
        "--print",
        "--current",
        "--decode=",
        "--supports=",
        "--has-p=",
        "--has-i=",
        "--has-a=",
        "--has-b=",
        "--has-ambient",
        "--drop=",
        "--caps=",
        "--inh=",
        "--addamb=",
        "--delamb=",
        "--noamb",
        "--keep=",
        "--uid=",
        "--gid=",
        "--groups=",
        "--user=",
        "--secbits=",
        "--iab=",
        "--mode",
        "--mode=",
        "--no-new-privs",
        "--license",
        "--strict",
        "--quiet",
        "--explain=",
        "--help",
    ];
    for a in args {
        if matches!(*a, "--" | "-c" | "==")
            || a.starts_with("--shell=")
            || a.starts_with("--justexec=")
        {
            return code(format!("`capsh {a}` runs a program"));
        }
        let known = DATA.iter().any(|d| {
            if d.ends_with('=') {
                a.starts_with(d)
            } else {
                a == d
            }
        });
        if !known {
            return Some(unknown("capsh", a));
        }
    }
    None
}

/// GNU coreutils 9 split (`-NUM` is `--lines=NUM`).
const SPLIT: Spec = Spec {
    short: "a:b:C:del:n:t:ux",
    long: &[
        "additional-suffix=",
        "bytes=",
        "elide-empty-files",
        "filter=",
        "help",
        "hex-suffixes==",
        "line-bytes=",
        "lines=",
        "number=",
        "numeric-suffixes==",
        "separator=",
        "suffix-length=",
        "unbuffered",
        "verbose",
        "version",
    ],
    abbreviate: true,
    permute: true,
    numeric: true,
};

/// GNU coreutils 9 install (`-s` runs `strip`, found on PATH; `--strip-program` names it).
const INSTALL: Spec = Spec {
    short: "bcCdDg:m:o:pS:st:TvZ",
    long: &[
        "backup==",
        "compare",
        "context==",
        "debug",
        "directory",
        "group=",
        "help",
        "mode=",
        "no-target-directory",
        "owner=",
        "preserve-context",
        "preserve-timestamps",
        "strip",
        "strip-program=",
        "suffix=",
        "target-directory=",
        "verbose",
        "version",
    ],
    abbreviate: true,
    permute: true,
    numeric: false,
};

/// zip: `-TT cmd` / `--unzip-command` runs a command to test the archive.
fn zip(args: &[&str]) -> Option<Verdict> {
    args.iter()
        .find(|a| {
            (a.starts_with('-') && !a.starts_with("--") && a.contains("TT"))
                || a.strip_prefix("--")
                    .is_some_and(|l| l.len() >= 3 && prefix_of(l, &["unzip-command"]))
        })
        .and_then(|a| code(format!("`zip {a}` runs a command")))
}

/// GNU Wget 1.21 (`wget --help`; `getopt_long`, so long names abbreviate and short options
/// cluster; `-n` takes the letters of its `--no-` options: `-nv`, `-nc`, `-nH`).
const WGET: Spec = Spec {
    short: "46bcdhkmpqrvxEFHKLNSVa:e:i:l:n:o:t:w:A:B:D:I:O:P:Q:R:T:U:X:",
    long: &[
        "accept-regex=",
        "accept=",
        "adjust-extension",
        "append-output=",
        "ask-password",
        "auth-no-challenge",
        "background",
        "backup-converted",
        "backups=",
        "base=",
        "bind-address=",
        "body-data=",
        "body-file=",
        "ca-certificate=",
        "ca-directory=",
        "certificate-type=",
        "certificate=",
        "ciphers=",
        "compression=",
        "config=",
        "connect-timeout=",
        "content-disposition",
        "content-on-error",
        "continue",
        "convert-file-only",
        "convert-links",
        "crl-file=",
        "cut-dirs=",
        "debug",
        "default-page=",
        "delete-after",
        "directory-prefix=",
        "dns-timeout=",
        "domains=",
        "exclude-directories=",
        "exclude-domains=",
        "execute=",
        "follow-ftp",
        "follow-tags=",
        "force-directories",
        "force-html",
        "ftp-password=",
        "ftp-user=",
        "ftps-clear-data-connection",
        "ftps-fallback-to-ftp",
        "ftps-implicit",
        "ftps-resume-ssl",
        "header=",
        "help",
        "hsts-file=",
        "http-password=",
        "http-user=",
        "https-only",
        "ignore-case",
        "ignore-length",
        "ignore-tags=",
        "include-directories=",
        "inet4-only",
        "inet6-only",
        "input-file=",
        "keep-session-cookies",
        "level=",
        "limit-rate=",
        "load-cookies=",
        "local-encoding=",
        "max-redirect=",
        "method=",
        "mirror",
        "no-cache",
        "no-check-certificate",
        "no-clobber",
        "no-config",
        "no-cookies",
        "no-directories",
        "no-dns-cache",
        "no-glob",
        "no-host-directories",
        "no-hsts",
        "no-http-keep-alive",
        "no-if-modified-since",
        "no-iri",
        "no-netrc",
        "no-parent",
        "no-passive-ftp",
        "no-proxy",
        "no-remove-listing",
        "no-use-server-timestamps",
        "no-verbose",
        "no-warc-compression",
        "no-warc-digests",
        "no-warc-keep-log",
        "output-document=",
        "output-file=",
        "page-requisites",
        "password=",
        "pinnedpubkey=",
        "post-data=",
        "post-file=",
        "prefer-family=",
        "preserve-permissions",
        "private-key-type=",
        "private-key=",
        "progress=",
        "protocol-directories",
        "proxy-password=",
        "proxy-user=",
        "quiet",
        "quota=",
        "random-wait",
        "read-timeout=",
        "recursive",
        "referer=",
        "regex-type=",
        "reject-regex=",
        "reject=",
        "rejected-log=",
        "relative",
        "remote-encoding=",
        "report-speed=",
        "restrict-file-names=",
        "retr-symlinks",
        "retry-connrefused",
        "retry-on-http-error=",
        "save-cookies=",
        "save-headers",
        "secure-protocol=",
        "server-response",
        "show-progress",
        "span-hosts",
        "spider",
        "start-pos=",
        "strict-comments",
        "timeout=",
        "timestamping",
        "tries=",
        "trust-server-names",
        "unlink",
        "use-askpass=",
        "user-agent=",
        "user=",
        "verbose",
        "version",
        "wait=",
        "waitretry=",
        "warc-cdx",
        "warc-dedup=",
        "warc-file=",
        "warc-header=",
        "warc-max-size=",
        "warc-tempdir=",
        "xattr",
    ],
    abbreviate: true,
    permute: true,
    numeric: false,
};

/// The wgetrc commands `wget -e` may give (by wget's spelling rule: case, `-` and `_` ignored):
/// settings of data only. Any other command is not read (`unknown-option`); `use_askpass` runs
/// a program.
const WGETRC_DATA: &[&str] = &[
    "robots",
    "tries",
    "timeout",
    "wait",
    "waitretry",
    "verbose",
    "quiet",
    "maxredirect",
    "checkcertificate",
    "httpsonly",
    "noparent",
    "reclevel",
    "recursive",
    "useragent",
    "header",
    "progress",
    "dotstyle",
    "showprogress",
];

/// wget: `--use-askpass=CMD` and the wgetrc command `use_askpass` (`-e`) run a program, and
/// `--config=FILE` reads wgetrc commands from a file the agent may have written.
fn wget(args: &[&str]) -> Option<Verdict> {
    let p = match parse(&WGET, args) {
        Err(option) => return Some(unknown("wget", &option)),
        Ok(p) => p,
    };
    for o in &p.opts {
        match o.name.as_str() {
            "use-askpass" => return code(runs_a_command("wget", o)),
            "config" => {
                return code(format!(
                "`wget {}` reads wgetrc commands from a file (`use_askpass` in it runs a program)",
                o.written
            ))
            }
            "e" | "execute" => {
                let command = o.value.as_deref().unwrap_or_default();
                let name: String = command
                    .split('=')
                    .next()
                    .unwrap_or_default()
                    .chars()
                    .filter(|c| !matches!(c, '-' | '_') && !c.is_whitespace())
                    .flat_map(char::to_lowercase)
                    .collect();
                if name.contains("askpass") {
                    return code(format!(
                        "`wget {}` runs the wgetrc command `{command}`, which runs a program",
                        o.written
                    ));
                }
                if !WGETRC_DATA.contains(&name.as_str()) {
                    return Some(Verdict::Unknown(format!(
                        "`wget {}`: the wgetrc command `{command}`, which this analysis does not read",
                        o.written
                    )));
                }
            }
            _ => {}
        }
    }
    None
}

/// pnpm/yarn: `exec`/`x`/`dlx`, `-c`/`--call`, and config options that name a program.
fn npm(name: &str, args: &[&str]) -> Option<Verdict> {
    const RUNS: &[&str] = &[
        "call",
        "script-shell",
        "node-options",
        "shell",
        "editor",
        "browser",
        "userconfig",
        "globalconfig",
        "init-module",
        "git",
        "onload-script",
        "viewer",
    ];
    if let Some(o) = args.iter().find(|a| {
        *a == &"-c"
            || a.strip_prefix("--")
                .is_some_and(|l| prefix_of(l.strip_prefix("no-").unwrap_or(l), RUNS))
    }) {
        return code(format!(
            "`{name} {o}` runs a command or names a program to run"
        ));
    }
    let sub = args.iter().find(|a| !a.starts_with('-'))?;
    matches!(*sub, "exec" | "x" | "dlx").then(|| {
        Verdict::Code(format!(
            "`{name} {sub}` runs a package's code (fetched if missing)"
        ))
    })
}

/// npm's commands (lib/utils/cmd-list.js, npm 11).
const NPM_COMMANDS: &[&str] = &[
    "access",
    "adduser",
    "approve-scripts",
    "audit",
    "bugs",
    "cache",
    "ci",
    "completion",
    "config",
    "dedupe",
    "deny-scripts",
    "deprecate",
    "diff",
    "dist-tag",
    "docs",
    "doctor",
    "edit",
    "exec",
    "explain",
    "explore",
    "find-dupes",
    "fund",
    "get",
    "help",
    "help-search",
    "init",
    "install",
    "install-ci-test",
    "install-scripts",
    "install-test",
    "link",
    "ll",
    "login",
    "logout",
    "ls",
    "org",
    "outdated",
    "owner",
    "pack",
    "ping",
    "pkg",
    "prefix",
    "profile",
    "prune",
    "publish",
    "query",
    "rebuild",
    "repo",
    "restart",
    "root",
    "run",
    "sbom",
    "search",
    "set",
    "shrinkwrap",
    "stage",
    "star",
    "stars",
    "start",
    "stop",
    "team",
    "test",
    "token",
    "trust",
    "undeprecate",
    "uninstall",
    "unpublish",
    "unstar",
    "update",
    "version",
    "view",
    "whoami",
];

/// npm's command aliases (cmd-list.js): alias, command.
const NPM_ALIASES: &[(&str, &str)] = &[
    ("author", "owner"),
    ("home", "docs"),
    ("issues", "bugs"),
    ("info", "view"),
    ("show", "view"),
    ("find", "search"),
    ("add", "install"),
    ("unlink", "uninstall"),
    ("remove", "uninstall"),
    ("rm", "uninstall"),
    ("r", "uninstall"),
    ("un", "uninstall"),
    ("rb", "rebuild"),
    ("list", "ls"),
    ("ln", "link"),
    ("create", "init"),
    ("i", "install"),
    ("it", "install-test"),
    ("cit", "install-ci-test"),
    ("u", "update"),
    ("up", "update"),
    ("c", "config"),
    ("s", "search"),
    ("se", "search"),
    ("tst", "test"),
    ("t", "test"),
    ("ddp", "dedupe"),
    ("v", "view"),
    ("run-script", "run"),
    ("clean-install", "ci"),
    ("clean-install-test", "install-ci-test"),
    ("x", "exec"),
    ("why", "explain"),
    ("la", "ll"),
    ("verison", "version"),
    ("ic", "ci"),
    ("innit", "init"),
    ("in", "install"),
    ("ins", "install"),
    ("inst", "install"),
    ("insta", "install"),
    ("instal", "install"),
    ("isnt", "install"),
    ("isnta", "install"),
    ("isntal", "install"),
    ("isntall", "install"),
    ("install-clean", "ci"),
    ("isntall-clean", "ci"),
    ("hlep", "help"),
    ("dist-tags", "dist-tag"),
    ("upgrade", "update"),
    ("udpate", "update"),
    ("rum", "run"),
    ("sit", "install-ci-test"),
    ("urn", "run"),
    ("ogr", "org"),
    ("add-user", "adduser"),
];

/// The npm command `word` names, as npm's `deref` reads it: camelCase to kebab-case, a command, an
/// alias, or an unambiguous prefix of a command or alias (then through the aliases).
fn npm_command(word: &str) -> Option<&'static str> {
    let mut w = String::new();
    for c in word.chars() {
        if c.is_ascii_uppercase() {
            w.push('-');
            w.push(c.to_ascii_lowercase());
        } else {
            w.push(c);
        }
    }
    let alias = |a: &str| NPM_ALIASES.iter().find(|(k, _)| *k == a).map(|(_, c)| *c);
    if let Some(c) = NPM_COMMANDS.iter().find(|c| **c == w) {
        return Some(c);
    }
    if let Some(c) = alias(&w) {
        return Some(c);
    }
    if w.is_empty() {
        return None;
    }
    let mut names = NPM_COMMANDS
        .iter()
        .copied()
        .chain(NPM_ALIASES.iter().map(|(k, _)| *k))
        .filter(|n| n.starts_with(w.as_str()));
    let first = names.next()?;
    if names.next().is_some() {
        return None; // ambiguous: npm finds no command
    }
    let mut c = first;
    while let Some(next) = alias(c) {
        c = next;
    }
    Some(c)
}

/// npm options (nopt) that take a value, read in the next word when not attached with `=`.
const NPM_VALUED: &[&str] = &[
    "access",
    "auth-type",
    "before",
    "cache",
    "ca",
    "cafile",
    "cert",
    "cidr",
    "depth",
    "diff",
    "diff-dst-prefix",
    "diff-src-prefix",
    "diff-unified",
    "dist-tags",
    "fetch-retries",
    "fetch-retry-factor",
    "fetch-retry-maxtimeout",
    "fetch-retry-mintimeout",
    "fetch-timeout",
    "heading",
    "https-proxy",
    "include",
    "init-author-email",
    "init-author-name",
    "init-author-url",
    "init-license",
    "init-version",
    "install-strategy",
    "key",
    "local-address",
    "location",
    "lockfile-version",
    "logs-dir",
    "logs-max",
    "loglevel",
    "maxsockets",
    "noproxy",
    "omit",
    "otp",
    "pack-destination",
    "package",
    "preid",
    "prefix",
    "proxy",
    "registry",
    "replace-registry-host",
    "scope",
    "searchexclude",
    "searchlimit",
    "searchopts",
    "searchstaleness",
    "sbom-format",
    "sbom-type",
    "tag",
    "tag-version-prefix",
    "umask",
    "user-agent",
    "workspace",
    "cpu",
    "os",
    "libc",
    "expect-result-count",
    "min-release-age",
];

/// npm options that take no value (`--name`, `--no-name`, `--name=true`).
const NPM_FLAGS: &[&str] = &[
    "all",
    "audit",
    "bin-links",
    "color",
    "description",
    "dry-run",
    "engine-strict",
    "expect-results",
    "fix",
    "force",
    "foreground-scripts",
    "format-package-lock",
    "fund",
    "git-tag-version",
    "global",
    "global-style",
    "if-present",
    "ignore-scripts",
    "include-staged",
    "include-workspace-root",
    "install-links",
    "json",
    "legacy-bundling",
    "legacy-peer-deps",
    "link",
    "long",
    "offline",
    "package-lock",
    "package-lock-only",
    "parseable",
    "prefer-dedupe",
    "prefer-offline",
    "prefer-online",
    "production",
    "progress",
    "provenance",
    "quiet",
    "read-only",
    "rebuild-bundle",
    "save",
    "save-bundle",
    "save-dev",
    "save-exact",
    "save-optional",
    "save-peer",
    "save-prod",
    "silent",
    "sign-git-commit",
    "sign-git-tag",
    "strict-peer-deps",
    "strict-ssl",
    "timing",
    "unicode",
    "update-notifier",
    "usage",
    "verbose",
    "version",
    "versions",
    "workspaces",
    "yes",
    "no",
    "help",
    "dev",
    "audit-level",
    "commit-hooks",
    "loglevel-silent",
    "omit-lockfile-registry-resolved",
    "strict-allowed-scripts",
];

/// npm's shorthands: the letter word and whether it takes the next word.
const NPM_SHORT: &[(&str, bool)] = &[
    ("-g", false),
    ("-q", false),
    ("-s", false),
    ("-d", false),
    ("-dd", false),
    ("-ddd", false),
    ("-l", false),
    ("-p", false),
    ("-y", false),
    ("-f", false),
    ("-v", false),
    ("-h", false),
    ("-H", false),
    ("-?", false),
    ("-S", false),
    ("-D", false),
    ("-O", false),
    ("-E", false),
    ("-B", false),
    ("-P", false),
    ("-ws", false),
    ("-iwr", false),
    ("-C", true),
    ("-w", true),
    ("-L", true),
];

/// npm, read the way npm reads its command line (nopt, cmd-list.js): options anywhere before
/// `--`, each known exactly (a valued one takes the next word unless attached with `=`; an
/// abbreviation or an option this table lacks is unknown, since what it swallows is not known);
/// the first other word is the command, resolved through npm's aliases and prefixes (`exe` is
/// `exec`). Refused: options naming a program or config file, `exec`, `explore` (runs a command
/// or `$SHELL` in a package), `edit` (runs the editor), `init <initializer>` (runs a fetched
/// `create-*` package), config writes (`config set|delete|edit|fix`, `set`: keys name the editor,
/// shells, git, the browser, init-module, ... and `--location` picks the file), an unknown command.
fn npm_cli(args: &[&str]) -> Option<Verdict> {
    const RUNS: &[&str] = &[
        "call",
        "script-shell",
        "node-options",
        "shell",
        "editor",
        "browser",
        "userconfig",
        "globalconfig",
        "init-module",
        "git",
        "onload-script",
        "viewer",
        "node-gyp",
        "npm-command",
    ];
    let refuse = |why: String| Some(Verdict::Code(why));
    let mut positional: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        i += 1;
        if a == "--" {
            positional.extend(&args[i..]);
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            let bare = name.strip_prefix("no-").unwrap_or(name);
            let known = NPM_VALUED.contains(&name) || NPM_FLAGS.contains(&bare);
            if RUNS.contains(&bare) || (!known && (prefix_of(bare, RUNS) || prefix_of(name, RUNS)))
            {
                return refuse(format!(
                    "`npm {a}` runs a command or names a program to run"
                ));
            }
            if !known {
                return Some(unknown("npm", &format!("`{a}`")));
            }
            if NPM_VALUED.contains(&name) && !attached {
                i += 1;
            }
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            let short = a.split('=').next().unwrap_or(a);
            if short == "-c" {
                return refuse(format!("`npm {a}` runs a command"));
            }
            match NPM_SHORT.iter().find(|(s, _)| *s == short) {
                Some((_, true)) if !a.contains('=') => i += 1,
                Some(_) => {}
                None => return Some(unknown("npm", &format!("`{a}`"))),
            }
            continue;
        }
        positional.push(a);
    }
    let &word = positional.first()?;
    let Some(command) = npm_command(word) else {
        return Some(Verdict::Unknown(format!(
            "`npm {word}`, which is not a command this analysis knows"
        )));
    };
    let sub = positional.get(1).copied().unwrap_or("");
    let why = match command {
        "exec" => "runs a package's code (fetched if missing)",
        "explore" => "runs a command, or $SHELL, in a package's directory",
        "edit" => "runs the configured editor (vi by default, which runs `:!cmd`)",
        "init" if positional.len() > 1 => "runs an initializer package (`create-*`, fetched if missing)",
        "set" => "writes npm's configuration, whose keys name the programs npm runs (editor, shell, git, ...)",
        "config" if !matches!(sub, "" | "get" | "list" | "ls") => {
            "writes npm's configuration, whose keys name the programs npm runs (editor, shell, git, ...)"
        }
        _ => return None,
    };
    refuse(format!("`npm {word}` ({command}) {why}"))
}

const GIT: Spec = Spec {
    short: "C:c:pPhv",
    long: &[
        "exec-path==",
        "html-path",
        "man-path",
        "info-path",
        "paginate",
        "no-pager",
        "no-replace-objects",
        "no-lazy-fetch",
        "no-optional-locks",
        "no-advice",
        "bare",
        "git-dir=",
        "work-tree=",
        "namespace=",
        "super-prefix=",
        "config-env=",
        "literal-pathspecs",
        "glob-pathspecs",
        "noglob-pathspecs",
        "icase-pathspecs",
        "list-cmds=",
        "attr-source=",
        "version",
        "help",
    ],
    abbreviate: false,
    permute: false,
    numeric: false,
};

/// git's subcommands, and for each the options that run a command (long names are matched
/// with git's abbreviations, short ones anywhere in a cluster).
const GIT_SUBCOMMANDS: &[(&str, &[&str], &str)] = &[
    ("add", &[], ""),
    ("am", &[], ""),
    ("apply", &[], ""),
    ("archive", &["exec", "remote"], ""),
    ("bisect", &[], ""),
    ("blame", &[], ""),
    ("branch", &[], ""),
    ("bundle", &[], ""),
    ("cat-file", &[], ""),
    ("check-ignore", &[], ""),
    ("checkout", &[], ""),
    ("cherry", &[], ""),
    ("cherry-pick", &[], ""),
    ("clean", &[], ""),
    ("clone", &["upload-pack", "template", "config"], "uc"),
    ("commit", &[], ""),
    ("config", &[], ""),
    ("count-objects", &[], ""),
    ("describe", &[], ""),
    ("diff", &["ext-diff"], ""),
    ("diff-files", &["ext-diff"], ""),
    ("diff-index", &["ext-diff"], ""),
    ("diff-tree", &["ext-diff"], ""),
    ("difftool", &["extcmd", "tool"], "xt"),
    ("fetch", &["upload-pack"], ""),
    ("for-each-ref", &[], ""),
    ("format-patch", &[], ""),
    ("fsck", &[], ""),
    ("gc", &[], ""),
    ("grep", &["open-files-in-pager"], "O"),
    ("help", &[], ""),
    ("init", &["template"], ""),
    ("log", &["ext-diff"], ""),
    ("ls-files", &[], ""),
    ("ls-remote", &["upload-pack", "exec"], ""),
    ("ls-tree", &[], ""),
    ("merge", &[], ""),
    ("merge-base", &[], ""),
    ("mv", &[], ""),
    ("name-rev", &[], ""),
    ("notes", &[], ""),
    ("pull", &["upload-pack"], ""),
    ("push", &["receive-pack", "exec"], ""),
    ("range-diff", &[], ""),
    ("rebase", &["exec"], "x"),
    ("reflog", &[], ""),
    ("remote", &[], ""),
    ("reset", &[], ""),
    ("restore", &[], ""),
    ("rev-list", &[], ""),
    ("rev-parse", &[], ""),
    ("revert", &[], ""),
    ("rm", &[], ""),
    ("shortlog", &[], ""),
    ("show", &["ext-diff"], ""),
    ("show-ref", &[], ""),
    ("sparse-checkout", &[], ""),
    ("stash", &[], ""),
    ("status", &[], ""),
    ("submodule", &[], ""),
    ("switch", &[], ""),
    ("symbolic-ref", &[], ""),
    ("tag", &[], ""),
    ("version", &[], ""),
    ("whatchanged", &["ext-diff"], ""),
    ("worktree", &[], ""),
    ("var", &[], ""),
];

/// git: global options (`-c`, `--config-env`, `--exec-path=`), the subcommand (an unknown one may
/// be an alias, which can run any command), and its code-running options and forms
/// (`submodule foreach`, `bisect run`, `config` writes).
fn git(args: &[&str]) -> Option<Verdict> {
    let p = match parse(&GIT, args) {
        Err(option) => return Some(unknown("git", &option)),
        Ok(p) => p,
    };
    if let Some(o) = p.opts.iter().find(|o| {
        o.name == "c" || o.name == "config-env" || o.name == "exec-path" && o.value.is_some()
    }) {
        return code(format!(
            "`git {}` sets configuration or a program directory that can name commands to run",
            o.written
        ));
    }
    let first = *p.operands.first()?;
    let sub = args[first];
    let rest = &args[first + 1..];
    let Some((_, long, short)) = GIT_SUBCOMMANDS.iter().find(|(s, _, _)| *s == sub) else {
        return code(format!("`git {sub}` is not a git command this analysis knows: it may be an alias, which can run any command"));
    };
    for a in rest.iter().take_while(|a| **a != "--") {
        let runs = match a.strip_prefix("--") {
            Some(l) => prefix_of(l, long),
            None => a.starts_with('-') && a[1..].chars().any(|c| short.contains(c)),
        };
        if runs {
            return code(format!("`git {sub} {a}` runs a command"));
        }
    }
    let runs = match sub {
        // The diff/merge tool is chosen from configuration the agent can write
        // (`difftool.NAME.cmd`), or guessed among installed ones (vimdiff, which reads `:!cmd`
        // from the line's stdin): a command nothing checked.
        "difftool" => true,
        "submodule" => rest.contains(&"foreach"),
        "bisect" => rest.contains(&"run"),
        "config" => !rest.iter().any(|a| {
            matches!(
                *a,
                "--get" | "--get-all" | "--get-regexp" | "--list" | "-l" | "get" | "list"
            )
        }),
        _ => false,
    };
    runs.then(|| {
        Verdict::Code(format!(
            "`git {sub}` with these arguments runs or configures commands"
        ))
    })
}

const SED: Spec = Spec {
    short: "nrsEuzl:i::e:f:",
    long: &[
        "quiet",
        "silent",
        "debug",
        "expression=",
        "file=",
        "in-place==",
        "line-length=",
        "null-data",
        "zero-terminated",
        "posix",
        "regexp-extended",
        "separate",
        "sandbox",
        "unbuffered",
        "follow-symlinks",
        "binary",
        "help",
        "version",
    ],
    abbreviate: true,
    permute: true,
    numeric: false,
};

/// GNU sed's `e` command and `s///e` flag run the pattern space as a command; `-f` reads the
/// script from a file. `--sandbox` turns them off.
fn sed(name: &str, args: &[&str]) -> Option<Verdict> {
    let p = match parse(&SED, args) {
        Err(option) => return Some(unknown(name, &option)),
        Ok(p) => p,
    };
    if p.opts.iter().any(|o| o.name == "sandbox") {
        return None;
    }
    if let Some(o) = p.opts.iter().find(|o| o.name == "f" || o.name == "file") {
        return code(format!(
            "`{name} {}` reads its script from a file",
            o.written
        ));
    }
    let mut scripts: Vec<&str> = p
        .opts
        .iter()
        .filter(|o| o.name == "e" || o.name == "expression")
        .filter_map(|o| o.value.as_deref())
        .collect();
    if scripts.is_empty() {
        scripts.extend(p.operands.first().map(|&i| args[i]));
    }
    scripts.iter().any(|s| sed_script_executes(s)).then(|| {
        Verdict::Code(format!(
            "the `{name}` script uses the `e` command or the `s///e` flag, which run commands"
        ))
    })
}

/// An awk program calling `system()`, a pipe (`"cmd" | getline`, `print | "cmd"`) or loading an
/// extension; or a program read from a file (`-f`, gawk's `--file`/`--include`/`--load`/`--exec`
/// and their abbreviations).
fn awk(name: &str, args: &[&str]) -> Option<Verdict> {
    let mut programs: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if a == "--" {
            i += 1;
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            if prefix_of(long, &["file", "exec", "include", "load"]) {
                return code(format!("`{name} {a}` reads its program from a file"));
            }
            if prefix_of(long, &["source"]) {
                let value = long.split_once('=').map(|(_, v)| v);
                programs.push(value.unwrap_or_else(|| args.get(i + 1).copied().unwrap_or("")));
                i += usize::from(value.is_none());
            } else if !long.contains('=') && prefix_of(long, &["assign", "field-separator"]) {
                i += 1;
            }
            i += 1;
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            let c = a[1..].chars().next().unwrap_or('-');
            if "fEil".contains(c) {
                return code(format!("`{name} {a}` reads its program from a file"));
            }
            if c == 'e' {
                programs.push(if a.len() > 2 {
                    &a[2..]
                } else {
                    args.get(i + 1).copied().unwrap_or("")
                });
                i += usize::from(a.len() == 2);
            } else if c == 'W' {
                // `-W exec FILE` (mawk; also abbreviated, `-We`) and gawk's `-W file=...`: a
                // program read from a file. Only the options known to read nothing are let by.
                let value = if a.len() > 2 {
                    &a[2..]
                } else {
                    i += 1;
                    args.get(i).copied().unwrap_or("")
                };
                let key = value.split(['=', ' ']).next().unwrap_or("");
                const QUIET: &[&str] = &[
                    "version",
                    "dump",
                    "help",
                    "usage",
                    "posix_space",
                    "posix",
                    "lint",
                    "traditional",
                    "compat",
                    "sprintf",
                    "random",
                    "interactive",
                ];
                if !QUIET.contains(&key) {
                    return Some(unknown(name, &format!("`-W {value}`")));
                }
            } else if matches!(a, "-v" | "-F") {
                i += 1;
            }
            i += 1;
            continue;
        }
        break;
    }
    if programs.is_empty() {
        programs.extend(args.get(i).copied());
    }
    programs.iter().find_map(|program| {
        ["system", "|", "@load", "@include"]
            .iter()
            .find(|p| program.contains(*p))
            .map(|p| {
                Verdict::Code(format!(
                    "the `{name}` program uses `{p}`, which runs commands or loads code"
                ))
            })
    })
}

/// True when a sed script holds an `e` command or an `s` command with the `e` flag, under any of
/// the readings seds differ on: GNU sed takes a delimiter inside a bracket expression (`/[/]/`) as
/// literal, busybox and older seds end the regex there; a backslash inside brackets escapes or is
/// literal. A script that runs a command under one reading is refused.
fn sed_script_executes(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    [None, Some(false), Some(true)]
        .into_iter()
        .any(|brackets| sed_reading_executes(&chars, brackets))
}

/// The index just past the regex that starts at `i` and ends at `delim`. `brackets`: `None` when
/// bracket expressions are not read, else whether a backslash escapes inside them.
fn sed_regex_end(chars: &[char], mut i: usize, delim: char, brackets: Option<bool>) -> usize {
    while i < chars.len() && chars[i] != delim {
        match chars[i] {
            '\\' => i += 2,
            '[' if brackets.is_some() => {
                i += 1;
                if chars.get(i) == Some(&'^') {
                    i += 1;
                }
                if chars.get(i) == Some(&']') {
                    i += 1; // a leading `]` is a member
                }
                while i < chars.len() && chars[i] != ']' {
                    match (chars[i], chars.get(i + 1)) {
                        ('[', Some(&k @ (':' | '.' | '='))) => {
                            // `[:alpha:]`, `[.x.]`, `[=x=]`: up to the closing `k]`
                            i += 2;
                            while i < chars.len()
                                && !(chars[i] == k && chars.get(i + 1) == Some(&']'))
                            {
                                i += 1;
                            }
                            i += 2;
                        }
                        ('\\', _) if brackets == Some(true) => i += 2,
                        _ => i += 1,
                    }
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    i + 1
}

/// One reading of a sed script (see [`sed_script_executes`]).
fn sed_reading_executes(chars: &[char], brackets: Option<bool>) -> bool {
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            ';' | '\n' | ' ' | '\t' | '!' | '{' | '}' => i += 1,
            '0'..='9' | '$' | ',' | '~' | '+' => i += 1,
            '/' | '\\' => {
                // an address /re/ or \cREc
                let delim = if c == '\\' {
                    chars.get(i + 1).copied().unwrap_or('/')
                } else {
                    '/'
                };
                i = sed_regex_end(chars, i + if c == '\\' { 2 } else { 1 }, delim, brackets);
                while i < chars.len() && matches!(chars[i], 'I' | 'M') {
                    i += 1;
                }
            }
            'e' => return true,
            's' | 'y' => {
                let Some(&delim) = chars.get(i + 1) else {
                    return false;
                };
                // the regex (brackets read for `s`), then the replacement or the second set
                i = sed_regex_end(chars, i + 2, delim, brackets.filter(|_| c == 's'));
                i = sed_regex_end(chars, i, delim, None);
                if c == 's' {
                    while i < chars.len() && !matches!(chars[i], ';' | '\n' | '}') {
                        if chars[i] == 'e' {
                            return true;
                        }
                        if chars[i] == 'w' {
                            break; // the rest is a file name
                        }
                        i += 1;
                    }
                }
            }
            'a' | 'i' | 'c' | 'r' | 'R' | 'w' | 'W' | 'b' | 't' | 'T' | ':' | 'q' | 'Q' | 'l'
            | 'L' => {
                // the rest of the line is text or a file name; a label (GNU sed: also `:`'s) or a
                // number ends at `;` too
                while i < chars.len()
                    && chars[i] != '\n'
                    && !(matches!(c, 'b' | 't' | 'T' | ':' | 'q' | 'Q' | 'l' | 'L')
                        && chars[i] == ';')
                {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    false
}

/// perl, with its own switch table (perlrun, perl.c `parse_body`/`moreswitches`): switches
/// cluster (`-lne`); `-e`/`-E` (code, refused) and `-I` take the next word when nothing is
/// attached; `-0`, `-l` take attached digits; `-C`, `-D`, `-F`, `-i`, `-I`, `-m`, `-M`, `-V`,
/// `-x`, `-d` take the rest of the word and never the next one. Code-running switches: `-e`, `-E`,
/// `-d` (the debugger runs commands read from stdin; `-d:Mod` loads a module), `-M`/`-m` unless a
/// plain module name with a plain import list, `-F` whose pattern perl pastes into code (starting
/// with `/`, `'` or `"`); a letter perl does not know is unknown.
fn perl(args: &[&str]) -> Option<Verdict> {
    let refuse = |why: &str| code(format!("`perl {why}` runs code given as an argument"));
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if a == "-" {
            return code("`perl -` reads its program from stdin".into());
        }
        if a == "--" {
            i += 1;
            break;
        }
        let Some(cluster) = a.strip_prefix('-').filter(|c| !c.is_empty()) else {
            if reads_stdin(a) {
                return code(format!(
                    "`perl {a}` reads its program from stdin or a device"
                ));
            }
            return None; // the script
        };
        let chars: Vec<char> = cluster.chars().collect();
        let mut j = 0;
        while j < chars.len() {
            let c = chars[j];
            let rest: String = chars[j + 1..].iter().collect();
            match c {
                'a' | 'c' | 'f' | 'h' | 'n' | 'p' | 's' | 'S' | 't' | 'T' | 'u' | 'U' | 'v'
                | 'w' | 'W' | 'X' => j += 1,
                'e' | 'E' => return refuse(a),
                'd' => {
                    return code(format!(
                        "`perl {a}` starts the debugger (commands read from stdin) or loads a Devel:: module"
                    ))
                }
                '0' | 'l' => {
                    j += 1;
                    let hex = c == '0' && matches!(chars.get(j), Some('x' | 'X'));
                    if hex {
                        j += 1;
                    }
                    while chars
                        .get(j)
                        .is_some_and(|d| if hex { d.is_ascii_hexdigit() } else { d.is_digit(8) })
                    {
                        j += 1;
                    }
                }
                'I' => {
                    if rest.is_empty() {
                        i += 1; // the directory is the next word
                    }
                    break;
                }
                'M' | 'm' => {
                    let m = rest.strip_prefix('-').unwrap_or(&rest);
                    let (module, imports) = m.split_once('=').unwrap_or((m, ""));
                    let plain = |s: &str, extra: &str| {
                        s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || extra.contains(c))
                    };
                    if module.is_empty()
                        || module.starts_with(|c: char| c.is_ascii_digit())
                        || !plain(module, ":")
                        || !plain(imports, ",:")
                    {
                        return refuse(a);
                    }
                    break;
                }
                'F' => {
                    if rest.starts_with(['/', '\'', '"']) {
                        return refuse(a);
                    }
                    break;
                }
                'V' => {
                    if !rest.is_empty()
                        && !rest.strip_prefix(':').is_some_and(|v| {
                            v.chars().all(|c| c.is_ascii_alphanumeric() || "_.*".contains(c))
                        })
                    {
                        return Some(unknown("perl", &format!("`{a}`")));
                    }
                    break;
                }
                'C' | 'D' | 'i' | 'x' => break,
                _ => return Some(unknown("perl", &format!("`{a}` (the switch `-{c}`)"))),
            }
        }
        i += 1;
    }
    match args.get(i) {
        None => code("`perl` without a script reads its program from stdin".into()),
        Some(a) if *a == "-" || reads_stdin(a) => code(format!(
            "`perl {a}` reads its program from stdin or a device"
        )),
        Some(_) => None,
    }
}

/// Long options of interpreters that load a module before the script (`--require`, bun's
/// `--preload`, ...): their value is judged as the script operand is.
const PRELOADS: &[&str] = &[
    "require",
    "import",
    "loader",
    "experimental-loader",
    "preload",
];

fn preload(name: &str, option: &str, value: &str) -> String {
    format!("`{name} {option} {value}` loads a module read from stdin or a device")
}

/// `-c`/`-e`-style options (also in a cluster such as `perl -ne`), `--eval`, or a program read
/// from stdin (no script argument, or `-`); a preload (`-r`, `--require`, ...) read from stdin or a
/// device.
fn interpreter(name: &str, args: &[&str], code: &str) -> Option<String> {
    // Options of common interpreters that take the next word as their value.
    const VALUED: &[&str] = &[
        "-m",
        "-W",
        "-X",
        "-Q",
        "-r",
        "--require",
        "--import",
        "--loader",
        "-C",
        "--conditions",
        "--input-type",
        "-I",
        "-M",
        "-x",
        "-d",
        "-F",
        "-E",
        "--cwd",
    ];
    // Where the script and preloads are opened: ruby's `-C DIR`/`-X DIR` and bun's `--cwd DIR`
    // change the directory first (`ruby -C /dev stdin`), each relative to the one before.
    let mut dir = String::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if a == "-" {
            return Some(format!("`{name} -` reads its program from stdin"));
        }
        if a == "--" {
            i += 1;
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            if ["eval", "print", "command", "exec"]
                .iter()
                .any(|o| long == *o || long.starts_with(&format!("{o}=")))
            {
                return Some(format!("`{name} {a}` runs code given as an argument"));
            }
            let (option, attached) = long.split_once('=').unwrap_or((long, ""));
            let value = if attached.is_empty() && VALUED.contains(&a) {
                i += 1;
                args.get(i).copied().unwrap_or("")
            } else {
                attached
            };
            if option == "cwd" {
                dir = join(&dir, value);
            }
            if PRELOADS.contains(&option) && reads_stdin(&join(&dir, value)) {
                return Some(preload(name, a, value));
            }
            i += 1;
            continue;
        }
        if let Some(cluster) = a.strip_prefix('-').filter(|c| !c.is_empty()) {
            if let Some(c) = cluster.chars().find(|c| code.contains(*c)) {
                return Some(format!("`{name} -{c}` runs code given as an argument"));
            }
            // `-rLIB` / `-r LIB` (ruby, irb, bun): a library loaded before the script
            let value = if VALUED.contains(&a) {
                i += 1;
                args.get(i).copied().unwrap_or("")
            } else {
                cluster.get(1..).unwrap_or("")
            };
            if matches!(name, "ruby" | "irb") && cluster.starts_with(['C', 'X']) {
                dir = join(&dir, value);
            }
            if cluster.starts_with('r') && reads_stdin(&join(&dir, value)) {
                return Some(preload(name, a, value));
            }
            i += 1;
            continue;
        }
        if (name == "deno" || name == "bun") && matches!(a, "eval" | "x" | "repl") {
            return Some(format!("`{name} {a}` runs code given as an argument"));
        }
        if reads_stdin(&join(&dir, a)) {
            return Some(format!(
                "`{name} {a}` reads its program from stdin or a device"
            ));
        }
        return None; // a script file
    }
    if i >= args.len() {
        return Some(format!(
            "`{name}` without a script reads its program from stdin"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::analyse_line;

    /// `code`, `unknown` or `-`: the verdict on the first program of `line`.
    fn verdict(line: &str) -> &'static str {
        let a = analyse_line(line);
        let p = &a.programs[0];
        match (&p.runs_code, &p.unknown_option) {
            (Some(_), _) => "code",
            (None, Some(_)) => "unknown",
            _ => "-",
        }
    }

    /// A script operand is judged where it is opened: after a change of directory (`cd`,
    /// `pushd`, `env -C`, `make -C`) a relative one is not the request's cwd's file; a script of
    /// python's own library is `-m`, one of a global node package is that package's program.
    #[test]
    fn script_operands_are_judged_where_they_land() {
        let last = |line: &str| {
            let a = analyse_line(line);
            a.programs.last().and_then(|p| p.runs_code.clone())
        };
        for line in [
            "make -C /dev -f stdin",
            "make --directory=/dev --file=stdin",
            "make -C/dev -fstdin",
            "make -f stdin -C /dev",
            "cd /dev && make -f stdin",
            "env -C /dev make -f stdin",
            "env --chdir=/dev make -f stdin",
            "cd /dev && python3 stdin",
            "pushd /dev; python3 stdin",
            "cd /dev; tclsh stdin",
            "cd /dev && node --preserve-symlinks-main stdin",
            "cd /proc/self/fd && perl 0",
            "cd /proc/self/fd && node 0",
            "cd /usr/lib/python3.11 && python3 timeit.py 1",
            "cd /usr/lib/node_modules/npm/bin && node npx-cli.js -c id",
            "cd /tmp && cd /dev && python3 x.py",
            "cd /dev || cd /tmp; python3 stdin",
            "cd /dev; popd; python3 x.py",
            "cd - && python3 x.py",
            "find . -execdir python3 x.py ';'",
            "make -C /proc -C self/fd -f 0",
            "cd /dev && make -C . -f stdin",
            "cd / && make -C dev -f stdin",
            "perl /sys/kernel/x",
            "python3 ../../sys/x",
            "python3 /usr/lib/python3.11/timeit.py 1",
            "python3 //usr/lib/./python3.11/code.py",
            "python3 /usr/lib/python3.11/pdb.py x.py",
            "python3 ../../usr/lib/python3.11/timeit.py 1",
            "python3 /usr/local/lib/python3.12/x.py",
            "python3 /usr/lib/python3/dist-packages/pip/__main__.py",
            "python3 -u /usr/lib/python3.11/timeit.py",
            "node /usr/lib/node_modules/npm/bin/npx-cli.js -c id",
            "node /usr/lib/node_modules/npm/bin/npm-cli.js exec -c id",
            "node /usr/local/lib/node_modules/corepack/dist/corepack.js",
            "node ../../usr/lib/node_modules/npm/bin/npm-cli.js",
            "node /usr/share/nodejs/npm/bin/npm-cli.js",
            "node x/node_modules/npm/bin/npm-cli.js",
        ] {
            assert!(last(line).is_some(), "{line}");
        }
        for line in [
            "make -f Makefile",
            "make -C sub",
            "make -C /tmp/x -f /tmp/x/Makefile",
            "cd x && make -f /tmp/Makefile",
            "cd x && python3 /tmp/y.py",
            "python3 script.py",
            "python3 tools/x.py",
            "node x.js",
            "node node_modules/jest/bin/jest.js",
            "perl 0",
            "make -f stdin",
            "cd app && python3 manage.py test",
            "cd app && make -f Makefile",
            "make -C sub -f Makefile",
            "env -C sub python3 x.py",
            "cd /tmp/w && node x.js",
            "cd x && ruby ./y.rb",
        ] {
            assert_eq!(last(line), None, "{line}");
        }
    }

    #[test]
    fn code_runners_are_flagged() {
        for line in [
            "awk 'BEGIN{system(\"rm x\")}'",
            "gawk '{print | \"sh\"}' f",
            "awk -f prog.awk",
            "gawk --fi=prog.awk",
            "python3 -c 'import os'",
            "python3 -Bc 'import os'",
            "python3",
            "python3 - < x.py",
            "perl -ne 'print' f",
            "node -e 1",
            "node --eval=1",
            "ruby -e 1",
            "git -c core.fsmonitor='rm x' status",
            "git --config-env=core.pager=X log",
            "git lg",
            "git config core.fsmonitor x",
            "git submodule foreach rm",
            "npx cowsay",
            "npm exec -- cowsay",
            "pnpm dlx cowsay",
            "find . -exec rm {} +",
            "xargs rm",
            "env -S 'rm x'",
            "sed 's/x/rm y/e' f",
            "sed -n '1e rm x' f",
            "sed -e p -e 'e rm x' f",
            "sed --expr='e rm x' f",
            "tar --to-command='rm x' -xf a.tar",
            "rsync -e 'rm x' a b",
        ] {
            assert_eq!(verdict(line), "code", "{line}");
        }
        for line in [
            "awk '{print $1}' f",
            "sed -n 's/a/b/gp' f",
            "sed '/x/d;s/e/E/g' f",
            "python3 script.py -c x",
            "node build.js",
            "node --test",
            "perl script.pl",
            "git status",
            "git -C dir log --oneline",
            "git config --get user.name",
            "npm test",
            "npm run build",
            "find . -name '*.o'",
            "tar -xf a.tar",
            "tar xzf a.tgz -C out",
            "sort -k2 -n -o out f",
            "make -j4 -C dir test",
            "rg -n foo src",
            "ssh -p 22 host ls",
        ] {
            assert_eq!(verdict(line), "-", "{line}");
        }
    }

    #[test]
    fn options_that_run_code_are_read_with_the_programs_grammar() {
        for line in [
            "git ls-remote --upload-pack='rm x' .",
            "git fetch --upload-p='rm x' .",
            "git clone -u 'rm x' . y",
            "git clone --template=t . y",
            "git archive --exec='rm x' --remote=. HEAD",
            "git grep -O'rm x' foo",
            "git grep -iO foo",
            "git push --receive-pack=x .",
            "git rebase -x 'rm x' HEAD~1",
            "tar --to-com='rm x' -xf a.tar",
            "tar -xf a.tar --checkpoint=1 --checkpoint-act=exec='rm x'",
            "tar --use-comp='rm x' -xf a.tar",
            "tar -xI 'rm x' -f a.tar",
            "tar -xIrm -f a.tar",
            "tar xIf 'rm x' a.tar",
            "tar -xf host:a.tar",
            "node --import 'data:text/javascript,1' x.js",
            "node --inspect x.js",
            "node --env-file=.env x.js",
            "make --eval='x:;rm y' x",
            "make --ev='x:;rm y' x",
            "make SHELL=/tmp/x",
            "sort --compress-program=sh f",
            "sort --compress=sh f",
            "rg --pre 'rm x' foo",
            "ssh -o ProxyCommand='rm x' host",
            "ssh -oproxycommand=x host",
            "ssh -F cfg host",
            "scp -S ./x a host:b",
            "zip -T -TT 'rm x' a.zip f",
            "zip --unzip-command 'rm x' a.zip f",
            "man -P 'rm x' ls",
            "man --pag='rm x' ls",
            "npm test --script-shell=./x",
            "npm test --script-sh=./x",
            "vim -c ':!rm x'",
            "less f",
        ] {
            assert_eq!(verdict(line), "code", "{line}");
        }
    }

    #[test]
    fn the_third_attacks_runner_gaps_are_flagged() {
        for line in [
            "setpriv --reuid=0 sh -c x",
            "unshare -r sh",
            "prlimit --nofile=1 sh",
            "setarch x86_64 sh",
            "nsenter -t 1 sh",
            "fakeroot sh",
            "valgrind sh",
            "perf record sh",
            "ssh-agent sh",
            "script -c x /dev/null",
            "sg root -c x",
            "run-parts .",
            "gdb -ex '!id'",
            "sqlite3 x .shell",
            "/lib64/ld-linux-x86-64.so.2 --library-path /tmp/x /bin/ls",
            "/lib64/ld-linux-x86-64.so.2 --argv0 sh /bin/busybox",
            "perl /dev/stdin",
            "perl -w /proc/self/fd/0",
            "python3 /dev/fd/0",
            "node /dev/stdin",
            "make -f -",
            "make --file=/dev/stdin",
            "make --makef=-",
            "ssh -o '\"ProxyCommand\" sh' h",
            "ssh -o '\"proxycommand\"=sh' h",
        ] {
            assert_eq!(verdict(line), "code", "{line}");
        }
        for line in [
            "mawk -W exec f",
            "mawk -Wexec f",
            "mawk -W e f",
            "gawk -W file=f",
        ] {
            assert_eq!(verdict(line), "unknown", "{line}");
        }
        for line in [
            "mawk -W version",
            "make -f Makefile",
            "perl x.pl /dev/stdin",
        ] {
            assert_eq!(verdict(line), "-", "{line}");
        }
    }

    #[test]
    fn the_fourth_attacks_runner_gaps_are_flagged() {
        for line in [
            // GNU sed ends a `:` label at `;`
            "sed -n ':a;e rm x' f",
            "sed -n ':a;s/.*/rm x/e' f",
            // a delimiter inside a bracket expression is literal (GNU sed)
            "sed -n '/[/]/e rm x' f",
            "sed -n '\\,[,],e rm x' f",
            "sed -n '/[[:alpha:]/]/e rm x' f",
            "sed -n '/[]/]/e rm x' f",
            "sed -n 's/[/]/rm x/e' f",
            // a module runs code given in its arguments or on stdin
            "python3 -m timeit 1",
            "python3 -m timeit -s 'import os' pass",
            "python3 -m cProfile -m timeit 1",
            "python3 -Im timeit 1",
            "python3 -m code",
            "python3 -m asyncio",
            "python3 -m pytest",
            // node: reporter modules, package.json scripts, the inspector subcommand
            "node --test-reporter=data:text/javascript,1 --test",
            "node --test-reporter=DATA:text/javascript,1 --test",
            "node --test-reporter ./r.mjs --test",
            "node --test-reporter=some-package --test",
            "node --test-reporter=spec --test-reporter-destination=data:x --test",
            "node --run build",
            "node inspect x.js",
            "node debug x.js",
            // stdin and devices however the path is spelled
            "python3 //dev/stdin",
            "python3 /dev//stdin",
            "python3 //proc/self/fd/0",
            "python3 /proc//self/fd/0",
            "perl /./dev/stdin",
            "perl /tmp/../dev/stdin",
            "perl ../../../../dev/stdin",
            "perl x/../../proc/self/fd/0",
            "node //dev/stdin",
            "make -f //dev/stdin",
            "make --file=//proc/self/fd/0",
            // man-db's config names the programs man runs
            "man -C man.conf ls",
            "man -aC man.conf ls",
            "man --config-file=man.conf ls",
            "man --conf man.conf ls",
            // wget runs a program to ask for a password, also named by a wgetrc command
            "wget -e use_askpass=./x http://127.0.0.1/",
            "wget -qe use_askpass=./x http://127.0.0.1/",
            "wget -eUSE-ASKPASS=./x http://127.0.0.1/",
            "wget --execute=use_askpass=./x http://127.0.0.1/",
            "wget --exe 'useaskpass = ./x' http://127.0.0.1/",
            "wget --use-askpass=./x http://127.0.0.1/",
            "wget --use-ask ./x http://127.0.0.1/",
            "wget http://127.0.0.1/ --use-askpass=./x",
            "wget --config=rc http://127.0.0.1/",
            "wget --conf rc http://127.0.0.1/",
        ] {
            assert_eq!(verdict(line), "code", "{line}");
        }
        for line in [
            "sed -n ':a;p' f",
            "sed -n '/[/]/p' f",
            "sed -n 's/[/]/x/gp' f",
            "sed '/[e]/d' f",
            "node --test-reporter=spec --test",
            "node --test-reporter=tap --test-reporter-destination=out.txt --test",
            "node x.js inspect",
            "python3 x.py -m timeit",
            "perl ./dev/x.pl",
            "perl ../lib/x.pl",
            "perl dev/stdin",
            "make -f ../Makefile",
            "man -Tutf8 ls",
            "wget -q -O out.html http://127.0.0.1/",
            "wget -nv -e robots=off -r -np http://127.0.0.1/",
            "wget --no-config -i - -P dir",
        ] {
            assert_eq!(verdict(line), "-", "{line}");
        }
    }

    #[test]
    fn the_fifth_attacks_option_gaps_are_flagged() {
        for line in [
            // x15: an ssh keyword not known to be data
            "ssh -X -oXAuthLocation=./evil -p 22222 127.0.0.1 true",
            "ssh -o 'XAuthLocation ./evil' h",
            "ssh -o KnownHostsCommand=./e h",
            "ssh -o LocalCommand=./e -o PermitLocalCommand=yes h",
            "ssh -o 'Match exec ./e' h",
            "ssh -o Include=./cfg h",
            "ssh -o PKCS11Provider=./p.so h",
            "ssh -o SecurityKeyProvider=./p.so h",
            "scp -o ProxyCommand=./e a h:b",
            "ssh -F ./cfg h",
            // x27: sftp reads commands (`!cmd`) from stdin or a batch file
            "sftp h",
            "sftp -b /dev/stdin h",
            "sftp -b f h",
            // x17/x18 and the rest of the class: another process, by pid or name
            "strace -p 1 -e inject=all:signal=KILL",
            "ltrace -p 1",
            "chrt -i -p 0 1",
            "chrt --pid 0 1",
            "taskset -p 1 1",
            "taskset -cp 0 1",
            "ionice -c 3 -p 1",
            "ionice -P 1",
            "renice -n 5 -p 1",
            "kill 1",
            "kill -9 1",
            "kill -s KILL -- 1",
            "pkill sleep",
            "killall sleep",
            "prlimit --pid 1 --nofile=1",
            "gdb -p 1",
            // round 4's leftovers: code through options of exact-name programs
            "split --filter='sh -c x' f",
            "split --fil=x f",
            "install --strip-program=./e -s a b",
            "install -s a b",
            "install --strip a b",
            "sdiff --diff-program=./e a b",
            "sdiff --diff-p=./e a b",
            "sdiff -o out a b",
            "diff3 --diff-program=./e a b c",
            "capsh -- -c x",
            "capsh --caps= -- -c x",
            "capsh == -c x",
            "capsh --shell=./e --",
            "start-stop-daemon --start --exec ./e",
            "start-stop-daemon -S --startas ./e",
        ] {
            assert_eq!(verdict(line), "code", "{line}");
        }
        for line in [
            "ssh -o Foo=bar h",
            "ssh -o UserKnownHostsFile=./x h",
            "ssh -o ControlPath=./x h",
            "split --nope f",
            "install --nope a b",
            "capsh --forkfor=1",
        ] {
            assert_eq!(verdict(line), "unknown", "{line}");
        }
        for line in [
            "ssh -o Port=22 -o BatchMode=yes -o 'ConnectTimeout 5' -oStrictHostKeyChecking=no h ls",
            "ssh -X h true",
            "scp -o User=u a h:b",
            "split -l 10 f p",
            "split -1000 f",
            "install -m 644 -D a b",
            "sdiff a b",
            "diff3 a b c",
            "capsh --print",
            "capsh --has-p=cap_chown",
            "kill -l",
            "kill %1",
            "chrt -f 10 ls",
            "taskset -c 0 ls",
            "ionice -c 3 ls",
            "strace -f ls",
        ] {
            assert_eq!(verdict(line), "-", "{line}");
        }
    }

    #[test]
    fn options_a_grammar_does_not_list_are_unknown() {
        for line in [
            "tar --nope -xf a.tar",
            "tar -xq a.tar",
            "sort --nope f",
            "make --nope",
            "node --nope x.js",
            "python3 -Z x.py",
            "git --nope status",
            "sed --nope p f",
            "ssh -Z host",
            "tar --c=x",
            "wget --nope http://127.0.0.1/",
            "wget -Z http://127.0.0.1/",
            "wget -e logfile=x http://127.0.0.1/",
            "wget -e output_document=x http://127.0.0.1/",
            "wget --no http://127.0.0.1/",
        ] {
            assert_eq!(verdict(line), "unknown", "{line}");
        }
    }

    /// r6-01, r6-06, r6-07: interactive helpers that read commands from the line's own stdin.
    #[test]
    fn helpers_that_read_commands_from_stdin_are_code() {
        for line in [
            "perl -d s.pl",
            "perl -dt s.pl",
            "perl -d -w s.pl",
            "perl -w -d s.pl",
            "perl -wd s.pl",
            "perl -ld s.pl",
            "perl -l012d s.pl",
            "perl -d:Trace s.pl",
            "perl -I lib -d s.pl",
            "tar -cM -L 10 -f v.tar big",
            "tar -c --multi-volume -f v.tar big",
            "tar -c --multi -f v.tar big",
            "tar --tape-length=10 -cf v.tar big",
            "tar cMf v.tar big",
            "tar -cvL10 -f v.tar big",
            "git difftool -y HEAD",
            "git -C . difftool HEAD",
            "git mergetool",
        ] {
            assert_eq!(verdict(line), "code", "{line}");
        }
        for line in [
            "perl -w s.pl",
            "perl -Mdiagnostics s.pl",
            "perl -i.d s.pl",
            "perl -I dir s.pl",
            "tar -cf v.tar big",
            "tar -tvf v.tar",
            "git diff HEAD",
            "git commit -m x",
        ] {
            assert_eq!(verdict(line), "-", "{line}");
        }
    }

    /// Round 6, class D: runner grammars read the way the programs read them.
    #[test]
    fn runner_grammars_read_like_the_programs() {
        for line in [
            // npm: explore, abbreviations and aliases of exec, an option value hiding the command
            "npm explore dep -- touch v",
            "npm exe -- touch v",
            "npm x touch",
            "npm --loglevel silent exec -- touch v",
            "npm -w a exec -- touch v",
            "npm execu -- touch v",
            "npm edit dep",
            "npm config set editor '/usr/bin/touch v'",
            "npm config --location=project set editor x",
            "npm c set shell x",
            "npm set git x",
            "npm config edit",
            "npm init dep",
            "npm --editor=x edit dep",
            "npm --script-shell x run t",
            // ssh: options after the destination
            "ssh -o BatchMode=yes 127.0.0.1 -o 'ProxyCommand=id > v'",
            "ssh host -oProxyCommand=id",
            "ssh host -F cfg uptime",
            // perl: -W/-X/-C/-F do not take the next word
            "perl -W -e 'system 1'",
            "perl -X -e 1",
            "perl -C -e 1",
            "perl -F -e 1",
            "perl -w -E 1",
            "perl -lne 1 f",
            "perl -d s.pl",
            "perl -dt s.pl",
            "perl '-Mstrict;system(1)' s.pl",
            "perl '-F/;system(1);/' s.pl",
            "perl -I dir",
            // kill: negative pids, every spelling
            "kill -9 -123",
            "kill -s KILL -1",
            "kill -KILL -- -1",
            "kill -- -1",
            "kill -9 -- -1",
            "kill -18830",
            "kill -0 -18830",
            "kill -9 -1",
            "kill -1",
            "kill -9 123",
            "kill 123",
            "kill -TERM %1 -1",
            "busybox kill -9 -123",
            "/usr/bin/kill -9 -1",
        ] {
            let a = analyse_line(line);
            assert!(
                a.programs
                    .iter()
                    .any(|p| p.runs_code.is_some() || p.unknown_option.is_some()),
                "{line}"
            );
        }
        for line in [
            "npm test",
            "npm run build --if-present",
            "npm --loglevel silent test",
            "npm install --save-dev foo",
            "npm -g ls",
            "npm --global ls",
            "npm ci --no-audit",
            "npm config get editor",
            "npm config list",
            "npm t",
            "npm init -y",
            "ssh -o BatchMode=yes host uptime",
            "ssh host ls -o x",
            "ssh -- host -o ProxyCommand=x",
            "perl -W s.pl",
            "perl -pi.bak s.pl f",
            "perl -pie s.pl",
            "perl -Mstrict -MList::Util=sum,max s.pl",
            "perl -Fx -an s.pl",
            "perl -0777 -ln s.pl",
            "perl -I lib s.pl",
            "perl -I -e s.pl",
            "kill %1",
            "kill -9 %1",
            "kill -s TERM %1 %2",
            "kill -l",
            "kill -l 9",
        ] {
            assert_eq!(verdict(line), "-", "{line}");
        }
    }

    /// r7b-01: `..` after a name lands where that name's symlink points (`/run/shm/../stdin` is
    /// `/dev/stdin`): followed only out of the start directory the host resolved.
    #[test]
    fn a_climb_after_a_name_that_may_be_a_symlink_is_not_known() {
        use super::super::analyse_line_in;
        let runs = |line: &str, cwd: &str| {
            analyse_line_in(line, Some(cwd))
                .programs
                .iter()
                .any(|p| p.runs_code.is_some())
        };
        // `/run/shm` is a symlink to `/dev/shm` on Debian: `..` after it is `/dev`.
        for (line, cwd) in [
            ("perl /run/shm/../stdin", "/work"),
            ("python3 /run/shm/../stdin", "/work"),
            ("make -f /run/shm/../stdin", "/work"),
            ("make -C /run/shm/.. -f stdin", "/work"),
            ("cd /run/shm/.. && perl stdin", "/work"),
            ("cd /run/shm && perl ../stdin", "/work"),
            ("perl shm/../stdin", "/run"),
            ("perl x/../../dev/stdin", "/work"),
            ("cd sub && perl ../x.pl", "/work"),
            ("node -r /run/shm/../stdin app.js", "/work"),
        ] {
            assert!(runs(line, cwd), "{line} in {cwd}");
        }
        // Out of the start directory (resolved by the host), `..` is followed.
        for (line, cwd) in [
            ("perl ../x.pl", "/work/project"),
            ("python3 ../../tools/x.py", "/work/project/sub"),
            ("make -f ../Makefile", "/work/project"),
            ("perl ../stdin", "/work/project"),
        ] {
            assert!(!runs(line, cwd), "{line} in {cwd}");
        }
        assert!(
            runs("perl ../stdin", "/dev/shm"),
            "out of /dev/shm into /dev"
        );
        assert!(runs("perl ../../dev/stdin", "/work/x"));
    }

    /// r7-07: every relative path operand is judged as the absolute path it names in the
    /// directory the command starts in (the request's cwd, the host's, a session's), not as the
    /// relative text: `perl dev/stdin` started in `/` reads the line's here-document.
    #[test]
    fn relative_operands_are_judged_in_the_directory_the_command_starts_in() {
        use super::super::{analyse_argv_in, analyse_line_in};
        let runs = |line: &str, cwd: Option<&str>| {
            let a = analyse_line_in(line, cwd);
            a.programs.iter().any(|p| p.runs_code.is_some())
        };
        for (line, cwd) in [
            ("perl dev/stdin", Some("/")),
            ("make -f dev/stdin", Some("/")),
            ("make --file=dev/stdin all", Some("/")),
            ("make -C dev -f stdin", Some("/")),
            ("python3 dev/stdin", Some("/")),
            ("node proc/self/fd/0", Some("/")),
            ("node --preserve-symlinks -r dev/stdin app.js", Some("/")),
            ("perl stdin", Some("/dev")),
            ("perl 0", Some("/proc/self/fd")),
            ("cd sub && perl stdin", Some("/dev")),
            ("env -C self/fd perl 0", Some("/proc")),
            ("python3 timeit.py 1", Some("/usr/lib/python3.11")),
            (
                "node npx-cli.js -c id",
                Some("/usr/lib/node_modules/npm/bin"),
            ),
            ("bash -c 'perl dev/stdin'", Some("/")),
            // a start that is not known: every relative operand is refused
            ("perl x.pl", None),
            ("perl x.pl", Some("relative/dir")),
        ] {
            assert!(runs(line, cwd), "{line} in {cwd:?}");
        }
        let argv: Vec<String> = ["perl", "dev/stdin"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(analyse_argv_in(&argv, Some("/")).programs[0]
            .runs_code
            .is_some());
        assert!(analyse_argv_in(&argv, Some("/work")).programs[0]
            .runs_code
            .is_none());
        for (line, cwd) in [
            ("perl dev/stdin", Some("/work")),
            ("make -f Makefile", Some("/")),
            ("python3 script.py", Some("/work/app")),
            ("node -r ./setup.js app.js", Some("/work")),
            ("cd /work && perl dev/stdin", Some("/")),
            ("perl /work/x.pl", None),
        ] {
            assert!(!runs(line, cwd), "{line} in {cwd:?}");
        }
    }

    /// r7-08: a preload (`node -r`, `--import`, `--loader`, ruby's `-r`, bun's `--preload`) is a
    /// program too: judged as the script operand is.
    #[test]
    fn preload_paths_are_judged_as_the_script_operand_is() {
        for line in [
            "node --preserve-symlinks -r /dev/stdin app.js",
            "node -r /proc/self/fd/0 app.js",
            "node -r/dev/stdin app.js",
            "node --require=/dev/stdin app.js",
            "node --require //dev/stdin app.js",
            "node --import /dev/stdin app.js",
            "node --import=/proc/self/fd/0 app.js",
            "node --loader /dev/stdin app.js",
            "node --experimental-loader ../../dev/stdin app.js",
            "node --test /dev/stdin",
            "ruby -r /dev/stdin x.rb",
            "ruby -r/dev/fd/0 x.rb",
            "ruby --require=/dev/stdin x.rb",
            "bun --preload=/dev/stdin x.js",
            "bun --preload /dev/stdin x.js",
            "php -d auto_prepend_file=/dev/stdin x.php",
            "php -c /dev/stdin x.php",
            "php -z /proc/self/fd/0 x.php",
            // a change of directory before the script is opened
            "ruby -C /dev stdin",
            "ruby -C/proc -X self/fd 0",
            "ruby -X /dev -r stdin x.rb",
            "bun --cwd /dev stdin",
            "bun --cwd=/proc/self/fd 0",
        ] {
            assert_eq!(verdict(line), "code", "{line}");
        }
        for line in [
            "node -r ./setup.js app.js",
            "node --require=dotenv/config app.js",
            "node --import ./register.mjs app.js",
            "node --test test/a.test.js",
            "ruby -r json x.rb",
            "bun --preload ./setup.ts x.js",
            "ruby -C sub x.rb",
            "bun --cwd app index.ts",
        ] {
            assert_eq!(verdict(line), "-", "{line}");
        }
    }

    /// r7 (ssh -J): OpenSSH reaches a jump host through a ProxyCommand it builds and runs with the
    /// shell, the value's text pasted in: `-J` and `-o ProxyJump` are code, in every spelling.
    #[test]
    fn ssh_jump_hosts_are_code() {
        for line in [
            "ssh -J x 127.0.0.1",
            "ssh -J 'x -oProxyCommand=touch' 127.0.0.1",
            "ssh -Jx 127.0.0.1",
            "ssh -AJ x 127.0.0.1",
            "ssh 127.0.0.1 -J x",
            "ssh -oProxyJump=x 127.0.0.1",
            "ssh -o 'ProxyJump x' 127.0.0.1",
            "ssh -o PROXYJUMP=x 127.0.0.1",
            "ssh -o '\"proxyjump\"=x' 127.0.0.1",
            "scp -J x a 127.0.0.1:b",
            "scp -o ProxyJump=x a 127.0.0.1:b",
            "scp -3J x a 127.0.0.1:b",
        ] {
            assert_eq!(verdict(line), "code", "{line}");
        }
        assert_eq!(verdict("ssh -p 22 127.0.0.1 true"), "-");
        assert_eq!(verdict("scp a 127.0.0.1:b"), "-");
    }
}
