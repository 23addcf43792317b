//! The output reader on a real pipe: a flood is read in large reads, paced by the timer, with
//! every byte in order; a quiet command's output is read on the first wake, with no wait.
//! Reads and waits are counted, never timed.

use std::os::fd::OwnedFd;

use nix::fcntl::{fcntl, FcntlArg, OFlag};

use super::*;

fn reader_and_writer() -> (OutputReader, OwnedFd) {
    let (r, w) = pipe_cloexec().unwrap();
    fcntl(&r, FcntlArg::F_SETFL(OFlag::O_NONBLOCK)).unwrap();
    (OutputReader::new(r).unwrap(), w)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn an_echo_is_read_on_the_first_wake_without_waiting() {
    runtime().block_on(async {
        let (mut reader, w) = reader_and_writer();
        nix::unistd::write(&w, b"hi\n").unwrap();
        let mut got = Vec::new();
        let outcome = reader
            .read(16, |b| {
                got.extend_from_slice(b);
                true
            })
            .await;
        assert_eq!(outcome, ReadOutcome::Drained);
        assert_eq!(got, b"hi\n");
        let stats = reader.stats();
        assert_eq!((stats.reads, stats.waits), (1, 0));
    });
}

#[cfg(target_os = "linux")]
#[test]
fn a_flood_is_read_in_large_paced_reads_with_every_byte_in_order() {
    const TOTAL: usize = 256 << 20;
    const WRITE: usize = 8 << 10; // what `head` writes at a time
    runtime().block_on(async {
        let (mut reader, w) = reader_and_writer();
        // The bytes count up (mod 251), so a lost or repeated piece shows.
        let pattern: Vec<u8> = (0..WRITE + 251).map(|i| (i % 251) as u8).collect();
        let writer = std::thread::spawn(move || {
            let mut at = 0usize;
            while at < TOTAL {
                let chunk = &pattern[at % 251..at % 251 + WRITE];
                let mut off = 0;
                while off < WRITE {
                    off += nix::unistd::write(&w, &chunk[off..]).unwrap();
                }
                at += WRITE;
            }
        });
        let mut seen = 0usize;
        let mut in_order = true;
        // Whether a paced wait ever had the descriptor out of the reactor (where each write
        // would wake the reader).
        let mut out_of_reactor = false;
        loop {
            let outcome = reader
                .read(16, |b| {
                    // First, middle and last byte of each read (every byte is slow unoptimized).
                    let n = b.len();
                    in_order &= [0, n / 2, n - 1]
                        .iter()
                        .all(|&i| b[i] == ((seen + i) % 251) as u8);
                    seen += n;
                    true
                })
                .await;
            out_of_reactor |= reader.paced.is_some() && reader.fd.is_none();
            if outcome == ReadOutcome::Eof {
                break;
            }
        }
        writer.join().unwrap();
        assert!(
            out_of_reactor,
            "a paced wait keeps the pipe out of the reactor"
        );
        assert_eq!(seen, TOTAL);
        assert!(in_order, "the bytes arrived out of order");
        let stats = reader.stats();
        assert_eq!(stats.bytes, TOTAL);
        // An eager reader as fast as the writer takes each 8 KiB write alone.
        assert!(
            stats.bytes / stats.reads >= 64 << 10,
            "{} reads averaging {} bytes ({} waits)",
            stats.reads,
            stats.bytes / stats.reads,
            stats.waits
        );
        assert!(stats.waits > 0, "the flood was paced");
    });
}

#[test]
fn a_pty_flood_is_never_paced() {
    // A pty's buffer cannot grow: a writer would block on it while the reader waits.
    const TOTAL: usize = 16 << 20;
    runtime().block_on(async {
        let pty = crate::sys::pty::open(crate::sys::pty::PtySize::default()).unwrap();
        let mut reader = OutputReader::new(pty.master).unwrap();
        let slave = pty.slave;
        let writer = std::thread::spawn(move || {
            let chunk = vec![b'x'; 8 << 10];
            let mut left = TOTAL;
            while left > 0 {
                left -= nix::unistd::write(&slave, &chunk[..chunk.len().min(left)]).unwrap();
            }
        });
        let mut seen = 0usize;
        while seen < TOTAL {
            let outcome = reader
                .read(16, |b| {
                    seen += b.len();
                    true
                })
                .await;
            assert!(reader.fd.is_some(), "a pty stays in the reactor");
            if outcome == ReadOutcome::Eof {
                break;
            }
        }
        writer.join().unwrap();
        assert_eq!(seen, TOTAL);
        assert_eq!(reader.stats().waits, 0);
    });
}

/// A flood that pauses ends its pacing: the descriptor goes back in the reactor, and the next
/// output after the pause is read as soon as it comes (no paced wait, no busy loop).
#[cfg(target_os = "linux")]
#[test]
fn a_paused_flood_puts_the_pipe_back_in_the_reactor() {
    runtime().block_on(async {
        let (mut reader, w) = reader_and_writer();
        let (go_on, resume) = std::sync::mpsc::channel::<()>();
        let writer = std::thread::spawn(move || {
            let chunk = [b'x'; 8 << 10];
            for _ in 0..4096 {
                let mut off = 0;
                while off < chunk.len() {
                    off += nix::unistd::write(&w, &chunk[off..]).unwrap();
                }
            }
            resume.recv().unwrap();
            nix::unistd::write(&w, b"after the pause\n").unwrap();
        });
        let mut seen = 0usize;
        let mut paced = false;
        while seen < 32 << 20 {
            reader
                .read(16, |b| {
                    seen += b.len();
                    true
                })
                .await;
            paced |= reader.paced.is_some();
        }
        assert!(paced, "the flood was paced");
        // The flood has stopped: the next wait finds the pipe empty and ends the pacing.
        let mut tail = Vec::new();
        let unpaced = tokio::time::timeout(std::time::Duration::from_secs(10), async {
            while reader.paced.is_some() {
                reader
                    .read(16, |b| {
                        tail.extend_from_slice(b);
                        true
                    })
                    .await;
                // A reader that never leaves the pacing would spin here: let the timeout run.
                tokio::task::yield_now().await;
            }
        })
        .await;
        assert!(unpaced.is_ok(), "the pacing ended once the pipe was empty");
        assert!(reader.fd.is_some(), "back in the reactor");
        let waits = reader.stats().waits;
        go_on.send(()).unwrap();
        let read = tokio::time::timeout(std::time::Duration::from_secs(10), async {
            while !tail.ends_with(b"after the pause\n") {
                reader
                    .read(16, |b| {
                        tail.extend_from_slice(b);
                        true
                    })
                    .await;
            }
        })
        .await;
        assert!(read.is_ok(), "the output after the pause was read");
        assert_eq!(
            reader.stats().waits,
            waits,
            "read on its wake, with no paced wait"
        );
        writer.join().unwrap();
    });
}
