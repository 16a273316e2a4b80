//! The scenarios `icnlab sweep` generates give the grid's topologies, and a
//! run's counters become the bounds' figures.

use std::collections::BTreeMap;

use icn_sim::envelope::{self, Topology};

use super::*;
use crate::results::{FlowResult, LinkResult};
use crate::sweep;

fn topo_of(p: &sweep::SweepPoint) -> Topology {
    topology(&p.scenario().unwrap()).unwrap()
}

/// Same links, flow paths and base RTTs: the bounds cannot tell them apart.
fn assert_same(lab: &Topology, grid: &Topology) {
    assert_eq!(lab.links.len(), grid.links.len());
    for (x, y) in lab.links.iter().zip(&grid.links) {
        assert_eq!(
            (x.capacity_bps, x.delay_ms, x.bottleneck),
            (y.capacity_bps, y.delay_ms, y.bottleneck)
        );
    }
    let rtts = |t: &Topology| -> Vec<u64> { t.flows.iter().map(|f| t.base_rtt_ms(f)).collect() };
    assert_eq!(rtts(lab), rtts(grid));
    let links =
        |t: &Topology| -> Vec<Vec<usize>> { t.flows.iter().map(|f| t.links_of(f)).collect() };
    assert_eq!(links(lab), links(grid));
    assert_eq!(lab.max_min_shares(), grid.max_min_shares());
    for l in 0..lab.links.len() {
        assert_eq!(
            lab.window_queue_floor_ms(l, 1281.0),
            grid.window_queue_floor_ms(l, 1281.0)
        );
    }
}

#[test]
fn sweep_points_are_the_grids_topologies() {
    assert_same(
        &topo_of(&sweep::dumbbell(8000, 2, 10, 10)),
        &envelope::dumbbell(2_000_000, 10, 10),
    );
    assert_same(
        &topo_of(&sweep::dumbbell(1200, 50, 150, 3)),
        &envelope::dumbbell(50_000_000, 150, 3),
    );
    assert_same(
        &topo_of(&sweep::mixed_rtt(1200, 10)),
        &envelope::mixed_rtt(10_000_000),
    );
    let lot = topo_of(&sweep::parking_lot(4400, 9));
    assert_same(&lot, &envelope::parking_lot_2(9_000_000));
    // Bottlenecks in `measure` order: r2 -> r1, then r3 -> r2.
    assert_eq!(lot.bottlenecks().collect::<Vec<_>>(), [0, 1]);
}

#[test]
fn every_testbed_point_has_bounds() {
    for p in sweep::testbed_points() {
        let t = topo_of(&p);
        assert!(t.bottlenecks().count() >= 1, "{}", p.label);
    }
}

fn flow(name: &str, rate_bps: f64, frame_bytes: f64) -> FlowResult {
    FlowResult {
        name: name.into(),
        consumer: String::new(),
        class: String::new(),
        start_s: 0.0,
        stop_s: 16.0,
        rate_last_half_bps: rate_bps,
        frame_bytes: Some(frame_bytes),
        rates: Vec::new(),
        send_rates: Vec::new(),
        nacks: 0,
        rtt_min_ms: None,
        rtt_p95_ms: None,
        rtt_series_ms: Vec::new(),
        error: None,
        size_bytes: None,
        delivery_s: None,
        icncat_stats: None,
    }
}

fn link(utilisation: f64, q_ms: f64, drops: &[(f64, f64)]) -> LinkResult {
    LinkResult {
        from: String::new(),
        to: String::new(),
        capacity_bps: 9_000_000,
        utilisation,
        frame_bytes: 4200.0,
        queue_p95_ms: q_ms,
        queue_max_ms: q_ms,
        marks: 0,
        stamped_rates: Vec::new(),
        target_rates: Vec::new(),
        queue_series_ms: Vec::new(),
        utilisation_series: Vec::new(),
        drops_series: drops.to_vec(),
    }
}

fn run(scheme: &str, flows: Vec<FlowResult>, links: Vec<LinkResult>) -> RunResult {
    RunResult {
        scenario: String::new(),
        scheme: scheme.into(),
        duration_s: 16.0,
        flows,
        links,
        drops: 0,
        drops_by_reason: BTreeMap::new(),
        penalised_flows: BTreeMap::new(),
        jain: 0.0,
        settling_s: None,
        overshoot: None,
        has_arrival: false,
        emulation: true,
        groups: Vec::new(),
    }
}

#[test]
fn figures_count_flows_in_frame_bytes_and_drops_of_the_last_half() {
    let sc = sweep::parking_lot(4400, 9).scenario().unwrap();
    let t = topology(&sc).unwrap();
    // The links carry 4200-byte frames; the consumers' faces sent 4000
    // bytes per Data (the link's frames are 5 % larger), and flow x3's
    // face no count: its rate stands as it is.
    let r = run(
        "mircc/real",
        vec![
            flow("long", 3.0e6 / 1.05, 4000.0),
            flow("x1", 6.0e6 / 1.05, 4000.0),
            flow("x2", 2.55e6 / 1.05, 4000.0),
            flow("x3", 2.55e6, 0.0),
        ],
        vec![
            link(1.0, 4.0, &[(0.0, 0.0), (8.0, 5.0), (16.0, 5.0)]),
            link(
                0.9,
                12.0,
                &[(0.0, 0.0), (8.0, 1.0), (12.0, 3.0), (16.0, 4.0)],
            ),
        ],
    );
    let f = figures(&sc, &r);
    let want = [3.0e6, 6.0e6, 2.55e6, 2.55e6];
    for (x, y) in f.flow_bps.iter().zip(want) {
        assert!((x - y).abs() < 1.0, "{:?}", f.flow_bps);
    }
    // A flow whose face brought little while its link was busy keeps its
    // own low rate (a goodput collapse is not scaled away).
    let mut starved = r.clone();
    starved.flows[0].rate_last_half_bps = 0.06e6;
    let g = figures(&sc, &starved);
    assert!((g.flow_bps[0] - 0.063e6).abs() < 1.0, "{:?}", g.flow_bps);
    assert_eq!(f.utilisation, [1.0, 0.9]);
    assert_eq!(f.p95_queue_ms, 12.0);
    // Five drops before the half on r2, three after it on r3.
    assert_eq!(f.drops, 3);
    assert!((f.frame_bytes - 4200.0).abs() < 1e-6);
    let v = check(&sc, &t, &r).unwrap();
    assert_eq!(
        v,
        [
            "p95 queue 12.0 ms > 10.0 ms",
            "3 congestion drops",
            "flow 2 2.55 Mbit/s vs max-min 3.00 (> 10% off)",
            "flow 3 2.55 Mbit/s vs max-min 3.00 (> 10% off)",
        ]
    );
    assert_eq!(verdict_text(&Some(v)).matches("; ").count(), 3);
    assert_eq!(
        check(&sc, &t, &run("none", r.flows.clone(), r.links.clone())),
        None
    );
    assert_eq!(family("wincm/sim"), Some(Family::Window));
}
