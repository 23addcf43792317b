//! Planning and spawning, without Node.

use super::*;
use crate::sys::pty::PtySize;
use plan::PTY_TERM;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

fn req(command: &str, args: &[&str]) -> SpawnRequest {
    SpawnRequest {
        command: command.into(),
        args: args.iter().map(|s| s.to_string()).collect(),
        inherit_env: true,
        ..Default::default()
    }
}

fn inherited() -> Vec<(OsString, OsString)> {
    vec![
        ("PATH".into(), "/usr/bin:/bin".into()),
        ("HOME".into(), "/root".into()),
        ("PAGER".into(), "less".into()),
    ]
}

fn env_of(p: &SpawnPlan, k: &str) -> Option<String> {
    p.env
        .iter()
        .find(|(n, _)| n == k)
        .map(|(_, v)| v.to_string_lossy().into_owned())
}

#[test]
fn pty_sets_term_unless_the_request_does() {
    let mut r = req("true", &[]);
    r.io = Io::Pty(PtySize::default());
    let inherited = || {
        let mut v = super::tests::inherited();
        v.push(("TERM".into(), "dumb".into()));
        v
    };
    let p = plan(&r, inherited(), Path::new("/")).unwrap();
    assert_eq!(env_of(&p, "TERM").as_deref(), Some(PTY_TERM));
    r.env.push(("TERM".into(), "vt100".into()));
    let p = plan(&r, inherited(), Path::new("/")).unwrap();
    assert_eq!(env_of(&p, "TERM").as_deref(), Some("vt100"));
    let p = plan(&req("true", &[]), inherited(), Path::new("/")).unwrap();
    assert_eq!(env_of(&p, "TERM").as_deref(), Some("dumb"));
}

#[test]
fn shell_rule() {
    let p = plan(&req("echo a && echo b", &[]), inherited(), Path::new("/")).unwrap();
    assert_eq!(p.program, PathBuf::from("/bin/sh"));
    assert_eq!(p.argv, vec!["/bin/sh", "-c", "echo a && echo b"]);
    let p = plan(&req("echo", &["a b", "$HOME"]), inherited(), Path::new("/")).unwrap();
    assert!(p.program.ends_with("echo"));
    assert_eq!(p.argv, vec!["echo", "a b", "$HOME"]);
    let mut r = req("true", &[]);
    r.shell = Shell::Never;
    let p = plan(&r, inherited(), Path::new("/")).unwrap();
    assert!(p.program.ends_with("true"));
    assert_eq!(p.argv, vec!["true"]);
    let mut r = req("echo $0", &[]);
    r.shell = Shell::Custom("bash".into());
    let p = plan(&r, inherited(), Path::new("/")).unwrap();
    assert!(p.program.ends_with("bash"));
    assert_eq!(p.argv, vec!["bash", "-c", "echo $0"]);
}

#[test]
fn env_rules() {
    let mut r = req("x", &[]);
    r.env = vec![
        ("A".into(), "1".into()),
        ("A".into(), "2".into()),
        ("GIT_PAGER".into(), "less".into()),
    ];
    let p = plan(&r, inherited(), Path::new("/")).unwrap();
    assert_eq!(env_of(&p, "A").as_deref(), Some("2"));
    assert_eq!(env_of(&p, "HOME").as_deref(), Some("/root"));
    assert_eq!(env_of(&p, "PAGER").as_deref(), Some("cat"));
    assert_eq!(env_of(&p, "GIT_PAGER").as_deref(), Some("less"));
    assert_eq!(p.env.iter().filter(|(k, _)| k == "A").count(), 1);
    r.inherit_env = false;
    let p = plan(&r, inherited(), Path::new("/")).unwrap();
    assert_eq!(env_of(&p, "HOME"), None);
    assert_eq!(env_of(&p, "PAGER").as_deref(), Some("cat"));
}

#[test]
fn invalid_requests_name_the_field() {
    let cases: Vec<(SpawnRequest, &str, &str)> = vec![
        (req("a\0b", &[]), "ERR_INVALID_ARG", "command"),
        (req("echo", &["ok", "b\0"]), "ERR_INVALID_ARG", "args[1]"),
        (
            SpawnRequest {
                env: vec![("".into(), "v".into())],
                ..req("x", &[])
            },
            "ERR_INVALID_ARG",
            "env[0].name",
        ),
        (
            SpawnRequest {
                env: vec![("A".into(), "v".into()), ("B=C".into(), "v".into())],
                ..req("x", &[])
            },
            "ERR_INVALID_ARG",
            "env[1].name",
        ),
        (
            SpawnRequest {
                env: vec![("A".into(), "v\0".into())],
                ..req("x", &[])
            },
            "ERR_INVALID_ARG",
            "env[0].value",
        ),
        (
            SpawnRequest {
                cwd: Some("relative/dir".into()),
                ..req("x", &[])
            },
            "ERR_INVALID_CWD",
            "cwd",
        ),
        (
            SpawnRequest {
                cwd: Some("/definitely/not/here".into()),
                ..req("x", &[])
            },
            "ERR_INVALID_CWD",
            "cwd",
        ),
        (
            SpawnRequest {
                cwd: Some("/bin/sh".into()),
                ..req("x", &[])
            },
            "ERR_INVALID_CWD",
            "not a directory",
        ),
        (req("no-such-command-xyz", &["a"]), "ENOENT", "command"),
        (req("", &[]), "ERR_INVALID_ARG", "command"),
    ];
    for (r, code, needle) in cases {
        let e = plan(&r, inherited(), Path::new("/")).unwrap_err();
        assert_eq!(e.code, code, "{e}");
        assert!(e.message.contains(needle), "{e} should name {needle}");
    }
}

#[test]
fn enoent_names_the_program_and_keeps_the_searched_path_out_of_the_message() {
    let e = plan(
        &req("no-such-command-xyz", &["a"]),
        inherited(),
        Path::new("/"),
    )
    .unwrap_err();
    assert_eq!(e.code, "ENOENT");
    assert!(e.message.contains("`no-such-command-xyz`"), "{e}");
    assert!(
        !e.message.contains("/usr/bin"),
        "the PATH leaked into the message: {e}"
    );
    assert_eq!(
        e.details,
        vec![
            ("program", "no-such-command-xyz".to_string()),
            ("path", "/usr/bin:/bin".to_string())
        ]
    );
}

#[test]
fn spawn_runs_and_merges_streams() {
    let p = plan(
        &req("echo a; echo b >&2; echo c", &[]),
        std::env::vars_os(),
        Path::new("/"),
    )
    .unwrap();
    let (s, leader, _) = spawn(&p, &Holder::default()).unwrap();
    let status = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(leader.pid), None).unwrap();
    assert_eq!(
        status,
        nix::sys::wait::WaitStatus::Exited(nix::unistd::Pid::from_raw(leader.pid), 0)
    );
    let mut out = Vec::new();
    let mut f = std::fs::File::from(s.output);
    use std::io::Read;
    let mut buf = [0u8; 64];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(out, b"a\nb\nc\n");
}

#[test]
fn env_defaults_are_what_plan_applies() {
    // env_defaults is the list the binding hands the TS layer (`envDefaults()`): it must be the
    // rule plan() applies, over an inherited value and under a request's own, with and
    // without a pty.
    assert_eq!(env_defaults(true).last(), Some(&("TERM", PTY_TERM)));
    for io in [Io::Pipe, Io::Pty(PtySize::default())] {
        let pty = matches!(io, Io::Pty(_));
        let mut r = req("true", &["x"]);
        r.io = io;
        let p = plan(&r, inherited(), Path::new("/")).unwrap();
        for (name, value) in env_defaults(pty) {
            assert_eq!(env_of(&p, name).as_deref(), Some(value), "{name}");
        }
        r.env = env_defaults(pty)
            .iter()
            .map(|(n, _)| (n.to_string(), "mine".into()))
            .collect();
        let p = plan(&r, inherited(), Path::new("/")).unwrap();
        for (name, _) in env_defaults(pty) {
            assert_eq!(env_of(&p, name).as_deref(), Some("mine"), "{name}");
        }
    }
}

#[test]
fn cwd_in_roots_is_the_rule_plan_applies() {
    let dir = std::env::temp_dir().join(format!("acp-roots-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("root/sub")).unwrap();
    std::fs::create_dir_all(dir.join("root-sibling")).unwrap();
    std::os::unix::fs::symlink(dir.join("root/sub"), dir.join("link")).unwrap();
    let dir = std::fs::canonicalize(&dir).unwrap();
    let roots = vec![dir.join("root").to_string_lossy().into_owned()];
    let s = |p: &str| dir.join(p).to_string_lossy().into_owned();
    for (cwd, resolved, inside) in [
        ("link", "root/sub", true),
        ("root", "root", true),
        ("root/sub/..", "root", true),
        ("root-sibling", "root-sibling", false),
    ] {
        let (real, ok) = cwd_in_roots(&s(cwd), &roots).unwrap();
        assert_eq!((real, ok), (dir.join(resolved), inside), "{cwd}");
        // plan() says the same about the same directory.
        let mut r = req("true", &["x"]);
        r.cwd = Some(s(cwd));
        r.allowed_roots = Some(roots.clone());
        let planned = plan(&r, inherited(), Path::new("/"));
        assert_eq!(planned.is_ok(), inside, "{cwd}");
    }
    let e = cwd_in_roots(&s("nope"), &roots).unwrap_err();
    assert_eq!(e.code, "ERR_INVALID_CWD");
    assert!(e.message.contains("does not exist"), "{}", e.message);
    let e = cwd_in_roots(&s("root"), &["rel".into()]).unwrap_err();
    assert_eq!(e.code, "ERR_INVALID_ARG");
    std::fs::remove_dir_all(&dir).unwrap();
}
