//! What one congestion-control scheme plugs into: [`SchemePart`], the
//! per-node state of a scheme (its per-face machinery and its strategy's
//! tables), and [`Scheme`], the one enum that lists the schemes.
//!
//! Adding a scheme: a module with a type implementing [`SchemePart`], a
//! variant here (and in [`Scheme::new`]), and a `CcScheme` entry in
//! `config.rs`. The engine, the dispatcher (`dispatch.rs`) and the
//! strategy wrapper (`strategy.rs`) do not change.

use cc_core::{Duration, Timestamp};
use icn_tlv::CcFields;
use rand::rngs::SmallRng;

use super::ccc::Ccc;
use super::config::{CcConfig, CcScheme};
use super::pcon::Pcon;
use super::qsccp::Qsccp;
use super::rcp_mircc::RateScheme;
use super::wincm::Wincm;
use crate::engine::{
    Action, CcFaceStatus, FaceId, FaceLookup, HookDequeue, IncomingInterest, IncomingLp,
    InterestAdmission, OutPacket, PitEntry, QueueView,
};

/// What every scheme may know of a face, kept by the dispatcher.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FaceFacts {
    /// Egress (pacing) capacity: the Data this node sends over the face.
    pub(crate) capacity_bps: Option<u64>,
    /// Capacity of the Data arriving over the face (the link's other
    /// direction): what rate laws, Interest shapers and schedulers book.
    pub(crate) data_in_bps: Option<u64>,
    /// An application face: never the bottleneck, never shaped.
    pub(crate) local: bool,
    /// EWMA of the Data received on this face, bits (the expected Data size
    /// of Interests that carry none, for the QSCCP scheduler).
    pub(crate) data_bits: Option<f64>,
}

impl FaceFacts {
    /// The Data-in capacity when the face may be shaped (not local, > 0).
    pub(crate) fn shaped_capacity_bps(&self) -> Option<u64> {
        self.data_in_bps.filter(|c| *c > 0 && !self.local)
    }
}

/// A strategy decision's view of the engine (the scheme-neutral part of
/// `StrategyCtx`).
pub(crate) struct Decide<'a> {
    pub(crate) now: Timestamp,
    pub(crate) rng: &'a mut SmallRng,
    pub(crate) faces: &'a dyn FaceLookup,
    pub(crate) actions: &'a mut Vec<Action>,
    pub(crate) lp: IncomingLp,
}

impl Decide<'_> {
    pub(crate) fn push(&mut self, a: Action) {
        self.actions.push(a);
    }

    /// NFD's default Data fan-out: every pending downstream except the face
    /// the Data came from, unless that face is ad hoc (a wireless face
    /// serves downstreams on the same face).
    pub(crate) fn send_data_to_downstreams(&mut self, in_face: FaceId, pit: &PitEntry) {
        for r in &pit.in_records {
            if r.expiry <= self.now {
                continue;
            }
            let adhoc = self
                .faces
                .face_info(r.face)
                .is_some_and(|f| f.params.link_type == crate::engine::LinkType::AdHoc);
            if r.face != in_face || adhoc {
                self.actions.push(Action::SendData { face: r.face });
            }
        }
    }

    /// The downstreams the Data goes to (same rule as
    /// [`Self::send_data_to_downstreams`]).
    pub(crate) fn downstreams<'p>(
        &self,
        in_face: FaceId,
        pit: &'p PitEntry,
    ) -> impl Iterator<Item = FaceId> + 'p {
        let now = self.now;
        let adhoc_in = self
            .faces
            .face_info(in_face)
            .is_some_and(|f| f.params.link_type == crate::engine::LinkType::AdHoc);
        pit.in_records
            .iter()
            .filter(move |r| r.expiry > now && (r.face != in_face || adhoc_in))
            .map(|r| r.face)
    }
}

/// The per-node state of one scheme. Hook methods mirror
/// [`crate::engine::CcHooks`] (each gets the dispatcher's [`FaceFacts`]
/// where it needs them); strategy methods are the scheme strategy's
/// decisions, after retransmission suppression and next-hop eligibility.
/// Every method has a no-op default.
pub(crate) trait SchemePart {
    fn face_added(&mut self, now: Timestamp, face: FaceId, facts: &FaceFacts) {
        let _ = (now, face, facts);
    }
    /// Returns the packets it held for the face (discarded).
    fn face_removed(&mut self, face: FaceId) -> usize {
        let _ = face;
        0
    }
    fn capacity_changed(&mut self, now: Timestamp, face: FaceId, facts: &FaceFacts) {
        let _ = (now, face, facts);
    }
    fn interest_received(&mut self, now: Timestamp, face: FaceId, wire_len: usize) {
        let _ = (now, face, wire_len);
    }
    /// `Err(pkt)`: not this scheme's Interest queue.
    #[allow(clippy::result_large_err)] // by value once per packet; a box would allocate
    fn admit_interest(
        &mut self,
        now: Timestamp,
        face: FaceId,
        pkt: OutPacket,
        facts: &FaceFacts,
    ) -> Result<InterestAdmission, OutPacket> {
        let _ = (now, face, facts);
        Err(pkt)
    }
    /// `None`: this scheme holds no Interest queue for the face.
    fn dequeue_interest(&mut self, now: Timestamp, face: FaceId) -> Option<HookDequeue> {
        let _ = (now, face);
        None
    }
    fn data_received(
        &mut self,
        now: Timestamp,
        face: FaceId,
        cc: &mut CcFields,
        data_bytes: usize,
        rtt: Option<Duration>,
    ) {
        let _ = (now, face, cc, data_bytes, rtt);
    }
    fn nack_received(&mut self, now: Timestamp, face: FaceId, cc: &mut CcFields) {
        let _ = (now, face, cc);
    }
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
    /// A Data the Content Store answered is leaving on `face` (after
    /// [`SchemePart::data_dequeued`]): it fills in the feedback a Data from
    /// upstream would carry. The store keeps the bare Data, so its answer
    /// has none, and a hop or consumer that reads an absent rate as "no
    /// limit here" follows whatever the next hop down stamps (QSCCP's
    /// TargetRate, RCP/MIRCC's rates; docs/deviations.md Q7, R5).
    fn store_answer_dequeued(&mut self, now: Timestamp, face: FaceId, pkt: &mut OutPacket) {
        let _ = (now, face, pkt);
    }
    fn data_dropped(&mut self, now: Timestamp, face: FaceId) {
        let _ = (now, face);
    }
    fn poll_timeout(&self) -> Option<Timestamp> {
        None
    }
    fn handle_timeout(&mut self, now: Timestamp) {
        let _ = now;
    }
    /// Per-packet state whose status the dispatcher refreshes each period
    /// (markers, schedulers) although the scheme has no timer of its own.
    fn has_status_work(&self) -> bool {
        false
    }
    fn status(&self, face: FaceId, s: &mut CcFaceStatus) {
        let _ = (face, s);
    }

    /// Where the Interest of `prefix` goes among `cands` (eligible next
    /// hops, FIB order, never empty).
    fn on_interest(
        &mut self,
        d: &mut Decide<'_>,
        facts: &FaceFacts,
        interest: &IncomingInterest,
        pit: &mut PitEntry,
        prefix: u64,
        cands: &[FaceId],
    );
    /// Data from `in_face` satisfies `pit`; the default returns it to the
    /// downstreams unchanged.
    fn on_data(
        &mut self,
        d: &mut Decide<'_>,
        in_facts: Option<&FaceFacts>,
        in_face: FaceId,
        pit: &PitEntry,
        prefix: u64,
    ) {
        let _ = (in_facts, prefix);
        d.send_data_to_downstreams(in_face, pit);
    }
    /// A Nack from `in_face` was recorded on `pit`.
    fn on_nack(&mut self, d: &mut Decide<'_>, in_face: FaceId, pit: &PitEntry, prefix: u64) {
        let _ = (d, in_face, pit, prefix);
    }
    /// The entry expired unsatisfied.
    fn on_timeout(&mut self, now: Timestamp, pit: &PitEntry, prefix: u64) {
        let _ = (now, pit, prefix);
    }
}

/// The schemes, one variant each (RCP and MIRCC share the rate law).
pub(crate) enum Scheme {
    Pcon(Pcon),
    Rate(RateScheme),
    Ccc(Ccc),
    Wincm(Wincm),
    Qsccp(Qsccp),
}

impl Scheme {
    /// The state of `scheme` on a node (None for `none`). `seed` is the
    /// node's; each scheme derives its own streams from it.
    pub(crate) fn new(scheme: CcScheme, cfg: &CcConfig, seed: u64) -> Option<Scheme> {
        let s = seed ^ u64::from(scheme.bit());
        Some(match scheme {
            CcScheme::None => return None,
            CcScheme::Pcon => Scheme::Pcon(Pcon::new(cfg)),
            CcScheme::Rcp | CcScheme::Mircc => Scheme::Rate(RateScheme::new(scheme, cfg, seed)),
            CcScheme::Ccc => Scheme::Ccc(Ccc::new(cfg)),
            CcScheme::Wincm => Scheme::Wincm(Wincm::new(cfg, s)),
            CcScheme::Qsccp => Scheme::Qsccp(Qsccp::new(cfg, s, seed)),
        })
    }

    /// Dispatch slot of `scheme` (RCP and MIRCC share one).
    pub(crate) fn slot(scheme: CcScheme) -> Option<usize> {
        match scheme {
            CcScheme::None => None,
            // Order of the slots is the order hooks run in: the QSCCP
            // scheduler owns a face's Interest queue before a rate shaper.
            CcScheme::Qsccp => Some(0),
            CcScheme::Rcp | CcScheme::Mircc => Some(1),
            CcScheme::Ccc => Some(2),
            CcScheme::Pcon => Some(3),
            CcScheme::Wincm => Some(4),
        }
    }

    /// Number of slots.
    pub(crate) const SLOTS: usize = 5;

    pub(crate) fn part(&self) -> &dyn SchemePart {
        match self {
            Scheme::Pcon(s) => s,
            Scheme::Rate(s) => s,
            Scheme::Ccc(s) => s,
            Scheme::Wincm(s) => s,
            Scheme::Qsccp(s) => s,
        }
    }

    pub(crate) fn part_mut(&mut self) -> &mut dyn SchemePart {
        match self {
            Scheme::Pcon(s) => s,
            Scheme::Rate(s) => s,
            Scheme::Ccc(s) => s,
            Scheme::Wincm(s) => s,
            Scheme::Qsccp(s) => s,
        }
    }
}
