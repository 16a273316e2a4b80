use super::*;
use proptest::prelude::*;
use rand::{rngs::StdRng, SeedableRng};

fn cfg() -> SrmccConfig {
    SrmccConfig::default()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn state_table_at_each_threshold() {
    let c = cfg();
    use CongestionState::*;
    let table = [
        (0.0, NoOccupancy),
        (1e-9, Light),
        (0.25, Light),
        (0.250_000_1, Moderate),
        (0.5, Moderate),
        (0.500_000_1, Heavy),
        (1.0, Heavy),
    ];
    for (o, s) in table {
        assert_eq!(congestion_state(o, &c), s, "O = {o}");
    }
}

#[test]
fn multipliers_match_the_hand_table() {
    // docs/algorithms.md §4.2: with R_fair far above, the multiplier on R(t).
    let c = cfg();
    let r = 100_000.0;
    let fair = 1e9;
    let m = |o: f64| rate_for_occupancy(o, r, fair, &c) / r;
    assert!(close(m(0.0), 2.0));
    assert!((m(1e-6) - 1.25).abs() < 1e-5); // state 1, O → 0⁺
    assert!(close(m(0.25), 1.0)); // w = 1/4, Oth − O = 0
    assert!(close(m(0.25 + 1e-12), 1.0625)); // state 2: 1 + (0.5 − O)²
    assert!(close(m(0.4), 1.0 + 0.1 * 0.1));
    assert!(close(m(0.5), 1.0));
    // Eq. 7 at O = 0.1: w = 1 − 0.75·0.16 = 0.88, factor 1 + 0.88·0.15.
    assert!(close(m(0.1), 1.0 + 0.88 * 0.15));
    // State 3: at/above fair share halve; below it double (capped).
    assert!(close(rate_for_occupancy(0.9, r, r, &c), 0.5 * r));
    assert!(close(rate_for_occupancy(0.9, r, 3.0 * r, &c), 2.0 * r));
    assert!(close(rate_for_occupancy(0.9, r, 1.5 * r, &c), 1.5 * r));
}

#[test]
fn algorithm1_worked_example() {
    // R = 1 Mbit/s, R_fair = 0.8 Mbit/s, Omax = 0.6, Omin = 0.1:
    // Rmin = min(R·(1 − 0.1), R/2, R_fair) = 0.5 M;
    // Rmax = min(R·(1 + 0.88·0.15), R_fair) = 0.8 M;
    // R(t+1) = 0.5 + 0.15·0.3 = 0.545 Mbit/s.
    let msg = MccMessage {
        max_occupancy: 0.6,
        min_occupancy: 0.1,
        min_fair_share_bps: 0.8e6,
    };
    assert!(close(adapt_rate(1e6, &msg, &cfg()), 0.545e6));
    assert!(close(select_rate(1.0, 3.0, 0.15), 1.3));
}

#[test]
fn state0_cap_is_configurable() {
    let literal = SrmccConfig {
        cap_state0_by_fair_share: false,
        ..cfg()
    };
    assert!(close(rate_for_occupancy(0.0, 1e6, 1.5e6, &literal), 2e6));
    assert!(close(rate_for_occupancy(0.0, 1e6, 1.5e6, &cfg()), 1.5e6));
}

#[test]
fn receiver_and_table_aggregation() {
    let mut rx = ReceiverFeedback::new(10e6, Duration::from_millis(400));
    let t0 = Timestamp::from_millis(5);
    let m = rx.poll(t0).unwrap();
    assert_eq!(
        m,
        MccMessage {
            max_occupancy: 0.0,
            min_occupancy: 1.0,
            min_fair_share_bps: 10e6
        }
    );
    assert!(rx.poll(Timestamp::from_millis(404)).is_none());
    assert!(rx.poll(Timestamp::from_millis(405)).is_some());

    let mut table: MccTable<u64> = MccTable::new(2);
    table.aggregate(7, &m).unwrap();
    let child = MccMessage {
        max_occupancy: 0.7,
        min_occupancy: 0.2,
        min_fair_share_bps: 3e6,
    };
    table.aggregate(7, &child).unwrap();
    table.aggregate(8, &m).unwrap();
    assert_eq!(table.aggregate(9, &m), Err(MccError::TableFull));
    let own = MccMessage::node_own(0.3, 5e6);
    let up = table.emit(&7, own);
    assert_eq!(up.max_occupancy, 0.7);
    assert_eq!(up.min_occupancy, 0.2);
    assert_eq!(up.min_fair_share_bps, 3e6);
    // Re-seeded: the next period starts from the node's own values.
    assert_eq!(table.emit(&7, own), own);
    assert_eq!(table.len(), 1);
}

#[test]
fn fair_share_counts_groups_and_sampled_flows() {
    let c = SrmccConfig {
        flow_sample_probability: 1.0,
        max_sampled_flows: 3,
        ..cfg()
    };
    let mut f = FairShareEstimator::new(&c, 12e6);
    assert_eq!(f.estimate_bps(), 12e6);
    f.set_group_count(2);
    let mut rng = StdRng::seed_from_u64(9);
    for k in [1, 2, 2, 3, 4, 5] {
        f.observe_packet(k, &mut rng);
    }
    assert_eq!(f.flow_count(), 5); // 2 groups + 3 flows (bounded)
    assert!(close(f.estimate_bps(), 12e6 / 5.0));
    f.reset_window();
    assert_eq!(f.flow_count(), 2);
    let mut avg = OccupancyAverage::new(0.9);
    assert!(close(avg.sample(25, 50), 0.45));
    assert!(close(avg.sample(0, 50), 0.045));
}

/// A closed loop: source → one MTN with a 50-packet queue on a 1 Mbit/s
/// link shared with `others` unicast flows it counts in N_i. Per cycle the
/// queue integrates (R − C_avail), the MTN averages its occupancy and
/// emits its own values merged with a receiver's, the source adapts.
fn closed_loop(others: usize, cycles: usize) -> (f64, f64, f64) {
    let c = cfg();
    let link_bps = 1e6;
    let avail_bps = link_bps / (others + 1) as f64; // the others take their share
    let qmax = 50u64;
    let pkt_bits = 8000.0;
    let cycle_s = 0.4;
    let mut src = SrmccSource::new(c);
    let mut occ = OccupancyAverage::new(c.occupancy_alpha);
    let mut est = FairShareEstimator::new(&c, link_bps);
    est.set_group_count(1 + others);
    let mut table: MccTable<u32> = MccTable::new(4);
    let mut q = 0.0f64;
    let mut max_q = 0.0f64;
    for k in 0..cycles {
        let now = Timestamp::from_secs_f64(k as f64 * cycle_s);
        q = (q + (src.rate_bps() - avail_bps) * cycle_s / pkt_bits).clamp(0.0, qmax as f64);
        max_q = max_q.max(q);
        let o = occ.sample(q as u64, qmax);
        table
            .aggregate(1, &MccMessage::receiver_initial(100e6))
            .unwrap();
        let msg = table.emit(&1, MccMessage::node_own(o, est.estimate_bps()));
        src.on_feedback(now, msg);
        src.poll(now);
        src.set_rtt(Duration::from_millis(100));
    }
    (src.rate_bps(), avail_bps, max_q)
}

#[test]
fn source_converges_to_the_fair_share_from_50_kbps() {
    for others in [0usize, 1, 3] {
        let (rate, fair, max_q) = closed_loop(others, 200);
        assert!(
            rate <= fair * 1.0001,
            "others={others}: {rate} above {fair}"
        );
        assert!(
            rate >= 0.8 * fair,
            "others={others}: {rate} far below {fair}"
        );
        assert!(max_q < 50.0, "queue overflowed");
    }
}

proptest! {
    #[test]
    fn rates_stay_finite_and_positive(
        steps in prop::collection::vec((0.0..1.0f64, 0.0..1.0f64, 0.0..1e8f64), 1..100)
    ) {
        let c = cfg();
        let mut r = c.initial_rate_bps;
        for (a, b, fair) in steps {
            let msg = MccMessage {
                max_occupancy: a.max(b),
                min_occupancy: a.min(b),
                min_fair_share_bps: fair,
            };
            r = adapt_rate(r, &msg, &c);
            prop_assert!(r.is_finite() && r >= c.min_rate_bps);
            prop_assert!(r <= fair.max(c.min_rate_bps) * (1.0 + 1e-12));
        }
    }
}
