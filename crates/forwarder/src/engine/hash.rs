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
        self.mix(tail_word(rest) ^ ((bytes.len() as u64) << 56));
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

/// The last 0-7 bytes of a key as a little-endian word, zero padded: two
/// overlapping loads instead of a variable-length copy, which compiled to
/// a `memcpy` call on every hash of a name.
#[inline]
fn tail_word(rest: &[u8]) -> u64 {
    let n = rest.len();
    let le32 = |b: &[u8]| {
        let mut w = [0u8; 4];
        w.copy_from_slice(&b[..4]);
        u64::from(u32::from_le_bytes(w))
    };
    if n >= 4 {
        // Bytes both loads cover land on the same bit positions.
        le32(rest) | (le32(&rest[n - 4..]) << ((n - 4) * 8))
    } else if n > 0 {
        let b = |i: usize| u64::from(rest[i]) << (i * 8);
        b(0) | b(n / 2) | b(n - 1)
    } else {
        0
    }
}

/// Hash map used by every engine table.
pub type Map<K, V> = hashbrown::HashMap<K, V, SeededState>;

/// Byte equality inlined as word compares. Table keys are names of a few
/// dozen bytes; a slice `==` calls libc `memcmp`, whose masked AVX-512
/// loads were 5-9 % of icnfwd's cycles on the FIB and strategy lookups of
/// every packet (loadgen profile).
#[inline]
pub fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (mut wa, mut wb) = (a.chunks_exact(8), b.chunks_exact(8));
    for (x, y) in (&mut wa).zip(&mut wb) {
        let word = |c: &[u8]| {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            u64::from_ne_bytes(w)
        };
        if word(x) != word(y) {
            return false;
        }
    }
    wa.remainder()
        .iter()
        .zip(wb.remainder())
        .all(|(x, y)| x == y)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(state: &SeededState, b: &[u8]) -> u64 {
        let mut x = state.build_hasher();
        x.write(b);
        x.finish()
    }

    #[test]
    fn bytes_eq_agrees_with_slice_eq() {
        let vals: Vec<Vec<u8>> = (0..20u8)
            .flat_map(|n| {
                [
                    vec![7u8; n as usize],
                    [vec![7u8; n as usize], vec![n]].concat(),
                ]
            })
            .collect();
        for a in &vals {
            for b in &vals {
                assert_eq!(bytes_eq(a, b), a == b, "{a:?} vs {b:?}");
            }
        }
        let mut x = vec![1u8; 17];
        let y = x.clone();
        for i in 0..17 {
            x[i] = 2;
            assert!(!bytes_eq(&x, &y));
            x[i] = 1;
        }
        assert!(bytes_eq(&x, &y));
    }

    #[test]
    fn tail_word_is_the_zero_padded_little_endian_word() {
        let src: Vec<u8> = (1..=8).collect();
        for n in 0..8 {
            let mut w = [0u8; 8];
            w[..n].copy_from_slice(&src[..n]);
            assert_eq!(tail_word(&src[..n]), u64::from_le_bytes(w), "n = {n}");
        }
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
