//! QSCCP scenarios in the engine (virtual time):
//! * scenario 1 (classes): one 10 Mbit/s bottleneck shared by an EF flow
//!   whose class is capped at 1 Mbit/s (`ef_cap_fraction = 0.1`) and AF2,
//!   AF1 and BE flows; the scheduler's weights 3:2:1 must show in the
//!   throughputs, EF must stay at its cap with an RTT near the propagation
//!   delay, and no Data may be dropped;
//! * scenario 3 (greedy consumer): a fixed-rate flow asking twice its fair
//!   share must not keep more than its share, the well-behaved flows keep
//!   ≥ 90 % of theirs;
//! * a burst of new flows in every delay-tolerant class fills the flow
//!   queues: the flows that follow TargetRate must drain theirs and must
//!   not be judged greedy for lagging the σ cut.
//!
//! `cargo test -p icn-forwarder --test cc_qsccp -- --nocapture` prints the
//! measured figures.

mod cc_common;

use cc_common::*;
use cc_core::{Duration, LawKind};
use icn_consumer::{RateSpec, Scheme, SchemeOptions};
use icn_forwarder::cc::{CcConfig, CcScheme};
use icn_forwarder::engine::FaceId;
use icn_sim::net::flows::{drive, quantile, LawFlow};
use icn_sim::net::{Network, NodeId};
use icn_tlv::ServiceClass;

const CAP_MBPS: u64 = 10;
const DATA_BYTES: usize = 4000;
const ONE_WAY_MS: u64 = 10;

fn qsccp_engine(ef_cap_fraction: f64) -> RouterConfig {
    let mut e = engine(CcScheme::Qsccp);
    e.cc = CcConfig {
        scheme: CcScheme::Qsccp,
        ..e.cc
    };
    e.cc.qsccp.ef_cap_fraction = ef_cap_fraction;
    e
}

/// The scenario 1 classes, in flow order.
const CLASSES: [ServiceClass; 4] = [
    ServiceClass::Ef,
    ServiceClass::Af2,
    ServiceClass::Af1,
    ServiceClass::Be,
];

/// Scenario 1's dumbbell: consumers on `a`, the producer of `data_bytes`
/// Data on `b`, and one QSCCP flow per class of [`CLASSES`] (`/p/c<i>`)
/// from 0 to `run_ms`. Returns the network, `[a, b]`, `a`'s face to `b`
/// and the flows.
fn classes_dumbbell(
    data_bytes: usize,
    run_ms: u64,
) -> (Network, [NodeId; 2], FaceId, Vec<LawFlow<Scheme>>) {
    let mut net = Network::new(11);
    let a = net.add_node(qsccp_engine(0.1));
    let b = net.add_node(qsccp_engine(0.1));
    let (ab, _) = net.connect(a, b, link(CAP_MBPS, ONE_WAY_MS));
    net.node_mut(a)
        .fib_add_nexthop(&"/p".parse().unwrap(), ab, 1)
        .unwrap();
    net.add_producer(b, "/p", data_bytes, None);
    let flows = CLASSES
        .iter()
        .enumerate()
        .map(|(i, class)| {
            let o = SchemeOptions {
                class: *class,
                ..opts(LawKind::Qsccp, data_bytes as f64)
            };
            let app = net.add_consumer(a);
            scheme_flow(
                app,
                &format!("/p/c{i}"),
                &o,
                at(0),
                at(run_ms),
                40 + i as u64,
            )
        })
        .collect();
    (net, [a, b], ab, flows)
}

#[test]
fn classes_share_by_weight_and_ef_stays_at_its_cap() {
    const RUN_MS: u64 = 8_000;
    let (mut net, [a, b], _, mut flows) = classes_dumbbell(DATA_BYTES, RUN_MS);
    drive(&mut net, &mut flows, at(RUN_MS), ms(1));
    let (from, to) = (at(RUN_MS / 2), at(RUN_MS));
    let mbps: Vec<f64> = flows
        .iter()
        .map(|f| f.stats.goodput_bps(from, to) / 1e6)
        .collect();
    let rtt_p95: Vec<Duration> = flows
        .iter()
        .map(|f| quantile(&f.stats.rtts_between(from, to), 0.95))
        .collect();
    let drops = data_drops(&net, &[a, b]);
    println!("| class | Mbit/s | p95 RTT");
    for (i, c) in CLASSES.iter().enumerate() {
        println!(
            "| {c:?} | {:.2} | {:.1} ms",
            mbps[i],
            rtt_p95[i].as_secs_f64() * 1e3
        );
    }
    println!(
        "Data drops {drops}, utilisation {:.1} %",
        mbps.iter().sum::<f64>() / CAP_MBPS as f64 * 100.0
    );
    assert_eq!(drops, 0, "Data dropped");
    // EF at its cap (1 Mbit/s of Data), not above, and not starved.
    assert!(
        mbps[0] <= 1.05 && mbps[0] >= 0.8,
        "EF {:.2} Mbit/s",
        mbps[0]
    );
    // EF's Interests wait in no flow queue: RTT near 2 × 10 ms propagation
    // plus serialisation of one Data (3.2 ms) and a few packets ahead.
    let ef_rtt_ms = rtt_p95[0].as_secs_f64() * 1e3;
    assert!(
        ef_rtt_ms < 2.0 * ONE_WAY_MS as f64 + 15.0,
        "EF p95 RTT {ef_rtt_ms} ms"
    );
    // AF2 : AF1 : BE = 3 : 2 : 1 within 10 %.
    let be = mbps[3];
    assert!(be > 0.5, "BE starved: {be}");
    for (i, want) in [(1, 3.0), (2, 2.0)] {
        let ratio = mbps[i] / be;
        assert!(
            (ratio - want).abs() <= 0.1 * want,
            "{:?}/BE = {ratio:.2}, want {want}",
            CLASSES[i]
        );
    }
    assert!(mbps.iter().sum::<f64>() > 0.9 * CAP_MBPS as f64);
}

#[test]
fn greedy_flow_cannot_keep_more_than_its_share() {
    const RUN_MS: u64 = 10_000;
    let mut net = Network::new(12);
    let a = net.add_node(qsccp_engine(0.3));
    let b = net.add_node(qsccp_engine(0.3));
    let (ab, _) = net.connect(a, b, link(CAP_MBPS, ONE_WAY_MS));
    net.node_mut(a)
        .fib_add_nexthop(&"/p".parse().unwrap(), ab, 1)
        .unwrap();
    net.add_producer(b, "/p", DATA_BYTES, None);
    let n = 3;
    let share_bps = 0.99 * (CAP_MBPS * MBPS) as f64 / n as f64;
    let mut flows: Vec<_> = (0..n - 1)
        .map(|i| {
            let app = net.add_consumer(a);
            let o = opts(LawKind::Qsccp, DATA_BYTES as f64);
            scheme_flow(
                app,
                &format!("/p/w{i}"),
                &o,
                at(0),
                at(RUN_MS),
                60 + i as u64,
            )
        })
        .collect();
    // The greedy one: a fixed Interest rate for twice its share, deaf to
    // TargetRate and to Nacks.
    let data_bits = (DATA_BYTES as f64 + 40.0) * 8.0;
    let greedy = SchemeOptions {
        rate: Some(RateSpec::InterestsPerSec(2.0 * share_bps / data_bits)),
        ..opts(LawKind::Fixed, DATA_BYTES as f64)
    };
    let app = net.add_consumer(a);
    flows.push(scheme_flow(
        app,
        "/p/greedy",
        &greedy,
        at(0),
        at(RUN_MS),
        70,
    ));
    drive(&mut net, &mut flows, at(RUN_MS), ms(1));
    let (from, to) = (at(RUN_MS / 2), at(RUN_MS));
    let mbps: Vec<f64> = flows
        .iter()
        .map(|f| f.stats.goodput_bps(from, to) / 1e6)
        .collect();
    println!(
        "share {:.2} Mbit/s; well-behaved {:?}; greedy {:.2} (asked {:.2}); Data drops {}",
        share_bps / 1e6,
        &mbps[..n - 1],
        mbps[n - 1],
        2.0 * share_bps / 1e6,
        data_drops(&net, &[a, b])
    );
    let share = share_bps / 1e6;
    assert!(
        penalised(&net, a, ab) >= 1,
        "the greedy flow was never penalised"
    );
    assert!(
        mbps[n - 1] <= share * 1.05,
        "greedy kept {:.2} Mbit/s of a {share:.2} share",
        mbps[n - 1]
    );
    for (i, x) in mbps[..n - 1].iter().enumerate() {
        assert!(*x >= 0.9 * share, "flow {i} kept {x:.2} of {share:.2}");
    }
}

fn penalised(net: &Network, node: NodeId, face: FaceId) -> u64 {
    net.node(node)
        .face(face)
        .map_or(0, |f| f.cc.penalised_flows)
}

/// QSCCP's σ cuts a backlogged flow's TargetRate so that its queue
/// drains; a consumer follows that cut only after a feedback delay and
/// its eq. 13 smoothing. Greed must be judged against the flow's share,
/// not against the cut: judged against the cut, the BE consumer here was
/// penalised (φ = 0.5, which also drops σ), and its p95 RTT 10-14 s was
/// 196 ms against 142 ms before the burst (8 KB Data); judged against its
/// share, 87 ms. A CI run of the testbed's qsccp_classes (real icnfwd on
/// a busy two-core runner) showed the same standing queues: 430 ms p95 at
/// the bottleneck, 500 ms RTT for every DT class.
#[test]
fn a_burst_drains_without_penalising_compliant_flows() {
    const RUN_MS: u64 = 14_000;
    const BURST_MS: u64 = 4_000;
    const DATA: usize = 8_000;
    let (mut net, [a, _], ab, mut flows) = classes_dumbbell(DATA, RUN_MS);
    // 300 ms of a deaf 60 Interests/s flow per DT class: 18 Interests
    // each, most of a flow queue (20).
    for (i, class) in CLASSES[1..].iter().enumerate() {
        let o = SchemeOptions {
            class: *class,
            rate: Some(RateSpec::InterestsPerSec(60.0)),
            ..opts(LawKind::Fixed, DATA as f64)
        };
        let app = net.add_consumer(a);
        flows.push(scheme_flow(
            app,
            &format!("/p/burst{i}"),
            &o,
            at(BURST_MS),
            at(BURST_MS + 300),
            90 + i as u64,
        ));
    }
    drive(&mut net, &mut flows, at(RUN_MS), ms(1));
    let p95_ms = |f: &LawFlow<Scheme>, from: u64, to: u64| {
        quantile(&f.stats.rtts_between(at(from), at(to)), 0.95).as_secs_f64() * 1e3
    };
    let mbps =
        |f: &LawFlow<Scheme>, from: u64, to: u64| f.stats.goodput_bps(at(from), at(to)) / 1e6;
    println!("| class | p95 RTT before | after (10-14 s) | Mbit/s after");
    for (i, c) in CLASSES.iter().enumerate() {
        println!(
            "| {c:?} | {:.1} ms | {:.1} ms | {:.2}",
            p95_ms(&flows[i], 2_000, BURST_MS),
            p95_ms(&flows[i], 10_000, RUN_MS),
            mbps(&flows[i], 10_000, RUN_MS)
        );
    }
    let held = net.node(a).face(ab).map(|f| f.queue.cc_held_interests);
    println!(
        "penalised flows {}, Interests held at the end {held:?}",
        penalised(&net, a, ab)
    );
    assert_eq!(penalised(&net, a, ab), 0, "a compliant flow was penalised");
    // Back to the pre-burst queueing once the burst has drained (by ~9 s).
    for (i, c) in CLASSES.iter().enumerate().skip(1) {
        let (before, after) = (
            p95_ms(&flows[i], 2_000, BURST_MS),
            p95_ms(&flows[i], 10_000, RUN_MS),
        );
        assert!(
            after <= 1.2 * before,
            "{c:?}: p95 RTT {after:.1} ms after the burst, {before:.1} ms before"
        );
    }
    // Shares restored: AF2 : AF1 : BE = 3 : 2 : 1 within 10 %.
    let be = mbps(&flows[3], 10_000, RUN_MS);
    for (i, want) in [(1, 3.0), (2, 2.0)] {
        let ratio = mbps(&flows[i], 10_000, RUN_MS) / be;
        assert!(
            (ratio - want).abs() <= 0.1 * want,
            "{:?}/BE = {ratio:.2}",
            CLASSES[i]
        );
    }
}
