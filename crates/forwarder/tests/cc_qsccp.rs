//! QSCCP scenarios in the engine (virtual time):
//! * scenario 1 (classes): one 10 Mbit/s bottleneck shared by an EF flow
//!   whose class is capped at 1 Mbit/s (`ef_cap_fraction = 0.1`) and AF2,
//!   AF1 and BE flows; the scheduler's weights 3:2:1 must show in the
//!   throughputs, EF must stay at its cap with an RTT near the propagation
//!   delay, and no Data may be dropped;
//! * scenario 3 (greedy consumer): a fixed-rate flow asking twice its fair
//!   share must not keep more than its share, the well-behaved flows keep
//!   ≥ 90 % of theirs.
//!
//! `cargo test -p icn-forwarder --test cc_qsccp -- --nocapture` prints the
//! measured figures.

mod cc_common;

use cc_common::*;
use cc_core::{Duration, LawKind};
use icn_consumer::{RateSpec, SchemeOptions};
use icn_forwarder::cc::{CcConfig, CcScheme};
use icn_forwarder::engine::EngineConfig;
use icn_forwarder::testing::flows::{drive, quantile};
use icn_forwarder::testing::Network;
use icn_tlv::ServiceClass;

const CAP_MBPS: u64 = 10;
const DATA_BYTES: usize = 4000;
const ONE_WAY_MS: u64 = 10;

fn qsccp_engine(ef_cap_fraction: f64) -> EngineConfig {
    let mut e = engine(CcScheme::Qsccp);
    e.cc = CcConfig {
        scheme: CcScheme::Qsccp,
        ..e.cc
    };
    e.cc.qsccp.ef_cap_fraction = ef_cap_fraction;
    e
}

#[test]
fn classes_share_by_weight_and_ef_stays_at_its_cap() {
    const RUN_MS: u64 = 8_000;
    let mut net = Network::new(11);
    let a = net.add_node(qsccp_engine(0.1));
    let b = net.add_node(qsccp_engine(0.1));
    let (ab, _) = net.connect(a, b, link(CAP_MBPS, ONE_WAY_MS));
    net.node_mut(a)
        .fib_add_nexthop(&"/p".parse().unwrap(), ab, 1)
        .unwrap();
    net.add_producer(b, "/p", DATA_BYTES, None);
    let classes = [
        ServiceClass::Ef,
        ServiceClass::Af2,
        ServiceClass::Af1,
        ServiceClass::Be,
    ];
    let mut flows: Vec<_> = classes
        .iter()
        .enumerate()
        .map(|(i, class)| {
            let o = SchemeOptions {
                class: *class,
                ..opts(LawKind::Qsccp, DATA_BYTES as f64)
            };
            let app = net.add_consumer(a);
            scheme_flow(
                app,
                &format!("/p/c{i}"),
                &o,
                at(0),
                at(RUN_MS),
                40 + i as u64,
            )
        })
        .collect();
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
    for (i, c) in classes.iter().enumerate() {
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
            classes[i]
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
        mbps[n - 1] <= share * 1.05,
        "greedy kept {:.2} Mbit/s of a {share:.2} share",
        mbps[n - 1]
    );
    for (i, x) in mbps[..n - 1].iter().enumerate() {
        assert!(*x >= 0.9 * share, "flow {i} kept {x:.2} of {share:.2}");
    }
}
