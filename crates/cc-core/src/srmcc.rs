//! SRMCC: single-rate multicast congestion control (Duan, Ni, Zhu, Wang,
//! Future Internet 2022; docs/algorithms.md §4).
//!
//! Receivers periodically send an MCC message (group, max/min queue
//! occupancy, min fair-share rate) up the multicast tree; each multicast tree
//! node (MTN) folds in its own EWMA queue occupancy (eq. 1, α = 0.9) and its
//! fair-share estimate `C_i / N_i(t)`, aggregates the messages of its
//! children per group in its MCC table and forwards one message upstream per
//! period ([`MccTable`], [`FairShareEstimator`], [`ReceiverFeedback`]). The
//! source adapts its rate once per cycle (4 × RTT) with Algorithm 1
//! ([`SrmccSource`]):
//!
//! * congestion state by eq. 5 with Oth1 = 0.25, Oth2 = 0.5
//!   ([`congestion_state`]);
//! * state 0 doubles the rate (eq. 6); states 1 and 2 apply eq. 3 with the
//!   weights of eqs. 7 and 8 ([`weight`]); state 3 halves the rate when it is
//!   at or above the fair share and doubles it otherwise (eq. 9); the result
//!   is capped by the fair share (eq. 4) ([`rate_for_occupancy`]);
//! * `Omax` gives `Rmin`, `Omin` gives `Rmax`, and the new rate is
//!   `Rmin + γ (Rmax − Rmin)` with γ = 0.15 (eq. 10, [`select_rate`]).
//!
//! Readings (docs/algorithms.md §4.4): eq. 9a is implemented literally (the `min`
//! with `R/2` always halves); eq. 4 is also applied in state 0 by default
//! (`cap_state0_by_fair_share`), since the uncapped doubling overshoots;
//! `Omin` is the literal minimum over the tree; the MCC table is re-seeded
//! from the node's own values after each emission; `N_i(t)` counts groups
//! plus distinct sampled flows; the cycle is 4 × the configured or measured
//! RTT.

mod table;

pub use table::{
    FairShareEstimator, MccError, MccMessage, MccTable, OccupancyAverage, ReceiverFeedback,
};

use crate::rcp::sanitize;
use crate::time::{Duration, Timestamp};

/// Parameters of SRMCC.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct SrmccConfig {
    /// Light/moderate occupancy threshold Oth1.
    pub oth1: f64,
    /// Moderate/heavy occupancy threshold Oth2.
    pub oth2: f64,
    /// Rate selection factor γ (eq. 10).
    pub gamma: f64,
    /// EWMA weight α on the current occupancy sample (eq. 1).
    pub occupancy_alpha: f64,
    /// Initial multicast rate (bit/s).
    pub initial_rate_bps: f64,
    /// Adaptation cycle in RTTs.
    pub cycle_rtts: f64,
    /// RTT used until the caller reports one.
    pub default_rtt: Duration,
    /// Apply the fair-share cap (eq. 4) in state 0 too.
    pub cap_state0_by_fair_share: bool,
    /// Floor of the source rate, so halving never reaches zero.
    pub min_rate_bps: f64,
    /// Most groups in an MCC table.
    pub max_groups: usize,
    /// Most distinct flows a fair-share estimator remembers per window.
    pub max_sampled_flows: usize,
    /// Probability that a packet is sampled for the flow count.
    pub flow_sample_probability: f64,
    /// Qmax of eq. 1 (qocc = queue length / Qmax), packets: the paper's 50
    /// (Table 1) in both profiles; tree nodes apply it, capped by their
    /// queue bound. icnfwd ran 100 before; against 50 it measured 8 % fewer
    /// holes for 2 % less rate (docs/deviations.md) and went back.
    pub queue_max_packets: u64,
}

impl Default for SrmccConfig {
    fn default() -> Self {
        SrmccConfig {
            oth1: 0.25,
            oth2: 0.5,
            gamma: 0.15,
            occupancy_alpha: 0.9,
            initial_rate_bps: 50_000.0,
            cycle_rtts: 4.0,
            default_rtt: Duration::from_millis(100),
            cap_state0_by_fair_share: true,
            min_rate_bps: 1_000.0,
            max_groups: 1024,
            max_sampled_flows: 4096,
            flow_sample_probability: 0.01,
            queue_max_packets: 50,
        }
    }
}

impl SrmccConfig {
    /// Table 1 and Algorithm 1 of the paper, Qmax = 50 packets (the
    /// state-0 cap by the fair share is docs/algorithms.md §4.4 item 2's
    /// reading and stays).
    pub fn paper() -> Self {
        SrmccConfig {
            queue_max_packets: 50,
            ..SrmccConfig::default()
        }
    }

    /// icnfwd's defaults (the same as the paper's since Qmax went back to
    /// 50; the cycle follows the measured RTT in both).
    pub fn tuned() -> Self {
        SrmccConfig::default()
    }

    /// The configuration of `profile`.
    pub fn for_profile(profile: crate::Profile) -> Self {
        match profile {
            crate::Profile::Paper => Self::paper(),
            crate::Profile::Tuned => Self::tuned(),
        }
    }
}

/// The four congestion states of eq. 5.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CongestionState {
    /// O = 0.
    NoOccupancy = 0,
    /// 0 < O ≤ Oth1.
    Light = 1,
    /// Oth1 < O ≤ Oth2.
    Moderate = 2,
    /// O > Oth2.
    Heavy = 3,
}

/// Eq. 5.
pub fn congestion_state(occupancy: f64, cfg: &SrmccConfig) -> CongestionState {
    if occupancy <= 0.0 || occupancy.is_nan() {
        CongestionState::NoOccupancy
    } else if occupancy <= cfg.oth1 {
        CongestionState::Light
    } else if occupancy <= cfg.oth2 {
        CongestionState::Moderate
    } else {
        CongestionState::Heavy
    }
}

/// The weight `w` and threshold `Oth` of eq. 3 in each state: eq. 7 in
/// state 1, eq. 8 in state 2, `w = 1, Oth = Oth2` in state 3, none in 0.
pub fn weight(occupancy: f64, cfg: &SrmccConfig) -> Option<(f64, f64)> {
    let o = occupancy;
    match congestion_state(o, cfg) {
        CongestionState::NoOccupancy => None,
        CongestionState::Light => Some((1.0 - 0.75 * (o * o) / (cfg.oth1 * cfg.oth1), cfg.oth1)),
        CongestionState::Moderate => {
            Some((0.25 * (o - cfg.oth2) / (cfg.oth1 - cfg.oth2), cfg.oth2))
        }
        CongestionState::Heavy => Some((1.0, cfg.oth2)),
    }
}

/// The rate one occupancy value asks for (Algorithm 1 body, eqs. 3-4, 6,
/// 9): `rate_bps` is R(t), `fair_bps` is R_fair-shared.
pub fn rate_for_occupancy(occupancy: f64, rate_bps: f64, fair_bps: f64, cfg: &SrmccConfig) -> f64 {
    let o = occupancy.clamp(0.0, 1.0);
    let r = rate_bps;
    let cap = |x: f64| x.min(fair_bps);
    match (congestion_state(o, cfg), weight(o, cfg)) {
        (CongestionState::NoOccupancy, _) | (_, None) => {
            let doubled = 2.0 * r; // eq. 6
            if cfg.cap_state0_by_fair_share {
                cap(doubled)
            } else {
                doubled
            }
        }
        (CongestionState::Heavy, Some((w, oth))) => {
            let cal = if r >= fair_bps {
                (r * (1.0 + w * (oth - o))).min(0.5 * r) // eq. 9a
            } else {
                2.0 * r // eq. 9b
            };
            cap(cal)
        }
        (_, Some((w, oth))) => cap(r * (1.0 + w * (oth - o))), // eqs. 3-4
    }
}

/// Eq. 10: `Rmin + γ (Rmax − Rmin)`.
pub fn select_rate(r_min_bps: f64, r_max_bps: f64, gamma: f64) -> f64 {
    r_min_bps + gamma * (r_max_bps - r_min_bps)
}

/// Algorithm 1 for one cycle: the new rate from R(t) and one MCC message.
pub fn adapt_rate(rate_bps: f64, msg: &MccMessage, cfg: &SrmccConfig) -> f64 {
    let fair = sanitize(msg.min_fair_share_bps);
    let r_min = rate_for_occupancy(msg.max_occupancy, rate_bps, fair, cfg);
    let r_max = rate_for_occupancy(msg.min_occupancy, rate_bps, fair, cfg);
    let r = select_rate(r_min, r_max, cfg.gamma);
    if r.is_finite() {
        r.max(cfg.min_rate_bps)
    } else {
        cfg.min_rate_bps
    }
}

/// The multicast source's rate controller.
#[derive(Debug, Clone)]
pub struct SrmccSource {
    cfg: SrmccConfig,
    rate_bps: f64,
    rtt: Duration,
    latest: Option<MccMessage>,
    last_adapt: Option<Timestamp>,
}

impl SrmccSource {
    /// A source sending at `initial_rate_bps`.
    pub fn new(cfg: SrmccConfig) -> Self {
        SrmccSource {
            rate_bps: sanitize(cfg.initial_rate_bps).max(cfg.min_rate_bps),
            rtt: cfg.default_rtt,
            cfg,
            latest: None,
            last_adapt: None,
        }
    }

    /// Reports the RTT that sets the cycle (e.g. to the farthest receiver).
    pub fn set_rtt(&mut self, rtt: Duration) {
        if !rtt.is_zero() {
            self.rtt = rtt;
        }
    }

    /// The adaptation cycle (cycle_rtts × RTT).
    pub fn cycle(&self) -> Duration {
        Duration::from_secs_f64(self.rtt.as_secs_f64() * self.cfg.cycle_rtts.max(0.0))
    }

    /// An MCC message reached the source; the latest one drives the next
    /// adaptation.
    pub fn on_feedback(&mut self, _now: Timestamp, msg: MccMessage) {
        self.latest = Some(msg);
    }

    /// When the next adaptation is due.
    pub fn poll_timeout(&self) -> Timestamp {
        self.last_adapt
            .map_or(Timestamp::ZERO, |t| t + self.cycle())
    }

    /// Runs Algorithm 1 if a cycle has elapsed and feedback is available;
    /// returns the new rate.
    pub fn poll(&mut self, now: Timestamp) -> Option<f64> {
        if now < self.poll_timeout() {
            return None;
        }
        let msg = self.latest.take()?;
        self.last_adapt = Some(now);
        self.rate_bps = adapt_rate(self.rate_bps, &msg, &self.cfg);
        Some(self.rate_bps)
    }

    /// Current sending rate (bit/s).
    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }
}

#[cfg(test)]
mod tests;
