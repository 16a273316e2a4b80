//! PCON (Schneider et al., ICN 2016): CoDel marks Data on every face's
//! queue; the strategy splits Interests over next hops and shifts the
//! split away from faces whose Data or Nacks come back marked.

use std::collections::HashMap;

use cc_core::codel::CodelConfig;
use cc_core::pcon::{PconConfig, PconSplit};
use cc_core::{Duration, Timestamp};

use super::config::CcConfig;
use super::marking::{FaceMarkers, MarkerLaw};
use super::scheme::{Decide, FaceFacts, SchemePart};
use crate::engine::{
    Action, CcFaceStatus, FaceId, IncomingInterest, OutPacket, PitEntry, QueueView,
};

/// Bound on per-prefix splits kept by one node.
const MAX_SPLITS: usize = 4096;

/// PCON on one node: a CoDel marker per face, a forwarding split per prefix.
pub(crate) struct Pcon {
    markers: FaceMarkers,
    split_cfg: PconConfig,
    splits: HashMap<u64, PconSplit>,
    /// Next-hop ids of the Interest at hand (reused per packet).
    ids: Vec<u64>,
}

impl Pcon {
    pub(crate) fn new(cfg: &CcConfig) -> Self {
        Pcon {
            markers: FaceMarkers::new(MarkerLaw::Codel(CodelConfig {
                target: Duration::from_millis(cfg.pcon.target_ms),
                interval: Duration::from_millis(cfg.pcon.interval_ms.max(1)),
                step_marking: cfg.pcon.step_marking,
                ..CodelConfig::default()
            })),
            split_cfg: PconConfig {
                change_per_mark: cfg.pcon.change_per_mark,
                probing_probability: cfg.pcon.probing_probability,
                mark_update_spacing: Duration::from_millis(cfg.pcon.mark_update_spacing_ms),
                ..PconConfig::default()
            },
            splits: HashMap::new(),
            ids: Vec::new(),
        }
    }
}

impl SchemePart for Pcon {
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
        if self.markers.on_dequeue(now, face, pkt, sojourn, view) {
            pkt.congestion_mark = pkt.congestion_mark.max(1);
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
        _interest: &IncomingInterest,
        _pit: &mut PitEntry,
        prefix: u64,
        cands: &[FaceId],
    ) {
        if self.splits.len() >= MAX_SPLITS && !self.splits.contains_key(&prefix) {
            self.splits.clear();
        }
        let cfg = self.split_cfg;
        let split = self
            .splits
            .entry(prefix)
            .or_insert_with(|| PconSplit::new(cfg));
        let mut ids = core::mem::take(&mut self.ids);
        ids.clear();
        ids.extend(cands.iter().map(|f| f.0));
        if let Some(c) = split.choose(&ids, d.rng) {
            d.push(Action::Forward {
                face: FaceId(c.face),
            });
            if c.probe_others {
                for &o in ids.iter().filter(|&&o| o != c.face) {
                    d.push(Action::Forward { face: FaceId(o) });
                }
            }
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
        if d.lp.congestion_mark > 0 {
            if let Some(s) = self.splits.get_mut(&prefix) {
                s.on_marked_data(d.now, in_face.0);
            }
        }
        d.send_data_to_downstreams(in_face, pit);
    }

    fn on_nack(&mut self, d: &mut Decide<'_>, in_face: FaceId, _pit: &PitEntry, prefix: u64) {
        if d.lp.congestion_mark > 0 {
            if let Some(s) = self.splits.get_mut(&prefix) {
                s.on_marked_nack(d.now, in_face.0);
            }
        }
    }

    fn on_timeout(&mut self, _now: Timestamp, pit: &PitEntry, prefix: u64) {
        if let Some(s) = self.splits.get_mut(&prefix) {
            for o in &pit.out_records {
                s.on_expiry(o.face.0);
            }
        }
    }
}
