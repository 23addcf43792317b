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

pub mod display;

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
mod tests;
