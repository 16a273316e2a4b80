//! The DRR active list of one class: a growable ring of flow ids.
//!
//! A `VecDeque` would do, but this one keeps a power-of-two buffer so an
//! index is one mask, moving the head to the back ("turn over") is one
//! store and one increment, and every call inlines.

use alloc::vec;
use alloc::vec::Vec;

/// A FIFO of `u32` ids with O(1) push, pop, rotate and random access.
#[derive(Debug, Clone, Default)]
pub(super) struct Ring {
    /// Empty or a power of two long.
    buf: Vec<u32>,
    head: usize,
    len: usize,
    /// `buf.len() - 1` (0 when empty: then `len` is 0 too), kept so an
    /// index is one `and` with no length load.
    mask: usize,
}

impl Ring {
    #[inline]
    fn mask(&self) -> usize {
        self.mask
    }

    /// Entries queued.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Entry `k` places behind the front.
    #[inline]
    pub(super) fn get(&self, k: usize) -> Option<u32> {
        if k >= self.len {
            return None;
        }
        self.buf.get((self.head + k) & self.mask()).copied()
    }

    /// The front entry.
    #[inline]
    pub(super) fn front(&self) -> Option<u32> {
        self.get(0)
    }

    /// Entry `k` places behind the front for `k` below the buffer length,
    /// without checking `k` against `len` (a stale id past the back, or 0
    /// for an empty ring): enough for a prefetch hint, whose caller has
    /// checked the length once for all its look-aheads.
    #[inline]
    pub(super) fn peek_ahead(&self, k: usize) -> u32 {
        self.buf
            .get((self.head + k) & self.mask())
            .copied()
            .unwrap_or(0)
    }

    /// Hints the CPU to fetch the slot `k` places behind the front.
    #[inline]
    pub(super) fn prefetch_slot(&self, k: usize) {
        super::flows::prefetch_at(&self.buf, (self.head + k) & self.mask());
    }

    #[inline]
    pub(super) fn push_back(&mut self, id: u32) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let i = (self.head + self.len) & self.mask;
        if let Some(s) = self.buf.get_mut(i) {
            *s = id;
            self.len += 1;
        }
    }

    /// Takes the front entry (a caller that drops it pays no load: `get`
    /// has no side effect, so an unused result folds away).
    #[inline]
    pub(super) fn pop_front(&mut self) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        let id = self.buf.get(self.head).copied();
        self.head = (self.head + 1) & self.mask;
        self.len -= 1;
        id
    }

    /// Moves the front entry to the back.
    #[inline]
    pub(super) fn rotate(&mut self) {
        if self.len == 0 {
            return;
        }
        let mask = self.mask();
        if self.len < self.buf.len() {
            let id = self.buf[self.head];
            self.buf[(self.head + self.len) & mask] = id;
        }
        self.head = (self.head + 1) & mask;
    }

    /// Rewrites every id by `f`, dropping those mapped to `None`.
    pub(super) fn remap(&mut self, mut f: impl FnMut(u32) -> Option<u32>) {
        let old = core::mem::take(self);
        for k in 0..old.len {
            if let Some(id) = old.get(k).and_then(&mut f) {
                self.push_back(id);
            }
        }
    }

    #[inline(never)]
    fn grow(&mut self) {
        let cap = (self.buf.len() * 2).max(8);
        let mut buf = vec![0; cap];
        for (k, slot) in buf.iter_mut().enumerate().take(self.len) {
            *slot = self.buf[(self.head + k) & self.mask()];
        }
        self.buf = buf;
        self.head = 0;
        self.mask = cap - 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::VecDeque;
    use proptest::prelude::*;

    /// The prefetch look-ahead reads what `get` reads within the ring, and
    /// neither it nor the slot hint panics on an empty or wrapped ring.
    #[test]
    fn peek_ahead_agrees_with_get() {
        let mut r = Ring::default();
        assert_eq!(r.peek_ahead(5), 0);
        r.prefetch_slot(5);
        for id in 0..300 {
            r.push_back(id);
        }
        // Past the end of the 512-slot buffer: the ring wraps.
        for i in 0..400 {
            r.rotate();
            if i % 4 == 0 {
                let _ = r.pop_front();
                r.push_back(1_000 + i);
            }
        }
        for k in 0..r.len() {
            assert_eq!(Some(r.peek_ahead(k)), r.get(k));
            r.prefetch_slot(k);
        }
    }

    proptest! {
        /// The ring behaves as a VecDeque under any mix of operations.
        #[test]
        fn ring_matches_vecdeque(ops in proptest::collection::vec(0u8..4, 1..300)) {
            let mut r = Ring::default();
            let mut m: VecDeque<u32> = VecDeque::new();
            for (i, op) in ops.into_iter().enumerate() {
                match op {
                    0 | 1 => {
                        r.push_back(i as u32);
                        m.push_back(i as u32);
                    }
                    2 => prop_assert_eq!(r.pop_front(), m.pop_front()),
                    _ => {
                        r.rotate();
                        m.rotate_left(usize::from(!m.is_empty()));
                    }
                }
                prop_assert_eq!(r.len(), m.len());
                for k in 0..m.len() + 1 {
                    prop_assert_eq!(r.get(k), m.get(k).copied());
                }
            }
            r.remap(|id| (id % 2 == 0).then_some(id + 1));
            let want: Vec<u32> = m.iter().filter(|&&id| id % 2 == 0).map(|id| id + 1).collect();
            prop_assert_eq!(r.len(), want.len());
            for (k, &id) in want.iter().enumerate() {
                prop_assert_eq!(r.get(k), Some(id));
            }
        }
    }
}
