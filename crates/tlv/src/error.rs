//! The crate's single error type.
//!
//! Small and `Copy` so that decoders can return it by value on the hot path
//! without allocation, and so the forwarder can count drops by kind.

/// Everything that can go wrong while decoding or encoding NDN wire data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum TlvError {
    /// The input ended inside a TLV element.
    #[error("unexpected end of input")]
    UnexpectedEnd,
    /// Bytes were left over after a complete element.
    #[error("trailing bytes after TLV element")]
    TrailingBytes,
    /// A TLV-TYPE was 0 or above 2^32-1 (or above 65535 for a name component).
    #[error("TLV-TYPE {0} out of range")]
    TypeOutOfRange(u64),
    /// A TLV-LENGTH does not fit the platform's `usize`.
    #[error("TLV-LENGTH overflow")]
    LengthOverflow,
    /// The outer element had a different TLV-TYPE than required.
    #[error("unexpected TLV-TYPE {found} (expected {expected})")]
    UnexpectedType {
        /// What the caller asked for.
        expected: u32,
        /// What the wire held.
        found: u32,
    },
    /// An unrecognized or out-of-order element whose type is critical.
    #[error("unrecognized critical element {0}")]
    UnrecognizedCritical(u32),
    /// A recognized element whose value has the wrong shape
    /// (NonNegativeInteger of length 3, Nonce not 4 octets, ...).
    #[error("invalid value in element {0}")]
    InvalidValue(u32),
    /// A mandatory element is absent.
    #[error("missing mandatory element {0}")]
    MissingElement(u32),
    /// A recognized header field appeared twice or after a later one.
    #[error("element {0} out of order or repeated")]
    OutOfOrder(u32),
    /// An NDN URI could not be parsed.
    #[error("invalid NDN URI")]
    InvalidUri,
    /// The MTU leaves no room for payload, or more than 400 fragments would be needed.
    #[error("packet cannot be fragmented for this MTU")]
    MtuTooSmall,
    /// A fragment is inconsistent (index >= count, count > 400 or changed, no Sequence).
    #[error("invalid fragment")]
    BadFragment,
    /// A reassembled packet would exceed the reassembler's packet size bound.
    #[error("reassembled packet too large")]
    PacketTooLarge,
    /// Holding a fragment would exceed the reassembler's byte budget.
    #[error("reassembly byte budget exhausted")]
    ReassemblyFull,
}

/// Result alias used throughout the crate.
pub type Result<T> = core::result::Result<T, TlvError>;
