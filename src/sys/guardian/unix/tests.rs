use super::*;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::Command;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// A guardian that leaves this process's cgroup directories alone when it ends: the other
/// tests of this binary go on using them (the real one removes them when Node goes away).
fn start() -> Option<process::Process> {
    process::start_with("".as_ref(), "".as_ref())
}

fn wait_until(what: &str, cond: impl FnMut() -> bool) {
    crate::sys::unixtest::wait_until(what, Duration::from_secs(30), cond);
}

fn exists(pid: i32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

#[test]
fn a_stopped_guardian_is_replaced_and_the_fresh_one_still_kills_what_is_listed() {
    let g = Guardian::new(start);
    let old = g.pid().expect("a guardian starts here");
    let mut child = Command::new("sleep")
        .arg("60")
        .process_group(0)
        .spawn()
        .unwrap();
    let pgid = child.id() as i32;
    g.track(pgid, None);
    kill(Pid::from_raw(old), Signal::SIGSTOP).unwrap();
    // Far more than a pipe holds, for groups that do not exist (above any pid). Every call
    // returns at once: were one to block on the stopped guardian, this test would hang.
    for i in 0..20_000 {
        g.track(2_000_000_000 + i, None);
        g.untrack(2_000_000_000 + i, None);
    }
    wait_until("a fresh guardian", || g.pid().is_some_and(|p| p != old));
    assert!(!exists(old), "the stopped guardian was killed and reaped");
    assert_eq!(g.shared.lock().replaced, 1);
    assert!(exists(pgid), "replacing the guardian kills no terminal");
    // Node going away (the pipe closes): the fresh guardian kills the listed group.
    drop(g);
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL));
}

#[test]
fn a_dead_guardian_is_replaced_on_the_next_write() {
    let g = Guardian::new(start);
    let old = g.pid().unwrap();
    kill(Pid::from_raw(old), Signal::SIGKILL).unwrap();
    wait_until("the old guardian dead", || {
        std::fs::read_to_string(format!("/proc/{old}/stat")).map_or(true, |s| s.contains(") Z "))
    });
    g.track(2_100_000_000, None);
    wait_until("a fresh guardian", || g.pid().is_some_and(|p| p != old));
    assert!(!exists(old), "the dead one was reaped");
}

/// The thirteenth attack's reading: the health check's wait reaps a dead guardian; its pid is
/// then free for any process, so replacing the guardian must neither signal nor wait for it.
#[test]
fn a_guardian_seen_dead_is_not_signalled_or_waited_for_again() {
    let mut p = start().expect("a guardian starts here");
    assert!(p.running());
    kill(Pid::from_raw(p.pid), Signal::SIGKILL).unwrap();
    wait_until("the health check sees it dead", || !p.running());
    assert!(p.reaped, "its wait reaped it");
    assert!(!exists(p.pid));
    // The pid is no longer ours: discard leaves it alone (it would be a stranger's by now).
    p.discard();
}

#[test]
fn the_list_counts_tracks_and_ignores_unknown_untracks() {
    fn none() -> Option<Process> {
        None
    }
    let g = Guardian::new(none);
    g.track(5, None);
    g.track(5, None);
    g.untrack(5, None);
    g.untrack(6, Some(Path::new("/x")));
    assert_eq!(g.shared.lock().live.get("5@-"), Some(&1));
    g.untrack(5, None);
    assert!(g.shared.lock().live.is_empty());
    assert_eq!(full_list(&g.shared.lock().live), b"=\n");
}

#[test]
fn an_idle_stopped_guardian_is_replaced_too() {
    let g = Guardian::new(start);
    let old = g.pid().unwrap();
    kill(Pid::from_raw(old), Signal::SIGSTOP).unwrap();
    // No writes at all: the writer's health check notices.
    wait_until("a fresh guardian", || g.pid().is_some_and(|p| p != old));
    assert!(!exists(old));
}

#[test]
fn thousands_of_listed_terminals_are_all_killed() {
    // One shell command line for all of them would exceed the kernel's limit for one
    // argument (128 KiB) and kill nothing.
    let g = Guardian::new(start);
    let mut child = Command::new("sleep")
        .arg("60")
        .process_group(0)
        .spawn()
        .unwrap();
    for i in 0..6000 {
        g.track(2_000_000_000 + i, None);
    }
    g.track(child.id() as i32, None);
    for i in 6000..12000 {
        g.track(2_000_000_000 + i, None);
    }
    wait_until("the list written", || g.shared.lock().pending.is_empty());
    drop(g);
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
}

#[test]
fn a_listed_session_loses_its_jobs_in_other_groups_too() {
    let g = Guardian::new(start);
    let mut cmd = crate::sys::unixtest::setsid_bash("set -m; sleep 60 & echo $!; wait");
    cmd.stdout(std::process::Stdio::piped());
    let mut leader = cmd.spawn().unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(leader.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let job: i32 = line.trim().parse().unwrap();
    let sid = leader.id() as i32;
    assert_ne!(
        crate::sys::procs::list()
            .iter()
            .find(|p| p.pid == job)
            .map(|p| p.pgrp),
        Some(sid),
        "the job has a group of its own"
    );
    g.track(sid, None);
    wait_until("the list written", || g.shared.lock().pending.is_empty());
    drop(g);
    wait_until("the job killed", || {
        std::fs::read_to_string(format!("/proc/{job}/stat")).map_or(true, |s| s.contains(") Z "))
    });
    leader.wait().unwrap();
}
