use super::*;
use crate::mircc::MirccConfig;

/// A link of `kind` on a `capacity_bps` link, its first update run at time
/// zero, and the longest period.
fn started(kind: LawKind, capacity_bps: f64) -> (RateLink<u32>, Duration) {
    let cfg = RateLinkConfig::default();
    let mut l = RateLink::new(kind, &cfg, capacity_bps);
    assert!(l.handle_timeout(Timestamp::ZERO).is_some());
    (l, cfg.law.mircc.period)
}

/// A link of `kind` on 20 Mbit/s that has seen one 8100-byte Data and run
/// one period with five flows at η·C each (eq. 1's factor goes negative).
fn overloaded(kind: LawKind) -> RateLink<u32> {
    let t0 = Timestamp::ZERO;
    let (mut l, period) = started(kind, 20e6);
    l.on_data(t0, 8100, Some(Duration::from_millis(20)));
    l.primary_bytes = (5.0 * 19e6 * 0.1 / 8.0) as u64;
    l.handle_timeout(t0 + period);
    l
}

const FLOOR_BPS: f64 = 8100.0 * 8.0 / 0.1;

/// A link of `kind` on 10 Mbit/s, one period in, one Data seen.
fn settled(kind: LawKind) -> (RateLink<u32>, Timestamp) {
    let t0 = Timestamp::ZERO;
    let (mut l, period) = started(kind, 10e6);
    l.on_data(t0, 8100, Some(Duration::from_millis(20)));
    let t1 = t0 + period;
    l.primary_bytes = (9.5e6 * 0.1 / 8.0) as u64;
    l.handle_timeout(t1);
    (l, t1)
}

/// Bytes of `bps` over `ms`.
fn bytes(bps: f64, ms: u64) -> u64 {
    (bps * ms as f64 / 1e3 / 8.0) as u64
}

#[test]
fn mircc_ends_a_period_early_once_when_flows_arrive() {
    let (mut l, t1) = settled(LawKind::Mircc);
    let r0 = l.rates().primary_bps;
    // Twenty 8100-byte Data at 10 Mbit/s: the period is 129.6 ms.
    let period = l.law().period();
    assert_eq!(period, Duration::from_micros(129_600));
    let ms = Duration::from_millis;
    // Paced input at η·C never ends a period early.
    l.primary_bytes = bytes(9.5e6, 50);
    assert!(!l.end_period_on_arrival(t1 + ms(50)));
    // Nor does a clump of paced flows: 1.6·C over 30 ms.
    l.primary_bytes = bytes(16e6, 30);
    assert!(!l.end_period_on_arrival(t1 + ms(30)));
    // Three flows joined at the old rate: 4·η·C, but half a period
    // (64.8 ms, more than eight Data serialisations) must pass before the
    // input is believed.
    l.primary_bytes = bytes(38e6, 60);
    assert!(!l.end_period_on_arrival(t1 + ms(60)));
    l.primary_bytes = bytes(38e6, 70);
    assert!(l.end_period_on_arrival(t1 + ms(70)));
    let r1 = l.rates().primary_bps;
    assert!(r1 < 0.9 * r0, "{r0} -> {r1}");
    // Once per period: the flows need an RTT to hear the new rate.
    l.primary_bytes = bytes(38e6, 70);
    assert!(!l.end_period_on_arrival(t1 + ms(140)));
    // The regular update re-arms it.
    let t2 = t1 + ms(70) + l.law().period();
    assert!(l.handle_timeout(t2).is_some());
    l.primary_bytes = bytes(38e6, 70);
    assert!(l.end_period_on_arrival(t2 + ms(70)));
}

/// Interests released by `l` from `t0` until `t0 + ms`, polled each 1 ms.
fn released_within(l: &mut RateLink<u32>, t0: Timestamp, ms: u64) -> usize {
    let mut n = 0;
    for k in 0..=ms {
        while l.dequeue(t0 + Duration::from_millis(k)).is_some() {
            n += 1;
        }
    }
    n
}

#[test]
fn before_any_data_the_shaper_books_the_largest_data() {
    for kind in [LawKind::Mircc, LawKind::Rcp] {
        let t0 = Timestamp::ZERO;
        let (mut l, _) = started(kind, 20e6);
        for i in 0..50 {
            let _ = l.on_interest(t0, i, TrafficClass::Primary, 60);
        }
        // 8800-byte Data at 20 Mbit/s: one Interest per 3.52 ms, so 10 ms
        // let about 3 go (plus the shaper's 2 ms burst), not 50.
        let early = released_within(&mut l, t0, 10);
        assert!((2..=6).contains(&early), "{kind:?}: {early} in 10 ms");
        // Once Data of 1000 bytes come back, the measured ι applies (to
        // fresh Interests: the 50 ms wait bound Nacked most of the first 50).
        l.on_data(t0, 1000, Some(Duration::from_millis(20)));
        let t1 = t0 + Duration::from_millis(11);
        for i in 0..50 {
            let _ = l.on_interest(t1, i, TrafficClass::Primary, 60);
        }
        let later = released_within(&mut l, t1, 10);
        assert!(later >= 20, "{kind:?}: {later} in 10 ms after Data");
    }
}

#[test]
fn rcp_keeps_its_period() {
    let (mut l, t1) = settled(LawKind::Rcp);
    l.primary_bytes = bytes(38e6, 30);
    assert!(!l.end_period_on_arrival(t1 + Duration::from_millis(30)));
}

#[test]
fn rcp_collapse_stops_at_one_measured_data_per_period() {
    let l = overloaded(LawKind::Rcp);
    let rp = l.rates().primary_bps;
    assert!((rp - FLOOR_BPS).abs() < 1.0, "{rp} vs {FLOOR_BPS}");
}

#[test]
fn mircc_primary_floor_follows_the_data_size() {
    let l = overloaded(LawKind::Mircc);
    let AnyLinkLaw::Mircc(m) = l.law() else {
        panic!("mircc link without a mircc law");
    };
    assert!((m.floor_bps() - FLOOR_BPS).abs() < 1e-6);
    assert!(m.primary_bps() >= FLOOR_BPS);
}

#[test]
fn link_counts_inflated_input_and_stamps_minimum() {
    let cfg = RateLinkConfig {
        law: LinkLawConfig {
            mircc: MirccConfig::default(),
            ..LinkLawConfig::default()
        },
        ..RateLinkConfig::default()
    };
    let mut l: RateLink<u32> = RateLink::new(LawKind::Mircc, &cfg, 1e6);
    let t0 = Timestamp::ZERO;
    assert!(l.handle_timeout(t0).is_some());
    // Teach the inflation: 50-byte Interest, 1000-byte Data → ι = 20.
    l.on_interest(t0, 0, TrafficClass::Primary, 50);
    assert_eq!(l.dequeue(t0).map(|x| x.0), Some(0));
    l.on_data(t0, 1000, Some(Duration::from_millis(100)));
    assert_eq!(l.inflation(), 20.0);
    // 100 more Interests of 50 bytes: 100 kB of Data in 100 ms = 8 Mbit/s,
    // eight times the 1 Mbit/s link.
    for i in 1..=100 {
        l.on_interest(t0, i, TrafficClass::Primary, 50);
    }
    let next = l.poll_timeout();
    let u1 = l.handle_timeout(next).expect("due");
    for i in 101..=200 {
        l.on_interest(next, i, TrafficClass::Primary, 50);
    }
    let u2 = l.handle_timeout(l.poll_timeout()).expect("due");
    let rp = u2.rates.primary_bps;
    assert!(
        rp < 0.6e6 && rp <= u1.rates.primary_bps,
        "{} then {rp}",
        u1.rates.primary_bps
    );
    assert_eq!(l.stamp(None, Some(1.0)).secondary_bps, Some(1.0));
    assert_eq!(l.stamp(Some(1e9), None).primary_bps, rp);
    assert_eq!(l.srtt(), Duration::from_millis(100));
}

#[test]
fn rcp_link_folds_secondary_interests_into_primary() {
    let (mut l, _) = started(LawKind::Rcp, 10e6);
    l.on_interest(Timestamp::ZERO, 1, TrafficClass::Secondary, 60);
    assert_eq!(l.secondary_bytes, 0);
    assert!(l.primary_bytes > 0);
    assert!(!l.is_dual());
}

/// The queue the law of `kind` is handed when four 8100-byte Interests
/// (ι = 1) wait in the shaper and one flow loads the link to η·C.
fn queue_charged(kind: LawKind, chance_queue_allowance: bool) -> u64 {
    let cfg = RateLinkConfig {
        chance_queue_allowance,
        ..RateLinkConfig::default()
    };
    let mut l = RateLink::new(kind, &cfg, 10e6);
    let t0 = Timestamp::ZERO;
    assert!(l.handle_timeout(t0).is_some());
    l.on_data(t0, 8100, Some(Duration::from_millis(20)));
    let t1 = t0 + Duration::from_millis(100);
    l.primary_bytes = bytes(9.5e6, 100);
    assert!(l.handle_timeout(t1).is_some());
    for k in 0..4 {
        let v = l.on_interest(t1, k, TrafficClass::Primary, 8100);
        assert_eq!(v, ShaperVerdict::Queued);
    }
    assert_eq!(l.shaper().queued_bytes(), 4 * 8100);
    let t2 = t1 + l.law().period();
    l.primary_bytes = bytes(9.5e6, l.law().period().as_millis() as u64);
    l.handle_timeout(t2).expect("due").sample.queue_bytes
}

#[test]
fn rcp_leaves_the_chance_queue_standing_and_mircc_charges_it() {
    // One flow at ρ = 0.95: its own Data is in the system 95 % of the time.
    let chance = chance_allowance_bytes(Some(8100.0), 9.5e6, 9.5e6, 9.5e6, 10e6);
    assert_eq!(chance, (0.95 * 8100.0) as u64);
    // On the link (N̂ and ρ averaged over twenty Data, about one flow at
    // η·C): RCP is charged the queue beyond about that; MIRCC all of it.
    let rcp = queue_charged(LawKind::Rcp, true);
    assert!(rcp.abs_diff(4 * 8100 - chance) < 200, "{rcp}");
    assert_eq!(queue_charged(LawKind::Mircc, true), 4 * 8100);
    // Without it RCP keeps the one-Data allowance (R1), MIRCC none.
    assert_eq!(queue_charged(LawKind::Rcp, false), 3 * 8100);
    assert_eq!(queue_charged(LawKind::Mircc, false), 4 * 8100);
    // Ten flows held at R on the same load: N̂ = y/R = 10, 2.07 Data.
    let ten = chance_allowance_bytes(Some(8100.0), 9.5e6, 9.5e6, 0.95e6, 10e6);
    assert!((ten as f64 / 8100.0 - 2.07).abs() < 0.01, "{ten}");
    // Nothing known, nothing allowed.
    assert_eq!(chance_allowance_bytes(None, 9.5e6, 9.5e6, 0.95e6, 10e6), 0);
    assert_eq!(
        chance_allowance_bytes(Some(8100.0), 0.0, 0.0, 0.95e6, 10e6),
        0
    );
}

#[test]
fn the_shaper_may_hold_what_paced_flows_meet_by_chance() {
    // Ten flows held at R on 2 Mbit/s at ρ = 0.95 meet 3.6 Data of 8100
    // bytes (32.4 ms each) 5 % of the time: 117 ms, past the 50 ms bound.
    let w = chance_wait(Some(8100.0), 1.9e6, 1.9e6, 0.19e6, 2e6);
    assert!((w.as_secs_f64() - 0.117).abs() < 0.003, "{w:?}");
    // One flow meets little; nothing is known before a Data.
    let one = chance_wait(Some(8100.0), 1.9e6, 1.9e6, 1.9e6, 2e6);
    assert!(one < Duration::from_millis(50), "{one:?}");
    assert_eq!(chance_wait(None, 1.9e6, 1.9e6, 0.19e6, 2e6), Duration::ZERO);
    // On a link: after a period with ten such flows, a third Interest that
    // waits 65 ms behind two is queued, not Nacked; without the rule it is.
    for (hold, third) in [(true, true), (false, false)] {
        let cfg = RateLinkConfig {
            shaper_holds_chance_queue: hold,
            ..RateLinkConfig::default()
        };
        let mut l = RateLink::new(LawKind::Rcp, &cfg, 2e6);
        let t0 = Timestamp::ZERO;
        l.handle_timeout(t0);
        l.on_data(t0, 8100, Some(Duration::from_millis(20)));
        // Ten flows at η·C each cut R to the fair-share floor, η·C/10;
        // the next period's input at η·C then counts N̂ = y/R = 10.
        l.primary_bytes = bytes(19e6, 100);
        l.handle_timeout(t0 + Duration::from_millis(100));
        let t1 = t0 + l.law().period() + Duration::from_millis(100);
        l.primary_bytes = bytes(1.9e6, l.law().period().as_millis() as u64);
        l.handle_timeout(t1);
        let verdicts: alloc::vec::Vec<bool> = (0..3)
            .map(|k| l.on_interest(t1, k, TrafficClass::Primary, 8100) == ShaperVerdict::Queued)
            .collect();
        assert_eq!(verdicts, [true, true, third], "hold {hold}");
    }
}
