//! The public types of [`crate::node`]: configuration, face samples,
//! outputs, verdicts and counters.

use bytes::Bytes;
use cc_core::srmcc::SrmccConfig;
use cc_core::Duration;
use icn_tlv::MccFeedback;

use crate::mnft::MnftLimits;
use crate::wire::{self, Subscription};

/// Parameters of a tree node.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeConfig {
    /// MNFT bounds.
    pub limits: MnftLimits,
    /// SRMCC parameters (α of eq. 1, flow sampling, table size).
    pub srmcc: SrmccConfig,
    /// How often the node refreshes its own membership upstream.
    pub refresh_period: Duration,
    /// Membership lifetime the node asks of its upstream (> refresh period).
    pub membership_lifetime: Duration,
    /// MCC aggregation period: one message per group upstream per period
    /// (docs/algorithms.md §4.4 item 5: the adaptation cycle, 4 × 100 ms).
    pub feedback_period: Duration,
    /// How often queue occupancy is sampled into the EWMA.
    pub sample_interval: Duration,
    /// How long a child's last report stands in for a period in which it
    /// did not report (periods of different nodes are not aligned).
    pub feedback_hold: Duration,
    /// Unicast flow-sampling window for `N_i(t)`.
    pub flow_window: Duration,
    /// Bound of the output queue.
    pub max_pending: usize,
    /// Seed of the flow-sampling and nonce generator.
    pub rng_seed: u64,
}

impl Default for NodeConfig {
    fn default() -> Self {
        NodeConfig {
            limits: MnftLimits::default(),
            srmcc: SrmccConfig::default(),
            refresh_period: Duration::from_secs(1),
            membership_lifetime: Duration::from_secs(3),
            feedback_period: Duration::from_millis(400),
            sample_interval: Duration::from_millis(20),
            feedback_hold: Duration::from_millis(1200),
            flow_window: Duration::from_secs(2),
            max_pending: 4096,
            rng_seed: 1,
        }
    }
}

/// What the host reports about one face's egress queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FaceSample {
    /// Packets waiting in the face's Data queue.
    pub queue_packets: u64,
    /// The queue's bound in packets (Qmax).
    pub queue_max_packets: u64,
    /// Link capacity, if configured.
    pub capacity_bps: Option<u64>,
}

/// Source of [`FaceSample`]s (the engine's per-face stats).
pub trait FaceSampler {
    /// The sample of `face`, `None` if it does not exist.
    fn face_sample(&self, face: u64) -> Option<FaceSample>;
}

impl<F: Fn(u64) -> Option<FaceSample>> FaceSampler for F {
    fn face_sample(&self, face: u64) -> Option<FaceSample> {
        self(face)
    }
}

/// A message the node wants sent.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeOutput {
    /// A join (graft/refresh) or leave (prune) towards the source.
    Subscription {
        /// Upstream face.
        face: u64,
        /// The message.
        sub: Subscription,
    },
    /// The period's aggregated MCC message for one group.
    Feedback {
        /// Upstream face.
        face: u64,
        /// The message.
        feedback: MccFeedback,
    },
}

impl NodeOutput {
    /// The face to send on.
    pub fn face(&self) -> u64 {
        match self {
            NodeOutput::Subscription { face, .. } | NodeOutput::Feedback { face, .. } => *face,
        }
    }
    /// The frame: a bare Interest, or an LpPacket with the MCC header.
    pub fn encode(&self, nonce: u32) -> Bytes {
        match self {
            NodeOutput::Subscription { sub, .. } => sub.encode(nonce),
            NodeOutput::Feedback { feedback, .. } => wire::encode_feedback(feedback),
        }
    }
}

/// A frame ready for a face.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McTransmit {
    /// Egress face.
    pub face: u64,
    /// The frame.
    pub bytes: Bytes,
}

/// Data-plane verdict for a Data (see module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataVerdict {
    /// Not under any group: the normal pipeline applies.
    NotGroup,
    /// Under a group but not from its upstream face: drop.
    WrongFace,
    /// Clone to the faces written into the caller's vector (possibly none).
    Forward,
}

/// Counters of a node.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeStats {
    /// Joins/refreshes accepted.
    pub joins_in: u64,
    /// Leaves accepted.
    pub leaves_in: u64,
    /// Subscriptions refused (bounds, loops).
    pub subscriptions_rejected: u64,
    /// MCC messages accepted from downstream.
    pub feedback_in: u64,
    /// MCC messages refused (unknown group, not downstream).
    pub feedback_rejected: u64,
    /// MCC messages sent upstream.
    pub feedback_out: u64,
    /// Joins sent upstream (grafts and refreshes).
    pub joins_out: u64,
    /// Leaves sent upstream (prunes).
    pub leaves_out: u64,
    /// Downstream memberships that expired.
    pub expirations: u64,
    /// Group Data packets accepted from upstream.
    pub data_in: u64,
    /// Copies handed out for downstream faces.
    pub copies_out: u64,
    /// Group Data from a face other than the upstream.
    pub data_wrong_face: u64,
    /// Outputs dropped because the output queue was full.
    pub outputs_dropped: u64,
}
