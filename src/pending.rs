//! Output waiting for a listener that is slower than the command: bounded by a high-water mark.
//! Past it, the oldest pending bytes are dropped and counted, so the next delivery can say how
//! many were lost. The retained output (snapshots) is kept elsewhere and never affected.

use std::collections::VecDeque;

/// Pending bytes a listener may fall behind by before the oldest are dropped (8 MiB).
pub const HIGH_WATER_MARK: usize = 8 << 20;
/// Chunks are merged up to this size, so a flood of small reads is not one allocation each.
const MERGE: usize = 1 << 20;

/// Bytes not yet delivered, oldest first, at most `max` of them.
#[derive(Debug)]
pub struct Pending {
    chunks: VecDeque<Vec<u8>>,
    /// Bytes of `chunks[0]` already dropped.
    front_cut: usize,
    len: usize,
    dropped: u64,
    max: usize,
}

impl Pending {
    /// An empty queue bounded at `max` bytes (at least 1).
    pub fn new(max: usize) -> Self {
        Self {
            chunks: VecDeque::new(),
            front_cut: 0,
            len: 0,
            dropped: 0,
            max: max.max(1),
        }
    }

    /// Appends `chunk`, dropping the oldest bytes past the bound.
    pub fn push(&mut self, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        let chunk = if chunk.len() > self.max {
            let cut = chunk.len() - self.max;
            self.dropped += cut as u64;
            &chunk[cut..]
        } else {
            chunk
        };
        match self.chunks.back_mut() {
            Some(last) if last.len() + chunk.len() <= MERGE => last.extend_from_slice(chunk),
            _ => self.chunks.push_back(chunk.to_vec()),
        }
        self.len += chunk.len();
        while self.len > self.max {
            let excess = self.len - self.max;
            let front = &self.chunks[0];
            let left = front.len() - self.front_cut;
            if left <= excess {
                self.chunks.pop_front();
                self.front_cut = 0;
                self.len -= left;
                self.dropped += left as u64;
            } else {
                self.front_cut += excess;
                self.len -= excess;
                self.dropped += excess as u64;
            }
        }
    }

    /// Everything pending as one buffer, with the number of bytes dropped before it since the
    /// last take; `None` when nothing is pending and nothing was dropped. (A listener takes at
    /// most a bounded piece at a time: [`Pending::take_up_to`].)
    #[cfg(test)]
    pub fn take(&mut self) -> Option<(Vec<u8>, u64)> {
        self.take_up_to(usize::MAX)
    }

    /// At most `limit` of the oldest pending bytes, with the number of bytes dropped before
    /// them since the last take (with `limit` 0, only that number); `None` when nothing is
    /// pending and nothing was dropped. The rest stays pending, in order.
    pub fn take_up_to(&mut self, limit: usize) -> Option<(Vec<u8>, u64)> {
        if self.len == 0 && self.dropped == 0 {
            return None;
        }
        let want = self.len.min(limit);
        let mut out = Vec::with_capacity(want);
        while out.len() < want {
            let Some(front) = self.chunks.front() else {
                break;
            };
            let avail = &front[self.front_cut..];
            let n = avail.len().min(want - out.len());
            out.extend_from_slice(&avail[..n]);
            if n == avail.len() {
                self.chunks.pop_front();
                self.front_cut = 0;
            } else {
                self.front_cut += n;
            }
        }
        self.len -= out.len();
        Some((out, std::mem::take(&mut self.dropped)))
    }

    /// Bytes dropped since the last take (not yet reported).
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Bytes pending.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no byte is pending.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forgets everything (the listener unsubscribed).
    pub fn clear(&mut self) {
        *self = Self::new(self.max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn take_up_to_takes_the_oldest_and_leaves_the_rest_in_order() {
        let mut p = Pending::new(8);
        p.push(b"abcdef");
        p.push(b"ghijkl");
        assert_eq!(p.take_up_to(3), Some((b"efg".to_vec(), 4)));
        assert!(!p.is_empty());
        assert_eq!(p.take_up_to(100), Some((b"hijkl".to_vec(), 0)));
        assert!(p.is_empty());
        assert_eq!(p.take_up_to(3), None);
    }

    #[test]
    fn below_the_mark_everything_is_kept_in_order() {
        let mut p = Pending::new(100);
        for i in 0..10u8 {
            p.push(&[i; 7]);
        }
        let (bytes, dropped) = p.take().unwrap();
        assert_eq!(dropped, 0);
        assert_eq!(bytes, (0..10u8).flat_map(|i| [i; 7]).collect::<Vec<_>>());
        assert!(p.take().is_none());
    }

    #[test]
    fn past_the_mark_the_oldest_bytes_go_and_are_counted() {
        let mut p = Pending::new(10);
        let all: Vec<u8> = (0..=255u8).collect();
        for c in all.chunks(3) {
            p.push(c);
        }
        let (bytes, dropped) = p.take().unwrap();
        assert_eq!(bytes, all[all.len() - 10..]);
        assert_eq!(dropped, all.len() as u64 - 10);
        // The count is per delivery.
        p.push(b"ab");
        assert_eq!(p.take().unwrap(), (b"ab".to_vec(), 0));
    }

    #[test]
    fn one_chunk_larger_than_the_mark_keeps_its_tail() {
        let mut p = Pending::new(4);
        p.push(b"xy");
        p.push(b"0123456789");
        assert_eq!(p.take().unwrap(), (b"6789".to_vec(), 8));
    }

    #[test]
    fn every_byte_is_either_delivered_or_counted() {
        let mut p = Pending::new(1000);
        let (mut delivered, mut dropped, mut pushed) = (0u64, 0u64, 0u64);
        for round in 0..200usize {
            for k in 0..(round % 7) {
                let n = (round * 31 + k * 17) % 700 + 1;
                p.push(&vec![0; n]);
                pushed += n as u64;
            }
            if round % 5 == 0 {
                if let Some((b, d)) = p.take() {
                    assert!(b.len() <= 1000);
                    delivered += b.len() as u64;
                    dropped += d;
                }
            }
        }
        if let Some((b, d)) = p.take() {
            delivered += b.len() as u64;
            dropped += d;
        }
        assert_eq!(delivered + dropped, pushed);
        assert!(dropped > 0);
    }
}
