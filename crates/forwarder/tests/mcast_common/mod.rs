//! Shared set-up of the multicast tests over real engines in virtual time:
//! source and receiver applications driven by `icn_multicast`'s state
//! machines, the SRMCC Figure 4 tree, and rate helpers.
#![allow(dead_code)]

use bytes::Bytes;
use cc_core::{ConsumerLaw, Duration, Timestamp};
use icn_forwarder::engine::{EngineConfig, FaceId, QueueLimits};
use icn_forwarder::groups::SrmccGroups;
use icn_multicast::wire::Subscription;
use icn_multicast::{
    Delivery, GroupPacket, MulticastReceiver, MulticastSource, NodeStats, ReceiverConfig,
    SourceConfig,
};
use icn_sim::net::flows::LawFlow;
use icn_sim::net::{reply_frame, AppId, LinkParams, Network, NodeId};
use icn_tlv::{MccFeedback, Name, NetPacket};

/// Payload bytes of every group Data (the paper's 1000-byte packets).
pub const PAYLOAD: usize = 1000;

pub fn secs(s: u64) -> Timestamp {
    Timestamp::from_nanos(s * 1_000_000_000)
}

pub fn ms(x: u64) -> Duration {
    Duration::from_millis(x)
}

pub fn link(bps: u64, delay_ms: u64) -> LinkParams {
    LinkParams {
        delay: Duration::from_millis(delay_ms),
        capacity_bps: Some(bps),
        ..LinkParams::default()
    }
}

pub fn route(net: &mut Network, n: NodeId, prefix: &Name, face: FaceId) {
    net.node_mut(n).fib_add_nexthop(prefix, face, 0).unwrap();
}

/// An engine with Data queues of `qmax` packets (drop-tail), so that loss
/// based unicast flows see losses where SRMCC sees occupancy.
pub fn engine(qmax: usize) -> EngineConfig {
    EngineConfig {
        queue: QueueLimits {
            max_packets: qmax,
            max_bytes: 8 << 20,
        },
        ..EngineConfig::default()
    }
}

/// A multicast source application.
pub struct Source {
    pub app: AppId,
    pub src: MulticastSource,
    /// MCC messages that reached the source.
    pub feedback: Vec<(Timestamp, MccFeedback)>,
    /// Rate after each adaptation.
    pub rates: Vec<(Timestamp, f64)>,
    /// Repair Interests answered from the source's buffer.
    pub repairs_answered: u64,
    /// Stream this many packets (the last one marked as the end), then stop.
    pub end_after: Option<u64>,
    /// Packets lost on their way out of the source application (they
    /// stay in its repair buffer).
    pub lose_seqs: Vec<u64>,
}

/// A receiver application.
pub struct Receiver {
    pub app: AppId,
    pub rx: MulticastReceiver,
    /// A dead receiver sends nothing (no refresh, no feedback, no leave).
    pub alive: bool,
    /// (arrival, seq, wire bytes) of every group Data delivered to the app.
    pub arrivals: Vec<(Timestamp, u64, usize)>,
    /// Sequence numbers released to the application in order, with a flag
    /// telling whether the payload was the source's (`payload_of`).
    pub delivered: Vec<(u64, bool)>,
    /// Sequence numbers released as unrepaired gaps.
    pub gaps: Vec<u64>,
}

impl Receiver {
    /// Wire bit/s of the Data that arrived in [from, to).
    pub fn rate_bps(&self, from: Timestamp, to: Timestamp) -> f64 {
        let bytes: usize = self
            .arrivals
            .iter()
            .filter(|(t, _, _)| *t >= from && *t < to)
            .map(|(_, _, b)| *b)
            .sum();
        bytes as f64 * 8.0 / to.saturating_since(from).as_secs_f64()
    }

    /// Rates of consecutive 1 s windows in [from, to).
    pub fn per_second_bps(&self, from: Timestamp, to: Timestamp) -> Vec<f64> {
        let mut v = Vec::new();
        let mut t = from;
        while t < to {
            let n = t + Duration::from_secs(1);
            v.push(self.rate_bps(t, n));
            t = n;
        }
        v
    }

    /// The first arrival at or after `t`.
    pub fn first_arrival_after(&self, t: Timestamp) -> Option<Timestamp> {
        self.arrivals.iter().map(|a| a.0).find(|a| *a >= t)
    }
}

/// The payload of packet `seq`: distinct per packet, so that a receiver
/// can check it got the right bytes in the right place.
pub fn payload_of(seq: u64) -> Bytes {
    let mut v = vec![0x5a; PAYLOAD];
    v[..8].copy_from_slice(&seq.to_be_bytes());
    Bytes::from(v)
}

/// All multicast applications of a test.
#[derive(Default)]
pub struct Apps {
    pub sources: Vec<Source>,
    pub receivers: Vec<Receiver>,
    nonce: u32,
}

impl Apps {
    /// Adds a source of `group` on node `n` (routes `group` to it).
    pub fn add_source(&mut self, net: &mut Network, n: NodeId, group: &Name, cfg: SourceConfig) {
        let (app, face) = net.add_app(n, None);
        route(net, n, group, face);
        self.sources.push(Source {
            app,
            src: MulticastSource::new(group.clone(), cfg, net.now()),
            feedback: Vec::new(),
            rates: Vec::new(),
            repairs_answered: 0,
            end_after: None,
            lose_seqs: Vec::new(),
        });
    }

    /// Adds a receiver of `group` on node `n`, joining now; returns its index.
    pub fn add_receiver(
        &mut self,
        net: &mut Network,
        n: NodeId,
        group: &Name,
        cfg: ReceiverConfig,
    ) -> usize {
        let app = net.add_consumer(n);
        self.receivers.push(Receiver {
            app,
            rx: MulticastReceiver::new(group.clone(), cfg, net.now()),
            alive: true,
            arrivals: Vec::new(),
            delivered: Vec::new(),
            gaps: Vec::new(),
        });
        self.receivers.len() - 1
    }

    /// One step of every application at the network's current time.
    pub fn tick(&mut self, net: &mut Network) {
        let now = net.now();
        for s in &mut self.sources {
            for r in net.take_inbox(s.app) {
                if let Some(fb) = r.lp.mcc.clone() {
                    if s.src.handle_feedback(now, &fb).is_ok() {
                        s.feedback.push((now, fb));
                    }
                }
                let Some(i) = r.interest() else { continue };
                if let Some(sub) = Subscription::from_interest(i) {
                    let _ = s.src.handle_subscription(now, &sub);
                } else if let Some(wire) = s.src.answer_repair(i) {
                    s.repairs_answered += 1;
                    net.send(s.app, reply_frame(&r.lp, wire));
                }
            }
            if let Some(rate) = s.src.handle_timeout(now) {
                s.rates.push((now, rate));
            }
            while s.src.has_subscribers(now)
                && s.src.can_send(now)
                && s.end_after.is_none_or(|n| s.src.next_seq() < n)
            {
                let seq = s.src.next_seq();
                let end = s.end_after.is_some_and(|n| seq + 1 == n);
                let frame = s.src.send(now, payload_of(seq), end);
                if !s.lose_seqs.contains(&seq) {
                    net.send(s.app, frame);
                }
            }
        }
        for r in &mut self.receivers {
            for f in net.take_inbox(r.app) {
                let Some(NetPacket::Data(d)) = &f.packet else {
                    continue;
                };
                let Ok(p) = GroupPacket::from_data(d) else {
                    continue;
                };
                r.arrivals
                    .push((now, p.seq, d.wire().map_or(0, Bytes::len)));
                if r.alive {
                    let _ = r.rx.handle_data(now, d);
                }
            }
            if !r.alive {
                continue;
            }
            r.rx.handle_timeout(now);
            while let Some(d) = r.rx.pop_delivery() {
                match d {
                    Delivery::Payload { seq, payload } => {
                        r.delivered.push((seq, payload == payload_of(seq)));
                    }
                    Delivery::Gap { seq } => r.gaps.push(seq),
                }
            }
            while let Some(o) = r.rx.poll_output() {
                self.nonce = self
                    .nonce
                    .wrapping_mul(1_664_525)
                    .wrapping_add(1_013_904_223);
                net.send(r.app, o.encode(self.nonce));
            }
        }
    }
}

/// Runs applications and unicast flows in `step`s until `end`; `each`
/// is called after every step (sampling, scripted joins and leaves).
pub fn run<L: ConsumerLaw>(
    net: &mut Network,
    apps: &mut Apps,
    flows: &mut [LawFlow<L>],
    end: Timestamp,
    mut each: impl FnMut(&mut Network, &mut Apps),
) {
    let step = ms(1);
    while net.now() < end {
        for f in flows.iter_mut() {
            f.tick(net);
        }
        apps.tick(net);
        let next = net.now() + step;
        net.run_until(next);
        each(net, apps);
    }
}

/// The multicast counters of node `n`.
pub fn node_stats(net: &Network, n: NodeId) -> NodeStats {
    SrmccGroups::of(net.node(n))
        .expect("multicast hook installed")
        .stats()
}

/// SRMCC Figure 4 as engines: S ═10 Mb/s═ C ═2 Mb/s (20 ms)═ B, and
/// `receivers` nodes behind B on `access_bps` links.
pub struct Fig4 {
    pub net: Network,
    pub s: NodeId,
    pub c: NodeId,
    pub b: NodeId,
    pub c_up: FaceId,
    pub b_up: FaceId,
    pub r: Vec<NodeId>,
    /// B's face towards each receiver node.
    pub b_down: Vec<FaceId>,
    /// Each receiver node's face towards B.
    pub r_up: Vec<FaceId>,
}

impl Fig4 {
    pub fn new(seed: u64, qmax: usize, receivers: usize, access_bps: u64) -> Fig4 {
        let mut net = Network::new(seed);
        let s = net.add_node(engine(qmax));
        let c = net.add_node(engine(qmax));
        let b = net.add_node(engine(qmax));
        let (_, c_up) = net.connect(s, c, link(10_000_000, 5));
        let (_, b_up) = net.connect(c, b, link(2_000_000, 20));
        let mut r = Vec::new();
        let mut b_down = Vec::new();
        let mut r_up = Vec::new();
        for _ in 0..receivers {
            let n = net.add_node(engine(qmax));
            let (down, up) = net.connect(b, n, link(access_bps, 2));
            r.push(n);
            b_down.push(down);
            r_up.push(up);
        }
        Fig4 {
            net,
            s,
            c,
            b,
            c_up,
            b_up,
            r,
            b_down,
            r_up,
        }
    }

    /// Routes `prefix` from every node towards S.
    pub fn route_to_source(&mut self, prefix: &Name) {
        let (c, b, c_up, b_up) = (self.c, self.b, self.c_up, self.b_up);
        route(&mut self.net, c, prefix, c_up);
        route(&mut self.net, b, prefix, b_up);
        for (r, up) in self.r.clone().into_iter().zip(self.r_up.clone()) {
            route(&mut self.net, r, prefix, up);
        }
    }
}

/// A receiver configuration reporting `access_bps`.
pub fn rx_cfg(access_bps: u64) -> ReceiverConfig {
    ReceiverConfig {
        access_capacity_bps: access_bps,
        ..ReceiverConfig::default()
    }
}
