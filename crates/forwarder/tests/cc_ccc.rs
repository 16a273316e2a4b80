//! CCC in the engine on the CCC paper's Fig. 1 (Thibaud et al., ICC 2020,
//! §I and §V): consumer A reaches the content through R1–R2 and R1–R3,
//! consumer B only through R1–R3. Every node runs the `ccc` strategy and
//! hooks (objectives split per Algorithm 1 and rewritten on Interests,
//! constraints aggregated per eq. 9 and rewritten on Data, Algorithm 2
//! load balancing, supervision of each face's Data queue, Algorithms 3-6
//! with the max-min reading of Algorithm 6). Both consumers ask for
//! 20 Mbit/s, more than the network offers.
//!
//! ```text
//!  A ─┐          ┌─ R2 (producer)   R2→R1: 6 Mbit/s  (A only)
//!     R1 ────────┤
//!  B ─┘          └─ R3 (producer)   R3→R1: 10 Mbit/s (A and B)
//! ```
//!
//! `cargo test -p icn-forwarder --test cc_ccc -- --nocapture` prints the
//! measured rates.

mod cc_common;

use cc_common::*;
use cc_core::LawKind;
use icn_consumer::RateSpec;
use icn_forwarder::cc::CcScheme;
use icn_forwarder::engine::QueueLimits;
use icn_sim::net::flows::{drive, jain};
use icn_sim::net::Network;

const DATA_BYTES: usize = 4000;
const B_START_MS: u64 = 2_000;
const RUN_MS: u64 = 10_000;
const FROM_MS: u64 = 6_000;

fn ccc_engine() -> RouterConfig {
    let mut r = engine(CcScheme::Ccc);
    r.engine.queue = QueueLimits {
        max_packets: 50,
        max_bytes: 8 << 20,
    };
    r
}

struct Fig1 {
    a_via_r2_bps: f64,
    a_via_r3_bps: f64,
    b_bps: f64,
    drops: u64,
}

fn fig1(seed: u64) -> Fig1 {
    let mut net = Network::new(seed);
    let r1 = net.add_node(ccc_engine());
    let r2 = net.add_node(ccc_engine());
    let r3 = net.add_node(ccc_engine());
    let (r1_r2, r2_r1) = net.connect(r1, r2, link(6, 5));
    let (r1_r3, _) = net.connect(r1, r3, link(10, 5));
    net.add_producer(r2, "/", DATA_BYTES, None);
    net.add_producer(r3, "/", DATA_BYTES, None);
    let (a_pfx, b_pfx) = ("/a".parse().unwrap(), "/b".parse().unwrap());
    let fwd = net.node_mut(r1);
    fwd.fib_add_nexthop(&a_pfx, r1_r2, 1).unwrap();
    fwd.fib_add_nexthop(&a_pfx, r1_r3, 1).unwrap();
    fwd.fib_add_nexthop(&b_pfx, r1_r3, 1).unwrap();
    let o = icn_consumer::SchemeOptions {
        objective: Some(RateSpec::BitsPerSec(20e6)),
        ..opts(LawKind::Ccc, DATA_BYTES as f64)
    };
    let (a, b) = (net.add_consumer(r1), net.add_consumer(r1));
    let mut flows = vec![
        scheme_flow(a, "/a/x", &o, at(0), at(RUN_MS), seed ^ 1),
        scheme_flow(b, "/b/x", &o, at(B_START_MS), at(RUN_MS), seed ^ 2),
    ];
    // Only A's Data cross R2→R1.
    let r2_bytes = |net: &Network| net.link_delivered(r2, r2_r1).map_or(0, |d| d.1);
    drive(&mut net, &mut flows, at(FROM_MS), ms(1));
    let r2_from = r2_bytes(&net);
    drive(&mut net, &mut flows, at(RUN_MS), ms(1));
    let r2_to = r2_bytes(&net);
    for n in [r1, r2, r3] {
        net.node(n).check_invariants().unwrap();
    }
    let secs = (RUN_MS - FROM_MS) as f64 / 1e3;
    let a_total = flows[0].stats.goodput_bps(at(FROM_MS), at(RUN_MS));
    // Link bytes carry the LP header too: bound by what A received.
    let a_via_r2_bps = ((r2_to - r2_from) as f64 * 8.0 / secs).min(a_total);
    Fig1 {
        a_via_r2_bps,
        a_via_r3_bps: a_total - a_via_r2_bps,
        b_bps: flows[1].stats.goodput_bps(at(FROM_MS), at(RUN_MS)),
        drops: data_drops(&net, &[r1, r2, r3]),
    }
}

#[test]
fn shared_link_is_split_max_min_and_a_keeps_its_other_path() {
    println!("| seed | A via R2 | A via R3 | B via R3 | R1–R3 Jain | Data drops");
    for seed in [1, 2] {
        let r = fig1(seed);
        let mbps = |x: f64| x / 1e6;
        let j = jain(&[r.a_via_r3_bps, r.b_bps]);
        println!(
            "| {seed} | {:.2} | {:.2} | {:.2} | {j:.3} | {}",
            mbps(r.a_via_r2_bps),
            mbps(r.a_via_r3_bps),
            mbps(r.b_bps),
            r.drops
        );
        let shared = r.a_via_r3_bps + r.b_bps;
        assert!(shared > 0.85 * 10e6, "seed {seed}: R1–R3 carries {shared}");
        assert!(
            r.a_via_r2_bps > 0.85 * 6e6,
            "seed {seed}: A via R2 {}",
            r.a_via_r2_bps
        );
        // Per-link max-min on R1–R3: both unsatisfied, so half each.
        let half = 5e6;
        assert!(
            (r.a_via_r3_bps - half).abs() < 0.15 * half,
            "seed {seed}: A via R3 {} B {}",
            r.a_via_r3_bps,
            r.b_bps
        );
        assert!(
            (r.b_bps - half).abs() < 0.15 * half,
            "seed {seed}: B {}",
            r.b_bps
        );
    }
}
