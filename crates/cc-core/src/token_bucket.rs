//! Token bucket rate limiter (the TBRL of QSCCP §IV-C, and a generic pacer).
//!
//! The bucket fills at `rate_bps` up to a depth of `burst_bits` and starts
//! full. Over any interval of length t it therefore releases at most
//! `rate·t + burst` bits. That bound is exact here: tokens are kept as an
//! integer count of bit-nanoseconds (1 bit = 10⁹ units, 1 ns at r bit/s
//! adds r units), so no rounding can let an extra bit through. The count is
//! a `u64` (fast on the per-packet path: a multiply, an add and a compare),
//! which caps the depth at `u64::MAX` units, about 1.8·10¹⁰ bits (2.3 GB);
//! deeper buckets are clamped to that.

use crate::time::{Duration, Timestamp};

const UNITS_PER_BIT: u64 = 1_000_000_000;

/// Parameters of a token bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TokenBucketConfig {
    /// Fill rate, bits per second.
    pub rate_bps: u64,
    /// Depth, bytes. A request larger than this can never be granted.
    pub burst_bytes: u64,
}

impl Default for TokenBucketConfig {
    /// 10 Mbit/s with a 20 kB (160 kbit, QSCCP's DS bucket depth) burst.
    fn default() -> Self {
        TokenBucketConfig {
            rate_bps: 10_000_000,
            burst_bytes: 20_000,
        }
    }
}

/// A token bucket driven by caller-supplied time.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    rate_bps: u64,
    /// ⌊(2^64 − 1) / rate⌋: ns per bucket unit as a 64-bit fraction, so
    /// [`ready_lower_bound_ns`](Self::ready_lower_bound_ns) needs no division.
    ns_per_unit_frac: u64,
    depth_units: u64,
    tokens_units: u64,
    last: Timestamp,
}

impl TokenBucket {
    /// Creates a full bucket whose clock starts at `now`.
    pub fn new(cfg: TokenBucketConfig, now: Timestamp) -> Self {
        Self::with_bits(cfg.rate_bps, cfg.burst_bytes.saturating_mul(8), now)
    }

    /// Creates a full bucket sized in bits (QSCCP counts expected Data bits).
    pub fn with_bits(rate_bps: u64, burst_bits: u64, now: Timestamp) -> Self {
        let depth_units = burst_bits.saturating_mul(UNITS_PER_BIT);
        TokenBucket {
            rate_bps,
            ns_per_unit_frac: ns_per_unit_frac(rate_bps),
            depth_units,
            tokens_units: depth_units,
            last: now,
        }
    }

    /// Fill rate, bits per second.
    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    /// Changes the fill rate from `now` on (tokens earned so far are kept).
    pub fn set_rate_bps(&mut self, now: Timestamp, rate_bps: u64) {
        self.refill(now);
        self.rate_bps = rate_bps;
        self.ns_per_unit_frac = ns_per_unit_frac(rate_bps);
    }

    /// Whole bits available at `now`.
    pub fn available_bits(&mut self, now: Timestamp) -> u64 {
        self.refill(now);
        self.tokens_units / UNITS_PER_BIT
    }

    /// Whether `bits` tokens are present at `now` (takes none).
    #[inline]
    pub fn has_bits(&mut self, now: Timestamp, bits: u64) -> bool {
        self.refill(now);
        units(bits).is_some_and(|need| need <= self.tokens_units)
    }

    /// Takes `bits` tokens if present; returns whether they were taken.
    #[inline]
    pub fn try_consume_bits(&mut self, now: Timestamp, bits: u64) -> bool {
        self.refill(now);
        match units(bits) {
            Some(need) if need <= self.tokens_units => {
                self.tokens_units -= need;
                true
            }
            _ => false,
        }
    }

    /// [`has_bits`](Self::has_bits) for a packet size (a `u32` cannot
    /// overflow the unit count: no overflow check per packet).
    #[inline]
    pub(crate) fn has_packet_bits(&mut self, now: Timestamp, bits: u32) -> bool {
        self.refill(now);
        u64::from(bits) * UNITS_PER_BIT <= self.tokens_units
    }

    /// [`try_consume_bits`](Self::try_consume_bits) for a packet size.
    #[inline]
    pub(crate) fn try_consume_packet_bits(&mut self, now: Timestamp, bits: u32) -> bool {
        self.refill(now);
        let need = u64::from(bits) * UNITS_PER_BIT;
        let ok = need <= self.tokens_units;
        if ok {
            self.tokens_units -= need;
        }
        ok
    }

    /// Takes `bits` tokens that [`has_packet_bits`](Self::has_packet_bits)
    /// has just found present (nothing taken in between), without refilling
    /// or checking again; saturating, so never below empty.
    #[inline]
    pub(crate) fn take_present_bits(&mut self, bits: u32) {
        self.tokens_units = self
            .tokens_units
            .saturating_sub(u64::from(bits) * UNITS_PER_BIT);
    }

    /// Takes `bytes` worth of tokens if present.
    pub fn try_consume_bytes(&mut self, now: Timestamp, bytes: u64) -> bool {
        self.try_consume_bits(now, bytes.saturating_mul(8))
    }

    /// Time from `now` until `bits` tokens are present: zero if they are
    /// already, `None` if they never can be (more than the depth, or a zero
    /// rate with too few tokens).
    pub fn time_until_bits(&mut self, now: Timestamp, bits: u64) -> Option<Duration> {
        self.refill(now);
        let need = units(bits)?;
        if need <= self.tokens_units {
            return Some(Duration::ZERO);
        }
        if need > self.depth_units || self.rate_bps == 0 {
            return None;
        }
        let missing = need - self.tokens_units;
        Some(Duration::from_nanos(missing.div_ceil(self.rate_bps)))
    }

    /// A lower bound, at most 1 ns early, of the instant (ns since the
    /// epoch) from which `bits` tokens are present, `u64::MAX` if never
    /// (as [`time_until_bits`](Self::time_until_bits), but one multiply
    /// instead of a division: cheap enough to cache per packet).
    #[inline]
    pub fn ready_lower_bound_ns(&mut self, now: Timestamp, bits: u64) -> u64 {
        self.refill(now);
        let Some(need) = units(bits) else {
            return u64::MAX;
        };
        if need <= self.tokens_units {
            return now.as_nanos();
        }
        if need > self.depth_units || self.rate_bps == 0 {
            return u64::MAX;
        }
        let missing = need - self.tokens_units;
        let wait_ns = (u128::from(missing) * u128::from(self.ns_per_unit_frac)) >> 64;
        now.as_nanos().saturating_add(wait_ns as u64)
    }

    /// [`time_until_bits`](Self::time_until_bits) in bytes.
    pub fn time_until_bytes(&mut self, now: Timestamp, bytes: u64) -> Option<Duration> {
        self.time_until_bits(now, bytes.saturating_mul(8))
    }

    #[inline]
    fn refill(&mut self, now: Timestamp) {
        // Time never runs backwards for the bucket: an earlier `now` adds nothing.
        if now <= self.last {
            return;
        }
        let dt = now.as_nanos() - self.last.as_nanos();
        let add = dt.saturating_mul(self.rate_bps);
        self.tokens_units = self.tokens_units.saturating_add(add).min(self.depth_units);
        self.last = now;
    }
}

fn ns_per_unit_frac(rate_bps: u64) -> u64 {
    u64::MAX.checked_div(rate_bps).unwrap_or(0)
}

/// `bits` in bucket units; `None` beyond any possible depth.
#[inline]
fn units(bits: u64) -> Option<u64> {
    bits.checked_mul(UNITS_PER_BIT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn starts_full_and_refills_at_rate() {
        let t0 = Timestamp::ZERO;
        let mut b = TokenBucket::new(
            TokenBucketConfig {
                rate_bps: 8_000,
                burst_bytes: 100,
            },
            t0,
        );
        assert!(b.try_consume_bytes(t0, 100));
        assert!(!b.try_consume_bytes(t0, 1));
        // 8000 bit/s = 1 byte per ms.
        assert_eq!(b.time_until_bytes(t0, 10), Some(Duration::from_millis(10)));
        assert!(!b.try_consume_bytes(Timestamp::from_micros(9_999), 10));
        assert!(b.try_consume_bytes(Timestamp::from_millis(10), 10));
        assert_eq!(b.time_until_bytes(t0, 101), None);
    }

    #[test]
    fn depth_caps_accumulation() {
        let mut b = TokenBucket::with_bits(1_000, 50, Timestamp::ZERO);
        assert_eq!(b.available_bits(Timestamp::from_millis(1_000_000)), 50);
    }

    #[test]
    fn huge_depths_clamp_instead_of_overflowing() {
        let t0 = Timestamp::ZERO;
        let mut b = TokenBucket::with_bits(u64::MAX, u64::MAX, t0);
        // Depth clamps near 1.8e10 bits; a larger request is never possible.
        assert!(b.try_consume_bits(t0, 18_000_000_000));
        assert_eq!(b.time_until_bits(t0, 19_000_000_000), None);
        // u64::MAX bit/s × 1 ns saturates the fill, then the depth caps it.
        assert!(b.has_bits(Timestamp::from_nanos(1), 18_000_000_000));
    }

    proptest! {
        #[test]
        fn never_releases_more_than_rate_times_t_plus_burst(
            rate in 1u64..10_000_000_000,
            burst in 1u64..100_000,
            ops in proptest::collection::vec((0u64..10_000_000, 1u64..20_000), 1..200),
        ) {
            let mut b = TokenBucket::new(TokenBucketConfig { rate_bps: rate, burst_bytes: burst }, Timestamp::ZERO);
            let mut now = 0u64;
            let mut released_bits: u128 = 0;
            for (dt, bytes) in ops {
                now += dt;
                let t = Timestamp::from_nanos(now);
                let early = b.ready_lower_bound_ns(t, bytes * 8);
                let wait = b.time_until_bytes(t, bytes);
                if wait.is_none() {
                    prop_assert_eq!(early, u64::MAX);
                }
                if let Some(wait) = wait {
                    // The cheap bound is never late and at most 1 ns early.
                    let exact = (t + wait).as_nanos();
                    prop_assert!(early <= exact && exact - early <= 1, "{early} vs {exact}");
                    // After exactly the announced wait the request must succeed.
                    let ready = t + wait;
                    prop_assert!(b.try_consume_bytes(ready, bytes));
                    now = ready.as_nanos();
                    released_bits += u128::from(bytes) * 8;
                }
                let bound = u128::from(rate) * u128::from(now) / 1_000_000_000 + u128::from(burst) * 8;
                prop_assert!(released_bits <= bound, "released {released_bits} > bound {bound}");
            }
        }
    }
}
