//! A sans-IO pacer: the next time a packet may leave at a given rate.
//!
//! Each send pushes the release time forward by `bits / rate`. A sender
//! woken late (timer jitter) may use up to `max_credit` of the lost time,
//! so the long-run rate holds without allowing idle periods to turn into
//! bursts.

use cc_core::{Duration, Timestamp};

/// Paces packets at a caller-given rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pacer {
    next_at: Timestamp,
    max_credit: Duration,
}

impl Pacer {
    /// A pacer that may send at once.
    pub fn new(now: Timestamp, max_credit: Duration) -> Self {
        Pacer {
            next_at: now,
            max_credit,
        }
    }

    /// When the next packet may be sent.
    pub fn next_send_time(&self) -> Timestamp {
        self.next_at
    }

    /// True when a packet may be sent at `now`.
    pub fn can_send(&self, now: Timestamp) -> bool {
        now >= self.next_at
    }

    /// Accounts a packet of `bytes` sent at `now` at `rate_bps`.
    pub fn on_send(&mut self, now: Timestamp, bytes: usize, rate_bps: f64) {
        let start = self.next_at.max(now - self.max_credit);
        let rate = if rate_bps.is_finite() && rate_bps > 1.0 {
            rate_bps
        } else {
            1.0
        };
        let ns = (bytes as f64 * 8.0 * 1e9 / rate).min(u64::MAX as f64) as u64;
        self.next_at = start + Duration::from_nanos(ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spacing_matches_the_rate() {
        let mut p = Pacer::new(Timestamp::ZERO, Duration::ZERO);
        let mut now = Timestamp::ZERO;
        for _ in 0..100 {
            assert!(p.can_send(now));
            p.on_send(now, 1000, 800_000.0);
            assert!(!p.can_send(now));
            now = p.next_send_time();
        }
        // 100 packets of 8000 bits at 800 kbit/s: 10 ms each.
        assert_eq!(now, Timestamp::from_millis(1000));
    }

    #[test]
    fn idle_time_does_not_become_a_burst() {
        let mut p = Pacer::new(Timestamp::ZERO, Duration::from_millis(2));
        p.on_send(Timestamp::from_secs_f64(10.0), 1000, 8e6);
        // Credit is at most 2 ms: the next slot is 10 s - 2 ms + 1 ms.
        assert_eq!(p.next_send_time(), Timestamp::from_millis(9_999));
        p.on_send(Timestamp::from_millis(10_000), 1000, 0.0);
        assert!(
            p.next_send_time() > Timestamp::from_millis(10_000),
            "zero rate never panics"
        );
    }
}
