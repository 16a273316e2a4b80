//! SRMCC multicast through real engines on the virtual-time network (issue 7):
//! a source application on node S, a core node C, a branch node B and
//! three receiver nodes R1..R3 behind 1.5 Mbit/s access links.
//!
//! ```text
//!  src app ─ S ══10 Mb/s══ C ══2 Mb/s══ B ─┬─1.5 Mb/s─ R1 ─ rx app
//!                                          ├─1.5 Mb/s─ R2 ─ rx app
//!                                          └─1.5 Mb/s─ R3 ─ rx app
//! ```
//!
//! Every hop is an `icn-forwarder` engine with its multicast hook; joins,
//! group Data and MCC frames are real wire bytes through the engines'
//! per-face queues and capacity pacing.

use bytes::Bytes;
use cc_core::{Duration, Timestamp};
use icn_forwarder::engine::{EngineConfig, FaceId};
use icn_forwarder::groups::SrmccGroups;
use icn_multicast::wire::Subscription;
use icn_multicast::{MulticastReceiver, MulticastSource, ReceiverConfig, SourceConfig};
use icn_sim::net::{AppId, LinkParams, Network, NodeId};
use icn_tlv::{MccFeedback, Name, NetPacket};

const PAYLOAD: usize = 1000;

struct Tree {
    net: Network,
    nodes: Vec<NodeId>,
    src_app: AppId,
    rx_apps: Vec<AppId>,
    src: MulticastSource,
    rxs: Vec<MulticastReceiver>,
    feedback_log: Vec<(Timestamp, MccFeedback)>,
    rate_log: Vec<(Timestamp, f64)>,
    nonce: u32,
}

fn link(bps: u64, delay_ms: u64) -> LinkParams {
    LinkParams {
        delay: Duration::from_millis(delay_ms),
        capacity_bps: Some(bps),
        ..LinkParams::default()
    }
}

fn route(net: &mut Network, n: NodeId, g: &Name, face: FaceId) {
    net.node_mut(n).fib_add_nexthop(g, face, 0).unwrap();
}

impl Tree {
    fn new(access_bps: u64) -> Tree {
        let g: Name = "/mc/video".parse().unwrap();
        let mut net = Network::new(42);
        let nodes: Vec<NodeId> = (0..6)
            .map(|_| net.add_node(EngineConfig::default()))
            .collect();
        let (s, c, b) = (nodes[0], nodes[1], nodes[2]);
        let (src_app, src_face) = net.add_app(s, None);
        route(&mut net, s, &g, src_face);
        let (_, c_up) = net.connect(s, c, link(10_000_000, 5));
        route(&mut net, c, &g, c_up);
        let (_, b_up) = net.connect(c, b, link(2_000_000, 20));
        route(&mut net, b, &g, b_up);
        let mut rx_apps = Vec::new();
        let mut rxs = Vec::new();
        for &r in &nodes[3..] {
            let (_, r_up) = net.connect(b, r, link(1_500_000, 2));
            route(&mut net, r, &g, r_up);
            rx_apps.push(net.add_consumer(r));
            let cfg = ReceiverConfig {
                access_capacity_bps: access_bps,
                ..ReceiverConfig::default()
            };
            rxs.push(MulticastReceiver::new(g.clone(), cfg, Timestamp::ZERO));
        }
        let src = MulticastSource::new(g, SourceConfig::default(), Timestamp::ZERO);
        Tree {
            net,
            nodes,
            src_app,
            rx_apps,
            src,
            rxs,
            feedback_log: Vec::new(),
            rate_log: Vec::new(),
            nonce: 1,
        }
    }

    /// Runs the applications and the network in 1 ms steps until `end`;
    /// receivers in `leaving` leave at their time.
    fn run_until(&mut self, end: Timestamp) {
        let step = Duration::from_millis(1);
        while self.net.now() < end {
            let next = self.net.now() + step;
            self.net.run_until(next);
            let now = self.net.now();
            for r in self.net.take_inbox(self.src_app) {
                if let Some(fb) = r.lp.mcc.clone() {
                    if self.src.handle_feedback(now, &fb).is_ok() {
                        self.feedback_log.push((now, fb));
                    }
                }
                if let Some(i) = r.interest() {
                    if let Some(sub) = Subscription::from_interest(i) {
                        self.src.handle_subscription(now, &sub).unwrap();
                    }
                }
            }
            if let Some(rate) = self.src.handle_timeout(now) {
                self.rate_log.push((now, rate));
            }
            while self.src.has_subscribers(now) && self.src.can_send(now) {
                let frame = self.src.send(now, Bytes::from(vec![0x5a; PAYLOAD]), false);
                self.net.send(self.src_app, frame);
            }
            for (i, app) in self.rx_apps.clone().into_iter().enumerate() {
                for r in self.net.take_inbox(app) {
                    if let Some(NetPacket::Data(d)) = &r.packet {
                        self.rxs[i].handle_data(now, d).unwrap();
                    }
                }
                self.rxs[i].handle_timeout(now);
                while let Some(o) = self.rxs[i].poll_output() {
                    self.nonce = self
                        .nonce
                        .wrapping_mul(1_664_525)
                        .wrapping_add(1_013_904_223);
                    self.net.send(app, o.encode(self.nonce));
                }
            }
        }
    }

    fn node_stats(&self, i: usize) -> icn_multicast::NodeStats {
        SrmccGroups::of(self.net.node(self.nodes[i]))
            .expect("multicast hook installed")
            .stats()
    }
}

fn secs(s: u64) -> Timestamp {
    Timestamp::from_nanos(s * 1_000_000_000)
}

#[test]
fn three_receivers_one_feedback_per_period_and_full_stream() {
    let mut t = Tree::new(1_500_000);
    t.run_until(secs(10));
    let before: Vec<_> = t.rxs.iter().map(|r| *r.stats()).collect();
    t.run_until(secs(30));

    // One MCC message per 400 ms period reaches the source, whatever the
    // number of receivers (3 here), each carrying the tree minimum.
    let in_window: Vec<_> = t
        .feedback_log
        .iter()
        .filter(|(at, _)| *at >= secs(10) && *at < secs(30))
        .collect();
    let n = in_window.len();
    eprintln!("source got {n} MCC messages in 20 s");
    assert!((49..=51).contains(&n), "{n} MCC messages in 20 s");
    for w in in_window.windows(2) {
        let gap = w[1].0.saturating_since(w[0].0);
        assert!(gap >= Duration::from_millis(350), "gap {gap:?}");
    }
    assert!(in_window
        .iter()
        .all(|(_, fb)| fb.min_fair_share_bps <= 1_500_000));
    // The core node aggregates: one message out per period, not three.
    let core = t.node_stats(1);
    let branch = t.node_stats(2);
    eprintln!("core {core:?}\nbranch {branch:?}");
    assert!(branch.feedback_in >= 3 * 70, "{branch:?}");
    assert!(core.feedback_out <= 76, "{core:?}");

    // Every receiver gets the stream at the tree's rate, without loss.
    let src_rate = t.src.rate_bps();
    eprintln!(
        "source rate {:.0} bit/s, rates {:?}",
        src_rate,
        t.rate_log.last()
    );
    assert!(
        (1_000_000.0..=1_515_000.0).contains(&src_rate),
        "{src_rate}"
    );
    for (i, r) in t.rxs.iter().enumerate() {
        let s = r.stats();
        let got = s.packets - before[i].packets;
        let lost = s.lost - before[i].lost;
        let rate = (s.wire_bytes - before[i].wire_bytes) as f64 * 8.0 / 20.0;
        eprintln!(
            "receiver {i}: {got} packets, {lost} lost, {rate:.0} bit/s, announced {}",
            s.announced_rate_bps
        );
        assert!(
            rate > 0.95 * src_rate.min(1_500_000.0),
            "receiver {i} {rate}"
        );
        assert!(
            lost as f64 <= 0.01 * got as f64,
            "receiver {i} lost {lost}/{got}"
        );
        assert!(s.announced_rate_bps > 0);
    }
    // Copies are made once per downstream face at the branch.
    assert!(
        branch.copies_out >= 3 * (branch.data_in.saturating_sub(1)),
        "{branch:?}"
    );
}

#[test]
fn leaving_receivers_prune_the_branch() {
    let mut t = Tree::new(1_500_000);
    t.run_until(secs(5));
    for r in &mut t.rxs {
        r.leave();
    }
    t.run_until(secs(5) + Duration::from_millis(2));
    assert!(t.rxs.iter().all(|r| r.poll_timeout() == Timestamp::MAX));
    t.run_until(secs(7));
    let sent_at_7 = t.src.stats().packets_sent;
    // The source's first hop lost its only member: it sent a leave, the
    // source stops within its membership, and no node keeps a group.
    t.run_until(secs(12));
    assert!(!t.src.has_subscribers(t.net.now()));
    assert!(t.src.stats().packets_sent - sent_at_7 <= 1);
    for i in 0..t.nodes.len() {
        let st = t.node_stats(i);
        assert!(st.leaves_in >= 1 || i >= 3, "node {i}: {st:?}");
        let n = SrmccGroups::of(t.net.node(t.nodes[i])).unwrap();
        assert!(n.node().is_none_or(|n| n.mnft().is_empty()), "node {i}");
        assert_eq!(t.net.node(t.nodes[i]).poll_timeout(), None, "node {i} idle");
    }
}
