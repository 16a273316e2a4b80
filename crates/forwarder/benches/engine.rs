//! Engine throughput: ns per Interest+Data exchange through
//! `handle_packet`/`poll_transmit`, with a FIB of 10 000 prefixes and a PIT
//! holding 100 000 pending entries (issue 4's performance setup).
//!
//! Names are unique per exchange (a CS miss each time, then a CS insert with
//! LRU eviction once the store is full), so the number covers PIT insert and
//! delete, FIB LPM, strategy, CS insert and both egress encodings.

use bytes::Bytes;
use cc_core::Timestamp;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

#[path = "common/engine_setup.rs"]
mod engine_setup;
use engine_setup::{exchange_pair, loaded_forwarder, PIT_PENDING};

const WORKING_SET: usize = 200_000;

fn bench_exchange(c: &mut Criterion) {
    let t0 = Timestamp::from_secs_f64(1.0);
    let (mut fwd, consumer, producer) = loaded_forwarder(t0);
    let exchanges: Vec<(Bytes, Bytes)> = (0..WORKING_SET).map(exchange_pair).collect();

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
