//! MIRCC stamping rate, eqs. 2-5 (single class) and 6-16 (dual class).

use crate::rcp::{period_and_rate, rtt_secs, sanitize, LinkRateLaw};
use crate::time::{Duration, Timestamp};

/// Parameters of the MIRCC link law.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct MirccConfig {
    /// β', the floor of the self-tuned β(t) (§3.1.1).
    pub beta_min: f64,
    /// EWMA weight α on the new base/excess sample (footnote 3).
    pub ewma_alpha: f64,
    /// Target utilisation η.
    pub eta: f64,
    /// Update period T (§3.1.2: as short as possible, at most one RTT).
    pub period: Duration,
    /// RTT used before any sample.
    pub default_rtt: Duration,
    /// Gain of the per-packet RTT EWMA d(t).
    pub rtt_gain: f64,
    /// Gain of the Interest/Data size EWMAs behind the inflation factor.
    pub inflation_gain: f64,
    /// Inflation factor assumed before both sizes were sampled.
    pub initial_inflation: f64,
    /// Floor of both stamped rates; keeps N̂ finite (docs/algorithms.md §2.6 item 1).
    /// The caller may raise the primary floor at run time
    /// ([`MirccRate::set_floor_bps`]).
    pub min_rate_bps: f64,
    /// Tuned deviation from eq. 11 (`true` by default): the secondary class
    /// lives on Cs = C − yp/η instead of C − yp, so both classes together
    /// aim at η·C and the headroom η leaves is kept. With eq. 11 as written
    /// the secondary target η·(C − yp) adds η(1 − η)·C on top of the
    /// primary's η·C: 99.75 % of C at η = 0.95, and on the testbed dumbbell
    /// (1200-byte Data) the first hop's shaper Nacked 570 Interests in 16 s
    /// that the consumers' secondary rate had sent into a full link. A
    /// path no primary flow uses keeps Cs = C either way.
    pub secondary_keeps_headroom: bool,
    /// Tuned start of the secondary rate (`true` by default): Rs starts at
    /// its floor rather than at η·C like Rp (see [`MirccRate::new`]). The
    /// paper gives no start; `false` starts both classes at η·C.
    pub secondary_starts_at_floor: bool,
}

impl Default for MirccConfig {
    fn default() -> Self {
        MirccConfig {
            beta_min: 0.1,
            ewma_alpha: 0.5,
            eta: 0.95,
            period: Duration::from_millis(100),
            default_rtt: Duration::from_millis(100),
            rtt_gain: 0.125,
            inflation_gain: 0.125,
            initial_inflation: 1.0,
            min_rate_bps: 10_000.0,
            secondary_keeps_headroom: true,
            secondary_starts_at_floor: true,
        }
    }
}

impl MirccConfig {
    /// §3-4 as printed: eq. 11's Cs = C − yp and both classes starting at
    /// η·C (the paper names no start rate; Rp's is RCP's).
    pub fn paper() -> Self {
        MirccConfig {
            secondary_keeps_headroom: false,
            secondary_starts_at_floor: false,
            ..MirccConfig::default()
        }
    }

    /// icnfwd's defaults: Cs keeps η's headroom, Rs starts at its floor.
    pub fn tuned() -> Self {
        MirccConfig::default()
    }

    /// The configuration of `profile`.
    pub fn for_profile(profile: crate::Profile) -> Self {
        match profile {
            crate::Profile::Paper => Self::paper(),
            crate::Profile::Tuned => Self::tuned(),
        }
    }
}

/// Recursive state of one class (eqs. 2-5 or their class versions).
#[derive(Debug, Clone, Copy, PartialEq)]
struct ClassState {
    rate_bps: f64,
    base_ewma: f64,
    excess_ewma: f64,
    prev_input_bps: f64,
    seeded: bool,
}

impl ClassState {
    fn new(rate_bps: f64) -> Self {
        ClassState {
            rate_bps,
            base_ewma: 0.0,
            excess_ewma: 0.0,
            prev_input_bps: 0.0,
            seeded: false,
        }
    }

    /// One period of eqs. 2-5 on capacity `cap` (C, or Cs for the secondary
    /// class, which also floors N̂ at 1 per eq. 12); the result is clamped
    /// to `[floor, ceiling]`.
    #[allow(clippy::too_many_arguments)]
    fn step(
        &mut self,
        cfg: &MirccConfig,
        cap: f64,
        y: f64,
        q_bits: f64,
        d: f64,
        n_hat_floor_one: bool,
        floor: f64,
        ceiling: f64,
    ) -> f64 {
        let r_prev = self.rate_bps.max(floor);
        let mut n_hat = cap.max(y) / r_prev;
        if n_hat_floor_one {
            n_hat = n_hat.max(1.0);
        }
        let beta = if y > 0.0 {
            cfg.beta_min.max((y - self.prev_input_bps) / y)
        } else {
            cfg.beta_min
        };
        let (base, excess) = if n_hat > 0.0 {
            (
                (cfg.eta * cap - beta * q_bits / d) / n_hat,
                r_prev - y / n_hat,
            )
        } else {
            // C = 0 and y = 0: a dead link offers nothing.
            (0.0, 0.0)
        };
        if self.seeded {
            let a = cfg.ewma_alpha;
            self.base_ewma = (1.0 - a) * self.base_ewma + a * base;
            self.excess_ewma = (1.0 - a) * self.excess_ewma + a * excess;
        } else {
            self.base_ewma = base;
            self.excess_ewma = excess;
            self.seeded = true;
        }
        self.prev_input_bps = y;
        let r = self.base_ewma + self.excess_ewma;
        let hi = ceiling.max(floor);
        self.rate_bps = if r.is_finite() {
            r.clamp(floor, hi)
        } else {
            floor
        };
        self.rate_bps
    }
}

/// The MIRCC stamping rates of one link: Rp (eqs. 6-10; identical to the
/// single-class R of eqs. 2-5 when there is no secondary traffic) and Rs
/// (eqs. 11-16).
#[derive(Debug, Clone)]
pub struct MirccRate {
    cfg: MirccConfig,
    capacity_bps: f64,
    primary: ClassState,
    secondary: ClassState,
    /// Floor of the primary rate (≥ `cfg.min_rate_bps`).
    primary_floor_bps: f64,
    last_update: Option<Timestamp>,
}

impl MirccRate {
    /// A link of `capacity_bps` (Data direction). Rp starts at η·C, Rs at
    /// its floor.
    ///
    /// Rs lives on Cs = C − yp (eq. 11), which nothing has measured before
    /// the first period ends; a start at η·C told every consumer of a new
    /// link to send primary *and* secondary Interests at η·C each, twice the
    /// link, for the whole first period. On the testbed arrival scenario
    /// (10 Mbit/s, 8 KB Data) that left 20-29 Interests (130-190 ms)
    /// standing in the first hop's shaper, and they took 2 s to drain. From
    /// its floor Rs grows by about half per period while Cs stays free.
    pub fn new(cfg: MirccConfig, capacity_bps: f64) -> Self {
        let capacity_bps = sanitize(capacity_bps);
        let start = (cfg.eta * capacity_bps).max(cfg.min_rate_bps);
        MirccRate {
            cfg,
            capacity_bps,
            primary: ClassState::new(start),
            secondary: ClassState::new(if cfg.secondary_starts_at_floor {
                cfg.min_rate_bps
            } else {
                start
            }),
            primary_floor_bps: cfg.min_rate_bps,
            last_update: None,
        }
    }

    /// Sets the floor of the primary (single-class) rate, never below
    /// `MirccConfig::min_rate_bps`; applies from the next update. The
    /// secondary rate keeps the configured floor: primary Interests already
    /// carry the feedback a flow needs.
    pub fn set_floor_bps(&mut self, floor_bps: f64) {
        let min = self.cfg.min_rate_bps;
        self.primary_floor_bps = if floor_bps.is_finite() {
            floor_bps.max(min)
        } else {
            min
        };
    }

    /// The floor of the primary rate.
    pub fn floor_bps(&self) -> f64 {
        self.primary_floor_bps
    }

    /// Runs one period with inflated byte counts: `primary_bytes` and
    /// `secondary_bytes` entered the shaper since the last update,
    /// `queue_bytes` are queued now (all classes). Returns `(Rp, Rs)`.
    pub fn update_dual(
        &mut self,
        now: Timestamp,
        primary_bytes: u64,
        secondary_bytes: u64,
        queue_bytes: u64,
        rtt: Duration,
    ) -> (f64, f64) {
        let Some((t, yp)) = period_and_rate(self.last_update, now, self.cfg.period, primary_bytes)
        else {
            return self.rates_bps();
        };
        let ys = secondary_bytes as f64 * 8.0 / t;
        self.last_update = Some(now);
        let d = rtt_secs(rtt, self.cfg.default_rtt);
        let q = queue_bytes as f64 * 8.0;
        let c = self.capacity_bps;
        let ceiling = self.cfg.eta * c;
        let (pf, sf) = (self.primary_floor_bps, self.cfg.min_rate_bps);
        self.primary
            .step(&self.cfg, c, yp, q, d, false, pf, ceiling);
        let cs = if self.cfg.secondary_keeps_headroom && self.cfg.eta > 0.0 {
            (c - yp / self.cfg.eta).max(0.0)
        } else {
            (c - yp).max(0.0) // eq. 11
        };
        self.secondary
            .step(&self.cfg, cs, ys, q, d, true, sf, ceiling);
        self.rates_bps()
    }

    /// `(Rp, Rs)` stamped until the next update (bit/s).
    pub fn rates_bps(&self) -> (f64, f64) {
        (self.primary.rate_bps, self.secondary.rate_bps)
    }

    /// Primary (or single-class) rate.
    pub fn primary_bps(&self) -> f64 {
        self.primary.rate_bps
    }

    /// Secondary rate.
    pub fn secondary_bps(&self) -> f64 {
        self.secondary.rate_bps
    }

    /// Link capacity (bit/s).
    pub fn capacity_bps(&self) -> f64 {
        self.capacity_bps
    }

    /// Changes the capacity; rates are re-clamped.
    pub fn set_capacity(&mut self, capacity_bps: f64) {
        self.capacity_bps = sanitize(capacity_bps);
        let eta_c = self.cfg.eta * self.capacity_bps;
        for (s, floor) in [
            (&mut self.primary, self.primary_floor_bps),
            (&mut self.secondary, self.cfg.min_rate_bps),
        ] {
            s.rate_bps = s.rate_bps.clamp(floor, eta_c.max(floor));
        }
    }

    /// The configuration.
    pub fn config(&self) -> &MirccConfig {
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

impl LinkRateLaw for MirccRate {
    /// Single-class MIRCC (eqs. 2-5): every Interest counts as primary.
    fn update(
        &mut self,
        now: Timestamp,
        arrived_bytes: u64,
        queue_bytes: u64,
        rtt: Duration,
    ) -> f64 {
        self.update_dual(now, arrived_bytes, 0, queue_bytes, rtt).0
    }

    fn rate_bps(&self) -> f64 {
        self.primary.rate_bps
    }

    fn period(&self) -> Duration {
        self.cfg.period
    }
}

/// Data/Interest inflation factor of one link (§3.1.1): the ratio of the
/// EWMA of input Data sizes to the EWMA of output Interest sizes.
///
/// Beside that factor (which inflates y(t) and q(t) for the rate law) it
/// keeps a *booking* factor for the Interest shaper from a decaying peak of
/// the Data sizes: it jumps to a larger Data at once and decays to the
/// EWMA at the EWMA's gain. Deviation from the paper, which books with the
/// average: an average that starts low (a consumer's first Data is often
/// small, e.g. RDR metadata) or lags a rise in Data size underbooks the
/// link, the shaper releases Interests faster than their Data can return
/// and the excess queues at the *upstream* node, where this link's law
/// cannot see it. Measured on the testbed dumbbell (20 Mbit/s, 8 KB Data
/// after a ~300-byte metadata Data): 23-30 Data queued at the upstream
/// router within 100 ms of start-up, a standing queue whenever the rates
/// then settled at C.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Inflation {
    interest_bytes: f64,
    data_bytes: f64,
    data_peak_bytes: f64,
    gain: f64,
    initial: f64,
}

impl Inflation {
    /// `initial` is used until both an Interest and a Data were sampled.
    pub fn new(gain: f64, initial: f64) -> Self {
        Inflation {
            interest_bytes: 0.0,
            data_bytes: 0.0,
            data_peak_bytes: 0.0,
            gain: gain.clamp(0.0, 1.0),
            initial: if initial.is_finite() && initial > 0.0 {
                initial
            } else {
                1.0
            },
        }
    }
    fn fold(acc: &mut f64, gain: f64, bytes: u32) {
        if bytes == 0 {
            return;
        }
        let b = f64::from(bytes);
        if *acc == 0.0 {
            *acc = b;
        } else {
            *acc += gain * (b - *acc);
        }
    }
    /// One Interest sent on the link.
    pub fn on_interest(&mut self, bytes: u32) {
        Self::fold(&mut self.interest_bytes, self.gain, bytes);
    }
    /// One Data received on the link.
    pub fn on_data(&mut self, bytes: u32) {
        Self::fold(&mut self.data_bytes, self.gain, bytes);
        if bytes == 0 {
            return;
        }
        let decayed = self.data_peak_bytes - self.gain * (self.data_peak_bytes - self.data_bytes);
        self.data_peak_bytes = decayed.max(f64::from(bytes));
    }
    /// The EWMA of the Data received on the link, bytes (`None` before the
    /// first Data).
    pub fn data_bytes(&self) -> Option<f64> {
        (self.data_bytes > 0.0).then_some(self.data_bytes)
    }
    /// The EWMA of the Interests sent on the link, bytes (`None` before the
    /// first Interest).
    pub fn interest_bytes(&self) -> Option<f64> {
        (self.interest_bytes > 0.0).then_some(self.interest_bytes)
    }
    /// The current factor ι (≥ a tiny positive value).
    pub fn factor(&self) -> f64 {
        if self.interest_bytes > 0.0 && self.data_bytes > 0.0 {
            self.data_bytes / self.interest_bytes
        } else {
            self.initial
        }
    }
    /// The factor the Interest shaper books the returning Data with: the
    /// decaying peak of the Data sizes over the Interest EWMA, so a rise in
    /// Data size is booked at once (see the type's doc); `initial` before
    /// both sizes were sampled.
    pub fn booking_factor(&self) -> f64 {
        if self.interest_bytes > 0.0 && self.data_peak_bytes > 0.0 {
            self.data_peak_bytes / self.interest_bytes
        } else {
            self.initial
        }
    }
    /// `bytes × ι`, rounded, saturating.
    pub fn inflate(&self, bytes: u64) -> u64 {
        let v = bytes as f64 * self.factor();
        if v >= u64::MAX as f64 {
            u64::MAX
        } else {
            v as u64
        }
    }
}

#[cfg(test)]
#[path = "rate_tests.rs"]
mod tests;
