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
    let dir = tmpdir::TempDir::new().unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink("/sys", &link).unwrap();
    let e = validate_roots(&spec(&[link.to_str().unwrap()]), "sandbox").unwrap_err();
    assert!(e.message.contains("resolved `/sys`"), "{e}");
}

/// Runs `script` with `sh -c` in a sandbox with `root` writable and returns (exit code,
/// output). Everything through the real launch path; the output through a pipe.
#[cfg(target_os = "linux")]
fn run_sandboxed(spec: &SandboxSpec, script: &str) -> (i32, String) {
    let root = crate::sys::cwd::open_dir(std::path::Path::new("/")).unwrap();
    let (out, code, guard) = launch_sandboxed(spec, &root, script, true);
    drop(guard);
    (code, out)
}

/// Starts `sh -c script` in `spec`'s sandbox in `cwd` (with `pooled: false`, a PID namespace is
/// made in the launch even when one made ahead is ready), waits for it and returns its output
/// (a pipe, stderr included), its exit code and the sandbox's guard, not dropped yet: the
/// caller decides when the terminal is done.
#[cfg(target_os = "linux")]
pub(super) fn launch_sandboxed(
    spec: &SandboxSpec,
    cwd: &std::os::fd::OwnedFd,
    script: &str,
    pooled: bool,
) -> (String, i32, SandboxGuard) {
    use crate::sys::spawn::{launch_with, LaunchSpec, SessionMode};
    use std::ffi::CString;
    use std::io::Read;
    use std::os::fd::AsRawFd;
    let mut prepared = prepare(spec, None, "sandbox").unwrap();
    if !pooled {
        prepared.ns = prepared.ns.take().map(|plan| Box::new((*plan).unpooled()));
    }
    let (r, w) = crate::sys::pipe::pipe_cloexec().unwrap();
    let null = std::fs::File::open("/dev/null").unwrap();
    let tmpdir = format!("TMPDIR={}", prepared.tmpdir().display());
    let launched = launch_with(LaunchSpec {
        program: CString::new("/bin/sh").unwrap(),
        argv: ["sh", "-c", script]
            .iter()
            .map(|a| CString::new(*a).unwrap())
            .collect(),
        envp: vec![
            CString::new("PATH=/usr/bin:/bin").unwrap(),
            CString::new(tmpdir).unwrap(),
        ],
        cwd: cwd.as_raw_fd(),
        stdio: [null.as_raw_fd(), w.as_raw_fd(), w.as_raw_fd()],
        session: SessionMode::NewGroup,
        rlimits: vec![],
        parent_death_signal: Some(libc::SIGKILL),
        cgroup_procs: vec![],
        sandbox: Some(prepared.child()),
    })
    .unwrap();
    drop(w);
    let mut out = String::new();
    std::fs::File::from(r).read_to_string(&mut out).unwrap();
    let mut status = 0;
    // SAFETY: reaping our own child.
    unsafe { libc::waitpid(launched.pid, &mut status, 0) };
    assert_eq!(launched.init_pid.is_some(), spec.isolate_processes);
    (
        out,
        libc::WEXITSTATUS(status),
        prepared.into_guard(launched.init_pid),
    )
}

#[cfg(target_os = "linux")]
#[test]
fn writes_outside_the_roots_are_refused_inside_allowed() {
    let _alone = nspool::test_lock();
    // Without it the sandbox is refused by `prepare`, which other tests pin.
    if !crate::test_util::require(
        "landlock",
        support::kernel().filesystem,
        "no Landlock filesystem rules (ABI < 3)",
    ) {
        return;
    }
    let inside = tmpdir::TempDir::new().unwrap();
    let outside = tmpdir::TempDir::new().unwrap();
    for isolate in [false, true] {
        let isolation = support().process_isolation.is_some();
        if isolate
            && !crate::test_util::require("userns", isolation, "no PID namespace can be made here")
        {
            continue;
        }
        let spec = SandboxSpec {
            writable_roots: vec![inside.path().to_str().unwrap().into()],
            network: false,
            isolate_processes: isolate,
        };
        let script = format!(
            "echo a > {in_}/f && echo in-ok; echo b > {out}/f || echo out-refused; \
             echo c > \"$TMPDIR/t\" && echo tmp-ok; grep -E '^(NoNewPrivs|CapEff)' /proc/self/status",
            in_ = inside.path().display(),
            out = outside.path().display()
        );
        let (code, out) = run_sandboxed(&spec, &script);
        assert_eq!(code, 0, "{out}");
        assert!(out.contains("in-ok\n"), "{out}");
        assert!(out.contains("Permission denied"), "{out}");
        assert!(out.contains("out-refused\n"), "{out}");
        assert!(out.contains("tmp-ok\n"), "{out}");
        assert!(out.contains("NoNewPrivs:\t1"), "{out}");
        assert!(out.contains("CapEff:\t0000000000000000"), "{out}");
        assert!(!outside.path().join("f").exists());
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_pid_namespace_shows_only_the_terminal() {
    let _alone = nspool::test_lock();
    let isolation = support().process_isolation.is_some();
    if !crate::test_util::require(
        "landlock",
        support::kernel().filesystem,
        "no Landlock filesystem rules (ABI < 3)",
    ) || !crate::test_util::require("userns", isolation, "no PID namespace can be made here")
    {
        return;
    }
    let spec = SandboxSpec::default();
    // pid 1 is the init (the memfd program, or `sleep` where there is none), the shell is
    // another (2 in a new namespace, more in a recycled one), and nothing else exists.
    let (code, out) = run_sandboxed(
        &spec,
        // (the init may still be finishing its exec when the command starts: its
        // command line appears then)
        "echo $$; for i in $(seq 200); do c=$(tr '\\0' ' ' < /proc/1/cmdline); \
         [ -n \"$c\" ] && break; sleep 0.01; done; echo \"$c\"; ls /proc | grep -c '^[0-9]'",
    );
    assert_eq!(code, 0, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].parse::<u32>().unwrap() >= 2, "{out}");
    let init = if super::initprog::fd().is_some() {
        format!("{} ", super::initprog::NAME)
    } else {
        "sleep 2147483647 ".to_string()
    };
    assert_eq!(lines[1], init, "{out}");
    // the init, sh, and the pipeline's ls and grep
    assert!(lines[2].parse::<u32>().unwrap() <= 4, "{out}");
}

/// Where a sandboxed spawn's time goes (not a test: run it with
/// `cargo test --release sandbox_cost -- --ignored --nocapture`).
#[cfg(target_os = "linux")]
#[test]
#[ignore]
fn sandbox_cost() {
    use crate::sys::spawn::{launch_with, LaunchSpec, SessionMode};
    use std::ffi::CString;
    use std::os::fd::AsRawFd;
    use std::time::Instant;
    let null = std::fs::File::open("/dev/null").unwrap();
    let root = crate::sys::cwd::open_dir(std::path::Path::new("/")).unwrap();
    let spec = || LaunchSpec {
        program: CString::new("/bin/true").unwrap(),
        argv: vec![CString::new("true").unwrap()],
        envp: vec![],
        cwd: root.as_raw_fd(),
        stdio: [null.as_raw_fd(); 3],
        session: SessionMode::NewGroup,
        rlimits: vec![],
        parent_death_signal: Some(libc::SIGKILL),
        cgroup_procs: vec![],
        sandbox: None,
    };
    let med = |mut xs: Vec<f64>| {
        xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
        (xs[xs.len() / 10], xs[xs.len() / 2])
    };
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;
    for isolate in [false, true] {
        let sb = SandboxSpec {
            writable_roots: vec!["/tmp".into()],
            network: false,
            isolate_processes: isolate,
        };
        let mut v: [Vec<f64>; 5] = Default::default();
        for _ in 0..300 {
            let t = Instant::now();
            let l = launch_with(spec()).unwrap();
            // SAFETY: reaping our own child.
            unsafe { libc::waitpid(l.pid, std::ptr::null_mut(), 0) };
            v[0].push(ms(t));
            let t = Instant::now();
            let p = prepare(&sb, None, "sandbox").unwrap();
            v[1].push(ms(t));
            let mut s = spec();
            s.sandbox = Some(p.child());
            let t = Instant::now();
            let l = launch_with(s).unwrap();
            v[2].push(ms(t));
            let t = Instant::now();
            // SAFETY: reaping our own child.
            unsafe { libc::waitpid(l.pid, std::ptr::null_mut(), 0) };
            v[3].push(ms(t));
            let g = p.into_guard(l.init_pid);
            let t = Instant::now();
            drop(g);
            v[4].push(ms(t));
        }
        let [a, b, c, d, e] = v.map(med);
        println!(
            "isolate={isolate} (p10, median ms): plain launch+wait {a:.3?} | sandbox: \
             prepare {b:.3?}, launch {c:.3?}, wait {d:.3?}, guard drop {e:.3?}"
        );
    }
}
