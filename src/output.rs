//! The retained output of a terminal: a byte-limited tail of everything the process wrote.
//!
//! Invariants:
//! - Raw bytes are kept in shared, reference-counted segments ([`Bytes`]) of at most
//!   [`MAX_SEGMENT`] bytes that grow only as output arrives (nothing is preallocated at the
//!   limit's size). The storage never exceeds the limit by more than two segments (the open
//!   segment's spare room and the dropped start of the oldest one), 1/8 of a large limit.
//! - A segment is never written once a snapshot may see it, so a snapshot takes references to
//!   the segments under the terminal's lock (O(number of segments), no copy of the output)
//!   and copies and decodes them outside it.
//! - A snapshot is valid UTF-8 whose UTF-8 length never exceeds the limit; its first byte is a
//!   character boundary of the stream (a character cut by the limit is dropped whole).
//! - Invalid bytes become U+FFFD, and the snapshot is trimmed again so it still fits.
//! - While the process runs, an incomplete character at the end is held back; once it exited,
//!   it becomes U+FFFD.
//! - `truncated` is sticky: true as soon as any byte was dropped.

use std::collections::VecDeque;

use bytes::{Bytes, BytesMut};

/// Smallest segment (unless the limit is smaller).
const MIN_SEGMENT: usize = 4096;
/// Largest segment: a 1 MiB limit is kept in 16 segments.
const MAX_SEGMENT: usize = 64 * 1024;
/// A snapshot seals the open segment's filled part from this size on (no copy); a smaller
/// part is copied instead, so that fast polls of slow output do not leave many tiny segments.
const SEAL_MIN: usize = 4096;

/// A decoded view of the retained output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// Retained output as UTF-8.
    pub output: String,
    /// Whether any byte was ever dropped to respect the limit.
    pub truncated: bool,
}

/// Raw bytes for a snapshot, taken under the lock and decoded outside it: references to the
/// retained segments (their bytes are copied only by [`RawSnapshot::decode`]).
#[derive(Debug, Clone)]
pub struct RawSnapshot {
    /// Retained bytes from a character boundary, incomplete trailing character held back, in
    /// order.
    parts: Vec<Bytes>,
    /// The byte limit.
    limit: Option<usize>,
    /// Whether bytes were dropped so far.
    truncated: bool,
}

impl RawSnapshot {
    /// A snapshot of already rendered text (text mode): `bytes` is taken as is.
    pub fn from_text(bytes: Vec<u8>, limit: Option<usize>, truncated: bool) -> Self {
        Self {
            parts: vec![Bytes::from(bytes)],
            limit,
            truncated,
        }
    }

    /// The bytes as one contiguous buffer (a copy unless this snapshot owns a single buffer).
    #[cfg(test)]
    pub fn into_bytes(mut self) -> Vec<u8> {
        if self.parts.len() == 1 {
            return Vec::from(self.parts.pop().unwrap_or_default());
        }
        let len = self.parts.iter().map(Bytes::len).sum();
        let mut bytes = Vec::with_capacity(len);
        for p in &self.parts {
            bytes.extend_from_slice(p);
        }
        bytes
    }

    /// Decodes: valid UTF-8 passes through without a further copy; invalid bytes become
    /// U+FFFD, and the result is trimmed at a character boundary to fit the limit again.
    #[cfg(test)]
    pub fn decode(self) -> Snapshot {
        self.decode_ascii().0
    }

    /// Decodes as `decode` does, and tells whether the output is ASCII: that is checked first
    /// (one fast pass over the bytes), and ASCII needs no further UTF-8 validation; the caller
    /// gets the answer instead of checking again.
    pub fn decode_ascii(mut self) -> (Snapshot, bool) {
        let (limit, mut truncated) = (self.limit, self.truncated);
        let bytes = if self.parts.len() == 1 && self.parts[0].is_unique() {
            // A buffer nothing else refers to (text mode's own): taken without a copy.
            Vec::from(self.parts.pop().unwrap_or_default())
        } else {
            let mut bytes = Vec::with_capacity(self.parts.iter().map(Bytes::len).sum());
            for p in &self.parts {
                bytes.extend_from_slice(p);
            }
            bytes
        };
        let ascii = bytes.is_ascii();
        let decoded = if ascii {
            // SAFETY: ASCII bytes are valid UTF-8.
            unsafe { String::from_utf8_unchecked(bytes) }
        } else {
            match String::from_utf8(bytes) {
                Ok(s) => s,
                Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
            }
        };
        let output = match limit {
            Some(limit) if decoded.len() > limit => {
                truncated = true;
                let mut cut = decoded.len() - limit;
                while !decoded.is_char_boundary(cut) {
                    cut += 1;
                }
                decoded[cut..].to_string()
            }
            _ => decoded,
        };
        (Snapshot { output, truncated }, ascii)
    }
}

/// Byte-limited tail buffer. `limit: None` keeps everything.
#[derive(Debug)]
pub struct OutputBuffer {
    limit: Option<usize>,
    /// Size of a new segment.
    segment: usize,
    /// Full (or sealed) segments, oldest first; immutable, possibly shared with snapshots.
    sealed: VecDeque<Bytes>,
    /// Bytes of `sealed`'s first segment that were already dropped.
    head: usize,
    /// The segment being written: its filled part is the newest retained output, its spare
    /// capacity is never shared.
    open: BytesMut,
    /// A dropped segment no snapshot referred to any more, kept to become the next open one
    /// (the pump of a flood then reuses warm memory instead of allocating every segment).
    spare: Option<BytesMut>,
    /// Number of retained bytes.
    len: usize,
    /// Bytes dropped from the front so far.
    dropped: u64,
    /// Bytes written so far.
    total: u64,
    /// Sticky truncation flag (also set when decoding had to trim).
    truncated: bool,
}

impl OutputBuffer {
    /// A buffer keeping at most `limit` bytes (`None`: no limit).
    pub fn new(limit: Option<usize>) -> Self {
        let segment = match limit {
            Some(l) => (l / 16).clamp(MIN_SEGMENT, MAX_SEGMENT).min(l).max(1),
            None => MAX_SEGMENT,
        };
        Self {
            limit,
            segment,
            sealed: VecDeque::new(),
            head: 0,
            open: BytesMut::new(),
            spare: None,
            len: 0,
            dropped: 0,
            total: 0,
            truncated: false,
        }
    }

    /// Total bytes the process wrote so far (retained or not).
    pub fn total_bytes(&self) -> u64 {
        self.total
    }

    /// Bytes currently retained (raw, before decoding).
    #[cfg(test)]
    pub fn retained_bytes(&self) -> usize {
        self.len
    }

    /// Bytes of storage the segments hold (a part split off the open segment counts once).
    #[cfg(test)]
    pub fn storage_bytes(&self) -> usize {
        self.sealed.iter().map(Bytes::len).sum::<usize>()
            + self.open.capacity()
            + self.spare.as_ref().map_or(0, BytesMut::capacity)
    }

    /// Appends bytes, dropping the oldest ones beyond the limit.
    pub fn write(&mut self, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        self.total += data.len() as u64;
        let mut data = data;
        if let Some(limit) = self.limit {
            if data.len() > limit {
                // The new data alone fills the limit: everything older goes.
                let skip = data.len() - limit;
                self.drop_front(self.len);
                self.dropped += skip as u64;
                self.truncated = true;
                data = &data[skip..];
            }
            let over = (self.len + data.len()).saturating_sub(limit);
            self.drop_front(over);
        }
        while !data.is_empty() {
            let mut room = self.open.capacity() - self.open.len();
            if room == 0 {
                self.seal();
                // Small output gets small segments: they grow with what is retained.
                room = self.len.max(MIN_SEGMENT).min(self.segment);
                self.open = match self.spare.take() {
                    Some(spare) if spare.capacity() >= room => spare,
                    _ => BytesMut::with_capacity(room),
                };
                room = self.open.capacity();
            }
            let n = room.min(data.len());
            self.open.extend_from_slice(&data[..n]);
            self.len += n;
            data = &data[n..];
        }
    }

    /// Moves the open segment's filled part to `sealed` (its spare capacity stays open).
    fn seal(&mut self) {
        if self.open.is_empty() {
            return;
        }
        // A full segment moves whole (its allocation stays unique, so it can be reused once
        // dropped); a partly filled one is split, its room staying open.
        let part = if self.open.len() == self.open.capacity() {
            std::mem::take(&mut self.open)
        } else {
            self.open.split()
        };
        self.sealed.push_back(part.freeze());
    }

    /// Decodes the retained bytes. `exited`: the stream is complete, so an incomplete
    /// character at the end becomes U+FFFD instead of being held back.
    #[cfg(test)]
    pub fn snapshot(&mut self, exited: bool) -> Snapshot {
        let raw = self.raw_snapshot(exited);
        let snap = raw.decode();
        self.truncated |= snap.truncated;
        snap
    }

    /// What a snapshot needs, so that copying and decoding happen without holding the
    /// terminal's lock: references to the retained segments (this runs under the lock the
    /// output pump needs, once per `currentOutput()` of changed output). Takes O(number of
    /// segments) and copies at most [`SEAL_MIN`] bytes.
    pub fn raw_snapshot(&mut self, exited: bool) -> RawSnapshot {
        let (limit, truncated) = (self.limit, self.truncated || self.dropped > 0);
        let small_open = if self.open.len() < SEAL_MIN {
            (!self.open.is_empty()).then(|| Bytes::copy_from_slice(&self.open))
        } else {
            self.seal();
            None
        };
        let mut parts: Vec<Bytes> = Vec::with_capacity(self.sealed.len() + 1);
        parts.extend(self.sealed.iter().cloned());
        parts.extend(small_open);
        if let Some(first) = parts.first_mut() {
            *first = first.slice(self.head..);
        }
        // Start on a character boundary when the limit cut one (as `raw_tail`).
        let from = if self.dropped > 0 {
            let first: Vec<u8> = parts
                .iter()
                .flat_map(|p| p.iter())
                .take(3)
                .copied()
                .collect();
            first.iter().take_while(|b| is_continuation(**b)).count()
        } else {
            0
        };
        // Hold back an incomplete character at the end while the command runs.
        let hold = if exited {
            0
        } else {
            let n = (self.len - from).min(4);
            let mut last: Vec<u8> = parts
                .iter()
                .rev()
                .flat_map(|p| p.iter().rev())
                .take(n)
                .copied()
                .collect();
            last.reverse();
            incomplete_suffix_len(&last)
        };
        trim_parts(&mut parts, from, hold);
        RawSnapshot {
            parts,
            limit,
            truncated,
        }
    }

    /// The retained raw bytes, starting on a character boundary when the limit cut one.
    pub fn raw_tail(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.len);
        for (i, s) in self.sealed.iter().enumerate() {
            bytes.extend_from_slice(if i == 0 { &s[self.head..] } else { s });
        }
        bytes.extend_from_slice(&self.open);
        let mut from = 0;
        if self.dropped > 0 {
            while from < bytes.len().min(3) && is_continuation(bytes[from]) {
                from += 1;
            }
        }
        bytes.drain(..from);
        bytes
    }

    fn drop_front(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        debug_assert!(n <= self.len);
        self.len -= n;
        self.dropped += n as u64;
        self.truncated = true;
        let mut n = n;
        while n > 0 {
            if self.sealed.is_empty() {
                self.seal();
            }
            let Some(front) = self.sealed.front() else {
                break;
            };
            let left = front.len() - self.head;
            if n < left {
                self.head += n;
                break;
            }
            n -= left;
            if let Some(done) = self.sealed.pop_front() {
                // Unique: no snapshot holds it, and it is a whole allocation (not a part split
                // off the open segment, which shares the allocation).
                if let Ok(mut seg) = done.try_into_mut() {
                    if seg.capacity() == self.segment {
                        seg.clear();
                        self.spare = Some(seg);
                    }
                }
            }
            self.head = 0;
        }
    }
}

/// Drops `front` bytes from the start and `back` bytes from the end of `parts` (no copy).
fn trim_parts(parts: &mut Vec<Bytes>, mut front: usize, mut back: usize) {
    while back > 0 {
        let Some(last) = parts.last_mut() else { return };
        if last.len() <= back {
            back -= last.len();
            parts.pop();
        } else {
            last.truncate(last.len() - back);
            back = 0;
        }
    }
    let mut skip = 0;
    while front > 0 && skip < parts.len() {
        let p = &mut parts[skip];
        if p.len() <= front {
            front -= p.len();
            skip += 1;
        } else {
            *p = p.slice(front..);
            front = 0;
        }
    }
    parts.drain(..skip);
    parts.retain(|p| !p.is_empty());
}

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// Length of an incomplete (but so far valid) UTF-8 sequence at the end of `bytes`.
pub fn incomplete_suffix_len(bytes: &[u8]) -> usize {
    let n = bytes.len();
    for k in 1..=n.min(3) {
        let b = bytes[n - k];
        if is_continuation(b) {
            continue;
        }
        let need = match b {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => return 0,
        };
        let incomplete = need > k
            && std::str::from_utf8(&bytes[n - k..])
                .err()
                .is_some_and(|e| e.error_len().is_none());
        return if incomplete { k } else { 0 };
    }
    0
}

#[cfg(test)]
mod tests {
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
}
