use super::*;
use crate::time::Duration;
use alloc::string::String;
use alloc::vec;
use proptest::prelude::*;

fn sched<T>(cfg: QsccpConfig) -> CdsScheduler<T> {
    CdsScheduler::new(cfg, Timestamp::ZERO, 42)
}

/// Drives the scheduler from `start` to `end`, calling `refill` before each
/// dequeue; returns the Data bits sent per class.
fn run(
    s: &mut CdsScheduler<u32>,
    start: Timestamp,
    end: Timestamp,
    mut refill: impl FnMut(&mut CdsScheduler<u32>, Timestamp),
) -> [u64; 8] {
    let before = s.stats().sent_bits;
    let mut now = start;
    while now < end {
        refill(s, now);
        match s.dequeue(now) {
            Dequeue::Item(_) => {}
            Dequeue::NotBefore(t) => now = t.max(now + Duration::from_nanos(1)),
            Dequeue::Empty => now += Duration::from_millis(1),
        }
    }
    let after = s.stats().sent_bits;
    core::array::from_fn(|c| after[c] - before[c])
}

/// Keeps every listed flow's queue non-empty.
fn keep_backlogged(
    flows: &[(ServiceClass, u64)],
) -> impl FnMut(&mut CdsScheduler<u32>, Timestamp) + '_ {
    move |s, now| {
        for &(c, p) in flows {
            while s.flow_queue_len(c, p).is_none_or(|n| n < 2) {
                if s.enqueue(now, c, p, Some(8_000), 0).is_err() {
                    break;
                }
            }
        }
    }
}

#[test]
fn strict_priority_serves_cs7_then_cs6_then_ef_then_dt() {
    let mut s: CdsScheduler<&str> = sched(QsccpConfig::default());
    let t = Timestamp::ZERO;
    s.enqueue(t, ServiceClass::Be, 1, None, "be").unwrap();
    s.enqueue(t, ServiceClass::Ef, 1, None, "ef").unwrap();
    s.enqueue(t, ServiceClass::Cs6, 1, None, "cs6").unwrap();
    s.enqueue(t, ServiceClass::Cs7, 1, None, "cs7").unwrap();
    let order: alloc::vec::Vec<&str> = (0..4)
        .map(|_| match s.dequeue(t) {
            Dequeue::Item(i) => i.item,
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(order, ["cs7", "cs6", "ef", "be"]);
    assert_eq!(s.dequeue(t), Dequeue::Empty);
}

#[test]
fn throughput_split_three_two_one_with_ef_capped() {
    // 10 Mb/s link, η = 0.99, EF limited to δ = 0.1; AF2:AF1:BE = 3:2:1.
    let cfg = QsccpConfig {
        delta: [0.2, 0.2, 0.1],
        ..QsccpConfig::default()
    };
    let mut s = sched(cfg);
    let flows = [
        (ServiceClass::Ef, 1),
        (ServiceClass::Ef, 2),
        (ServiceClass::Af2, 3),
        (ServiceClass::Af1, 4),
        (ServiceClass::Be, 5),
        (ServiceClass::Be, 6),
    ];
    let secs = 20.0;
    let sent = run(
        &mut s,
        Timestamp::ZERO,
        Timestamp::from_secs_f64(secs),
        keep_backlogged(&flows),
    );
    let rate = |c: ServiceClass| sent[c.index()] as f64 / secs;
    let within = |got: f64, want: f64| (got - want).abs() / want < 0.02;
    // EF: 0.1·9.9 M (+ its 160 kbit burst spread over 20 s).
    assert!(
        within(rate(ServiceClass::Ef), 990_000.0),
        "EF {}",
        rate(ServiceClass::Ef)
    );
    // DT share 8.91 M split 3:2:1.
    assert!(
        within(rate(ServiceClass::Af2), 4_455_000.0),
        "AF2 {}",
        rate(ServiceClass::Af2)
    );
    assert!(
        within(rate(ServiceClass::Af1), 2_970_000.0),
        "AF1 {}",
        rate(ServiceClass::Af1)
    );
    assert!(
        within(rate(ServiceClass::Be), 1_485_000.0),
        "BE {}",
        rate(ServiceClass::Be)
    );
    let total: u64 = sent.iter().sum();
    assert!(total as f64 / secs <= 9_900_000.0 + 160_000.0 / secs);
}

#[test]
fn rejections_are_typed_and_counted() {
    let cfg = QsccpConfig {
        flow_queue_capacity: 2,
        dt_class_capacity: 3,
        max_flows: 2,
        ..QsccpConfig::default()
    };
    let mut s: CdsScheduler<String> = sched(cfg);
    let t = Timestamp::ZERO;
    let put = |s: &mut CdsScheduler<String>, c, p| s.enqueue(t, c, p, None, String::from("i"));
    assert!(put(&mut s, ServiceClass::Be, 1).is_ok());
    assert!(put(&mut s, ServiceClass::Be, 1).is_ok());
    assert_eq!(
        put(&mut s, ServiceClass::Be, 1).unwrap_err().reason,
        RejectReason::FlowQueueFull
    );
    assert!(put(&mut s, ServiceClass::Be, 2).is_ok());
    assert_eq!(
        put(&mut s, ServiceClass::Be, 2).unwrap_err().reason,
        RejectReason::ClassFull
    );
    assert_eq!(
        put(&mut s, ServiceClass::Af1, 3).unwrap_err().reason,
        RejectReason::FlowTableFull
    );
    let st = s.stats();
    assert_eq!(
        (
            st.flow_queue_full,
            st.class_full,
            st.flow_table_full,
            st.enqueued
        ),
        (1, 1, 1, 3)
    );
}

#[test]
fn final_bucket_paces_at_eta_capacity() {
    let mut s: CdsScheduler<u8> = sched(QsccpConfig {
        final_burst_bits: 9_000,
        max_data_size_bits: 9_000,
        ..QsccpConfig::default()
    });
    let t = Timestamp::ZERO;
    s.enqueue(t, ServiceClass::Be, 1, Some(9_000), 1).unwrap();
    s.enqueue(t, ServiceClass::Be, 1, Some(9_000), 2).unwrap();
    assert!(matches!(s.dequeue(t), Dequeue::Item(_)));
    // 9000 bits at 9.9 Mb/s = 909.09 µs → 909 091 ns.
    assert_eq!(
        s.dequeue(t),
        Dequeue::NotBefore(Timestamp::from_nanos(909_091))
    );
    assert!(matches!(
        s.dequeue(Timestamp::from_nanos(909_091)),
        Dequeue::Item(_)
    ));
}

#[test]
fn each_flow_keeps_fifo_order_and_slots_are_reused() {
    let mut s: CdsScheduler<(u64, u32)> = sched(QsccpConfig {
        capacity_bps: u64::MAX / 4,
        ..QsccpConfig::default()
    });
    let t = Timestamp::ZERO;
    // Three flows of one class, interleaved, sizes varying per packet.
    for k in 0..6u32 {
        for p in 0..3u64 {
            let size = 1_000 + 500 * k + p as u32;
            s.enqueue(t, ServiceClass::Af1, p, Some(size), (p, k))
                .unwrap();
        }
    }
    assert_eq!(s.packet_capacity(), 18);
    let mut next = [0u32; 3];
    for _ in 0..18 {
        let Dequeue::Item(x) = s.dequeue(t) else {
            panic!("backlogged")
        };
        let (p, k) = x.item;
        assert_eq!(p, x.prefix);
        assert_eq!(k, next[p as usize], "flow {p} out of order");
        assert_eq!(x.size_bits, 1_000 + 500 * k + p as u32);
        next[p as usize] += 1;
    }
    assert_eq!(s.dequeue(t), Dequeue::Empty);
    // Refilling reuses the freed slots instead of growing the slab.
    for p in 0..18u64 {
        s.enqueue(t, ServiceClass::Be, p, None, (p, 0)).unwrap();
    }
    assert_eq!(s.packet_capacity(), 18);
}

/// Rings long enough for the DRR prefetch (256 flows and more, which the
/// trace workloads never reach): plain round robin in arrival order, for a
/// delay-sensitive and a delay-tolerant class. With 9000-bit packets and a
/// 16 000-bit quantum a flow sends one packet per turn, so two packets per
/// flow leave as flows 0..n, then 0..n again, EF before BE.
#[test]
fn long_rings_serve_round_robin_in_arrival_order() {
    const N: u64 = 600;
    let mut s: CdsScheduler<(u64, u64)> = sched(QsccpConfig {
        capacity_bps: u64::MAX / 4,
        dt_class_capacity: 10_000,
        ..QsccpConfig::default()
    });
    let mut now = Timestamp::ZERO;
    for class in [ServiceClass::Be, ServiceClass::Ef] {
        for p in 0..N {
            for k in 0..2 {
                s.enqueue(now, class, p, Some(9_000), (p, k)).unwrap();
            }
        }
    }
    let mut want = vec![];
    for class in [ServiceClass::Ef, ServiceClass::Be] {
        for k in 0..2 {
            want.extend((0..N).map(|p| (class, p, k)));
        }
    }
    let mut got = vec![];
    loop {
        // Time moves, so the (huge-rate) buckets refill between packets.
        now += Duration::from_micros(1);
        match s.dequeue(now) {
            Dequeue::Item(x) => {
                assert_eq!(x.item.0, x.prefix);
                got.push((x.class, x.item.0, x.item.1));
            }
            Dequeue::Empty => break,
            Dequeue::NotBefore(t) => panic!("rate-limited at {t:?}"),
        }
    }
    assert_eq!(got, want);
}

#[test]
fn expired_flows_leave_the_index_and_their_slots_are_reused() {
    let mut s: CdsScheduler<u64> = sched(QsccpConfig {
        capacity_bps: u64::MAX / 4,
        dt_class_capacity: 10_000,
        ..QsccpConfig::default()
    });
    let mut t = Timestamp::ZERO;
    for p in 0..2_000u64 {
        let class = ServiceClass::ALL[(p % 8) as usize];
        s.enqueue(t, class, p, Some(1_000), p).unwrap();
    }
    loop {
        match s.dequeue(t) {
            Dequeue::Item(_) => {}
            Dequeue::NotBefore(n) => t = n,
            Dequeue::Empty => break,
        }
    }
    assert!(t < Timestamp::from_millis(1));
    // Period 1 clears the offered counters, period 2 forgets idle flows,
    // except the odd ones, which offered again in between.
    t += Duration::from_millis(100);
    s.update_rates(t);
    for p in (1..2_000u64).step_by(2) {
        let class = ServiceClass::ALL[(p % 8) as usize];
        s.enqueue(t, class, p, Some(1_000), p).unwrap();
    }
    t += Duration::from_millis(100);
    s.update_rates(t);
    assert_eq!(s.flow_count(), 1_000);
    for p in 0..2_000u64 {
        let class = ServiceClass::ALL[(p % 8) as usize];
        assert_eq!(s.flow_queue_len(class, p).is_some(), p % 2 == 1, "flow {p}");
        assert_eq!(s.flow_queue_len(ServiceClass::Cs7, p + 10_000), None);
    }
    // New flows take the freed slots (the table does not grow); every
    // flow is still found.
    let slots = s.flows.len();
    for p in 5_000..6_000u64 {
        s.enqueue(t, ServiceClass::Af2, p, Some(1_000), p).unwrap();
    }
    assert_eq!(s.flow_count(), 2_000);
    assert_eq!(s.flows.len(), slots);
    for p in 5_000..6_000u64 {
        assert_eq!(s.flow_queue_len(ServiceClass::Af2, p), Some(1));
    }
}

/// Sends up to `max` items of `s`, checking every flow's FIFO order
/// against `next` (the sequence number each flow sends next); returns the
/// items sent.
fn send_in_order(
    s: &mut CdsScheduler<(u64, u32)>,
    t: &mut Timestamp,
    next: &mut std::collections::HashMap<u64, u32>,
    max: usize,
) -> usize {
    let mut sent = 0;
    while sent < max {
        let x = match s.dequeue(*t) {
            Dequeue::Item(x) => x,
            Dequeue::NotBefore(n) => {
                *t = n;
                continue;
            }
            Dequeue::Empty => break,
        };
        let (p, k) = x.item;
        assert_eq!(p, x.prefix);
        let want = next.entry(p).or_insert(0);
        assert_eq!(k, *want, "flow {p} out of order");
        *want += 1;
        sent += 1;
    }
    sent
}

#[test]
fn flow_table_rebuilds_keep_backlogged_flows_and_their_turns() {
    let mut s: CdsScheduler<(u64, u32)> = sched(QsccpConfig {
        capacity_bps: u64::MAX / 4,
        dt_class_capacity: 100_000,
        ..QsccpConfig::default()
    });
    let mut t = Timestamp::ZERO;
    let mut next = Default::default();
    // Growth: the table doubles many times while every flow is queued and
    // some classes hold a cached DRR peek and a flow in its turn.
    for p in 0..8u64 {
        let class = ServiceClass::ALL[p as usize];
        s.enqueue(t, class, p, Some(1_000), (p, 0)).unwrap();
    }
    assert_eq!(send_in_order(&mut s, &mut t, &mut next, 3), 3);
    for k in 0..2u32 {
        for p in (8 * (1 - u64::from(k)))..3_000u64 {
            let class = ServiceClass::ALL[(p % 8) as usize];
            s.enqueue(t, class, p, Some(1_000), (p, k)).unwrap();
        }
    }
    assert_eq!(s.flow_count(), 3_000);
    // Drain, then let the idle flows expire.
    assert_eq!(send_in_order(&mut s, &mut t, &mut next, usize::MAX), 5_997);
    for p in 0..100u64 {
        s.enqueue(
            t,
            ServiceClass::Be,
            p + 1_000_000,
            Some(1_000),
            (p + 1_000_000, 0),
        )
        .unwrap();
    }
    t += Duration::from_millis(100);
    s.update_rates(t);
    t += Duration::from_millis(100);
    s.update_rates(t);
    assert_eq!(s.flow_count(), 100);
    // Churn: new flows fill the tombstones (and a same-size rebuild runs
    // under the 100 still-queued flows if they run out).
    let slots = s.flows.len();
    for p in 0..3_000u64 {
        s.enqueue(
            t,
            ServiceClass::Af3,
            p + 2_000_000,
            Some(1_000),
            (p + 2_000_000, 0),
        )
        .unwrap();
    }
    assert_eq!(s.flows.len(), slots, "tombstones reused, no growth");
    assert_eq!(s.flow_count(), 3_100);
    for p in 0..100u64 {
        assert_eq!(s.flow_queue_len(ServiceClass::Be, p + 1_000_000), Some(1));
    }
    let mut next = Default::default();
    assert_eq!(send_in_order(&mut s, &mut t, &mut next, usize::MAX), 3_100);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// WDRR: over a backlogged run, sent_i/Q_i of any two flows differ by at
    /// most one round plus one packet (the classic DRR bound).
    #[test]
    fn wdrr_shares_converge_to_weights(
        weights in proptest::collection::vec(1u32..5, 2..8),
        sizes in proptest::collection::vec(1_000u32..16_000, 8),
        steps in 200usize..2_000,
    ) {
        let mut s: CdsScheduler<u32> = sched(QsccpConfig { capacity_bps: u64::MAX / 4, ..QsccpConfig::default() });
        let t = Timestamp::ZERO;
        let n = weights.len();
        for i in 0..n {
            for k in 0..4 {
                s.enqueue(t, ServiceClass::Af3, i as u64, Some(sizes[(i + k) % 8]), 0).unwrap();
            }
            prop_assert!(s.set_flow_weight(ServiceClass::Af3, i as u64, f64::from(weights[i])));
        }
        let mut sent = vec![0u64; n];
        let mut now = t;
        for step in 0..steps {
            now += Duration::from_millis(1);
            let Dequeue::Item(x) = s.dequeue(now) else { panic!("backlogged scheduler returned nothing") };
            let i = x.prefix as usize;
            sent[i] += u64::from(x.size_bits);
            s.enqueue(now, ServiceClass::Af3, x.prefix, Some(sizes[(i + step) % 8]), 0).unwrap();
        }
        let q = |i: usize| 16_000.0 * f64::from(weights[i]);
        let min_q = (0..n).map(q).fold(f64::INFINITY, f64::min);
        let bound = 1.0 + 16_000.0 / min_q;
        for i in 0..n {
            for j in 0..n {
                let d = sent[i] as f64 / q(i) - sent[j] as f64 / q(j);
                prop_assert!(d.abs() <= bound + 1e-9, "flows {} {}: {} > {}", i, j, d, bound);
            }
        }
    }

    /// Whatever the delay-sensitive load, a backlogged delay-tolerant class is
    /// served at no less than half its WFQ share of what DS leaves (≥ 30 %).
    #[test]
    fn backlogged_dt_class_is_never_starved(
        ds_flows in proptest::collection::vec((0u8..3, 0u64..20), 1..20),
        dt_class in 3u8..8,
        other_dt in proptest::collection::vec((3u8..8, 0u64..20), 0..20),
    ) {
        let mut s = sched(QsccpConfig::default());
        let mut flows: alloc::vec::Vec<(ServiceClass, u64)> = ds_flows
            .iter()
            .chain(other_dt.iter())
            .map(|&(c, p)| (ServiceClass::ALL[c as usize], p))
            .collect();
        let victim = (ServiceClass::ALL[dt_class as usize], 999);
        flows.push(victim);
        let secs = 2.0;
        let sent = run(&mut s, Timestamp::ZERO, Timestamp::from_secs_f64(secs), keep_backlogged(&flows));
        let omega = QsccpConfig::default().omega;
        let share = omega[dt_class as usize - 3] / omega.iter().sum::<f64>();
        let floor = 0.5 * share * 0.3 * 9_900_000.0 * secs;
        prop_assert!(sent[dt_class as usize] as f64 >= floor, "class {} got {} < {}", dt_class, sent[dt_class as usize], floor);
    }

    /// Random operations never panic and keep the bookkeeping consistent.
    #[test]
    fn random_operations_keep_counts_consistent(
        ops in proptest::collection::vec((0u8..3, 0u8..8, 0u64..30, 1u32..20_000, 0u64..3_000_000), 1..500),
    ) {
        let mut s: CdsScheduler<u64> = sched(QsccpConfig { max_flows: 40, ..QsccpConfig::default() });
        let mut now = Timestamp::ZERO;
        let mut inside = 0i64;
        for (op, class, prefix, size, dt) in ops {
            now += Duration::from_nanos(dt);
            match op {
                0 | 1 => if s.enqueue(now, ServiceClass::ALL[class as usize], prefix, Some(size), prefix).is_ok() { inside += 1 },
                _ => if let Dequeue::Item(x) = s.dequeue(now) {
                    inside -= 1;
                    prop_assert_eq!(x.item, x.prefix);
                    if let Some(r) = x.target_rate_bps { prop_assert!(r.is_finite() && r >= 0.0); }
                },
            }
            prop_assert_eq!(s.len() as i64, inside);
            prop_assert!(s.flow_count() <= 40);
        }
    }
}
