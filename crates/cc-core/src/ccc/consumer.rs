//! The CCC consumer (ICC 2020 §IV-A): announces its objective and paces
//! at the constraint the network returns.

use crate::law::{ConsumerLaw, DataFeedback, SendLimit};
use crate::rcp::{sanitize, DataSizeEstimate};
use crate::time::Timestamp;

/// Parameters of the CCC consumer.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct CccConsumerConfig {
    /// What the application wants (bit/s of Data).
    pub target_rate_bps: f64,
    /// Data size assumed before the first Data (bytes).
    pub initial_data_size_bytes: f64,
    /// EWMA gain of the Data size.
    pub data_size_gain: f64,
    /// Safety bound on Interests in flight.
    pub max_outstanding: u32,
    /// Interests in flight before the first Data (2) [D]: the consumer
    /// knows no constraint yet, and pacing at the objective would blast up
    /// to `max_outstanding` Interests into the path in the first RTT. 0 is
    /// the paper's consumer: it paces at its objective until a constraint
    /// arrives.
    pub initial_window: u32,
    /// Lowest pace the consumer falls to whatever constraint it hears
    /// (1 Interest/s, or the objective if lower) [D]: a flow that stops
    /// sending looks idle to the supervisors and would never be raised
    /// again. The paper has no floor (0). Tuned forwarders never cut to
    /// zero (their reduction floor), so it matters where a hop does (one
    /// running the paper profile, or `reduction_floor_share = 0`): there,
    /// without it, flows starved (envelope grid, docs/deviations.md C7).
    pub min_pace_ips: f64,
}

impl CccConsumerConfig {
    /// The paper's consumer: pace = min(objective, latest constraint) from
    /// the first Interest, no start-up window, no floor.
    pub fn paper() -> Self {
        CccConsumerConfig {
            initial_window: 0,
            min_pace_ips: 0.0,
            ..CccConsumerConfig::default()
        }
    }

    /// icnfwd's consumer: two Interests in flight until the first Data and
    /// a floor of 1 Interest/s.
    pub fn tuned() -> Self {
        CccConsumerConfig::default()
    }

    /// The consumer of `profile`.
    pub fn for_profile(profile: crate::Profile) -> Self {
        match profile {
            crate::Profile::Paper => Self::paper(),
            crate::Profile::Tuned => Self::tuned(),
        }
    }
}

impl Default for CccConsumerConfig {
    fn default() -> Self {
        CccConsumerConfig {
            target_rate_bps: 10e6,
            initial_data_size_bytes: 8400.0,
            data_size_gain: 0.125,
            max_outstanding: 10_000,
            initial_window: 2,
            min_pace_ips: 1.0,
        }
    }
}

/// CCC consumer: announces `objective = target rate / Data size` in its
/// Interests and paces at `min(objective, latest constraint)`. Until the
/// first Data it keeps `initial_window` Interests in flight; a path that
/// stamps no constraint (no CCC forwarder) leaves it at the objective.
#[derive(Debug, Clone)]
pub struct CccConsumer {
    cfg: CccConsumerConfig,
    data_size: DataSizeEstimate,
    constraint_ips: Option<f64>,
    heard_data: bool,
}

impl CccConsumer {
    /// A consumer with no constraint heard yet.
    pub fn new(cfg: CccConsumerConfig) -> Self {
        CccConsumer {
            data_size: DataSizeEstimate::new(cfg.initial_data_size_bytes, cfg.data_size_gain),
            cfg,
            constraint_ips: None,
            heard_data: false,
        }
    }
    /// The objective to put in Interests (Interests/s).
    pub fn objective_ips(&self) -> f64 {
        sanitize(self.cfg.target_rate_bps) / (8.0 * self.data_size.bytes())
    }
    /// The latest constraint heard (Interests/s).
    pub fn constraint_ips(&self) -> Option<f64> {
        self.constraint_ips
    }
    /// The pace actually used (Interests/s).
    pub fn pace_ips(&self) -> f64 {
        let obj = self.objective_ips();
        let floor = sanitize(self.cfg.min_pace_ips).min(obj);
        self.constraint_ips.map_or(obj, |c| obj.min(c).max(floor))
    }
}

impl ConsumerLaw for CccConsumer {
    fn on_data(&mut self, _now: Timestamp, fb: &DataFeedback) {
        self.heard_data = true;
        self.data_size.sample(fb.data_size_bytes);
        if let Some(c) = fb.pace_constraint_ips {
            if c.is_finite() && c >= 0.0 {
                self.constraint_ips = Some(c);
            }
        }
    }

    fn limit(&self) -> SendLimit {
        if !self.heard_data && self.cfg.initial_window > 0 {
            return SendLimit::Window {
                interests: f64::from(self.cfg.initial_window),
            };
        }
        SendLimit::Rate {
            interests_per_sec: self.pace_ips(),
            max_outstanding: self.cfg.max_outstanding,
        }
    }
}
