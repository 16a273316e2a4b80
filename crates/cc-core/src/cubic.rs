//! CUBIC consumer window, as ndn-tools' `ndnget` (`pipeline-interests-cubic`).
//!
//! RFC 8312 as ndnget applies it per Data (docs/algorithms.md §6.2):
//! * slow start `cwnd += 1` while `cwnd < ssthresh`;
//! * congestion avoidance, with t the time since the last decrease and
//!   `K = ∛(w_max·(1−β)/C)` (RFC 8312 eq. 2):
//!   `W_cubic = C·(t−K)³ + w_max` (eq. 1),
//!   `W_est = w_max·β + 3(1−β)/(1+β) · t/SRTT` (eq. 4),
//!   `cwnd += max(0, max(W_cubic, W_est) − cwnd)/cwnd`;
//! * decrease (marked Data unless `ignore_marks`, timeout, congestion Nack;
//!   once per RTT, see [`crate::aimd::CwaGate`]): `w_max = cwnd` (or `cwnd·(1+β)/2` with
//!   fast convergence when below the previous `w_max`),
//!   `ssthresh = max(init_cwnd, cwnd·β)`, `cwnd = ssthresh`;
//! * defaults C = 0.4, β = 0.7, fast convergence off, init_cwnd 2.
//!
//! Deviations: the start time (t origin before any decrease) is the first
//! event the law sees; without an RTT sample `W_est` is not used; the window
//! is clamped to `[min_window, max_window]`; the once-per-RTT gate uses send
//! times (see [`crate::aimd`]).

use crate::aimd::WindowStats;
use crate::rtt::{RttConfig, RttEstimator};
use crate::time::Timestamp;
use crate::window::{window_consumer_law, WindowCore, WindowLaw, WindowPacing};

/// CUBIC parameters; defaults are ndnget's.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct CubicConfig {
    /// Initial window, Interests (also the ssthresh floor).
    pub init_cwnd: f64,
    /// Initial slow-start threshold.
    pub init_ssthresh: f64,
    /// CUBIC scaling constant C.
    pub c: f64,
    /// Multiplicative decrease factor β.
    pub beta: f64,
    /// RFC 8312 fast convergence.
    pub fast_convergence: bool,
    /// Let every congestion signal decrease.
    pub disable_cwa: bool,
    /// Treat marked Data as unmarked.
    pub ignore_marks: bool,
    /// Lower bound of the window.
    pub min_window: f64,
    /// Upper bound of the window.
    pub max_window: f64,
    /// Ceiling that follows the path: at most `max(floor, 2 × measured
    /// bandwidth-delay product)` Interests, below `max_window` (`None`:
    /// `max_window` alone; [`crate::window`]'s `PathBdp`).
    pub path_window_floor: Option<f64>,
    /// RTO estimator parameters.
    pub rtt: RttConfig,
    /// Spread the window's Interests over the RTT (`None`: unpaced, as
    /// ndnget; the tuned PCON consumer paces, [`crate::pcon::pcon_pacing`]).
    pub pacing: Option<WindowPacing>,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            init_cwnd: 2.0,
            init_ssthresh: f64::INFINITY,
            c: 0.4,
            beta: 0.7,
            fast_convergence: false,
            disable_cwa: false,
            ignore_marks: false,
            min_window: 1.0,
            max_window: 1_000_000.0,
            path_window_floor: None,
            rtt: RttConfig::default(),
            pacing: None,
        }
    }
}

/// ndnget's CUBIC window.
#[derive(Debug, Clone)]
pub struct Cubic {
    cfg: CubicConfig,
    ssthresh: f64,
    w_max: f64,
    /// Origin of the CUBIC time t (not the gate's last decrease: it starts
    /// at the first event).
    last_decrease: Option<Timestamp>,
    core: WindowCore,
}

impl Cubic {
    /// Creates the law with `cwnd = init_cwnd`.
    pub fn new(cfg: CubicConfig) -> Self {
        let mut c = Cubic {
            cfg,
            ssthresh: cfg.init_ssthresh,
            w_max: 0.0,
            last_decrease: None,
            core: WindowCore::new(cfg.init_cwnd, cfg.disable_cwa, cfg.ignore_marks, cfg.rtt)
                .with_pacing(cfg.pacing)
                .with_path_ceiling(cfg.path_window_floor),
        };
        c.clamp();
        c
    }

    /// Congestion window, Interests.
    pub fn cwnd(&self) -> f64 {
        self.core.cwnd
    }

    /// Slow-start threshold.
    pub fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    /// Window before the last decrease.
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// RTT/RTO estimator fed by this law.
    pub fn rtt(&self) -> &RttEstimator {
        &self.core.rtt
    }

    /// Counters.
    pub fn stats(&self) -> WindowStats {
        self.core.stats
    }

    fn clamp(&mut self) {
        self.core.clamp(self.cfg.min_window, self.cfg.max_window);
    }
}

impl WindowLaw for Cubic {
    fn in_slow_start(&self) -> bool {
        self.core.cwnd < self.ssthresh
    }

    fn touch(&mut self, now: Timestamp) {
        if self.last_decrease.is_none() {
            self.last_decrease = Some(now);
        }
    }

    fn increase(&mut self, now: Timestamp) {
        let cwnd = self.core.cwnd;
        if cwnd < self.ssthresh {
            self.core.cwnd += 1.0;
        } else {
            if self.w_max < self.cfg.init_cwnd {
                self.w_max = cwnd;
            }
            let t = now
                .saturating_since(self.last_decrease.unwrap_or(now))
                .as_secs_f64();
            let beta = self.cfg.beta;
            let k = libm::cbrt(self.w_max * (1.0 - beta) / self.cfg.c);
            let w_cubic = self.cfg.c * libm::pow(t - k, 3.0) + self.w_max;
            let mut target = w_cubic;
            if let Some(srtt) = self
                .core
                .rtt
                .srtt()
                .map(|d| d.as_secs_f64())
                .filter(|s| *s > 0.0)
            {
                let w_est = self.w_max * beta + 3.0 * (1.0 - beta) / (1.0 + beta) * (t / srtt);
                target = target.max(w_est);
            }
            let inc = (target - cwnd).max(0.0);
            self.core.cwnd += inc / cwnd.max(1e-9);
        }
        self.clamp();
    }

    fn decrease(&mut self, now: Timestamp) {
        let beta = self.cfg.beta;
        let cwnd = self.core.cwnd;
        self.w_max = if self.cfg.fast_convergence && cwnd < self.w_max {
            cwnd * (1.0 + beta) / 2.0
        } else {
            cwnd
        };
        self.ssthresh = (cwnd * beta).max(self.cfg.init_cwnd);
        self.core.cwnd = self.ssthresh;
        self.last_decrease = Some(now);
        self.clamp();
    }
}

window_consumer_law!(Cubic);

impl Default for Cubic {
    fn default() -> Self {
        Cubic::new(CubicConfig::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::law::{ConsumerLaw, SendLimit};
    use crate::time::Duration;
    use crate::window::test_events::{apply, data};
    use proptest::prelude::*;

    #[test]
    fn decrease_then_cubic_growth_matches_rfc8312_formulas() {
        let mut c = Cubic::default();
        c.on_interest_sent(Timestamp::ZERO, false);
        for i in 1..=18 {
            c.on_data(Timestamp::from_millis(i), &data(100, 0));
        }
        assert_eq!(c.cwnd(), 20.0);
        let t0 = Timestamp::from_millis(1_000);
        c.on_data(t0, &data(100, 1));
        // w_max = 20, ssthresh = cwnd = 14.
        assert_eq!((c.w_max(), c.ssthresh()), (20.0, 20.0 * 0.7));
        assert!((c.cwnd() - 14.0).abs() < 1e-12);
        // One Data 1 s after the decrease: K = ∛(20·0.3/0.4) = ∛15,
        // W_cubic = 0.4(1−K)³ + 20; SRTT ≈ 0.1 s → W_est = 14 + 0.3/1.7·3·10.
        let t1 = t0 + Duration::from_secs(1);
        let srtt = c.rtt().srtt().unwrap().as_secs_f64();
        c.on_data(t1, &data(100, 0));
        let k = libm::cbrt(15.0);
        let w_cubic = 0.4 * (1.0 - k).powi(3) + 20.0;
        let srtt_after = c.rtt().srtt().unwrap().as_secs_f64();
        assert!((srtt - srtt_after).abs() < 1e-12); // constant samples
        let w_est = 14.0 + 3.0 * 0.3 / 1.7 * (1.0 / srtt);
        let expected = 14.0 + (w_cubic.max(w_est) - 14.0).max(0.0) / 14.0;
        assert!(
            (c.cwnd() - expected).abs() < 1e-9,
            "{} vs {}",
            c.cwnd(),
            expected
        );
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        let mut c = Cubic::new(CubicConfig {
            fast_convergence: true,
            disable_cwa: true,
            ..CubicConfig::default()
        });
        for i in 0..18 {
            c.on_data(Timestamp::from_millis(i), &data(10, 0));
        }
        c.on_timeout(Timestamp::from_millis(100)); // w_max 20, cwnd 14
        c.on_timeout(Timestamp::from_millis(101)); // 14 < 20: w_max = 14·1.7/2
        assert!((c.w_max() - 14.0 * 0.85).abs() < 1e-12);
        assert!((c.cwnd() - 9.8).abs() < 1e-12);
    }

    proptest! {
        #[test]
        fn window_stays_within_bounds(ev in proptest::collection::vec((0u8..4, 0u64..2_000, 0u64..3), 1..400)) {
            let cfg = CubicConfig { min_window: 2.0, max_window: 100.0, ..CubicConfig::default() };
            let mut c = Cubic::new(cfg);
            let mut now = 0;
            for (kind, dt, mark) in ev {
                now += dt;
                let t = Timestamp::from_millis(now);
                apply(&mut c, kind, t, dt % 500 + 1, mark);
                let SendLimit::Window { interests } = c.limit() else { unreachable!() };
                prop_assert!(interests.is_finite() && (2.0..=100.0).contains(&interests));
            }
        }
    }
}
