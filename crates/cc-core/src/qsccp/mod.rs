//! QSCCP: QoS-aware congestion control for NDN (He Bai, Hui Li et al.),
//! docs/algorithms.md §1.
//!
//! * [`class`]: the eight service classes (paper §IV-B).
//! * [`scheduler`]: CDS, the per-outgoing-face scheduler tree (§IV-C): strict
//!   priority CS7 > CS6 > EF, each capped by a token bucket at δ_c·η·C, over
//!   the delay-tolerant classes, which share by WFQ with weights ω_c; WDRR
//!   among the flows of a class with quantum `16 000 bit · w · φ`; a final
//!   token bucket at η·C (η = 0.99). Sizes are *expected Data bits* of each
//!   Interest (Dsz), since Interests are scheduled to shape returning Data.
//! * [`pecn`]: the per-period (100 ms) suggested target rate of every flow:
//!   B' = η·B − B_I (eq. 1), weighted fair rates (eqs. 2–3), flow-state
//!   judgement, redistribution of unused share and the discount factor
//!   (eqs. 4–9, reconstructed), with the authors' code as an alternative.
//! * [`multipath`]: the DRT/TRT tables of a node, DownstreamRate (eq. 10),
//!   TargetRate at branch nodes (eq. 11) and adaptive forwarding by TRT
//!   weights (eq. 12) with 1 % uniform probing.
//! * [`consumer`]: CRA, the consumer rate law (eq. 13, β = 0.8) with an EWMA
//!   of Data sizes.
//!
//! Readings (docs/algorithms.md §1.9, all recommended ones): eqs. 4–9 follow the
//! §1.5 reconstruction by default (`PecnVariant::PaperReconstruction`: γ·base
//! high-demand test, DS total capped at δ_c·B', DS capacity δ_c·B', φ restored
//! when the greedy counter returns to 0) and the authors' code rules are
//! available as `PecnVariant::AuthorsCode`; the delay-tolerant class capacities
//! use the code's saturated/active/idle redistribution (P3) in both variants,
//! since eq. 3 as printed cannot reproduce the paper's Scenario 1; forwarding
//! samples by eq. 12 plus 1 % uniform (paper), not the code's DRR.
//!
//! Deviations: the WFQ among DT classes is self-clocked fair queueing (the
//! virtual time is the finish tag of the last packet served), which needs no
//! per-packet clock and is O(5) per packet; the ServiceClass + 8 penalty
//! propagation of the authors' code (P7) is acted upon in both profiles
//! ([`CdsScheduler::penalise_flow`], `QsccpConfig::propagate_penalty`),
//! although the paper does not describe it.

pub mod class;
mod config;
pub mod consumer;
mod drr;
mod flow_table;
mod flows;
pub mod multipath;
pub mod pecn;
mod ring;
pub mod scheduler;
mod settle;
mod vtime;

pub use class::ServiceClass;
pub use consumer::{QsccpConsumer, QsccpConsumerConfig};
pub use multipath::{MultipathConfig, MultipathTable};
pub use pecn::PecnVariant;
pub use scheduler::{
    CdsScheduler, CdsStats, Dequeue, QsccpConfig, RejectReason, Rejected, Scheduled,
};
