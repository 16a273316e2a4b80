//! Fixed window and fixed-rate consumers: the "no congestion control"
//! baselines (`--cc none` and `--cc fixed`).
//!
//! [`FixedWindow`] keeps a constant number of Interests in flight, like
//! ndnget's `--pipeline-type fixed`. [`FixedRate`] paces Interests at a
//! configured rate, either given directly in Interests per second or derived
//! from a target Data rate in bit/s and the expected Data size. Neither
//! reacts to marks, Nacks or timeouts.

use crate::law::{ConsumerLaw, SendLimit};

/// Fixed-window parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct FixedWindowConfig {
    /// Interests in flight (ndnget's fixed pipeline default is 1).
    pub window_interests: f64,
}

impl Default for FixedWindowConfig {
    fn default() -> Self {
        FixedWindowConfig {
            window_interests: 1.0,
        }
    }
}

/// A constant window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FixedWindow {
    window: f64,
}

impl FixedWindow {
    /// Creates the law; a non-finite or sub-1 window becomes 1.
    pub fn new(cfg: FixedWindowConfig) -> Self {
        let w = cfg.window_interests;
        FixedWindow {
            window: if w.is_finite() && w >= 1.0 { w } else { 1.0 },
        }
    }
}

impl Default for FixedWindow {
    fn default() -> Self {
        FixedWindow::new(FixedWindowConfig::default())
    }
}

impl ConsumerLaw for FixedWindow {
    fn limit(&self) -> SendLimit {
        SendLimit::Window {
            interests: self.window,
        }
    }
}

/// Fixed-rate parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct FixedRateConfig {
    /// Interest rate, Interests per second.
    pub interests_per_sec: f64,
    /// Safety bound on Interests in flight.
    pub max_outstanding: u32,
}

impl Default for FixedRateConfig {
    /// 100 Interests/s with at most 1000 in flight.
    fn default() -> Self {
        FixedRateConfig {
            interests_per_sec: 100.0,
            max_outstanding: 1_000,
        }
    }
}

impl FixedRateConfig {
    /// The Interest rate that asks for `data_rate_bps` of Data of
    /// `data_size_bytes` each.
    pub fn from_data_rate(data_rate_bps: f64, data_size_bytes: u32, max_outstanding: u32) -> Self {
        let bits = f64::from(data_size_bytes.max(1)) * 8.0;
        FixedRateConfig {
            interests_per_sec: data_rate_bps / bits,
            max_outstanding,
        }
    }
}

/// A constant Interest rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FixedRate {
    cfg: FixedRateConfig,
}

impl FixedRate {
    /// Creates the law; a negative or non-finite rate becomes 0.
    pub fn new(mut cfg: FixedRateConfig) -> Self {
        if !(cfg.interests_per_sec.is_finite() && cfg.interests_per_sec >= 0.0) {
            cfg.interests_per_sec = 0.0;
        }
        FixedRate { cfg }
    }
}

impl Default for FixedRate {
    fn default() -> Self {
        FixedRate::new(FixedRateConfig::default())
    }
}

impl ConsumerLaw for FixedRate {
    fn limit(&self) -> SendLimit {
        SendLimit::Rate {
            interests_per_sec: self.cfg.interests_per_sec,
            max_outstanding: self.cfg.max_outstanding,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::law::{DataFeedback, NackFeedback};
    use crate::time::Timestamp;

    #[test]
    fn fixed_laws_ignore_feedback() {
        let mut w = FixedWindow::new(FixedWindowConfig {
            window_interests: 8.0,
        });
        let t = Timestamp::from_millis(1);
        w.on_data(
            t,
            &DataFeedback {
                congestion_mark: 1,
                ..Default::default()
            },
        );
        w.on_timeout(t);
        w.on_nack(t, &NackFeedback::default());
        assert_eq!(w.limit(), SendLimit::Window { interests: 8.0 });
        assert_eq!(
            FixedWindow::new(FixedWindowConfig {
                window_interests: f64::NAN
            })
            .limit(),
            SendLimit::Window { interests: 1.0 }
        );
    }

    #[test]
    fn rate_from_data_rate() {
        // 8 Mbit/s of 1000-byte Data = 1000 Interests/s.
        let r = FixedRate::new(FixedRateConfig::from_data_rate(8e6, 1_000, 50));
        assert_eq!(
            r.limit(),
            SendLimit::Rate {
                interests_per_sec: 1_000.0,
                max_outstanding: 50
            }
        );
        let neg = FixedRate::new(FixedRateConfig {
            interests_per_sec: -3.0,
            max_outstanding: 1,
        });
        assert!(
            matches!(neg.limit(), SendLimit::Rate { interests_per_sec, .. } if interests_per_sec == 0.0)
        );
    }
}
