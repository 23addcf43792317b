//! The terminal with real processes, without Node: draining after the exit, kill through the
//! containment's escalation, the timeout, release.

use std::time::Duration;

use crate::exit::ExitStatus;
use crate::spawn::SpawnRequest;
use crate::start::{start, TerminalRequest};
use crate::terminal::{Terminal, TerminalConfig};

fn request(command: &str, kill_grace_ms: u64) -> TerminalRequest {
    TerminalRequest {
        spawn: SpawnRequest {
            command: command.into(),
            inherit_env: true,
            ..Default::default()
        },
        terminal: TerminalConfig {
            kill_grace: Duration::from_millis(kill_grace_ms),
            ..Default::default()
        },
    }
}

fn run(req: &TerminalRequest) -> std::sync::Arc<Terminal> {
    start(
        req,
        std::env::vars_os().collect(),
        std::path::Path::new("/"),
    )
    .unwrap()
}

fn output(t: &Terminal) -> String {
    t.raw_output().0.decode().output
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.contains(") Z "))
        .unwrap_or(false)
}

#[tokio::test(flavor = "multi_thread")]
async fn every_byte_written_before_the_exit_is_in_when_it_is_published() {
    let t = run(&request(
        "head -c 3000000 /dev/zero | tr '\\0' a; exit 3",
        2000,
    ));
    assert_eq!(t.wait_for_exit().await, ExitStatus::code(3));
    assert_eq!(t.bytes_written(), 3_000_000);
    let out = output(&t);
    assert_eq!(out.len(), 3_000_000);
    assert!(out.bytes().all(|b| b == b'a'));
    t.mark_released();
    t.finish_release().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_descendant_holding_the_pipe_does_not_hold_back_the_exit() {
    let t = run(&request("echo first; sleep 30 & echo $! ; exit 0", 2000));
    assert_eq!(t.wait_for_exit().await, ExitStatus::code(0));
    let out = output(&t);
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("first"));
    let sleeper: i32 = lines.next().unwrap().parse().unwrap();
    assert!(alive(sleeper), "published while the descendant still runs");
    // Release kills what is left of the group.
    t.mark_released();
    t.finish_release().await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while alive(sleeper) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!alive(sleeper));
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_is_term_for_a_plain_command_and_kill_for_one_that_traps_it() {
    let plain = run(&request("exec sleep 30", 5000));
    plain.kill().await;
    assert_eq!(
        plain.exit_status().unwrap().signal.as_deref(),
        Some("SIGTERM")
    );

    let stubborn = run(&request(
        "trap '' TERM; echo ready; while :; do sleep 0.05; done",
        100,
    ));
    while !output(&stubborn).contains("ready") {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    stubborn.kill().await;
    assert_eq!(
        stubborn.exit_status().unwrap().signal.as_deref(),
        Some("SIGKILL")
    );
    // Killing an exited terminal is a no-op.
    stubborn.kill().await;
    for t in [plain, stubborn] {
        t.mark_released();
        t.finish_release().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_timeout_kills_through_the_same_escalation() {
    let mut req = request("exec sleep 30", 2000);
    req.terminal.timeout = Some(Duration::from_millis(50));
    let t = run(&req);
    let status = t.wait_for_exit().await;
    assert_eq!(status.signal.as_deref(), Some("SIGTERM"));
    assert!(t.timed_out());
    t.mark_released();
    t.finish_release().await;
    assert!(t.check_live().is_err());
}

/// A subscriber that is behind until opened: the pump must stop reading for it.
#[derive(Default)]
struct Gate {
    open: std::sync::atomic::AtomicBool,
    got: std::sync::atomic::AtomicU64,
    waker: std::sync::Mutex<Option<std::sync::Arc<tokio::sync::Notify>>>,
}

impl crate::terminal::OutputSink for std::sync::Arc<Gate> {
    fn push(&self, chunk: &[u8]) {
        self.got
            .fetch_add(chunk.len() as u64, std::sync::atomic::Ordering::SeqCst);
    }
    fn close(&self) {}
    fn behind(&self) -> bool {
        !self.open.load(std::sync::atomic::Ordering::SeqCst)
    }
    fn set_waker(&self, waker: std::sync::Arc<tokio::sync::Notify>) {
        *self.waker.lock().unwrap() = Some(waker);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_listener_behind_pauses_reading_and_the_exit_waits_for_what_was_in_the_pipe() {
    // The first 1000 bytes are read alone; the listener is behind from then on, so the pump
    // stops, the other 59,000 wait in the pipe (64 KiB hold them), the command exits, and a
    // descendant holds the pipe open, so no end of file comes. The exit must not be published at the drain deadline
    // before those bytes are read.
    let gate = std::sync::Arc::new(Gate::default());
    let mut req = request(
        "sleep 30 & head -c 1000 /dev/zero; sleep 0.2; head -c 59000 /dev/zero; exit 0",
        2000,
    );
    req.terminal.first_sink = Some(crate::terminal::SharedSink(std::sync::Arc::new(
        gate.clone(),
    )));
    let t = run(&req);
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(
        t.exit_status().is_none(),
        "published before the pipe was read"
    );
    assert!(
        t.bytes_written() < 60_000,
        "read on for a listener that is behind"
    );
    gate.open.store(true, std::sync::atomic::Ordering::SeqCst);
    let waker = gate
        .waker
        .lock()
        .unwrap()
        .clone()
        .expect("the waker was given");
    waker.notify_one();
    assert_eq!(t.wait_for_exit().await, ExitStatus::code(0));
    assert_eq!(t.bytes_written(), 60_000);
    assert_eq!(gate.got.load(std::sync::atomic::Ordering::SeqCst), 60_000);
    t.mark_released();
    t.finish_release().await;
}
