//! Per-packet cost of the QSCCP scheduler tree against a plain FIFO, and of
//! CoDel / WinCM marking and WinCM next-hop selection.
//!
//! Tree: every iteration dequeues one Interest and enqueues a new one for the
//! same flow, so `n` flows over all eight classes stay backlogged. Time
//! advances 1 µs per packet of 8000 expected Data bits (8 Gb/s offered on a
//! 10 Gb/s face): the DS token buckets (δ = 0.2/0.2/0.3 of η·C) bind, so the
//! strict-priority, WFQ and WDRR levels all run. Target: within 10× of the
//! FIFO, and flat (within 2×) from 100 to 100 000 flows.

use cc_core::codel::CodelMarker;
use cc_core::qsccp::{CdsScheduler, Dequeue, QsccpConfig, ServiceClass};
use cc_core::wincm::{MultiMarkCodel, UiwTable};
use cc_core::{Duration, Timestamp};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::collections::VecDeque;
use std::hint::black_box;

const FLOW_COUNTS: [usize; 4] = [1, 100, 10_000, 100_000];
const SIZE_BITS: u32 = 8_000;

fn tree(n: usize) -> (CdsScheduler<u64>, Timestamp) {
    let cfg = QsccpConfig {
        capacity_bps: 10_000_000_000,
        max_flows: (n as u32).max(1) * 2,
        dt_class_capacity: (n as u32).max(1) * 2,
        ..QsccpConfig::default()
    };
    let mut s = CdsScheduler::new(cfg, Timestamp::ZERO, 0x5eed);
    for i in 0..n as u64 {
        let class = ServiceClass::ALL[(i % 8) as usize];
        s.enqueue(Timestamp::ZERO, class, i, Some(SIZE_BITS), i)
            .expect("prefill fits");
    }
    (s, Timestamp::ZERO)
}

fn bench_scheduler(c: &mut Criterion) {
    let mut g = c.benchmark_group("scheduler");
    g.throughput(Throughput::Elements(1));
    for &n in &FLOW_COUNTS {
        g.bench_with_input(BenchmarkId::new("fifo_vecdeque", n), &n, |b, &n| {
            let mut q: VecDeque<u64> = (0..n as u64).collect();
            b.iter(|| {
                let x = q.pop_front().unwrap_or(0);
                q.push_back(black_box(x));
            });
        });
        g.bench_with_input(BenchmarkId::new("qsccp_tree", n), &n, |b, &n| {
            let (mut s, mut now) = tree(n);
            let step = Duration::from_micros(1);
            b.iter(|| {
                now += step;
                match s.dequeue(now) {
                    Dequeue::Item(x) => {
                        let _ = s.enqueue(now, x.class, x.prefix, Some(x.size_bits), x.item);
                        black_box(x.sojourn);
                    }
                    other => {
                        black_box(other);
                    }
                }
            });
        });
    }
    g.finish();
}

fn bench_marking(c: &mut Criterion) {
    let mut g = c.benchmark_group("marking");
    g.throughput(Throughput::Elements(1));
    g.bench_function("codel_on_dequeue", |b| {
        let mut m = CodelMarker::default();
        let mut t = 0u64;
        b.iter(|| {
            t += 10_000;
            // Sojourn oscillates around the 5 ms target so both states occur.
            let soj = Duration::from_micros(2_000 + (t / 1_000) % 8_000);
            black_box(m.on_dequeue(Timestamp::from_nanos(t), soj, 100_000))
        });
    });
    g.bench_function("wincm_multimark_on_dequeue", |b| {
        let mut m = MultiMarkCodel::default();
        let mut t = 0u64;
        b.iter(|| {
            t += 10_000;
            let soj = Duration::from_micros(2_000 + (t / 1_000) % 8_000);
            black_box(m.on_dequeue(Timestamp::from_nanos(t), soj))
        });
    });
    g.bench_function("wincm_forweight_choose_4_faces", |b| {
        let mut table = UiwTable::new(Default::default(), 1);
        let mut rng = SmallRng::seed_from_u64(7);
        let mut t = 0u64;
        b.iter(|| {
            t += 1_000;
            let now = Timestamp::from_nanos(t);
            let prefix = t % 64;
            if let Some(face) = table.choose(now, prefix, &[1, 2, 3, 4], Some(9), &mut rng) {
                table.on_data(now, prefix, face, t % 97_000 == 0);
            }
        });
    });
    g.finish();
}

criterion_group!(benches, bench_scheduler, bench_marking);
criterion_main!(benches);
