//! Receivers' access capacity from the forwarder's faces (issue 7), over
//! real engines in virtual time. Three receivers sit on B behind faces of
//! 1.5 Mbit/s (a receiver host on an access link) and report no capacity
//! of their own (`u64::MAX`; `icncat --subscribe` without
//! `--access-capacity` reports a 100 Mbit/s ceiling): B caps
//! each report with the capacity of the face it arrived on, so the source
//! converges to the access capacity instead of B's 2 Mbit/s upstream, and
//! nothing is lost. A receiver that gives `--access-capacity` lower than
//! its face overrides it.

mod mcast_common;

use icn_forwarder::engine::FaceParams;
use icn_multicast::wire::UNLIMITED_BPS;
use icn_multicast::{MulticastReceiver, SourceConfig};
use icn_sim::net::flows::LawFlow;
use icn_tlv::Name;
use mcast_common::*;

/// Runs the tree with receivers reporting `reported` each; returns the
/// source's final rate, the MCC messages' fair shares and the receivers.
fn run_with(reported: &[u64]) -> (f64, Vec<u64>, Vec<Receiver>) {
    let g: Name = "/mc/video".parse().unwrap();
    let mut t = Fig4::new(9, 100, 0, 0);
    t.route_to_source(&g);
    let mut apps = Apps::default();
    apps.add_source(&mut t.net, t.s, &g, SourceConfig::default());
    for (i, r) in reported.iter().enumerate() {
        let mut p = FaceParams::local(format!("app://rx{i}"));
        p.capacity_bps = Some(1_500_000);
        let (app, _) = t.net.add_app_with(t.b, p, None);
        let cfg = rx_cfg(*r);
        apps.receivers.push(Receiver {
            app,
            rx: MulticastReceiver::new(g.clone(), cfg, t.net.now()),
            alive: true,
            arrivals: Vec::new(),
            delivered: Vec::new(),
            gaps: Vec::new(),
        });
    }
    let mut none: Vec<LawFlow<cc_core::AnyConsumerLaw>> = Vec::new();
    run(&mut t.net, &mut apps, &mut none, secs(30), |_, _| {});
    let src = apps.sources.remove(0);
    let fair = src
        .feedback
        .iter()
        .filter(|(at, _)| *at >= secs(10))
        .map(|(_, m)| m.min_fair_share_bps)
        .collect();
    (src.src.rate_bps(), fair, apps.receivers)
}

#[test]
fn access_capacity_comes_from_the_receivers_face() {
    // No limit, icncat's 100 Mbit/s default, no limit.
    let (rate, fair, rxs) = run_with(&[UNLIMITED_BPS, 100_000_000, UNLIMITED_BPS]);
    let max_fair = fair.iter().copied().max().unwrap_or(0);
    eprintln!("no flag: source {rate:.0} bit/s, MCC fair share max {max_fair}");
    assert!(!fair.is_empty());
    assert_eq!(max_fair, 1_500_000, "B's face capacity caps the reports");
    assert!((1_400_000.0..=1_500_001.0).contains(&rate), "{rate}");
    for (i, r) in rxs.iter().enumerate() {
        let s = r.rx.stats();
        let got = r.rate_bps(secs(10), secs(30));
        eprintln!("receiver {i}: {got:.0} bit/s, lost {}", s.lost);
        assert!(got >= 1_400_000.0, "receiver {i} {got}");
        assert!(s.loss_ratio() <= 0.01, "receiver {i} {}", s.loss_ratio());
    }
}

#[test]
fn the_flag_overrides_downwards() {
    let (rate, fair, _) = run_with(&[UNLIMITED_BPS, 800_000, UNLIMITED_BPS]);
    eprintln!("one receiver says 800 kbit/s: source {rate:.0} bit/s");
    assert!(fair.iter().all(|f| *f == 800_000), "{fair:?}");
    assert!((700_000.0..=800_001.0).contains(&rate), "{rate}");
}
