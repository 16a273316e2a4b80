//! Forwarding behaviour through one and several engines on virtual time.

use bytes::Bytes;
use cc_core::{Duration, Timestamp};
use icn_forwarder::engine::{DropReason, EngineConfig, FaceId, StrategyName};
use icn_sim::net::{interest, interest_with, InterestOpts, LinkParams, Network, NodeId};
use icn_tlv::{LpPacket, NackReason, Name};

fn name(s: &str) -> Name {
    s.parse().expect("valid name")
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Consumer and producer on one engine.
fn single() -> (Network, NodeId) {
    let mut net = Network::new(1);
    let a = net.add_node(EngineConfig::default());
    (net, a)
}

#[test]
fn interest_and_data_through_one_engine() {
    let (mut net, a) = single();
    let c = net.add_consumer(a);
    let p = net.add_producer(a, "/p", 100, None);
    net.send(c, interest("/p/x", 1));
    net.run_for(ms(10));
    let got = net.inbox(c);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].data().map(|d| d.name.clone()), Some(name("/p/x")));
    assert_eq!(net.inbox(p).len(), 1);
    let cnt = net.node(a).counters();
    assert_eq!((cnt.n_in_interests, cnt.n_out_interests), (1, 1));
    assert_eq!((cnt.n_in_data, cnt.n_out_data), (1, 1));
    assert_eq!(cnt.n_satisfied_interests, 1);
    assert_eq!(cnt.n_pit_entries, 0);
    assert_eq!(cnt.n_cs_entries, 1);
}

#[test]
fn interest_and_data_through_three_engines_take_two_round_trip_delays() {
    let mut net = Network::new(2);
    let a = net.add_node(EngineConfig::default());
    let b = net.add_node(EngineConfig::default());
    let c = net.add_node(EngineConfig::default());
    let link = LinkParams {
        delay: ms(5),
        ..LinkParams::default()
    };
    let (ab, _) = net.connect(a, b, link);
    let (bc, _) = net.connect(b, c, link);
    net.node_mut(a).fib_add_nexthop(&name("/p"), ab, 1).unwrap();
    net.node_mut(b).fib_add_nexthop(&name("/p"), bc, 1).unwrap();
    let cons = net.add_consumer(a);
    let prod = net.add_producer(c, "/p", 10, None);
    net.send(cons, interest("/p/obj", 9));
    net.run_for(ms(100));
    let got = net.inbox(cons);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].at, Timestamp::from_millis(20));
    assert_eq!(got[0].data().unwrap().name, name("/p/obj"));
    assert_eq!(net.inbox(prod).len(), 1);
    for n in [a, b, c] {
        assert_eq!(net.node(n).counters().n_pit_entries, 0);
    }
}

#[test]
fn identical_interests_are_aggregated_into_one_upstream_interest() {
    let (mut net, a) = single();
    let c1 = net.add_consumer(a);
    let c2 = net.add_consumer(a);
    let (prod, pf) = net.add_app(a, None);
    net.node_mut(a).fib_add_nexthop(&name("/p"), pf, 0).unwrap();
    net.send(c1, interest("/p/x", 1));
    net.send(c2, interest("/p/x", 2));
    net.run_for(ms(1));
    assert_eq!(
        net.inbox(prod).len(),
        1,
        "second Interest must be aggregated"
    );
    net.send(prod, icn_sim::net::data("/p/x", b"hello", None));
    net.run_for(ms(1));
    assert_eq!(net.inbox(c1).len(), 1);
    assert_eq!(net.inbox(c2).len(), 1);
    assert_eq!(
        net.inbox(c2)[0].data().unwrap().content,
        Bytes::from_static(b"hello")
    );
}

#[test]
fn unrouted_name_gets_no_route_nack_carrying_the_interest_as_sent() {
    let (mut net, a) = single();
    let c = net.add_consumer(a);
    let sent = interest("/nowhere/x", 5);
    net.send(c, sent.clone());
    net.run_for(ms(1));
    let got = net.inbox(c);
    assert_eq!(got.len(), 1);
    let (reason, i) = got[0].nack().expect("a Nack");
    assert_eq!(reason, NackReason::NoRoute);
    assert_eq!(i.wire(), Some(&sent));
    assert_eq!(net.node(a).counters().n_pit_entries, 0);
}

#[test]
fn same_nonce_from_another_face_is_a_loop_answered_with_duplicate_nack() {
    let (mut net, a) = single();
    let c1 = net.add_consumer(a);
    let c2 = net.add_consumer(a);
    let (_silent, sf) = net.add_app(a, None);
    net.node_mut(a).fib_add_nexthop(&name("/p"), sf, 0).unwrap();
    net.send(c1, interest("/p/x", 77));
    net.send(c2, interest("/p/x", 77));
    net.run_for(ms(1));
    assert!(net.inbox(c1).is_empty());
    assert_eq!(
        net.inbox(c2)[0].nack().map(|n| n.0),
        Some(NackReason::Duplicate)
    );
    // After the entry expires the nonce sits in the Dead Nonce List.
    net.run_for(Duration::from_secs(5));
    net.send(c2, interest("/p/x", 77));
    net.run_for(ms(1));
    assert_eq!(net.inbox(c2).len(), 2);
    assert_eq!(
        net.inbox(c2)[1].nack().map(|n| n.0),
        Some(NackReason::Duplicate)
    );
    assert_eq!(
        net.node(a).counters().drops.get(DropReason::DuplicateNonce),
        2
    );
}

#[test]
fn routing_loop_through_three_engines_is_detected_by_nonce() {
    let mut net = Network::new(3);
    let nodes: Vec<_> = (0..3)
        .map(|_| net.add_node(EngineConfig::default()))
        .collect();
    let link = LinkParams::default();
    let (ab, _) = net.connect(nodes[0], nodes[1], link);
    let (bc, _) = net.connect(nodes[1], nodes[2], link);
    let (ca, _) = net.connect(nodes[2], nodes[0], link);
    net.node_mut(nodes[0])
        .fib_add_nexthop(&name("/loop"), ab, 1)
        .unwrap();
    net.node_mut(nodes[1])
        .fib_add_nexthop(&name("/loop"), bc, 1)
        .unwrap();
    net.node_mut(nodes[2])
        .fib_add_nexthop(&name("/loop"), ca, 1)
        .unwrap();
    let cons = net.add_consumer(nodes[0]);
    net.send(cons, interest("/loop/x", 4242));
    net.run_for(ms(50));
    assert_eq!(
        net.node(nodes[0])
            .counters()
            .drops
            .get(DropReason::DuplicateNonce),
        1
    );
    let got = net.inbox(cons);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].nack().map(|n| n.0), Some(NackReason::Duplicate));
    for n in &nodes {
        assert_eq!(net.node(*n).counters().n_pit_entries, 0);
    }
}

#[test]
fn unanswered_interest_expires_after_its_lifetime() {
    let (mut net, a) = single();
    let c = net.add_consumer(a);
    let (_silent, sf) = net.add_app(a, None);
    net.node_mut(a).fib_add_nexthop(&name("/p"), sf, 0).unwrap();
    let opts = InterestOpts {
        lifetime: Some(ms(100)),
        ..Default::default()
    };
    net.send(c, interest_with(&name("/p/x"), 1, &opts));
    net.run_for(ms(99));
    assert_eq!(net.node(a).counters().n_pit_entries, 1);
    net.run_for(ms(2));
    let cnt = net.node(a).counters();
    assert_eq!(cnt.n_pit_entries, 0);
    assert_eq!(cnt.n_unsatisfied_interests, 1);
    assert!(net.inbox(c).is_empty());
    // Default lifetime is 4 s.
    net.send(c, interest("/p/y", 2));
    net.run_for(ms(3999));
    assert_eq!(net.node(a).counters().n_pit_entries, 1);
    net.run_for(ms(2));
    assert_eq!(net.node(a).counters().n_pit_entries, 0);
}

#[test]
fn best_route_retransmission_goes_to_the_unused_next_hop_after_suppression() {
    let (mut net, a) = single();
    let c = net.add_consumer(a);
    let (s1, f1) = net.add_app(a, None);
    let (s2, f2) = net.add_app(a, None);
    net.node_mut(a)
        .fib_add_nexthop(&name("/p"), f1, 10)
        .unwrap();
    net.node_mut(a)
        .fib_add_nexthop(&name("/p"), f2, 20)
        .unwrap();
    net.send(c, interest("/p/x", 1));
    net.run_for(ms(5));
    assert_eq!((net.inbox(s1).len(), net.inbox(s2).len()), (1, 0));
    // Retransmission inside the 10 ms suppression interval: suppressed.
    net.send(c, interest("/p/x", 2));
    net.run_for(ms(45));
    assert_eq!((net.inbox(s1).len(), net.inbox(s2).len()), (1, 0));
    // Later retransmission: the next, unused next hop.
    net.send(c, interest("/p/x", 3));
    net.run_for(ms(250));
    assert_eq!((net.inbox(s1).len(), net.inbox(s2).len()), (1, 1));
    assert_eq!(net.inbox(s2)[0].interest().unwrap().nonce, Some(3));
    // All used: the one used longest ago.
    net.send(c, interest("/p/x", 4));
    net.run_for(ms(1));
    assert_eq!((net.inbox(s1).len(), net.inbox(s2).len()), (2, 1));
}

#[test]
fn multicast_strategy_sends_to_every_next_hop() {
    let (mut net, a) = single();
    let c = net.add_consumer(a);
    let (s1, f1) = net.add_app(a, None);
    let (s2, f2) = net.add_app(a, None);
    let fwd = net.node_mut(a);
    fwd.fib_add_nexthop(&name("/p"), f1, 10).unwrap();
    fwd.fib_add_nexthop(&name("/p"), f2, 20).unwrap();
    fwd.set_strategy(&name("/p"), &StrategyName::multicast())
        .unwrap();
    assert_eq!(
        fwd.effective_strategy(&name("/p/x")).map(|s| s.to_string()),
        Some("/localhost/nfd/strategy/multicast/v=4".to_owned())
    );
    net.send(c, interest("/p/x", 1));
    net.run_for(ms(1));
    assert_eq!((net.inbox(s1).len(), net.inbox(s2).len()), (1, 1));
    // Other prefixes keep best-route.
    net.node_mut(a)
        .fib_add_nexthop(&name("/q"), f1, 10)
        .unwrap();
    net.node_mut(a)
        .fib_add_nexthop(&name("/q"), f2, 20)
        .unwrap();
    net.send(c, interest("/q/x", 2));
    net.run_for(ms(1));
    assert_eq!((net.inbox(s1).len(), net.inbox(s2).len()), (2, 1));
}

#[test]
fn pit_token_is_stripped_upstream_and_restored_on_data_and_nack() {
    let (mut net, a) = single();
    let c = net.add_consumer(a);
    let p = net.add_producer(a, "/p", 4, None);
    let token = Bytes::from_static(&[1, 2, 3, 4, 5, 6]);
    let frame = LpPacket {
        pit_token: Some(token.clone()),
        ..LpPacket::from_fragment(interest("/p/x", 1))
    }
    .encode();
    net.send(c, frame);
    let frame2 = LpPacket {
        pit_token: Some(Bytes::from_static(&[9])),
        ..LpPacket::from_fragment(interest("/unrouted", 2))
    }
    .encode();
    net.send(c, frame2);
    net.run_for(ms(1));
    assert_eq!(net.inbox(p)[0].lp.pit_token, None);
    let got = net.inbox(c);
    assert_eq!(got.len(), 2);
    let nack = got.iter().find(|r| r.nack().is_some()).unwrap();
    assert_eq!(nack.lp.pit_token, Some(Bytes::from_static(&[9])));
    let data = got.iter().find(|r| r.data().is_some()).unwrap();
    assert_eq!(data.lp.pit_token, Some(token));
}

#[test]
fn hop_limit_is_decremented_and_zero_is_not_forwarded_to_peers() {
    let mut net = Network::new(4);
    let a = net.add_node(EngineConfig::default());
    let b = net.add_node(EngineConfig::default());
    let (ab, _) = net.connect(a, b, LinkParams::default());
    net.node_mut(a).fib_add_nexthop(&name("/p"), ab, 1).unwrap();
    let c = net.add_consumer(a);
    let p = net.add_producer(b, "/p", 4, None);
    let hop = |h| InterestOpts {
        hop_limit: Some(h),
        ..Default::default()
    };
    net.send(c, interest_with(&name("/p/two"), 1, &hop(2)));
    net.run_for(ms(10));
    assert_eq!(net.inbox(p)[0].interest().unwrap().hop_limit, Some(0));
    assert!(net.inbox(c)[0].data().is_some());
    net.send(c, interest_with(&name("/p/one"), 2, &hop(1)));
    net.run_for(ms(10));
    assert_eq!(
        net.inbox(p).len(),
        1,
        "HopLimit 0 must not leave towards a peer"
    );
    assert_eq!(
        net.inbox(c)[1].nack().map(|n| n.0),
        Some(NackReason::NoRoute)
    );
    net.send(c, interest_with(&name("/p/zero"), 3, &hop(0)));
    net.run_for(ms(10));
    assert_eq!(net.node(a).counters().drops.get(DropReason::HopLimit), 1);
    assert_eq!(net.inbox(c).len(), 2);
}

#[test]
fn nack_from_the_only_upstream_is_returned_downstream() {
    let mut net = Network::new(5);
    let a = net.add_node(EngineConfig::default());
    let b = net.add_node(EngineConfig::default());
    let (ab, _) = net.connect(a, b, LinkParams::default());
    net.node_mut(a).fib_add_nexthop(&name("/p"), ab, 1).unwrap();
    let c = net.add_consumer(a);
    net.send(c, interest("/p/x", 11));
    net.run_for(ms(10));
    let (reason, i) = net.inbox(c)[0].nack().expect("Nack");
    assert_eq!(reason, NackReason::NoRoute);
    assert_eq!(i.nonce, Some(11));
    assert_eq!(net.node(a).counters().n_in_nacks, 1);
    assert_eq!(net.node(a).counters().n_pit_entries, 0);
}

#[test]
fn same_seed_gives_identical_runs() {
    let run = || {
        let mut net = Network::new(42);
        let a = net.add_node(EngineConfig::default());
        let b = net.add_node(EngineConfig::default());
        let link = LinkParams {
            loss: 0.2,
            ..LinkParams::default()
        };
        let (ab, _) = net.connect(a, b, link);
        net.node_mut(a).fib_add_nexthop(&name("/p"), ab, 1).unwrap();
        let c = net.add_consumer(a);
        net.add_producer(b, "/p", 10, None);
        for i in 0..50u32 {
            net.send(c, interest(&format!("/p/{i}"), i));
        }
        net.run_for(Duration::from_secs(5));
        net.inbox(c).iter().map(|r| r.at).collect::<Vec<_>>()
    };
    let r1 = run();
    assert!(!r1.is_empty() && r1.len() < 50);
    assert_eq!(r1, run());
}

#[test]
fn unsolicited_data_is_dropped_and_counted() {
    let (mut net, a) = single();
    let p = net.add_consumer(a);
    net.send(p, icn_sim::net::data("/p/x", b"x", None));
    net.run_for(ms(1));
    let c = net.node(a).counters();
    assert_eq!(c.drops.get(DropReason::UnsolicitedData), 1);
    assert_eq!(c.n_cs_entries, 0);
    let _ = FaceId::INTERNAL;
}

#[test]
fn next_hop_face_id_is_honoured_from_local_faces_only_and_local_fields_report_incoming_face() {
    use icn_forwarder::engine::FaceParams;
    let mut net = Network::new(6);
    let a = net.add_node(EngineConfig::default());
    let b = net.add_node(EngineConfig::default());
    let (_, ba) = net.connect(a, b, LinkParams::default());
    let c = net.add_consumer(a);
    let (s1, f1) = net.add_app(a, None);
    let params = FaceParams {
        local_fields: true,
        ..FaceParams::local("app://fields")
    };
    let (s2, f2) = net.add_app_with(a, params, None);
    net.node_mut(a).fib_add_nexthop(&name("/p"), f1, 1).unwrap();
    let frame = LpPacket {
        next_hop_face_id: Some(f2.0),
        ..LpPacket::from_fragment(interest("/p/x", 1))
    }
    .encode();
    net.send(c, frame.clone());
    net.run_for(ms(1));
    assert!(net.inbox(s1).is_empty(), "NextHopFaceId overrides the FIB");
    assert_eq!(net.inbox(s2).len(), 1);
    assert_eq!(
        net.inbox(s2)[0].lp.incoming_face_id,
        Some(net.app_face(c).0)
    );
    // From a peer the field is refused.
    let now = net.now();
    net.node_mut(b).handle_packet(now, ba, frame);
    assert_eq!(
        net.node(b).counters().drops.get(DropReason::NextHopFaceId),
        1
    );
}

/// HopLimit is decremented on the way upstream whether or not the
/// Interest came with a Nonce (a Nonce is added when missing), every
/// other field left as it was; HopLimit 0 is not forwarded.
#[test]
fn hop_limit_is_decremented_with_and_without_a_nonce() {
    let (mut net, a) = single();
    let c = net.add_consumer(a);
    let p = net.add_producer(a, "/p", 100, None);
    let opts = |hop| InterestOpts {
        lifetime: Some(ms(1500)),
        hop_limit: Some(hop),
        ..InterestOpts::default()
    };
    net.send(c, interest_with(&name("/p/nonce"), 7, &opts(5)));
    let mut no_nonce = icn_tlv::Interest::new(name("/p/none"));
    no_nonce.hop_limit = Some(3);
    no_nonce.lifetime = Some(ms(1500));
    net.send(c, no_nonce.encode());
    net.send(c, interest_with(&name("/p/zero"), 9, &opts(0)));
    net.run_for(ms(10));
    type Seen = (String, Option<u32>, Option<u8>, Option<Duration>);
    let got: Vec<Seen> = net
        .inbox(p)
        .iter()
        .filter_map(|r| r.interest())
        .map(|i| (i.name.to_string(), i.nonce, i.hop_limit, i.lifetime))
        .collect();
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(
        got[0],
        ("/p/nonce".into(), Some(7), Some(4), Some(ms(1500)))
    );
    assert_eq!(got[1].0, "/p/none");
    assert!(got[1].1.is_some(), "a Nonce is added");
    assert_eq!((got[1].2, got[1].3), (Some(2), Some(ms(1500))));
    assert_eq!(net.inbox(c).len(), 2, "Data for the two forwarded");
}
