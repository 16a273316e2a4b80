//! MIRCC path management helpers (§4.3): path ids, steering hints, and the
//! bandwidth-weighted choice for hint-less Interests.

use rand_core::RngCore;

/// The path id a producer puts in Data before any hop folds itself in
/// (the FNV-1a 64-bit offset basis).
pub const PATH_ID_ORIGIN: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// Folds one hop into a path id (§4.3.1): FNV-1a over the little-endian
/// bytes of (incoming path id, node id, link id). A forwarder applies this
/// to Data it forwards downstream, so each distinct chain of hops yields a
/// distinct id with overwhelming probability.
pub fn fold_path_id(path_id: u64, node_id: u64, link_id: u64) -> u64 {
    let mut h = PATH_ID_ORIGIN;
    for word in [path_id, node_id, link_id] {
        for b in word.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(FNV_PRIME);
        }
    }
    h
}

/// Follows a random-value steering hint at a split point with `n_next_hops`
/// candidates (§4.3.2): returns the chosen index (`hint mod n`) and the hint
/// to put in the forwarded Interest (`hint / n`), so successive split points
/// consume successive "digits" of the hint. `None` when there is no next hop.
pub fn steer(hint: u64, n_next_hops: usize) -> Option<(usize, u64)> {
    let n = u64::try_from(n_next_hops).ok().filter(|&n| n > 0)?;
    // The remainder is < n ≤ usize::MAX, so the cast is lossless.
    Some(((hint % n) as usize, hint / n))
}

/// A uniform float in [0, 1) from 53 random bits.
pub(crate) fn unit_f64(rng: &mut impl RngCore) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Picks an index with probability proportional to `weights` (non-finite or
/// negative weights count as zero). When every weight is zero, picks
/// uniformly. `None` only for an empty slice.
pub fn weighted_choice(weights: &[f64], rng: &mut impl RngCore) -> Option<usize> {
    let clean = |w: f64| if w.is_finite() && w > 0.0 { w } else { 0.0 };
    let total: f64 = weights.iter().map(|&w| clean(w)).sum();
    if weights.is_empty() {
        return None;
    }
    if total <= 0.0 || !total.is_finite() {
        let n = weights.len() as u64;
        return Some((rng.next_u64() % n) as usize);
    }
    let mut x = unit_f64(rng) * total;
    let mut last_positive = 0;
    for (i, &w) in weights.iter().enumerate() {
        let w = clean(w);
        if w > 0.0 {
            last_positive = i;
            if x < w {
                return Some(i);
            }
            x -= w;
        }
    }
    Some(last_positive)
}

/// Next-hop choice for a hint-less Interest (§4.3.3): random, weighted by
/// the bandwidth of each candidate's outgoing link.
pub fn choose_by_bandwidth(link_bandwidths_bps: &[f64], rng: &mut impl RngCore) -> Option<usize> {
    weighted_choice(link_bandwidths_bps, rng)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{rngs::StdRng, SeedableRng};

    #[test]
    fn path_ids_depend_on_every_hop_and_their_order() {
        let a = fold_path_id(fold_path_id(PATH_ID_ORIGIN, 1, 10), 2, 20);
        let b = fold_path_id(fold_path_id(PATH_ID_ORIGIN, 2, 20), 1, 10);
        let c = fold_path_id(fold_path_id(PATH_ID_ORIGIN, 1, 11), 2, 20);
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_eq!(a, fold_path_id(fold_path_id(PATH_ID_ORIGIN, 1, 10), 2, 20));
    }

    #[test]
    fn steering_consumes_digits() {
        // 7 = 1·3 + 1·2·... : at a 2-way split 7 → index 1, hint 3;
        // at a 3-way split 3 → index 0, hint 1.
        assert_eq!(steer(7, 2), Some((1, 3)));
        assert_eq!(steer(3, 3), Some((0, 1)));
        assert_eq!(steer(5, 0), None);
    }

    #[test]
    fn bandwidth_weighting_matches_proportions() {
        let mut rng = StdRng::seed_from_u64(7);
        let bw = [10e6, 30e6, 0.0];
        let mut hits = [0u32; 3];
        for _ in 0..40_000 {
            hits[choose_by_bandwidth(&bw, &mut rng).unwrap()] += 1;
        }
        assert_eq!(hits[2], 0);
        let share = f64::from(hits[1]) / 40_000.0;
        assert!((share - 0.75).abs() < 0.01, "{share}");
        assert_eq!(choose_by_bandwidth(&[], &mut rng), None);
        assert!(choose_by_bandwidth(&[0.0, 0.0], &mut rng).is_some());
    }
}
