//! MCC aggregation up a two-level tree: whatever the number of receivers,
//! the source receives one MCC message per period, carrying the minimum
//! fair share and the extreme occupancies of the whole tree.

use cc_core::Timestamp;
use icn_multicast::wire::occupancy_to_ppm;
use icn_multicast::{NodeConfig, ReceiverConfig, SourceConfig};
use icn_sim::mcast::{HostId, LinkSpec, Sim};
use icn_tlv::Name;

const QMAX: f64 = 50.0;

fn secs(s: u64) -> Timestamp {
    Timestamp::from_millis(s * 1000)
}

/// Phantom backlog imposed on the face towards receiver `i`.
fn rx_phantom(i: usize) -> u64 {
    (i as u64 * 7) % 23 + 1
}

/// Access capacity receiver `i` reports.
fn rx_capacity(i: usize) -> u64 {
    8_000_000 - i as u64 * 500_000
}

struct Tree {
    sim: Sim,
    source: HostId,
    r0: HostId,
    branches: [HostId; 2],
    expected_max: f64,
    expected_min: f64,
    expected_fair: u64,
}

/// S -- R0 -- {B1, B2}; receiver i hangs off B(i mod 2); 10 Mbit/s links.
fn tree(n: usize) -> Tree {
    let group: Name = "/mc/agg".parse().unwrap();
    let mut sim = Sim::new();
    let spec = LinkSpec::mbps(10.0, 2);
    let r0 = sim.add_router("R0", NodeConfig::default());
    let source = sim.add_source("S", group.clone(), SourceConfig::default(), 1000);
    let (_, r0_up) = sim.connect(source, r0, spec);
    sim.add_route(r0, group.clone(), r0_up);
    let r0_phantom = [3u64, 4];
    let mut branches = [0; 2];
    // Per node in the tree: the occupancies of its group faces.
    let mut node_faces: Vec<Vec<f64>> = vec![Vec::new(); 3];
    for (k, b) in branches.iter_mut().enumerate() {
        *b = sim.add_router(&format!("B{k}"), NodeConfig::default());
        let (down, up) = sim.connect(r0, *b, spec);
        sim.link_of_mut(r0, down).phantom_packets = r0_phantom[k];
        sim.add_route(*b, group.clone(), up);
    }
    let mut expected_fair = 10_000_000; // C / N of every node's upstream link, one group
    for i in 0..n {
        let k = i % 2;
        let cfg = ReceiverConfig {
            access_capacity_bps: rx_capacity(i),
            ..ReceiverConfig::default()
        };
        let rx = sim.add_receiver(&format!("rx{i}"), group.clone(), cfg);
        let (down, _) = sim.connect(branches[k], rx, spec);
        sim.link_of_mut(branches[k], down).phantom_packets = rx_phantom(i);
        node_faces[1 + k].push(rx_phantom(i) as f64 / QMAX);
        expected_fair = expected_fair.min(rx_capacity(i));
    }
    for k in 0..2 {
        if !node_faces[1 + k].is_empty() {
            node_faces[0].push(r0_phantom[k] as f64 / QMAX);
        }
    }
    let in_tree: Vec<&Vec<f64>> = node_faces.iter().filter(|f| !f.is_empty()).collect();
    let own = |f: &Vec<f64>| f.iter().copied().fold(0.0, f64::max);
    let expected_max = in_tree.iter().map(|f| own(f)).fold(0.0, f64::max);
    let expected_min = in_tree.iter().map(|f| own(f)).fold(1.0, f64::min);
    Tree {
        sim,
        source,
        r0,
        branches,
        expected_max,
        expected_min,
        expected_fair,
    }
}

fn check(n: usize) -> usize {
    let mut t = tree(n);
    t.sim.run_until(secs(10));
    let out_before: Vec<u64> = [t.r0, t.branches[0], t.branches[1]]
        .iter()
        .map(|r| t.sim.router(*r).node.stats().feedback_out)
        .collect();
    t.sim.run_until(secs(20));
    let period = NodeConfig::default().feedback_period;
    let periods = ((secs(20) - secs(10)).as_nanos() / period.as_nanos()) as usize;
    let src = t.sim.source(t.source);
    let window: Vec<_> = src
        .feedback_log
        .iter()
        .filter(|(at, _)| *at >= secs(10) && *at < secs(20))
        .collect();
    assert_eq!(
        window.len(),
        periods,
        "n={n}: messages at the source in {periods} periods"
    );
    for pair in window.windows(2) {
        assert_eq!(
            pair[1].0 - pair[0].0,
            period,
            "n={n}: one message per period"
        );
    }
    for (at, fb) in &window {
        assert_eq!(fb.min_fair_share_bps, t.expected_fair, "n={n} at {at:?}");
        let (max, min) = (
            occupancy_to_ppm(t.expected_max),
            occupancy_to_ppm(t.expected_min),
        );
        assert!(
            fb.max_occupancy_ppm.abs_diff(max) <= 2,
            "n={n}: max {} != {max}",
            fb.max_occupancy_ppm
        );
        assert!(
            fb.min_occupancy_ppm.abs_diff(min) <= 2,
            "n={n}: min {} != {min}",
            fb.min_occupancy_ppm
        );
    }
    // Every node that is in the tree sent one message per period, too.
    for (r, before) in [t.r0, t.branches[0], t.branches[1]].iter().zip(out_before) {
        let node = &t.sim.router(*r).node;
        let sent = node.stats().feedback_out - before;
        let expect = if node.mnft().is_empty() {
            0
        } else {
            periods as u64
        };
        assert_eq!(sent, expect, "n={n}: {} sent {sent}", t.sim.name(*r));
    }
    eprintln!(
        "n={n}: {} MCC messages at the source in {periods} periods; fair {} max {:.2} min {:.2}; feedback into R0 {}",
        window.len(),
        t.expected_fair,
        t.expected_max,
        t.expected_min,
        t.sim.router(t.r0).node.stats().feedback_in
    );
    window.len()
}

#[test]
fn one_receiver() {
    check(1);
}

#[test]
fn three_receivers() {
    check(3);
}

#[test]
fn ten_receivers() {
    check(10);
}

#[test]
fn source_load_does_not_grow_with_receivers() {
    assert_eq!(check(1), check(10));
}
