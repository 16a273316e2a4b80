//! QSCCP (Bai et al., 2024/25): a scheduler tree per shaped face (classes
//! by strict priority and WFQ, flows by WDRR, token-bucket pacing) whose
//! PECN law gives each flow a rate, and a strategy that spreads a flow's
//! Interests over next hops by the rates they return (adaptive forwarding)
//! and carries the target rate back to the consumer.

use std::collections::{BTreeMap, HashMap};

use cc_core::qsccp::{
    CdsScheduler, Dequeue, MultipathConfig, MultipathTable, QsccpConfig, ServiceClass,
};
use cc_core::Timestamp;
use icn_tlv::cc::rate_to_wire;
use icn_tlv::CcFields;

use super::config::CcConfig;
use super::flow_prefix_of;
use super::scheme::{Decide, FaceFacts, SchemePart};
use crate::engine::{
    Action, CcFaceStatus, FaceId, HookDequeue, IncomingInterest, InterestAdmission, OutPacket,
    PitEntry,
};

/// Target rates at or above this (1 Tbit/s) mean "no limit known yet".
const MAX_TARGET_BPS: f64 = 1e12;

/// Bound on the per-prefix classes remembered.
const MAX_CLASSES: usize = 4096;

/// The QSCCP class of an Interest (absent = best effort).
pub(crate) fn class_of(cc: &CcFields) -> ServiceClass {
    cc.service_class.unwrap_or(ServiceClass::Be)
}

/// The scheduler configuration of a face of `capacity_bps`.
pub(crate) fn qsccp_config(cfg: &CcConfig, capacity_bps: u64) -> QsccpConfig {
    let q = &cfg.qsccp;
    QsccpConfig {
        capacity_bps,
        eta: q.eta,
        delta: [q.cs7_cap_fraction, q.cs6_cap_fraction, q.ef_cap_fraction],
        omega: q.class_weights,
        flow_queue_capacity: q.flow_queue_capacity.max(1),
        kappa: q.kappa,
        lambda: q.lambda,
        phi_penalty: q.phi_penalty,
        period: cfg.period(),
        ds_rate_headroom: q.ds_rate_headroom,
        dt_rate_headroom: q.dt_rate_headroom,
        dt_queue_factor: q.dt_queue_factor,
        rate_new_flows: q.rate_new_flows,
        propagate_penalty: q.propagate_penalty,
        min_data_per_flow: q.min_data_per_flow,
        ..QsccpConfig::for_profile(q.profile)
    }
}

/// A shaped face's scheduler and what it refused.
struct FaceSched {
    cds: CdsScheduler<OutPacket>,
    rejected: u64,
}

/// QSCCP on one node.
pub(crate) struct Qsccp {
    cfg: CcConfig,
    /// Seed of the node, folded with the face id for each scheduler.
    node_seed: u64,
    faces: BTreeMap<FaceId, FaceSched>,
    multipath: MultipathTable,
    /// The class each prefix's Interests carried (Data need not echo it).
    classes: HashMap<u64, ServiceClass>,
    /// Downstream faces of the Data at hand (reused per packet).
    downs: Vec<FaceId>,
    /// Next-hop ids of the Interest at hand (reused per packet).
    ids: Vec<u64>,
}

impl Qsccp {
    pub(crate) fn new(cfg: &CcConfig, seed: u64, node_seed: u64) -> Self {
        Qsccp {
            cfg: cfg.clone(),
            node_seed,
            faces: BTreeMap::new(),
            multipath: MultipathTable::new(
                MultipathConfig {
                    probe_probability: cfg.qsccp.probe_probability,
                    default_upstream_bps: cfg.qsccp.default_upstream_bps,
                    ..MultipathConfig::default()
                },
                seed,
            ),
            classes: HashMap::new(),
            ids: Vec::new(),
            downs: Vec::new(),
        }
    }

    fn ensure(
        &mut self,
        now: Timestamp,
        face: FaceId,
        facts: &FaceFacts,
    ) -> Option<&mut FaceSched> {
        if !self.faces.contains_key(&face) {
            let c = facts.shaped_capacity_bps()?;
            let cds = CdsScheduler::new(qsccp_config(&self.cfg, c), now, self.node_seed ^ face.0);
            self.faces.insert(face, FaceSched { cds, rejected: 0 });
        }
        self.faces.get_mut(&face)
    }

    /// The PECN rate R of a flow at `face`.
    fn local_rate(&self, face: FaceId, class: ServiceClass, prefix: u64) -> Option<f64> {
        self.faces.get(&face)?.cds.flow_rate_bps(class, prefix)
    }

    /// PECN: the capacity B_c each class got on `face` in the last period,
    /// highest priority first; None when the face runs no scheduler.
    pub(crate) fn class_capacities_bps(&self, face: FaceId) -> Option<Vec<(ServiceClass, u64)>> {
        let cds = &self.faces.get(&face)?.cds;
        Some(
            ServiceClass::ALL
                .into_iter()
                .map(|c| (c, cds.class_capacity_bps(c).max(0.0) as u64))
                .collect(),
        )
    }
}

impl SchemePart for Qsccp {
    fn face_added(&mut self, now: Timestamp, face: FaceId, facts: &FaceFacts) {
        self.ensure(now, face, facts);
    }

    fn face_removed(&mut self, face: FaceId) -> usize {
        self.faces.remove(&face).map_or(0, |f| f.cds.len())
    }

    fn interest_received(&mut self, now: Timestamp, face: FaceId, wire_len: usize) {
        if let Some(f) = self.faces.get_mut(&face) {
            f.cds.on_interest_received(now, wire_len);
        }
    }

    fn admit_interest(
        &mut self,
        now: Timestamp,
        face: FaceId,
        pkt: OutPacket,
        facts: &FaceFacts,
    ) -> Result<InterestAdmission, OutPacket> {
        let Some(f) = self.ensure(now, face, facts) else {
            return Err(pkt);
        };
        let class = class_of(&pkt.cc);
        let prefix = flow_prefix_of(&pkt.wire);
        let marked = pkt.cc.service_penalised && f.cds.config().propagate_penalty;
        let size_bits = pkt
            .cc
            .flow_data_size_bytes
            .map(|b| u32::try_from(b.saturating_mul(8)).unwrap_or(u32::MAX))
            .or(facts.data_bits.map(|b| b as u32));
        let queued = f.cds.enqueue(now, class, prefix, size_bits, pkt);
        if marked {
            // A downstream router penalised the flow (P7): so does this one.
            f.cds.penalise_flow(class, prefix);
        }
        Ok(match queued {
            Ok(()) => InterestAdmission::Queued,
            Err(rej) => {
                f.rejected += 1;
                let mut cc = CcFields::default();
                if let Some(r) = f.cds.flow_rate_bps(class, prefix) {
                    cc.target_rate_bps = Some(rate_to_wire(r));
                }
                InterestAdmission::Rejected { pkt: rej.item, cc }
            }
        })
    }

    fn dequeue_interest(&mut self, now: Timestamp, face: FaceId) -> Option<HookDequeue> {
        let f = self.faces.get_mut(&face)?;
        Some(match f.cds.dequeue(now) {
            Dequeue::Item(s) => {
                let mut pkt = s.item;
                if f.cds.config().propagate_penalty {
                    // ServiceClass + 8 for a flow penalised here (P7).
                    pkt.cc.service_penalised = s.discounted;
                }
                if let Some(r) = s.target_rate_bps {
                    let r = rate_to_wire(r);
                    pkt.cc.downstream_rate_bps =
                        Some(pkt.cc.downstream_rate_bps.map_or(r, |d| d.min(r)));
                }
                HookDequeue::Item(pkt)
            }
            Dequeue::NotBefore(t) => HookDequeue::NotBefore(t),
            Dequeue::Empty => HookDequeue::Empty,
        })
    }

    /// A Data the Content Store answered leaves with the TargetRate this
    /// node last computed for its flow towards `face` (eq. 11), as a Data
    /// from upstream would. Left absent, the next hop down stamped its own
    /// share of its access link: on the testbed (ten 1200 B flows on
    /// 2 Mbit/s) a retransmission answered from r1's store reached the
    /// consumer's node without a rate, left it with 32-506 Mbit/s, and
    /// the consumer went from 18 to 9953 Interests/s (8787 Nacks, a 300 ms
    /// queue at the bottleneck).
    fn store_answer_dequeued(&mut self, _now: Timestamp, face: FaceId, pkt: &mut OutPacket) {
        if pkt.cc.target_rate_bps.is_some() {
            return;
        }
        let prefix = flow_prefix_of(&pkt.wire);
        let class = self
            .classes
            .get(&prefix)
            .copied()
            .unwrap_or(ServiceClass::Be);
        if let Some(t) = self
            .multipath
            .target_rate(class, prefix, face.0)
            .filter(|t| t.is_finite() && *t < MAX_TARGET_BPS)
        {
            pkt.cc.target_rate_bps = Some(rate_to_wire(t));
        }
    }

    fn has_status_work(&self) -> bool {
        !self.faces.is_empty()
    }

    fn status(&self, face: FaceId, s: &mut CcFaceStatus) {
        if let Some(f) = self.faces.get(&face) {
            s.queued_interests = f.cds.len() as u64;
            s.rejected_interests = f.rejected;
            // The best-effort class capacity after the higher classes took
            // theirs: what a new BE flow competes for.
            s.target_rate_bps = Some(f.cds.class_capacity_bps(ServiceClass::Be) as u64);
            s.flows = f.cds.flow_count() as u64;
            s.penalised_flows = f.cds.stats().penalties;
        }
    }

    fn on_interest(
        &mut self,
        d: &mut Decide<'_>,
        _facts: &FaceFacts,
        interest: &IncomingInterest,
        _pit: &mut PitEntry,
        prefix: u64,
        cands: &[FaceId],
    ) {
        let cc_in = d.lp.cc;
        let class = class_of(&cc_in);
        if self.classes.len() >= MAX_CLASSES && !self.classes.contains_key(&prefix) {
            self.classes.clear();
        }
        self.classes.insert(prefix, class);
        let down = cc_in.downstream_rate_bps.map(|x| x as f64);
        let mut ids = core::mem::take(&mut self.ids);
        ids.clear();
        ids.extend(cands.iter().map(|f| f.0));
        self.multipath
            .on_interest(d.now, class, prefix, interest.face.0, down);
        if let Some(f) = self.multipath.choose_next_hop(class, prefix, &ids, d.rng) {
            let local = self.local_rate(FaceId(f), class, prefix);
            let rate = self
                .multipath
                .downstream_rate(class, prefix, f, &ids, local);
            let mut cc = cc_in;
            if rate.is_finite() && rate < MAX_TARGET_BPS {
                cc.downstream_rate_bps = Some(rate_to_wire(rate));
            }
            d.push(Action::ForwardCc {
                face: FaceId(f),
                cc,
            });
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
        let lp = d.lp;
        let class = match lp.cc.service_class {
            Some(_) => class_of(&lp.cc),
            None => self
                .classes
                .get(&prefix)
                .copied()
                .unwrap_or(ServiceClass::Be),
        };
        let local = self.local_rate(in_face, class, prefix);
        let target = lp.cc.target_rate_bps.map(|t| t as f64);
        self.multipath
            .on_data(d.now, class, prefix, in_face.0, target, local);
        let mut downs = core::mem::take(&mut self.downs);
        downs.clear();
        downs.extend(d.downstreams(in_face, pit));
        for &down in &downs {
            let mut cc: CcFields = lp.cc;
            // Before any rate is known upstream the target is MAX_RATE:
            // leave the field as it came rather than invite a flood.
            if let Some(t) = self
                .multipath
                .target_rate(class, prefix, down.0)
                .filter(|t| t.is_finite() && *t < MAX_TARGET_BPS)
            {
                cc.target_rate_bps = Some(rate_to_wire(t));
            }
            d.push(Action::SendDataCc { face: down, cc });
        }
        self.downs = downs;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::engine::FaceParams;
    use crate::router::build;
    use icn_tlv::{decode_packet, Interest, LpPacket, Name};

    /// An Interest marked ServiceClass + 8 by a downstream router
    /// penalises its flow at the upstream face, and every Interest this node
    /// then sends for that flow carries the mark; another flow's do not.
    #[test]
    fn a_penalty_propagates_upstream_with_class_plus_8() {
        for propagate in [true, false] {
            let cfg = Config::from_toml_str(&format!(
                "[cc]\nscheme = \"qsccp\"\n[cc.qsccp]\npropagate_penalty = {propagate}\n"
            ))
            .unwrap()
            .router_config();
            let mut f = build(&cfg, 7);
            let t = Timestamp::from_millis(1);
            let down = f.add_face(t, FaceParams::non_local("sim://down"));
            let up = f.add_face(
                t,
                FaceParams::non_local("sim://up").with_capacity_bps(10_000_000),
            );
            f.fib_add_nexthop(&"/p".parse::<Name>().unwrap(), up, 0)
                .unwrap();
            let send = |f: &mut crate::router::Router, name: &str, nonce: u32, marked: bool| {
                let mut i = Interest::new(name.parse::<Name>().unwrap());
                i.nonce = Some(nonce);
                let mut lp = LpPacket::default();
                lp.cc.service_class = Some(ServiceClass::Af1);
                lp.cc.service_penalised = marked;
                lp.fragment = Some(i.encode());
                f.handle_packet(t, down, lp.encode());
            };
            send(&mut f, "/p/greedy/seg=0", 1, true);
            send(&mut f, "/p/fine/seg=0", 2, false);
            // The flow's next Interest arrives unmarked: penalised here, it
            // leaves marked.
            send(&mut f, "/p/greedy/seg=1", 3, false);
            let mut marks = Vec::new();
            // The scheduler paces Interests by their expected Data.
            for ms in 1..100 {
                while let Some(tx) = f.poll_transmit(Timestamp::from_millis(ms)) {
                    assert_eq!(tx.face, up);
                    let (lp, _) = decode_packet(tx.bytes).unwrap();
                    marks.push(lp.cc.service_penalised);
                }
            }
            marks.sort();
            // Without propagation a mark passes through untouched.
            assert_eq!(marks, [false, propagate, true], "propagate = {propagate}");
            let Some(super::super::scheme::Scheme::Qsccp(q)) =
                f.cc_hooks().scheme(super::super::config::CcScheme::Qsccp)
            else {
                panic!("no qsccp state");
            };
            let sched = &q.faces[&up].cds;
            let phi = |p: &str| {
                sched.flow_phi(
                    ServiceClass::Af1,
                    flow_prefix_of(&Interest::new(p.parse().unwrap()).encode()),
                )
            };
            assert_eq!(phi("/p/greedy/seg=0") < Some(1.0), propagate);
            assert_eq!(phi("/p/fine/seg=0"), Some(1.0));
        }
    }

    /// A flow the scheduler forgot as idle (a period with nothing offered
    /// and nothing queued) while its Interest was still upstream: its Data
    /// leave with this face's share for one more flow, not with the
    /// upstream hop's rate they came with (a consumer adopts that rate).
    #[test]
    fn a_forgotten_flows_data_carry_this_faces_share_not_the_upstream_rate() {
        use super::super::test_rig::{data, interest, router};
        let (mut f, down, up) = router("[cc]\nscheme = \"qsccp\"\n", 2_000_000);
        // The upstream hop stamps a rate far above this face's 2 Mbit/s.
        let upstream = CcFields {
            target_rate_bps: Some(100_000_000),
            ..CcFields::default()
        };
        let prefix = |p: &str| flow_prefix_of(&Interest::new(p.parse().unwrap()).encode());
        let tracked = |f: &crate::router::Router| {
            let Some(super::super::scheme::Scheme::Qsccp(q)) =
                f.cc_hooks().scheme(super::super::config::CcScheme::Qsccp)
            else {
                panic!("no qsccp state");
            };
            q.faces[&up]
                .cds
                .flow_phi(ServiceClass::Be, prefix("/p/a/seg=0"))
                .is_some()
        };
        let a0: Name = "/p/a/seg=0".parse().unwrap();
        let mut a_upstream = None;
        let mut a_rate = None;
        let mut b_rates = Vec::new();
        let mut nonce = 0;
        // /p/a sends one Interest and falls silent; /p/b keeps the face busy
        // (an Interest every 10 ms, answered at once) so its periods close.
        for ms in 2..3_000u64 {
            let now = Timestamp::from_millis(ms);
            if ms == 5 || ms % 10 == 0 {
                nonce += 1;
                let name = if ms == 5 {
                    a0.clone()
                } else {
                    format!("/p/b/seg={ms}").parse().unwrap()
                };
                f.handle_packet(now, down, interest(&name, nonce));
            }
            if ms == 2_500 {
                a_upstream = Some(tracked(&f));
                f.handle_packet(now, up, data(&a0, upstream));
            }
            if f.poll_timeout().is_some_and(|t| t <= now) {
                f.handle_timeout(now);
            }
            while let Some(tx) = f.poll_transmit(now) {
                let (lp, pkt) = decode_packet(tx.bytes).unwrap();
                match pkt {
                    Some(icn_tlv::NetPacket::Interest(i)) if tx.face == up && i.name != a0 => {
                        f.handle_packet(now, up, data(&i.name, upstream));
                    }
                    Some(icn_tlv::NetPacket::Data(d)) if tx.face == down => {
                        if d.name == a0 {
                            a_rate = lp.cc.target_rate_bps;
                        } else {
                            b_rates.push(lp.cc.target_rate_bps);
                        }
                    }
                    _ => {}
                }
            }
        }
        assert_eq!(
            a_upstream,
            Some(false),
            "/p/a was forgotten before its Data"
        );
        assert!(b_rates.len() > 200, "{} Data of /p/b", b_rates.len());
        let a_rate = a_rate.expect("/p/a's Data went down");
        assert!(
            a_rate <= 2_000_000,
            "a forgotten flow's Data carry {a_rate} bit/s on a 2 Mbit/s face"
        );
        assert!(a_rate >= 500_000, "one of two flows: {a_rate} bit/s");
    }

    /// A Data the Content Store answers carries its flow's TargetRate, as
    /// the same Data from upstream did, not no rate (which the next hop
    /// down would fill with its own access link's share).
    #[test]
    fn a_content_store_answer_carries_the_flows_target_rate() {
        use super::super::test_rig::{router, store_answer_run};
        let (mut f, down, up) = router("[cc]\nscheme = \"qsccp\"\n", 2_000_000);
        let upstream = CcFields {
            target_rate_bps: Some(100_000_000),
            ..CcFields::default()
        };
        let run = store_answer_run(&mut f, down, up, upstream);
        assert_eq!(run.store_hits, 1);
        let last = run
            .from_upstream
            .last()
            .expect("Data went down")
            .target_rate_bps;
        assert!(
            last.is_some_and(|t| t <= 2_000_000),
            "from upstream: {last:?}"
        );
        assert_eq!(
            run.from_store.map(|c| c.target_rate_bps),
            Some(last),
            "the store's answer"
        );
    }
}
