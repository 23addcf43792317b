//! The pacing policy against a model of a pipe: a writer putting fixed-size chunks into a
//! pipe of bounded capacity at a given rate (blocking while the pipe is full), and a reader
//! that wakes a microsecond after the pipe becomes readable, reads as `read_some` does, and
//! waits as the policy says. Time is simulated, so nothing here depends on the machine.

use super::*;

const KIB: usize = 1024;
const MIB: usize = 1024 * KIB;
/// The reader's buffer (`READ_BUF_SIZE`), the eager loop's short read (`SMALL_READ`) and the
/// most a paced read takes (`PACED_READ`).
const BUF: usize = MIB;
const SMALL: usize = 64 * KIB;
const PACED: usize = 128 * KIB;

/// One phase of a writer: from `at_us`, `bytes` in `chunk`-sized writes at `rate` bytes/µs.
#[derive(Clone, Copy)]
struct Phase {
    at_us: u64,
    bytes: usize,
    chunk: usize,
    rate: f64,
}

#[derive(Default, Debug)]
struct Outcome {
    /// Sizes of the reads that returned data, in order.
    reads: Vec<usize>,
    /// Every wait the policy asked for.
    waits: Vec<Duration>,
    /// When each phase's first byte was read, relative to when it was written (µs).
    first_byte_delay_us: Vec<u64>,
    /// When the last byte was read (µs).
    end_us: u64,
    /// Microseconds the writer spent blocked on a full pipe.
    blocked_us: u64,
}

/// Runs the model until every phase was written and read. `capacity` is the pipe's size once
/// the policy asks for it (the pipe starts at 64 KiB).
fn simulate(phases: &[Phase], capacity: usize) -> Outcome {
    let base = Instant::now();
    let at = |us: u64| base + Duration::from_micros(us);
    let mut pacer = Pacer::default();
    let mut out = Outcome::default();
    let mut cap = 64 * KIB;
    let mut level = 0usize;
    let (mut phase, mut written_in_phase, mut credit) = (0usize, 0usize, 0.0f64);
    let mut first_write_us: Vec<u64> = Vec::new();
    // Reader: reads at `read_at` once readable; `timer_until` while a paced wait runs.
    let mut read_at: Option<u64> = None;
    let mut timer_until: Option<u64> = None;
    let mut t = 0u64;
    loop {
        // Writer.
        if let Some(p) = phases.get(phase) {
            if t >= p.at_us {
                credit = (credit + p.rate).min(p.chunk as f64 + p.rate);
                let mut blocked = false;
                while written_in_phase < p.bytes && credit >= p.chunk as f64 {
                    if level + p.chunk > cap {
                        blocked = true;
                        break;
                    }
                    if written_in_phase == 0 {
                        first_write_us.push(t);
                    }
                    level += p.chunk;
                    written_in_phase += p.chunk;
                    credit -= p.chunk as f64;
                }
                if blocked {
                    out.blocked_us += 1;
                }
                if written_in_phase >= p.bytes {
                    phase += 1;
                    written_in_phase = 0;
                    credit = 0.0;
                }
            }
        }
        // Reader.
        if timer_until.is_some_and(|u| t >= u) {
            timer_until = None;
        }
        if timer_until.is_none() && read_at.is_none() && level > 0 {
            read_at = Some(t + 1);
        }
        if read_at == Some(t) {
            read_at = None;
            let (drained_below, most) = if pacer.pacing() {
                (PACED, PACED)
            } else {
                (SMALL, BUF)
            };
            let mut bytes = 0;
            for _ in 0..16 {
                let n = level.min(most);
                if n == 0 {
                    break;
                }
                if out.first_byte_delay_us.len() < first_write_us.len() && bytes == 0 {
                    let first = first_write_us[out.first_byte_delay_us.len()];
                    if out.reads.iter().sum::<usize>()
                        == written_before(phases, out.first_byte_delay_us.len())
                    {
                        out.first_byte_delay_us.push(t - first);
                    }
                }
                level -= n;
                bytes += n;
                out.reads.push(n);
                if n < drained_below {
                    break;
                }
            }
            let wait = pacer.after_wake(at(t), bytes, || {
                cap = cap.max(capacity);
                cap
            });
            if let Some(w) = wait {
                out.waits.push(w);
                timer_until = Some(t + w.as_micros() as u64);
            }
        }
        if phase == phases.len() && level == 0 && read_at.is_none() {
            out.end_us = t;
            return out;
        }
        t += 1;
    }
}

/// What the phases before `i` wrote.
fn written_before(phases: &[Phase], i: usize) -> usize {
    phases[..i].iter().map(|p| p.bytes).sum()
}

fn average(reads: &[usize]) -> usize {
    reads.iter().sum::<usize>() / reads.len().max(1)
}

/// `head -c 512M /dev/zero` on a quiet machine: 8 KiB writes at 4 GB/s.
const FLOOD: Phase = Phase {
    at_us: 0,
    bytes: 512 * MIB,
    chunk: 8 * KIB,
    rate: 4000.0,
};

#[test]
fn a_flood_is_read_in_large_reads_without_slowing_the_writer() {
    let out = simulate(&[FLOOD], MIB);
    let total: usize = out.reads.iter().sum();
    assert_eq!(total, FLOOD.bytes);
    // An eager reader as fast as the writer reads each 8 KiB write alone (65,536 reads); paced,
    // about TARGET a read.
    assert!(
        average(&out.reads) >= TARGET * 3 / 4,
        "{} reads averaging {} bytes",
        out.reads.len(),
        average(&out.reads)
    );
    // The writer alone needs 512 MiB / 4000 B/µs; pacing may cost it at most 5%.
    let alone = (FLOOD.bytes as f64 / FLOOD.rate) as u64;
    assert!(
        out.end_us <= alone + alone / 20,
        "took {} µs, the writer alone {alone} µs (blocked {} µs)",
        out.end_us,
        out.blocked_us
    );
    assert!(out.waits.iter().all(|w| *w <= MAX_WAIT && *w >= MIN_WAIT));
}

#[test]
fn a_slower_flood_is_read_in_reads_of_the_target_size() {
    // 200 MB/s: TARGET takes about 0.5 ms to arrive; the wait is that, and each read about it.
    let slow = Phase {
        rate: 200.0,
        bytes: 64 * MIB,
        ..FLOOD
    };
    let out = simulate(&[slow], MIB);
    assert_eq!(out.reads.iter().sum::<usize>(), slow.bytes);
    assert!(
        average(&out.reads) >= TARGET * 3 / 4,
        "average {}",
        average(&out.reads)
    );
    assert!(out.waits.iter().all(|w| *w <= MAX_WAIT));
    assert_eq!(out.blocked_us, 0, "the writer never waits for room");
}

#[test]
fn a_quiet_commands_output_is_read_at_once() {
    // `echo hi`, then a line every 5 ms: each read the microsecond after the write.
    let line = |at_us| Phase {
        at_us,
        bytes: 4 * KIB,
        chunk: 4 * KIB,
        rate: 4096.0,
    };
    let phases: Vec<Phase> = (0..20).map(|i| line(i * 5_000)).collect();
    let out = simulate(&phases, MIB);
    assert!(out.waits.is_empty(), "waits: {:?}", out.waits);
    assert_eq!(out.reads.len(), 20);
    assert_eq!(out.first_byte_delay_us, vec![1; 20]);
}

#[test]
fn the_first_output_after_a_flood_pauses_is_read_at_once() {
    // A flood, 10 ms of silence, then one short line: the line is not paced.
    let flood = Phase {
        bytes: 32 * MIB,
        ..FLOOD
    };
    let line = Phase {
        at_us: 20_000,
        bytes: 4 * KIB,
        chunk: 4 * KIB,
        rate: 4096.0,
    };
    let out = simulate(&[flood, line], MIB);
    assert!(!out.waits.is_empty(), "the flood was paced");
    assert_eq!(out.first_byte_delay_us, vec![1, 1]);
    assert_eq!(*out.reads.last().unwrap(), 4 * KIB);
}

#[test]
fn a_pipe_that_cannot_grow_is_never_paced() {
    // A pty master (no pipe capacity) or a pipe the limits keep at 64 KiB.
    for capacity in [0, 64 * KIB] {
        let out = simulate(
            &[Phase {
                bytes: 16 * MIB,
                ..FLOOD
            }],
            capacity,
        );
        assert!(
            out.waits.is_empty(),
            "capacity {capacity}: {:?}",
            out.waits.len()
        );
    }
}

#[test]
fn a_flood_that_slows_down_is_read_eagerly_again() {
    // 32 MiB at 4 GB/s, then 1 MiB in 4 KiB writes at 8 MB/s: the slow part is not paced.
    let fast = Phase {
        bytes: 32 * MIB,
        ..FLOOD
    };
    let slow = Phase {
        at_us: 0,
        bytes: MIB,
        chunk: 4 * KIB,
        rate: 8.0,
    };
    let out = simulate(&[fast, slow], MIB);
    let slow_reads = out.reads.iter().rev().take(200).collect::<Vec<_>>();
    assert!(
        slow_reads.iter().all(|n| **n <= 8 * KIB),
        "the slow part is read write by write: {slow_reads:?}"
    );
}
