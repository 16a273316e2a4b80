//! Diamond multipath (WinCM/QSCCP topologies, MIRCC Fig. 4): one consumer
//! with two disjoint 10 Mbit/s paths to the producer. The multipath
//! schemes must use both (≥ 18 Mbit/s); best-route stays on one (≈ 10).
//!
//! ```text
//!        ┌── X ──┐
//!  C ────┤       ├──── P (producer)
//!        └── Y ──┘      every link 10 Mbit/s, 5 ms
//! ```
//!
//! `cargo test -p icn-forwarder --test cc_multipath -- --nocapture`.

mod cc_common;

use cc_common::*;
use cc_core::{ConsumerLaw, LawKind};
use icn_forwarder::cc::CcScheme;
use icn_sim::net::flows::{drive, LawFlow};
use icn_sim::net::{AppId, Network};

const DATA_BYTES: usize = 4000;
const RUN_MS: u64 = 6_000;

/// (goodput Mbit/s over the second half, share of Data via X, Data drops).
fn diamond<L: ConsumerLaw>(
    scheme: CcScheme,
    mk: impl FnOnce(AppId) -> LawFlow<L>,
) -> (f64, f64, u64) {
    let mut net = Network::new(21);
    let c = net.add_node(engine(scheme));
    let x = net.add_node(engine(scheme));
    let y = net.add_node(engine(scheme));
    let p = net.add_node(engine(scheme));
    let (cx, _) = net.connect(c, x, link(10, 5));
    let (cy, _) = net.connect(c, y, link(10, 5));
    let (xp, px) = net.connect(x, p, link(10, 5));
    let (yp, _) = net.connect(y, p, link(10, 5));
    let pfx = "/p".parse().unwrap();
    net.node_mut(c).fib_add_nexthop(&pfx, cx, 1).unwrap();
    net.node_mut(c).fib_add_nexthop(&pfx, cy, 1).unwrap();
    net.node_mut(x).fib_add_nexthop(&pfx, xp, 1).unwrap();
    net.node_mut(y).fib_add_nexthop(&pfx, yp, 1).unwrap();
    net.add_producer(p, "/p", DATA_BYTES, None);
    let app = net.add_consumer(c);
    let mut flows = vec![mk(app)];
    let via_x = |net: &Network| net.link_delivered(p, px).map_or(0, |d| d.1);
    drive(&mut net, &mut flows, at(RUN_MS / 2), ms(1));
    let x0 = via_x(&net);
    drive(&mut net, &mut flows, at(RUN_MS), ms(1));
    let x1 = via_x(&net);
    for n in [c, x, y, p] {
        net.node(n).check_invariants().unwrap();
    }
    let (from, to) = (at(RUN_MS / 2), at(RUN_MS));
    let bps = flows[0].stats.goodput_bps(from, to);
    let secs = (RUN_MS / 2) as f64 / 1e3;
    let x_bps = (x1 - x0) as f64 * 8.0 / secs;
    (
        bps / 1e6,
        (x_bps / bps).min(1.0),
        data_drops(&net, &[c, x, y, p]),
    )
}

fn report(name: &str, r: (f64, f64, u64)) {
    println!(
        "| {name:<10} | {:>5.2} Mbit/s | via X {:>3.0} % | drops {}",
        r.0,
        r.1 * 100.0,
        r.2
    );
}

#[test]
fn multipath_schemes_use_both_paths_best_route_one() {
    println!("| scheme     | goodput | split | Data drops");
    let br = diamond(CcScheme::None, |app| {
        LawFlow::new(app, "/p/o", law(CcScheme::None, 64.0), at(0), at(RUN_MS))
    });
    report("best-route", br);
    let mut results = vec![];
    for (scheme, kind) in [
        (CcScheme::Mircc, LawKind::Mircc),
        (CcScheme::Qsccp, LawKind::Qsccp),
    ] {
        let o = opts(kind, DATA_BYTES as f64);
        let r = diamond(scheme, |app| {
            scheme_flow(app, "/p/o", &o, at(0), at(RUN_MS), 5)
        });
        report(scheme.name(), r);
        results.push((scheme, r));
    }
    let w = diamond(CcScheme::Wincm, |app| {
        LawFlow::new(app, "/p/o", law(CcScheme::Wincm, 0.0), at(0), at(RUN_MS))
    });
    report("wincm", w);
    results.push((CcScheme::Wincm, w));
    assert!(
        (8.5..=10.5).contains(&br.0),
        "best-route should fill one path: {:.2}",
        br.0
    );
    for (s, (mbps, split, drops)) in results {
        assert!((0.35..=0.65).contains(&split), "{s:?}: {split:.2} via X");
        assert_eq!(drops, 0, "{s:?} dropped Data");
        assert!(mbps >= 18.0, "{s:?}: {mbps:.2} Mbit/s");
    }
}
