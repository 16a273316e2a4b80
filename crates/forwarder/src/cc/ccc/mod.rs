//! CCC (Thibaud et al., ICC 2020): pace objectives ride on Interests and
//! are split over next hops (Algorithm 1); pace constraints ride on Data
//! and aggregate back (Algorithm 2, eq. 9); every face with a capacity
//! supervises its Data queue (Algorithms 3-6). The flow table is in
//! [`flows`]; this module connects it to the engine's hooks and strategy.

mod flows;
#[cfg(test)]
mod pacing_tests;

pub(crate) use flows::{ips_to_wire, wire_to_ips};

use std::collections::BTreeMap;

use cc_core::ccc::pacer::{InterestPacer, Paced};
use cc_core::{Duration, Timestamp};
use icn_tlv::CcFields;

use super::config::CcConfig;
use super::flow_prefix_of;
use super::scheme::{Decide, FaceFacts, SchemePart};
use crate::engine::{
    Action, CcFaceStatus, FaceId, HookDequeue, IncomingInterest, InterestAdmission, OutPacket,
    PitEntry, QueueView,
};
use flows::{Candidate, CccFlows};

/// A flow in a face's pacer: (prefix, downstream face).
type PacedFlow = (u64, FaceId);

/// How long a flow's pacer state outlives its last Interest.
const PACER_IDLE: Duration = Duration::from_secs(1);

/// CCC on one node.
pub(crate) struct Ccc {
    pub(crate) flows: CccFlows,
    /// Per output face, the Interests of each flow waiting for their pace
    /// (`p_o,k`, §IV-A).
    pacers: BTreeMap<FaceId, InterestPacer<PacedFlow, OutPacket>>,
    /// Next hops and downstreams of the packet at hand (reused per packet).
    cands: Vec<Candidate>,
    downs: Vec<FaceId>,
}

impl Ccc {
    pub(crate) fn new(cfg: &CcConfig) -> Self {
        Ccc {
            flows: CccFlows::new(cfg.ccc.core(cfg.period())),
            pacers: BTreeMap::new(),
            cands: Vec::new(),
            downs: Vec::new(),
        }
    }

    /// Eq. 12's used bandwidth on a supervised face, bit/s.
    pub(crate) fn used_bps(&self, face: FaceId) -> Option<u64> {
        self.flows
            .used_bps(face)
            .filter(|_| self.flows.is_supervised(face))
    }
}

impl Ccc {
    /// Tuned (`next_hop_by_room`): among the flow's next hops with a pace,
    /// the one whose pacer would release this Interest first; the
    /// round-robin pick (`picked`) unless another is strictly sooner. Over
    /// time each face still sends at most its pace; what changes is that
    /// an Interest no longer waits behind one face while another has room.
    fn roomiest_hop(
        &self,
        now: Timestamp,
        prefix: u64,
        downstream: FaceId,
        picked: FaceId,
        objective: f64,
    ) -> (FaceId, f64) {
        let cfg = self.flows.config();
        let hops = self.flows.next_hops(prefix, downstream);
        if !cfg.pace_interests || !cfg.next_hop_by_room || hops.len() < 2 {
            return (picked, objective);
        }
        let wait = |face: FaceId| {
            let pace = self
                .flows
                .hop_pace_ips(prefix, downstream, face)
                .filter(|p| *p > 0.0)?;
            Some(
                self.pacers
                    .get(&face)
                    .map_or(Duration::ZERO, |p| p.wait(now, (prefix, downstream), pace)),
            )
        };
        let Some(mut best_wait) = wait(picked) else {
            return (picked, objective);
        };
        let mut best = (picked, objective);
        for h in hops {
            if let Some(w) = wait(FaceId(h.face)).filter(|w| *w < best_wait) {
                best_wait = w;
                best = (FaceId(h.face), h.objective_ips);
            }
        }
        best
    }
}

impl SchemePart for Ccc {
    fn face_removed(&mut self, face: FaceId) -> usize {
        self.flows.face_removed(face);
        self.pacers.remove(&face).map_or(0, |p| p.len())
    }

    /// An Interest of a known flow towards one of its next hops waits in
    /// that face's pacer for the flow's pace there; a flow over its queue
    /// bound is refused (the engine Nacks, reason Congestion).
    fn admit_interest(
        &mut self,
        now: Timestamp,
        face: FaceId,
        pkt: OutPacket,
        _facts: &FaceFacts,
    ) -> Result<InterestAdmission, OutPacket> {
        let cfg = *self.flows.config();
        if !cfg.pace_interests {
            return Err(pkt);
        }
        let key = (flow_prefix_of(&pkt.wire), pkt.ingress);
        let Some(pace) = self.flows.hop_pace_ips(key.0, key.1, face) else {
            return Err(pkt);
        };
        let pacer = self
            .pacers
            .entry(face)
            .or_insert_with(|| InterestPacer::new(cfg.pacer));
        Ok(match pacer.enqueue(now, key, pace, pkt) {
            Ok(()) => InterestAdmission::Queued,
            Err(pkt) => InterestAdmission::Rejected {
                pkt,
                cc: CcFields::default(),
            },
        })
    }

    fn dequeue_interest(&mut self, now: Timestamp, face: FaceId) -> Option<HookDequeue> {
        let p = self.pacers.get_mut(&face)?;
        Some(match p.dequeue(now) {
            Paced::Item(pkt) => HookDequeue::Item(pkt),
            Paced::NotBefore(t) => HookDequeue::NotBefore(t),
            Paced::Empty => HookDequeue::Empty,
        })
    }

    fn capacity_changed(&mut self, _now: Timestamp, face: FaceId, facts: &FaceFacts) {
        // CCC supervises the Data this node sends over the face.
        self.flows.capacity_changed(face, facts.capacity_bps);
    }

    fn data_dequeued(
        &mut self,
        _now: Timestamp,
        face: FaceId,
        pkt: &mut OutPacket,
        sojourn: Duration,
        view: &QueueView,
    ) {
        self.flows
            .on_data_dequeued(face, sojourn, pkt.wire.len(), view.capacity_bps);
    }

    fn data_dropped(&mut self, _now: Timestamp, face: FaceId) {
        self.flows.on_drop(face);
    }

    fn poll_timeout(&self) -> Option<Timestamp> {
        self.flows.poll_timeout()
    }

    fn handle_timeout(&mut self, now: Timestamp) {
        if self.flows.poll_timeout().is_some_and(|t| t <= now) {
            self.flows.handle_timeout(now);
            for p in self.pacers.values_mut() {
                p.prune(now, PACER_IDLE);
            }
        }
    }

    fn status(&self, face: FaceId, s: &mut CcFaceStatus) {
        if let Some(used) = self.used_bps(face) {
            s.target_rate_bps = Some(used);
            s.flows = self.flows.flow_count(face) as u64;
        }
    }

    /// Supervises the downstream face's Data queue if it has a capacity,
    /// then Algorithms 1-2 (see [`CccFlows::on_interest`]).
    fn on_interest(
        &mut self,
        d: &mut Decide<'_>,
        facts: &FaceFacts,
        interest: &IncomingInterest,
        _pit: &mut PitEntry,
        prefix: u64,
        cands: &[FaceId],
    ) {
        let _ = facts;
        let downstream = interest.face;
        // Any face with a capacity is paced by the engine, so its Data queue
        // is where this node's congestion shows, whatever its scope (a
        // loopback UDP peer is a local-scope face with a real capacity).
        if !self.flows.is_supervised(downstream) {
            if let Some(c) = d
                .faces
                .face_info(downstream)
                .and_then(|f| f.params.capacity_bps)
                .filter(|c| *c > 0)
            {
                self.flows.supervise_face(downstream, c);
            }
        }
        let mut with_caps = core::mem::take(&mut self.cands);
        with_caps.clear();
        with_caps.extend(cands.iter().map(|&face| {
            Candidate {
                face,
                // The next hop's Data come back over this face.
                capacity_bps: d
                    .faces
                    .face_info(face)
                    .and_then(|f| f.params.data_in_capacity_bps())
                    .filter(|c| *c > 0),
            }
        }));
        let cc_in = d.lp.cc;
        let objective = cc_in.pace_objective_milli_ips.map(wire_to_ips);
        match self
            .flows
            .on_interest(d.now, prefix, downstream, objective, &with_caps)
        {
            Some((picked, objective)) => {
                let (face, hop_objective) =
                    self.roomiest_hop(d.now, prefix, downstream, picked, objective);
                let mut cc = cc_in;
                cc.pace_objective_milli_ips = Some(ips_to_wire(hop_objective));
                d.push(Action::ForwardCc { face, cc });
            }
            // Flow table full: forward unchanged to the first hop.
            None => d.push(Action::Forward { face: cands[0] }),
        }
        self.cands = with_caps;
    }

    /// The upstream constraint updates each downstream's flow (Algorithm
    /// 2, eq. 9) and each downstream gets its own flow's constraint.
    fn on_data(
        &mut self,
        d: &mut Decide<'_>,
        in_facts: Option<&FaceFacts>,
        in_face: FaceId,
        pit: &PitEntry,
        prefix: u64,
    ) {
        let lp = d.lp;
        let constraint = lp.cc.pace_constraint_milli_ips.map(wire_to_ips);
        let up_bps = in_facts.and_then(|f| f.data_in_bps).filter(|c| *c > 0);
        let mut downs = core::mem::take(&mut self.downs);
        downs.clear();
        downs.extend(d.downstreams(in_face, pit));
        for &down in &downs {
            let out = self
                .flows
                .on_data(d.now, prefix, in_face, constraint, lp.bytes, down, up_bps);
            match out {
                Some(c) => {
                    let mut cc: CcFields = lp.cc;
                    cc.pace_constraint_milli_ips = Some(ips_to_wire(c));
                    d.push(Action::SendDataCc { face: down, cc });
                }
                None => d.push(Action::SendData { face: down }),
            }
        }
        self.downs = downs;
    }
}
