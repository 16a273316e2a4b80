//! The multicast source: SRMCC Algorithm 1 once per adaptation cycle
//! (cc-core's [`SrmccSource`]), sequenced group Data announcing the current
//! rate, and a pacer that releases packets at that rate.

use std::collections::VecDeque;

use bytes::Bytes;
use cc_core::srmcc::{MccMessage, SrmccConfig, SrmccSource};
use cc_core::{Duration, Timestamp};
use icn_tlv::{Interest, MccFeedback, Name};

use crate::error::McastError;
use crate::pacer::Pacer;
use crate::rtt::{FarthestRtt, RttProbe};
use crate::wire::{self, GroupPacket, Subscription, SubscriptionKind};

/// Parameters of a source.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceConfig {
    /// Algorithm 1 parameters (γ, thresholds, initial rate 50 kbit/s, cycle).
    pub srmcc: SrmccConfig,
    /// RTT that sets the cycle (4 × RTT) until a receiver reports one
    /// ([`crate::rtt`]); `None` keeps `srmcc.default_rtt` until then.
    pub rtt: Option<Duration>,
    /// Follow the RTTs receivers report in their probes (the largest of
    /// the last [`RTT_REPORTS_KEPT`]); `false` keeps the configured one.
    pub measure_rtt: bool,
    /// FreshnessPeriod of group Data.
    pub freshness: Option<Duration>,
    /// Pacer credit for late wake-ups.
    pub pacer_credit: Duration,
    /// How many of the latest group Data the source keeps to answer repair
    /// Interests (`/<group>/seq=<n>`); older ones are gone. 0 disables
    /// repair at the source (tree nodes' Content Stores may still answer).
    pub repair_buffer_packets: usize,
}

impl Default for SourceConfig {
    fn default() -> Self {
        SourceConfig {
            srmcc: SrmccConfig::default(),
            rtt: None,
            measure_rtt: true,
            freshness: Some(Duration::from_millis(1000)),
            pacer_credit: Duration::from_millis(2),
            repair_buffer_packets: 4096,
        }
    }
}

/// Counters of a source.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SourceStats {
    /// Group Data sent.
    pub packets_sent: u64,
    /// Wire bytes of group Data sent.
    pub bytes_sent: u64,
    /// MCC messages received.
    pub feedback_in: u64,
    /// MCC messages for another group.
    pub feedback_rejected: u64,
    /// Joins received (from the first-hop tree node).
    pub joins_in: u64,
    /// Leaves received.
    pub leaves_in: u64,
    /// Runs of Algorithm 1.
    pub adaptations: u64,
    /// Repair Interests answered from the buffer.
    pub repairs_answered: u64,
    /// Repair Interests for packets no longer buffered (asks ahead of the
    /// stream, tail probes, are not counted).
    pub repairs_missed: u64,
    /// RTT probes answered.
    pub rtt_probes: u64,
}

/// A multicast source for one group.
#[derive(Debug, Clone)]
pub struct MulticastSource {
    group: Name,
    cfg: SourceConfig,
    srmcc: SrmccSource,
    pacer: Pacer,
    next_seq: u64,
    feedback_pending: bool,
    last_feedback: Option<MccMessage>,
    subscribed_until: Option<Timestamp>,
    /// The latest sent packets, oldest first: `recent[i]` has sequence
    /// number `next_seq - recent.len() + i`.
    recent: VecDeque<Bytes>,
    farthest: FarthestRtt,
    stats: SourceStats,
}

/// RTT reports the source remembers: a few per receiver at one probe per
/// second each, so one that left stops counting within seconds.
pub const RTT_REPORTS_KEPT: usize = 32;

impl MulticastSource {
    /// A source for `group` starting at the initial rate.
    pub fn new(group: Name, cfg: SourceConfig, now: Timestamp) -> Self {
        let mut srmcc = SrmccSource::new(cfg.srmcc);
        if let Some(rtt) = cfg.rtt {
            srmcc.set_rtt(rtt);
        }
        MulticastSource {
            group,
            pacer: Pacer::new(now, cfg.pacer_credit),
            srmcc,
            cfg,
            next_seq: 0,
            feedback_pending: false,
            last_feedback: None,
            subscribed_until: None,
            recent: VecDeque::new(),
            farthest: FarthestRtt::new(RTT_REPORTS_KEPT),
            stats: SourceStats::default(),
        }
    }

    /// The group.
    pub fn group(&self) -> &Name {
        &self.group
    }

    /// A join/leave from the first-hop node: tells whether anyone listens.
    ///
    /// # Errors
    /// [`McastError::UnknownGroup`] for another group.
    pub fn handle_subscription(
        &mut self,
        now: Timestamp,
        sub: &Subscription,
    ) -> Result<(), McastError> {
        if sub.group != self.group {
            return Err(McastError::UnknownGroup);
        }
        match sub.kind {
            SubscriptionKind::Join => {
                self.stats.joins_in += 1;
                self.subscribed_until = Some(now + sub.lifetime);
            }
            SubscriptionKind::Leave => {
                self.stats.leaves_in += 1;
                self.subscribed_until = None;
            }
        }
        Ok(())
    }

    /// True while a tree node holds a membership (a join not yet expired).
    pub fn has_subscribers(&self, now: Timestamp) -> bool {
        self.subscribed_until.is_some_and(|t| t > now)
    }

    /// The aggregated MCC message of the tree; the latest one drives the
    /// next adaptation.
    ///
    /// # Errors
    /// [`McastError::UnknownGroup`] for another group.
    pub fn handle_feedback(&mut self, now: Timestamp, fb: &MccFeedback) -> Result<(), McastError> {
        if fb.group != self.group {
            self.stats.feedback_rejected += 1;
            return Err(McastError::UnknownGroup);
        }
        let msg = wire::to_message(fb);
        self.stats.feedback_in += 1;
        self.last_feedback = Some(msg);
        self.feedback_pending = true;
        self.srmcc.on_feedback(now, msg);
        Ok(())
    }

    /// Sets the RTT that sizes the adaptation cycle.
    pub fn set_rtt(&mut self, rtt: Duration) {
        self.srmcc.set_rtt(rtt);
    }

    /// Runs Algorithm 1 if a cycle has elapsed since the last run and
    /// feedback arrived since; returns the new rate.
    pub fn handle_timeout(&mut self, now: Timestamp) -> Option<f64> {
        if !self.feedback_pending {
            return None;
        }
        let r = self.srmcc.poll(now)?;
        self.feedback_pending = false;
        self.stats.adaptations += 1;
        Some(r)
    }

    /// The next adaptation time (when feedback is waiting), else never.
    pub fn poll_timeout(&self) -> Timestamp {
        if self.feedback_pending {
            self.srmcc.poll_timeout()
        } else {
            Timestamp::MAX
        }
    }

    /// When the pacer lets the next packet go.
    pub fn next_send_time(&self) -> Timestamp {
        self.pacer.next_send_time()
    }

    /// True when the pacer lets a packet go at `now`.
    pub fn can_send(&self, now: Timestamp) -> bool {
        self.pacer.can_send(now)
    }

    /// Builds the next group Data carrying `payload` and accounts it in the
    /// pacer; the caller checks [`Self::can_send`] first (sending early is
    /// accounted, so the average rate still holds).
    pub fn send(&mut self, now: Timestamp, payload: Bytes, end: bool) -> Bytes {
        let pkt = GroupPacket {
            group: self.group.clone(),
            seq: self.next_seq,
            rate_bps: wire::rate_to_wire(self.srmcc.rate_bps()),
            payload,
            end,
        };
        let bytes = pkt.encode(self.cfg.freshness);
        if self.cfg.repair_buffer_packets > 0 {
            if self.recent.len() >= self.cfg.repair_buffer_packets {
                self.recent.pop_front();
            }
            self.recent.push_back(bytes.clone());
        }
        self.next_seq += 1;
        self.pacer.on_send(now, bytes.len(), self.srmcc.rate_bps());
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += bytes.len() as u64;
        bytes
    }

    /// Answers a repair Interest `/<group>/seq=<n>` with the packet as it
    /// was sent (same name, so it satisfies the Interest), if `n` is still
    /// in the buffer. `None` for other names and for packets that are gone.
    /// An RTT probe of the group is answered too (empty Data), and the RTT
    /// its receiver measured before, if any, sets the cycle when it is the
    /// largest recent report.
    pub fn answer_repair(&mut self, interest: &Interest) -> Option<Bytes> {
        let name = &interest.name;
        if let Some(probe) = RttProbe::from_name(name) {
            if probe.group != self.group {
                return None;
            }
            self.stats.rtt_probes += 1;
            if let (Some(r), true) = (probe.last_rtt, self.cfg.measure_rtt) {
                self.farthest.report(r);
                if let Some(max) = self.farthest.max() {
                    self.srmcc.set_rtt(max);
                }
            }
            return Some(RttProbe::answer(name));
        }
        if name.len() != self.group.len() + 1 || !self.group.is_prefix_of(name) {
            return None;
        }
        let seq = name.last()?.as_sequence_num()?;
        let oldest = self.next_seq - self.recent.len() as u64;
        let hit = (oldest..self.next_seq)
            .contains(&seq)
            .then(|| self.recent.get((seq - oldest) as usize).cloned())
            .flatten();
        match hit {
            Some(_) => self.stats.repairs_answered += 1,
            // A receiver's tail probe ahead of the stream is no miss.
            None if seq >= self.next_seq => {}
            None => self.stats.repairs_missed += 1,
        }
        hit
    }

    /// The current sending rate (bit/s of Data wire bytes).
    pub fn rate_bps(&self) -> f64 {
        self.srmcc.rate_bps()
    }

    /// The sequence number of the next packet.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// The latest MCC message received.
    pub fn last_feedback(&self) -> Option<&MccMessage> {
        self.last_feedback.as_ref()
    }

    /// The adaptation cycle in force (4 × the RTT).
    pub fn cycle(&self) -> Duration {
        self.srmcc.cycle()
    }

    /// Counters.
    pub fn stats(&self) -> &SourceStats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use icn_tlv::{decode_packet, NetPacket};

    fn src() -> MulticastSource {
        MulticastSource::new(
            "/g".parse().unwrap(),
            SourceConfig::default(),
            Timestamp::ZERO,
        )
    }

    fn fb(max: u32, min: u32, fair: u64) -> MccFeedback {
        MccFeedback {
            group: "/g".parse().unwrap(),
            max_occupancy_ppm: max,
            min_occupancy_ppm: min,
            min_fair_share_bps: fair,
        }
    }

    /// A receiver's probes reach the source, which answers them; from the
    /// second probe on (it carries the RTT the first measured) the cycle is
    /// 4 × the farthest receiver's RTT instead of the configured one.
    #[test]
    fn the_cycle_follows_the_rtt_receivers_measure() {
        use crate::receiver::{MulticastReceiver, ReceiverConfig, ReceiverOutput};
        let mut s = src();
        assert_eq!(s.cycle(), Duration::from_millis(400), "default RTT 100 ms");
        let ms = Timestamp::from_millis;
        let mut rxs: Vec<MulticastReceiver> = [0, 0]
            .iter()
            .map(|_| {
                MulticastReceiver::new("/g".parse().unwrap(), ReceiverConfig::default(), ms(0))
            })
            .collect();
        // Two receivers, 30 ms and 250 ms from the source, probe twice.
        for round in 0..2u64 {
            for (rx, rtt_ms) in rxs.iter_mut().zip([30, 250]) {
                let t = ms(1000 * round);
                rx.handle_timeout(t);
                let probe = std::iter::from_fn(|| rx.poll_output())
                    .find_map(|o| match o {
                        ReceiverOutput::RttProbe { probe, .. } => Some(probe),
                        _ => None,
                    })
                    .expect("a probe per period");
                let i = Interest::new(probe.name());
                let answer = s.answer_repair(&i).expect("the source answers probes");
                let (_, net) = decode_packet(answer).unwrap();
                let Some(NetPacket::Data(d)) = net else {
                    panic!()
                };
                assert!(rx
                    .handle_data(t + Duration::from_millis(rtt_ms), &d)
                    .is_err());
            }
        }
        assert_eq!(rxs[1].srtt(), Some(Duration::from_millis(250)));
        assert_eq!(s.stats().rtt_probes, 4);
        assert_eq!(s.cycle(), Duration::from_millis(1000), "4 x 250 ms");
        // With measurement off the configured RTT stays.
        let mut fixed = MulticastSource::new(
            "/g".parse().unwrap(),
            SourceConfig {
                measure_rtt: false,
                ..SourceConfig::default()
            },
            Timestamp::ZERO,
        );
        let probe = crate::rtt::RttProbe {
            group: "/g".parse().unwrap(),
            id: 1,
            last_rtt: Some(Duration::from_millis(250)),
        };
        assert!(fixed.answer_repair(&Interest::new(probe.name())).is_some());
        assert_eq!(fixed.cycle(), Duration::from_millis(400));
    }

    #[test]
    fn starts_at_50_kbps_and_paces_at_that_rate() {
        let mut s = src();
        assert_eq!(s.rate_bps(), 50_000.0);
        let w = s.send(Timestamp::ZERO, Bytes::from(vec![0u8; 1000]), false);
        let expect_ns = (w.len() as u64 * 8) * 1_000_000_000 / 50_000;
        assert_eq!(s.next_send_time().as_nanos(), expect_ns);
        let (_, net) = decode_packet(w).unwrap();
        let Some(NetPacket::Data(d)) = net else {
            panic!()
        };
        let p = GroupPacket::from_data(&d).unwrap();
        assert_eq!((p.seq, p.rate_bps), (0, 50_000));
        assert_eq!(s.next_seq(), 1);
    }

    #[test]
    fn empty_tree_doubles_once_per_cycle_up_to_the_fair_share() {
        let mut s = src();
        let cycle = Duration::from_millis(400);
        let mut now = Timestamp::ZERO;
        let mut rates = Vec::new();
        for _ in 0..8 {
            s.handle_feedback(now, &fb(0, 0, 1_000_000)).unwrap();
            if let Some(r) = s.handle_timeout(now) {
                rates.push(r);
            }
            // A second message in the same cycle does not adapt again.
            s.handle_feedback(now, &fb(0, 0, 1_000_000)).unwrap();
            assert_eq!(s.handle_timeout(now + Duration::from_millis(1)), None);
            now += cycle;
        }
        assert_eq!(
            &rates[..5],
            &[100_000.0, 200_000.0, 400_000.0, 800_000.0, 1_000_000.0]
        );
        assert_eq!(s.stats().adaptations, 8);
    }

    #[test]
    fn heavy_occupancy_above_fair_share_halves() {
        let mut s = src();
        s.handle_feedback(Timestamp::ZERO, &fb(900_000, 900_000, 10_000))
            .unwrap();
        // R = 50k >= fair 10k and O > Oth2: both Rmin and Rmax halve, capped at 10k.
        assert_eq!(s.handle_timeout(Timestamp::ZERO), Some(10_000.0));
    }

    #[test]
    fn repair_interests_are_answered_from_a_bounded_buffer() {
        let cfg = SourceConfig {
            repair_buffer_packets: 3,
            ..SourceConfig::default()
        };
        let mut s = MulticastSource::new("/g".parse().unwrap(), cfg, Timestamp::ZERO);
        let sent: Vec<Bytes> = (0..5u8)
            .map(|i| s.send(Timestamp::ZERO, Bytes::from(vec![i; 10]), false))
            .collect();
        let ask = |n: &str| Interest::new(n.parse().unwrap());
        assert_eq!(s.answer_repair(&ask("/g/seq=4")), Some(sent[4].clone()));
        assert_eq!(s.answer_repair(&ask("/g/seq=2")), Some(sent[2].clone()));
        assert_eq!(s.answer_repair(&ask("/g/seq=1")), None, "evicted");
        assert_eq!(s.answer_repair(&ask("/g/seq=5")), None, "not sent yet");
        assert_eq!(s.answer_repair(&ask("/h/seq=4")), None);
        assert_eq!(s.answer_repair(&ask("/g/x/seq=4")), None);
        assert_eq!(
            (s.stats().repairs_answered, s.stats().repairs_missed),
            (2, 1),
            "only the evicted packet is a miss; 5 is a probe ahead"
        );
    }

    #[test]
    fn other_groups_and_subscriptions_are_refused() {
        let mut s = src();
        let mut other = fb(0, 0, 1);
        other.group = "/h".parse().unwrap();
        assert!(s.handle_feedback(Timestamp::ZERO, &other).is_err());
        assert_eq!(s.poll_timeout(), Timestamp::MAX);
        let j = Subscription::join("/g".parse().unwrap(), Duration::from_secs(3));
        s.handle_subscription(Timestamp::ZERO, &j).unwrap();
        assert!(s.has_subscribers(Timestamp::from_millis(2999)));
        assert!(!s.has_subscribers(Timestamp::from_millis(3000)));
        let j2 = Subscription::join("/h".parse().unwrap(), Duration::from_secs(3));
        assert!(s.handle_subscription(Timestamp::ZERO, &j2).is_err());
    }
}
