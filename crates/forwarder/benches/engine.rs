//! Engine throughput: ns per Interest+Data exchange through
//! `handle_packet`/`poll_transmit`, with a FIB of 10 000 prefixes and a PIT
//! holding 100 000 pending entries (issue 4's performance setup).
//!
//! Names are unique per exchange (a CS miss each time, then a CS insert with
//! LRU eviction once the store is full), so the number covers PIT insert and
//! delete, FIB LPM, strategy, CS insert and both egress encodings.

use bytes::Bytes;
use cc_core::{Duration, Timestamp};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use icn_forwarder::engine::{EngineConfig, FaceParams, Forwarder};
use icn_tlv::{Component, Data, Interest, Name};

const FIB_PREFIXES: usize = 10_000;
const PIT_PENDING: usize = 100_000;
const WORKING_SET: usize = 200_000;

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

fn bench_exchange(c: &mut Criterion) {
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
            .expect("FIB sized for the bench");
    }
    // 100 000 pending Interests that never get Data.
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

    let exchanges: Vec<(Bytes, Bytes)> = (0..WORKING_SET)
        .map(|k| {
            let n = prefix(k % FIB_PREFIXES)
                .append(Component::generic(Bytes::from_static(b"obj")))
                .append(Component::segment(k as u64));
            let i = interest_wire(&n, 0x8000_0000 | k as u32, Duration::from_secs(4));
            let mut d = Data::new(n, Bytes::from(vec![0xab; 100]));
            d.meta.freshness_period = Some(Duration::from_secs(10));
            (i, d.encode_signed_digest_sha256())
        })
        .collect();

    let mut g = c.benchmark_group("engine");
    g.throughput(Throughput::Elements(1));
    let mut k = 0usize;
    g.bench_function("interest_data_exchange_fib10k_pit100k", |b| {
        b.iter(|| {
            let (i, d) = &exchanges[k % WORKING_SET];
            k += 1;
            fwd.handle_packet(t0, consumer, i.clone());
            let up = fwd.poll_transmit(t0).expect("Interest forwarded");
            debug_assert_eq!(up.face, producer);
            fwd.handle_packet(t0, producer, d.clone());
            let down = fwd.poll_transmit(t0).expect("Data returned");
            debug_assert_eq!(down.face, consumer);
            down
        })
    });
    g.finish();
    assert_eq!(fwd.counters().n_pit_entries as usize, PIT_PENDING);
}

criterion_group!(benches, bench_exchange);
criterion_main!(benches);
