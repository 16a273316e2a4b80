//! A driver for instruction-count profiling of one engine exchange, with the
//! setup of `benches/engine.rs` (10 000 FIB prefixes, 100 000 pending PIT
//! entries, unique names, a full CS evicting LRU).
//!
//! ```sh
//! cargo build --release -p icn-forwarder --example engine_profile
//! valgrind --tool=callgrind --toggle-collect='*measured*' \
//!     target/release/examples/engine_profile 100000 20000
//! ```
//!
//! The first argument is the warm-up (exchanges before the measured ones;
//! 70 000 or more fills the CS, so inserts evict), the second the number
//! measured. Instructions per exchange = the collected total / measured.

use std::hint::black_box;

use bytes::Bytes;
use cc_core::{Duration, Timestamp};
use icn_forwarder::engine::{EngineConfig, FaceId, FaceParams, Forwarder};
use icn_tlv::{Component, Data, Interest, Name};

const FIB_PREFIXES: usize = 10_000;
const PIT_PENDING: usize = 100_000;

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

fn exchange_pair(k: usize) -> (Bytes, Bytes) {
    let n = prefix(k % FIB_PREFIXES)
        .append(Component::generic(Bytes::from_static(b"obj")))
        .append(Component::segment(k as u64));
    let i = interest_wire(&n, 0x8000_0000 | k as u32, Duration::from_secs(4));
    let mut d = Data::new(n, Bytes::from(vec![0xab; 100]));
    d.meta.freshness_period = Some(Duration::from_secs(10));
    (i, d.encode_signed_digest_sha256())
}

#[inline(never)]
fn exchange(fwd: &mut Forwarder, t: Timestamp, faces: (FaceId, FaceId), i: Bytes, d: Bytes) {
    fwd.handle_packet(t, faces.0, i);
    black_box(fwd.poll_transmit(t));
    fwd.handle_packet(t, faces.1, d);
    black_box(fwd.poll_transmit(t));
}

#[inline(never)]
fn measured(fwd: &mut Forwarder, t: Timestamp, faces: (FaceId, FaceId), pairs: &[(Bytes, Bytes)]) {
    for (i, d) in pairs {
        exchange(fwd, t, faces, i.clone(), d.clone());
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let warm: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let cfg = EngineConfig {
        pit_max_entries: PIT_PENDING + 10_000,
        fib_max_entries: FIB_PREFIXES + 10,
        max_interest_lifetime: Duration::from_secs(7200),
        ..EngineConfig::default()
    };
    let mut fwd = Forwarder::new(cfg, 1);
    let t0 = Timestamp::from_secs_f64(1.0);
    let consumer = fwd.add_face(t0, FaceParams::local("unix:///bench/consumer"));
    let producer = fwd.add_face(t0, FaceParams::non_local("udp4://192.0.2.1:6363"));
    for i in 0..FIB_PREFIXES {
        fwd.fib_add_nexthop(&prefix(i), producer, 10)
            .expect("FIB sized for the driver");
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
    let faces = (consumer, producer);
    for k in 0..warm {
        let (i, d) = exchange_pair(k);
        exchange(&mut fwd, t0, faces, i, d);
    }
    let pairs: Vec<(Bytes, Bytes)> = (warm..warm + n).map(exchange_pair).collect();
    measured(&mut fwd, t0, faces, &pairs);
    assert_eq!(fwd.counters().n_pit_entries as usize, PIT_PENDING);
    println!(
        "{} exchanges measured after {} warm-up; CS {} entries",
        n,
        warm,
        fwd.counters().n_cs_entries
    );
}
