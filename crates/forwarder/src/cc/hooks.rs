//! The engine hook of every scheme: per-face machinery built from cc-core
//! (CoDel and WinCM markers on the Data queue, the RCP/MIRCC rate law and
//! Interest shaper, the QSCCP scheduler tree) and the stamping rules of
//! each scheme's headers. A forwarder only touches the headers of the
//! schemes it runs; everything else passes through unchanged.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use cc_core::codel::CodelConfig;
use cc_core::qsccp::{CdsScheduler, Dequeue};
use cc_core::wincm::MultiMarkConfig;
use cc_core::{Duration, Timestamp};
use icn_tlv::CcFields;

use super::ccc::{Candidate, CccNode};
use super::config::{CcConfig, CcScheme};
use super::marking::{FaceMarker, MarkerLaw};
use super::qsccp::{class_of, flow_prefix_of, qsccp_config};
use super::rate::RateFace;
use crate::engine::{
    CcFaceStatus, CcHooks, FaceId, FaceParams, HookDequeue, InterestAdmission, OutPacket,
    PacketKind, QueueView,
};

/// Per-face machinery; each part exists only when its scheme is enabled.
pub(crate) struct FaceCc {
    /// Egress (pacing) capacity: the Data this node sends over the face.
    pub(crate) capacity_bps: Option<u64>,
    /// Capacity of the Data arriving over the face (the link's other
    /// direction): what rate laws, Interest shapers and schedulers book.
    pub(crate) data_in_bps: Option<u64>,
    pub(crate) local: bool,
    pub(crate) rate: Option<RateFace>,
    codel: Option<FaceMarker>,
    multimark: Option<FaceMarker>,
    pub(crate) cds: Option<CdsScheduler<OutPacket>>,
    pub(crate) cds_rejected: u64,
    /// Data/Nack drops on this face since the last periodic update.
    pub(crate) data_drops: u64,
    /// EWMA of the Data received on this face, bits (the expected Data size
    /// of Interests that carry none, for the QSCCP scheduler).
    data_bits: Option<f64>,
}

/// The forwarder-wide hook object of the `cc` module.
pub struct SchemeHooks {
    pub(crate) cfg: CcConfig,
    /// Schemes enabled so far (default scheme + strategies instantiated).
    enabled: Arc<AtomicU32>,
    pub(crate) faces: BTreeMap<FaceId, FaceCc>,
    /// Node id folded into MIRCC path ids.
    node_id: u64,
    seed: u64,
    /// CCC flows and face supervisors.
    pub(crate) ccc: CccNode,
    /// Next refresh of the per-face status of schemes without their own
    /// periodic work (PCON, WinCM, QSCCP), so that `FaceInfo::cc` is live.
    next_status: Option<Timestamp>,
}

impl SchemeHooks {
    pub(crate) fn new(cfg: CcConfig, enabled: Arc<AtomicU32>, seed: u64) -> Self {
        let ccc = CccNode::new(cfg.ccc.core(cfg.period()));
        SchemeHooks {
            cfg,
            enabled,
            faces: BTreeMap::new(),
            node_id: seed ^ 0x6d69_7263_635f_6e6f,
            seed,
            ccc,
            next_status: None,
        }
    }

    /// CCC on an Interest of (`prefix`) from `downstream`: supervises the
    /// downstream face's Data queue if it has a capacity, then Algorithms
    /// 1-2 (see [`CccNode::on_interest`]).
    pub(crate) fn ccc_interest(
        &mut self,
        now: Timestamp,
        prefix: u64,
        downstream: FaceId,
        objective_ips: Option<f64>,
        cands: &[FaceId],
    ) -> Option<(FaceId, f64)> {
        // Any face with a capacity is paced by the engine, so its Data queue
        // is where this node's congestion shows, whatever its scope (a
        // loopback UDP peer is a local-scope face with a real capacity).
        if !self.ccc.is_supervised(downstream) {
            if let Some(c) = self
                .faces
                .get(&downstream)
                .and_then(|f| f.capacity_bps)
                .filter(|c| *c > 0)
            {
                let share = (c as f64 * self.cfg.ccc.utilisation) as u64;
                self.ccc.supervise_face(downstream, share);
            }
        }
        let cands: Vec<Candidate> = cands
            .iter()
            .map(|&face| Candidate {
                face,
                // The next hop's Data come back over this face.
                capacity_bps: self
                    .faces
                    .get(&face)
                    .and_then(|f| f.data_in_bps)
                    .filter(|c| *c > 0),
            })
            .collect();
        self.ccc
            .on_interest(now, prefix, downstream, objective_ips, &cands)
    }

    /// True when some face runs per-packet machinery whose state the status
    /// should show (markers, schedulers).
    fn has_status_work(&self) -> bool {
        self.faces
            .values()
            .any(|f| f.codel.is_some() || f.multimark.is_some() || f.cds.is_some())
    }

    fn on(&self, s: CcScheme) -> bool {
        self.enabled.load(Ordering::Relaxed) & s.bit() != 0
    }

    /// Builds the parts of `face` for every enabled scheme not built yet.
    fn ensure(&mut self, now: Timestamp, face: FaceId) -> Option<&mut FaceCc> {
        let (pcon, wincm, qsccp) = (
            self.on(CcScheme::Pcon),
            self.on(CcScheme::Wincm),
            self.on(CcScheme::Qsccp),
        );
        let rate_kind = if self.on(CcScheme::Mircc) {
            Some(CcScheme::Mircc)
        } else if self.on(CcScheme::Rcp) {
            Some(CcScheme::Rcp)
        } else {
            None
        };
        let cfg = &self.cfg;
        let seed = self.seed ^ face.0;
        let f = self.faces.get_mut(&face)?;
        // Rate laws and schedulers need a capacity; local (application)
        // faces are never the bottleneck and carry no shaping.
        let cap = f.data_in_bps.filter(|c| *c > 0 && !f.local);
        if pcon && f.codel.is_none() {
            f.codel = Some(FaceMarker::new(MarkerLaw::Codel(CodelConfig {
                target: Duration::from_millis(cfg.pcon.target_ms),
                interval: Duration::from_millis(cfg.pcon.interval_ms.max(1)),
                ..CodelConfig::default()
            })));
        }
        if wincm && f.multimark.is_none() {
            f.multimark = Some(FaceMarker::new(MarkerLaw::MultiMark(MultiMarkConfig {
                target: Duration::from_millis(cfg.wincm.target_ms),
                interval: Duration::from_millis(cfg.wincm.interval_ms.max(1)),
            })));
        }
        if let (Some(kind), Some(c), None) = (rate_kind, cap, &f.rate) {
            f.rate = Some(RateFace::new(kind, cfg, c as f64, now));
        }
        if let (true, Some(c), None) = (qsccp, cap, &f.cds) {
            f.cds = Some(CdsScheduler::new(qsccp_config(cfg, c), now, seed));
        }
        Some(f)
    }
}

impl CcHooks for SchemeHooks {
    fn as_any_mut(&mut self) -> &mut dyn core::any::Any {
        self
    }

    fn face_added(&mut self, now: Timestamp, face: FaceId, params: &FaceParams) {
        self.faces.insert(
            face,
            FaceCc {
                capacity_bps: params.capacity_bps,
                data_in_bps: params.data_in_capacity_bps(),
                local: params.is_local(),
                rate: None,
                codel: None,
                multimark: None,
                cds: None,
                cds_rejected: 0,
                data_drops: 0,
                data_bits: None,
            },
        );
        self.ensure(now, face);
    }

    fn data_flow_queues(&self, params: &FaceParams) -> bool {
        let _ = params;
        (self.on(CcScheme::Pcon) && self.cfg.pcon.flow_queues)
            || (self.on(CcScheme::Wincm) && self.cfg.wincm.flow_queues)
    }

    fn face_removed(&mut self, face: FaceId) -> usize {
        self.ccc.face_removed(face);
        self.faces.remove(&face).map_or(0, |f| {
            f.rate.map_or(0, |r| r.queued()) + f.cds.map_or(0, |c| c.len())
        })
    }

    fn capacity_changed(&mut self, face: FaceId, params: &FaceParams) {
        let eta = self.cfg.ccc.utilisation;
        // CCC supervises the Data this node sends over the face.
        self.ccc
            .capacity_changed(face, params.capacity_bps.map(|c| (c as f64 * eta) as u64));
        if let Some(f) = self.faces.get_mut(&face) {
            f.capacity_bps = params.capacity_bps;
            f.data_in_bps = params.data_in_capacity_bps();
            if let (Some(r), Some(c)) = (f.rate.as_mut(), f.data_in_bps) {
                r.set_capacity(c as f64);
            }
        }
    }

    fn interest_received(&mut self, now: Timestamp, face: FaceId, cc: &CcFields, wire_len: usize) {
        let _ = cc;
        if let Some(cds) = self.faces.get_mut(&face).and_then(|f| f.cds.as_mut()) {
            cds.on_interest_received(now, wire_len);
        }
    }

    fn admit_interest(
        &mut self,
        now: Timestamp,
        face: FaceId,
        pkt: OutPacket,
        view: &QueueView,
    ) -> InterestAdmission {
        let _ = view;
        let Some(f) = self.ensure(now, face) else {
            return InterestAdmission::Fifo(pkt);
        };
        if let Some(cds) = f.cds.as_mut() {
            let class = class_of(&pkt.cc);
            let prefix = flow_prefix_of(&pkt.wire);
            let size_bits = pkt
                .cc
                .flow_data_size_bytes
                .map(|b| u32::try_from(b.saturating_mul(8)).unwrap_or(u32::MAX))
                .or(f.data_bits.map(|b| b as u32));
            return match cds.enqueue(now, class, prefix, size_bits, pkt) {
                Ok(()) => InterestAdmission::Queued,
                Err(rej) => {
                    f.cds_rejected += 1;
                    let mut cc = CcFields::default();
                    if let Some(r) = cds.flow_rate_bps(class, prefix) {
                        cc.target_rate_bps = Some(r.max(0.0) as u64);
                    }
                    InterestAdmission::Rejected { pkt: rej.item, cc }
                }
            };
        }
        match f.rate.as_mut() {
            Some(r) => r.admit(now, pkt),
            None => InterestAdmission::Fifo(pkt),
        }
    }

    fn dequeue_interest(&mut self, now: Timestamp, face: FaceId) -> HookDequeue {
        let Some(f) = self.faces.get_mut(&face) else {
            return HookDequeue::Empty;
        };
        if let Some(cds) = f.cds.as_mut() {
            return match cds.dequeue(now) {
                Dequeue::Item(s) => {
                    let mut pkt = s.item;
                    if let Some(r) = s.target_rate_bps {
                        let r = r.max(0.0) as u64;
                        pkt.cc.downstream_rate_bps =
                            Some(pkt.cc.downstream_rate_bps.map_or(r, |d| d.min(r)));
                    }
                    HookDequeue::Item(pkt)
                }
                Dequeue::NotBefore(t) => HookDequeue::NotBefore(t),
                Dequeue::Empty => HookDequeue::Empty,
            };
        }
        match f.rate.as_mut() {
            Some(r) => r.dequeue(now),
            None => HookDequeue::Empty,
        }
    }

    fn data_received(
        &mut self,
        now: Timestamp,
        face: FaceId,
        cc: &mut CcFields,
        mark: &mut u64,
        data_bytes: usize,
        rtt: Option<Duration>,
    ) {
        let _ = mark;
        let node = self.node_id;
        let Some(f) = self.faces.get_mut(&face) else {
            return;
        };
        let bits = data_bytes as f64 * 8.0;
        f.data_bits = Some(f.data_bits.map_or(bits, |o| o + (bits - o) / 8.0));
        if let Some(r) = f.rate.as_mut() {
            r.on_data(now, data_bytes, rtt);
            r.stamp(cc, node, face.0);
        }
    }

    fn nack_received(&mut self, now: Timestamp, face: FaceId, cc: &mut CcFields) {
        let _ = now;
        let node = self.node_id;
        if let Some(r) = self.faces.get_mut(&face).and_then(|f| f.rate.as_ref()) {
            if cc.primary_rate_bps.is_some() {
                r.stamp(cc, node, face.0);
            }
        }
    }

    fn data_dequeued(
        &mut self,
        now: Timestamp,
        face: FaceId,
        pkt: &mut OutPacket,
        sojourn: Duration,
        view: &QueueView,
    ) {
        let sojourn_ms = self.cfg.ccc.congestion_sojourn_ms;
        // At least one serialisation of this Data: on a link where one Data
        // takes longer than the threshold (8 KB at 2 Mbit/s: 32 ms), the
        // Data waiting behind the one in service was counted as congestion
        // and every flow cut (envelope sweep: seconds of swing).
        let threshold = cc_core::codel::link_target(
            Duration::from_millis(sojourn_ms),
            pkt.wire.len(),
            view.capacity_bps,
        );
        if sojourn_ms > 0 && sojourn > threshold {
            // CCC Algorithm 4 with a queue-delay threshold (see CccParams).
            self.ccc.on_drop(face);
        }
        let Some(f) = self.faces.get_mut(&face) else {
            return;
        };
        if pkt.kind != PacketKind::Data {
            return;
        }
        let bytes = pkt.wire.len();
        if let Some(c) = f.codel.as_mut() {
            if c.on_dequeue(now, sojourn, bytes, view) {
                pkt.congestion_mark = pkt.congestion_mark.max(1);
            }
        }
        if let Some(m) = f.multimark.as_mut() {
            // WinCM multi-congestion marking: each congested hop adds one.
            if m.on_dequeue(now, sojourn, bytes, view) {
                pkt.congestion_mark = pkt.congestion_mark.saturating_add(1);
            }
        }
    }

    fn data_dropped(&mut self, now: Timestamp, face: FaceId) {
        let _ = now;
        if let Some(f) = self.faces.get_mut(&face) {
            f.data_drops += 1;
        }
        self.ccc.on_drop(face);
    }

    fn poll_timeout(&self) -> Option<Timestamp> {
        let mut t = None;
        for f in self.faces.values() {
            if let Some(r) = &f.rate {
                let x = r.next_update();
                t = Some(t.map_or(x, |y: Timestamp| y.min(x)));
            }
        }
        for x in [self.ccc.poll_timeout(), self.next_status]
            .into_iter()
            .flatten()
        {
            t = Some(t.map_or(x, |y: Timestamp| y.min(x)));
        }
        if t.is_none() && self.has_status_work() {
            // First status refresh of marker/scheduler-only schemes.
            t = Some(Timestamp::ZERO);
        }
        t
    }

    fn handle_timeout(&mut self, now: Timestamp) {
        for f in self.faces.values_mut() {
            if let Some(r) = f.rate.as_mut() {
                r.handle_timeout(now);
            }
            f.data_drops = 0;
            for m in [f.codel.as_mut(), f.multimark.as_mut()]
                .into_iter()
                .flatten()
            {
                m.prune();
            }
        }
        if self.ccc.poll_timeout().is_some_and(|t| t <= now) {
            self.ccc.handle_timeout(now);
        }
        if self.has_status_work() {
            if self.next_status.is_none_or(|t| t <= now) {
                self.next_status = Some(now + self.cfg.period());
            }
        } else {
            self.next_status = None;
        }
    }

    fn status(&self, face: FaceId) -> CcFaceStatus {
        let Some(f) = self.faces.get(&face) else {
            return CcFaceStatus::default();
        };
        let mut s = CcFaceStatus::default();
        if let Some(r) = &f.rate {
            r.status(&mut s);
        }
        for m in [&f.codel, &f.multimark].into_iter().flatten() {
            let (marks, episodes, marking) = m.status();
            s.aqm_marks += marks;
            s.aqm_episodes += episodes;
            s.aqm_marking |= marking;
        }
        if let Some(c) = &f.cds {
            s.queued_interests = c.len() as u64;
            s.rejected_interests = f.cds_rejected;
            // The best-effort class capacity after the higher classes took
            // theirs: what a new BE flow competes for.
            s.target_rate_bps = Some(c.class_capacity_bps(cc_core::qsccp::ServiceClass::Be) as u64);
            s.flows = c.flow_count() as u64;
            s.penalised_flows = c.stats().penalties;
        }
        if let Some(used) = self
            .ccc
            .used_bps(face)
            .filter(|_| self.ccc.is_supervised(face))
        {
            s.target_rate_bps = Some(used);
            s.flows = self.ccc.flow_count(face) as u64;
        }
        s
    }
}
