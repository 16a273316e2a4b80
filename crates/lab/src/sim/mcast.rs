//! A scenario's multicast groups in virtual time: the source and receiver
//! applications of `icnput --multicast` and `icncat --subscribe` (the
//! `icn_multicast` state machines they run) on application faces of the
//! engines, which clone, aggregate feedback and sample their queues as
//! icnfwd does (`[multicast_groups]`).

use bytes::Bytes;
use cc_core::{Duration, Timestamp};
use icn_multicast::wire::Subscription;
use icn_multicast::{
    Delivery, GroupPacket, MulticastReceiver, MulticastSource, ReceiverConfig, SourceConfig,
};
use icn_sim::net::{reply_frame, AppId, Network};
use icn_tlv::{MccFeedback, Name, NetPacket};

use crate::scenario::Group;

fn secs(t: Timestamp) -> f64 {
    t.saturating_since(Timestamp::ZERO).as_secs_f64()
}

/// One receiver application.
pub(super) struct Receiver {
    pub node: String,
    pub access_bps: u64,
    app: AppId,
    cfg: ReceiverConfig,
    /// Created at the group's start (a join then), gone quiet after stop.
    rx: Option<MulticastReceiver>,
    /// Payload bytes released in order so far.
    pub delivered_bytes: u64,
    pub unrepaired: u64,
}

impl Receiver {
    pub fn rx(&self) -> Option<&MulticastReceiver> {
        self.rx.as_ref()
    }
}

/// One group: its source and receivers.
pub(super) struct McastGroup {
    group: Name,
    src_app: AppId,
    src: MulticastSource,
    payload: Bytes,
    start: Timestamp,
    stop: Timestamp,
    /// (run time s, bit/s) of each rate Algorithm 1 chose.
    pub rates: Vec<(f64, f64)>,
    pub feedback: Vec<(Timestamp, MccFeedback)>,
    pub receivers: Vec<Receiver>,
    left: bool,
    nonce: u32,
}

impl McastGroup {
    /// `g`'s applications: the source's face carries the group prefix (the
    /// routes towards it are the caller's); receivers join at `start`.
    pub fn new(
        net: &mut Network,
        g: &Group,
        src_app: AppId,
        receivers: Vec<(String, AppId, u64)>,
        start: Timestamp,
        stop: Timestamp,
    ) -> McastGroup {
        let group: Name = g.prefix().parse().expect("checked group name");
        let mut cfg = SourceConfig::default();
        cfg.srmcc.gamma = g.gamma;
        cfg.srmcc.oth1 = g.oth1;
        cfg.srmcc.oth2 = g.oth2;
        cfg.srmcc.initial_rate_bps = g.initial_rate_bps;
        cfg.rtt = g
            .rtt_ms
            .map(|ms| Duration::from_nanos((ms * 1e6).round() as u64));
        McastGroup {
            src: MulticastSource::new(group.clone(), cfg, net.now()),
            group,
            src_app,
            payload: Bytes::from(vec![0x5a; g.payload_bytes as usize]),
            start,
            stop,
            rates: Vec::new(),
            feedback: Vec::new(),
            receivers: receivers
                .into_iter()
                .map(|(node, app, access_bps)| Receiver {
                    node,
                    access_bps,
                    app,
                    cfg: ReceiverConfig {
                        access_capacity_bps: access_bps,
                        ..ReceiverConfig::default()
                    },
                    rx: None,
                    delivered_bytes: 0,
                    unrepaired: 0,
                })
                .collect(),
            left: false,
            nonce: 1,
        }
    }

    /// Wire bytes of group Data the source has sent so far.
    pub fn sent_bytes(&self) -> u64 {
        self.src.stats().bytes_sent
    }

    pub fn feedback_in(&self) -> u64 {
        self.src.stats().feedback_in
    }

    /// One step of the source and every receiver at the network's time.
    pub fn tick(&mut self, net: &mut Network) {
        let now = net.now();
        self.tick_source(net, now);
        if now < self.start {
            return;
        }
        let leaving = now >= self.stop && !self.left;
        for r in &mut self.receivers {
            let cfg = &r.cfg;
            let rx = r.rx.get_or_insert_with(|| {
                MulticastReceiver::new(self.group.clone(), cfg.clone(), now)
            });
            for f in net.take_inbox(r.app) {
                let Some(NetPacket::Data(d)) = &f.packet else {
                    continue;
                };
                if now < self.stop && GroupPacket::from_data(d).is_ok() {
                    let _ = rx.handle_data(now, d);
                }
            }
            if now >= self.stop && !leaving {
                continue;
            }
            if leaving {
                rx.leave();
            } else {
                rx.handle_timeout(now);
            }
            while let Some(d) = rx.pop_delivery() {
                match d {
                    Delivery::Payload { payload, .. } => r.delivered_bytes += payload.len() as u64,
                    Delivery::Gap { .. } => r.unrepaired += 1,
                }
            }
            while let Some(o) = rx.poll_output() {
                self.nonce = self
                    .nonce
                    .wrapping_mul(1_664_525)
                    .wrapping_add(1_013_904_223);
                net.send(r.app, o.encode(self.nonce));
            }
        }
        self.left |= leaving;
    }

    fn tick_source(&mut self, net: &mut Network, now: Timestamp) {
        for r in net.take_inbox(self.src_app) {
            if let Some(fb) = r.lp.mcc.clone() {
                if self.src.handle_feedback(now, &fb).is_ok() {
                    self.feedback.push((now, fb));
                }
            }
            let Some(i) = r.interest() else { continue };
            if let Some(sub) = Subscription::from_interest(i) {
                let _ = self.src.handle_subscription(now, &sub);
            } else if let Some(wire) = self.src.answer_repair(i) {
                net.send(self.src_app, reply_frame(&r.lp, wire));
            }
        }
        if let Some(rate) = self.src.handle_timeout(now) {
            self.rates.push((secs(now), rate));
        }
        while now < self.stop && self.src.has_subscribers(now) && self.src.can_send(now) {
            let frame = self.src.send(now, self.payload.clone(), false);
            net.send(self.src_app, frame);
        }
    }
}

/// The groups' figures from the samples `(t, source bytes, receivers'
/// delivered bytes)` taken during a run of `t_end` seconds.
pub(super) fn results(
    sc: &crate::Scenario,
    groups: &[McastGroup],
    samples: &[Vec<(f64, u64, Vec<u64>)>],
    t_end: f64,
) -> Vec<crate::multicast::GroupResult> {
    use crate::metrics::{mean_rate, windowed_rates};
    use crate::multicast::{GroupResult, ReceiverResult};
    use crate::results::RATE_WINDOW_S;
    let scale = t_end / sc.duration_s;
    sc.groups
        .iter()
        .zip(groups)
        .zip(samples)
        .map(|((g, m), s)| {
            let (start, stop) = (g.start_s * scale, g.stop_s * scale);
            // The last half of the group's own active time.
            let half = start + (stop - start) / 2.0;
            let bits = |pts: Vec<(f64, f64)>| -> Vec<(f64, f64)> {
                windowed_rates(&pts, start, stop, RATE_WINDOW_S)
                    .into_iter()
                    .map(|(t, r)| (t, r * 8.0))
                    .collect()
            };
            let sent: Vec<(f64, f64)> = s.iter().map(|x| (x.0, x.1 as f64)).collect();
            let receivers = m
                .receivers
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let pts: Vec<(f64, f64)> = s.iter().map(|x| (x.0, x.2[i] as f64)).collect();
                    let rp = r.rx().map(|x| *x.repair_stats());
                    ReceiverResult {
                        node: r.node.clone(),
                        access_bps: r.access_bps,
                        goodput_last_half_bps: mean_rate(&pts, half, stop) * 8.0,
                        goodput: bits(pts),
                        packets: r.rx().map_or(0, |x| x.stats().packets),
                        holes: rp.map_or(0, |p| p.repaired + p.late + p.unrepaired),
                        repaired: rp.map_or(0, |p| p.repaired),
                        unrepaired: r.unrepaired,
                    }
                })
                .collect();
            GroupResult {
                name: g.name.clone(),
                source: g.source.clone(),
                start_s: start,
                stop_s: stop,
                source_rates: m.rates.clone(),
                source_rate_last_half_bps: crate::metrics::mean_between(&m.rates, half, stop),
                source_sent: bits(sent),
                feedback_in: m.feedback_in(),
                receivers,
            }
        })
        .collect()
}
