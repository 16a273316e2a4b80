//! MIRCC: Multipath-aware ICN Rate-based Congestion Control (Mahdian,
//! Arianfar, Gibson, Oran, ACM ICN'16; docs/algorithms.md §2).
//!
//! * [`MirccRate`]: the per-link stamping rate. Single class by eqs. 2-5
//!   (§3.1.1): `N̂ = max(C, y)/R(t−T)`, `base = (η·C − β(t)·q/d)/N̂`,
//!   `excess = R(t−T) − y/N̂`, both smoothed by an EWMA (α = 0.5, footnote 3),
//!   `R = base_ewma + excess_ewma`, with the self-tuned
//!   `β(t) = max(β', (y(t) − y(t−T))/y(t))`, β' = 0.1. Dual class by eqs.
//!   6-16 (§4.2): the primary rate counts primary Interests only, the
//!   secondary one runs on the left-over capacity `Cs = max(C − yp, 0)`;
//!   `q` counts every queued Interest for both.
//! * [`Inflation`]: the Data/Interest size ratio kept per link by EWMA
//!   (§3.1.1), which turns Interest counts into the Data load they will cause.
//! * [`InterestShaper`]: the per-link sans-IO shaper that paces Interests so
//!   the returning Data fits the link, queues the excess up to a bound, Nacks
//!   what it cannot queue, and evicts queued secondary Interests to admit
//!   primary ones (§4.2).
//! * [`crate::rate_link::RateLink`] (outside this module, shared with RCP):
//!   the three above plus the smoothed RTT and the per-period input
//!   counters, as icnfwd embeds them per outgoing link.
//! * [`path`]: path-id hashing per hop (§4.3.1), random-value steering hints
//!   (§4.3.2) and the bandwidth-weighted choice for hint-less Interests
//!   (§4.3.3).
//! * [`MirccConsumer`]: the dual-class best-subflow consumer (§4.2, §4.3):
//!   primary rate = best-subflow rate split over paths in proportion to their
//!   primary rates, secondary rate = Σ per-path secondary rates, 3% of
//!   Interests hint-less for path discovery.
//!
//! Readings and deviations (docs/algorithms.md §2.6):
//! * eq. 12 prints `R(t−T)`; we read `Rs(t−T)`, mirroring eqs. 6-10;
//! * β(t) = β' when y(t) = 0 (the formula divides by y);
//! * the rate is clamped to `[min_rate_bps, η·C]` after the EWMA (a large
//!   queue can make `base` negative); the EWMA states themselves are not
//!   clamped; the caller may raise the primary floor
//!   ([`MirccRate::set_floor_bps`], icnfwd: one measured Data per period),
//!   the secondary one stays at `min_rate_bps`;
//! * η = 0.95 (not given in the MIRCC text), T = 100 ms, RTT EWMA gain 1/8,
//!   inflation EWMA gain 1/8, inflation 1.0 before any sample;
//! * Nacks carry both Rp and Rs; the consumer applies only decreases;
//! * the pathId hash is FNV-1a over (previous id, node id, link id);
//! * steering hints are random values consumed digit by digit
//!   (`index = h mod n`, `h := h / n`);
//! * the consumer enforces only the per-path cap when splitting the primary
//!   rate (it cannot see links);
//! * the consumer serves classes and paths in proportion by smooth weighted
//!   round robin, not by independent random draws (which make each path's
//!   input binomial and cost ~2 Mbit/s on the 2 × 10 Mbit/s diamond with
//!   8 KB Data); only the 3% hint-less choice is random.

mod consumer;
pub mod path;
mod rate;
mod shaper;

pub use consumer::{InterestPlan, MirccConsumer, MirccConsumerConfig, PathRates};
pub use rate::{Inflation, MirccConfig, MirccRate};
pub use shaper::{InterestShaper, ShaperConfig, ShaperCounters, ShaperVerdict};

/// The MIRCC traffic class of an Interest (§4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum TrafficClass {
    /// Sent at the best-subflow rate; max-min fair between flows.
    Primary,
    /// Soaks up capacity primary traffic leaves unused; evicted first.
    Secondary,
}

impl TrafficClass {
    /// Wire code of the TrafficClass field: 0 primary, 1 secondary.
    pub const fn code(self) -> u64 {
        match self {
            TrafficClass::Primary => 0,
            TrafficClass::Secondary => 1,
        }
    }
    /// From the wire code; any other code is `None` (a decoding error).
    pub const fn from_code(code: u64) -> Option<Self> {
        match code {
            0 => Some(TrafficClass::Primary),
            1 => Some(TrafficClass::Secondary),
            _ => None,
        }
    }
}
