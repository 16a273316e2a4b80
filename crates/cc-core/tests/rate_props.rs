//! Invariants of the explicit-rate laws on random event sequences.

use cc_core::mircc::{
    InterestShaper, MirccConsumer, MirccConsumerConfig, ShaperConfig, ShaperVerdict, TrafficClass,
};
use cc_core::rate_link::{RateLink, RateLinkConfig};
use cc_core::rcp::{LinkRateLaw, RateConsumer, RateConsumerConfig, RcpConfig, RcpLink};
use cc_core::{ConsumerLaw, DataFeedback, Duration, LawKind, NackFeedback, SendLimit, Timestamp};
use proptest::prelude::*;
use rand::{rngs::StdRng, SeedableRng};

fn finite_nonneg(x: f64) -> bool {
    x.is_finite() && x >= 0.0
}

proptest! {
    #[test]
    fn link_rates_stay_finite_and_in_bounds(
        cap in 0.0..1e10f64,
        steps in prop::collection::vec((0u64..300, any::<u32>(), any::<u32>(), any::<u32>(), 0u64..1000), 1..150)
    ) {
        let mut rcp = RcpLink::new(RcpConfig::default(), cap);
        let mut m: RateLink<u32> = RateLink::new(LawKind::Mircc, &RateLinkConfig::default(), cap);
        let mut now = Timestamp::ZERO;
        for (dt, p, s, q, rtt) in steps {
            now += Duration::from_millis(dt);
            let r = rcp.update(now, u64::from(p), u64::from(q), Duration::from_millis(rtt));
            prop_assert!(finite_nonneg(r) && r >= 10_000.0 && r <= (0.95 * cap).max(10_000.0));
            m.on_interest(now, 0, TrafficClass::Primary, p % 9000);
            m.on_interest(now, 1, TrafficClass::Secondary, s % 9000);
            while m.next_release_time().is_some_and(|t| t <= now) {
                if m.dequeue(now).is_none() {
                    break;
                }
            }
            m.on_data(now, q % 9000, Some(Duration::from_millis(rtt)));
            if let Some(u) = m.handle_timeout(now) {
                for x in [u.rates.primary_bps, u.rates.secondary_bps.unwrap_or(0.0)] {
                    prop_assert!(finite_nonneg(x) && x >= 10_000.0 && x <= (0.95 * cap).max(10_000.0));
                }
            }
            prop_assert!(m.shaper().len() <= 100);
        }
    }

    #[test]
    fn shaper_never_exceeds_its_bound_and_accounts_bytes(
        ops in prop::collection::vec((any::<bool>(), any::<bool>(), 1u32..2000, 0u64..20), 1..300)
    ) {
        let cfg = ShaperConfig { max_queue: 8, ..ShaperConfig::default() };
        let mut s: InterestShaper<usize> = InterestShaper::new(cfg, 1e6);
        s.set_inflation(10.0);
        let mut now = Timestamp::ZERO;
        let (mut bytes, mut inside) = (0u64, std::collections::HashMap::new());
        for (i, (enq, primary, size, dt)) in ops.into_iter().enumerate() {
            now += Duration::from_millis(dt);
            if enq {
                let class = if primary { TrafficClass::Primary } else { TrafficClass::Secondary };
                match s.enqueue(now, i, class, size) {
                    ShaperVerdict::Queued => { bytes += u64::from(size); inside.insert(i, (class, size)); }
                    ShaperVerdict::QueuedEvicting(v) => {
                        let (c, sz) = inside.remove(&v).unwrap();
                        prop_assert_eq!(c, TrafficClass::Secondary);
                        prop_assert_eq!(class, TrafficClass::Primary);
                        bytes = bytes - u64::from(sz) + u64::from(size);
                        inside.insert(i, (class, size));
                    }
                    ShaperVerdict::Rejected(v) => prop_assert_eq!(v, i),
                }
            } else if let Some((item, _, size)) = s.dequeue(now) {
                prop_assert!(inside.remove(&item).is_some());
                bytes -= u64::from(size);
            }
            prop_assert!(s.len() <= 8);
            prop_assert_eq!(s.queued_bytes(), bytes);
            prop_assert_eq!(s.len(), inside.len());
        }
    }

    #[test]
    fn consumers_never_produce_bad_rates(
        evs in prop::collection::vec((any::<u8>(), prop::option::of(-1e12..1e12f64), prop::option::of(-1e12..1e12f64), 0u64..4, any::<u16>()), 1..200)
    ) {
        let mut rc = RateConsumer::new(RateConsumerConfig::default());
        let mut mc = MirccConsumer::new(MirccConsumerConfig::default());
        let mut rng = StdRng::seed_from_u64(1);
        for (i, (kind, rp, rs, path, size)) in evs.into_iter().enumerate() {
            let now = Timestamp::from_millis(i as u64 * 37);
            if kind % 3 == 0 {
                let nack = NackFeedback { congestion: true, primary_rate_bps: rp, secondary_rate_bps: rs, path_id: Some(path) };
                rc.on_nack(now, &nack);
                mc.on_nack(now, &nack);
            } else {
                let fb = DataFeedback { primary_rate_bps: rp, secondary_rate_bps: rs, path_id: Some(path), data_size_bytes: u32::from(size), ..Default::default() };
                rc.on_data(now, &fb);
                mc.on_path_data(now, &fb, Some(u64::from(kind)));
            }
            for l in [rc.limit(), mc.limit()] {
                match l {
                    SendLimit::Rate { interests_per_sec, .. } => prop_assert!(finite_nonneg(interests_per_sec)),
                    SendLimit::Window { .. } => prop_assert!(false, "rate laws return rates"),
                }
            }
            for p in mc.paths() {
                prop_assert!(mc.primary_share_bps(p) <= p.primary_bps * (1.0 + 1e-12));
            }
            let _ = mc.next_interest(&mut rng);
        }
    }
}

/// The case proptest found: a link of zero capacity whose first period saw
/// one 126-byte Data and no Interest input. The floor of one Data per period
/// (10 080 bit/s) was above η·C, so the stamped rate passed the bound.
#[test]
fn a_link_slower_than_a_data_per_period_stamps_the_minimum() {
    let mut m: RateLink<u32> = RateLink::new(LawKind::Mircc, &RateLinkConfig::default(), 0.0);
    let now = Timestamp::ZERO;
    m.on_interest(now, 0, TrafficClass::Primary, 0);
    m.on_interest(now, 1, TrafficClass::Secondary, 0);
    while m.next_release_time().is_some_and(|t| t <= now) {
        if m.dequeue(now).is_none() {
            break;
        }
    }
    m.on_data(now, 126, Some(Duration::from_millis(0)));
    let u = m.handle_timeout(now).expect("a period ended");
    assert_eq!(u.rates.primary_bps, 10_000.0);
}
