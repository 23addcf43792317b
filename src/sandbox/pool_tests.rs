//! Tests of namespaces made ahead ([`nspool`]): launches join them, the working directory is
//! found again inside (or the launch makes its own namespace), given-back namespaces are
//! recycled only when empty, and a change of the mount table retires them. The pool is one per
//! process and other tests use it at the same time: counters are compared as lower bounds.

use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::time::{Duration, Instant};

use super::*;

fn isolation_here() -> bool {
    support().process_isolation.is_some() && support::kernel().filesystem
}

fn isolated() -> SandboxSpec {
    SandboxSpec {
        writable_roots: vec![],
        network: false,
        isolate_processes: true,
    }
}

/// Starts `sh -c script` isolated in `cwd`; returns its output, exit code and the guard.
fn run_in(cwd: &OwnedFd, script: &str, pooled: bool) -> (String, i32, SandboxGuard) {
    super::tests::launch_sandboxed(&isolated(), cwd, script, pooled)
}

fn eventually(what: &str, cond: impl FnMut() -> bool) {
    crate::test_util::wait_until(what, Duration::from_secs(10), cond);
}

/// Launches until one joined a namespace made ahead (the pool starts with the first).
fn until_joined(cwd: &OwnedFd, script: &str) -> String {
    for _ in 0..200 {
        let before = nspool::stats().taken;
        let (out, code, guard) = run_in(cwd, script, true);
        drop(guard);
        assert_eq!(code, 0, "{out}");
        if nspool::stats().taken > before {
            return out;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!(
        "no launch joined a namespace made ahead: {:?}",
        nspool::stats()
    );
}

#[test]
fn a_joined_namespace_shows_only_the_terminal_even_from_the_working_directory_upwards() {
    let _alone = nspool::test_lock();
    if !isolation_here() {
        return;
    }
    let dir = tmpdir::TempDir::new().unwrap();
    let cwd = crate::sys::cwd::open_dir(dir.path()).unwrap();
    // `..` from the working directory up to the root: a working directory of Node's mount
    // namespace would lead to Node's /proc there.
    let ups = "../".repeat(dir.path().components().count() + 2);
    let out = until_joined(
        &cwd,
        &format!(
            "pwd -P; readlink /proc/self/cwd; cd {ups} && ls proc | grep -c '^[0-9]'; \
             tr '\\0' ' ' < proc/1/cmdline"
        ),
    );
    let real = std::fs::canonicalize(dir.path()).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], real.to_str().unwrap(), "{out}");
    assert_eq!(lines[1], real.to_str().unwrap(), "{out}");
    // the init, sh, ls and grep (tr starts after ls ended)
    assert!(lines[2].parse::<u32>().unwrap() <= 4, "{out}");
    assert!(lines[3].starts_with(super::initprog::NAME) || lines[3].starts_with("sleep"));
}

#[test]
fn a_working_directory_not_found_inside_makes_a_namespace_of_its_own() {
    let _alone = nspool::test_lock();
    if !isolation_here() {
        return;
    }
    let base = tmpdir::TempDir::new().unwrap();
    let gone = base.path().join("gone");
    std::fs::create_dir(&gone).unwrap();
    let cwd = crate::sys::cwd::open_dir(&gone).unwrap();
    std::fs::remove_dir(&gone).unwrap();
    // The pool is running (and has a namespace ready) before the launch that cannot use it.
    let root = crate::sys::cwd::open_dir(Path::new("/")).unwrap();
    until_joined(&root, "true");
    eventually("a ready namespace", || {
        nspool::stats().made >= 2 || nspool::off().is_some()
    });
    eventually("a ready namespace", || {
        nspool::stats().ready > 0 || nspool::off().is_some()
    });
    let before = nspool::stats();
    // The directory was deleted: its path (`... (deleted)`) names nothing inside, so the
    // launch makes its own namespace, where the checked descriptor moves along.
    let (out, code, guard) = run_in(&cwd, "ls -a . | wc -l; echo $$", true);
    drop(guard);
    assert_eq!(code, 0, "{out}");
    let after = nspool::stats();
    if before.ready > 0 {
        assert_eq!(after.taken, before.taken + 1, "{before:?} {after:?}");
        assert_eq!(after.unusable, before.unusable + 1, "{before:?} {after:?}");
    }
    // (sh also says that it cannot name its working directory)
    assert!(
        out.lines().any(|l| l == "0"),
        "an empty, deleted directory: {out}"
    );
}

#[test]
fn an_empty_namespace_is_recycled_and_one_with_a_process_left_is_ended() {
    let _alone = nspool::test_lock();
    if !isolation_here() {
        return;
    }
    let root = crate::sys::cwd::open_dir(Path::new("/")).unwrap();
    until_joined(&root, "true");
    // Empty once the command is reaped: given back, found empty, made ready again.
    eventually("a ready namespace", || nspool::stats().ready > 0);
    let before = nspool::stats();
    let (_, _, guard) = run_in(&root, "true", true);
    drop(guard);
    eventually("recycled", || nspool::stats().recycled > before.recycled);
    // A process escaped from the terminal's group and session is still in the namespace when
    // the guard is dropped (nothing killed it here): the namespace is ended, and it with it.
    let marker = format!(
        "{}.{}",
        std::process::id(),
        Instant::now().elapsed().as_nanos()
    );
    let before = nspool::stats();
    let (out, code, guard) = run_in(
        &root,
        &format!("setsid sleep 1000{marker} </dev/null >/dev/null 2>&1 & echo $!"),
        true,
    );
    assert_eq!(code, 0, "{out}");
    let alive = || {
        std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| c.ends_with(format!("1000{marker}\0").as_bytes()))
        })
    };
    eventually("the escaped sleep runs", alive);
    drop(guard);
    eventually("the escaped sleep killed", || !alive());
    let after = nspool::stats();
    if after.taken > before.taken {
        assert_eq!(
            after.not_empty,
            before.not_empty + 1,
            "{before:?} {after:?}"
        );
    }
}

#[test]
fn without_a_namespace_made_ahead_the_command_is_pid_2_of_its_own() {
    let _alone = nspool::test_lock();
    if !isolation_here() {
        return;
    }
    let root = crate::sys::cwd::open_dir(Path::new("/")).unwrap();
    let (out, code, guard) = run_in(&root, "echo $$; ls /proc | grep -c '^[0-9]'", false);
    drop(guard);
    assert_eq!(code, 0, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "2", "{out}");
    assert!(lines[1].parse::<u32>().unwrap() <= 4, "{out}");
}

/// A mount made by Node after namespaces were made ahead is seen by the next command: the
/// pool notices the change of the mount table and retires what it had. As root only (mounting
/// needs CAP_SYS_ADMIN); elsewhere the test says so and passes.
#[test]
fn a_mount_made_after_the_namespaces_is_seen_by_the_next_command() {
    let _alone = nspool::test_lock();
    if !isolation_here() {
        return;
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: mounting needs root");
        return;
    }
    let root = crate::sys::cwd::open_dir(Path::new("/")).unwrap();
    until_joined(&root, "true");
    eventually("a ready namespace", || nspool::stats().made >= 2);
    let dir = tmpdir::TempDir::new().unwrap();
    let target = CString::new(dir.path().to_str().unwrap()).unwrap();
    // SAFETY: mounting a fresh tmpfs on our own temporary directory.
    let r = unsafe {
        libc::mount(
            c"tmpfs".as_ptr(),
            target.as_ptr(),
            c"tmpfs".as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if r != 0 {
        eprintln!("skipped: mount: {}", std::io::Error::last_os_error());
        return;
    }
    std::fs::write(dir.path().join("on-the-tmpfs"), "x").unwrap();
    let seen = nspool::stats().mount_changes;
    let (out, code, guard) = run_in(&root, &format!("ls {}", dir.path().display()), true);
    drop(guard);
    // SAFETY: unmounting what we mounted.
    unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) };
    assert_eq!(code, 0, "{out}");
    assert_eq!(out, "on-the-tmpfs\n");
    assert!(nspool::stats().mount_changes > seen || nspool::off().is_some());
}
