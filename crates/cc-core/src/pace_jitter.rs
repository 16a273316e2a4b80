//! A pacer's random lag: each Interest leaves its slot late by a random
//! fraction of the gap, uniform in [0, max_lag), while the slots keep their
//! grid, so the mean rate is exact and no lag accumulates.
//!
//! Why: every rate law here assumes that flows paced at steady rates meet
//! at a link only by chance ([`crate::chance_queue`]); nothing in a strict
//! pacer keeps that true. Flows told one rate at slightly different times
//! drift into step and stay there: ten RCP flows of 1200-byte Data on
//! 2 Mbit/s at 150 ms (virtual time, strict pacing) sent eight of their
//! ten Interests of each 54 ms period within 6 ms of each other, the
//! phases closing by 1-2 ms a second, and the bottleneck held five and six
//! Interests each period (p95 30.5 ms) where random phases hold four at
//! most (20.4 ms). A real host's timers fire a little late at random and
//! hide it (the namespace testbed measured 15.4 ms for ten CCC flows at
//! 1200 B on 2 Mbit/s, virtual time 25.2 ms); a deterministic simulator
//! and a quiet host do not. Random timing is the classic remedy for
//! periodic senders that fall into step (Floyd and Jacobson, "The
//! synchronization of periodic routing messages", IEEE/ACM ToN 1994).
//!
//! [`PACE_JITTER`] is a fifth of a gap: flows in step sit within a few
//! hundredths of a gap of each other (the six milliseconds of 54 above),
//! and a lag of up to a fifth reorders each Interest against those
//! neighbours every period.
//!
//! The lag does not accumulate, as a late timer's does not in icncat's
//! pacer (the next slot counts from the last slot, not from the send). A
//! lag that did (each gap stretched or shrunk at random, the phase walking
//! freely) was measured and not taken: a flow's first router paces it at
//! the same rate (CCC's per-face pacer), and a free walk there is a queue
//! at load one that grows without bound (CCC's worst queueing RTT on
//! `qsccp_classes` 7 → 95 ms, on `arrival` 7 → 45 ms). Only senders lag;
//! the routers' pacers stay strict and keep the phases the senders chose.

/// The lag every pacer in icncat uses: up to a fifth of each gap.
pub const PACE_JITTER: f64 = 0.2;

/// A deterministic source of lags ([`crate::splitmix`]), so a run with one seed
/// repeats exactly; different senders must be given different seeds.
#[derive(Debug, Clone, PartialEq)]
pub struct PaceJitter {
    state: u64,
    max_lag: f64,
}

impl PaceJitter {
    /// Lags uniform in [0, `max_lag`) of a gap (clamped to 0..=1), drawn
    /// from `seed`. The seed is the generator's starting state, so seeds
    /// that differ by a multiple of its step (SplitMix64's golden-ratio
    /// increment) give one sequence shifted: derive a sender's seed through
    /// a hash, not as its id times that constant (the virtual consumers did
    /// until session 41, and every flow drew the first one's lags).
    pub fn new(seed: u64, max_lag: f64) -> Self {
        let max_lag = if max_lag.is_finite() {
            max_lag.clamp(0.0, 1.0)
        } else {
            0.0
        };
        PaceJitter {
            state: seed,
            max_lag,
        }
    }

    /// No lag: strict pacing.
    pub fn off() -> Self {
        PaceJitter::new(0, 0.0)
    }

    /// The largest lag, as a fraction of a gap.
    pub fn max_lag(&self) -> f64 {
        self.max_lag
    }

    /// The next Interest's lag behind its slot, a fraction of the gap in
    /// [0, max_lag).
    pub fn next_lag(&mut self) -> f64 {
        if self.max_lag == 0.0 {
            return 0.0;
        }
        let z = crate::splitmix::next(&mut self.state);
        let u = (z >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        self.max_lag * u
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lags_stay_below_the_bound_and_spread_over_it() {
        let mut j = PaceJitter::new(7, PACE_JITTER);
        let n = 100_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let l = j.next_lag();
            assert!((0.0..0.2).contains(&l), "{l}");
            sum += l;
        }
        assert!(
            (sum / f64::from(n) - 0.1).abs() < 0.002,
            "{}",
            sum / f64::from(n)
        );
    }

    #[test]
    fn seeds_differ_and_repeat() {
        let draw = |seed| {
            let mut j = PaceJitter::new(seed, 0.2);
            (0..8).map(|_| j.next_lag()).collect::<alloc::vec::Vec<_>>()
        };
        assert_eq!(draw(1), draw(1));
        assert_ne!(draw(1), draw(2));
    }

    #[test]
    fn off_is_strict() {
        let mut j = PaceJitter::off();
        assert!((0..10).all(|_| j.next_lag() == 0.0));
        assert_eq!(PaceJitter::new(3, f64::NAN).max_lag(), 0.0);
        assert_eq!(PaceJitter::new(3, 2.0).max_lag(), 1.0);
    }
}
