//! The congestion-control hook of the engine: one forwarder-wide object
//! (`Forwarder::set_cc_hooks`) that sees every LP header on the way in and
//! out, may own a face's Interest queue (an Interest shaper or scheduler
//! tree), marks or rewrites Data and Nacks as they leave, and runs periodic
//! per-face work through its own timer (surfaced by `poll_timeout`).
//!
//! The engine stays sans-IO: every call carries `now`, and the hook holds no
//! clock. Strategies reach the same object, typed, through
//! [`StrategyCtx::cc`](super::StrategyCtx) (the engine is generic over the
//! hook type), so a scheme's strategy and its per-face machinery share
//! state without globals or type erasure. The default
//! ([`NoCc`]) forwards headers unchanged and owns no queue.

use cc_core::{Duration, Timestamp};
use icn_tlv::CcFields;

use super::face::{FaceId, FaceParams};
use super::queue::{OutPacket, QueueView};

/// What the hook did with an Interest offered to a face.
#[derive(Debug)]
pub enum InterestAdmission {
    /// Not the hook's business: the engine's FIFO takes it.
    Fifo(OutPacket),
    /// The hook queued it; it comes back through `dequeue_interest`.
    Queued,
    /// Queued after evicting this other (secondary-class) Interest, which the
    /// engine Nacks (reason Congestion, carrying `cc`) towards its downstreams.
    QueuedEvicting {
        /// The evicted Interest.
        victim: OutPacket,
        /// CC fields for the Nack (e.g. MIRCC's Rp/Rs of this link).
        cc: CcFields,
    },
    /// No room: the engine treats it as Nack(Congestion) from this upstream
    /// and tells the downstreams with `cc`.
    Rejected {
        /// The refused Interest.
        pkt: OutPacket,
        /// CC fields for the Nack.
        cc: CcFields,
    },
}

/// Result of asking the hook for a face's next Interest.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // returned by value once per packet; boxing would allocate
pub enum HookDequeue {
    /// Send this now.
    Item(OutPacket),
    /// Backlogged, held until this time.
    NotBefore(Timestamp),
    /// Nothing queued in the hook for this face.
    Empty,
}

/// Live congestion-control state of one face, copied into
/// [`FaceInfo::cc`](super::FaceInfo) after each periodic update.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CcFaceStatus {
    /// Rate this face stamps into returning Data (RCP R, MIRCC Rp), bit/s.
    pub primary_rate_bps: Option<u64>,
    /// MIRCC secondary stamping rate Rs, bit/s.
    pub secondary_rate_bps: Option<u64>,
    /// Target rate computed here (QSCCP: the best-effort class capacity, what
    /// a new BE flow competes for; CCC: eq. 12's used bandwidth), bit/s.
    pub target_rate_bps: Option<u64>,
    /// Interests held in the hook's queue for this face.
    pub queued_interests: u64,
    /// Interests the hook refused (Nacked) so far.
    pub rejected_interests: u64,
    /// Interests the hook evicted for higher-priority ones.
    pub evicted_interests: u64,
    /// Data marked by this face's AQM (PCON CoDel, WinCM multi-marking).
    pub aqm_marks: u64,
    /// Congestion episodes the AQM entered.
    pub aqm_episodes: u64,
    /// True while the AQM is in its marking state.
    pub aqm_marking: bool,
    /// Flows the face's scheme tracks (QSCCP scheduler flows, CCC flows
    /// whose Data leave by this face).
    pub flows: u64,
    /// Flows the QSCCP scheduler judged greedy and discounted so far.
    pub penalised_flows: u64,
}

/// Engine-side congestion-control hooks. Every method has a no-op default.
pub trait CcHooks: Send + 'static {
    /// A face was added.
    fn face_added(&mut self, now: Timestamp, face: FaceId, params: &FaceParams) {
        let _ = (now, face, params);
    }
    /// Whether a new face with `params` queues its Data per flow
    /// (`cc_core::fq`) instead of in one FIFO: schemes that mark per flow.
    fn data_flow_queues(&self, params: &FaceParams) -> bool {
        let _ = params;
        false
    }
    /// A face was removed; returns how many queued packets were discarded.
    fn face_removed(&mut self, face: FaceId) -> usize {
        let _ = face;
        0
    }
    /// A face's pacing capacity changed; `params` are the face's new ones
    /// (the ingress capacity follows it unless set on its own).
    fn capacity_changed(&mut self, face: FaceId, params: &FaceParams) {
        let _ = (face, params);
    }
    /// An Interest (not a Nack) of `wire_len` bytes arrived on `face`.
    fn interest_received(&mut self, now: Timestamp, face: FaceId, cc: &CcFields, wire_len: usize) {
        let _ = (now, face, cc, wire_len);
    }
    /// An Interest is about to be queued on `face`.
    fn admit_interest(
        &mut self,
        now: Timestamp,
        face: FaceId,
        pkt: OutPacket,
        view: &QueueView,
    ) -> InterestAdmission {
        let _ = (now, face, view);
        InterestAdmission::Fifo(pkt)
    }
    /// The next Interest the hook holds for `face`.
    fn dequeue_interest(&mut self, now: Timestamp, face: FaceId) -> HookDequeue {
        let _ = (now, face);
        HookDequeue::Empty
    }
    /// A Data of `data_bytes` arrived on `face` (an upstream). `rtt` is the
    /// age of the out-record it answers. The hook may rewrite the CC fields
    /// and the mark that travel downstream (e.g. min-stamp a rate).
    fn data_received(
        &mut self,
        now: Timestamp,
        face: FaceId,
        cc: &mut CcFields,
        mark: &mut u64,
        data_bytes: usize,
        rtt: Option<Duration>,
    ) {
        let _ = (now, face, cc, mark, data_bytes, rtt);
    }
    /// A Nack arrived on `face`; the hook may rewrite its CC fields.
    fn nack_received(&mut self, now: Timestamp, face: FaceId, cc: &mut CcFields) {
        let _ = (now, face, cc);
    }
    /// A Data or Nack leaves `face` after `sojourn` in its queue: mark it or
    /// rewrite its CC fields here.
    fn data_dequeued(
        &mut self,
        now: Timestamp,
        face: FaceId,
        pkt: &mut OutPacket,
        sojourn: Duration,
        view: &QueueView,
    ) {
        let _ = (now, face, pkt, sojourn, view);
    }
    /// A Data/Nack could not be queued on `face` (queue full).
    fn data_dropped(&mut self, now: Timestamp, face: FaceId) {
        let _ = (now, face);
    }
    /// Next periodic deadline.
    fn poll_timeout(&self) -> Option<Timestamp> {
        None
    }
    /// Runs the periodic work due at `now`.
    fn handle_timeout(&mut self, now: Timestamp) {
        let _ = now;
    }
    /// Current state of `face` for status output.
    fn status(&self, face: FaceId) -> CcFaceStatus {
        let _ = face;
        CcFaceStatus::default()
    }
}

/// The hook that does nothing (scheme `none`).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCc;

impl CcHooks for NoCc {}

/// Congestion-control header fields of the packet that triggered a strategy
/// callback (the incoming Interest, Data or Nack).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IncomingLp {
    /// NDNLPv2 CongestionMark (0 = none).
    pub congestion_mark: u64,
    /// CC fields (after the hook's rewrite for Data and Nacks).
    pub cc: CcFields,
    /// Size on the link: the received LP frame (header and CC fields
    /// included; one header for a reassembled packet), in bytes.
    pub bytes: usize,
    /// True when the packet is a Nack (its CC fields then travel on to the
    /// downstream Nacks).
    pub is_nack: bool,
}
