//! WinCM (Wang et al., 2018): a multi-marking CoDel on every face's Data
//! queue (each congested hop adds one to the mark), and a strategy that
//! weighs next hops by their unsatisfied Interests (UIN/UIW, eq. 3).
//! The UIN/UIW table is keyed per FIB prefix (Algorithm 3; the paper
//! profile) or per content object, the name without its last component
//! (`uiw_per_fib_prefix = false`).

use cc_core::wincm::{MultiMarkConfig, UiwConfig, UiwTable};
use cc_core::{Duration, Timestamp};

use super::config::CcConfig;
use super::fib_key_of;
use super::marking::{FaceMarkers, MarkerLaw};
use super::scheme::{Decide, FaceFacts, SchemePart};
use crate::engine::{
    Action, CcFaceStatus, FaceId, IncomingInterest, OutPacket, PitEntry, QueueView,
};

/// WinCM on one node.
pub(crate) struct Wincm {
    markers: FaceMarkers,
    pub(crate) uiw: UiwTable,
    /// UIN/UIW per FIB prefix rather than per content object.
    per_fib_prefix: bool,
    /// Next-hop ids of the Interest at hand (reused per packet).
    ids: Vec<u64>,
}

impl Wincm {
    pub(crate) fn new(cfg: &CcConfig, seed: u64) -> Self {
        Wincm {
            markers: FaceMarkers::new(MarkerLaw::MultiMark(MultiMarkConfig {
                target: Duration::from_millis(cfg.wincm.target_ms),
                interval: Duration::from_millis(cfg.wincm.interval_ms.max(1)),
                prompt_reentry: cfg.wincm.prompt_reentry,
                mtu_excuse_one_packet: cfg.wincm.mtu_excuse_one_packet,
                standing_reentry: cfg.wincm.standing_reentry,
            })),
            ids: Vec::new(),
            per_fib_prefix: cfg.wincm.uiw_per_fib_prefix,
            uiw: UiwTable::new(
                UiwConfig {
                    d: cfg.wincm.d,
                    prefer_unsaturated: cfg.wincm.prefer_unsaturated,
                    ..UiwConfig::default()
                },
                seed,
            ),
        }
    }
}

impl Wincm {
    /// The UIN/UIW key of `pit` (`object`: its content-object key).
    fn key(&self, pit: &PitEntry, object: u64) -> u64 {
        if self.per_fib_prefix {
            fib_key_of(pit)
        } else {
            object
        }
    }
}

impl SchemePart for Wincm {
    fn face_added(&mut self, _now: Timestamp, face: FaceId, _facts: &FaceFacts) {
        self.markers.face_added(face);
    }

    fn face_removed(&mut self, face: FaceId) -> usize {
        self.markers.face_removed(face);
        0
    }

    fn data_dequeued(
        &mut self,
        now: Timestamp,
        face: FaceId,
        pkt: &mut OutPacket,
        sojourn: Duration,
        view: &QueueView,
    ) {
        // Multi-congestion marking: each congested hop adds one.
        if self.markers.on_dequeue(now, face, pkt, sojourn, view) {
            pkt.congestion_mark = pkt.congestion_mark.saturating_add(1);
        }
    }

    fn handle_timeout(&mut self, now: Timestamp) {
        self.markers.prune(now);
    }

    fn has_status_work(&self) -> bool {
        !self.markers.is_empty()
    }

    fn status(&self, face: FaceId, s: &mut CcFaceStatus) {
        self.markers.add_status(face, s);
    }

    fn on_interest(
        &mut self,
        d: &mut Decide<'_>,
        _facts: &FaceFacts,
        interest: &IncomingInterest,
        pit: &mut PitEntry,
        prefix: u64,
        cands: &[FaceId],
    ) {
        let prefix = self.key(pit, prefix);
        let mut ids = core::mem::take(&mut self.ids);
        ids.clear();
        ids.extend(cands.iter().map(|f| f.0));
        if let Some(f) = self
            .uiw
            .choose(d.now, prefix, &ids, Some(interest.face.0), d.rng)
        {
            d.push(Action::Forward { face: FaceId(f) });
        }
        self.ids = ids;
    }

    fn on_data(
        &mut self,
        d: &mut Decide<'_>,
        _in_facts: Option<&FaceFacts>,
        in_face: FaceId,
        pit: &PitEntry,
        prefix: u64,
    ) {
        let prefix = self.key(pit, prefix);
        self.uiw
            .on_data(d.now, prefix, in_face.0, d.lp.congestion_mark > 0);
        d.send_data_to_downstreams(in_face, pit);
    }

    fn on_nack(&mut self, _d: &mut Decide<'_>, in_face: FaceId, pit: &PitEntry, prefix: u64) {
        let prefix = self.key(pit, prefix);
        self.uiw.on_unsatisfied(prefix, in_face.0);
    }

    fn on_timeout(&mut self, _now: Timestamp, pit: &PitEntry, prefix: u64) {
        let prefix = self.key(pit, prefix);
        for o in pit.out_records.iter().filter(|o| o.nack.is_none()) {
            self.uiw.on_unsatisfied(prefix, o.face.0);
        }
    }
}
