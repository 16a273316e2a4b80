//! Round-trip time estimation and retransmission timeout, RFC 6298.
//!
//! This is the estimator the ndn-tools `ndnget` pipelines use (ndn-cxx
//! `util::RttEstimator`): α = 1/8, β = 1/4, K = 4, initial RTO 1 s, RTO
//! clamped to [200 ms, 60 s], ×2 back-off on timeout.
//!
//! RFC 6298 §2.2/§2.3: the first sample sets SRTT = R and RTTVAR = R/2;
//! later samples update RTTVAR = (1−β)·RTTVAR + β·|SRTT − R| *before*
//! SRTT = (1−α)·SRTT + α·R; then RTO = SRTT + max(G, K·RTTVAR) (§2.3).
//!
//! Deviation shared with ndn-cxx: a sample may be weighted down by the
//! number of samples expected in one RTT (`expected_samples`), dividing α and
//! β by it, because a window pipeline takes one sample per Data rather than
//! one per RTT. Pass 1 for the plain RFC behaviour.

use crate::time::Duration;

/// Parameters of the estimator. Defaults are ndn-cxx's.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct RttConfig {
    /// Gain of SRTT (RFC 6298 α).
    pub alpha: f64,
    /// Gain of RTTVAR (RFC 6298 β).
    pub beta: f64,
    /// Variance multiplier (RFC 6298 K).
    pub k: f64,
    /// RTO before any sample (RFC 6298 §2.1 says 1 s).
    pub initial_rto: Duration,
    /// Lower bound on the RTO.
    pub min_rto: Duration,
    /// Upper bound on the RTO, also the back-off ceiling.
    pub max_rto: Duration,
    /// Clock granularity G of RFC 6298 §2.3 (ndn-cxx uses 0).
    pub granularity: Duration,
    /// Factor applied to the RTO on each timeout (RFC 6298 §5.5).
    pub backoff_multiplier: f64,
}

impl Default for RttConfig {
    fn default() -> Self {
        RttConfig {
            alpha: 0.125,
            beta: 0.25,
            k: 4.0,
            initial_rto: Duration::from_secs(1),
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(60),
            granularity: Duration::ZERO,
            backoff_multiplier: 2.0,
        }
    }
}

/// SRTT/RTTVAR/RTO state of one consumer flow.
#[derive(Debug, Clone)]
pub struct RttEstimator {
    cfg: RttConfig,
    srtt_s: Option<f64>,
    rttvar_s: f64,
    rto_s: f64,
    min_rtt_s: f64,
    samples: u64,
}

impl RttEstimator {
    /// Creates an estimator with no sample yet (RTO = `initial_rto`).
    pub fn new(cfg: RttConfig) -> Self {
        let rto_s = cfg.initial_rto.as_secs_f64();
        RttEstimator {
            cfg,
            srtt_s: None,
            rttvar_s: 0.0,
            rto_s,
            min_rtt_s: f64::INFINITY,
            samples: 0,
        }
    }

    /// Feeds one RTT sample (never from a retransmitted Interest: Karn).
    ///
    /// `expected_samples` is how many samples arrive per RTT (the number of
    /// Interests in flight for a window pipeline); values below 1 count as 1.
    pub fn add_sample(&mut self, rtt: Duration, expected_samples: u32) {
        let r = rtt.as_secs_f64();
        let n = f64::from(expected_samples.max(1));
        match self.srtt_s {
            None => {
                self.srtt_s = Some(r);
                self.rttvar_s = r / 2.0;
            }
            Some(srtt) => {
                let a = self.cfg.alpha / n;
                let b = self.cfg.beta / n;
                self.rttvar_s = (1.0 - b) * self.rttvar_s + b * libm::fabs(srtt - r);
                self.srtt_s = Some((1.0 - a) * srtt + a * r);
            }
        }
        let srtt = self.srtt_s.unwrap_or(r);
        let var_term = (self.cfg.k * self.rttvar_s).max(self.cfg.granularity.as_secs_f64());
        self.rto_s = self.clamp(srtt + var_term);
        self.min_rtt_s = self.min_rtt_s.min(r);
        self.samples += 1;
    }

    /// Doubles (by `backoff_multiplier`) the RTO after a timeout, RFC 6298 §5.5.
    pub fn backoff(&mut self) {
        self.rto_s = self.clamp(self.rto_s * self.cfg.backoff_multiplier);
    }

    /// Current retransmission timeout.
    pub fn rto(&self) -> Duration {
        Duration::from_secs_f64(self.rto_s)
    }

    /// Smoothed RTT, `None` before the first sample.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt_s.map(Duration::from_secs_f64)
    }

    /// RTT variation.
    pub fn rttvar(&self) -> Duration {
        Duration::from_secs_f64(self.rttvar_s)
    }

    /// Smallest sample seen, `None` before the first sample.
    pub fn min_rtt(&self) -> Option<Duration> {
        (self.samples > 0).then(|| Duration::from_secs_f64(self.min_rtt_s))
    }

    /// Number of samples taken.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    fn clamp(&self, rto_s: f64) -> f64 {
        let lo = self.cfg.min_rto.as_secs_f64();
        let hi = self.cfg.max_rto.as_secs_f64().max(lo);
        if rto_s.is_nan() {
            return hi;
        }
        rto_s.clamp(lo, hi)
    }
}

impl Default for RttEstimator {
    fn default() -> Self {
        RttEstimator::new(RttConfig::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    fn close(a: Duration, b_s: f64) -> bool {
        (a.as_secs_f64() - b_s).abs() < 1e-9
    }

    #[test]
    fn first_sample_sets_srtt_and_half_variance() {
        let mut e = RttEstimator::default();
        assert_eq!(e.rto(), Duration::from_secs(1));
        e.add_sample(ms(100), 1);
        assert!(close(e.srtt().unwrap(), 0.1));
        assert!(close(e.rttvar(), 0.05));
        // RTO = 0.1 + 4 * 0.05 = 0.3 s
        assert!(close(e.rto(), 0.3));
    }

    #[test]
    fn second_sample_updates_variance_before_mean() {
        let mut e = RttEstimator::default();
        e.add_sample(ms(100), 1);
        e.add_sample(ms(200), 1);
        // RTTVAR = 0.75*0.05 + 0.25*|0.1-0.2| = 0.0625; SRTT = 0.875*0.1 + 0.125*0.2 = 0.1125
        assert!(close(e.rttvar(), 0.0625));
        assert!(close(e.srtt().unwrap(), 0.1125));
        assert!(close(e.rto(), 0.1125 + 0.25));
    }

    #[test]
    fn rto_is_clamped_and_backs_off_to_the_ceiling() {
        let mut e = RttEstimator::default();
        e.add_sample(ms(1), 1);
        assert_eq!(e.rto(), ms(200));
        for _ in 0..20 {
            e.backoff();
        }
        assert_eq!(e.rto(), Duration::from_secs(60));
    }

    #[test]
    fn expected_samples_divide_the_gains() {
        let mut e = RttEstimator::default();
        e.add_sample(ms(100), 1);
        e.add_sample(ms(200), 4);
        // a = 1/32: SRTT = 0.1 + 0.1/32
        assert!(close(e.srtt().unwrap(), 0.1 + 0.1 / 32.0));
    }

    proptest! {
        #[test]
        fn rto_stays_within_bounds(samples in proptest::collection::vec((0u64..5_000_000_000, 0u32..100, any::<bool>()), 1..100)) {
            let mut e = RttEstimator::default();
            for (ns, n, back) in samples {
                if back { e.backoff() } else { e.add_sample(Duration::from_nanos(ns), n) }
                prop_assert!(e.rto() >= ms(200) && e.rto() <= Duration::from_secs(60));
            }
        }
    }
}
