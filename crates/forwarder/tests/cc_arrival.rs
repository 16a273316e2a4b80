//! Flow arrival (MIRCC paper Fig. 2-3): a linear chain of 4 forwarders, one
//! long flow, then three flows join at once. Each flow's sending rate (the
//! rate its consumer takes from the bottleneck's stamps: R, or Rp + Rs)
//! must move to the new fair share; MIRCC must get there faster and stray
//! from it less than RCP (same T = 100 ms, which a MIRCC face ends early
//! once when the input exceeds 1.5·C; same engine; icncat's consumer logic
//! for both).
//!
//! ```text
//!  consumers ─ N0 ─(100 Mbit/s)─ N1 ─(10 Mbit/s)─ N2 ─(100 Mbit/s)─ N3 ─ producer
//! ```
//!
//! Settling time: from the join until every flow's rate stays within ±10 %
//! (±20 %) of the new share (the scheme's mean rate over the last 2 s,
//! checked against ηC/4). Overshoot and undershoot: per flow, once its rate
//! has fallen through the share (the link has reacted to the arrival), the
//! highest peak above it and the deepest dip under it; the worst flow
//! counts.
//! `cargo test -p icn-forwarder --test cc_arrival -- --nocapture`.

mod cc_common;

use cc_common::*;
use cc_core::{ConsumerLaw, LawKind, SendLimit, Timestamp};
use icn_forwarder::cc::CcScheme;
use icn_sim::net::flows::{drive, jain};
use icn_sim::net::Network;
use icn_sim::response::{Blip, Grid, Response};

const BOTTLENECK_MBPS: u64 = 10;
const JOIN_MS: u64 = 2_000;
const RUN_MS: u64 = 6_000;
const SAMPLE_MS: u64 = 10;
const ETA: f64 = 0.95;
/// A 4000-byte-content Data as the bottleneck carries it (TLV + LP header
/// with the stamped rates), bits.
const DATA_WIRE_BITS: f64 = 4_040.0 * 8.0;

struct Arrival {
    /// Settling time with a ±10 % and a ±20 % band.
    settling_ms: [Option<u64>; 2],
    /// Highest rate above the new share after the join (relative).
    start_peak: f64,
    /// Highest peak above the new share once a flow fell through it
    /// (relative).
    peak: f64,
    /// Deepest dip under the new share from the same point (relative).
    dip: f64,
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
            // icncat's scheme logic: a MIRCC consumer tags each Interest
            // primary or secondary (a bare law sent Rp + Rs all as primary,
            // so the link's Rs never saw its own input).
            let kind = match scheme {
                CcScheme::Mircc => LawKind::Mircc,
                _ => LawKind::Rcp,
            };
            scheme_flow(
                app,
                &format!("/p/f{i}"),
                &opts(kind, DATA_WIRE_BITS / 8.0),
                at(start),
                at(RUN_MS),
                i,
            )
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
        series.push((at(t), rates));
        t += SAMPLE_MS;
    }
    for &x in &n {
        net.node(x).check_invariants().unwrap();
    }
    // The new share each scheme converges to: the mean sending rate over
    // the last 2 s. RCP's is ηC/4; MIRCC's secondary class fills the
    // C − yp its primary leaves, so its flows end near C/4, and measuring
    // them against ηC/4 counted that 5 % as overshoot. The two must still
    // agree with the equal split (asserted: from 3 % under ηC/4 to 1 % over C/4).
    let last: Vec<f64> = series
        .iter()
        .filter(|(t, _)| *t > at(RUN_MS - 2_000))
        .flat_map(|(_, r)| r.iter().copied())
        .collect();
    let target = last.iter().sum::<f64>() / last.len().max(1) as f64;
    let fair = ETA * (BOTTLENECK_MBPS * MBPS) as f64 / 4.0;
    assert!(
        (0.97 * fair..=fair / ETA * 1.01).contains(&target),
        "{scheme:?} ends at {target:.0} bit/s per flow, not the fair share {fair:.0}"
    );
    let after: Vec<&(Timestamp, Vec<f64>)> =
        series.iter().filter(|(t, _)| *t >= at(JOIN_MS)).collect();
    // Each flow's rate from the join on, against the scheme's share.
    let grid = Grid {
        step_s: SAMPLE_MS as f64 / 1e3,
        series: (0..flows.len())
            .map(|k| after.iter().map(|(_, r)| r[k]).collect())
            .collect(),
    };
    let finals = vec![target; flows.len()];
    // Virtual time has no stalled consumers: every excursion counts.
    let within_10 = grid.response(&finals, 0.1, Blip::NONE);
    let within_20 = grid.response(&finals, 0.2, Blip::NONE);
    let settling_ms = |r: &Response| r.settling_s.map(|s| (s * 1e3).round() as u64);
    // The highest rate any flow took above the target after the join: for
    // a joiner, the rate the link advertised before it saw the arrival.
    let start_peak = grid
        .series
        .iter()
        .flatten()
        .fold(0.0f64, |m, x| m.max((x - target) / target));
    // From the first time a flow's rate falls through the target (the
    // link has reacted), the highest peak above it and the deepest dip
    // under it: the convergence overshoot and undershoot of MIRCC Fig. 3
    // (the same for every band).
    let (from, to) = (at(RUN_MS - 2_000), at(RUN_MS));
    let per: Vec<f64> = flows
        .iter()
        .map(|f| f.stats.goodput_bps(from, to))
        .collect();
    Arrival {
        settling_ms: [settling_ms(&within_10), settling_ms(&within_20)],
        start_peak,
        peak: within_10.over,
        dip: within_10.under,
        jain_end: jain(&per),
        per_flow_mbps: per.iter().map(|x| x / 1e6).collect(),
        drops: data_drops(&net, &n),
    }
}

#[test]
fn mircc_settles_faster_with_less_overshoot_than_rcp() {
    println!("| scheme | settling ±10 % | settling ±20 % | start peak | overshoot | undershoot | Jain (last 2 s) | Data drops | per-flow Mbit/s");
    let show = |s: Option<u64>| s.map_or("never".to_owned(), |x| format!("{x} ms"));
    let mut rows = Vec::new();
    for scheme in [CcScheme::Rcp, CcScheme::Mircc] {
        let a = arrival(scheme);
        println!(
            "| {:<6} | {} | {} | {:.0} % | {:.1} % | {:.1} % | {:.3} | {} | {:?}",
            scheme.name(),
            show(a.settling_ms[0]),
            show(a.settling_ms[1]),
            a.start_peak * 100.0,
            a.peak * 100.0,
            a.dip * 100.0,
            a.jain_end,
            a.drops,
            a.per_flow_mbps
                .iter()
                .map(|x| (x * 100.0).round() / 100.0)
                .collect::<Vec<_>>()
        );
        assert_eq!(a.drops, 0, "{scheme:?} dropped Data");
        rows.push(a);
    }
    let (rcp, mircc) = (&rows[0], &rows[1]);
    // MIRCC reaches the new share (±20 %) and stays there sooner.
    let m = mircc.settling_ms[1].expect("MIRCC never settled");
    let r = rcp.settling_ms[1].unwrap_or(u64::MAX);
    assert!(m < r, "settling: MIRCC {m} ms vs RCP {r} ms");
    // RCP's R collapses to R_min when the flows join (every flow starved);
    // MIRCC's flows never fall far under the share once they reach it.
    assert!(
        mircc.dip < 0.25 && mircc.dip < rcp.dip,
        "dip MIRCC {:.2} RCP {:.2}",
        mircc.dip,
        rcp.dip
    );
    assert!(mircc.jain_end >= 0.95, "MIRCC Jain {:.3}", mircc.jain_end);
    // Overshoot or undershoot (MIRCC §3.2: RCP's "tendency to overshoot or
    // undershoot during abrupt changes"): once the link has reacted, MIRCC
    // strays less from the new share than RCP, whose collapse to R_min is
    // its largest excursion. The start peak (a joiner's first rate, what
    // the link advertised before it saw the arrival, ≈ 3-4× the share in
    // both schemes) is printed, not compared: it is the explicit-rate
    // start both schemes share, and the shaper Nacks what of it the link
    // cannot carry.
    let worst = |a: &Arrival| a.peak.max(a.dip);
    assert!(
        mircc.peak < 0.10 && worst(mircc) < worst(rcp),
        "MIRCC over {:.2} under {:.2}, RCP over {:.2} under {:.2}",
        mircc.peak,
        mircc.dip,
        rcp.peak,
        rcp.dip
    );
}
