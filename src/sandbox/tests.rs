//! Tests of the sandbox: validation, and the whole child path through the real launch.

use super::*;

fn spec(roots: &[&str]) -> SandboxSpec {
    SandboxSpec {
        writable_roots: roots.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

#[test]
fn roots_are_validated_and_named() {
    let dir = std::env::temp_dir();
    let ok = validate_roots(&spec(&[dir.to_str().unwrap()]), "options.sandbox").unwrap();
    assert_eq!(ok, vec![std::fs::canonicalize(&dir).unwrap()]);
    let cases: &[(&[&str], &str)] = &[
        (&["relative"], "writableRoots[0] must be an absolute path"),
        (
            &["/tmp", "/no/such/dir/x"],
            "writableRoots[1] `/no/such/dir/x`",
        ),
        (&["/bin/sh"], "not a directory"),
        (&["/"], "may not be, contain or lie inside /proc"),
        (&["/sys/fs/cgroup"], "lie inside /sys"),
        (&["/dev"], "/dev"),
        (&["/proc/self"], "/proc"),
        (&["/tmp\0x"], "NUL"),
    ];
    for (roots, needle) in cases {
        let e = validate_roots(&spec(roots), "options.sandbox").unwrap_err();
        assert_eq!(e.code, "ERR_INVALID_ARG", "{e}");
        assert!(e.message.contains(needle), "{e} should say {needle}");
        assert!(e.message.contains("options.sandbox.writableRoots["), "{e}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_symlink_to_a_forbidden_place_is_refused() {
    let dir = std::env::temp_dir().join(format!("acp-sbx-link-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("link");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink("/sys", &link).unwrap();
    let e = validate_roots(&spec(&[link.to_str().unwrap()]), "sandbox").unwrap_err();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(e.message.contains("resolved `/sys`"), "{e}");
}

/// Starts `sh -c script` in `spec`'s sandbox in `cwd` through the real launch path (a new
/// session, the sandbox's two steps), waits for it and returns its output (a pipe, stderr
/// included) and exit code; the namespace ends with the guard, dropped here.
#[cfg(target_os = "linux")]
fn run_sandboxed(spec: &SandboxSpec, cwd: &std::path::Path, script: &str) -> (i32, String) {
    let (code, out, _) = made_ahead::run_sandboxed_joined(spec, cwd, script);
    (code, out)
}

/// Whether the sandbox can run here; where not, the test says why and is skipped, or fails in
/// strict mode (`ACP_TERMINAL_REQUIRE`, see [`crate::test_util::require`]).
#[cfg(target_os = "linux")]
fn namespaces_or_skip() -> bool {
    crate::test_util::require(
        "landlock",
        support::kernel().filesystem,
        "no Landlock filesystem rules (ABI < 3)",
    ) && crate::test_util::require(
        "userns",
        support().process_isolation.is_some(),
        "no namespaces can be made here",
    )
}

#[cfg(target_os = "linux")]
#[test]
fn outside_the_roots_everything_is_read_only_inside_writable_tmp_private() {
    if !namespaces_or_skip() {
        return;
    }
    // Not under /tmp, which the sandbox replaces with its own.
    let base = std::path::Path::new("/var/tmp").join(format!("acp-sbx-rs-{}", std::process::id()));
    let inside = base.join("in");
    let outside = base.join("out");
    std::fs::create_dir_all(&inside).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("f"), "keep").unwrap();
    let sb = spec(&[inside.to_str().unwrap()]);
    let script = format!(
        "echo x > {i}/a && echo inside-ok; chmod 777 {o}/f 2>&1; echo y > {o}/b 2>&1; \
         echo t > /tmp/t && cat /tmp/t; ls /dev | tr '\\n' ' '; echo; cat /proc/1/cmdline | tr '\\0' ' '",
        i = inside.display(),
        o = outside.display()
    );
    let (code, out) = run_sandboxed(&sb, &inside, &script);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("inside-ok"), "{out}");
    assert_eq!(out.matches("Read-only file system").count(), 2, "{out}");
    assert!(out.contains("\nt\n"), "{out}");
    assert!(
        out.contains("fd full null random stderr stdin stdout urandom zero \n"),
        "{out}"
    );
    assert!(out.contains("sleep 2147483647"), "{out}");
    assert!(
        !std::path::Path::new("/tmp/t").exists()
            || std::fs::read_to_string("/tmp/t").unwrap() != "t\n"
    );
    assert!(!outside.join("b").exists());
    std::fs::remove_dir_all(&base).unwrap();
}

/// Sandboxes made ahead ([`crate::sandbox::premade`], Linux only), and the launch that tells whether it
/// joined one.
#[cfg(target_os = "linux")]
mod made_ahead {
    use super::*;

    /// [`run_sandboxed`], also telling whether the launch joined a sandbox made ahead.
    pub(super) fn run_sandboxed_joined(
        spec: &SandboxSpec,
        cwd: &std::path::Path,
        script: &str,
    ) -> (i32, String, bool) {
        use crate::sys::spawn::{self as launch, Argv, Command, Io, Join};
        use std::io::Read;
        use std::os::fd::AsFd;
        let cwd = crate::sys::cwd::open_dir(cwd).unwrap();
        let ends = launch::open_ends(Io::Pipe).unwrap();
        let prepared = prepare_launch(spec, &cwd, &ends, "sandbox").unwrap();
        let joined = prepared.premade.is_some();
        let (started, leader) = launch::spawn(
            Command {
                program: "/bin/sh".as_ref(),
                argv: Argv::Program(&["sh".into(), "-c".into(), script.into()]),
                env: &[
                    ("PATH".into(), "/usr/bin:/bin".into()),
                    ("TMPDIR".into(), "/tmp".into()),
                ],
                cwd: &cwd,
                join: Join {
                    own_session: true,
                    ..Join::default()
                },
                steps: Some(prepared.steps()),
            },
            ends,
        )
        .unwrap();
        // Our end is non-blocking: wait for more until end of file.
        let mut out = Vec::new();
        let mut r = std::fs::File::from(started.output);
        let mut buf = [0u8; 4096];
        loop {
            match r.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
                    let _ = poll(
                        &mut [PollFd::new(r.as_fd(), PollFlags::POLLIN)],
                        PollTimeout::NONE,
                    );
                }
                Err(e) => panic!("{e}"),
            }
        }
        let _ = leader;
        let mut child = started.child;
        let status = child.reap();
        let guard = prepared.into_guard(started.init_pid).unwrap();
        assert!(
            guard.init_pid.is_some(),
            "the guard owns the namespace's init"
        );
        drop(guard);
        (
            // (A death by a signal is no exit code: -1.)
            match status {
                crate::sys::exit_watch::Reaped::Exited(code) => code as i32,
                _ => -1,
            },
            String::from_utf8_lossy(&out).into_owned(),
            joined,
        )
    }

    /// A directory for a test's roots, not under /tmp (which the sandbox replaces).
    fn var_tmp(name: &str) -> std::path::PathBuf {
        let d =
            std::path::Path::new("/var/tmp").join(format!("acp-sbx-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// The shape the pool keeps sandboxes of for a pinned `spec`'s launches.
    fn shape_of(spec: &SandboxSpec) -> premade::Shape {
        let pinned = spec.pinned.as_ref().expect("a pinned spec");
        premade::Shape::of(&pinned.0, spec.tmp_bytes, !spec.network)
    }

    /// Launches `true` in `spec`'s sandbox until one made ahead for it is ready (a burst of
    /// launches of one shape has the pool make them; other tests' shapes may push it out, so
    /// this launches again), at most 200 launches.
    fn prime(spec: &SandboxSpec, cwd: &std::path::Path) {
        let shape = shape_of(spec);
        for _ in 0..200 {
            assert_eq!(run_sandboxed(spec, cwd, "true").0, 0);
            for _ in 0..50 {
                if premade::ready(&shape) > 0 {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
        panic!("no sandbox was made ahead for a burst of launches");
    }

    /// The pool makes nothing while a sandboxed launch is in flight (from its take until it is
    /// done), so that making never competes with the launch for the CPU; it makes again after.
    #[test]
    fn the_pool_makes_nothing_while_a_launch_is_in_flight() {
        if !namespaces_or_skip() {
            return;
        }
        let base = var_tmp("premade-in-flight");
        let inside = base.join("in");
        std::fs::create_dir_all(&inside).unwrap();
        let mut sb = spec(&[inside.to_str().unwrap()]);
        sb.pinned = Some(pin(&sb, "sandbox").unwrap());
        let shape = shape_of(&sb);
        let wait_for = |n: usize| {
            (0..500).any(|_| {
                std::thread::sleep(std::time::Duration::from_millis(10));
                premade::ready(&shape) >= n
            })
        };
        // Full (two ready), then one taken by a launch that is still in flight.
        let mut held = None;
        for _ in 0..20 {
            prime(&sb, &inside);
            if !wait_for(2) {
                continue; // other tests' shapes pushed ours out
            }
            let cwd = crate::sys::cwd::open_dir(&inside).unwrap();
            let ends = crate::sys::spawn::open_ends(crate::sys::spawn::Io::Pipe).unwrap();
            let prepared = prepare_launch(&sb, &cwd, &ends, "sandbox").unwrap();
            if prepared.premade.is_some() {
                held = Some(prepared);
                break;
            }
        }
        let prepared = held.expect("a launch that took a sandbox made ahead");
        // Well within the pool's longest deferral, and well beyond one make on a quiet machine.
        std::thread::sleep(std::time::Duration::from_millis(12));
        assert!(
            premade::ready(&shape) <= 1,
            "nothing is made while the launch is in flight"
        );
        drop(prepared);
        assert!(wait_for(2), "the pool makes again once the launch is done");
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// A launch that joins a sandbox made ahead gets what one that makes its own gets: the root
    /// writable, the rest read-only, an empty private /tmp, its own PID namespace with the init as
    /// pid 1, its own network, IPC and mount namespaces; and each serves one command.
    #[test]
    fn a_sandbox_made_ahead_serves_one_command_with_everything_a_launch_makes() {
        if !namespaces_or_skip() {
            return;
        }
        let base = var_tmp("premade");
        let inside = base.join("in");
        std::fs::create_dir_all(&inside).unwrap();
        let mut sb = spec(&[inside.to_str().unwrap()]);
        sb.pinned = Some(pin(&sb, "sandbox").unwrap());
        let script = format!(
            "echo x > {i}/a && echo inside-ok; echo y > {b}/b 2>&1; ls -A /tmp | tr '\\n' ' '; echo; \
             echo t > /tmp/t; ls /proc | grep -c '^[0-9]'; cat /proc/1/cmdline | tr '\\0' ' '; echo; \
             readlink /proc/self/ns/net /proc/self/ns/ipc /proc/self/ns/mnt /proc/self/ns/pid",
            i = inside.display(),
            b = base.display()
        );
        let host_ns: Vec<String> = ["net", "ipc", "mnt", "pid"]
            .iter()
            .map(|n| {
                std::fs::read_link(format!("/proc/self/ns/{n}"))
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        let mut seen: Vec<Vec<String>> = Vec::new();
        while seen.len() < 2 {
            prime(&sb, &inside);
            let (code, out, joined) = run_sandboxed_joined(&sb, &inside, &script);
            if !joined {
                continue; // taken by nothing else, but another test's shapes pushed ours out
            }
            assert_eq!(code, 0, "{out}");
            let lines: Vec<&str> = out.lines().collect();
            assert_eq!(lines[0], "inside-ok", "{out}");
            assert!(lines[1].contains("Read-only file system"), "{out}");
            assert_eq!(lines[2].trim(), "", "an empty /tmp: {out}");
            // The init, the shell and `ls` (and `grep`) only.
            assert!(lines[3].parse::<u32>().unwrap() <= 4, "{out}");
            assert_eq!(lines[4].trim(), "sleep 2147483647", "{out}");
            let ns: Vec<String> = lines[5..9].iter().map(|s| s.to_string()).collect();
            for (n, h) in ns.iter().zip(&host_ns) {
                assert_ne!(n, h, "a namespace of its own: {out}");
            }
            assert!(!seen.contains(&ns), "each serves one command: {out}");
            seen.push(ns);
        }
        assert!(!base.join("b").exists());
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// A sandbox made ahead is a copy of the host's mount table when it was made: a mount made on
    /// the host since then is in the next command's tree (the one made ahead is discarded).
    #[test]
    fn a_host_mount_made_after_a_sandbox_was_made_ahead_is_seen_by_the_next_command() {
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        if !namespaces_or_skip() || !crate::test_util::require("root", root, "mounting needs root")
        {
            return;
        }
        let base = var_tmp("premade-mount");
        let inside = base.join("in");
        let point = base.join("m");
        std::fs::create_dir_all(&inside).unwrap();
        std::fs::create_dir_all(&point).unwrap();
        let mut sb = spec(&[inside.to_str().unwrap()]);
        sb.pinned = Some(pin(&sb, "sandbox").unwrap());
        prime(&sb, &inside);
        /// Unmounts the tmpfs however the test ends.
        struct Mounted(std::ffi::CString);
        impl Drop for Mounted {
            fn drop(&mut self) {
                // SAFETY: unmounting what the test mounted.
                unsafe { libc::umount2(self.0.as_ptr(), libc::MNT_DETACH) };
            }
        }
        let c = std::ffi::CString::new(point.to_str().unwrap()).unwrap();
        // SAFETY: a tmpfs on our own fresh directory, unmounted by the guard.
        let r = unsafe {
            libc::mount(
                c"tmpfs".as_ptr(),
                c.as_ptr(),
                c"tmpfs".as_ptr(),
                0,
                std::ptr::null(),
            )
        };
        assert_eq!(r, 0, "{}", std::io::Error::last_os_error());
        let mounted = Mounted(c);
        std::fs::write(point.join("seen"), "mounted\n").unwrap();
        let (code, out) = run_sandboxed(&sb, &inside, &format!("cat {}/seen", point.display()));
        drop(mounted);
        assert_eq!((code, out.as_str()), (0, "mounted\n"));
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// A root moved away after a sandbox was made ahead for it fails the next create, as a launch
    /// making its own does: the directory now at its path is not the pinned one.
    #[test]
    fn a_root_replaced_after_a_sandbox_was_made_ahead_fails_the_next_create() {
        if !namespaces_or_skip() {
            return;
        }
        let base = var_tmp("premade-moved");
        let inside = base.join("in");
        std::fs::create_dir_all(&inside).unwrap();
        let mut sb = spec(&[inside.to_str().unwrap()]);
        sb.pinned = Some(pin(&sb, "sandbox").unwrap());
        prime(&sb, &inside);
        std::fs::rename(&inside, base.join("moved")).unwrap();
        std::fs::create_dir_all(&inside).unwrap();
        let cwd = crate::sys::cwd::open_dir(&base).unwrap();
        let ends = crate::sys::spawn::open_ends(crate::sys::spawn::Io::Pipe).unwrap();
        let prepared = prepare_launch(&sb, &cwd, &ends, "sandbox").unwrap();
        assert!(
            prepared.premade.is_none(),
            "the sandbox made for the moved root is not joined"
        );
        let started = crate::sys::spawn::spawn(
            crate::sys::spawn::Command {
                program: "/bin/true".as_ref(),
                argv: crate::sys::spawn::Argv::Program(&["true".into()]),
                env: &[],
                cwd: &cwd,
                join: crate::sys::spawn::Join {
                    own_session: true,
                    ..crate::sys::spawn::Join::default()
                },
                steps: Some(prepared.steps()),
            },
            ends,
        );
        let e = started.map(|_| ()).unwrap_err();
        assert_eq!(
            crate::sys::spawn::failed_step(&e),
            Some(child::Step::Mounts as i32),
            "{e}"
        );
        std::fs::remove_dir_all(&base).unwrap();
    }
}
