//! Receiver-side loss repair and in-order delivery.
//!
//! A receiver that sees a sequence gap asks for each missing packet with an
//! ordinary NDN Interest `/<group>/seq=<n>`: the nearest tree node whose
//! Content Store still holds it, or the source's bounded buffer, answers.
//! Payloads are released strictly in sequence order; a packet still missing
//! `window` after its gap was seen is given up and released as a
//! [`Delivery::Gap`], so that the application can fail or mark the hole.
//!
//! Everything is bounded: at most `max_missing` outstanding sequence
//! numbers and `max_buffered` payloads waiting behind a hole. When either
//! bound is hit the oldest hole is given up early.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use bytes::Bytes;
use cc_core::{Duration, Timestamp};

/// Repair parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RepairConfig {
    /// How long after a gap is seen its packets may still be repaired.
    pub window: Duration,
    /// Delay before the first repair Interest (lets reordered packets in).
    pub first_delay: Duration,
    /// Interval between repair Interests for one packet (also their
    /// InterestLifetime).
    pub retry: Duration,
    /// Most outstanding missing sequence numbers.
    pub max_missing: usize,
    /// Most payloads held behind a hole.
    pub max_buffered: usize,
    /// Most repair Interests emitted per `poll_repairs` call.
    pub max_burst: usize,
    /// Most deliveries waiting for the application to `pop` them.
    pub max_ready: usize,
}

impl Default for RepairConfig {
    fn default() -> Self {
        RepairConfig {
            window: Duration::from_secs(2),
            first_delay: Duration::from_millis(10),
            retry: Duration::from_millis(400),
            max_missing: 4096,
            max_buffered: 16_384,
            max_burst: 64,
            max_ready: 65_536,
        }
    }
}

/// What the application gets, in sequence order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// The payload of `seq`.
    Payload {
        /// Sequence number.
        seq: u64,
        /// Application bytes.
        payload: Bytes,
    },
    /// `seq` was lost and could not be repaired within the window.
    Gap {
        /// Sequence number.
        seq: u64,
    },
}

#[derive(Debug, Clone, Copy)]
struct Missing {
    seen: Timestamp,
    next_try: Timestamp,
    tries: u32,
}

/// Counters of the repair.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RepairStats {
    /// Repair Interests sent.
    pub interests: u64,
    /// Missing packets that arrived after a repair Interest for them.
    pub repaired: u64,
    /// Missing packets that arrived without any repair Interest (reordering).
    pub late: u64,
    /// Packets given up (released as gaps).
    pub unrepaired: u64,
    /// Packets that arrived after they were given up (not delivered).
    pub too_late: u64,
    /// Deliveries dropped because the application did not drain them
    /// (the ready queue is bounded by `max_ready`).
    pub undrained: u64,
}

/// In-order delivery with repair of holes.
#[derive(Debug, Clone)]
pub struct Reorder {
    cfg: RepairConfig,
    /// Next sequence number to release; `None` before the first packet.
    next: Option<u64>,
    /// Highest sequence number seen + 1.
    high: u64,
    buffered: BTreeMap<u64, Bytes>,
    missing: BTreeMap<u64, Missing>,
    given_up: BTreeSet<u64>,
    ready: VecDeque<Delivery>,
    stats: RepairStats,
}

impl Reorder {
    /// Empty; the first packet fixes where the stream starts.
    pub fn new(cfg: RepairConfig) -> Self {
        Self::starting_at(cfg, None)
    }

    /// Empty; the stream starts at `start` (packets before it are not
    /// wanted, a first packet after it leaves holes from `start` on), or
    /// at the first packet for `None`.
    pub fn starting_at(cfg: RepairConfig, start: Option<u64>) -> Self {
        Reorder {
            cfg,
            next: start,
            high: 0,
            buffered: BTreeMap::new(),
            missing: BTreeMap::new(),
            given_up: BTreeSet::new(),
            ready: VecDeque::new(),
            stats: RepairStats::default(),
        }
    }

    /// A packet arrived. Returns false for duplicates and packets that
    /// are no longer wanted (before the start, given up, already released).
    pub fn on_packet(&mut self, now: Timestamp, seq: u64, payload: Bytes) -> bool {
        let next = *self.next.get_or_insert(seq);
        if seq < next || self.buffered.contains_key(&seq) {
            if self.given_up.remove(&seq) {
                self.stats.too_late += 1;
            }
            return false;
        }
        if seq >= self.high {
            let first_missing = self.high.max(next);
            for s in first_missing..seq {
                self.add_missing(now, s);
            }
            self.high = seq + 1;
        } else if let Some(m) = self.missing.remove(&seq) {
            if m.tries > 0 {
                self.stats.repaired += 1;
            } else {
                self.stats.late += 1;
            }
        } else {
            // Below `high`, not missing, not buffered: given up already.
            if self.given_up.remove(&seq) {
                self.stats.too_late += 1;
            }
            return false;
        }
        self.buffered.insert(seq, payload);
        while self.buffered.len() > self.cfg.max_buffered {
            if !self.give_up_oldest() {
                break;
            }
        }
        self.release();
        true
    }

    fn add_missing(&mut self, now: Timestamp, seq: u64) {
        while self.missing.len() >= self.cfg.max_missing {
            if !self.give_up_oldest() {
                return;
            }
        }
        self.missing.insert(
            seq,
            Missing {
                seen: now,
                next_try: now + self.cfg.first_delay,
                tries: 0,
            },
        );
    }

    fn give_up_oldest(&mut self) -> bool {
        let Some((&seq, _)) = self.missing.iter().next() else {
            return false;
        };
        self.give_up(seq);
        true
    }

    fn give_up(&mut self, seq: u64) {
        self.missing.remove(&seq);
        self.stats.unrepaired += 1;
        // Remember recent give-ups only, to count too-late arrivals.
        if self.given_up.len() >= self.cfg.max_missing {
            self.given_up.pop_first();
        }
        self.given_up.insert(seq);
    }

    /// Moves every releasable packet or gap to the ready queue.
    fn release(&mut self) {
        let Some(mut next) = self.next else { return };
        loop {
            if let Some(payload) = self.buffered.remove(&next) {
                self.ready
                    .push_back(Delivery::Payload { seq: next, payload });
            } else if next < self.high && !self.missing.contains_key(&next) {
                self.ready.push_back(Delivery::Gap { seq: next });
            } else {
                break;
            }
            next += 1;
            if self.ready.len() > self.cfg.max_ready {
                self.ready.pop_front();
                self.stats.undrained += 1;
            }
        }
        self.next = Some(next);
    }

    /// Gives up holes older than the window and returns the sequence
    /// numbers to ask for now (at most `max_burst`).
    pub fn poll_repairs(&mut self, now: Timestamp, out: &mut Vec<u64>) {
        let expired: Vec<u64> = self
            .missing
            .iter()
            .filter(|(_, m)| now.saturating_since(m.seen) >= self.cfg.window)
            .map(|(s, _)| *s)
            .collect();
        for s in expired {
            self.give_up(s);
        }
        self.release();
        for (seq, m) in self.missing.iter_mut() {
            if out.len() >= self.cfg.max_burst {
                break;
            }
            if m.next_try <= now {
                m.next_try = now + self.cfg.retry;
                m.tries += 1;
                self.stats.interests += 1;
                out.push(*seq);
            }
        }
    }

    /// When `poll_repairs` has work (a retry or a give-up), if ever.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.missing
            .values()
            .map(|m| m.next_try.min(m.seen + self.cfg.window))
            .min()
    }

    /// Gives up every hole now (the stream is over); the rest is released.
    pub fn finish(&mut self) {
        let all: Vec<u64> = self.missing.keys().copied().collect();
        for s in all {
            self.give_up(s);
        }
        self.release();
    }

    /// The next payload or gap in sequence order.
    pub fn pop(&mut self) -> Option<Delivery> {
        self.ready.pop_front()
    }

    /// Nothing missing and nothing held back.
    pub fn is_settled(&self) -> bool {
        self.missing.is_empty() && self.buffered.is_empty()
    }

    /// Holes still being repaired.
    pub fn missing_len(&self) -> usize {
        self.missing.len()
    }

    /// Counters.
    pub fn stats(&self) -> &RepairStats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Timestamp {
        Timestamp::from_millis(n)
    }
    fn p(i: u64) -> Bytes {
        Bytes::from(vec![i as u8; 3])
    }
    fn drain(r: &mut Reorder) -> Vec<Delivery> {
        core::iter::from_fn(|| r.pop()).collect()
    }
    fn seqs(d: &[Delivery]) -> Vec<i64> {
        d.iter()
            .map(|d| match d {
                Delivery::Payload { seq, .. } => *seq as i64,
                Delivery::Gap { seq } => -(*seq as i64),
            })
            .collect()
    }

    #[test]
    fn in_order_packets_flow_through() {
        let mut r = Reorder::new(RepairConfig::default());
        for s in 5..8 {
            assert!(r.on_packet(ms(0), s, p(s)));
        }
        assert_eq!(seqs(&drain(&mut r)), vec![5, 6, 7]);
        assert!(!r.on_packet(ms(0), 6, p(6)), "duplicate");
        assert!(!r.on_packet(ms(0), 4, p(4)), "before the start");
        assert!(r.is_settled());
    }

    #[test]
    fn a_known_start_makes_a_lost_first_packet_a_hole() {
        let mut r = Reorder::starting_at(RepairConfig::default(), Some(0));
        assert!(r.on_packet(ms(0), 1, p(1)));
        assert!(
            drain(&mut r).is_empty(),
            "0 is missing, not before the start"
        );
        let mut ask = Vec::new();
        r.poll_repairs(ms(11), &mut ask);
        assert_eq!(ask, vec![0]);
        assert!(r.on_packet(ms(20), 0, p(0)));
        assert_eq!(seqs(&drain(&mut r)), vec![0, 1]);
        assert_eq!(r.stats().repaired, 1);
        assert!(r.is_settled());
    }

    #[test]
    fn holes_are_asked_for_then_repaired_in_order() {
        let mut r = Reorder::new(RepairConfig::default());
        r.on_packet(ms(0), 0, p(0));
        r.on_packet(ms(1), 3, p(3));
        assert_eq!(seqs(&drain(&mut r)), vec![0]);
        let mut ask = Vec::new();
        r.poll_repairs(ms(5), &mut ask);
        assert!(ask.is_empty(), "first delay");
        assert_eq!(r.poll_timeout(), Some(ms(11)));
        r.poll_repairs(ms(11), &mut ask);
        assert_eq!(ask, vec![1, 2]);
        ask.clear();
        r.poll_repairs(ms(12), &mut ask);
        assert!(ask.is_empty(), "retry interval");
        r.on_packet(ms(50), 2, p(2));
        assert!(drain(&mut r).is_empty(), "1 still missing");
        r.poll_repairs(ms(411), &mut ask);
        assert_eq!(ask, vec![1], "retried");
        r.on_packet(ms(420), 1, p(1));
        assert_eq!(seqs(&drain(&mut r)), vec![1, 2, 3]);
        let st = r.stats();
        assert_eq!((st.interests, st.repaired, st.unrepaired), (3, 2, 0));
        assert!(r.is_settled());
    }

    #[test]
    fn unrepaired_holes_become_gaps_after_the_window() {
        let mut r = Reorder::new(RepairConfig::default());
        r.on_packet(ms(0), 0, p(0));
        r.on_packet(ms(0), 2, p(2));
        r.on_packet(ms(0), 3, p(3));
        let mut ask = Vec::new();
        r.poll_repairs(ms(1999), &mut ask);
        assert_eq!(seqs(&drain(&mut r)), vec![0]);
        r.poll_repairs(ms(2000), &mut ask);
        assert_eq!(seqs(&drain(&mut r)), vec![-1, 2, 3]);
        assert_eq!(r.stats().unrepaired, 1);
        assert!(!r.on_packet(ms(2100), 1, p(1)), "too late");
        assert_eq!(r.stats().too_late, 1);
    }

    #[test]
    fn bounds_give_up_the_oldest_hole_early() {
        let cfg = RepairConfig {
            max_missing: 2,
            max_buffered: 3,
            ..RepairConfig::default()
        };
        let mut r = Reorder::new(cfg);
        r.on_packet(ms(0), 0, p(0));
        r.on_packet(ms(0), 4, p(4)); // 1, 2, 3 missing: 1 given up
        assert_eq!(r.missing_len(), 2);
        assert_eq!(seqs(&drain(&mut r)), vec![0, -1]);
        for s in 5..8 {
            r.on_packet(ms(0), s, p(s));
        }
        // Four payloads wait behind holes 2 and 3: both are given up.
        assert_eq!(seqs(&drain(&mut r)), vec![-2, -3, 4, 5, 6, 7]);
        assert_eq!(r.stats().unrepaired, 3);
        r.on_packet(ms(0), 9, p(9));
        r.finish();
        assert_eq!(seqs(&drain(&mut r)), vec![-8, 9]);
        assert!(r.is_settled());
    }
}
