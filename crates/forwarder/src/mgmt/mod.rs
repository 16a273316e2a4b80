//! The NFD management protocol subset that real applications use.
//!
//! Sans-IO: the [`Manager`] receives management Interests handed out by the
//! engine, updates the RIB/FIB/strategy tables through the [`FwdOps`] view of
//! the engine, and answers with DigestSha256-signed Data named exactly as the
//! command Interest. Requests that need the shell (opening a socket for
//! `faces/create`) come out as [`crate::node::NodeEvent`]s.
//!
//! - [`params`]: ControlParameters / ControlResponse codecs.
//! - [`dataset`]: FaceStatus, FibEntry, RibEntry, ForwarderStatus, StrategyChoice.
//! - [`command`]: command Interest parsing (v0.3 signed and legacy forms).
//! - [`rib`]: routes by origin with ChildInherit/Capture, feeding the FIB.
//! - [`face_uri`]: FaceUri parsing.
//! - [`face_state`]: the icnfwd-specific per-face state dataset.
//! - [`cs_info`]: NFD's `cs/info` (Content Store figures).
//! - [`face_query`]: the `faces/query` filter.
//! - [`mcast_state`]: the multicast tree node's counters and groups.
//! - [`limits_state`]: memory budgets and forwarder-wide drops.
//! - [`scope`], [`trust`]: what non-local faces may do, and signature checks.

pub mod command;
pub mod cs_info;
pub mod dataset;
pub mod face_query;
pub mod face_state;
pub mod face_uri;
pub mod limits_state;
mod manager;
pub mod mcast_state;
pub mod params;
pub mod rib;
pub mod scope;
pub mod trust;
mod wire;

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

/// Errors decoding management TLVs or requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MgmtError {
    #[error("truncated or malformed TLV")]
    Truncated,
    #[error("bytes after the TLV element")]
    TrailingBytes,
    #[error("unexpected TLV-TYPE {0}")]
    UnexpectedType(u32),
    #[error("NonNegativeInteger of invalid length")]
    BadNni,
    #[error("invalid UTF-8 string")]
    BadUtf8,
    #[error("invalid Name")]
    BadName,
    #[error("missing {0}")]
    Missing(&'static str),
    #[error("not a /localhost/nfd or /localhop/nfd name")]
    NotManagement,
}

/// NFD ControlResponse status codes (§3.3).
pub mod status {
    pub const OK: u32 = 200;
    pub const BAD_REQUEST: u32 = 400;
    pub const FORBIDDEN: u32 = 403;
    pub const NOT_FOUND: u32 = 404;
    pub const NOT_ACCEPTABLE: u32 = 406;
    pub const CONFLICT: u32 = 409;
    pub const GONE: u32 = 410;
    pub const NAME_TOO_LONG: u32 = 414;
    pub const INTERNAL: u32 = 500;
    pub const NOT_IMPLEMENTED: u32 = 501;
    pub const FACE_CREATE_FAILED: u32 = 504;
}
