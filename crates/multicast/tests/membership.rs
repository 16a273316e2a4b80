//! Receivers joining and leaving mid-stream: grafts and prunes within one
//! refresh period; a receiver that dies stops receiving copies once its
//! membership expires.

use cc_core::{Duration, Timestamp};
use icn_multicast::{NodeConfig, ReceiverConfig, SourceConfig};
use icn_sim::mcast::{LinkSpec, Sim};
use icn_tlv::Name;

fn at(ms: u64) -> Timestamp {
    Timestamp::from_millis(ms)
}

#[test]
fn graft_prune_and_dead_receiver_expiry() {
    let group: Name = "/mc/live".parse().unwrap();
    let refresh = ReceiverConfig::default().refresh_period;
    let lifetime = ReceiverConfig::default().membership_lifetime;
    let spec = LinkSpec::mbps(10.0, 5);
    let mut sim = Sim::new();
    let r0 = sim.add_router("R0", NodeConfig::default());
    let s = sim.add_source("S", group.clone(), SourceConfig::default(), 1000);
    let (_, up) = sim.connect(s, r0, spec);
    sim.add_route(r0, group.clone(), up);
    let b1 = sim.add_router("B1", NodeConfig::default());
    let b2 = sim.add_router("B2", NodeConfig::default());
    let (r0_b1, b1_up) = sim.connect(r0, b1, spec);
    let (r0_b2, b2_up) = sim.connect(r0, b2, spec);
    sim.add_route(b1, group.clone(), b1_up);
    sim.add_route(b2, group.clone(), b2_up);
    let cfg = ReceiverConfig {
        access_capacity_bps: 5_000_000,
        ..ReceiverConfig::default()
    };
    let rx_a = sim.add_receiver("a", group.clone(), cfg.clone());
    let (b1_a, _) = sim.connect(b1, rx_a, spec);
    let rx_b = sim.add_receiver("b", group.clone(), cfg.clone());
    sim.connect(b1, rx_b, spec);

    sim.run_until(at(10_000));
    assert_eq!(sim.router(r0).node.downstream_faces(&group), vec![r0_b1]);
    assert_eq!(
        sim.link_of(r0, r0_b2).stats.data_frames,
        0,
        "no copies before a graft"
    );

    // Graft: c joins behind B2 at 10 s.
    let rx_c = sim.add_receiver("c", group.clone(), cfg);
    sim.connect(b2, rx_c, spec);
    sim.run_until(at(10_000) + refresh);
    assert_eq!(
        sim.router(r0).node.downstream_faces(&group),
        vec![r0_b1, r0_b2]
    );
    let first = sim
        .receiver(rx_c)
        .first_data_at
        .expect("c receives after the graft");
    eprintln!("graft: first copy at c {:?} after join", first - at(10_000));
    assert!(first - at(10_000) < refresh);

    // Prune: c leaves at 20 s; B2 empties and leaves R0.
    sim.run_until(at(20_000));
    sim.leave(rx_c);
    sim.run_until(at(20_000) + refresh);
    assert!(sim.router(b2).node.mnft().is_empty());
    assert_eq!(sim.router(r0).node.downstream_faces(&group), vec![r0_b1]);
    let frozen = sim.link_of(r0, r0_b2).stats.data_frames;
    sim.run_until(at(25_000));
    assert_eq!(
        sim.link_of(r0, r0_b2).stats.data_frames,
        frozen,
        "no copies after the prune"
    );
    eprintln!("prune: R0->B2 carried {frozen} copies in total");

    // Death: a stops sending anything at 30 s (no leave).
    sim.run_until(at(30_000));
    sim.kill(rx_a);
    sim.run_until(at(30_000) + lifetime - refresh);
    assert!(
        sim.router(b1).node.downstream_faces(&group).contains(&b1_a),
        "soft state outlives one missed refresh"
    );
    sim.run_until(at(30_000) + lifetime + Duration::from_millis(100));
    assert!(!sim.router(b1).node.downstream_faces(&group).contains(&b1_a));
    let frozen = sim.link_of(b1, b1_a).stats.data_frames;
    sim.run_until(at(40_000));
    assert_eq!(
        sim.link_of(b1, b1_a).stats.data_frames,
        frozen,
        "no copies to the dead receiver"
    );
    assert!(
        sim.receiver(rx_b).last_data_at.unwrap() > at(39_900),
        "b still served"
    );
    assert!(sim.router(b1).node.stats().expirations >= 1);
    let st = sim.receiver(rx_b).rx.stats();
    eprintln!(
        "b over 40 s: {} packets, {} lost, final source rate {:.0}",
        st.packets,
        st.lost,
        sim.source(s).src.rate_bps()
    );
    assert_eq!(st.lost, 0);
}
