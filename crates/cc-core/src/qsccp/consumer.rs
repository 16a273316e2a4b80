//! QSCCP consumer rate adjustment, CRA (paper §IV-F, eq. 13):
//! `R_I(t) = β·R_I(t') + (1 − β)·R(t)/S_D`, β = 0.8, on every Data carrying
//! a TargetRate R (bit/s); R_I is in Interests/s and S_D is the Data size in
//! bits, estimated by an EWMA of received sizes (paper §IV-F; the authors'
//! code uses a fixed size). Before the first TargetRate the consumer sends at
//! `initial_rate_bps`; the first TargetRate is adopted directly, as the
//! authors' code does (docs/algorithms.md §1.7, [D]). Timeouts and Nacks only
//! cause retransmissions and leave the rate unchanged.

use crate::law::{ConsumerLaw, DataFeedback, SendLimit};
use crate::time::Timestamp;

/// CRA parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct QsccpConsumerConfig {
    /// Smoothing β of eq. 13.
    pub beta: f64,
    /// Data rate asked for before any TargetRate, bit/s.
    pub initial_rate_bps: f64,
    /// S_D before any Data is received, bits (1078-byte Data).
    pub initial_data_size_bits: f64,
    /// Gain of the Data-size EWMA.
    pub size_gain: f64,
    /// Safety bound on Interests in flight.
    pub max_outstanding: u32,
    /// Floor of the Interest rate, so a consumer never stalls completely.
    pub min_rate_ips: f64,
}

impl Default for QsccpConsumerConfig {
    fn default() -> Self {
        QsccpConsumerConfig {
            beta: 0.8,
            initial_rate_bps: 100_000.0,
            initial_data_size_bits: 8_624.0,
            size_gain: 0.125,
            max_outstanding: 10_000,
            min_rate_ips: 1.0,
        }
    }
}

/// The QSCCP consumer rate law.
#[derive(Debug, Clone)]
pub struct QsccpConsumer {
    cfg: QsccpConsumerConfig,
    rate_ips: f64,
    data_size_bits: f64,
    sized: bool,
    adopted: bool,
}

impl QsccpConsumer {
    /// Creates the law at the initial rate.
    pub fn new(cfg: QsccpConsumerConfig) -> Self {
        let size = if cfg.initial_data_size_bits.is_finite() && cfg.initial_data_size_bits >= 8.0 {
            cfg.initial_data_size_bits
        } else {
            8_624.0
        };
        let mut c = QsccpConsumer {
            cfg,
            rate_ips: 0.0,
            data_size_bits: size,
            sized: false,
            adopted: false,
        };
        c.set_rate(cfg.initial_rate_bps / size);
        c
    }

    /// Interest rate R_I, Interests per second.
    pub fn rate_ips(&self) -> f64 {
        self.rate_ips
    }

    /// Estimated Data size S_D, bits.
    pub fn data_size_bits(&self) -> f64 {
        self.data_size_bits
    }

    fn set_rate(&mut self, r: f64) {
        self.rate_ips = if r.is_finite() {
            r.max(self.cfg.min_rate_ips.max(0.0))
        } else {
            self.rate_ips
        };
    }
}

impl Default for QsccpConsumer {
    fn default() -> Self {
        QsccpConsumer::new(QsccpConsumerConfig::default())
    }
}

impl ConsumerLaw for QsccpConsumer {
    fn on_data(&mut self, _now: Timestamp, fb: &DataFeedback) {
        if fb.data_size_bytes > 0 {
            let s = f64::from(fb.data_size_bytes) * 8.0;
            self.data_size_bits = if self.sized {
                (1.0 - self.cfg.size_gain) * self.data_size_bits + self.cfg.size_gain * s
            } else {
                s
            };
            self.sized = true;
        }
        let Some(target) = fb.target_rate_bps.filter(|r| r.is_finite() && *r >= 0.0) else {
            return;
        };
        let wanted = target / self.data_size_bits;
        if self.adopted {
            let b = self.cfg.beta;
            self.set_rate(b * self.rate_ips + (1.0 - b) * wanted);
        } else {
            self.adopted = true;
            self.set_rate(wanted);
        }
    }

    fn limit(&self) -> SendLimit {
        SendLimit::Rate {
            interests_per_sec: self.rate_ips,
            max_outstanding: self.cfg.max_outstanding,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn data(size: u32, tr: Option<f64>) -> DataFeedback {
        DataFeedback {
            data_size_bytes: size,
            target_rate_bps: tr,
            ..DataFeedback::default()
        }
    }

    #[test]
    fn eq13_smoothing_by_hand() {
        let mut c = QsccpConsumer::default();
        assert!((c.rate_ips() - 100_000.0 / 8_624.0).abs() < 1e-9);
        let t = Timestamp::ZERO;
        // 1000-byte Data: S_D = 8000 bits; first TR 8 Mb/s adopted: 1000 Interests/s.
        c.on_data(t, &data(1_000, Some(8e6)));
        assert!((c.rate_ips() - 1_000.0).abs() < 1e-9);
        // TR 4 Mb/s: 0.8·1000 + 0.2·500 = 900.
        c.on_data(t, &data(1_000, Some(4e6)));
        assert!((c.rate_ips() - 900.0).abs() < 1e-9);
        // No TargetRate: unchanged; a 2000-byte Data moves S_D by 1/8.
        c.on_data(t, &data(2_000, None));
        assert_eq!(c.rate_ips(), 900.0);
        assert!((c.data_size_bits() - 9_000.0).abs() < 1e-9);
    }

    proptest! {
        #[test]
        fn rate_stays_finite_and_positive(ev in proptest::collection::vec((0u32..10_000, proptest::option::of(-1e3f64..1e12)), 1..200)) {
            let mut c = QsccpConsumer::default();
            for (size, tr) in ev {
                c.on_data(Timestamp::ZERO, &data(size, tr));
                let SendLimit::Rate { interests_per_sec, .. } = c.limit() else { unreachable!() };
                prop_assert!(interests_per_sec.is_finite() && interests_per_sec >= 1.0);
            }
        }
    }
}
