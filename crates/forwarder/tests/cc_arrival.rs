//! Flow arrival (MIRCC paper Fig. 2-3): a linear chain of 4 forwarders, one
//! long flow, then three flows join at once. The bottleneck's stamped rate
//! R(t) (`FaceInfo::cc.primary_rate_bps`, refreshed every period T) must
//! move to the new fair share ηC/4; MIRCC must get there faster and with
//! less overshoot than RCP (same T = 100 ms, same engine, same consumers).
//!
//! ```text
//!  consumers ─ N0 ─(100 Mbit/s)─ N1 ─(10 Mbit/s)─ N2 ─(100 Mbit/s)─ N3 ─ producer
//! ```
//!
//! Settling time: from the join until every flow's rate stays within ±10 %
//! of ηC/4. Overshoot: per flow, after its rate first crosses ηC/4, the
//! largest relative distance from it (the control-theory definition of
//! cc-core's `sim::overshoot`); the worst flow is reported.
//! `cargo test -p icn-forwarder --test cc_arrival -- --nocapture`.

mod cc_common;

use cc_common::*;
use cc_core::{ConsumerLaw, SendLimit, Timestamp};
use icn_forwarder::cc::CcScheme;
use icn_forwarder::testing::flows::{drive, jain, LawFlow};
use icn_forwarder::testing::Network;

const BOTTLENECK_MBPS: u64 = 10;
const JOIN_MS: u64 = 2_000;
const RUN_MS: u64 = 6_000;
const SAMPLE_MS: u64 = 10;
const ETA: f64 = 0.95;
/// A 4000-byte-content Data as the bottleneck carries it (TLV + LP header
/// with the stamped rates), bits.
const DATA_WIRE_BITS: f64 = 4_040.0 * 8.0;

struct Arrival {
    settling_ms: Option<u64>,
    overshoot: f64,
    jain_end: f64,
    per_flow_mbps: Vec<f64>,
    drops: u64,
}

fn arrival(scheme: CcScheme) -> Arrival {
    let mut net = Network::new(31);
    let n: Vec<_> = (0..4).map(|_| net.add_node(engine(scheme))).collect();
    let (f01, _) = net.connect(n[0], n[1], link(100, 2));
    let (f12, _) = net.connect(n[1], n[2], link(BOTTLENECK_MBPS, 5));
    let (f23, _) = net.connect(n[2], n[3], link(100, 2));
    let pfx = "/p".parse().unwrap();
    net.node_mut(n[0]).fib_add_nexthop(&pfx, f01, 1).unwrap();
    net.node_mut(n[1]).fib_add_nexthop(&pfx, f12, 1).unwrap();
    net.node_mut(n[2]).fib_add_nexthop(&pfx, f23, 1).unwrap();
    net.add_producer(n[3], "/p", 4000, None);
    let mut flows: Vec<_> = (0..4)
        .map(|i| {
            let app = net.add_consumer(n[0]);
            let start = if i == 0 { 0 } else { JOIN_MS };
            LawFlow::new(app, &format!("/p/f{i}"), law(scheme, 0.0), at(start), at(RUN_MS))
        })
        .collect();
    // Each flow's sending rate (its law's limit), bit/s of Data.
    let mut series: Vec<(Timestamp, Vec<f64>)> = Vec::new();
    let mut t = SAMPLE_MS;
    while t <= RUN_MS {
        drive(&mut net, &mut flows, at(t), ms(1));
        let rates: Vec<f64> = flows
            .iter()
            .map(|f| match f.law.limit() {
                SendLimit::Rate {
                    interests_per_sec, ..
                } => interests_per_sec * DATA_WIRE_BITS,
                SendLimit::Window { .. } => 0.0,
            })
            .collect();
        if std::env::var("ARR_DEBUG").is_ok() && t % 200 == 0 {
            let r: &Vec<f64> = &rates;
            eprintln!("{scheme:?} t={t} {:?}", r.iter().map(|x| (x / 1e4).round() / 100.0).collect::<Vec<_>>());
        }
        series.push((at(t), rates));
        t += SAMPLE_MS;
    }
    for &x in &n {
        net.node(x).check_invariants().unwrap();
    }
    let target = ETA * (BOTTLENECK_MBPS * MBPS) as f64 / 4.0;
    let after: Vec<&(Timestamp, Vec<f64>)> =
        series.iter().filter(|(t, _)| *t >= at(JOIN_MS)).collect();
    let out = |r: &[f64]| r.iter().any(|x| (x - target).abs() > 0.1 * target);
    let settling_ms = match after.iter().rposition(|(_, r)| out(r)) {
        None => Some(0),
        Some(i) if i + 1 < after.len() => {
            Some(after[i + 1].0.saturating_since(at(JOIN_MS)).as_millis() as u64)
        }
        Some(_) => None,
    };
    // Per flow: once its rate first crosses the target, the largest
    // relative distance from it; the worst flow counts.
    let overshoot = (0..flows.len())
        .map(|k| {
            let above0 = after.first().is_some_and(|(_, r)| r[k] > target);
            let cross = after.iter().position(|(_, r)| (r[k] > target) != above0);
            cross.map_or(0.0, |i| {
                after[i..]
                    .iter()
                    .map(|(_, r)| (r[k] - target).abs() / target)
                    .fold(0.0, f64::max)
            })
        })
        .fold(0.0, f64::max);
    let (from, to) = (at(RUN_MS - 2_000), at(RUN_MS));
    let per: Vec<f64> = flows.iter().map(|f| f.stats.goodput_bps(from, to)).collect();
    Arrival {
        settling_ms,
        overshoot,
        jain_end: jain(&per),
        per_flow_mbps: per.iter().map(|x| x / 1e6).collect(),
        drops: data_drops(&net, &n),
    }
}

#[test]
fn mircc_settles_faster_and_overshoots_less_than_rcp() {
    println!("| scheme | settling | overshoot | Jain (last 2 s) | Data drops | per-flow Mbit/s");
    let mut rows = Vec::new();
    for scheme in [CcScheme::Rcp, CcScheme::Mircc] {
        let a = arrival(scheme);
        println!(
            "| {:<6} | {:>5} ms | {:>5.1} % | {:.3} | {} | {:?}",
            scheme.name(),
            a.settling_ms.map_or("never".into(), |s| s.to_string()),
            a.overshoot * 100.0,
            a.jain_end,
            a.drops,
            a.per_flow_mbps
                .iter()
                .map(|x| (x * 100.0).round() / 100.0)
                .collect::<Vec<_>>()
        );
        rows.push(a);
    }
    for (a, scheme) in rows.iter().zip(["rcp", "mircc"]) {
        assert_eq!(a.drops, 0, "{scheme} dropped Data");
    }
    let (rcp, mircc) = (&rows[0], &rows[1]);
    let m = mircc.settling_ms.expect("MIRCC never settled");
    if let Some(r) = rcp.settling_ms {
        assert!(m < r, "settling: MIRCC {m} ms vs RCP {r} ms");
    }
    assert!(
        mircc.overshoot < rcp.overshoot,
        "overshoot: MIRCC {:.3} vs RCP {:.3}",
        mircc.overshoot,
        rcp.overshoot
    );
}
