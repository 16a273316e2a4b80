//! RCP and MIRCC (Mahdian et al., ICN 2016): a rate law and Interest shaper
//! per shaped face ([`RateFace`]), rates min-stamped into returning Data
//! and Nacks, and a strategy that spreads Interests over next hops by the
//! bandwidth of their Data direction or follows the consumer's steering
//! hint. MIRCC adds the secondary class and path ids.

use std::collections::{BTreeMap, HashMap};

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
    /// The rates and MIRCC path id the last Data of each flow (name
    /// without its last component) left with: what a Data the Content
    /// Store answers is given (see `store_answer_dequeued`). Bounded;
    /// cleared when full, as a flow's next Data refills it.
    last_rates: HashMap<u64, LastRates>,
}

/// What the last Data of a flow carried when it left this node (wire
/// units, as in [`CcFields`]).
#[derive(Debug, Clone, Copy)]
struct LastRates {
    primary: u64,
    secondary: Option<u64>,
    /// MIRCC's path id, this node folded in. A store's answer without it
    /// reaches the consumer as a second path that keeps the rates of that
    /// moment until it times out (2 s): the consumer sends at the largest
    /// primary rate of its paths plus their secondary rates (R5 in
    /// docs/deviations.md).
    path_id: Option<u64>,
}

/// Flows whose last stamped rates a node remembers.
const MAX_REMEMBERED_FLOWS: usize = 4096;

impl RateScheme {
    pub(crate) fn new(kind: CcScheme, cfg: &CcConfig, seed: u64) -> Self {
        RateScheme {
            cfg: cfg.clone(),
            kind,
            faces: BTreeMap::new(),
            node_id: seed ^ 0x6d69_7263_635f_6e6f,
            bw: Vec::new(),
            last_rates: HashMap::new(),
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

    /// A Data the Content Store answered leaves with the rates the last
    /// Data of its flow left with. Left without, the next hop down
    /// min-stamps only its own link's R, and the consumer adopts that at
    /// once (RCP and MIRCC consumers do not smooth): the same defect that,
    /// with QSCCP's TargetRate, took a consumer on the testbed from 18 to
    /// 9953 Interests/s (see `qsccp.rs`).
    fn store_answer_dequeued(&mut self, _now: Timestamp, _face: FaceId, pkt: &mut OutPacket) {
        if pkt.cc.primary_rate_bps.is_some() {
            return;
        }
        let prefix = super::flow_prefix_of(&pkt.wire);
        if let Some(last) = self.last_rates.get(&prefix) {
            pkt.cc.primary_rate_bps = Some(last.primary);
            if pkt.cc.secondary_rate_bps.is_none() {
                pkt.cc.secondary_rate_bps = last.secondary;
            }
            if pkt.cc.path_id.is_none() {
                pkt.cc.path_id = last.path_id;
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

    fn on_data(
        &mut self,
        d: &mut Decide<'_>,
        _in_facts: Option<&FaceFacts>,
        in_face: FaceId,
        pit: &PitEntry,
        prefix: u64,
    ) {
        if let Some(primary) = d.lp.cc.primary_rate_bps {
            if self.last_rates.len() >= MAX_REMEMBERED_FLOWS
                && !self.last_rates.contains_key(&prefix)
            {
                self.last_rates.clear();
            }
            let last = LastRates {
                primary,
                secondary: d.lp.cc.secondary_rate_bps,
                path_id: d.lp.cc.path_id,
            };
            self.last_rates.insert(prefix, last);
        }
        d.send_data_to_downstreams(in_face, pit);
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

#[cfg(test)]
mod tests {
    use super::super::test_rig::{router, store_answer_run};
    use icn_tlv::CcFields;

    /// A Data the Content Store answers carries the rates its flow's last
    /// Data left with, under RCP and MIRCC, not none (which the next hop
    /// down would fill with its own link's R, adopted at once).
    #[test]
    fn a_content_store_answer_carries_the_flows_last_rates() {
        for scheme in ["rcp", "mircc"] {
            let (mut f, down, up) = router(&format!("[cc]\nscheme = \"{scheme}\"\n"), 2_000_000);
            // The producer stamps nothing; this router's link does.
            let run = store_answer_run(&mut f, down, up, CcFields::default());
            assert_eq!(run.store_hits, 1, "{scheme}");
            let rates = |c: &CcFields| (c.primary_rate_bps, c.secondary_rate_bps, c.path_id);
            let last = rates(run.from_upstream.last().expect("Data went down"));
            assert!(
                last.0.is_some_and(|r| r <= 2_000_000),
                "{scheme}: from upstream {last:?}"
            );
            assert_eq!(
                run.from_store.as_ref().map(rates),
                Some(last),
                "{scheme}: the store's answer"
            );
        }
    }
}
