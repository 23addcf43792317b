//! Which programs the analysis understands, and by which grammar. A program is understood when
//! it is a plain program of [`PLAIN`] (none of its options or operands makes it run another
//! program, load code or read commands, so its arguments need no reading), a wrapper of
//! `wrappers.rs`, a program of the code-runner table (`runners.rs`), a shell, or `find`. An allow
//! list's broad rules (a glob, a directory, a RegExp) admit only understood programs; anything
//! else must be named exactly. Data and pure functions only.
//!
//! Invariant: [`grammar`] names the reading a program's arguments get; two names with the same
//! grammar are read alike, so a program that runs under another name than the word checked
//! (`rvim` whose real path is `vim`) is refused unless both names have the same grammar.

use super::runners::in_table;
use super::wrappers::{is_ld_so, wrapper, SHELLS};

/// Plain programs: whatever their options and operands, they do not run another program, load
/// code or read commands (GNU coreutils, grep, diff, the compressors, ...). Programs with one
/// option that does (`split --filter`, `install --strip-program`, `diff3 --diff-program`,
/// `sdiff`) are read by the code-runner table, `logsave` is a wrapper; `patch` (ed scripts) and
/// `dc` (`!`) are not understood; `wget` is read by the code-runner table (`--use-askpass`,
/// `-e use_askpass=`).
pub const PLAIN: &[&str] = &[
    "[",
    "arch",
    "b2sum",
    "base32",
    "base64",
    "basename",
    "basenc",
    "bc",
    "bunzip2",
    "bzcat",
    "bzip2",
    "cal",
    "cat",
    "chgrp",
    "chmod",
    "chown",
    "cksum",
    "cmp",
    "column",
    "comm",
    "cp",
    "csplit",
    "cut",
    "date",
    "dd",
    "df",
    "diff",
    "dir",
    "dirname",
    "du",
    "echo",
    "egrep",
    "expand",
    "expr",
    "factor",
    "false",
    "fgrep",
    "file",
    "fmt",
    "fold",
    "free",
    "getconf",
    "grep",
    "groups",
    "gunzip",
    "gzip",
    "head",
    "hexdump",
    "id",
    "join",
    "jq",
    "link",
    "ln",
    "locale",
    "ls",
    "md5sum",
    "mkdir",
    "mkfifo",
    "mktemp",
    "mv",
    "nl",
    "nproc",
    "numfmt",
    "od",
    "paste",
    "pr",
    "printenv",
    "printf",
    "ps",
    "ptx",
    "pwd",
    "readlink",
    "realpath",
    "rev",
    "rm",
    "rmdir",
    "seq",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "shred",
    "shuf",
    "sleep",
    "stat",
    "strings",
    "sum",
    "sync",
    "tac",
    "tail",
    "tee",
    "test",
    "touch",
    "tr",
    "tree",
    "true",
    "truncate",
    "tsort",
    "tty",
    "uname",
    "unexpand",
    "uniq",
    "unlink",
    "unxz",
    "unzip",
    "unzstd",
    "uptime",
    "vdir",
    "wc",
    "which",
    "whoami",
    "xxd",
    "xz",
    "xzcat",
    "yes",
    "zcat",
    "zstd",
    "zstdcat",
];

/// The grammar `name`'s arguments are read with, `None` for a program the analysis does not
/// understand. A name with a suffix after a dot that is not itself known (`vim.basic`,
/// `python3.12`) is read as the name before the dot.
pub fn grammar(name: &str) -> Option<&'static str> {
    known(name).or_else(|| name.split_once('.').and_then(|(stem, _)| known(stem)))
}

fn known(name: &str) -> Option<&'static str> {
    if PLAIN.binary_search(&name).is_ok() {
        return Some("plain");
    }
    if SHELLS.contains(&name) {
        return Some(if name == "busybox" {
            "busybox"
        } else {
            "shell"
        });
    }
    if is_ld_so(name) {
        return Some("ld.so");
    }
    if in_table(name) || wrapper(name).is_some() || name == "find" {
        return Some(family(name));
    }
    None
}

/// Names read by the same grammar share a family (`awk`/`mawk`/`gawk`, `python3`/`python3.12`).
fn family(name: &str) -> &'static str {
    match name {
        "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => "awk",
        "sed" | "gsed" => "sed",
        "tar" | "gtar" => "tar",
        "make" | "gmake" => "make",
        "node" | "nodejs" => "node",
        "ssh" | "scp" => "ssh",
        "npm" | "pnpm" | "yarn" => "npm",
        "su" | "runuser" => "su",
        "strace" | "ltrace" => "strace",
        "less" | "more" | "most" | "vi" | "vim" | "nvim" | "view" | "vimdiff" | "ex" | "ed"
        | "emacs" | "nano" => "editor",
        _ if name.starts_with("python") || name.starts_with("pypy") => "python",
        // Every other program of the tables has a grammar of its own: its name.
        _ => leak(name),
    }
}

/// The name as a `'static` grammar id (the tables' names are few and fixed).
fn leak(name: &str) -> &'static str {
    const IDS: &[&str] = &[
        "env",
        "command",
        "builtin",
        "nohup",
        "unbuffer",
        "caffeinate",
        "exec",
        "nice",
        "timeout",
        "xargs",
        "stdbuf",
        "setsid",
        "time",
        "ionice",
        "chrt",
        "taskset",
        "sudo",
        "doas",
        "chroot",
        "flock",
        "watch",
        "find",
        "git",
        "sort",
        "rg",
        "zip",
        "wget",
        "man",
        "npx",
        "bunx",
        "pnpx",
        "rsync",
        "perl",
        "bun",
        "deno",
        "php",
        "ruby",
        "irb",
        "lua",
        "luajit",
        "Rscript",
        "tclsh",
        "wish",
        "osascript",
        "kill",
        "pkill",
        "killall",
        "skill",
        "snice",
        "renice",
        "split",
        "install",
        "sdiff",
        "diff3",
        "capsh",
        "start-stop-daemon",
        "logsave",
        "sftp",
    ];
    IDS.iter()
        .find(|id| **id == name)
        .copied()
        .unwrap_or("launcher")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plain_table_is_sorted_and_names_no_wrapper_or_runner() {
        assert!(PLAIN.windows(2).all(|w| w[0] < w[1]), "keep PLAIN sorted");
        for p in PLAIN {
            assert!(
                !in_table(p) && wrapper(p).is_none() && !SHELLS.contains(p),
                "{p}"
            );
        }
    }

    #[test]
    fn grammars() {
        assert_eq!(grammar("ls"), Some("plain"));
        assert_eq!(grammar("mawk"), grammar("awk"));
        assert_eq!(grammar("python3.12"), grammar("python3"));
        assert_eq!(grammar("vim.basic"), grammar("vim"));
        assert_eq!(grammar("bash"), grammar("dash"));
        assert_ne!(grammar("busybox"), grammar("ls"));
        assert_eq!(grammar("rvim"), None);
        assert_eq!(grammar("setpriv"), Some("launcher"));
        assert_eq!(grammar("valgrind"), Some("launcher"));
        assert_eq!(grammar("frobnicate"), None);
        assert_eq!(grammar("env"), Some("env"));
        assert_ne!(grammar("env"), grammar("sudo"));
    }
}
