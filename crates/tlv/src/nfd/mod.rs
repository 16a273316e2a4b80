//! The NFD management protocol's TLVs (docs/protocol.md §3), shared by the
//! forwarder's manager, `icnfwd status`/`ctl`, the consumer's
//! `rib/register` and the lab's dataset reader, so there is one encoder
//! and one decoder of each.
//!
//! - [`params`]: ControlParameters / ControlResponse and the TLV numbers.
//! - [`command`]: v0.3 signed command Interests.
//! - [`dataset`]: FaceStatus, FibEntry, RibEntry, ForwarderStatus,
//!   StrategyChoice, and the list/segment helpers.
//! - [`cs_info`]: NFD's `cs/info`.
//! - [`face_query`]: the `faces/query` filter.
//! - [`face_state`], [`mcast_state`], [`limits_state`]: icnfwd-specific
//!   datasets (per-face queue and CC state, multicast tree, memory budgets).
//!
//! These are cold-path structures: small, nested several levels deep and
//! read through a zero-copy reader over `Bytes` (`wire`), with errors in
//! [`MgmtError`] terms, which the manager maps to status codes.

// Field and TLV-number names mirror docs/protocol.md §3 one to one; the tables
// there are their documentation.
#![allow(missing_docs)]

pub mod command;
pub mod cs_info;
pub mod dataset;
pub mod face_query;
pub mod face_state;
pub mod limits_state;
pub mod mcast_state;
pub mod params;
pub mod wire;

pub use cs_info::CsInfo;
pub use dataset::{
    FaceStatus, FibEntry, ForwarderStatus, PacketCounters, RibEntryStatus, RouteRecord,
    StrategyChoiceStatus,
};
pub use face_query::FaceQueryFilter;
pub use face_state::{CcStamp, FaceState};
pub use limits_state::LimitsState;
pub use mcast_state::{McastGroupState, McastState};
pub use params::{ControlParameters, ControlResponse};

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
