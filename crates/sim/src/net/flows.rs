//! Closed-loop consumers for virtual-time congestion-control tests: each
//! flow runs one cc-core [`ConsumerLaw`] (window or rate), sends Interests
//! for consecutive segments through an application face, feeds every Data
//! and Nack back into the law and records what it measured.

use std::collections::BTreeMap;

use bytes::Bytes;
use cc_core::pace_jitter::{PaceJitter, PACE_JITTER};
use cc_core::rtt::{RttConfig, RttEstimator};
use cc_core::{ConsumerLaw, DataFeedback, Duration, NackFeedback, SendLimit, Timestamp};
use icn_tlv::{CcFields, Interest, LpPacket, NackReason, Name};

use super::{AppId, Network};

/// What one flow measured.
#[derive(Debug, Clone, Default)]
pub struct FlowStats {
    /// (arrival time, Data bytes) of every Data received.
    pub data: Vec<(Timestamp, usize)>,
    /// RTT samples of first transmissions: (arrival time, RTT).
    pub rtts: Vec<(Timestamp, Duration)>,
    /// Nacks received (by reason Congestion).
    pub congestion_nacks: u64,
    /// Other Nacks.
    pub other_nacks: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Interests sent.
    pub sent: u64,
}

impl FlowStats {
    /// Goodput in bit/s over [from, to).
    pub fn goodput_bps(&self, from: Timestamp, to: Timestamp) -> f64 {
        let bytes: usize = self
            .data
            .iter()
            .filter(|(t, _)| *t >= from && *t < to)
            .map(|(_, b)| *b)
            .sum();
        bytes as f64 * 8.0 / to.saturating_since(from).as_secs_f64().max(1e-9)
    }

    /// RTT samples taken in [from, to).
    pub fn rtts_between(&self, from: Timestamp, to: Timestamp) -> Vec<Duration> {
        self.rtts
            .iter()
            .filter(|(t, _)| *t >= from && *t < to)
            .map(|(_, r)| *r)
            .collect()
    }
}

/// Per-Interest CC fields from the law (MIRCC class and steering hint, CCC
/// objective, ...): called with the law and the segment about to be sent.
pub type Tagger<L> = Box<dyn FnMut(&mut L, u64) -> Option<CcFields>>;

struct Pending {
    sent_at: Timestamp,
    retx: bool,
}

/// One consumer flow driven by a congestion-control law.
pub struct LawFlow<L: ConsumerLaw> {
    /// The application endpoint.
    pub app: AppId,
    prefix: Name,
    /// The law.
    pub law: L,
    /// CC fields put on every Interest (class, service class, ...).
    pub interest_cc: CcFields,
    tagger: Option<Tagger<L>>,
    next_seg: u64,
    pending: BTreeMap<u64, Pending>,
    retx_queue: Vec<u64>,
    credit: f64,
    /// icncat's pacer lag (`PipelineConfig::pace_jitter`), seeded by the
    /// flow's application id so flows never share a sequence, and the lag
    /// of the next Interest (a fraction of the gap).
    jitter: PaceJitter,
    lag: f64,
    last_tick: Option<Timestamp>,
    start: Timestamp,
    stop: Timestamp,
    /// icncat's retransmission timer: RFC 6298 with ndnget's K = 8, one
    /// backoff per loss episode (`icn_consumer::pipeline`). A fixed timer
    /// retransmitted into a standing queue longer than itself and filled
    /// the bottleneck with Data nobody waited for.
    rtt: RttEstimator,
    /// When the timer last backed off.
    backoff_at: Option<Timestamp>,
    nonce: u32,
    /// Measurements.
    pub stats: FlowStats,
}

/// The seed of a flow's pacing lags, from its application's id and `draw`
/// through a 64-bit finaliser (MurmurHash3's `fmix64`), so that no two
/// flows or draws share a sequence. The lag generator steps its state by
/// the golden-ratio constant, so a seed of id × that constant (the rule
/// before) gave application k the sequence of application 0 shifted by k
/// steps: the grid's flows drew one sequence of lags, two Interests apart.
fn lag_seed(app: AppId, draw: u64) -> u64 {
    let mut z = (app.0 as u64 & 0xffff_ffff) | draw << 32;
    z ^= z >> 33;
    z = z.wrapping_mul(0xff51_afd7_ed55_8ccd);
    z ^= z >> 33;
    z = z.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    z ^ (z >> 33)
}

impl<L: ConsumerLaw> LawFlow<L> {
    /// A flow fetching `prefix/<seg>` from `start` to `stop`.
    pub fn new(app: AppId, prefix: &str, law: L, start: Timestamp, stop: Timestamp) -> Self {
        LawFlow {
            app,
            prefix: prefix.parse().unwrap_or_else(|_| Name::root()),
            law,
            interest_cc: CcFields::default(),
            tagger: None,
            next_seg: 0,
            pending: BTreeMap::new(),
            retx_queue: Vec::new(),
            credit: 1.0,
            jitter: PaceJitter::new(lag_seed(app, 0), PACE_JITTER),
            lag: 0.0,
            last_tick: None,
            start,
            stop,
            rtt: RttEstimator::new(RttConfig {
                k: 8.0,
                ..RttConfig::default()
            }),
            backoff_at: None,
            nonce: (app.0 as u32).wrapping_mul(0x9e37_79b9),
            stats: FlowStats::default(),
        }
    }

    /// Draws this flow's pacing lags (D1) from another sequence: `draw` 0
    /// is the default one, any other another draw of the same run, to see
    /// how a figure depends on the lags.
    pub fn with_lag_draw(mut self, draw: u64) -> Self {
        self.jitter = PaceJitter::new(lag_seed(self.app, draw), PACE_JITTER);
        self
    }

    /// Lets `tagger` add per-Interest CC fields (they override
    /// `interest_cc` where set).
    pub fn with_tagger(mut self, tagger: Tagger<L>) -> Self {
        self.tagger = Some(tagger);
        self
    }

    fn seg_of(&self, name: &Name) -> Option<u64> {
        let c = name.get(name.len().checked_sub(1)?)?;
        c.as_segment()
    }

    /// Processes received frames, timeouts and sends what the law allows.
    pub fn tick(&mut self, net: &mut Network) {
        let now = net.now();
        for r in net.take_inbox(self.app) {
            self.on_frame(now, &r.lp, r.packet);
        }
        let rto = self.rtt.rto();
        let expired: Vec<(u64, Timestamp)> = self
            .pending
            .iter()
            .filter(|(_, p)| now.saturating_since(p.sent_at) >= rto)
            .map(|(s, p)| (*s, p.sent_at))
            .collect();
        let last_sent = expired.iter().map(|e| e.1).max();
        if last_sent.is_some_and(|s| self.backoff_at.is_none_or(|b| s >= b)) {
            self.backoff_at = Some(now);
            self.rtt.backoff();
        }
        for (s, _) in expired {
            self.pending.remove(&s);
            self.stats.timeouts += 1;
            self.law.on_timeout(now);
            self.retx_queue.push(s);
        }
        if now < self.start || now >= self.stop {
            self.last_tick = Some(now);
            return;
        }
        let dt = self
            .last_tick
            .map_or(0.0, |t| now.saturating_since(t).as_secs_f64());
        self.last_tick = Some(now);
        let (cap, rate, rate_law) = match self.law.limit() {
            // A window law that paces (`ConsumerLaw::pace_ips`, as icncat's
            // pipeline applies it) spends credit like a rate law.
            SendLimit::Window { interests } => (
                interests.floor().max(1.0) as usize,
                self.law.pace_ips().filter(|r| r.is_finite() && *r > 0.0),
                false,
            ),
            SendLimit::Rate {
                interests_per_sec,
                max_outstanding,
            } => (
                max_outstanding.max(1) as usize,
                Some(interests_per_sec),
                true,
            ),
        };
        if let Some(r) = rate {
            self.credit = (self.credit + r * dt).min(r * 0.01 + 2.0);
        }
        while self.pending.len() < cap {
            if rate.is_some() {
                // A rate law's Interest waits its lag past its slot, as in
                // icncat's pacer; the slots keep their grid.
                if self.credit < 1.0 + self.lag {
                    break;
                }
                self.credit -= 1.0;
                self.lag = if rate_law {
                    self.jitter.next_lag()
                } else {
                    0.0
                };
            }
            let (seg, retx) = match self.retx_queue.pop() {
                Some(s) => (s, true),
                None => {
                    self.next_seg += 1;
                    (self.next_seg - 1, false)
                }
            };
            self.send(net, now, seg, retx);
        }
    }

    fn send(&mut self, net: &mut Network, now: Timestamp, seg: u64, retx: bool) {
        let name = self.prefix.append(icn_tlv::Component::segment(seg));
        let mut i = Interest::new(name);
        self.nonce = self.nonce.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        i.nonce = Some(self.nonce);
        i.lifetime = Some(Duration::from_secs(2));
        let wire = i.encode();
        let mut cc = self.interest_cc;
        if let Some(t) = self.tagger.as_mut().and_then(|t| t(&mut self.law, seg)) {
            merge_cc(&mut cc, &t);
        }
        let frame = if cc.is_empty() {
            wire
        } else {
            LpPacket {
                cc,
                ..LpPacket::from_fragment(wire)
            }
            .encode()
        };
        self.pending.insert(seg, Pending { sent_at: now, retx });
        self.stats.sent += 1;
        self.law.on_interest_sent(now, retx);
        net.send(self.app, frame);
    }

    fn on_frame(&mut self, now: Timestamp, lp: &LpPacket, packet: Option<icn_tlv::NetPacket>) {
        match (packet, lp.nack) {
            (Some(icn_tlv::NetPacket::Data(d)), _) => {
                let Some(seg) = self.seg_of(&d.name) else {
                    return;
                };
                let Some(p) = self.pending.remove(&seg) else {
                    return;
                };
                let size = d.wire().map_or(0, Bytes::len);
                let rtt = now.saturating_since(p.sent_at);
                if !p.retx {
                    self.stats.rtts.push((now, rtt));
                    let n = (self.pending.len() + 1).div_ceil(2);
                    self.rtt.add_sample(rtt, n.max(1) as u32);
                }
                self.stats.data.push((now, size));
                let f = |x: Option<u64>| x.map(|v| v as f64);
                let fb = DataFeedback {
                    rtt: (!p.retx).then_some(rtt),
                    congestion_mark: lp.congestion_mark.unwrap_or(0),
                    data_size_bytes: size as u32,
                    segment: Some(seg),
                    primary_rate_bps: f(lp.cc.primary_rate_bps),
                    secondary_rate_bps: f(lp.cc.secondary_rate_bps),
                    path_id: lp.cc.path_id,
                    pace_constraint_ips: lp.cc.pace_constraint_milli_ips.map(|m| m as f64 / 1000.0),
                    target_rate_bps: f(lp.cc.target_rate_bps),
                };
                self.law.on_data(now, &fb);
            }
            (Some(icn_tlv::NetPacket::Interest(i)), Some(reason)) => {
                let Some(seg) = self.seg_of(&i.name) else {
                    return;
                };
                if self.pending.remove(&seg).is_none() {
                    return;
                }
                let congestion = reason == NackReason::Congestion;
                if congestion {
                    self.stats.congestion_nacks += 1;
                } else {
                    self.stats.other_nacks += 1;
                }
                let f = |x: Option<u64>| x.map(|v| v as f64);
                self.law.on_nack(
                    now,
                    &NackFeedback {
                        congestion,
                        primary_rate_bps: f(lp.cc.primary_rate_bps),
                        secondary_rate_bps: f(lp.cc.secondary_rate_bps),
                        path_id: lp.cc.path_id,
                    },
                );
                self.retx_queue.push(seg);
            }
            _ => {}
        }
    }
}

/// Copies the fields set in `from` into `into`.
fn merge_cc(into: &mut CcFields, from: &CcFields) {
    macro_rules! take {
        ($($f:ident),*) => {$( if from.$f.is_some() { into.$f = from.$f; } )*};
    }
    take!(
        primary_rate_bps,
        secondary_rate_bps,
        path_id,
        steering_hint,
        traffic_class,
        pace_objective_milli_ips,
        pace_constraint_milli_ips,
        flow_data_size_bytes,
        service_class,
        downstream_rate_bps,
        target_rate_bps
    );
    into.service_penalised |= from.service_penalised;
}

/// Runs `net` until `end`, ticking every flow each `step`.
pub fn drive<L: ConsumerLaw>(
    net: &mut Network,
    flows: &mut [LawFlow<L>],
    end: Timestamp,
    step: Duration,
) {
    while net.now() < end {
        for f in flows.iter_mut() {
            f.tick(net);
        }
        net.run_for(step);
    }
    for f in flows.iter_mut() {
        f.tick(net);
    }
}

/// Jain's fairness index of `xs`: (Σx)² / (n·Σx²), 1 when all are equal,
/// 1/n when one has everything, 0 when nothing moved at all.
pub fn jain(xs: &[f64]) -> f64 {
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if s2 <= 0.0 {
        return 0.0;
    }
    s * s / (xs.len() as f64 * s2)
}

/// The `q` quantile (0..=1) of `xs` (sorted copy, nearest rank).
pub fn quantile(xs: &[Duration], q: f64) -> Duration {
    if xs.is_empty() {
        return Duration::ZERO;
    }
    let mut v = xs.to_vec();
    v.sort();
    let i = ((v.len() as f64 * q).ceil() as usize).clamp(1, v.len()) - 1;
    v[i]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lags(app: usize, draw: u64) -> Vec<f64> {
        let mut j = PaceJitter::new(lag_seed(AppId(app), draw), PACE_JITTER);
        (0..64).map(|_| j.next_lag()).collect()
    }

    /// No flow's lags are another flow's shifted by a few Interests (the
    /// old seeding gave application k application 0's, k steps later),
    /// and draws of one flow differ.
    #[test]
    fn flows_and_draws_lag_independently() {
        let first = lags(1, 0);
        for app in [3, 5, 7] {
            let other = lags(app, 0);
            for shift in 0..16 {
                assert_ne!(
                    first[shift..shift + 32],
                    other[..32],
                    "app {app}, shift {shift}"
                );
                assert_ne!(
                    other[shift..shift + 32],
                    first[..32],
                    "app {app}, shift {shift}"
                );
            }
        }
        assert_ne!(lags(1, 0), lags(1, 1));
        assert_eq!(lags(1, 2), lags(1, 2));
    }
}
