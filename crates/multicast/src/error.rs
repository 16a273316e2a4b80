//! Errors of the multicast tables and codecs.
//!
//! Network input never panics: a bad subscription, feedback or group Data is
//! turned into one of these and the caller counts and drops it.

/// Why a multicast operation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum McastError {
    /// The MNFT already holds its maximum number of groups.
    #[error("multicast forwarding table is full ({0} groups)")]
    TooManyGroups(usize),
    /// The group already has its maximum number of downstream faces.
    #[error("group has too many downstream faces ({0})")]
    TooManyFaces(usize),
    /// A subscription arrived on the face that leads to the source: joining
    /// it there would make the tree loop.
    #[error("subscription arrived on the group's upstream face")]
    FromUpstream,
    /// The group is not in the table (feedback or leave for an unknown group).
    #[error("unknown multicast group")]
    UnknownGroup,
    /// Feedback came from a face that is not a downstream member of the group.
    #[error("feedback from a face that is not downstream of the group")]
    NotDownstream,
    /// The packet is not a multicast subscription / group Data.
    #[error("not a multicast packet: {0}")]
    NotMulticast(&'static str),
    /// The group name is empty or too long to carry a sequence number.
    #[error("invalid group name")]
    BadGroupName,
    /// Wire decoding failed.
    #[error("malformed multicast packet: {0}")]
    Tlv(#[from] icn_tlv::TlvError),
}
