//! Four SRMCC groups sharing the 2 Mbit/s bottleneck of Figure 4, over real
//! engines in virtual time (issue 7): four sources on S, one receiver node
//! per group behind B on 10 Mbit/s access links, groups joining 5 s apart.
//! The bottleneck's fair share is C/N = 2 Mbit/s / 4 groups; the groups
//! must converge to equal rates (Jain's index >= 0.95). Run with
//! `--nocapture` for the numbers.

mod mcast_common;

use icn_multicast::SourceConfig;
use icn_sim::net::flows::jain;
use icn_sim::net::flows::LawFlow;
use icn_tlv::Name;
use mcast_common::*;

const GROUPS: usize = 4;
const FROM_S: u64 = 30;
const TO_S: u64 = 60;

#[test]
fn four_groups_converge_to_equal_rates() {
    let groups: Vec<Name> = (0..GROUPS)
        .map(|i| format!("/mc/g{i}").parse().unwrap())
        .collect();
    let mut t = Fig4::new(5, 50, GROUPS, 10_000_000);
    let mut apps = Apps::default();
    for g in &groups {
        t.route_to_source(g);
        apps.add_source(&mut t.net, t.s, g, SourceConfig::default());
    }
    // Group i's receiver joins at 5 i s.
    let mut joined = 0;
    let r_nodes = t.r.clone();
    let groups_c = groups.clone();
    let mut none: Vec<LawFlow<cc_core::AnyConsumerLaw>> = Vec::new();
    run(&mut t.net, &mut apps, &mut none, secs(TO_S), |net, apps| {
        while joined < GROUPS && net.now() >= secs(5 * joined as u64) {
            apps.add_receiver(net, r_nodes[joined], &groups_c[joined], rx_cfg(10_000_000));
            joined += 1;
        }
    });

    let (from, to) = (secs(FROM_S), secs(TO_S));
    let mut rates = Vec::new();
    for (i, r) in apps.receivers.iter().enumerate() {
        let s = r.rx.stats();
        let rate = r.rate_bps(from, to);
        let src = &apps.sources[i];
        let fb = src
            .feedback
            .iter()
            .filter(|(at, _)| *at >= from && *at < to)
            .count();
        eprintln!(
            "group {i}: {rate:.0} bit/s, {} packets, lost {} ({:.2} %), source rate {:.0}, {fb} MCC messages in {} s",
            s.packets,
            s.lost,
            s.loss_ratio() * 100.0,
            src.src.rate_bps(),
            TO_S - FROM_S
        );
        assert!(s.loss_ratio() <= 0.01, "group {i} loss {}", s.loss_ratio());
        rates.push(rate);
    }
    let j = jain(&rates);
    let total: f64 = rates.iter().sum();
    eprintln!("Jain {j:.4}, total {total:.0} bit/s");
    assert!(j >= 0.95, "Jain {j} over {rates:?}");
    assert!(total <= 2_000_000.0 * 1.01, "total {total}");
    assert!(total >= 2_000_000.0 * 0.6, "bottleneck underused: {total}");
}
