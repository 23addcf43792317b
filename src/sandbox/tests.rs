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
    use crate::sys::spawn::{self as launch, Argv, Command, Io, Join};
    use std::io::Read;
    use std::os::fd::AsFd;
    let cwd = crate::sys::cwd::open_dir(cwd).unwrap();
    let ends = launch::open_ends(Io::Pipe).unwrap();
    let prepared = prepare_launch(spec, &cwd, &ends, "sandbox").unwrap();
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
    let mut status = 0;
    // SAFETY: reaping our own child.
    unsafe { libc::waitpid(leader.pid, &mut status, 0) };
    let guard = prepared.into_guard(started.init_pid).unwrap();
    assert!(guard.init_pid.is_some(), "the guard owns the namespace's init");
    drop(guard);
    (
        libc::WEXITSTATUS(status),
        String::from_utf8_lossy(&out).into_owned(),
    )
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
