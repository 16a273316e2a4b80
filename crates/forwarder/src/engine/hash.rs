//! A seeded, allocation-free hasher for the engine's tables.
//!
//! The tables key on name wire bytes. A fixed-key hasher would make the
//! engine reproducible but lets a peer craft colliding names; a per-process
//! random key breaks determinism. Seeding from the engine's RNG seed gives
//! both: the daemon passes a random seed, tests pass a constant.

use core::hash::{BuildHasher, Hasher};

const MUL: u64 = 0x9E37_79B9_7F4A_7C15;

#[inline]
fn folded_multiply(a: u64, b: u64) -> u64 {
    let full = u128::from(a).wrapping_mul(u128::from(b));
    (full as u64) ^ ((full >> 64) as u64)
}

/// Builds [`SeededHasher`]s sharing one key.
#[derive(Debug, Clone, Copy)]
pub struct SeededState {
    key: u64,
}

impl SeededState {
    /// Creates a hasher family keyed by `seed`.
    pub fn new(seed: u64) -> Self {
        SeededState {
            key: folded_multiply(seed ^ 0x243F_6A88_85A3_08D3, MUL) | 1,
        }
    }
}

impl Default for SeededState {
    fn default() -> Self {
        SeededState::new(0)
    }
}

impl BuildHasher for SeededState {
    type Hasher = SeededHasher;
    #[inline]
    fn build_hasher(&self) -> SeededHasher {
        SeededHasher {
            acc: self.key,
            key: self.key,
        }
    }
}

/// Word-at-a-time folded-multiply hasher.
#[derive(Debug, Clone)]
pub struct SeededHasher {
    acc: u64,
    key: u64,
}

impl SeededHasher {
    #[inline]
    fn mix(&mut self, w: u64) {
        self.acc = folded_multiply(self.acc ^ w, MUL ^ self.key);
    }
}

impl Hasher for SeededHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.mix(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        self.mix(u64::from_le_bytes(w) ^ ((bytes.len() as u64) << 56));
    }
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.mix(n);
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.mix(u64::from(n));
    }
    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.mix(u64::from(n));
    }
    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        folded_multiply(self.acc, self.key)
    }
}

/// Hash map used by every engine table.
pub type Map<K, V> = hashbrown::HashMap<K, V, SeededState>;

#[cfg(test)]
mod tests {
    use super::*;

    fn h(state: &SeededState, b: &[u8]) -> u64 {
        let mut x = state.build_hasher();
        x.write(b);
        x.finish()
    }

    #[test]
    fn same_seed_same_hash_and_seed_changes_it() {
        let a = SeededState::new(7);
        let b = SeededState::new(7);
        let c = SeededState::new(8);
        assert_eq!(h(&a, b"/a/b"), h(&b, b"/a/b"));
        assert_ne!(h(&a, b"/a/b"), h(&c, b"/a/b"));
        assert_ne!(h(&a, b"abc"), h(&a, b"abc\0"));
    }
}
