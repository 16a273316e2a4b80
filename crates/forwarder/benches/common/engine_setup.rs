//! The engine bench's setup, shared by `benches/engine.rs` and the
//! callgrind driver `examples/engine_profile.rs`: a FIB of 10 000 prefixes,
//! a PIT holding 100 000 pending Interests that never get Data, and unique
//! exchanges (a CS miss each, then a CS insert with LRU eviction once the
//! store is full).

use bytes::Bytes;
use cc_core::{Duration, Timestamp};
use icn_forwarder::engine::{EngineConfig, FaceId, FaceParams, Forwarder};
use icn_tlv::{Component, Data, Interest, Name};

pub const FIB_PREFIXES: usize = 10_000;
pub const PIT_PENDING: usize = 100_000;

fn prefix(i: usize) -> Name {
    Name::root()
        .append(Component::generic(Bytes::from_static(b"bench")))
        .append(Component::generic(Bytes::from(format!("prefix{i}"))))
}

fn interest_wire(name: &Name, nonce: u32, lifetime: Duration) -> Bytes {
    let mut i = Interest::new(name.clone());
    i.nonce = Some(nonce);
    i.lifetime = Some(lifetime);
    i.encode()
}

/// The wires of exchange `k`: an Interest for a name no other exchange
/// uses and its Data (100-byte content, 10 s freshness).
pub fn exchange_pair(k: usize) -> (Bytes, Bytes) {
    let n = prefix(k % FIB_PREFIXES)
        .append(Component::generic(Bytes::from_static(b"obj")))
        .append(Component::segment(k as u64));
    let i = interest_wire(&n, 0x8000_0000 | k as u32, Duration::from_secs(4));
    let mut d = Data::new(n, Bytes::from(vec![0xab; 100]));
    d.meta.freshness_period = Some(Duration::from_secs(10));
    (i, d.encode_signed_digest_sha256())
}

/// A forwarder with the FIB and the pending PIT filled, at `t0`, and its
/// (consumer, producer) faces.
pub fn loaded_forwarder(t0: Timestamp) -> (Forwarder, FaceId, FaceId) {
    let cfg = EngineConfig {
        pit_max_entries: PIT_PENDING + 10_000,
        fib_max_entries: FIB_PREFIXES + 10,
        max_interest_lifetime: Duration::from_secs(7200),
        ..EngineConfig::default()
    };
    let mut fwd = Forwarder::new(cfg, 1);
    let consumer = fwd.add_face(t0, FaceParams::local("unix:///bench/consumer"));
    let producer = fwd.add_face(t0, FaceParams::non_local("udp4://192.0.2.1:6363"));
    for i in 0..FIB_PREFIXES {
        fwd.fib_add_nexthop(&prefix(i), producer, 10)
            .expect("FIB sized for the setup");
    }
    for i in 0..PIT_PENDING {
        let n = prefix(i % FIB_PREFIXES)
            .append(Component::generic(Bytes::from_static(b"pending")))
            .append(Component::sequence_num(i as u64));
        fwd.handle_packet(
            t0,
            consumer,
            interest_wire(&n, i as u32, Duration::from_secs(3600)),
        );
        while fwd.poll_transmit(t0).is_some() {}
    }
    assert_eq!(fwd.counters().n_pit_entries as usize, PIT_PENDING);
    (fwd, consumer, producer)
}
