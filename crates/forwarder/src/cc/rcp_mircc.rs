//! RCP and MIRCC (Mahdian et al., ICN 2016): a rate law and Interest shaper
//! per shaped face ([`RateFace`]), rates min-stamped into returning Data
//! and Nacks, and a strategy that spreads Interests over next hops by the
//! bandwidth of their Data direction or follows the consumer's steering
//! hint. MIRCC adds the secondary class and path ids.

use std::collections::BTreeMap;

use cc_core::mircc::path::{choose_by_bandwidth, steer};
use cc_core::{Duration, Timestamp};
use icn_tlv::CcFields;

use super::config::{CcConfig, CcScheme};
use super::rate::RateFace;
use super::scheme::{Decide, FaceFacts, SchemePart};
use crate::engine::{
    Action, CcFaceStatus, FaceId, HookDequeue, IncomingInterest, InterestAdmission, OutPacket,
    PitEntry,
};

/// RCP or MIRCC on one node.
pub(crate) struct RateScheme {
    cfg: CcConfig,
    /// The law of faces built from now on (MIRCC once it is enabled).
    kind: CcScheme,
    faces: BTreeMap<FaceId, RateFace>,
    /// Node id folded into MIRCC path ids.
    node_id: u64,
    /// Next hops' bandwidths of the Interest at hand (reused per packet).
    bw: Vec<f64>,
}

impl RateScheme {
    pub(crate) fn new(kind: CcScheme, cfg: &CcConfig, seed: u64) -> Self {
        RateScheme {
            cfg: cfg.clone(),
            kind,
            faces: BTreeMap::new(),
            node_id: seed ^ 0x6d69_7263_635f_6e6f,
            bw: Vec::new(),
        }
    }

    /// Another rate scheme was enabled on the node: MIRCC wins.
    pub(crate) fn enable(&mut self, scheme: CcScheme) {
        if scheme == CcScheme::Mircc {
            self.kind = CcScheme::Mircc;
        }
    }

    /// Builds the face's law once it has a capacity to book.
    fn ensure(&mut self, face: FaceId, facts: &FaceFacts) -> Option<&mut RateFace> {
        let c = facts.shaped_capacity_bps();
        if !self.faces.contains_key(&face) {
            let c = c?;
            self.faces
                .insert(face, RateFace::new(self.kind, &self.cfg, c as f64));
        }
        self.faces.get_mut(&face)
    }
}

impl SchemePart for RateScheme {
    fn face_added(&mut self, _now: Timestamp, face: FaceId, facts: &FaceFacts) {
        self.ensure(face, facts);
    }

    fn face_removed(&mut self, face: FaceId) -> usize {
        self.faces.remove(&face).map_or(0, |r| r.queued())
    }

    fn capacity_changed(&mut self, _now: Timestamp, face: FaceId, facts: &FaceFacts) {
        if let (Some(r), Some(c)) = (self.faces.get_mut(&face), facts.data_in_bps) {
            r.set_capacity(c as f64);
        }
    }

    fn admit_interest(
        &mut self,
        now: Timestamp,
        face: FaceId,
        pkt: OutPacket,
        facts: &FaceFacts,
    ) -> Result<InterestAdmission, OutPacket> {
        match self.ensure(face, facts) {
            Some(r) => Ok(r.admit(now, pkt)),
            None => Err(pkt),
        }
    }

    fn dequeue_interest(&mut self, now: Timestamp, face: FaceId) -> Option<HookDequeue> {
        self.faces.get_mut(&face).map(|r| r.dequeue(now))
    }

    fn data_received(
        &mut self,
        now: Timestamp,
        face: FaceId,
        cc: &mut CcFields,
        data_bytes: usize,
        rtt: Option<Duration>,
    ) {
        if let Some(r) = self.faces.get_mut(&face) {
            r.on_data(now, data_bytes, rtt);
            r.stamp(cc, self.node_id, face.0);
        }
    }

    fn nack_received(&mut self, _now: Timestamp, face: FaceId, cc: &mut CcFields) {
        if let Some(r) = self.faces.get(&face) {
            if cc.primary_rate_bps.is_some() {
                r.stamp(cc, self.node_id, face.0);
            }
        }
    }

    fn poll_timeout(&self) -> Option<Timestamp> {
        self.faces.values().map(RateFace::next_update).min()
    }

    fn handle_timeout(&mut self, now: Timestamp) {
        for r in self.faces.values_mut() {
            r.handle_timeout(now);
        }
    }

    fn status(&self, face: FaceId, s: &mut CcFaceStatus) {
        if let Some(r) = self.faces.get(&face) {
            r.status(s);
        }
    }

    fn on_interest(
        &mut self,
        d: &mut Decide<'_>,
        _facts: &FaceFacts,
        _interest: &IncomingInterest,
        _pit: &mut PitEntry,
        _prefix: u64,
        cands: &[FaceId],
    ) {
        let cc_in = d.lp.cc;
        let mut cc = cc_in;
        let idx = match cc_in.steering_hint {
            Some(h) if cands.len() > 1 => steer(h, cands.len()).map(|(i, rest)| {
                cc.steering_hint = Some(rest);
                i
            }),
            _ if cands.len() > 1 => {
                self.bw.clear();
                self.bw.extend(cands.iter().map(|&f| {
                    d.faces
                        .face_info(f)
                        .and_then(|i| i.params.data_in_capacity_bps())
                        .map_or(1.0, |c| c as f64)
                }));
                choose_by_bandwidth(&self.bw, d.rng)
            }
            _ => Some(0),
        };
        let face = cands[idx.unwrap_or(0).min(cands.len() - 1)];
        d.push(Action::ForwardCc { face, cc });
    }
}
