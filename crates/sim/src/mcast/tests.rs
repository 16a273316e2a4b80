use super::*;

fn chain() -> (Sim, HostId, HostId, HostId) {
    let mut sim = Sim::new();
    let g: Name = "/mc/a".parse().unwrap();
    let r0 = sim.add_router("R0", NodeConfig::default());
    let s = sim.add_source("S", g.clone(), SourceConfig::default(), 500);
    let (_, up) = sim.connect(s, r0, LinkSpec::mbps(10.0, 1));
    sim.add_route(r0, g.clone(), up);
    let rx = sim.add_receiver("rx", g, ReceiverConfig::default());
    sim.connect(r0, rx, LinkSpec::mbps(10.0, 1));
    (sim, s, r0, rx)
}

#[test]
fn a_chain_delivers_the_stream() {
    let (mut sim, s, r0, rx) = chain();
    sim.run_until(Timestamp::from_millis(3000));
    eprintln!(
        "{:?}\n{:?}\n{:?}",
        sim.router(r0),
        sim.source(s).src.stats(),
        sim.receiver(rx).rx.stats()
    );
    assert!(sim.receiver(rx).rx.stats().packets > 10);
    assert_eq!(sim.receiver(rx).rx.stats().lost, 0);
    assert!(sim.source(s).src.stats().feedback_in > 3);
}

#[test]
fn data_outside_a_group_is_dropped() {
    let (mut sim, s, r0, _) = chain();
    sim.run_until(Timestamp::from_millis(100));
    let d = icn_tlv::Data::new("/other/seq=1".parse().unwrap(), Bytes::from_static(b"x")).encode();
    let mut out = Vec::new();
    if let Host::Router(r) = &mut sim.hosts[r0].host {
        r.on_frame(sim.now, FIRST_FACE, d, &mut out);
    }
    assert!(out.is_empty());
    assert_eq!(sim.router(r0).counters.unsolicited_data, 1);
    let _ = s;
}

#[test]
fn jain_index_bounds() {
    assert_eq!(jain(&[1.0, 1.0, 1.0]), 1.0);
    assert!((jain(&[1.0, 0.0]) - 0.5).abs() < 1e-12);
}
