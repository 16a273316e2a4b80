//! Dead Nonce List: (name, nonce) pairs of Interests that recently left the
//! PIT, so that a looping Interest arriving after its entry is gone is still
//! recognised. Bounded in entries and in time; the oldest entry is evicted
//! first (a FIFO of fingerprints plus a counting set).

use std::collections::VecDeque;
use std::hash::{BuildHasher, Hasher};

use cc_core::{Duration, Timestamp};

use super::budgets::spare;
use super::hash::{Map, SeededState};

/// Bounded, time-limited set of (name, nonce) fingerprints.
#[derive(Debug, Clone)]
pub struct DeadNonceList {
    fifo: VecDeque<(Timestamp, u64)>,
    set: Map<u64, u32>,
    hasher: SeededState,
    max_entries: usize,
    lifetime: Duration,
}

impl DeadNonceList {
    /// Creates a list keeping at most `max_entries` for at most `lifetime`.
    pub fn new(max_entries: usize, lifetime: Duration, hasher: SeededState) -> Self {
        DeadNonceList {
            fifo: VecDeque::new(),
            set: Map::with_hasher(hasher),
            hasher,
            max_entries,
            lifetime,
        }
    }

    fn key(&self, name_value: &[u8], nonce: u32) -> u64 {
        let mut h = self.hasher.build_hasher();
        h.write(name_value);
        h.write_u32(nonce);
        h.finish()
    }

    /// Number of remembered pairs.
    pub fn len(&self) -> usize {
        self.fifo.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty()
    }

    /// True if (name, nonce) was recorded within the lifetime.
    pub fn contains(&self, name_value: &[u8], nonce: u32) -> bool {
        self.set.contains_key(&self.key(name_value, nonce))
    }

    /// Records (name, nonce), evicting the oldest entry when full.
    pub fn insert(&mut self, now: Timestamp, name_value: &[u8], nonce: u32) {
        if self.max_entries == 0 {
            return;
        }
        self.expire(now);
        while self.fifo.len() >= self.max_entries {
            self.pop_oldest();
        }
        let k = self.key(name_value, nonce);
        self.fifo.push_back((now + self.lifetime, k));
        *self.set.entry(k).or_insert(0) += 1;
    }

    fn pop_oldest(&mut self) {
        if let Some((_, k)) = self.fifo.pop_front() {
            if let Some(c) = self.set.get_mut(&k) {
                *c -= 1;
                if *c == 0 {
                    self.set.remove(&k);
                }
            }
        }
    }

    /// Forgets entries older than the lifetime.
    pub fn expire(&mut self, now: Timestamp) {
        while self.fifo.front().is_some_and(|(t, _)| *t <= now) {
            self.pop_oldest();
        }
    }

    /// Releases spare capacity once the list has drained; true if any.
    pub fn shrink(&mut self) -> bool {
        let mut changed = false;
        if spare(self.fifo.len(), self.fifo.capacity()) {
            self.fifo.shrink_to_fit();
            changed = true;
        }
        if spare(self.set.len(), self.set.capacity()) {
            self.set.shrink_to(0);
            changed = true;
        }
        changed
    }

    /// When the oldest entry expires.
    pub fn next_expiry(&self) -> Option<Timestamp> {
        self.fifo.front().map(|(t, _)| *t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_after_lifetime_and_capacity_evicts_oldest() {
        let mut d = DeadNonceList::new(2, Duration::from_secs(6), SeededState::new(3));
        let t0 = Timestamp::ZERO;
        d.insert(t0, b"a", 1);
        d.insert(t0, b"b", 2);
        assert!(d.contains(b"a", 1) && d.contains(b"b", 2));
        assert!(!d.contains(b"a", 2));
        d.insert(t0, b"c", 3);
        assert_eq!(d.len(), 2);
        assert!(!d.contains(b"a", 1));
        d.expire(t0 + Duration::from_secs(6));
        assert!(d.is_empty());
        assert!(!d.contains(b"c", 3));
    }
}
