//! CoDel sojourn-time controller that *marks* instead of dropping.
//!
//! RFC 8289 §5 state machine (Nichols, Jacobson et al.), as PCON uses it
//! (docs/algorithms.md §6.2) and as NDN-DPDK's CoDel queues do: once the sojourn
//! time has stayed above `target` (5 ms) for a whole `interval` (100 ms), the
//! queue enters the marking state; it marks one packet at once and the next
//! ones spaced by the control law `interval/√count`; it leaves the state as
//! soon as a packet's sojourn falls below `target` (or the backlog is at most
//! one MTU). On re-entry shortly after leaving (within 16 intervals) the
//! count resumes from the last episode's, as RFC 8289 recommends.
//!
//! Deviation: RFC 8289 drops every due packet in a loop while dequeuing;
//! here each dequeue returns at most one mark, so the caller marks the packet
//! it is about to send (NDNLPv2 CongestionMark) and nothing is dropped.
//!
//! Step marking ([`CodelConfig::step_marking`], PCON's tuned profile,
//! docs/deviations.md): CoDel's interval still has to pass before a queue's
//! first episode (a burst, such as a slow start's, drains unmarked), but
//! once marks have started, and while they recur within 16 intervals, every
//! packet that waited at least `target` with another packet behind it is
//! marked. The consumer then sees which fraction of its Data queued and
//! cuts in proportion ([`crate::aimd::AimdConfig::proportional_mark_cut`]).
//! The RFC's spacing let a standing queue last: an episode only starts
//! after a whole interval above target (3 Data times for 8 KB Data on
//! 2 Mbit/s, while the window grows), marks come `interval/√count` apart,
//! and the MTU rule leaves one largest packet standing unmarked.

use crate::time::{Duration, Timestamp};

/// CoDel parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct CodelConfig {
    /// Acceptable standing queue delay.
    pub target: Duration,
    /// Time the sojourn must stay above target before marking; also the
    /// base spacing of marks.
    pub interval: Duration,
    /// Backlog at or below which the queue never counts as congested
    /// (RFC 8289's MAXPACKET), bytes. Not used while step marking.
    pub mtu_bytes: usize,
    /// After the first episode, mark every packet that waited `target` or
    /// more with a packet behind it, while marks recur within 16
    /// intervals (module doc). Off: RFC 8289.
    pub step_marking: bool,
}

impl Default for CodelConfig {
    fn default() -> Self {
        CodelConfig {
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            mtu_bytes: 1_500,
            step_marking: false,
        }
    }
}

/// The delay a queue on a link of `capacity_bps` can meet with packets of
/// up to `packet_bytes`: `target`, or the time one such packet takes to
/// serialise when that is longer (CCC's sojourn test). CoDel's markers do
/// not raise their target: the MAXPACKET rule (no congestion while at most
/// one largest packet is queued) already keeps a slow link that merely
/// carries large Data unmarked, and over the envelope sweep's PCON and
/// WinCM points the raised target met the bounds at no more points (49
/// and 43 with it, 50 and 43 without) while WinCM's queues were lower
/// without it at 14 of 16 points that moved.
pub fn link_target(target: Duration, packet_bytes: usize, capacity_bps: Option<u64>) -> Duration {
    packet_time(packet_bytes, capacity_bps).map_or(target, |d| target.max(d))
}

/// The time `packet_bytes` take to serialise on a link of `capacity_bps`;
/// `None` when the capacity is unknown or zero.
pub fn packet_time(packet_bytes: usize, capacity_bps: Option<u64>) -> Option<Duration> {
    let c = capacity_bps.filter(|&c| c > 0)?;
    let ns = (packet_bytes as u64).saturating_mul(8_000_000_000) / c;
    Some(Duration::from_nanos(ns))
}

/// Counters a CoDel marker keeps for observability.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CodelStats {
    /// Packets marked.
    pub marks: u64,
    /// Marking episodes entered.
    pub episodes: u64,
}

/// One CoDel marker per outgoing queue.
#[derive(Debug, Clone)]
pub struct CodelMarker {
    cfg: CodelConfig,
    target: Duration,
    /// `cfg.mtu_bytes` raised to the largest packet seen.
    mtu_bytes: usize,
    /// When the sojourn first went above target plus one interval.
    first_above: Option<Timestamp>,
    marking: bool,
    mark_next: Timestamp,
    count: u32,
    last_count: u32,
    stats: CodelStats,
}

impl CodelMarker {
    /// Creates a marker in the non-marking state.
    pub fn new(cfg: CodelConfig) -> Self {
        CodelMarker {
            cfg,
            target: cfg.target,
            mtu_bytes: cfg.mtu_bytes,
            first_above: None,
            marking: false,
            mark_next: Timestamp::ZERO,
            count: 0,
            last_count: 0,
            stats: CodelStats::default(),
        }
    }

    /// A packet of `packet_bytes` is leaving: raises the MAXPACKET backlog
    /// to the largest packet (RFC 8289's MTU; a 1500-byte one counted one
    /// queued 8000-byte Data as congestion).
    pub fn observe_packet(&mut self, packet_bytes: usize) {
        if packet_bytes > self.mtu_bytes {
            self.mtu_bytes = packet_bytes;
        }
    }

    /// The target in force.
    pub fn target(&self) -> Duration {
        self.target
    }

    /// Reports the dequeue of a packet that waited `sojourn`, leaving
    /// `backlog_bytes` behind; returns whether to mark it.
    pub fn on_dequeue(&mut self, now: Timestamp, sojourn: Duration, backlog_bytes: usize) -> bool {
        if self.cfg.step_marking {
            return self.step_dequeue(now, sojourn, backlog_bytes);
        }
        let ok_to_mark = self.sojourn_above(now, sojourn, backlog_bytes);
        if self.marking {
            if !ok_to_mark {
                self.marking = false;
                return false;
            }
            if now >= self.mark_next {
                self.count = self.count.saturating_add(1);
                self.mark_next = self.control_law(self.mark_next);
                self.stats.marks += 1;
                return true;
            }
            return false;
        }
        if !ok_to_mark {
            return false;
        }
        self.marking = true;
        self.stats.episodes += 1;
        let delta = self.count.saturating_sub(self.last_count);
        let recent = now.saturating_since(self.mark_next) < self.cfg.interval * 16;
        self.count = if delta > 1 && recent { delta } else { 1 };
        self.last_count = self.count;
        self.mark_next = self.control_law(now);
        self.stats.marks += 1;
        true
    }

    /// Step marking (module doc): marks every packet above target once
    /// marks have started and while they recur; the first episode waits an
    /// interval. `mark_next` holds the last mark's time.
    fn step_dequeue(&mut self, now: Timestamp, sojourn: Duration, backlog_bytes: usize) -> bool {
        if sojourn < self.target || backlog_bytes == 0 {
            self.first_above = None;
            self.marking = false;
            return false;
        }
        let detected = match self.first_above {
            _ if self.marking || self.recurring(now) => true,
            None => {
                self.first_above = Some(now + self.cfg.interval);
                false
            }
            Some(t) => now >= t,
        };
        if !detected {
            return false;
        }
        if !self.marking {
            self.marking = true;
            self.stats.episodes += 1;
        }
        self.count = self.count.saturating_add(1);
        self.mark_next = now;
        self.stats.marks += 1;
        true
    }

    /// Step marking: the last mark was within 16 intervals (RFC 8289's
    /// re-entry window), so a new episode starts without waiting.
    fn recurring(&self, now: Timestamp) -> bool {
        self.cfg.step_marking
            && self.stats.marks > 0
            && now.saturating_since(self.mark_next) < self.cfg.interval * 16
    }

    /// True when no episode is being detected or marked and none would
    /// start at once (a per-flow marker in this state may be dropped and
    /// made afresh).
    pub fn is_idle(&self, now: Timestamp) -> bool {
        self.first_above.is_none() && !self.marking && !self.recurring(now)
    }

    /// Whether the marker is in its marking state.
    pub fn is_marking(&self) -> bool {
        self.marking
    }

    /// Marks in the current (or last) episode.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Counters.
    pub fn stats(&self) -> CodelStats {
        self.stats
    }

    fn sojourn_above(&mut self, now: Timestamp, sojourn: Duration, backlog: usize) -> bool {
        if sojourn < self.target || backlog <= self.mtu_bytes {
            self.first_above = None;
            return false;
        }
        match self.first_above {
            None => {
                self.first_above = Some(now + self.cfg.interval);
                false
            }
            Some(t) => now >= t,
        }
    }

    /// `t + interval/√count` (RFC 8289 control law).
    fn control_law(&self, t: Timestamp) -> Timestamp {
        let n = f64::from(self.count.max(1));
        let gap_ns = self.cfg.interval.as_nanos() as f64 / libm::sqrt(n);
        t + Duration::from_nanos(gap_ns as u64)
    }
}

impl Default for CodelMarker {
    fn default() -> Self {
        CodelMarker::new(CodelConfig::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_largest_packet_queued_is_no_congestion() {
        let t = Duration::from_millis(5);
        assert_eq!(
            link_target(t, 8000, Some(2_000_000)),
            Duration::from_millis(32)
        );
        assert_eq!(link_target(t, 1200, Some(100_000_000)), t);
        assert_eq!(link_target(t, 8000, None), t);
        let mut m = CodelMarker::new(CodelConfig::default());
        m.observe_packet(8000);
        assert_eq!(m.target(), t);
        // One 8000-byte Data queued is no congestion, whatever its sojourn.
        let ms = |x| Timestamp::from_millis(x);
        for k in 0..50 {
            assert!(!m.on_dequeue(ms(10 * k), Duration::from_millis(30), 8000));
        }
    }
    use proptest::prelude::*;

    /// Dequeues one packet per ms with a constant 10 ms sojourn and returns
    /// the times (ms) of the marks up to `end_ms`.
    fn marks_with_constant_sojourn(end_ms: u64) -> alloc::vec::Vec<u64> {
        let mut c = CodelMarker::default();
        (0..=end_ms)
            .filter(|&t| c.on_dequeue(Timestamp::from_millis(t), Duration::from_millis(10), 10_000))
            .collect()
    }

    #[test]
    fn marks_follow_interval_over_sqrt_count() {
        // First above target at 0 → congested from 100 ms; mark at 100 ms,
        // next at 100+100/√1 = 200, then 200+100/√2 = 270.71 → 271 ms,
        // then 270.71+100/√3 = 328.45 → 329, then 328.45+50 = 378.45 → 379.
        assert_eq!(
            &marks_with_constant_sojourn(380)[..],
            &[100, 200, 271, 329, 379]
        );
    }

    #[test]
    fn low_sojourn_leaves_the_marking_state() {
        let mut c = CodelMarker::default();
        let d10 = Duration::from_millis(10);
        assert!(!c.on_dequeue(Timestamp::from_millis(0), d10, 10_000));
        assert!(c.on_dequeue(Timestamp::from_millis(100), d10, 10_000));
        assert!(c.is_marking());
        assert!(!c.on_dequeue(
            Timestamp::from_millis(101),
            Duration::from_millis(1),
            10_000
        ));
        assert!(!c.is_marking());
        // A small backlog (≤ MTU) never counts as congestion.
        assert!(!c.on_dequeue(Timestamp::from_millis(102), d10, 1_000));
        assert!(!c.on_dequeue(Timestamp::from_millis(500), d10, 1_000));
    }

    #[test]
    fn quick_reentry_resumes_the_count() {
        let mut c = CodelMarker::default();
        let d10 = Duration::from_millis(10);
        for t in 0..=400 {
            c.on_dequeue(Timestamp::from_millis(t), d10, 10_000);
        }
        let before = c.count();
        assert!(before >= 5);
        c.on_dequeue(Timestamp::from_millis(401), Duration::ZERO, 0);
        for t in 402..=502 {
            c.on_dequeue(Timestamp::from_millis(t), d10, 10_000);
        }
        assert!(c.is_marking());
        // Re-entered within 16 intervals: count = delta since last entry.
        assert_eq!(c.count(), before.saturating_sub(1));
    }

    fn stepping() -> CodelMarker {
        CodelMarker::new(CodelConfig {
            step_marking: true,
            ..CodelConfig::default()
        })
    }

    #[test]
    fn step_marking_waits_an_interval_once_then_marks_every_queued_packet() {
        let mut c = stepping();
        let ms = Timestamp::from_millis;
        let d10 = Duration::from_millis(10);
        // A burst that drains within the interval is not marked.
        for t in 0..50 {
            assert!(!c.on_dequeue(ms(t), d10, 8000));
        }
        assert!(!c.on_dequeue(ms(50), Duration::ZERO, 0));
        assert!(c.is_idle(ms(51)));
        // A standing queue: the first mark after one interval ...
        let marks: alloc::vec::Vec<u64> = (60..=200)
            .filter(|&t| c.on_dequeue(ms(t), d10, 8000))
            .collect();
        assert_eq!(marks.first(), Some(&160));
        // ... then every packet above target.
        assert_eq!(marks.len(), 41);
        // One 8 KB Data waiting behind the one leaving is marked too: no
        // MTU rule while stepping.
        assert!(c.on_dequeue(ms(201), Duration::from_millis(32), 8000));
        // Below target, or nothing behind: no mark, and the episode ends.
        assert!(!c.on_dequeue(ms(202), Duration::from_millis(4), 8000));
        assert!(!c.on_dequeue(ms(203), d10, 0));
        assert!(!c.is_marking());
        // Marks recur at once within 16 intervals of the last one ...
        assert!(!c.is_idle(ms(300)));
        assert!(c.on_dequeue(ms(300), d10, 8000));
        assert_eq!(c.stats().episodes, 2);
        // ... and after a quiet 1.6 s the interval applies again.
        assert!(!c.on_dequeue(ms(301), Duration::ZERO, 0));
        assert!(c.is_idle(ms(1_901)));
        assert!(!c.on_dequeue(ms(1_901), d10, 8000));
        assert!(c.on_dequeue(ms(2_001), d10, 8000));
    }

    proptest! {
        #[test]
        fn step_marking_never_marks_below_target_or_an_empty_queue(
            ev in proptest::collection::vec((0u64..50_000_000, 0u64..50_000_000, 0usize..20_000), 1..300)
        ) {
            let mut c = stepping();
            let mut now = 0u64;
            for (dt, soj, backlog) in ev {
                now += dt;
                let m = c.on_dequeue(Timestamp::from_nanos(now), Duration::from_nanos(soj), backlog);
                if soj < 5_000_000 || backlog == 0 { prop_assert!(!m); }
            }
        }

        #[test]
        fn never_marks_below_target_and_never_panics(
            ev in proptest::collection::vec((0u64..50_000_000, 0u64..50_000_000, 0usize..100_000), 1..300)
        ) {
            let mut c = CodelMarker::default();
            let mut now = 0u64;
            for (dt, soj, backlog) in ev {
                now += dt;
                let m = c.on_dequeue(Timestamp::from_nanos(now), Duration::from_nanos(soj), backlog);
                if soj < 5_000_000 || backlog <= 1_500 { prop_assert!(!m); }
            }
        }
    }
}
