use super::supervisor::activity_window;
use super::*;
use crate::law::{ConsumerLaw, DataFeedback, SendLimit};
use crate::time::{Duration, Timestamp};
use proptest::prelude::*;
use rand::{rngs::StdRng, SeedableRng};

fn ms(x: u64) -> Timestamp {
    Timestamp::from_millis(x)
}

fn three_way(constraints: [f64; 3]) -> CccFlow {
    let mut f = CccFlow::new(CccConfig::default());
    for (k, c) in constraints.into_iter().enumerate() {
        f.add_next_hop(k as u64 + 1, c).unwrap();
    }
    f
}

#[test]
fn objective_is_conserved_through_a_three_way_split() {
    // Eq. 8/11: 100 Interests/s over 3 next hops → 33.33… each, sum 100.
    let mut f = three_way([50.0, 50.0, 50.0]);
    f.on_objective(ms(0), 100.0);
    let objs: Vec<f64> = f.next_hops().iter().map(|h| h.objective_ips).collect();
    for o in &objs {
        assert!((o - 100.0 / 3.0).abs() < 1e-9);
    }
    assert_eq!(objs.iter().sum::<f64>(), 100.0);
    // Downstream of each hop, another 3-way split keeps the total.
    let mut total = 0.0;
    for o in objs {
        let mut g = three_way([10.0, 10.0, 10.0]);
        g.on_objective(ms(0), o);
        total += g.next_hops().iter().map(|h| h.objective_ips).sum::<f64>();
    }
    assert!((total - 100.0).abs() < 1e-9);
}

#[test]
fn load_balancing_fills_up_to_constraints_and_spreads_overflow() {
    let mut f = three_way([40.0, 30.0, 20.0]);
    f.set_incoming_pace(60.0);
    // Most spare first: hop 1 takes 40, hop 2 the remaining 20.
    let paces: Vec<f64> = f.next_hops().iter().map(|h| h.pace_ips).collect();
    assert_eq!(paces, [40.0, 20.0, 0.0]);
    // Hop 1 tightens to 10: overflow 30 goes to hops 3 (20 spare) then 2.
    f.on_constraint(ms(1), 1, 10.0);
    let paces: Vec<f64> = f.next_hops().iter().map(|h| h.pace_ips).collect();
    assert_eq!(paces.iter().sum::<f64>(), 60.0);
    for h in f.next_hops() {
        assert!(h.pace_ips <= h.constraint_ips);
    }
    // Everything tightens below the incoming pace: eq. 9 caps p_o_max.
    f.on_constraint(ms(2), 2, 5.0);
    f.on_constraint(ms(3), 3, 5.0);
    assert_eq!(f.aggregate_constraint_ips(), 20.0);
    assert!(f.constraint_out_ips() <= 20.0);
}

#[test]
fn congestion_cuts_to_ninety_percent_of_incoming_pace() {
    let mut f = three_way([1000.0, 0.0, 0.0]);
    f.on_objective(ms(0), 500.0);
    for i in 0..100 {
        f.on_interest(ms(i)); // 100 Interests in 100 ms = 1000/s
    }
    let mut sup = CccSupervisor::new(CccConfig::default(), 10e6);
    sup.supervise(ms(0), &mut [&mut f]); // starts the measurement period
    for i in 0..100 {
        f.on_interest(ms(i));
    }
    sup.on_drop();
    let out = sup.supervise(ms(100), &mut [&mut f]);
    assert_eq!(out, Supervision::Congested { flows: 1 });
    assert!((f.incoming_pace_ips() - 1000.0).abs() < 1e-9);
    assert!((f.constraint_out_ips() - 900.0).abs() < 1e-9);
}

#[test]
fn spare_bandwidth_is_shared_equally_and_recycled() {
    // C = 10 Mbit/s; two active flows of 1000-byte Data (8 kbit).
    let cfg = CccConfig::default();
    let mut a = CccFlow::new(cfg);
    let mut b = CccFlow::new(cfg);
    a.add_next_hop(1, 10_000.0).unwrap();
    b.add_next_hop(2, 10_000.0).unwrap();
    a.on_objective(ms(0), 100.0); // wants 0.8 Mbit/s
    b.on_objective(ms(0), 5_000.0); // wants 40 Mbit/s
    a.on_data(ms(1), 1000);
    b.on_data(ms(1), 1000);
    let mut sup = CccSupervisor::new(cfg, 10e6);
    // Pretend both were cut by an earlier congestion to 50 Interests/s.
    a.set_constraint_out(50.0);
    b.set_constraint_out(50.0);
    let out = sup.supervise(ms(50), &mut [&mut a, &mut b]);
    // Used 2 × 50 × 8 kbit = 0.8 Mbit/s; 9.2 Mbit/s available.
    match out {
        Supervision::Augmented {
            available_bps,
            flows,
        } => {
            assert!((available_bps - 9.2e6).abs() < 1e-3);
            assert_eq!(flows, 2);
        }
        Supervision::Congested { .. } => panic!("no drop happened"),
    }
    // a stops at its objective (100); b takes the rest: 50 + (9.2M − 0.4M)/8k.
    assert!((a.constraint_out_ips() - 100.0).abs() < 1e-6);
    assert!((b.constraint_out_ips() - (50.0 + 8.8e6 / 8000.0)).abs() < 1e-6);
}

#[test]
fn consumer_obeys_constraint_and_announces_objective() {
    let mut c = CccConsumer::new(CccConsumerConfig {
        target_rate_bps: 8e6,
        initial_data_size_bytes: 1000.0,
        ..CccConsumerConfig::default()
    });
    assert_eq!(c.objective_ips(), 1000.0);
    assert_eq!(c.pace_ips(), 1000.0);
    let fb = DataFeedback {
        pace_constraint_ips: Some(300.0),
        data_size_bytes: 1000,
        ..Default::default()
    };
    c.on_data(ms(1), &fb);
    assert_eq!(c.pace_ips(), 300.0);
    assert_eq!(producer_constraint_ips(8e6, 1000.0), 1000.0);
}

#[test]
fn next_hop_choice_follows_paces() {
    let mut f = three_way([30.0, 10.0, 0.0]);
    f.set_incoming_pace(40.0);
    let mut rng = StdRng::seed_from_u64(3);
    let mut hits = [0u32; 4];
    for _ in 0..8000 {
        hits[f.choose_next_hop(&mut rng).unwrap() as usize] += 1;
    }
    assert_eq!(hits[3], 0);
    assert!((f64::from(hits[1]) / 8000.0 - 0.75).abs() < 0.02);
}

#[test]
fn smooth_round_robin_spreads_exactly_by_pace() {
    let mut f = three_way([30.0, 10.0, 0.0]);
    f.set_incoming_pace(40.0);
    let picks: Vec<u64> = (0..8).map(|_| f.next_hop_smooth().unwrap()).collect();
    // 3 : 1, and never two picks of the light hop in a row.
    assert_eq!(picks.iter().filter(|&&h| h == 1).count(), 6);
    assert_eq!(picks.iter().filter(|&&h| h == 2).count(), 2);
    assert!(picks.windows(2).all(|w| !(w[0] == 2 && w[1] == 2)));
    assert!(!picks.contains(&3));
}

#[test]
fn consumer_starts_with_a_small_window_then_paces() {
    let mut c = CccConsumer::new(CccConsumerConfig {
        target_rate_bps: 8e9,
        initial_data_size_bytes: 1000.0,
        ..CccConsumerConfig::default()
    });
    // No constraint known: a window, not the (huge) objective.
    assert_eq!(c.limit(), SendLimit::Window { interests: 2.0 });
    let fb = DataFeedback {
        pace_constraint_ips: Some(0.0),
        data_size_bytes: 1000,
        ..Default::default()
    };
    c.on_data(ms(1), &fb);
    // A zero constraint does not silence the flow for good.
    assert_eq!(
        c.limit(),
        SendLimit::Rate {
            interests_per_sec: 1.0,
            max_outstanding: 10_000
        }
    );
    // A path without CCC (no constraint stamped) leaves it at its objective.
    let mut d = CccConsumer::new(CccConsumerConfig {
        target_rate_bps: 8e6,
        initial_data_size_bytes: 1000.0,
        ..CccConsumerConfig::default()
    });
    d.on_data(
        ms(1),
        &DataFeedback {
            data_size_bytes: 1000,
            ..Default::default()
        },
    );
    assert_eq!(d.pace_ips(), 1000.0);
}

#[test]
fn a_new_flow_gets_an_equal_share_not_the_whole_link() {
    // 10 Mbit/s, 1000-byte Data: the link is 1250 Interests/s.
    let cfg = CccConfig {
        initial_data_size_bytes: 1000.0,
        ..CccConfig::default()
    };
    let sup = CccSupervisor::new(cfg, 10e6);
    let mut f = CccFlow::new(cfg);
    f.add_next_hop(1, 5000.0).unwrap();
    assert_eq!(f.constraint_out_ips(), 5000.0);
    sup.admit(&mut f, 3);
    assert!((f.constraint_out_ips() - 1250.0 / 4.0).abs() < 1e-9);
    assert!(f.is_supervised());
    // Eq. 9 still caps it.
    let mut g = CccFlow::new(cfg);
    g.add_next_hop(1, 100.0).unwrap();
    sup.admit(&mut g, 0);
    assert_eq!(g.constraint_out_ips(), 100.0);
}

#[test]
fn a_cut_never_falls_below_half_the_fair_share() {
    // Two flows on 10 Mbit/s of 1000-byte Data: max-min share 625/s each.
    let cfg = CccConfig {
        initial_data_size_bytes: 1000.0,
        ..CccConfig::default()
    };
    let mut sup = CccSupervisor::new(cfg, 10e6);
    let mut a = CccFlow::new(cfg);
    let mut b = CccFlow::new(cfg);
    for f in [&mut a, &mut b] {
        f.add_next_hop(1, 1e6).unwrap();
        f.on_objective(ms(0), 1e5);
    }
    sup.supervise(ms(0), &mut [&mut a, &mut b]);
    // a waited for a retransmission (one Interest); b sent 1000/s.
    a.on_interest(ms(50));
    for i in 0..100 {
        b.on_interest(ms(i));
    }
    sup.on_drop();
    sup.supervise(ms(100), &mut [&mut a, &mut b]);
    assert!(
        (a.constraint_out_ips() - 312.5).abs() < 1e-6,
        "{}",
        a.constraint_out_ips()
    );
    assert!(
        (b.constraint_out_ips() - 900.0).abs() < 1e-6,
        "{}",
        b.constraint_out_ips()
    );
}

#[derive(Debug, Clone)]
enum Ev {
    Objective(f64),
    Pace(f64),
    Constraint(u8, f64),
    Interest,
    Data(u16),
    Drop,
    Supervise,
    AddHop(u8, f64),
    RemoveHop(u8),
}

fn ev() -> impl Strategy<Value = Ev> {
    prop_oneof![
        (0.0..1e5f64).prop_map(Ev::Objective),
        (0.0..1e5f64).prop_map(Ev::Pace),
        (0u8..6, 0.0..1e5f64).prop_map(|(k, c)| Ev::Constraint(k, c)),
        Just(Ev::Interest),
        any::<u16>().prop_map(Ev::Data),
        Just(Ev::Drop),
        Just(Ev::Supervise),
        (0u8..6, 0.0..1e5f64).prop_map(|(k, c)| Ev::AddHop(k, c)),
        (0u8..6).prop_map(Ev::RemoveHop),
    ]
}

proptest! {
    #[test]
    fn eq8_and_eq9_hold_on_any_event_sequence(events in prop::collection::vec(ev(), 1..200)) {
        let mut f = three_way([100.0, 200.0, 300.0]);
        let mut sup = CccSupervisor::new(CccConfig::default(), 50e6);
        for (i, e) in events.into_iter().enumerate() {
            let now = ms(i as u64 * 7);
            match e {
                Ev::Objective(o) => f.on_objective(now, o),
                Ev::Pace(p) => f.set_incoming_pace(p),
                Ev::Constraint(k, c) => f.on_constraint(now, u64::from(k), c),
                Ev::Interest => f.on_interest(now),
                Ev::Data(s) => f.on_data(now, u32::from(s)),
                Ev::Drop => sup.on_drop(),
                Ev::Supervise => { sup.supervise(now, &mut [&mut f]); }
                Ev::AddHop(k, c) => { let _ = f.add_next_hop(u64::from(k), c); }
                Ev::RemoveHop(k) => f.remove_next_hop(u64::from(k)),
            }
            let hops = f.next_hops();
            if !hops.is_empty() {
                let sum: f64 = hops.iter().map(|h| h.objective_ips).sum();
                prop_assert!((sum - f.objective_ips()).abs() <= 1e-9 * f.objective_ips().max(1.0));
            }
            prop_assert!(f.constraint_out_ips() <= f.aggregate_constraint_ips() + 1e-9);
            for h in hops {
                prop_assert!(h.pace_ips <= h.constraint_ips + 1e-9);
                prop_assert!(h.pace_ips.is_finite() && h.pace_ips >= 0.0);
            }
            prop_assert!(f.constraint_out_ips().is_finite() && f.constraint_out_ips() >= 0.0);
        }
    }
}

/// Max-min augmentation: a congested period cuts a flow above its share
/// to that share, not to 90 % of its pace (Algorithm 5 alone keeps the
/// ratio a first-come flow took).
#[test]
fn max_min_cuts_a_flow_above_its_share_to_the_share() {
    let cfg = CccConfig {
        initial_data_size_bytes: 1000.0,
        augmentation: Augmentation::MaxMinShare,
        ..CccConfig::default()
    };
    // 10 Mbit/s of 1000-byte Data: 1250/s, 625/s each for two flows.
    let mut sup = CccSupervisor::new(cfg, 10e6);
    let (mut a, mut b) = (CccFlow::new(cfg), CccFlow::new(cfg));
    for f in [&mut a, &mut b] {
        f.add_next_hop(1, 1e6).unwrap();
        f.on_objective(ms(0), 1e5);
    }
    sup.supervise(ms(0), &mut [&mut a, &mut b]);
    for i in 0..100 {
        a.on_interest(ms(i)); // 1000/s, above its share
        if i % 4 == 0 {
            b.on_interest(ms(i)); // 250/s
        }
    }
    sup.on_drop();
    sup.supervise(ms(100), &mut [&mut a, &mut b]);
    assert!(
        (a.constraint_out_ips() - 625.0).abs() < 1e-6,
        "{}",
        a.constraint_out_ips()
    );
    assert!(
        (b.constraint_out_ips() - 312.5).abs() < 1e-6,
        "{}",
        b.constraint_out_ips()
    );
}

/// A flow paced at a few Interests/s stays active across supervision
/// periods without a packet (two Interests at its constraint), so it is
/// counted in the max-min share and others are not raised above theirs.
#[test]
fn a_slow_flow_stays_active_between_its_interests() {
    let cfg = CccConfig {
        initial_data_size_bytes: 1000.0,
        augmentation: Augmentation::MaxMinShare,
        ..CccConfig::default()
    };
    let mut f = CccFlow::new(cfg);
    f.add_next_hop(1, 5.0).unwrap();
    f.on_interest(ms(0));
    let window = activity_window(&f, Duration::from_millis(100));
    assert_eq!(window, Duration::from_millis(400));
    assert!(f.is_active(ms(350), window));
    assert!(!f.is_active(ms(350), Duration::from_millis(100)));
}

/// The sojourn test asks for a standing queue: a burst whose last Data
/// waited past the threshold but whose first did not is no congestion; a
/// period in which every Data waited past it is.
#[test]
fn only_a_standing_queue_counts_as_congestion() {
    let cfg = CccConfig {
        congestion_sojourn: Duration::from_millis(20),
        ..CccConfig::default()
    };
    let run = |sojourns_ms: &[u64]| {
        let mut f = three_way([1000.0, 0.0, 0.0]);
        f.on_objective(ms(0), 500.0);
        let mut sup = CccSupervisor::new(cfg, 10e6);
        sup.supervise(ms(0), &mut [&mut f]);
        for i in 0..50 {
            f.on_interest(ms(i));
        }
        for s in sojourns_ms {
            // 1200-byte Data on 10 Mbit/s: one serialisation is 0.96 ms.
            sup.on_data_dequeued(Duration::from_millis(*s), 1200, Some(10_000_000));
        }
        sup.supervise(ms(100), &mut [&mut f])
    };
    // A burst of ten: the first went at once, the last waited 36 ms.
    let burst: Vec<u64> = (0..10).map(|k| 4 * k).collect();
    assert!(matches!(run(&burst), Supervision::Augmented { .. }));
    // Every Data of the period waited 25-40 ms: a queue that never drained.
    assert_eq!(run(&[25, 30, 40, 35]), Supervision::Congested { flows: 1 });
    // Nothing dequeued: no signal.
    assert!(matches!(run(&[]), Supervision::Augmented { .. }));
    // The next period starts afresh.
    let mut f = three_way([1000.0, 0.0, 0.0]);
    let mut sup = CccSupervisor::new(cfg, 10e6);
    sup.on_data_dequeued(Duration::from_millis(30), 1200, Some(10_000_000));
    assert_eq!(
        sup.supervise(ms(100), &mut [&mut f]),
        Supervision::Congested { flows: 0 }
    );
    assert!(matches!(
        sup.supervise(ms(200), &mut [&mut f]),
        Supervision::Augmented { .. }
    ));
}

/// Where a period holds a few large Data, the queue ten flows paced at
/// their shares meet by chance is no congestion: 8000-byte Data on 2
/// Mbit/s (32 ms each) waiting 70-100 ms, i.e. 2-3 Data, all period.
#[test]
fn the_chance_queue_of_ten_paced_flows_is_no_congestion() {
    let cfg = CccConfig {
        congestion_sojourn: Duration::from_millis(20),
        ..CccConfig::default()
    };
    let run = |sojourn_ms: u64| {
        let mut flows: Vec<CccFlow> = (0..10)
            .map(|_| {
                let mut f = three_way([1000.0, 0.0, 0.0]);
                f.on_objective(ms(0), 500.0);
                f
            })
            .collect();
        let mut sup = CccSupervisor::new(cfg, 2e6);
        for f in flows.iter_mut() {
            f.on_interest(ms(1));
        }
        sup.supervise(ms(50), &mut flows);
        for f in flows.iter_mut() {
            f.on_interest(ms(60));
        }
        for _ in 0..3 {
            sup.on_data_dequeued(Duration::from_millis(sojourn_ms), 8000, Some(2_000_000));
        }
        sup.supervise(ms(150), &mut flows)
    };
    assert!(matches!(run(100), Supervision::Augmented { .. }));
    // 4.4 Data waited for all period: more than chance.
    assert!(matches!(run(140), Supervision::Congested { .. }));
}

/// The paper profile admits nothing (a new flow passes on what its next
/// hops allow) and cuts without a floor; tuned gives an equal share and
/// floors the cut at half the max-min share.
#[test]
fn profiles_differ_in_admission_and_the_reduction_floor() {
    for (cfg, paper) in [(CccConfig::paper(), true), (CccConfig::tuned(), false)] {
        let cfg = CccConfig {
            initial_data_size_bytes: 1000.0,
            ..cfg
        };
        // 10 Mbit/s of 1000-byte Data: 1250 Interests/s (η·C for tuned).
        let mut sup = CccSupervisor::new(cfg, 10e6);
        let link_ips = sup.capacity_bps() / 8000.0;
        let mut f = CccFlow::new(cfg);
        f.add_next_hop(1, 5000.0).unwrap();
        f.on_objective(ms(0), 1e6);
        sup.admit(&mut f, 1);
        let expect = if paper { 5000.0 } else { link_ips / 2.0 };
        assert!(
            (f.constraint_out_ips() - expect).abs() < 1e-9,
            "paper={paper}"
        );
        // A congested period with no Interest measured (p_i = 0).
        f.on_interest(ms(0));
        sup.supervise(ms(0), &mut [&mut f]);
        sup.on_drop();
        sup.supervise(ms(50), &mut [&mut f]);
        let floor = if paper { 0.0 } else { 0.5 * link_ips };
        assert!(
            (f.constraint_out_ips() - floor).abs() < 1e-6,
            "paper={paper}"
        );
    }
}

/// The paper's consumer paces at its objective from the first Interest;
/// tuned keeps two Interests in flight until the first Data.
#[test]
fn paper_consumer_paces_at_the_objective_before_any_constraint() {
    let paper = CccConsumer::new(CccConsumerConfig {
        target_rate_bps: 8e6,
        initial_data_size_bytes: 1000.0,
        ..CccConsumerConfig::paper()
    });
    match paper.limit() {
        SendLimit::Rate {
            interests_per_sec, ..
        } => assert!((interests_per_sec - 1000.0).abs() < 1e-9),
        other => panic!("{other:?}"),
    }
    let tuned = CccConsumer::new(CccConsumerConfig::tuned());
    assert!(matches!(tuned.limit(), SendLimit::Window { interests } if interests == 2.0));
}

/// Two flows leave by one supervised 10 Mbit/s interface (1000-byte Data:
/// 1187.5 Interests/s at η = 0.95). `a` is held back elsewhere at 100
/// Interests/s; `b` sends at whatever its constraint here allows. Returns
/// both constraints after `periods` supervisions of 100 ms.
fn held_back_run(by_demand: bool, periods: u64) -> (f64, f64) {
    let cfg = CccConfig {
        initial_data_size_bytes: 1000.0,
        max_min_demand: by_demand,
        ..CccConfig::tuned()
    };
    let mut sup = CccSupervisor::new(cfg, 10e6);
    let (mut a, mut b) = (CccFlow::new(cfg), CccFlow::new(cfg));
    for f in [&mut a, &mut b] {
        f.add_next_hop(1, 1e6).unwrap();
        f.on_objective(ms(0), 1e5);
        sup.admit(f, 1);
    }
    sup.supervise(ms(0), &mut [&mut a, &mut b]);
    for p in 0..periods {
        let t0 = p * 100;
        // a: 10 Interests per period; b: its constraint's worth.
        for i in 0..10 {
            a.on_interest(ms(t0 + i * 10));
        }
        let n = (b.constraint_out_ips() / 10.0).floor() as u64;
        for i in 0..n {
            b.on_interest(Timestamp::from_micros(t0 * 1000 + i * 100_000 / n.max(1)));
        }
        sup.supervise(ms(t0 + 100), &mut [&mut a, &mut b]);
    }
    (a.constraint_out_ips(), b.constraint_out_ips())
}

/// Max-min by demand: a flow held back elsewhere counts at what it sends,
/// so the flow limited here gets the rest of the link; it keeps room to
/// grow (a quarter above its demand). Without it, both hold an equal share
/// and the link carries 100 + 594 of its 1187.5 Interests/s.
#[test]
fn a_flow_held_back_elsewhere_leaves_its_share_to_the_others() {
    let (a, b) = held_back_run(true, 30);
    assert!((b - (1187.5 - 100.0)).abs() < 1.0, "b {b}");
    assert!((a - 125.0).abs() < 1.0, "a keeps 25 % of room: {a}");
    let (a, b) = held_back_run(false, 30);
    assert!(
        (a - 593.75).abs() < 1.0 && (b - 593.75).abs() < 1.0,
        "{a} {b}"
    );
}

/// A slow flow's demand is measured over eight Interests, not over one
/// supervision period: at 10 Interests/s a 100 ms period holds 0-3 of
/// them; a raise of its constraint voids the next two windows (the flow
/// answers a raise an RTT later).
#[test]
fn demand_windows_hold_eight_interests_and_skip_a_raise() {
    let cfg = CccConfig::tuned();
    let mut f = CccFlow::new(cfg);
    f.add_next_hop(1, 1e3).unwrap();
    let period = Duration::from_millis(100);
    // A new flow's first two windows are void (it ramps up).
    let mut t = 0;
    let mut measured = Vec::new();
    for _ in 0..40 {
        f.on_interest(ms(t));
        t += 100; // 10 Interests/s
        f.measure_demand(ms(t), period);
        if let Some(d) = f.demand_ips() {
            measured.push(d);
        }
    }
    assert!(!measured.is_empty());
    assert!(
        measured.iter().all(|d| (d - 10.0).abs() < 1e-9),
        "{measured:?}"
    );
    // Admitted at a tenth of 10 Mbit/s, then raised to all of it.
    let mut sup = CccSupervisor::new(cfg, 1e7);
    sup.admit(&mut f, 9);
    let admitted = f.constraint_out_ips();
    sup.supervise(ms(t), &mut [&mut f]);
    assert!(f.constraint_out_ips() > admitted * 5.0);
    assert_eq!(f.demand_ips(), None, "a raise voids the demand");
}
