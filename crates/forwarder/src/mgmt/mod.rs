//! The NFD management protocol subset that real applications use.
//!
//! Sans-IO: the [`Manager`] receives management Interests handed out by the
//! engine, updates the RIB/FIB/strategy tables through the [`FwdOps`] view of
//! the engine, and answers with DigestSha256-signed Data named exactly as the
//! command Interest. Requests that need the shell (opening a socket for
//! `faces/create`) come out as [`crate::node::NodeEvent`]s.
//!
//! - [`params`], [`dataset`], [`cs_info`], [`face_query`], [`face_state`],
//!   [`mcast_state`], [`limits_state`]: the TLV codecs, re-exported from
//!   `icn_tlv::nfd`.
//! - [`command`]: command Interest parsing (v0.3 signed and legacy forms).
//! - [`rib`]: routes by origin with ChildInherit/Capture, feeding the FIB.
//! - [`face_uri`]: FaceUri parsing.
//! - [`scope`], [`trust`]: what non-local faces may do, and signature checks.

pub mod command;
pub mod face_uri;
mod manager;
pub mod rib;
pub mod scope;
pub mod trust;

// The management TLVs live in icn-tlv (one codec for the manager, the
// status client, the consumer and the lab); re-exported under their old
// paths so `crate::mgmt::dataset::…` and friends keep meaning the same.
pub use icn_tlv::nfd::{
    cs_info, dataset, face_query, face_state, limits_state, mcast_state, params, status, MgmtError,
};

pub use command::{classify, is_management_name, Request, Signing};
pub use cs_info::CsInfo;
pub use dataset::{
    FaceStatus, FibEntry, ForwarderStatus, PacketCounters, RibEntryStatus, RouteRecord,
    StrategyChoiceStatus,
};
pub use face_query::FaceQueryFilter;
pub use face_state::{CcStamp, FaceState};
pub use face_uri::{FaceUri, FaceUriError};
pub use limits_state::LimitsState;
pub use manager::{FaceCreateRequest, FwdOps, GeneralCounters, Manager, ManagerConfig, MgmtEvent};
pub use mcast_state::{McastGroupState, McastState};
pub use params::{ControlParameters, ControlResponse};
pub use rib::{FibUpdate, Rib, RibError, Route};
