//! SplitMix64 (Steele, Lea and Flood, OOPSLA 2014): the fixed generator and
//! mixer behind cc-core's seeded draws (pacing lags, flow-hash keys, test
//! workloads), so they never change with a dependency's version.

/// The generator's increment (the golden ratio in 64 bits).
pub(crate) const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// The output mixer: a bijection that spreads neighbouring inputs.
pub(crate) fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The next draw of the generator whose state is `state`.
pub(crate) fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(GAMMA);
    mix(*state)
}
