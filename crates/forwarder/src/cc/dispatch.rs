//! [`SchemeHooks`]: the engine's congestion-control extension. It keeps
//! what every scheme may know of a face ([`FaceFacts`]) and passes each
//! engine hook to the schemes enabled on this node, in slot order (see
//! [`Scheme::slot`]). It decides nothing itself.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use cc_core::{Duration, Timestamp};
use icn_tlv::CcFields;

use super::config::{CcConfig, CcScheme};
use super::scheme::{Decide, FaceFacts, Scheme, SchemePart};
use crate::engine::{
    CcFaceStatus, CcHooks, FaceId, FaceParams, HookDequeue, InterestAdmission, OutPacket,
    PacketKind, QueueView,
};

/// The forwarder-wide congestion-control extension.
pub struct SchemeHooks {
    pub(crate) cfg: CcConfig,
    /// Schemes enabled so far (default scheme + strategies instantiated);
    /// shared with the strategy builder, which runs where the engine lends
    /// no `&mut` to this object.
    enabled: Arc<AtomicU32>,
    /// Bits of `enabled` whose state exists in `slots`.
    built: u32,
    pub(crate) faces: BTreeMap<FaceId, FaceFacts>,
    slots: [Option<Scheme>; Scheme::SLOTS],
    seed: u64,
    /// Next refresh of the per-face status of schemes without their own
    /// periodic work (PCON, WinCM, QSCCP), so that `FaceInfo::cc` is live.
    next_status: Option<Timestamp>,
}

impl SchemeHooks {
    pub(crate) fn new(cfg: CcConfig, enabled: Arc<AtomicU32>, seed: u64) -> Self {
        let mut h = SchemeHooks {
            cfg,
            enabled,
            built: 0,
            faces: BTreeMap::new(),
            slots: Default::default(),
            seed,
            next_status: None,
        };
        h.sync(Timestamp::ZERO);
        h
    }

    /// Builds the state of schemes enabled since the last call and
    /// announces the existing faces to them.
    fn sync(&mut self, now: Timestamp) {
        let enabled = self.enabled.load(Ordering::Relaxed);
        if enabled == self.built {
            return;
        }
        for scheme in CcScheme::ALL {
            let bit = scheme.bit();
            if enabled & bit == 0 || self.built & bit != 0 {
                continue;
            }
            let Some(slot) = Scheme::slot(scheme) else {
                continue;
            };
            match &mut self.slots[slot] {
                // RCP and MIRCC share the rate slot: MIRCC wins for faces
                // built from now on.
                Some(Scheme::Rate(r)) => r.enable(scheme),
                s @ None => {
                    let Some(mut new) = Scheme::new(scheme, &self.cfg, self.seed) else {
                        continue;
                    };
                    for (face, facts) in &self.faces {
                        new.part_mut().face_added(now, *face, facts);
                    }
                    *s = Some(new);
                }
                Some(_) => {}
            }
        }
        self.built = enabled;
    }

    fn parts_mut(&mut self) -> impl Iterator<Item = &mut dyn SchemePart> {
        self.slots.iter_mut().flatten().map(Scheme::part_mut)
    }

    fn parts(&self) -> impl Iterator<Item = &dyn SchemePart> {
        self.slots.iter().flatten().map(Scheme::part)
    }

    /// The state of `scheme` (None when it was never enabled).
    pub(crate) fn scheme(&self, scheme: CcScheme) -> Option<&Scheme> {
        self.slots[Scheme::slot(scheme)?].as_ref()
    }

    /// Runs a strategy decision of `scheme` with its state and the facts of
    /// the faces; `None` when the scheme has no state on this node.
    pub(crate) fn decide<R>(
        &mut self,
        now: Timestamp,
        scheme: CcScheme,
        f: impl FnOnce(&mut dyn SchemePart, &BTreeMap<FaceId, FaceFacts>) -> R,
    ) -> Option<R> {
        self.sync(now);
        let slot = self.slots[Scheme::slot(scheme)?].as_mut()?;
        Some(f(slot.part_mut(), &self.faces))
    }

    fn has_status_work(&self) -> bool {
        self.parts().any(|p| p.has_status_work())
    }
}

impl CcHooks for SchemeHooks {
    fn face_added(&mut self, now: Timestamp, face: FaceId, params: &FaceParams) {
        self.sync(now);
        let facts = FaceFacts {
            capacity_bps: params.capacity_bps,
            data_in_bps: params.data_in_capacity_bps(),
            local: params.is_local(),
            data_bits: None,
        };
        self.faces.insert(face, facts);
        for p in self.parts_mut() {
            p.face_added(now, face, &facts);
        }
    }

    fn data_flow_queues(&self, params: &FaceParams) -> bool {
        let _ = params;
        let enabled = self.enabled.load(Ordering::Relaxed);
        CcScheme::ALL
            .into_iter()
            .any(|s| enabled & s.bit() != 0 && self.cfg.flow_queues(s))
    }

    fn face_removed(&mut self, face: FaceId) -> usize {
        self.faces.remove(&face);
        self.parts_mut().map(|p| p.face_removed(face)).sum()
    }

    fn capacity_changed(&mut self, face: FaceId, params: &FaceParams) {
        let Some(facts) = self.faces.get_mut(&face) else {
            return;
        };
        facts.capacity_bps = params.capacity_bps;
        facts.data_in_bps = params.data_in_capacity_bps();
        let facts = *facts;
        for p in self.parts_mut() {
            p.capacity_changed(Timestamp::ZERO, face, &facts);
        }
    }

    fn interest_received(&mut self, now: Timestamp, face: FaceId, cc: &CcFields, wire_len: usize) {
        let _ = cc;
        self.sync(now);
        for p in self.parts_mut() {
            p.interest_received(now, face, wire_len);
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
        self.sync(now);
        let Some(facts) = self.faces.get(&face).copied() else {
            return InterestAdmission::Fifo(pkt);
        };
        let mut pkt = pkt;
        for s in self.slots.iter_mut().flatten() {
            match s.part_mut().admit_interest(now, face, pkt, &facts) {
                Ok(a) => return a,
                Err(p) => pkt = p,
            }
        }
        InterestAdmission::Fifo(pkt)
    }

    fn dequeue_interest(&mut self, now: Timestamp, face: FaceId) -> HookDequeue {
        for s in self.slots.iter_mut().flatten() {
            if let Some(d) = s.part_mut().dequeue_interest(now, face) {
                return d;
            }
        }
        HookDequeue::Empty
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
        let Some(f) = self.faces.get_mut(&face) else {
            return;
        };
        let bits = data_bytes as f64 * 8.0;
        f.data_bits = Some(f.data_bits.map_or(bits, |o| o + (bits - o) / 8.0));
        for s in self.slots.iter_mut().flatten() {
            s.part_mut().data_received(now, face, cc, data_bytes, rtt);
        }
    }

    fn nack_received(&mut self, now: Timestamp, face: FaceId, cc: &mut CcFields) {
        for p in self.parts_mut() {
            p.nack_received(now, face, cc);
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
        // The Content Store's answers are known by their ingress, here
        // only, so that no scheme repeats the test.
        let store_answer = pkt.ingress == FaceId::CONTENT_STORE && pkt.kind == PacketKind::Data;
        for p in self.parts_mut() {
            p.data_dequeued(now, face, pkt, sojourn, view);
            if store_answer {
                p.store_answer_dequeued(now, face, pkt);
            }
        }
    }

    fn data_dropped(&mut self, now: Timestamp, face: FaceId) {
        for p in self.parts_mut() {
            p.data_dropped(now, face);
        }
    }

    fn poll_timeout(&self) -> Option<Timestamp> {
        let t = self
            .parts()
            .filter_map(|p| p.poll_timeout())
            .chain(self.next_status)
            .min();
        if t.is_none() && self.has_status_work() {
            // First status refresh of marker/scheduler-only schemes.
            return Some(Timestamp::ZERO);
        }
        t
    }

    fn handle_timeout(&mut self, now: Timestamp) {
        for p in self.parts_mut() {
            p.handle_timeout(now);
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
        let mut s = CcFaceStatus::default();
        if self.faces.contains_key(&face) {
            for p in self.parts() {
                p.status(face, &mut s);
            }
        }
        s
    }
}

/// The decision context of a scheme strategy, split from the engine's.
pub(crate) fn decide_ctx<'a>(
    ctx: &'a mut crate::engine::StrategyCtx<'_, SchemeHooks>,
) -> (&'a mut SchemeHooks, Decide<'a>) {
    let d = Decide {
        now: ctx.now,
        rng: &mut *ctx.rng,
        faces: ctx.faces,
        actions: &mut *ctx.actions,
        lp: ctx.lp,
    };
    (&mut *ctx.cc, d)
}
