//! RCP, the Rate Control Protocol of Dukkipati, in the ICN form used as the
//! baseline by MIRCC (Mahdian et al., ACM ICN'16, §3.1.1 eq. 1; docs/algorithms.md
//! §6.1).
//!
//! Each forwarder keeps one stamping rate per outgoing Interest link and
//! recomputes it every period `T`:
//!
//! ```text
//! R(t) = R(t−T) · [ 1 + (T/d) · ( α·(η·C − y(t)) − β·q(t)/d ) / C ]      (1)
//! ```
//!
//! `C` is the capacity of the link in the Data direction, `y(t)` the rate of
//! Interests entering the link during the period and `q(t)` the queued
//! Interests, both *inflated* to the size of the Data they will bring back
//! (MIRCC §3.1.1), and `d` the smoothed RTT. Callers in this crate and
//! icnfwd pass the shaper queue averaged over the period
//! ([`crate::mircc::InterestShaper::take_mean_queued_bytes`]) where the
//! papers say instantaneous; see there why. Returning Data carry
//! `min(Data.R, R)`; the consumer ([`RateConsumer`]) sends Interests at the
//! smallest rate it hears, divided by the Data size.
//!
//! Deviations and choices (all documented in docs/algorithms.md §6.1):
//! * the gain `T/d` is capped at 1, as the reference ns-2 router does
//!   (`T_q = min(avg_rtt, T)`), so a period longer than the RTT does not
//!   over-correct;
//! * the result is clamped to `[floor, η·C]` like the reference code, whose
//!   floor is a minimum number of packets per RTT: the floor starts at
//!   `min_rate_bps` and the caller may raise it ([`RcpLink::set_floor_bps`];
//!   icnfwd uses one measured Data per period, so a consumer held at the
//!   floor still hears each new rate within about a period);
//! * α = β = 0.4 (the reference code's commented defaults) and η = 0.95.
//!
//! The caller hands in already-inflated byte counts (Interest bytes × the
//! Data/Interest inflation factor, see [`crate::mircc::Inflation`]).

use crate::law::{ConsumerLaw, DataFeedback, NackFeedback, SendLimit};
use crate::time::{Duration, Timestamp};

/// Parameters of the RCP link law (eq. 1).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct RcpConfig {
    /// Gain on the spare capacity `η·C − y`.
    pub alpha: f64,
    /// Gain on the queue drain term `q/d`.
    pub beta: f64,
    /// Target utilisation η.
    pub eta: f64,
    /// Nominal update period `T` (used for the first update).
    pub period: Duration,
    /// RTT used while the caller has no estimate.
    pub default_rtt: Duration,
    /// Floor of the stamped rate, so a link never advertises zero. The
    /// caller may raise it at run time ([`RcpLink::set_floor_bps`]), e.g. to
    /// one Data per control period as the reference router's "minimum
    /// packets per RTT".
    pub min_rate_bps: f64,
    /// Initial rate as a fraction of `η·C`.
    pub initial_fraction: f64,
}

impl Default for RcpConfig {
    fn default() -> Self {
        RcpConfig {
            alpha: 0.4,
            beta: 0.4,
            eta: 0.95,
            period: Duration::from_millis(10),
            default_rtt: Duration::from_millis(100),
            min_rate_bps: 10_000.0,
            initial_fraction: 1.0,
        }
    }
}

impl RcpConfig {
    /// Eq. 1 as MIRCC adapts it, with the reference router's constants
    /// (docs/algorithms.md §6.1): the same as [`RcpConfig::tuned`]; what
    /// the profiles change for RCP is how the link samples q(t)
    /// ([`crate::rate_link::RateLinkConfig::mean_queue`]).
    pub fn paper() -> Self {
        RcpConfig::default()
    }

    /// icnfwd's defaults.
    pub fn tuned() -> Self {
        RcpConfig::default()
    }

    /// The configuration of `profile`.
    pub fn for_profile(profile: crate::Profile) -> Self {
        match profile {
            crate::Profile::Paper => Self::paper(),
            crate::Profile::Tuned => Self::tuned(),
        }
    }
}

/// A per-link explicit-rate law updated once per period (RCP and MIRCC).
///
/// Lets the simulator and the forwarder drive either law the same way.
pub trait LinkRateLaw {
    /// Runs one period: `arrived_bytes` is the inflated Interest volume that
    /// entered the link since the previous update, `queue_bytes` the inflated
    /// queue now, `rtt` the smoothed RTT. Returns the new stamping rate.
    fn update(
        &mut self,
        now: Timestamp,
        arrived_bytes: u64,
        queue_bytes: u64,
        rtt: Duration,
    ) -> f64;
    /// The rate stamped into Data until the next update (bit/s).
    fn rate_bps(&self) -> f64;
    /// The period the law wants to be updated at.
    fn period(&self) -> Duration;
}

/// Measures the elapsed period and the input rate for one update.
///
/// Returns `(T in seconds, y in bit/s)`, or `None` for a zero-length period.
pub(crate) fn period_and_rate(
    last: Option<Timestamp>,
    now: Timestamp,
    nominal: Duration,
    arrived_bytes: u64,
) -> Option<(f64, f64)> {
    let t = match last {
        Some(prev) => (now - prev).as_secs_f64(),
        None => nominal.as_secs_f64(),
    };
    if t <= 0.0 {
        return None;
    }
    Some((t, arrived_bytes as f64 * 8.0 / t))
}

/// The floor a link may hold its stamped rate at without overloading
/// itself: one Data of `data_bytes` per `period` (so a consumer held there
/// still hears each new rate within about a period), but never above the
/// fair share eq. 2 estimates, η·C / N̂ with N̂ = y / R: flows held at the
/// floor all send at R, so y / R counts them. Without the cap, ten flows of
/// 8000-byte Data on 2 Mbit/s were each held at one Data per 100 ms
/// (640 kbit/s, 3.2 times the link together): every Interest beyond the
/// link waited in the shaper until it was Nacked (Jain 0.46-0.75 in the
/// envelope sweep). `rate_bps` is the rate stamped over the last period,
/// `input_bps` the input y it drew.
pub fn responsive_floor_bps(
    data_bytes: Option<f64>,
    period: Duration,
    eta: f64,
    capacity_bps: f64,
    rate_bps: f64,
    input_bps: f64,
) -> f64 {
    let t = period.as_secs_f64();
    let one_per_period = match data_bytes {
        Some(b) if t > 0.0 && b.is_finite() && b > 0.0 => b * 8.0 / t,
        _ => return 0.0,
    };
    let fair = if input_bps > 0.0 && rate_bps > 0.0 {
        eta * sanitize(capacity_bps) * rate_bps / input_bps
    } else {
        f64::INFINITY
    };
    // Never above what the link hands out: with no input measured yet the
    // fair share is unknown, and one Data per period can exceed η·C on a
    // link slower than a Data per period (proptest: C = 0, 126-byte Data,
    // 10 080 bit/s).
    one_per_period.min(fair).min(eta * sanitize(capacity_bps))
}

/// The queue RCP's β·q/d term drains: what stands beyond one Data (unless
/// the shared [`crate::rate_link::chance_allowance_bytes`] replaces it).
///
/// A link at full use with paced arrivals holds about one Data waiting
/// now and then; that is the packet granularity, not congestion, and the
/// envelope's bound allows two. Eq. 1's fixed β = 0.4 charged it in full:
/// one 8000-byte Data on 10 Mbit/s at a 10 ms RTT is 0.4·q/d = 2.6 Mbit/s,
/// a quarter of C, and RCP settled at 79-87 % of the link at every point
/// with 8000-byte Data and a 10 ms RTT in the envelope sweep (22 of 108
/// points failed, 8 with this allowance). MIRCC keeps the whole queue: its
/// self-tuned β (β' = 0.1 floor) already charges it four times less, and
/// with the allowance its p95 queue grew past two Data at 5 more points.
pub fn queue_beyond_one_data(queue_bytes: u64, data_bytes: Option<f64>) -> u64 {
    match data_bytes {
        Some(b) if b.is_finite() && b > 0.0 => queue_bytes.saturating_sub(b as u64),
        _ => queue_bytes,
    }
}

/// Positive RTT in seconds, falling back to `default` for zero.
pub(crate) fn rtt_secs(rtt: Duration, default: Duration) -> f64 {
    let d = rtt.as_secs_f64();
    if d > 0.0 {
        d
    } else {
        default.as_secs_f64().max(1e-6)
    }
}

/// RCP state of one outgoing link.
#[derive(Debug, Clone)]
pub struct RcpLink {
    cfg: RcpConfig,
    capacity_bps: f64,
    rate_bps: f64,
    /// Current floor (≥ `cfg.min_rate_bps`).
    floor_bps: f64,
    last_update: Option<Timestamp>,
    last_input_bps: f64,
}

impl RcpLink {
    /// A link of `capacity_bps` (Data direction), starting at
    /// `initial_fraction · η·C`.
    pub fn new(cfg: RcpConfig, capacity_bps: f64) -> Self {
        let capacity_bps = sanitize(capacity_bps);
        let floor_bps = floor_of(&cfg, cfg.min_rate_bps);
        let rate_bps = (cfg.initial_fraction * cfg.eta * capacity_bps)
            .clamp(floor_bps, upper(&cfg, capacity_bps, floor_bps));
        RcpLink {
            cfg,
            capacity_bps,
            rate_bps,
            floor_bps,
            last_update: None,
            last_input_bps: 0.0,
        }
    }

    /// Changes the capacity (e.g. the face was reconfigured).
    pub fn set_capacity(&mut self, capacity_bps: f64) {
        self.capacity_bps = sanitize(capacity_bps);
        self.rate_bps = self.rate_bps.clamp(
            self.floor_bps,
            upper(&self.cfg, self.capacity_bps, self.floor_bps),
        );
    }

    /// Sets the floor of the stamped rate (never below
    /// `RcpConfig::min_rate_bps`); applies from the next update.
    pub fn set_floor_bps(&mut self, floor_bps: f64) {
        self.floor_bps = floor_of(&self.cfg, floor_bps);
    }

    /// The floor of the stamped rate.
    pub fn floor_bps(&self) -> f64 {
        self.floor_bps
    }

    /// Link capacity in bit/s.
    pub fn capacity_bps(&self) -> f64 {
        self.capacity_bps
    }

    /// The input rate y measured at the last update (bit/s).
    pub fn last_input_bps(&self) -> f64 {
        self.last_input_bps
    }

    /// The configuration.
    pub fn config(&self) -> &RcpConfig {
        &self.cfg
    }

    /// Sets the period T from the next update on (zero is ignored).
    pub fn set_period(&mut self, period: Duration) {
        if period > Duration::ZERO {
            self.cfg.period = period;
        }
    }

    /// When the next update is due (the first one is due at once).
    pub fn next_update(&self) -> Timestamp {
        match self.last_update {
            Some(t) => t + self.cfg.period,
            None => Timestamp::ZERO,
        }
    }
}

/// Upper clamp `η·C`, never below the floor.
fn upper(cfg: &RcpConfig, capacity_bps: f64, floor_bps: f64) -> f64 {
    (cfg.eta * capacity_bps).max(floor_bps)
}

/// A requested floor, made finite and at least `cfg.min_rate_bps`.
fn floor_of(cfg: &RcpConfig, floor_bps: f64) -> f64 {
    let min = sanitize(cfg.min_rate_bps);
    if floor_bps.is_finite() {
        floor_bps.max(min)
    } else {
        min
    }
}

/// Non-finite or negative capacities become zero instead of poisoning rates.
pub(crate) fn sanitize(x: f64) -> f64 {
    if x.is_finite() && x > 0.0 {
        x
    } else {
        0.0
    }
}

impl LinkRateLaw for RcpLink {
    fn update(
        &mut self,
        now: Timestamp,
        arrived_bytes: u64,
        queue_bytes: u64,
        rtt: Duration,
    ) -> f64 {
        let Some((t, y)) = period_and_rate(self.last_update, now, self.cfg.period, arrived_bytes)
        else {
            return self.rate_bps;
        };
        self.last_update = Some(now);
        self.last_input_bps = y;
        let c = self.capacity_bps;
        if c <= 0.0 {
            self.rate_bps = self.floor_bps;
            return self.rate_bps;
        }
        let d = rtt_secs(rtt, self.cfg.default_rtt);
        let q_bits = queue_bytes as f64 * 8.0;
        let gain = (t / d).min(1.0);
        let feedback = self.cfg.alpha * (self.cfg.eta * c - y) - self.cfg.beta * q_bits / d;
        let next = self.rate_bps * (1.0 + gain * feedback / c);
        self.rate_bps = if next.is_finite() {
            next.clamp(self.floor_bps, upper(&self.cfg, c, self.floor_bps))
        } else {
            self.floor_bps
        };
        self.rate_bps
    }

    fn rate_bps(&self) -> f64 {
        self.rate_bps
    }

    fn period(&self) -> Duration {
        self.cfg.period
    }
}

/// Parameters of the explicit-rate consumer (RCP, single-path MIRCC).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct RateConsumerConfig {
    /// Rate used before the first stamped rate arrives (bit/s of Data).
    pub initial_rate_bps: f64,
    /// Data size assumed before the first Data is measured (bytes).
    pub initial_data_size_bytes: f64,
    /// EWMA gain of the Data-size estimate.
    pub data_size_gain: f64,
    /// Safety bound on Interests in flight.
    pub max_outstanding: u32,
}

impl Default for RateConsumerConfig {
    fn default() -> Self {
        RateConsumerConfig {
            initial_rate_bps: 80_000.0,
            initial_data_size_bytes: 1_100.0,
            data_size_gain: 0.125,
            max_outstanding: 10_000,
        }
    }
}

/// EWMA of Data wire sizes, used to deflate bit rates to Interest rates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DataSizeEstimate {
    bytes: f64,
    gain: f64,
    seeded: bool,
}

impl DataSizeEstimate {
    /// Starts at `initial_bytes` until the first sample replaces it.
    pub fn new(initial_bytes: f64, gain: f64) -> Self {
        DataSizeEstimate {
            bytes: initial_bytes.max(1.0),
            gain: gain.clamp(0.0, 1.0),
            seeded: false,
        }
    }
    /// Folds in one Data size; zero sizes (unknown) are ignored.
    pub fn sample(&mut self, bytes: u32) {
        if bytes == 0 {
            return;
        }
        let b = f64::from(bytes);
        if self.seeded {
            self.bytes += self.gain * (b - self.bytes);
        } else {
            self.bytes = b;
            self.seeded = true;
        }
    }
    /// Current estimate in bytes (≥ 1).
    pub fn bytes(&self) -> f64 {
        self.bytes
    }
}

/// Consumer of RCP (and single-path MIRCC): sends at the minimum rate
/// stamped along the path, deflated to Interests/s by the Data size.
///
/// Rates from Data are applied immediately, without smoothing, since routers
/// already smooth (MIRCC §3.1). A Nack's rate covers only the hops up to
/// the one that refused the Interest (MIRCC §3), so it only lowers a rate
/// the network already stamped. Before any stamped rate, though, the first
/// Nack's rate replaces `initial_rate_bps`: that is only a guess, and at
/// large Data a few kbit/s means one Interest per second, so a consumer
/// whose first Interest was refused would wait that long to retry
/// (docs/algorithms.md §2.3, "Start-up").
#[derive(Debug, Clone)]
pub struct RateConsumer {
    cfg: RateConsumerConfig,
    rate: StampedRate,
    data_size: DataSizeEstimate,
}

/// A consumer's rate from the network: a configured guess until the first
/// stamped rate replaces it; after that a Data's rate is applied as it is
/// and a Nack's only when it is lower (it covers part of the path).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct StampedRate {
    bps: f64,
    /// Whether `bps` came from the network (a Data or a Nack).
    stamped: bool,
}

impl StampedRate {
    /// The guess `initial_bps` (sanitised), not yet stamped.
    pub(crate) fn guess(initial_bps: f64) -> Self {
        StampedRate {
            bps: sanitize(initial_bps),
            stamped: false,
        }
    }
    pub(crate) fn bps(&self) -> f64 {
        self.bps
    }
    /// A Data's stamped rate.
    pub(crate) fn on_data(&mut self, r: f64) {
        if r.is_finite() && r >= 0.0 {
            self.bps = r;
            self.stamped = true;
        }
    }
    /// A Nack's stamped rate.
    pub(crate) fn on_nack(&mut self, r: f64) {
        if r.is_finite() && r >= 0.0 && (r < self.bps || !self.stamped) {
            self.bps = r;
            self.stamped = true;
        }
    }
}

impl RateConsumer {
    /// A consumer starting at `initial_rate_bps`.
    pub fn new(cfg: RateConsumerConfig) -> Self {
        RateConsumer {
            rate: StampedRate::guess(cfg.initial_rate_bps),
            data_size: DataSizeEstimate::new(cfg.initial_data_size_bytes, cfg.data_size_gain),
            cfg,
        }
    }
    /// The current Data rate target (bit/s).
    pub fn rate_bps(&self) -> f64 {
        self.rate.bps()
    }
    /// The Data-size estimate (bytes).
    pub fn data_size_bytes(&self) -> f64 {
        self.data_size.bytes()
    }
    /// The current Interest rate (Interests/s).
    pub fn interests_per_sec(&self) -> f64 {
        self.rate.bps() / (8.0 * self.data_size.bytes())
    }
}

impl ConsumerLaw for RateConsumer {
    fn on_data(&mut self, _now: Timestamp, fb: &DataFeedback) {
        self.data_size.sample(fb.data_size_bytes);
        if let Some(r) = fb.primary_rate_bps {
            self.rate.on_data(r);
        }
    }

    fn on_nack(&mut self, _now: Timestamp, fb: &NackFeedback) {
        if let Some(r) = fb.primary_rate_bps {
            self.rate.on_nack(r);
        }
    }

    fn limit(&self) -> SendLimit {
        SendLimit::Rate {
            interests_per_sec: self.interests_per_sec(),
            max_outstanding: self.cfg.max_outstanding,
        }
    }
}

#[cfg(test)]
#[path = "rcp_tests.rs"]
mod tests;
