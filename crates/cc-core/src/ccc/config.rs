//! CCC's parameters and the errors of its tables.

use super::pacer;
use crate::time::Duration;
use core::fmt;

/// Parameters of CCC.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct CccConfig {
    /// Supervision period τ of an output interface.
    pub supervision_period: Duration,
    /// Factor applied to the incoming pace on congestion (Algorithm 5).
    pub reduction_factor: f64,
    /// Data size assumed before the flow's first Data (bytes).
    pub initial_data_size_bytes: f64,
    /// EWMA gain of the flow's Data size.
    pub data_size_gain: f64,
    /// Most next hops per flow.
    pub max_next_hops: usize,
    /// How Algorithm 6 augments constraints when the link is not congested.
    pub augmentation: Augmentation,
    /// Algorithm 5 never cuts a flow below this fraction of its max-min
    /// fair share of the interface (0.5). A cut measured on a flow that was
    /// waiting for retransmissions (pace near 0) would otherwise starve it:
    /// a flow told "0" sends nothing, stays inactive and is never raised.
    pub reduction_floor_share: f64,
    /// Share η of an interface's capacity its supervisor hands out. The
    /// paper shares C (1.0); with η = 1 the constraints can add up to
    /// exactly C, and a queue a burst built never drains (icnfwd: 0.95).
    pub utilisation: f64,
    /// Algorithm 4's congestion test besides drops: a standing queue, every
    /// Data of the supervision period waited longer than this in the
    /// interface's queue (at least one Data serialisation,
    /// [`crate::codel::link_target`]). Zero is the paper's reading, drops
    /// only: with a deep buffer the queue then has to fill before anything
    /// is cut, and the drops stall consumers for an RTO.
    pub congestion_sojourn: Duration,
    /// A flow's first constraint at a supervised interface is an equal
    /// share of it ([`CccSupervisor::admit`]) [D]; `false` is the paper's
    /// silence read as docs/algorithms.md §3.4 does: the flow passes on
    /// `Σ p_i,k_max`, what its next hops allow, until the first supervision.
    pub admit_equal_share: bool,
    /// Each output interface paces every flow's Interests (§IV-A,
    /// [`pacer`]); `false` only splits them by round robin (icnfwd before
    /// the pacer existed, kept to measure what the pacer changes).
    pub pace_interests: bool,
    /// The rate an interface paces a flow at ([`InterestPace`]).
    pub interest_pace: InterestPace,
    /// Bounds of the per-interface pacer.
    pub pacer: pacer::PacerConfig,
    /// With pacing on, an Interest goes to the next hop whose pacer would
    /// release it first, the round-robin pick on ties (tuned [D]); `false`
    /// is Algorithm 2's split in proportion to the paces alone, which
    /// queues an Interest behind one face's pace while another face's
    /// constraint has room (docs/deviations.md, C8).
    pub next_hop_by_room: bool,
    /// With [`Augmentation::MaxMinShare`], a flow whose Interests arrive
    /// well below its constraint here (held back by a tighter hop or by
    /// its consumer) counts in the max-min shares with its measured demand
    /// (its constraint keeps growth room above it) rather than its whole
    /// cap, so the share it leaves
    /// unused goes to the flows limited here (tuned [D]; docs/deviations.md
    /// C9). Off, a flow bottlenecked elsewhere holds an equal share it
    /// never uses: a parking lot's last link ran at 63 %.
    pub max_min_demand: bool,
}

/// The rate at which an output interface releases a flow's Interests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum InterestPace {
    /// The paper: `p_o,k`, Algorithm 2's share of the incoming pace
    /// measured over the last period (the constraint before any
    /// measurement).
    #[default]
    OutgoingPace,
    /// Eq. 10's bound itself, `p_i,k_max`: the pacer only enforces the
    /// constraint, and a flow's growth is not held to last period's pace
    /// (tuned [D]: paced at `p_o,k`, the dumbbell's consumers saw 104 ms
    /// of queueing instead of 8 and 113 Nacks instead of 0, since the pace
    /// measured over one period lags the offer; docs/deviations.md).
    Constraint,
}

/// Readings of Algorithm 6 (pace augmentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Augmentation {
    /// The paper's text: the spare bandwidth `C − Σ p_o_max·size` (eq. 12)
    /// is shared equally (water-filling under the caps). Once the
    /// constraints add up to C and nothing drops, nothing moves, so the
    /// split keeps whatever ratio the last Algorithm 5 cut left
    /// (`tests/ccc_closed_loop.rs`: from 11/89 to 69/31 on a shared link,
    /// depending on the random next-hop picks).
    #[default]
    SpareShare,
    /// Raises every active flow below its max-min fair share of C (under
    /// the same caps) to that share first, then shares what is still
    /// spare as above. A congested period cuts a flow above its share to
    /// at most that share (Algorithm 5 alone cuts every flow by the same
    /// factor and keeps their ratios), so the split goes to per-link
    /// max-min fairness, the property the paper reports (§V). With
    /// [`CccConfig::max_min_demand`], a flow held back elsewhere counts at
    /// its measured demand, as max-min fairness over several links asks.
    MaxMinShare,
}

impl Default for CccConfig {
    fn default() -> Self {
        CccConfig {
            supervision_period: Duration::from_millis(100),
            reduction_factor: 0.9,
            initial_data_size_bytes: 8400.0,
            data_size_gain: 0.125,
            max_next_hops: 16,
            augmentation: Augmentation::SpareShare,
            reduction_floor_share: 0.5,
            utilisation: 1.0,
            congestion_sojourn: Duration::ZERO,
            admit_equal_share: true,
            pace_interests: true,
            interest_pace: InterestPace::OutgoingPace,
            pacer: pacer::PacerConfig::default(),
            next_hop_by_room: false,
            max_min_demand: false,
        }
    }
}

impl CccConfig {
    /// Algorithms 3-6 as printed (docs/algorithms.md §3): the spare share
    /// of Algorithm 6, drops as the only congestion signal, the whole
    /// capacity C shared, no floor on Algorithm 5's cut and no admission
    /// share (a new flow passes on `Σ p_i,k_max`).
    pub fn paper() -> Self {
        CccConfig {
            augmentation: Augmentation::SpareShare,
            reduction_floor_share: 0.0,
            utilisation: 1.0,
            congestion_sojourn: Duration::ZERO,
            admit_equal_share: false,
            ..CccConfig::default()
        }
    }

    /// icnfwd's forwarder defaults (docs/deviations.md, CCC rows): max-min
    /// share augmentation, a 20 ms sojourn counted as congestion, η = 0.95,
    /// the equal-share admission, the half-share floor on reductions and
    /// Interests paced at the constraint rather than at last period's pace.
    pub fn tuned() -> Self {
        CccConfig {
            interest_pace: InterestPace::Constraint,
            pacer: pacer::PacerConfig {
                burst_time: Duration::from_millis(20),
                ..pacer::PacerConfig::default()
            },
            augmentation: Augmentation::MaxMinShare,
            reduction_floor_share: 0.5,
            utilisation: 0.95,
            congestion_sojourn: Duration::from_millis(20),
            admit_equal_share: true,
            next_hop_by_room: true,
            max_min_demand: true,
            ..CccConfig::default()
        }
    }

    /// The configuration of `profile`.
    pub fn for_profile(profile: crate::Profile) -> Self {
        match profile {
            crate::Profile::Paper => Self::paper(),
            crate::Profile::Tuned => Self::tuned(),
        }
    }
}

/// Errors of the CCC tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CccError {
    /// The flow already has `max_next_hops` next hops.
    TooManyNextHops,
}

impl fmt::Display for CccError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CCC flow has too many next hops")
    }
}

impl core::error::Error for CccError {}
