use super::*;

#[test]
fn one_data_of_queue_is_granularity() {
    assert_eq!(queue_beyond_one_data(8100, Some(8100.0)), 0);
    assert_eq!(queue_beyond_one_data(20_000, Some(8100.0)), 11_900);
    assert_eq!(queue_beyond_one_data(500, None), 500);
}

#[test]
fn the_floor_never_exceeds_the_fair_share() {
    let t = Duration::from_millis(100);
    // No Data seen yet: no floor beyond the configured minimum.
    assert_eq!(responsive_floor_bps(None, t, 0.95, 2e6, 1e5, 1e6), 0.0);
    // One 8000-byte Data per 100 ms when that is below the share.
    let f = responsive_floor_bps(Some(8000.0), t, 0.95, 100e6, 10e6, 50e6);
    assert!((f - 640_000.0).abs() < 1e-6, "{f}");
    // Ten flows held at 640 kbit/s on 2 Mbit/s draw y = 6.4 Mbit/s:
    // N̂ = 10, so the floor drops to η·C/10.
    let f = responsive_floor_bps(Some(8000.0), t, 0.95, 2e6, 640_000.0, 6.4e6);
    assert!((f - 190_000.0).abs() < 1.0, "{f}");
}

fn ms(x: u64) -> Timestamp {
    Timestamp::from_millis(x)
}

#[test]
fn eq1_recomputed_by_hand() {
    // C = 1 Mbit/s, R0 = 0.95 Mbit/s, T = 10 ms, d = 100 ms,
    // y = 1.2 Mbit/s (1500 bytes in 10 ms), q = 2500 bytes.
    let mut l = RcpLink::new(RcpConfig::default(), 1e6);
    l.update(ms(0), 0, 0, Duration::from_millis(100));
    let r0 = l.rate_bps();
    assert_eq!(r0, 0.95e6);
    let r1 = l.update(ms(10), 1500, 2500, Duration::from_millis(100));
    let y = 1500.0 * 8.0 / 0.01;
    let q = 2500.0 * 8.0;
    let expect = r0 * (1.0 + 0.1 * (0.4 * (0.95e6 - y) - 0.4 * q / 0.1) / 1e6);
    assert!((r1 - expect).abs() < 1e-6, "{r1} vs {expect}");
    assert!(r1 < r0);
}

#[test]
fn rate_is_clamped_and_recovers_from_collapse() {
    let mut l = RcpLink::new(RcpConfig::default(), 1e6);
    l.update(ms(0), 0, 0, Duration::from_millis(100));
    // A huge overload with T = d drives the factor negative: floor.
    let r = l.update(ms(100), 10_000_000, 1_000_000, Duration::from_millis(100));
    assert_eq!(r, 10_000.0);
    // Idle link: multiplicative growth up to η·C, never beyond.
    let mut t = 100;
    for _ in 0..100 {
        t += 100;
        l.update(ms(t), 0, 0, Duration::from_millis(100));
    }
    assert_eq!(l.rate_bps(), 0.95e6);
}

#[test]
fn collapse_lands_on_the_raised_floor() {
    let mut l = RcpLink::new(RcpConfig::default(), 20e6);
    l.update(ms(0), 0, 0, Duration::from_millis(20));
    // One 8100-byte Data per 100 ms.
    l.set_floor_bps(648_000.0);
    assert_eq!(l.floor_bps(), 648_000.0);
    let r = l.update(ms(100), 5_000_000, 1_000_000, Duration::from_millis(20));
    assert_eq!(r, 648_000.0);
    // Never below the configured minimum, whatever the caller asks.
    l.set_floor_bps(1.0);
    assert_eq!(l.floor_bps(), 10_000.0);
    l.set_floor_bps(f64::NAN);
    assert_eq!(l.floor_bps(), 10_000.0);
    let r = l.update(ms(200), 5_000_000, 1_000_000, Duration::from_millis(20));
    assert_eq!(r, 10_000.0);
}

#[test]
fn consumer_deflates_by_data_size_and_only_lowers_on_nack() {
    let mut c = RateConsumer::new(RateConsumerConfig::default());
    let fb = DataFeedback {
        primary_rate_bps: Some(800_000.0),
        data_size_bytes: 1000,
        ..Default::default()
    };
    c.on_data(ms(1), &fb);
    assert!((c.interests_per_sec() - 100.0).abs() < 1e-9);
    let up = NackFeedback {
        congestion: true,
        primary_rate_bps: Some(900_000.0),
        ..Default::default()
    };
    c.on_nack(ms(2), &up);
    assert_eq!(c.rate_bps(), 800_000.0);
    let down = NackFeedback {
        primary_rate_bps: Some(400_000.0),
        ..up
    };
    c.on_nack(ms(3), &down);
    assert_eq!(c.rate_bps(), 400_000.0);
    match c.limit() {
        SendLimit::Rate {
            interests_per_sec, ..
        } => assert!((interests_per_sec - 50.0).abs() < 1e-9),
        SendLimit::Window { .. } => panic!("rate law must return a rate"),
    }
}

#[test]
fn first_stamped_rate_may_come_from_a_nack() {
    let mut c = RateConsumer::new(RateConsumerConfig::default());
    let nack = |r: f64| NackFeedback {
        congestion: true,
        primary_rate_bps: Some(r),
        ..Default::default()
    };
    // Above the 80 kbit/s guess, but the network's word.
    c.on_nack(ms(1), &nack(5e6));
    assert_eq!(c.rate_bps(), 5e6);
    // From then on a Nack only lowers it.
    c.on_nack(ms(2), &nack(9e6));
    assert_eq!(c.rate_bps(), 5e6);
    c.on_nack(ms(3), &nack(2e6));
    assert_eq!(c.rate_bps(), 2e6);
    // Without a rate, a Nack changes nothing.
    let mut c = RateConsumer::new(RateConsumerConfig::default());
    c.on_nack(ms(1), &NackFeedback::default());
    assert_eq!(c.rate_bps(), 80_000.0);
}
