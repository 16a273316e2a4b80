//! Per-packet and per-period costs of the rate-based laws in cc-core.
//!
//! * `mircc/stamp`: what a forwarder does per Data on a MIRCC link: fold
//!   the Data into the inflation/RTT estimates, stamp min(Rp, Rs), fold the
//!   hop into the path id.
//! * `mircc/interest`: per Interest: count it, shape it, release it.
//! * `mircc/update` and `rcp/update`: one rate period of a link.
//! * `ccc/split`: Algorithms 1-2 on a 3-next-hop flow (new objective and
//!   new incoming pace), and `ccc/choose`: the per-Interest next-hop pick.

use cc_core::ccc::{CccConfig, CccFlow};
use cc_core::mircc::{path, MirccConfig, MirccLink, MirccRate, ShaperConfig, TrafficClass};
use cc_core::rcp::{LinkRateLaw, RcpConfig, RcpLink};
use cc_core::{Duration, Timestamp};
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use rand::{rngs::SmallRng, SeedableRng};

fn mircc(c: &mut Criterion) {
    let mut link: MirccLink<u64> =
        MirccLink::new(MirccConfig::default(), ShaperConfig::default(), 1e9);
    link.handle_timeout(Timestamp::ZERO);
    let mut n = 0u64;
    c.bench_function("mircc/stamp", |b| {
        b.iter(|| {
            n += 1;
            let now = Timestamp::from_nanos(n * 1000);
            link.on_data(now, 1100, Some(Duration::from_micros(20_000 + n % 977)));
            let (rp, rs) = link.stamp(black_box(Some(5e8)), black_box(Some(1e8)));
            let pid = path::fold_path_id(black_box(n), 7, 3);
            black_box((rp, rs, pid))
        })
    });
    let mut link: MirccLink<u64> =
        MirccLink::new(MirccConfig::default(), ShaperConfig::default(), 1e9);
    let mut n = 0u64;
    c.bench_function("mircc/interest", |b| {
        b.iter(|| {
            n += 1;
            let now = Timestamp::from_nanos(n * 10_000);
            let v = link.on_interest(now, n, TrafficClass::Primary, 60);
            let out = link.dequeue(now);
            black_box((v, out))
        })
    });
    let mut rate = MirccRate::new(MirccConfig::default(), 1e9);
    let mut t = 0u64;
    c.bench_function("mircc/update", |b| {
        b.iter(|| {
            t += 100;
            rate.update_dual(
                Timestamp::from_millis(t),
                black_box(10_000_000 + t % 1000),
                black_box(1_000_000),
                black_box(5_000),
                Duration::from_millis(50),
            )
        })
    });
}

fn rcp(c: &mut Criterion) {
    let mut link = RcpLink::new(RcpConfig::default(), 1e9);
    let mut t = 0u64;
    c.bench_function("rcp/update", |b| {
        b.iter(|| {
            t += 10;
            link.update(
                Timestamp::from_millis(t),
                black_box(1_200_000 + t % 1000),
                black_box(5_000),
                Duration::from_millis(50),
            )
        })
    });
}

fn ccc(c: &mut Criterion) {
    let mut flow = CccFlow::new(CccConfig::default());
    for (k, cap) in [(1u64, 400.0), (2, 300.0), (3, 200.0)] {
        flow.add_next_hop(k, cap).unwrap();
    }
    let mut n = 0u64;
    c.bench_function("ccc/split", |b| {
        b.iter(|| {
            n += 1;
            let now = Timestamp::from_nanos(n);
            flow.on_objective(now, black_box(600.0 + (n % 7) as f64));
            flow.set_incoming_pace(black_box(500.0 + (n % 11) as f64));
            black_box(flow.constraint_out_ips())
        })
    });
    let mut rng = SmallRng::seed_from_u64(1);
    c.bench_function("ccc/choose", |b| {
        b.iter(|| black_box(flow.choose_next_hop(&mut rng)))
    });
}

criterion_group!(benches, mircc, rcp, ccc);
criterion_main!(benches);
