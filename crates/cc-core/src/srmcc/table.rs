//! SRMCC feedback plumbing (§3.2, Figs. 2-3): MCC messages, the per-node MCC
//! table, queue occupancy EWMA, fair-share estimate and receiver feedback.

use super::SrmccConfig;
use crate::mircc::path::unit_f64;
use crate::rcp::sanitize;
use crate::time::{Duration, Timestamp};
use core::fmt;
use core::hash::Hash;
use hashbrown::{HashMap, HashSet};
use rand_core::RngCore;

/// The body of an MCC message (the group id travels beside it).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct MccMessage {
    /// Max qocc, in [0, 1].
    pub max_occupancy: f64,
    /// Min qocc, in [0, 1].
    pub min_occupancy: f64,
    /// Min fair shared rate (bit/s).
    pub min_fair_share_bps: f64,
}

impl MccMessage {
    /// What a receiver sends (§3.2): min fair share = its access capacity,
    /// max occupancy 0, min occupancy 1 (neutral for the aggregation).
    pub fn receiver_initial(access_capacity_bps: f64) -> Self {
        MccMessage {
            max_occupancy: 0.0,
            min_occupancy: 1.0,
            min_fair_share_bps: sanitize(access_capacity_bps),
        }
    }

    /// What a node contributes itself: its averaged occupancy as both max
    /// and min, and its fair-share estimate.
    pub fn node_own(occupancy_avg: f64, fair_share_bps: f64) -> Self {
        let o = clamp_unit(occupancy_avg);
        MccMessage {
            max_occupancy: o,
            min_occupancy: o,
            min_fair_share_bps: sanitize(fair_share_bps),
        }
    }

    /// The aggregation rule of Fig. 3: min fair share, max of max, min of min.
    pub fn merge(&mut self, other: &MccMessage) {
        self.min_fair_share_bps = self
            .min_fair_share_bps
            .min(sanitize(other.min_fair_share_bps));
        self.max_occupancy = self.max_occupancy.max(clamp_unit(other.max_occupancy));
        self.min_occupancy = self.min_occupancy.min(clamp_unit(other.min_occupancy));
    }
}

fn clamp_unit(x: f64) -> f64 {
    if x.is_nan() {
        0.0
    } else {
        x.clamp(0.0, 1.0)
    }
}

/// Errors of the SRMCC tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MccError {
    /// The MCC table already holds `max_groups` groups.
    TableFull,
}

impl fmt::Display for MccError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MCC table full")
    }
}

impl core::error::Error for MccError {}

/// The MCC table of one MTN: per group, the aggregate of what its children
/// reported since the last emission. Bounded by `max_groups`.
#[derive(Debug, Clone)]
pub struct MccTable<G> {
    entries: HashMap<G, MccMessage>,
    max_groups: usize,
}

impl<G: Hash + Eq> MccTable<G> {
    /// An empty table holding at most `max_groups` groups.
    pub fn new(max_groups: usize) -> Self {
        MccTable {
            entries: HashMap::new(),
            max_groups,
        }
    }

    /// Folds a child's message for `group` into the table.
    pub fn aggregate(&mut self, group: G, msg: &MccMessage) -> Result<(), MccError> {
        if let Some(e) = self.entries.get_mut(&group) {
            e.merge(msg);
            return Ok(());
        }
        if self.entries.len() >= self.max_groups {
            return Err(MccError::TableFull);
        }
        let mut fresh = MccMessage::receiver_initial(f64::MAX);
        fresh.merge(msg);
        self.entries.insert(group, fresh);
        Ok(())
    }

    /// The single message to send upstream for `group` now: the node's own
    /// values merged with its children's. The group's entry is cleared, so
    /// the next period starts from the node's own values again.
    pub fn emit(&mut self, group: &G, own: MccMessage) -> MccMessage {
        let mut out = own;
        if let Some(children) = self.entries.remove(group) {
            out.merge(&children);
        }
        out
    }

    /// The current children aggregate of `group`.
    pub fn get(&self, group: &G) -> Option<&MccMessage> {
        self.entries.get(group)
    }

    /// Groups with pending reports.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no group has pending reports.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Eq. 1: `qocc_av,i = α·qocc_i + (1 − α)·qocc_av,i−1`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OccupancyAverage {
    alpha: f64,
    avg: f64,
}

impl OccupancyAverage {
    /// Starts at 0 (empty queue).
    pub fn new(alpha: f64) -> Self {
        OccupancyAverage {
            alpha: alpha.clamp(0.0, 1.0),
            avg: 0.0,
        }
    }
    /// One sample: `queue_len` of `queue_max`. Returns the average.
    pub fn sample(&mut self, queue_len: u64, queue_max: u64) -> f64 {
        let q = if queue_max == 0 {
            1.0
        } else {
            (queue_len as f64 / queue_max as f64).min(1.0)
        };
        self.avg = self.alpha * q + (1.0 - self.alpha) * self.avg;
        self.avg
    }
    /// The current average, in [0, 1].
    pub fn value(&self) -> f64 {
        self.avg
    }
}

/// The fair-share estimate `C_i / N_i(t)` of one MTN (§3.2): `N_i` is the
/// number of multicast groups plus the distinct unicast flows seen by
/// random packet sampling in the current window.
#[derive(Debug, Clone)]
pub struct FairShareEstimator {
    capacity_bps: f64,
    groups: usize,
    flows: HashSet<u64>,
    max_flows: usize,
    sample_probability: f64,
}

impl FairShareEstimator {
    /// For the link of `capacity_bps` towards the upstream node.
    pub fn new(cfg: &SrmccConfig, capacity_bps: f64) -> Self {
        FairShareEstimator {
            capacity_bps: sanitize(capacity_bps),
            groups: 0,
            flows: HashSet::new(),
            max_flows: cfg.max_sampled_flows,
            sample_probability: cfg.flow_sample_probability.clamp(0.0, 1.0),
        }
    }
    /// Number of multicast groups (GUMGIDs in the MNFT).
    pub fn set_group_count(&mut self, groups: usize) {
        self.groups = groups;
    }
    /// A unicast packet went by; `flow_key` hashes its source/destination.
    /// Sampled with the configured probability; the set is bounded.
    pub fn observe_packet(&mut self, flow_key: u64, rng: &mut impl RngCore) {
        if self.flows.len() >= self.max_flows || self.flows.contains(&flow_key) {
            return;
        }
        if unit_f64(rng) < self.sample_probability {
            self.flows.insert(flow_key);
        }
    }
    /// Starts a new sampling window.
    pub fn reset_window(&mut self) {
        self.flows.clear();
    }
    /// `N_i(t)`, at least 1.
    pub fn flow_count(&self) -> usize {
        (self.groups + self.flows.len()).max(1)
    }
    /// `C_i / N_i(t)`.
    pub fn estimate_bps(&self) -> f64 {
        self.capacity_bps / self.flow_count() as f64
    }
}

/// A receiver's periodic MCC generator.
#[derive(Debug, Clone)]
pub struct ReceiverFeedback {
    access_capacity_bps: f64,
    period: Duration,
    last: Option<Timestamp>,
}

impl ReceiverFeedback {
    /// `access_capacity_bps` was probed once at join.
    pub fn new(access_capacity_bps: f64, period: Duration) -> Self {
        ReceiverFeedback {
            access_capacity_bps,
            period,
            last: None,
        }
    }
    /// When the next message is due.
    pub fn poll_timeout(&self) -> Timestamp {
        self.last.map_or(Timestamp::ZERO, |t| t + self.period)
    }
    /// The message to send now, if one is due.
    pub fn poll(&mut self, now: Timestamp) -> Option<MccMessage> {
        if now < self.poll_timeout() {
            return None;
        }
        self.last = Some(now);
        Some(MccMessage::receiver_initial(self.access_capacity_bps))
    }
}
