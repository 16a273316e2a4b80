//! Content Store behaviour seen through the engine.

use bytes::Bytes;
use cc_core::Duration;
use icn_forwarder::engine::EngineConfig;
use icn_sim::net::{
    data, data_fresh, interest, interest_with, reply_frame, InterestOpts, Network, Responder,
};
use icn_tlv::{Component, Data, LpPacket, Name};

fn name(s: &str) -> Name {
    s.parse().expect("valid name")
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn fresh() -> InterestOpts {
    InterestOpts {
        must_be_fresh: true,
        ..Default::default()
    }
}

#[test]
fn cached_data_answers_until_freshness_runs_out_for_must_be_fresh() {
    let mut net = Network::new(1);
    let a = net.add_node(EngineConfig::default());
    let c = net.add_consumer(a);
    let p = net.add_producer(a, "/p", 10, Some(ms(50)));
    net.send(c, interest("/p/x", 1));
    net.run_for(ms(20));
    assert_eq!(net.inbox(p).len(), 1);
    net.send(c, interest_with(&name("/p/x"), 2, &fresh()));
    net.run_for(ms(20));
    assert_eq!(net.inbox(p).len(), 1, "fresh CS hit");
    assert_eq!(net.inbox(c).len(), 2);
    net.run_for(ms(20));
    net.send(c, interest("/p/x", 3));
    net.run_for(ms(1));
    assert_eq!(
        net.inbox(p).len(),
        1,
        "stale Data still answers without MustBeFresh"
    );
    net.send(c, interest_with(&name("/p/x"), 4, &fresh()));
    net.run_for(ms(1));
    assert_eq!(
        net.inbox(p).len(),
        2,
        "stale Data must not answer MustBeFresh"
    );
    assert_eq!(net.inbox(c).len(), 4);
    let cnt = net.node(a).counters();
    assert_eq!(cnt.n_cs_hits, 2);
    assert_eq!(cnt.n_satisfied_interests, 4);
}

#[test]
fn data_without_freshness_period_never_answers_must_be_fresh() {
    let mut net = Network::new(1);
    let a = net.add_node(EngineConfig::default());
    let c = net.add_consumer(a);
    let p = net.add_producer(a, "/p", 10, None);
    net.send(c, interest("/p/x", 1));
    net.run_for(ms(1));
    net.send(c, interest_with(&name("/p/x"), 2, &fresh()));
    net.run_for(ms(1));
    assert_eq!(net.inbox(p).len(), 2);
}

#[test]
fn can_be_prefix_interest_is_answered_by_a_longer_cached_name() {
    let mut net = Network::new(1);
    let a = net.add_node(EngineConfig::default());
    let c = net.add_consumer(a);
    // The producer answers /p/x[/...] with /p/x/v=1.
    let responder: Responder = Box::new(|_, i, lp| {
        let n = i.name.prefix(2).append(Component::version(1));
        Some(reply_frame(
            lp,
            data_fresh(&n, Bytes::from_static(b"v1"), Some(ms(1000))),
        ))
    });
    let (p, pf) = net.add_app(a, Some(responder));
    net.node_mut(a).fib_add_nexthop(&name("/p"), pf, 0).unwrap();
    let cbp = InterestOpts {
        can_be_prefix: true,
        ..Default::default()
    };
    net.send(c, interest_with(&name("/p/x"), 1, &cbp));
    net.run_for(ms(1));
    assert_eq!(net.inbox(c)[0].data().unwrap().name, name("/p/x/v=1"));
    net.send(c, interest_with(&name("/p/x"), 2, &cbp));
    net.run_for(ms(1));
    assert_eq!(net.inbox(p).len(), 1, "CanBePrefix CS hit");
    assert_eq!(net.inbox(c)[1].data().unwrap().name, name("/p/x/v=1"));
    // Without CanBePrefix the shorter name does not match.
    net.send(c, interest("/p/x", 3));
    net.run_for(ms(1));
    assert_eq!(net.inbox(p).len(), 2);
    // Nor does a sibling whose first component merely starts with the same bytes.
    net.send(c, interest_with(&name("/p/xy"), 4, &cbp));
    net.run_for(ms(1));
    assert_eq!(net.inbox(p).len(), 3);
}

#[test]
fn implicit_digest_names_match_in_pit_and_cs() {
    let mut net = Network::new(1);
    let a = net.add_node(EngineConfig::default());
    let c = net.add_consumer(a);
    let wire = data("/p/d", b"digest me", Some(ms(10_000)));
    let full = Data::decode(wire.clone()).unwrap().full_name();
    let reply = wire.clone();
    let responder: Responder = Box::new(move |_, _, lp| Some(reply_frame(lp, reply.clone())));
    let (p, pf) = net.add_app(a, Some(responder));
    net.node_mut(a).fib_add_nexthop(&name("/p"), pf, 0).unwrap();
    net.send(c, interest_with(&full, 1, &InterestOpts::default()));
    net.run_for(ms(1));
    assert_eq!(net.inbox(c).len(), 1, "PIT matched by full name");
    assert_eq!(net.inbox(p).len(), 1);
    net.send(c, interest_with(&full, 2, &InterestOpts::default()));
    net.run_for(ms(1));
    assert_eq!(net.inbox(p).len(), 1, "CS hit by full name");
    assert_eq!(net.inbox(c).len(), 2);
    // A wrong digest misses the CS.
    let wrong = name("/p/d").append(Component::implicit_digest([0; 32]));
    net.send(c, interest_with(&wrong, 3, &InterestOpts::default()));
    net.run_for(ms(1));
    assert_eq!(net.inbox(p).len(), 2);
}

#[test]
fn no_cache_policy_keeps_data_out_of_the_cs() {
    let mut net = Network::new(1);
    let a = net.add_node(EngineConfig::default());
    let c = net.add_consumer(a);
    let responder: Responder = Box::new(|_, i, _| {
        let d = data_fresh(&i.name, Bytes::from_static(b"x"), Some(ms(1000)));
        Some(
            LpPacket {
                cache_policy_no_cache: true,
                ..LpPacket::from_fragment(d)
            }
            .encode(),
        )
    });
    let (p, pf) = net.add_app(a, Some(responder));
    net.node_mut(a).fib_add_nexthop(&name("/p"), pf, 0).unwrap();
    net.send(c, interest("/p/x", 1));
    net.run_for(ms(1));
    net.send(c, interest("/p/x", 2));
    net.run_for(ms(1));
    assert_eq!(net.inbox(c).len(), 2);
    assert_eq!(net.inbox(p).len(), 2);
    assert_eq!(net.node(a).counters().n_cs_entries, 0);
}

#[test]
fn congestion_mark_on_data_reaches_the_consumer() {
    let mut net = Network::new(1);
    let a = net.add_node(EngineConfig::default());
    let c = net.add_consumer(a);
    let responder: Responder = Box::new(|_, i, _| {
        let d = data_fresh(&i.name, Bytes::from_static(b"x"), None);
        Some(
            LpPacket {
                congestion_mark: Some(1),
                ..LpPacket::from_fragment(d)
            }
            .encode(),
        )
    });
    let (_p, pf) = net.add_app(a, Some(responder));
    net.node_mut(a).fib_add_nexthop(&name("/p"), pf, 0).unwrap();
    net.send(c, interest("/p/x", 1));
    net.run_for(ms(1));
    assert_eq!(net.inbox(c)[0].lp.congestion_mark, Some(1));
}
