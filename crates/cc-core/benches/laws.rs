//! Per-packet and per-period costs of the rate-based laws in cc-core.
//!
//! * `mircc/stamp`: what a forwarder does per Data on a MIRCC link: fold
//!   the Data into the inflation/RTT estimates, stamp min(Rp, Rs), fold the
//!   hop into the path id.
//! * `mircc/interest`: per Interest: count it, shape it, release it.
//! * `mircc/update` and `rcp/update`: one rate period of a link.
//! * `ccc/split`: Algorithms 1-2 on a 3-next-hop flow (new objective and
//!   new incoming pace), and `ccc/choose`: the per-Interest next-hop pick.
//! * `consumer/{enum,dyn}/<law>`: one Data (every 50th marked) plus one
//!   `limit()` through `AnyConsumerLaw` (static dispatch) and through a
//!   `Box<dyn ConsumerLaw>` (the same law behind a vtable).

use cc_core::ccc::{CccConfig, CccFlow};
use cc_core::mircc::{path, MirccConfig, MirccRate, TrafficClass};
use cc_core::rate_link::{RateLink, RateLinkConfig};
use cc_core::rcp::{LinkRateLaw, RcpConfig, RcpLink};
use cc_core::{
    AnyConsumerLaw, ConsumerLaw, ConsumerLawConfig, DataFeedback, Duration, LawKind, Timestamp,
};
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use rand::{rngs::SmallRng, SeedableRng};

fn mircc(c: &mut Criterion) {
    let mut link: RateLink<u64> = RateLink::new(LawKind::Mircc, &RateLinkConfig::default(), 1e9);
    link.handle_timeout(Timestamp::ZERO);
    let mut n = 0u64;
    c.bench_function("mircc/stamp", |b| {
        b.iter(|| {
            n += 1;
            let now = Timestamp::from_nanos(n * 1000);
            link.on_data(now, 1100, Some(Duration::from_micros(20_000 + n % 977)));
            let r = link.stamp(black_box(Some(5e8)), black_box(Some(1e8)));
            let pid = path::fold_path_id(black_box(n), 7, 3);
            black_box((r, pid))
        })
    });
    let mut link: RateLink<u64> = RateLink::new(LawKind::Mircc, &RateLinkConfig::default(), 1e9);
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

fn feedback(n: u64) -> DataFeedback {
    DataFeedback {
        rtt: Some(Duration::from_micros(20_000 + n % 977)),
        congestion_mark: u64::from(n % 50 == 0),
        data_size_bytes: 8_000,
        primary_rate_bps: Some(5e7),
        target_rate_bps: Some(5e7),
        pace_constraint_ips: Some(800.0),
        ..DataFeedback::default()
    }
}

fn consumer(c: &mut Criterion) {
    let cfg = ConsumerLawConfig::default();
    for kind in [LawKind::Cubic, LawKind::Rcp] {
        let mut law = AnyConsumerLaw::new(kind, &cfg);
        let mut n = 0u64;
        c.bench_function(&format!("consumer/enum/{kind}"), |b| {
            b.iter(|| {
                n += 1;
                law.on_data(Timestamp::from_nanos(n * 10_000), &feedback(n));
                black_box(law.limit())
            })
        });
        let mut law: Box<dyn ConsumerLaw> = match AnyConsumerLaw::new(kind, &cfg) {
            AnyConsumerLaw::Cubic(l) => Box::new(l),
            AnyConsumerLaw::Rcp(l) => Box::new(l),
            other => panic!("bench covers cubic and rcp, got {:?}", other.kind()),
        };
        let mut n = 0u64;
        c.bench_function(&format!("consumer/dyn/{kind}"), |b| {
            b.iter(|| {
                n += 1;
                let law = black_box(&mut law);
                law.on_data(Timestamp::from_nanos(n * 10_000), &feedback(n));
                black_box(law.limit())
            })
        });
    }
}

criterion_group!(benches, mircc, rcp, ccc, consumer);
criterion_main!(benches);
