//! SRMCC single-rate multicast groups, sans-IO (issue 7).
//!
//! A multicast group is a name prefix. Receivers join with a subscription
//! Interest (`/<group>/32=mcast-join`, InterestLifetime = membership
//! lifetime) that every tree node records in its MNFT and answers by joining
//! upstream itself; the source pushes `/<group>/seq=<n>` Data that each node
//! clones to its downstream faces; receivers and nodes send SRMCC MCC
//! messages (LpPacket MCC header) up the tree, one per period per group per
//! hop; the source runs Algorithm 1 (cc-core) and paces its stream.
//!
//! * [`MulticastNode`]: a forwarder's tree-node role (MNFT, cloning,
//!   occupancy EWMA, fair share, MCC aggregation, graft/prune/refresh).
//! * [`MulticastSource`]: rate adaptation, sequencing, pacing.
//! * [`MulticastReceiver`]: membership refresh, feedback, loss/rate stats,
//!   repair of holes ([`repair`]) and of a lost tail ([`tail`]).
//! * [`wire`]: the subscription, group Data and feedback encodings.
//!
//! The virtual-time tree simulator driving all three is `icn_sim::mcast`
//! (crates/sim), outside the crates the binaries link.
//!
//! Nothing here reads a clock or owns a socket: every call takes `now`.
//! Face identifiers are the engine's `FaceId.0` (`u64`).

#![warn(missing_docs)]

mod error;
pub mod mnft;
pub mod node;
mod node_api;
pub mod pacer;
pub mod receiver;
pub mod repair;
pub mod rtt;
pub mod source;
pub mod tail;
pub mod wire;

pub use error::McastError;
pub use mnft::{Downstream, GroupEntry, JoinOutcome, LeaveOutcome, Mnft, MnftLimits};
pub use node::{
    DataVerdict, FaceSample, FaceSampler, McTransmit, MulticastNode, NodeConfig, NodeOutput,
    NodeStats,
};
pub use pacer::Pacer;
pub use receiver::{MulticastReceiver, ReceiverConfig, ReceiverOutput, ReceiverStats};
pub use repair::{Delivery, Reorder, RepairConfig, RepairStats};
pub use source::{MulticastSource, SourceConfig, SourceStats};
pub use wire::{GroupPacket, Subscription, SubscriptionKind};
