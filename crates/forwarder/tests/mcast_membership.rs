//! Joining and leaving mid-stream over real engines in virtual time
//! (issue 7), on the Figure 4 tree with three receiver nodes behind B:
//!
//! * receiver 2 joins at 10 s: its branch is grafted and its first copy
//!   arrives within one refresh period (1 s);
//! * receiver 1 leaves at 15 s: its node prunes, B drops the branch within
//!   one refresh period and no copy crosses B→R2 afterwards;
//! * receiver 0 dies at 20 s (no leave, no refresh): copies keep coming
//!   until its membership (3 s lifetime) expires, and stop after expiry;
//! * the receiver that stays loses nothing.

mod mcast_common;

use cc_core::Timestamp;
use icn_forwarder::groups::SrmccGroups;
use icn_multicast::SourceConfig;
use icn_sim::net::flows::LawFlow;
use icn_sim::net::{Network, NodeId};
use icn_tlv::Name;
use mcast_common::*;

fn downstream(net: &Network, n: NodeId, g: &Name) -> Vec<u64> {
    SrmccGroups::of(net.node(n))
        .and_then(SrmccGroups::node)
        .map(|m| m.downstream_faces(g))
        .unwrap_or_default()
}

#[test]
fn graft_prune_and_expiry_mid_stream() {
    let g: Name = "/mc/video".parse().unwrap();
    let mut t = Fig4::new(3, 100, 3, 1_500_000);
    t.route_to_source(&g);
    let mut apps = Apps::default();
    apps.add_source(&mut t.net, t.s, &g, SourceConfig::default());
    apps.add_receiver(&mut t.net, t.r[0], &g, rx_cfg(1_500_000));
    apps.add_receiver(&mut t.net, t.r[1], &g, rx_cfg(1_500_000));
    let (b, b_down) = (t.b, t.b_down.clone());
    let r2 = t.r[2];
    let g2 = g.clone();
    // (time, frames delivered B→R1, B→R2) once per 100 ms, and B's
    // downstream faces of the group.
    let mut log: Vec<(Timestamp, u64, u64, Vec<u64>)> = Vec::new();
    let mut next = secs(0);
    let mut none: Vec<LawFlow<cc_core::AnyConsumerLaw>> = Vec::new();
    let (mut joined, mut left, mut died) = (false, false, false);
    run(&mut t.net, &mut apps, &mut none, secs(30), |net, apps| {
        let now = net.now();
        if !joined && now >= secs(10) {
            joined = true;
            apps.add_receiver(net, r2, &g2, rx_cfg(1_500_000));
        }
        if !left && now >= secs(15) {
            left = true;
            apps.receivers[1].rx.leave();
        }
        if !died && now >= secs(20) {
            died = true;
            apps.receivers[0].alive = false;
        }
        if now >= next {
            next += ms(100);
            let d = |i: usize| net.link_delivered(b, b_down[i]).map_or(0, |x| x.0);
            log.push((now, d(0), d(1), downstream(net, b, &g2)));
        }
    });
    let at = |s: f64| {
        log.iter()
            .find(|e| e.0 >= Timestamp::from_secs_f64(s))
            .expect("logged")
            .clone()
    };

    // Graft: the new receiver's first copy within one refresh period.
    let first = apps.receivers[2]
        .first_arrival_after(secs(10))
        .expect("receiver 2 got copies");
    let graft = first.saturating_since(secs(10));
    eprintln!("graft: first copy {graft:?} after the join");
    assert!(graft <= ms(1000), "graft took {graft:?}");

    // Prune: B drops the branch within one refresh period of the leave,
    // and nothing more crosses B→R2.
    let pruned = log
        .iter()
        .find(|e| e.0 >= secs(15) && !e.3.contains(&b_down[1].0))
        .map(|e| e.0.saturating_since(secs(15)))
        .expect("B dropped R2's face");
    let (a, b) = (at(16.0).2, at(30.0).2);
    eprintln!("prune: B dropped the branch {pruned:?} after the leave; B→R2 frames {a} at 16 s, {b} at 30 s");
    assert!(pruned <= ms(1000), "prune took {pruned:?}");
    assert_eq!(a, b, "copies crossed B→R2 after the prune");

    // Expiry: the dead receiver's branch still gets copies one refresh
    // before its membership lapses (20 s + 3 s lifetime) and none after.
    let (before, after, end) = (at(21.9).1, at(23.2).1, at(30.0).1);
    let flowing = before - at(21.0).1;
    eprintln!(
        "expiry: B→R1 frames {flowing} in 21..21.9 s, {} in 23.2..30 s; B's downstream at 23.2 s {:?}",
        end - after,
        at(23.2).3
    );
    assert!(flowing > 50, "copies stopped before expiry: {flowing}");
    assert_eq!(after, end, "copies crossed B→R1 after expiry");
    assert!(!at(23.2).3.contains(&b_down[0].0));
    let dead = &apps.receivers[0];
    assert!(dead.arrivals.iter().all(|a| a.0 < secs(24)));

    // The receiver that stayed lost nothing; the leaver left cleanly.
    let stay = apps.receivers[2].rx.stats();
    eprintln!("receiver 2: {} packets, lost {}", stay.packets, stay.lost);
    assert_eq!(stay.lost, 0);
    assert!(stay.packets > 1000);
    assert!(apps.receivers[1].arrivals.iter().all(|a| a.0 < secs(16)));
}
