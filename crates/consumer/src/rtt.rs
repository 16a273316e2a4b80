//! Retransmission timer per RFC 6298, with the knobs ndnget exposes.
//!
//! cc-core's `rtt` module was still empty when this crate was written, so the
//! consumer keeps its own estimator. It also keeps the min/avg/max the
//! summary prints.

use cc_core::Duration;

/// Parameters of the estimator (ndnget defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RttConfig {
    /// SRTT gain (RFC 6298 alpha = 1/8).
    pub alpha: f64,
    /// RTTVAR gain (RFC 6298 beta = 1/4).
    pub beta: f64,
    /// RTO = SRTT + k * RTTVAR (ndnget raises ndn-cxx's 4 to 8).
    pub k: f64,
    /// RTO before the first sample (RFC 6298: 1 s).
    pub initial_rto: Duration,
    /// Lower clamp (ndn-cxx: 200 ms).
    pub min_rto: Duration,
    /// Upper clamp (ndn-cxx: 60 s).
    pub max_rto: Duration,
    /// Factor applied on every backoff.
    pub backoff_multiplier: f64,
}

impl Default for RttConfig {
    fn default() -> Self {
        RttConfig {
            alpha: 0.125,
            beta: 0.25,
            k: 8.0,
            initial_rto: Duration::from_secs(1),
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(60),
            backoff_multiplier: 2.0,
        }
    }
}

/// RFC 6298 smoothed RTT, variation and RTO, plus summary statistics.
#[derive(Debug, Clone)]
pub struct RttEstimator {
    cfg: RttConfig,
    srtt_s: Option<f64>,
    rttvar_s: f64,
    rto_s: f64,
    min_s: f64,
    max_s: f64,
    sum_s: f64,
    samples: u64,
}

impl RttEstimator {
    /// A fresh estimator with the RTO at `cfg.initial_rto`.
    pub fn new(cfg: RttConfig) -> Self {
        RttEstimator {
            rto_s: cfg.initial_rto.as_secs_f64(),
            cfg,
            srtt_s: None,
            rttvar_s: 0.0,
            min_s: f64::INFINITY,
            max_s: 0.0,
            sum_s: 0.0,
            samples: 0,
        }
    }

    /// Adds one sample. `n_expected` is the number of samples expected in one
    /// RTT (ndnget passes half the window), which scales the gains down so
    /// that a large window does not make SRTT jumpy (RFC 7323 appendix G).
    pub fn add_measurement(&mut self, rtt: Duration, n_expected: usize) {
        let r = rtt.as_secs_f64();
        self.samples += 1;
        self.sum_s += r;
        self.min_s = self.min_s.min(r);
        self.max_s = self.max_s.max(r);
        let n = n_expected.max(1) as f64;
        match self.srtt_s {
            None => {
                self.srtt_s = Some(r);
                self.rttvar_s = r / 2.0;
            }
            Some(srtt) => {
                let a = self.cfg.alpha / n;
                let b = self.cfg.beta / n;
                self.rttvar_s = (1.0 - b) * self.rttvar_s + b * (srtt - r).abs();
                self.srtt_s = Some((1.0 - a) * srtt + a * r);
            }
        }
        let srtt = self.srtt_s.unwrap_or(r);
        self.rto_s = self.clamp(srtt + self.cfg.k * self.rttvar_s);
    }

    /// Doubles the RTO (RFC 6298 5.5), within the clamps.
    pub fn backoff(&mut self) {
        self.rto_s = self.clamp(self.rto_s * self.cfg.backoff_multiplier);
    }

    fn clamp(&self, s: f64) -> f64 {
        s.clamp(
            self.cfg.min_rto.as_secs_f64(),
            self.cfg.max_rto.as_secs_f64(),
        )
    }

    /// The current retransmission timeout.
    pub fn rto(&self) -> Duration {
        Duration::from_secs_f64(self.rto_s)
    }

    /// Smoothed RTT, if any sample was taken.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt_s.map(Duration::from_secs_f64)
    }

    /// RTT variation.
    pub fn rttvar(&self) -> Duration {
        Duration::from_secs_f64(self.rttvar_s)
    }

    /// (min, avg, max) over all samples, `None` before the first.
    pub fn min_avg_max(&self) -> Option<(Duration, Duration, Duration)> {
        (self.samples > 0).then(|| {
            (
                Duration::from_secs_f64(self.min_s),
                Duration::from_secs_f64(self.sum_s / self.samples as f64),
                Duration::from_secs_f64(self.max_s),
            )
        })
    }

    /// Number of samples taken.
    pub fn samples(&self) -> u64 {
        self.samples
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn first_sample_sets_srtt_and_half_variation() {
        let mut e = RttEstimator::new(RttConfig {
            k: 4.0,
            ..RttConfig::default()
        });
        assert_eq!(e.rto(), Duration::from_secs(1));
        e.add_measurement(ms(100), 1);
        assert_eq!(e.srtt(), Some(ms(100)));
        // 100 + 4 * 50 = 300 ms
        assert!((e.rto().as_secs_f64() - 0.3).abs() < 1e-9);
    }

    #[test]
    fn rto_is_clamped_and_backs_off() {
        let mut e = RttEstimator::new(RttConfig::default());
        e.add_measurement(ms(1), 1);
        assert_eq!(e.rto(), ms(200));
        e.backoff();
        assert_eq!(e.rto(), ms(400));
        for _ in 0..20 {
            e.backoff();
        }
        assert_eq!(e.rto(), Duration::from_secs(60));
    }

    #[test]
    fn stats_track_min_avg_max() {
        let mut e = RttEstimator::new(RttConfig::default());
        assert!(e.min_avg_max().is_none());
        for v in [10, 20, 30] {
            e.add_measurement(ms(v), 1);
        }
        let (mn, avg, mx) = e.min_avg_max().unwrap();
        assert_eq!((mn, mx), (ms(10), ms(30)));
        assert!((avg.as_secs_f64() - 0.02).abs() < 1e-9);
    }

    #[test]
    fn steady_samples_converge_srtt() {
        let mut e = RttEstimator::new(RttConfig::default());
        e.add_measurement(ms(500), 1);
        for _ in 0..200 {
            e.add_measurement(ms(50), 4);
        }
        let srtt = e.srtt().unwrap().as_secs_f64();
        assert!((srtt - 0.05).abs() < 0.002, "srtt {srtt}");
    }
}
