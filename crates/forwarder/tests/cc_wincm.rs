//! WinCM fairness over a longer run (the dumbbell of `cc_dumbbell.rs`, 3
//! flows, 20 Mbit/s, 20 ms RTT, 16 s).
//!
//! Finding: WinCM does not settle to a fixed split. Marks are shared in
//! proportion to each flow's part of the queue, so the cuts equalise the
//! windows, but BIC then drives each flow back towards its own bicMax, and
//! the per-2-s Jain index wanders (about 0.92 to 1.0 here), so a short
//! measurement window is a draw from that range; averaged over 12 s the
//! flows are fair (Jain ≈ 0.99). Before cc-core's WinCM fixes (β = 4, and a
//! BIC binary search that never raised bicMin, so a window between the
//! target and bicMax stopped growing until the next mark: measured parked
//! at 14.3 Interests for seconds) a flow could be cut to cwnd = 1 by one
//! episode and then sit there.
//! The forwarder wiring is as WinCM specifies: one mark added per
//! congested hop (marks only grow downstream), marking episodes re-arm,
//! the consumer reacts to every marked Data (no CWA gate on marks; it gates
//! timeouts and Nacks only).
//!
//! `cargo test -p icn-forwarder --test cc_wincm -- --nocapture`.

mod cc_common;

use cc_common::*;
use icn_forwarder::cc::CcScheme;
use icn_sim::net::flows::{drive, jain, LawFlow};
use icn_sim::net::Network;

const RUN_MS: u64 = 16_000;
const WINDOW_MS: u64 = 2_000;
const FROM_MS: u64 = 4_000;

/// Two nodes a → b over 20 Mbit/s, 10 ms, `/p` routed from a to b and
/// produced (4000-byte Data) at b: (network, a, b, a's face to b, b's face
/// to a).
fn line(
    cfg: icn_forwarder::router::RouterConfig,
) -> (
    Network,
    icn_sim::net::NodeId,
    icn_sim::net::NodeId,
    icn_forwarder::engine::FaceId,
    icn_forwarder::engine::FaceId,
) {
    let mut net = Network::new(7);
    let a = net.add_node(cfg.clone());
    let b = net.add_node(cfg);
    let (ab, ba) = net.connect(a, b, link(20, 10));
    net.node_mut(a)
        .fib_add_nexthop(&"/p".parse().unwrap(), ab, 1)
        .unwrap();
    net.add_producer(b, "/p", 4000, None);
    (net, a, b, ab, ba)
}

#[test]
fn wincm_is_fair_over_a_long_run_though_it_oscillates() {
    let scheme = CcScheme::Wincm;
    let (mut net, a, b, _, ba) = line(engine(scheme));
    let mut flows: Vec<_> = (0..3)
        .map(|i| {
            let app = net.add_consumer(a);
            LawFlow::new(
                app,
                &format!("/p/f{i}"),
                law(scheme, 0.0),
                at(i * 100),
                at(RUN_MS),
            )
        })
        .collect();
    let mut windows = Vec::new();
    println!("| until | per-flow Mbit/s | Jain (2 s) | marks so far");
    for t in (WINDOW_MS..=RUN_MS).step_by(WINDOW_MS as usize) {
        drive(&mut net, &mut flows, at(t), ms(1));
        let per: Vec<f64> = flows
            .iter()
            .map(|f| f.stats.goodput_bps(at(t - WINDOW_MS), at(t)) / 1e6)
            .collect();
        let marks = net.node(b).face(ba).unwrap().counters.n_out_marked;
        println!(
            "| {:>5} ms | {:?} | {:.3} | {marks}",
            t,
            per.iter()
                .map(|x| (x * 10.0).round() / 10.0)
                .collect::<Vec<_>>(),
            jain(&per)
        );
        windows.push(jain(&per));
    }
    let o = summarise(
        scheme,
        &flows,
        at(FROM_MS),
        at(RUN_MS),
        20e6,
        data_drops(&net, &[a, b]),
    );
    println!("{}", o.row());
    // Fair on average over 12 s, with the link full and nothing dropped.
    assert!(o.jain >= 0.93, "Jain over 12 s {:.3}", o.jain);
    assert!(o.utilisation >= 0.90, "utilisation {:.3}", o.utilisation);
    assert_eq!(o.data_drops, 0);
    // It keeps oscillating: some 2-s window is clearly less fair than the
    // long-run average (so a short measurement window is a lottery).
    let worst = windows[2..].iter().copied().fold(1.0, f64::min);
    assert!(worst < o.jain, "worst 2-s Jain {worst:.3} vs {:.3}", o.jain);
    // The marking AQM keeps working throughout (the episodes re-arm).
    assert!(net.node(b).face(ba).unwrap().cc.aqm_episodes > 20);
}

/// UIN/UIW per FIB prefix (Algorithm 3; the paper profile) or per content
/// object (tuned): three objects under one route `/p` make one entry per
/// next hop in the first case, three in the second, and each Data of the
/// objects reaches the entry its Interest counted in (no entry is left
/// with unsatisfied Interests once the fetches end).
#[test]
fn uiw_is_kept_per_fib_prefix_or_per_content_object() {
    use icn_forwarder::cc::uiw_summary;
    for (per_fib, want) in [(true, 1), (false, 3)] {
        let scheme = CcScheme::Wincm;
        let mut cfg = engine(scheme);
        cfg.cc.wincm.uiw_per_fib_prefix = per_fib;
        let (mut net, a, _, ab, _) = line(cfg);
        let mut flows: Vec<_> = (0..3)
            .map(|i| {
                let app = net.add_consumer(a);
                LawFlow::new(app, &format!("/p/f{i}"), law(scheme, 0.0), at(0), at(500))
            })
            .collect();
        drive(&mut net, &mut flows, at(1_500), ms(1));
        let s = uiw_summary(net.node(a).cc_hooks(), ab).expect("entries on a's upstream");
        assert_eq!(s.entries, want, "per FIB prefix {per_fib}: {s:?}");
        assert_eq!(s.uin, 0, "per FIB prefix {per_fib}: {s:?}");
        assert!(flows
            .iter()
            .all(|f| f.stats.goodput_bps(at(0), at(500)) > 1e6));
    }
}

/// W7 measured (docs/deviations.md): UIN/UIW per FIB prefix (the paper)
/// against per content object (tuned) where it can matter: many short
/// objects under one route over two unequal paths (X 10 Mbit/s, Y 4), so
/// that every new object either starts from the split its prefix learned
/// or learns it again. Three consumers each fetch a new 0.5 s object every
/// 0.5 s for 20 s. Prints goodput, the share via X and Data drops.
/// `cargo test --release -p icn-forwarder --test cc_wincm -- --ignored --nocapture short_objects`
#[test]
#[ignore = "measurement for docs/deviations.md W7"]
fn short_objects_under_one_prefix_per_fib_prefix_or_per_object() {
    const RUN: u64 = 20_000;
    const OBJ: u64 = 500;
    for per_fib in [true, false] {
        let scheme = CcScheme::Wincm;
        let mut cfg = engine(scheme);
        cfg.cc.wincm.uiw_per_fib_prefix = per_fib;
        let mut net = Network::new(21);
        let c = net.add_node(cfg.clone());
        let x = net.add_node(cfg.clone());
        let y = net.add_node(cfg.clone());
        let p = net.add_node(cfg);
        let (cx, _) = net.connect(c, x, link(10, 5));
        let (cy, _) = net.connect(c, y, link(4, 5));
        let (xp, px) = net.connect(x, p, link(10, 5));
        let (yp, _) = net.connect(y, p, link(4, 5));
        let pfx = "/p".parse().unwrap();
        net.node_mut(c).fib_add_nexthop(&pfx, cx, 1).unwrap();
        net.node_mut(c).fib_add_nexthop(&pfx, cy, 1).unwrap();
        net.node_mut(x).fib_add_nexthop(&pfx, xp, 1).unwrap();
        net.node_mut(y).fib_add_nexthop(&pfx, yp, 1).unwrap();
        net.add_producer(p, "/p", 4000, None);
        let mut flows = Vec::new();
        for i in 0..3 {
            for k in 0..RUN / OBJ {
                // One application face per object: a flow takes its
                // face's whole inbox.
                let app = net.add_consumer(c);
                let t0 = k * OBJ + i * 50;
                flows.push(LawFlow::new(
                    app,
                    &format!("/p/c{i}/o{k}"),
                    law(scheme, 0.0),
                    at(t0),
                    at((t0 + OBJ).min(RUN)),
                ));
            }
        }
        drive(&mut net, &mut flows, at(RUN), ms(1));
        let (from, to) = (at(2_000), at(RUN));
        let bps: f64 = flows.iter().map(|f| f.stats.goodput_bps(from, to)).sum();
        let via_x = net.link_delivered(p, px).map_or(0, |d| d.1) as f64 * 8.0 / (RUN as f64 / 1e3);
        println!(
            "W7 per FIB prefix {per_fib}: goodput {:.2} Mbit/s of 14, via X {:.0} %, Data drops {}",
            bps / 1e6,
            via_x / (bps.max(1.0)) * 100.0,
            data_drops(&net, &[c, x, y, p])
        );
        assert!(bps > 0.0);
    }
}
