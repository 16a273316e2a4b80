//! SRMCC Figure 4 with competing unicast traffic, over real engines in
//! virtual time (issue 7): one multicast group (source on S, three
//! receivers behind B on 1.5 Mbit/s links) and two cubic unicast flows
//! (icncat's consumer logic, `icn_consumer::Scheme` with `LawKind::Cubic`)
//! fetching two files from a producer on S, all across the 2 Mbit/s
//! C→B bottleneck.
//!
//! ```text
//!  src app, producer ─ S ══10 Mb/s══ C ══2 Mb/s══ B ─┬─1.5 Mb/s─ R1..R3 ─ rx apps
//!                                                    └─ 2 cubic consumer apps
//! ```
//!
//! The fair share of the bottleneck is C/N = 2 Mbit/s / 3 (one group and
//! two unicast flows). B's estimate must see the two flows (sampled on its
//! upstream face), the stream must take no more than that share and must
//! not drop to zero. Run with `--nocapture` for the numbers.

mod mcast_common;

use cc_core::LawKind;
use icn_consumer::{Scheme, SchemeOptions};
use icn_forwarder::groups::SrmccGroups;
use icn_multicast::SourceConfig;
use icn_sim::net::flows::LawFlow;
use icn_tlv::Name;
use mcast_common::*;

const BOTTLENECK_BPS: f64 = 2_000_000.0;
const FAIR_BPS: f64 = BOTTLENECK_BPS / 3.0;
const FROM_S: u64 = 20;
const TO_S: u64 = 60;

#[test]
fn stream_keeps_its_fair_share_against_two_cubic_flows() {
    let g: Name = "/mc/video".parse().unwrap();
    let uni: Name = "/uni".parse().unwrap();
    let mut t = Fig4::new(11, 50, 3, 1_500_000);
    t.route_to_source(&g);
    t.route_to_source(&uni);
    let mut apps = Apps::default();
    apps.add_source(&mut t.net, t.s, &g, SourceConfig::default());
    for r in t.r.clone() {
        apps.add_receiver(&mut t.net, r, &g, rx_cfg(1_500_000));
    }
    t.net.add_producer(t.s, "/uni", 1000, None);
    let opts = SchemeOptions {
        kind: LawKind::Cubic,
        initial_data_size_bytes: 1000.0,
        ..SchemeOptions::default()
    };
    let end = secs(TO_S);
    let mut flows: Vec<LawFlow<Scheme>> = (0..2)
        .map(|i| {
            let app = t.net.add_consumer(t.b);
            LawFlow::new(
                app,
                &format!("/uni/file{i}"),
                Scheme::new(&opts),
                secs(0),
                end,
            )
        })
        .collect();
    // B's fair-share estimate and flow count for its upstream, once a second.
    let (b, b_up) = (t.b, t.b_up);
    let mut estimates: Vec<(f64, usize)> = Vec::new();
    let mut next = secs(FROM_S);
    run(&mut t.net, &mut apps, &mut flows, end, |net, _| {
        if net.now() >= next {
            next += ms(1000);
            let node = SrmccGroups::of(net.node(b)).and_then(SrmccGroups::node);
            if let Some(n) = node {
                let fair = n.fair_share_bps(b_up.0).unwrap_or(f64::NAN);
                estimates.push((fair, n.flow_count(b_up.0).unwrap_or(0)));
            }
        }
    });

    let (from, to) = (secs(FROM_S), secs(TO_S));
    let cubic: Vec<f64> = flows
        .iter()
        .map(|f| f.stats.goodput_bps(from, to))
        .collect();
    let src = &apps.sources[0];
    let fb: Vec<_> = src
        .feedback
        .iter()
        .filter(|(at, _)| *at >= from && *at < to)
        .collect();
    let fb_at_fair = fb
        .iter()
        .filter(|(_, m)| (m.min_fair_share_bps as f64) <= FAIR_BPS * 1.01)
        .count();
    let announced: Vec<f64> = src
        .rates
        .iter()
        .filter(|(at, _)| *at >= from && *at < to)
        .map(|(_, r)| *r)
        .collect();
    let mean_announced = announced.iter().sum::<f64>() / announced.len().max(1) as f64;
    let n_ok = estimates.iter().filter(|(_, n)| *n == 3).count();
    eprintln!(
        "B's estimate over {} samples: N=3 in {n_ok}; fair shares {:?}",
        estimates.len(),
        estimates
            .iter()
            .map(|(f, n)| format!("{:.0}k/{n}", f / 1e3))
            .collect::<Vec<_>>()
    );
    eprintln!(
        "source: {} MCC messages in {} s, {fb_at_fair} carrying <= C/3; announced mean {:.0} bit/s, min {:.0}, max {:.0}",
        fb.len(),
        TO_S - FROM_S,
        mean_announced,
        announced.iter().copied().fold(f64::INFINITY, f64::min),
        announced.iter().copied().fold(0.0, f64::max)
    );
    eprintln!(
        "cubic goodput: {:?} bit/s",
        cubic.iter().map(|x| x.round()).collect::<Vec<_>>()
    );
    let mut rx_rates = Vec::new();
    for (i, r) in apps.receivers.iter().enumerate() {
        let rate = r.rate_bps(from, to);
        let per_s = r.per_second_bps(from, to);
        let min_s = per_s.iter().copied().fold(f64::INFINITY, f64::min);
        let s = r.rx.stats();
        let rp = r.rx.repair_stats();
        eprintln!(
            "receiver {i}: {rate:.0} bit/s mean, {min_s:.0} bit/s lowest 1 s window, {} packets, {} holes, {} repaired, {} unrepaired",
            s.packets,
            rp.repaired + rp.late + rp.unrepaired,
            rp.repaired,
            rp.unrepaired
        );
        rx_rates.push((rate, min_s));
    }

    // The estimate sees the two unicast flows: N = 1 group + 2 flows.
    assert!(
        n_ok * 10 >= estimates.len() * 9,
        "B counted 3 flows in only {n_ok}/{} samples",
        estimates.len()
    );
    assert!(
        fb_at_fair * 10 >= fb.len() * 9,
        "{fb_at_fair}/{} MCC messages carry the 3-way fair share",
        fb.len()
    );
    // No more than the fair share (5 % for the 1 s accounting windows) and
    // never zero: every 1 s window delivers at least a tenth of it.
    for (i, (rate, min_s)) in rx_rates.iter().enumerate() {
        assert!(*rate <= FAIR_BPS * 1.05, "receiver {i}: {rate} > C/3");
        assert!(
            *min_s >= FAIR_BPS * 0.1,
            "receiver {i}: a window at {min_s}"
        );
    }
    // The unicast flows are not starved by the stream either.
    for (i, c) in cubic.iter().enumerate() {
        assert!(*c >= FAIR_BPS * 0.5, "cubic flow {i}: {c}");
    }
}
