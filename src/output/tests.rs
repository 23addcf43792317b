//! Tests of the retained output: every limit and chunking, every cut offset of each
//! multibyte width, invalid bytes, holding back an incomplete character, segments.

use super::*;

/// The expected tail: the longest suffix of `s` starting on a char boundary within `limit`.
fn expected_tail(s: &str, limit: usize) -> &str {
    let mut i = s.len().saturating_sub(limit);
    while !s.is_char_boundary(i) {
        i += 1;
    }
    &s[i..]
}

fn sample() -> String {
    // 1-, 2-, 3- and 4-byte characters interleaved.
    "a\u{e9}\u{20ac}\u{1F600}b\u{3b1}\u{4e2d}\u{1F680}cd\u{df}\u{2603}\u{10348}".repeat(3)
}

/// Deterministic chunk sizes so splits land at every kind of offset.
fn chunks(data: &[u8], seed: usize) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut k = seed;
    while i < data.len() {
        k = (k * 7 + 3) % 11;
        let n = (k % 5 + 1).min(data.len() - i);
        out.push(&data[i..i + n]);
        i += n;
    }
    out
}

#[test]
fn every_limit_every_split_keeps_the_exact_tail() {
    let s = sample();
    for limit in 0..=s.len() + 2 {
        for seed in 0..4 {
            let mut b = OutputBuffer::new(Some(limit));
            for c in chunks(s.as_bytes(), seed) {
                b.write(c);
            }
            let snap = b.snapshot(true);
            assert_eq!(snap.output, expected_tail(&s, limit), "limit {limit}");
            assert!(snap.output.len() <= limit);
            assert_eq!(snap.truncated, limit < s.len(), "limit {limit}");
        }
    }
}

#[test]
fn each_multibyte_char_cut_at_every_offset() {
    for ch in ["\u{e9}", "\u{20ac}", "\u{1F600}"] {
        let s = format!("x{ch}{ch}");
        for limit in 0..=s.len() {
            let mut b = OutputBuffer::new(Some(limit));
            b.write(s.as_bytes());
            let snap = b.snapshot(false);
            assert_eq!(
                snap.output,
                expected_tail(&s, limit),
                "{ch:?} limit {limit}"
            );
        }
    }
}

#[test]
fn incomplete_char_is_held_back_while_running() {
    let s = "ab\u{20ac}\u{1F600}";
    let bytes = s.as_bytes();
    for cut in 0..=bytes.len() {
        let mut b = OutputBuffer::new(None);
        b.write(&bytes[..cut]);
        let running = b.snapshot(false).output;
        let mut boundary = cut;
        while !s.is_char_boundary(boundary) {
            boundary -= 1;
        }
        assert_eq!(running, &s[..boundary], "cut {cut}");
        let done = b.snapshot(true).output;
        if boundary == cut {
            assert_eq!(done, &s[..cut]);
        } else {
            assert_eq!(done, format!("{}\u{FFFD}", &s[..boundary]));
        }
        // Completing the character later yields it, not a replacement.
        b.write(&bytes[cut..]);
        assert_eq!(b.snapshot(false).output, s);
    }
}

#[test]
fn invalid_bytes_become_replacement_within_limit() {
    let mut b = OutputBuffer::new(None);
    b.write(b"ok\xff\xfe!");
    let snap = b.snapshot(false);
    assert_eq!(snap.output, "ok\u{FFFD}\u{FFFD}!");
    assert!(!snap.truncated);

    // 4 raw bytes fit a limit of 4, but decode to 9: the snapshot is trimmed to fit.
    let mut b = OutputBuffer::new(Some(4));
    b.write(b"\xff\xffab");
    let snap = b.snapshot(true);
    assert!(snap.output.len() <= 4, "{:?}", snap.output);
    assert_eq!(snap.output, "ab");
    assert!(snap.truncated);
    // Invalid lead bytes never count as an incomplete character.
    let mut b = OutputBuffer::new(Some(8));
    b.write(b"x\xf8");
    assert_eq!(b.snapshot(false).output, "x\u{FFFD}");
}

#[test]
fn limit_zero_keeps_nothing_and_one_keeps_one_ascii() {
    let mut b = OutputBuffer::new(Some(0));
    assert_eq!(
        b.snapshot(true),
        Snapshot {
            output: String::new(),
            truncated: false
        }
    );
    b.write(b"hello");
    assert_eq!(b.snapshot(true).output, "");
    assert!(b.snapshot(true).truncated);
    assert_eq!(b.storage_bytes(), 0);

    let mut b = OutputBuffer::new(Some(1));
    b.write(b"hello");
    assert_eq!(b.snapshot(true).output, "o");
    b.write("\u{e9}".as_bytes());
    // A 2-byte character cannot fit in 1 byte: nothing is kept.
    assert_eq!(b.snapshot(true).output, "");
    assert!(b.snapshot(true).truncated);
}

#[test]
fn truncated_is_sticky_and_exact() {
    let mut b = OutputBuffer::new(Some(10));
    b.write(b"0123456789");
    assert!(!b.snapshot(false).truncated);
    b.write(b"a");
    let snap = b.snapshot(false);
    assert!(snap.truncated);
    assert_eq!(snap.output, "123456789a");
    assert!(b.snapshot(false).truncated);
}

#[test]
fn storage_grows_with_what_is_retained_not_the_limit() {
    let mut b = OutputBuffer::new(Some(1 << 20));
    assert_eq!(b.storage_bytes(), 0);
    b.write(b"start\n");
    assert!(b.storage_bytes() <= MIN_SEGMENT);
    for _ in 0..1000 {
        b.write(&[b'z'; 4096]);
    }
    // The limit, plus at most the open segment's room and the oldest one's dropped start.
    assert!(b.storage_bytes() <= (1 << 20) + 2 * MAX_SEGMENT);
    assert_eq!(b.retained_bytes(), 1 << 20);
    assert_eq!(b.total_bytes(), 6 + 4096 * 1000);
}

#[test]
fn snapshots_of_a_wrapped_ring_equal_the_tail_at_every_point() {
    // Odd-sized writes of multibyte text through a small limit: the ring wraps at every
    // position; each raw snapshot (running and exited) equals the rotated tail's.
    let text = sample().repeat(3);
    let bytes = text.as_bytes();
    for limit in [7usize, 16, 33, 100] {
        let mut b = OutputBuffer::new(Some(limit));
        let mut at = 0;
        let mut step = 1;
        while at < bytes.len() {
            let end = (at + step).min(bytes.len());
            b.write(&bytes[at..end]);
            at = end;
            step = step % 13 + 1;
            for exited in [false, true] {
                let got = b.raw_snapshot(exited).into_bytes();
                let tail = b.raw_tail();
                let hold = if exited {
                    0
                } else {
                    incomplete_suffix_len(&tail)
                };
                assert_eq!(got, tail[..tail.len() - hold], "limit {limit} at {at}");
            }
        }
    }
}

#[test]
fn snapshots_across_sealed_segments_are_exact_and_never_change() {
    // A limit of many segments, odd-sized multibyte writes and a snapshot after each (some
    // seal the open segment, some copy its small part): every snapshot is the exact tail,
    // and one taken earlier still holds what it saw after the buffer moved on (segments a
    // snapshot refers to are never written again).
    let text = sample().repeat(4000);
    let bytes = text.as_bytes();
    let limit = 256 * 1024 + 17;
    let mut b = OutputBuffer::new(Some(limit));
    let (mut at, mut step, mut kept) = (0, 1, Vec::new());
    while at < bytes.len() {
        let end = (at + step).min(bytes.len());
        b.write(&bytes[at..end]);
        at = end;
        step = (step * 31 + 7) % 9000 + 1;
        let mut start = at.saturating_sub(limit);
        while !text.is_char_boundary(start) {
            start += 1;
        }
        let mut whole = at;
        while !text.is_char_boundary(whole) {
            whole -= 1;
        }
        let running = text[start..whole].to_string();
        let done = if whole == at {
            running.clone()
        } else {
            expected_tail(&format!("{running}\u{FFFD}"), limit).to_string()
        };
        for (exited, expect) in [(false, running), (true, done)] {
            assert_eq!(b.snapshot(exited).output, expect, "at {at} exited {exited}");
            kept.push((b.raw_snapshot(exited), expect, exited));
        }
    }
    assert!(kept.len() > 20);
    for (snap, expect, exited) in kept {
        assert_eq!(snap.decode().output, expect, "exited {exited}");
    }
    assert_eq!(b.snapshot(true).output, expected_tail(&text, limit));
}

#[test]
fn decode_tells_ascii_and_stays_exact() {
    let mut b = OutputBuffer::new(Some(10_000));
    for _ in 0..1000 {
        b.write(b"0123456789abcdef\n");
    }
    let (snap, ascii) = b.raw_snapshot(false).decode_ascii();
    assert!(ascii);
    assert_eq!(
        snap.output,
        "0123456789abcdef\n".repeat(1000)[17_000 - 10_000..]
    );
    b.write("\u{20ac}\u{1F600}".as_bytes());
    let (again, ascii) = b.raw_snapshot(false).decode_ascii();
    assert!(!ascii);
    assert!(again.output.ends_with("\n\u{20ac}\u{1F600}"));
    assert_eq!(again.output.len(), 10_000);
    let text = RawSnapshot::from_text(b"x\xffy".to_vec(), None, false);
    let (t, ascii) = text.decode_ascii();
    assert_eq!((t.output.as_str(), ascii), ("x\u{FFFD}y", false));
}

#[test]
fn a_dropped_segment_is_reused_only_when_no_snapshot_holds_it() {
    let mut b = OutputBuffer::new(Some(64 * 1024));
    let seg = b.segment;
    for _ in 0..17 {
        b.write(&vec![b'a'; seg]);
    }
    // The oldest whole segment, which nothing refers to, is dropped by the next write and
    // becomes the segment that write fills.
    let oldest = b.sealed[0].as_ptr();
    b.write(&vec![b'b'; seg]);
    assert_eq!(
        b.open.as_ptr(),
        oldest,
        "the dropped segment is written again"
    );
    assert_eq!(&b.open[..], &vec![b'b'; seg][..]);
    // A snapshot holds every segment: dropping them must not recycle any.
    let held = b.raw_snapshot(true);
    let held_ptrs: Vec<*const u8> = b.sealed.iter().map(|s| s.as_ptr()).collect();
    let before = held.clone().decode().output;
    for _ in 0..20 {
        b.write(&vec![b'd'; seg]);
        assert!(!held_ptrs.contains(&b.open.as_ptr()));
    }
    assert_eq!(held.decode().output, before);
    assert_eq!(b.snapshot(true).output, "d".repeat(64 * 1024));
}

#[test]
fn ring_wraps_and_keeps_order_across_many_writes() {
    let mut b = OutputBuffer::new(Some(5000));
    let mut all = Vec::new();
    for i in 0..20_000u32 {
        let line = format!("{i}\n");
        b.write(line.as_bytes());
        all.extend_from_slice(line.as_bytes());
        if i % 997 == 0 {
            let s = String::from_utf8(all.clone()).unwrap();
            assert_eq!(b.snapshot(false).output, expected_tail(&s, 5000));
        }
    }
    let s = String::from_utf8(all).unwrap();
    assert_eq!(b.snapshot(true).output, expected_tail(&s, 5000));
}

#[test]
fn unlimited_keeps_everything() {
    let mut b = OutputBuffer::new(None);
    let s = sample().repeat(100);
    for c in chunks(s.as_bytes(), 1) {
        b.write(c);
    }
    let snap = b.snapshot(true);
    assert_eq!(snap.output, s);
    assert!(!snap.truncated);
}

#[test]
fn raw_tail_is_the_retained_bytes_from_a_boundary() {
    let mut b = OutputBuffer::new(Some(5));
    b.write(b"ab");
    assert_eq!(b.raw_tail(), b"ab");
    b.write(b"x\xe2\x82\xac\xff");
    // 7 bytes written, 5 kept: the euro sign is whole, then the raw 0xff.
    b.write(b"\xff");
    assert_eq!(b.raw_tail(), b"\xe2\x82\xac\xff\xff"[..].as_ref());
    b.write(b"z");
    // The euro sign was cut: its continuation bytes are skipped.
    assert_eq!(b.raw_tail(), b"\xff\xffz");
}

#[test]
fn big_write_larger_than_limit() {
    let mut b = OutputBuffer::new(Some(3));
    b.write(b"ab");
    b.write(b"cdefg");
    assert_eq!(b.snapshot(true).output, "efg");
    b.write(b"h");
    assert_eq!(b.snapshot(true).output, "fgh");
}
