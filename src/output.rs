//! The retained output of a terminal: a byte-limited tail of everything the process wrote.
//!
//! Invariants:
//! - Raw bytes are kept in a ring that never holds more than the limit and grows only as
//!   output arrives (nothing is preallocated at the limit's size).
//! - A snapshot is valid UTF-8 whose UTF-8 length never exceeds the limit; its first byte is a
//!   character boundary of the stream (a character cut by the limit is dropped whole).
//! - Invalid bytes become U+FFFD, and the snapshot is trimmed again so it still fits.
//! - While the process runs, an incomplete character at the end is held back; once it exited,
//!   it becomes U+FFFD.
//! - `truncated` is sticky: true as soon as any byte was dropped.

/// Smallest storage the ring grows from.
const MIN_STORAGE: usize = 4096;

/// A decoded view of the retained output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// Retained output as UTF-8.
    pub output: String,
    /// Whether any byte was ever dropped to respect the limit.
    pub truncated: bool,
}

/// Raw bytes for a snapshot, taken under the lock and decoded outside it.
#[derive(Debug, Clone)]
pub struct RawSnapshot {
    /// Retained bytes from a character boundary, incomplete trailing character held back.
    pub bytes: Vec<u8>,
    /// The byte limit.
    pub limit: Option<usize>,
    /// Whether bytes were dropped so far.
    pub truncated: bool,
}

impl RawSnapshot {
    /// Decodes: valid UTF-8 passes through without a copy; invalid bytes become U+FFFD, and
    /// the result is trimmed at a character boundary to fit the limit again.
    pub fn decode(self) -> Snapshot {
        let mut truncated = self.truncated;
        let decoded = match String::from_utf8(self.bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        let output = match self.limit {
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
        Snapshot { output, truncated }
    }
}

/// Byte-limited tail buffer. `limit: None` keeps everything.
#[derive(Debug)]
pub struct OutputBuffer {
    limit: Option<usize>,
    /// Ring storage; `buf.len()` is the storage size, never above the limit.
    buf: Vec<u8>,
    /// Index of the oldest retained byte in `buf`.
    start: usize,
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
        Self {
            limit,
            buf: Vec::new(),
            start: 0,
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

    /// Bytes of storage currently allocated for the ring.
    #[cfg(test)]
    pub fn storage_bytes(&self) -> usize {
        self.buf.capacity()
    }

    /// Appends bytes, dropping the oldest ones beyond the limit.
    pub fn write(&mut self, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        self.total += data.len() as u64;
        let Some(limit) = self.limit else {
            // Unlimited: the ring is a plain growing vector (start stays 0).
            self.buf.extend_from_slice(data);
            self.len = self.buf.len();
            return;
        };
        if limit == 0 {
            self.dropped += data.len() as u64;
            self.truncated = true;
            return;
        }
        if data.len() >= limit {
            // The new data alone fills the limit: everything older goes.
            let skip = data.len() - limit;
            self.drop_front(self.len);
            self.dropped += skip as u64;
            if skip > 0 {
                self.truncated = true;
            }
            if self.buf.len() < limit {
                self.buf = vec![0; limit];
            }
            self.buf[..limit].copy_from_slice(&data[skip..]);
            self.start = 0;
            self.len = limit;
            return;
        }
        let need = self.len + data.len();
        if need > self.buf.len() && self.buf.len() < limit {
            self.grow(need.min(limit), limit);
        }
        if need > self.buf.len() {
            self.drop_front(need - self.buf.len());
        }
        let size = self.buf.len();
        let end = (self.start + self.len) % size;
        let first = data.len().min(size - end);
        self.buf[end..end + first].copy_from_slice(&data[..first]);
        self.buf[..data.len() - first].copy_from_slice(&data[first..]);
        self.len += data.len();
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

    /// Copies out what a snapshot needs, so that decoding can happen without holding the
    /// terminal's lock. The copy reads the ring's two halves directly (one pass over the
    /// retained bytes, no rotation): this runs under the lock the output pump needs, once per
    /// `currentOutput()` of changed output.
    pub fn raw_snapshot(&mut self, exited: bool) -> RawSnapshot {
        let (limit, truncated) = (self.limit, self.truncated || self.dropped > 0);
        let (a, b) = self.halves();
        let at = |i: usize| if i < a.len() { a[i] } else { b[i - a.len()] };
        let len = a.len() + b.len();
        // Start on a character boundary when the limit cut one (as `raw_tail`).
        let mut from = 0;
        if self.dropped > 0 {
            while from < len.min(3) && is_continuation(at(from)) {
                from += 1;
            }
        }
        // Hold back an incomplete character at the end while the command runs.
        let hold = if exited {
            0
        } else {
            let n = (len - from).min(4);
            let last: Vec<u8> = (len - n..len).map(at).collect();
            incomplete_suffix_len(&last)
        };
        let end = len - hold;
        let mut bytes = Vec::with_capacity(end.saturating_sub(from));
        if from < a.len() {
            bytes.extend_from_slice(&a[from..end.min(a.len())]);
        }
        if end > a.len() {
            bytes.extend_from_slice(&b[from.saturating_sub(a.len())..end - a.len()]);
        }
        RawSnapshot {
            bytes,
            limit,
            truncated,
        }
    }

    /// The retained bytes as the ring holds them: oldest part, then the wrapped part.
    fn halves(&self) -> (&[u8], &[u8]) {
        let size = self.buf.len();
        if self.len == 0 || size == 0 {
            return (&[], &[]);
        }
        let first_end = (self.start + self.len).min(size);
        let wrapped = self.start + self.len - first_end;
        (&self.buf[self.start..first_end], &self.buf[..wrapped])
    }

    /// The retained raw bytes, starting on a character boundary when the limit cut one.
    pub fn raw_tail(&mut self) -> &[u8] {
        let dropped = self.dropped;
        let bytes = self.contiguous();
        let mut from = 0;
        if dropped > 0 {
            while from < bytes.len().min(3) && is_continuation(bytes[from]) {
                from += 1;
            }
        }
        &bytes[from..]
    }

    /// Makes the retained bytes contiguous at the start of the storage and returns them.
    fn contiguous(&mut self) -> &[u8] {
        if self.start + self.len > self.buf.len() || (self.start != 0 && self.len > 0) {
            self.buf.rotate_left(self.start);
            self.start = 0;
        }
        &self.buf[self.start..self.start + self.len]
    }

    fn drop_front(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        debug_assert!(n <= self.len);
        self.start = if self.buf.is_empty() {
            0
        } else {
            (self.start + n) % self.buf.len()
        };
        self.len -= n;
        self.dropped += n as u64;
        self.truncated = true;
        if self.len == 0 {
            self.start = 0;
        }
    }

    /// Grows the storage to hold at least `need` bytes (at most `limit`), keeping order.
    fn grow(&mut self, need: usize, limit: usize) {
        let size = need.max(self.buf.len() * 2).max(MIN_STORAGE).min(limit);
        let mut next = vec![0u8; size];
        let old = self.buf.len();
        if old > 0 {
            let first = self.len.min(old - self.start);
            next[..first].copy_from_slice(&self.buf[self.start..self.start + first]);
            next[first..self.len].copy_from_slice(&self.buf[..self.len - first]);
        }
        self.buf = next;
        self.start = 0;
    }
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
        assert!(b.storage_bytes() <= MIN_STORAGE);
        for _ in 0..1000 {
            b.write(&[b'z'; 4096]);
        }
        assert!(b.storage_bytes() <= 1 << 20);
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
                    let got = b.raw_snapshot(exited).bytes;
                    let tail = b.raw_tail().to_vec();
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
