//! The per-period interface of forwarder-side explicit-rate laws.
//!
//! Forwarder-side laws come in two shapes:
//!
//! * **per packet**: queue marking and scheduling run on every enqueue or
//!   dequeue and keep their own clocks from the `now` they are given:
//!   [`crate::codel::CodelMarker`], [`crate::pcon::NfdQueueMarker`],
//!   [`crate::wincm::MultiMarkCodel`], [`crate::mircc::InterestShaper`],
//!   [`crate::qsccp::CdsScheduler`] (whose PECN period runs inside
//!   `enqueue`/`dequeue`, or explicitly through `update_rates`);
//! * **per period**: a link measures what entered it and recomputes the
//!   rate it stamps into Data once per period T. That is [`LinkLaw`],
//!   implemented by RCP ([`RcpLink`]) and MIRCC ([`MirccRate`]), with
//!   [`AnyLinkLaw`] for static dispatch.
//!
//! The caller (sans-IO, like the rest of the crate) counts the inflated
//! Interest bytes per traffic class and the queue, and calls
//! [`LinkLaw::update`] when [`LinkLaw::next_update`] is reached; laws
//! measure the actual elapsed time themselves, so a late call is fine. CCC's
//! supervisor ([`crate::ccc::CccSupervisor`]) is also periodic but needs the
//! per-flow table, so it keeps its own `poll_timeout`/`supervise` pair.
//! [`crate::rcp::LinkRateLaw`] is the older single-class form the fluid
//! simulator drives; both laws implement both traits.

use crate::law::LawKind;
use crate::mircc::{MirccConfig, MirccRate};
use crate::rcp::{LinkRateLaw, RcpConfig, RcpLink};
use crate::time::{Duration, Timestamp};

/// What one outgoing link measured over a period, in bytes inflated to the
/// size of the Data the Interests will bring back (see
/// [`crate::mircc::Inflation`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkSample {
    /// Primary (or unclassified) Interest bytes that entered the link.
    pub primary_bytes: u64,
    /// MIRCC secondary Interest bytes that entered the link (single-class
    /// laws add them to the primary ones).
    pub secondary_bytes: u64,
    /// Bytes queued on the link now.
    pub queue_bytes: u64,
    /// Smoothed RTT through the link (zero: the law's default).
    pub rtt: Duration,
}

/// The rates a link stamps into Data until its next update.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkRates {
    /// Primary (single-class) rate, bit/s.
    pub primary_bps: f64,
    /// Secondary rate, bit/s, for laws that have one (MIRCC).
    pub secondary_bps: Option<f64>,
}

impl LinkRates {
    /// The rates a Data leaves with: each the minimum of what it carried and
    /// this link's (missing or invalid carried rates are replaced).
    pub fn stamp(&self, data_primary_bps: Option<f64>, data_secondary_bps: Option<f64>) -> Self {
        let min = |d: Option<f64>, r: f64| match d {
            Some(x) if x.is_finite() && x >= 0.0 => x.min(r),
            _ => r,
        };
        LinkRates {
            primary_bps: min(data_primary_bps, self.primary_bps),
            secondary_bps: self.secondary_bps.map(|r| min(data_secondary_bps, r)),
        }
    }
}

/// A per-link explicit-rate law run once per period.
pub trait LinkLaw {
    /// Runs one period ending at `now` and returns the new rates.
    fn update(&mut self, now: Timestamp, sample: &LinkSample) -> LinkRates;
    /// The rates stamped until the next update.
    fn rates(&self) -> LinkRates;
    /// When the next update is due (the first one is due at once).
    fn next_update(&self) -> Timestamp;
    /// Changes the link capacity (Data direction), bit/s.
    fn set_capacity(&mut self, capacity_bps: f64);
    /// Raises (or lowers) the floor of the primary (single-class) rate,
    /// bit/s, never below the law's configured minimum; applies from the
    /// next update.
    fn set_floor_bps(&mut self, floor_bps: f64);
    /// The control period T of the next update.
    fn period(&self) -> Duration;
    /// Sets T for the next update (see [`control_period`]).
    fn set_period(&mut self, period: Duration);
}

/// Bounds of a control period that follows the measured RTT.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PeriodBounds {
    /// Shortest period, whatever the RTT.
    pub min: Duration,
    /// Longest period the RTT may set (also the period before any RTT
    /// sample); `min_data` may lengthen it.
    pub max: Duration,
    /// The period spans at least this many Data serialisations at the
    /// link capacity, so y(t) is not read off one or two packets.
    pub min_data: u32,
}

/// T for the next update: the smoothed RTT, as RCP eq. 1 and MIRCC §3.1.2
/// ask (T ≤ RTT, as short as measurement allows), held within [`min`,
/// `max`], and never shorter than `min_data` Data serialisations at
/// `capacity_bps`, even past `max`. A fixed T above the RTT let a link
/// react a period late to every change and, with eq. 1's gain T/d capped
/// at 1, over-reacted when it did.
///
/// Why `min_data` wins over `max` (session 17): with 8 KB Data on 2 Mbit/s
/// a 100 ms period holds three Data (1.5 on 1 Mbit/s), so y(t) read 0 to
/// 8 whole Interests per period. Ten such flows (3 Interests/s each, 240 ms
/// RTT) moved in step: periods of 0 and 7-10 Interests, each answered by
/// a rate step all ten followed, 63-73 % of the link once the floor no
/// longer propped R up (docs/deviations.md R4); with T = 20 Data (650 ms)
/// 96.6 %. MIRCC §3.1.2 names exactly this limit ("limited only by lumpy
/// measurements").
pub fn control_period(
    rtt: Option<Duration>,
    bounds: &PeriodBounds,
    data_bytes: Option<f64>,
    capacity_bps: f64,
) -> Duration {
    let Some(rtt) = rtt.filter(|r| *r > Duration::ZERO) else {
        return bounds.max;
    };
    let s = bounds.min_data_span_s(data_bytes, capacity_bps);
    let lumpy = Duration::from_nanos((s * 1e9).min(u64::MAX as f64) as u64);
    rtt.max(bounds.min).min(bounds.max).max(lumpy)
}

impl PeriodBounds {
    /// Seconds that `min_data` Data of `data_bytes` take at `capacity_bps`;
    /// 0 before the Data size is known or without a capacity.
    pub fn min_data_span_s(&self, data_bytes: Option<f64>, capacity_bps: f64) -> f64 {
        match data_bytes {
            Some(b) if capacity_bps > 0.0 && b.is_finite() && b > 0.0 => {
                f64::from(self.min_data) * b * 8.0 / capacity_bps
            }
            _ => 0.0,
        }
    }
}

impl LinkLaw for RcpLink {
    fn update(&mut self, now: Timestamp, s: &LinkSample) -> LinkRates {
        let arrived = s.primary_bytes.saturating_add(s.secondary_bytes);
        LinkRateLaw::update(self, now, arrived, s.queue_bytes, s.rtt);
        LinkLaw::rates(self)
    }
    fn rates(&self) -> LinkRates {
        LinkRates {
            primary_bps: self.rate_bps(),
            secondary_bps: None,
        }
    }
    fn next_update(&self) -> Timestamp {
        RcpLink::next_update(self)
    }
    fn set_capacity(&mut self, capacity_bps: f64) {
        RcpLink::set_capacity(self, capacity_bps);
    }
    fn set_floor_bps(&mut self, floor_bps: f64) {
        RcpLink::set_floor_bps(self, floor_bps);
    }
    fn period(&self) -> Duration {
        self.config().period
    }
    fn set_period(&mut self, period: Duration) {
        RcpLink::set_period(self, period);
    }
}

impl LinkLaw for MirccRate {
    fn update(&mut self, now: Timestamp, s: &LinkSample) -> LinkRates {
        self.update_dual(
            now,
            s.primary_bytes,
            s.secondary_bytes,
            s.queue_bytes,
            s.rtt,
        );
        LinkLaw::rates(self)
    }
    fn rates(&self) -> LinkRates {
        let (rp, rs) = self.rates_bps();
        LinkRates {
            primary_bps: rp,
            secondary_bps: Some(rs),
        }
    }
    fn next_update(&self) -> Timestamp {
        MirccRate::next_update(self)
    }
    fn set_capacity(&mut self, capacity_bps: f64) {
        MirccRate::set_capacity(self, capacity_bps);
    }
    fn set_floor_bps(&mut self, floor_bps: f64) {
        MirccRate::set_floor_bps(self, floor_bps);
    }
    fn period(&self) -> Duration {
        self.config().period
    }
    fn set_period(&mut self, period: Duration) {
        MirccRate::set_period(self, period);
    }
}

/// Parameters of every per-period link law (defaults: the papers').
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct LinkLawConfig {
    /// `rcp`.
    pub rcp: RcpConfig,
    /// `mircc`.
    pub mircc: MirccConfig,
}

/// One per-period link law of any scheme, dispatched by `match`.
#[derive(Debug, Clone)]
pub enum AnyLinkLaw {
    /// RCP, eq. 1.
    Rcp(RcpLink),
    /// MIRCC, eqs. 2-16.
    Mircc(MirccRate),
}

impl AnyLinkLaw {
    /// The link law of scheme `kind` on a link of `capacity_bps`, or `None`
    /// when the scheme stamps no per-link rate.
    pub fn new(kind: LawKind, capacity_bps: f64, cfg: &LinkLawConfig) -> Option<Self> {
        match kind {
            LawKind::Rcp => Some(AnyLinkLaw::Rcp(RcpLink::new(cfg.rcp, capacity_bps))),
            LawKind::Mircc => Some(AnyLinkLaw::Mircc(MirccRate::new(cfg.mircc, capacity_bps))),
            _ => None,
        }
    }
}

impl LinkLaw for AnyLinkLaw {
    #[inline]
    fn update(&mut self, now: Timestamp, sample: &LinkSample) -> LinkRates {
        match self {
            AnyLinkLaw::Rcp(l) => LinkLaw::update(l, now, sample),
            AnyLinkLaw::Mircc(l) => LinkLaw::update(l, now, sample),
        }
    }
    #[inline]
    fn rates(&self) -> LinkRates {
        match self {
            AnyLinkLaw::Rcp(l) => LinkLaw::rates(l),
            AnyLinkLaw::Mircc(l) => LinkLaw::rates(l),
        }
    }
    fn next_update(&self) -> Timestamp {
        match self {
            AnyLinkLaw::Rcp(l) => LinkLaw::next_update(l),
            AnyLinkLaw::Mircc(l) => LinkLaw::next_update(l),
        }
    }
    fn set_capacity(&mut self, capacity_bps: f64) {
        match self {
            AnyLinkLaw::Rcp(l) => LinkLaw::set_capacity(l, capacity_bps),
            AnyLinkLaw::Mircc(l) => LinkLaw::set_capacity(l, capacity_bps),
        }
    }
    fn set_floor_bps(&mut self, floor_bps: f64) {
        match self {
            AnyLinkLaw::Rcp(l) => LinkLaw::set_floor_bps(l, floor_bps),
            AnyLinkLaw::Mircc(l) => LinkLaw::set_floor_bps(l, floor_bps),
        }
    }
    fn period(&self) -> Duration {
        match self {
            AnyLinkLaw::Rcp(l) => LinkLaw::period(l),
            AnyLinkLaw::Mircc(l) => LinkLaw::period(l),
        }
    }
    fn set_period(&mut self, period: Duration) {
        match self {
            AnyLinkLaw::Rcp(l) => LinkLaw::set_period(l, period),
            AnyLinkLaw::Mircc(l) => LinkLaw::set_period(l, period),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_period_follows_the_rtt_within_its_bounds() {
        let b = PeriodBounds {
            min: Duration::from_millis(5),
            max: Duration::from_millis(100),
            min_data: 4,
        };
        let ms = Duration::from_millis;
        // No sample yet: the longest period.
        assert_eq!(control_period(None, &b, Some(1200.0), 20e6), ms(100));
        // 20 ms RTT, 1200-byte Data at 20 Mbit/s (0.48 ms each): T = RTT.
        assert_eq!(control_period(Some(ms(20)), &b, Some(1200.0), 20e6), ms(20));
        // 8000-byte Data at 2 Mbit/s: 4 Data take 128 ms, past the cap.
        assert_eq!(control_period(Some(ms(20)), &b, Some(8000.0), 2e6), ms(128));
        assert_eq!(
            control_period(Some(ms(300)), &b, Some(8000.0), 2e6),
            ms(128)
        );
        // 8000-byte Data at 10 Mbit/s: 4 Data take 25.6 ms > RTT.
        assert_eq!(
            control_period(Some(ms(10)), &b, Some(8000.0), 10e6),
            Duration::from_micros(25_600)
        );
        // A 1 ms RTT stops at the minimum; a 300 ms RTT at the maximum.
        assert_eq!(control_period(Some(ms(1)), &b, Some(100.0), 1e9), ms(5));
        assert_eq!(control_period(Some(ms(300)), &b, Some(100.0), 1e9), ms(100));
    }

    #[test]
    fn only_rate_stamping_schemes_have_a_link_law() {
        let cfg = LinkLawConfig::default();
        for kind in LawKind::ALL {
            let law = AnyLinkLaw::new(kind, 1e7, &cfg);
            assert_eq!(
                law.is_some(),
                matches!(kind, LawKind::Rcp | LawKind::Mircc),
                "{kind}"
            );
        }
    }

    #[test]
    fn stamp_takes_the_minimum_and_heals_bad_values() {
        let r = LinkRates {
            primary_bps: 5e6,
            secondary_bps: Some(2e6),
        };
        let s = r.stamp(Some(3e6), Some(f64::NAN));
        assert_eq!(s.primary_bps, 3e6);
        assert_eq!(s.secondary_bps, Some(2e6));
        let rcp = LinkRates {
            primary_bps: 5e6,
            secondary_bps: None,
        };
        assert_eq!(rcp.stamp(None, Some(1.0)).secondary_bps, None);
    }

    proptest! {
        /// The enum runs exactly the law it wraps, and RCP counts secondary
        /// bytes with the primary ones.
        #[test]
        fn enum_matches_the_laws(
            periods in proptest::collection::vec((1u64..50, 0u64..2_000_000, 0u64..500_000, 0u64..200_000, 1u64..300), 1..40),
        ) {
            let cfg = LinkLawConfig::default();
            let c = 1e8;
            let mut any_rcp = AnyLinkLaw::new(LawKind::Rcp, c, &cfg).unwrap();
            let mut any_mircc = AnyLinkLaw::new(LawKind::Mircc, c, &cfg).unwrap();
            let mut rcp = RcpLink::new(cfg.rcp, c);
            let mut mircc = MirccRate::new(cfg.mircc, c);
            let mut now = Timestamp::ZERO;
            for (dt_ms, p, s, q, rtt_ms) in periods {
                now += Duration::from_millis(dt_ms);
                let sample = LinkSample { primary_bytes: p, secondary_bytes: s, queue_bytes: q, rtt: Duration::from_millis(rtt_ms) };
                let a = any_rcp.update(now, &sample);
                let want = LinkRateLaw::update(&mut rcp, now, p + s, q, sample.rtt);
                prop_assert_eq!(a.primary_bps, want);
                prop_assert_eq!(a.secondary_bps, None);
                let m = any_mircc.update(now, &sample);
                let (rp, rs) = mircc.update_dual(now, p, s, q, sample.rtt);
                prop_assert_eq!((m.primary_bps, m.secondary_bps), (rp, Some(rs)));
                prop_assert!(a.primary_bps > 0.0 && a.primary_bps <= c);
                prop_assert_eq!(any_rcp.next_update(), now + cfg.rcp.period);
            }
        }
    }
}
