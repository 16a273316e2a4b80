//! Property tests: FIB longest-prefix match against a naive reference, and
//! random packet sequences that must never panic nor overgrow any table.

use std::collections::HashMap;

use bytes::Bytes;
use cc_core::{Duration, Timestamp};
use icn_forwarder::engine::fib::Fib;
use icn_forwarder::engine::hash::SeededState;
use icn_forwarder::engine::name_table::ComponentEnds;
use icn_forwarder::engine::{EngineConfig, FaceId, FaceParams, Forwarder, QueueLimits};
use icn_sim::net::{data_fresh, interest_with, InterestOpts};
use icn_tlv::{Component, LpPacket, NackReason, Name};
use proptest::prelude::*;

const ALPHABET: [&str; 3] = ["a", "b", "ab"];

fn encode(parts: &[usize]) -> Bytes {
    let mut v = Vec::new();
    for p in parts {
        let s = ALPHABET[*p].as_bytes();
        v.push(8);
        v.push(s.len() as u8);
        v.extend_from_slice(s);
    }
    Bytes::from(v)
}

fn comps() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0usize..3, 0..5)
}

proptest! {
    #[test]
    fn fib_lpm_matches_naive_reference(
        routes in prop::collection::vec((comps(), 256u64..260, 0u64..5), 0..20),
        removals in prop::collection::vec((comps(), 256u64..260), 0..5),
        queries in prop::collection::vec(comps(), 1..20),
    ) {
        let mut fib = Fib::new(1000, 8, SeededState::new(9));
        let mut naive: HashMap<Vec<usize>, Vec<(u64, u64)>> = HashMap::new();
        for (p, face, cost) in &routes {
            fib.add_nexthop(&encode(p), FaceId(*face), *cost).unwrap();
            let e = naive.entry(p.clone()).or_default();
            e.retain(|(f, _)| f != face);
            e.push((*face, *cost));
        }
        for (p, face) in &removals {
            fib.remove_nexthop(&encode(p), FaceId(*face));
            if let Some(e) = naive.get_mut(p) {
                e.retain(|(f, _)| f != face);
                if e.is_empty() {
                    naive.remove(p);
                }
            }
        }
        for q in &queries {
            let qv = encode(q);
            let ends = ComponentEnds::parse(&qv).unwrap();
            let got: Option<Vec<(u64, u64)>> = fib.lpm(&ends, &qv).map(|e| {
                let mut v: Vec<_> = e.nexthops().iter().map(|n| (n.face.0, n.cost)).collect();
                v.sort();
                v
            });
            let want = (0..=q.len()).rev().find_map(|d| naive.get(&q[..d])).map(|v| {
                let mut v = v.clone();
                v.sort();
                v
            });
            prop_assert_eq!(got, want);
        }
    }
}

#[derive(Debug, Clone)]
enum Op {
    Interest {
        face: usize,
        name: usize,
        nonce: u32,
        cbp: bool,
        mbf: bool,
        life_ms: u64,
        token: bool,
    },
    Data {
        face: usize,
        name: usize,
        fresh_ms: Option<u64>,
    },
    Nack {
        face: usize,
        name: usize,
        nonce: u32,
    },
    Garbage {
        face: usize,
        bytes: Vec<u8>,
    },
    Advance {
        ms: u64,
    },
    Drain,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0usize..4, 0usize..12, 0u32..6, any::<bool>(), any::<bool>(), 1u64..300, any::<bool>())
            .prop_map(|(face, name, nonce, cbp, mbf, life_ms, token)| Op::Interest { face, name, nonce, cbp, mbf, life_ms, token }),
        3 => (0usize..4, 0usize..12, prop::option::of(0u64..200)).prop_map(|(face, name, fresh_ms)| Op::Data { face, name, fresh_ms }),
        1 => (0usize..4, 0usize..12, 0u32..6).prop_map(|(face, name, nonce)| Op::Nack { face, name, nonce }),
        1 => (0usize..4, prop::collection::vec(any::<u8>(), 0..40)).prop_map(|(face, bytes)| Op::Garbage { face, bytes }),
        2 => (0u64..200).prop_map(|ms| Op::Advance { ms }),
        2 => Just(Op::Drain),
    ]
}

fn names() -> Vec<Name> {
    let mut v = Vec::new();
    for p in ["/a", "/b", "/localhost/x", "/localhop/nfd/q"] {
        let base: Name = p.parse().unwrap();
        v.push(base.clone());
        v.push(base.append(Component::segment(1)));
        v.push(base.append(Component::generic(Bytes::from_static(b"z"))));
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn random_packet_sequences_never_panic_and_tables_stay_bounded(ops in prop::collection::vec(op(), 1..120)) {
        let cfg = EngineConfig {
            pit_max_entries: 6,
            pit_max_in_records: 2,
            pit_max_out_records: 2,
            cs_max_packets: 4,
            cs_max_bytes: 600,
            dead_nonce_max: 5,
            queue: QueueLimits { max_packets: 3, max_bytes: 400 },
            max_pending_events: 3,
            ..EngineConfig::default()
        };
        let mut fwd = Forwarder::new(cfg, 7);
        let mut now = Timestamp::ZERO;
        let faces = [
            fwd.add_face(now, FaceParams::local("app://0")),
            fwd.add_face(now, FaceParams::non_local("udp://1").with_mtu(120)),
            fwd.add_face(now, FaceParams::non_local("udp://2").with_capacity_bps(100_000)),
            fwd.add_face(now, FaceParams::local("app://3")),
        ];
        let n = names();
        fwd.fib_add_nexthop(&n[0], faces[1], 1).unwrap();
        fwd.fib_add_nexthop(&n[0], faces[2], 2).unwrap();
        fwd.fib_add_nexthop(&n[3], faces[2], 1).unwrap();
        fwd.fib_add_nexthop(&n[6], faces[3], 1).unwrap();
        for op in ops {
            match op {
                Op::Interest { face, name, nonce, cbp, mbf, life_ms, token } => {
                    let o = InterestOpts { can_be_prefix: cbp, must_be_fresh: mbf, lifetime: Some(Duration::from_millis(life_ms)), hop_limit: None };
                    let wire = interest_with(&n[name], nonce, &o);
                    let frame = if token {
                        LpPacket { pit_token: Some(Bytes::from_static(&[1, 2])), ..LpPacket::from_fragment(wire) }.encode()
                    } else {
                        wire
                    };
                    fwd.handle_packet(now, faces[face], frame);
                }
                Op::Data { face, name, fresh_ms } => {
                    let d = data_fresh(&n[name], Bytes::from_static(&[0; 64]), fresh_ms.map(Duration::from_millis));
                    fwd.handle_packet(now, faces[face], d);
                }
                Op::Nack { face, name, nonce } => {
                    let wire = interest_with(&n[name], nonce, &InterestOpts::default());
                    fwd.handle_packet(now, faces[face], LpPacket::nack(NackReason::NoRoute, wire).encode());
                }
                Op::Garbage { face, bytes } => fwd.handle_packet(now, faces[face], Bytes::from(bytes)),
                Op::Advance { ms } => {
                    now += Duration::from_millis(ms);
                    if fwd.poll_timeout().is_some_and(|t| t <= now) {
                        fwd.handle_timeout(now);
                    }
                }
                Op::Drain => {
                    while let Some(tx) = fwd.poll_transmit(now) {
                        prop_assert!(tx.bytes.len() <= 120 || tx.face != faces[1]);
                    }
                    while fwd.poll_event().is_some() {}
                }
            }
            if let Err(e) = fwd.check_invariants() {
                prop_assert!(false, "{}", e);
            }
        }
        // Everything drains and every entry eventually expires.
        now += Duration::from_secs(600);
        fwd.handle_timeout(now);
        while fwd.poll_transmit(now).is_some() {}
        prop_assert_eq!(fwd.counters().n_pit_entries, 0);
    }
}
