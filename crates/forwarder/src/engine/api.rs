//! Engine configuration, outputs and errors.

use bytes::Bytes;
use cc_core::Duration;
use icn_tlv::Interest;

use super::face::FaceId;
use super::queue::QueueLimits;
use super::strategy::StrategyName;

/// Table sizes and timers. Every table is bounded by one of these.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// PIT entries.
    pub pit_max_entries: usize,
    /// In-records per PIT entry (downstream faces).
    pub pit_max_in_records: usize,
    /// Out-records per PIT entry (upstream faces).
    pub pit_max_out_records: usize,
    /// Content Store packets (NFD default 65536).
    pub cs_max_packets: usize,
    /// Content Store wire bytes.
    pub cs_max_bytes: usize,
    /// FIB prefixes.
    pub fib_max_entries: usize,
    /// Next hops per FIB entry.
    pub fib_max_nexthops: usize,
    /// Strategy-choice entries.
    pub strategy_max_entries: usize,
    /// Dead Nonce List entries.
    pub dead_nonce_max: usize,
    /// How long a dead nonce is remembered (NFD: 6 s).
    pub dead_nonce_lifetime: Duration,
    /// Per-face egress queue bounds.
    pub queue: QueueLimits,
    /// Partially reassembled packets per face.
    pub reassembly_max_partial: usize,
    /// How long a partial packet waits for its fragments (NFD: 500 ms).
    pub reassembly_timeout: Duration,
    /// Cap on InterestLifetime, so that no Interest pins a PIT slot for long.
    pub max_interest_lifetime: Duration,
    /// Undelivered events kept for `poll_event`.
    pub max_pending_events: usize,
    /// Strategy for `/` at start-up (the owner may replace it, e.g. with
    /// a congestion-control scheme's strategy).
    pub default_strategy: String,
    /// Interest octets held by PIT in-records (`[limits] pit_max_bytes`).
    pub pit_max_bytes: usize,
    /// Fragment octets held by all reassemblers.
    pub reassembly_max_bytes: usize,
    /// Octets in all faces' egress queues together (each face's queues
    /// are also bounded by `queue`).
    pub queue_max_bytes: usize,
    /// Percentage of the PIT entries and of the reassembly budget one
    /// non-local face may hold.
    pub face_share_pct: u32,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            pit_max_entries: 131_072,
            pit_max_in_records: 32,
            pit_max_out_records: 32,
            cs_max_packets: 65_536,
            cs_max_bytes: 256 << 20,
            fib_max_entries: 131_072,
            fib_max_nexthops: 32,
            strategy_max_entries: 4096,
            dead_nonce_max: 65_536,
            dead_nonce_lifetime: Duration::from_secs(6),
            queue: QueueLimits::default(),
            reassembly_max_partial: 64,
            reassembly_timeout: Duration::from_millis(500),
            max_interest_lifetime: Duration::from_secs(120),
            max_pending_events: 4096,
            default_strategy: StrategyName::BEST_ROUTE.to_owned(),
            pit_max_bytes: 64 << 20,
            reassembly_max_bytes: 32 << 20,
            queue_max_bytes: 256 << 20,
            face_share_pct: 25,
        }
    }
}

/// A link-layer frame to put on a face's transport now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// Egress face.
    pub face: FaceId,
    /// The frame: a bare Interest/Data or an LpPacket (one fragment).
    pub bytes: Bytes,
}

/// Something the engine hands to its owner.
#[derive(Debug, Clone)]
pub enum EngineEvent {
    /// A management Interest (`/localhost/nfd/...` from a local face or
    /// `/localhop/nfd/...`). Answer with `Forwarder::send_local_data`; the
    /// engine restores the PitToken from its PIT.
    ManagementInterest {
        /// Face it arrived on.
        face: FaceId,
        /// The decoded Interest (its `wire()` is the bytes received).
        interest: Interest,
        /// PitToken it carried, for owners that reply out of band.
        pit_token: Option<Bytes>,
    },
}

/// Errors of the control-plane methods (network input never errors; it is
/// counted and dropped).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// The face does not exist.
    #[error("face {0} does not exist")]
    UnknownFace(FaceId),
    /// The FIB holds its maximum number of prefixes.
    #[error("FIB is full")]
    FibFull,
    /// The FIB entry holds its maximum number of next hops.
    #[error("too many next hops on one FIB entry")]
    TooManyNextHops,
    /// The prefix is deeper than 32 components or malformed.
    #[error("prefix is too deep or malformed")]
    BadPrefix,
    /// No strategy with this name (or version) is registered.
    #[error("unknown strategy {0}")]
    UnknownStrategy(String),
    /// The strategy-choice table is full.
    #[error("strategy choice table is full")]
    StrategyTableFull,
}
