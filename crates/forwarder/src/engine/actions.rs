//! Applying strategy decisions, and PIT entry finalisation.

use bytes::Bytes;
use cc_core::Timestamp;
use icn_tlv::{CcFields, NackReason};

use super::cc_hooks::CcHooks;
use super::cc_hooks::IncomingLp;
use super::multicast_hook::MulticastHook;

use super::counters::DropReason;
use super::face::FaceId;
use super::forwarder::Forwarder;
use super::name_table::ComponentEnds;
use super::queue::{OutPacket, PacketKind};
use super::strategy::{Action, IncomingInterest, NameScope};

impl<C: CcHooks, M: MulticastHook> Forwarder<C, M> {
    pub(super) fn on_pit_expiry(&mut self, now: Timestamp, id: u32) {
        let Some(entry) = self.pit.get(id) else {
            return;
        };
        if let Some(ends) = ComponentEnds::parse(&entry.name_value) {
            let slot = self
                .strategy_table
                .lpm(&ends, &entry.name_value)
                .map(|(_, s)| *s);
            if let Some(s) = slot
                .and_then(|s| self.strategies.get_mut(s))
                .and_then(Option::as_mut)
            {
                s.on_interest_timeout(now, entry, &mut self.cc);
            }
        }
        self.counters.n_unsatisfied_interests += 1;
        self.finalize(now, id, false);
    }

    /// Deletes a PIT entry, remembering its upstream nonces in the Dead
    /// Nonce List (always when unsatisfied; when satisfied only for
    /// MustBeFresh, as NFD does, since otherwise the CS answers a loop).
    pub(super) fn finalize(&mut self, now: Timestamp, id: u32, satisfied: bool) {
        let Some(entry) = self.pit.get(id) else {
            return;
        };
        if !satisfied || entry.must_be_fresh {
            for o in &entry.out_records {
                if o.face != FaceId::INTERNAL {
                    self.dnl.insert(now, &entry.name_value, o.nonce);
                }
            }
        }
        self.pit.remove(id);
    }

    /// Applies the strategy's actions for PIT entry `id`.
    pub(super) fn apply_actions(
        &mut self,
        now: Timestamp,
        id: u32,
        incoming: &IncomingInterest,
        lp: &IncomingLp,
        data: Option<&Bytes>,
    ) {
        let actions = core::mem::take(&mut self.scratch_actions);
        let mut reject = false;
        let mut forward_failed = false;
        let mark = lp.congestion_mark;
        // The CC fields of Nacks sent downstream: a Nack's own, or what a
        // refusing upstream queue gave; built only when a Nack is (152
        // bytes per packet otherwise).
        let mut reject_cc: Option<CcFields> = None;
        let nack_cc = |reject_cc: Option<CcFields>| {
            reject_cc.unwrap_or(if lp.is_nack { lp.cc } else { CcFields::NONE })
        };
        for a in &actions {
            let (face, cc) = match a {
                Action::Forward { face } => (*face, &lp.cc),
                Action::ForwardCc { face, cc } => (*face, cc),
                Action::SendData { face } => (*face, &lp.cc),
                Action::SendDataCc { face, cc } => (*face, cc),
                Action::Nack { face, reason } => {
                    self.nack_downstream(now, id, *face, *reason, mark, nack_cc(reject_cc));
                    continue;
                }
                Action::NackAll { reason } => {
                    let faces: Vec<FaceId> = self
                        .pit
                        .get(id)
                        .map(|e| e.in_records.iter().map(|r| r.face).collect())
                        .unwrap_or_default();
                    for f in faces {
                        self.nack_downstream(now, id, f, *reason, mark, nack_cc(reject_cc));
                    }
                    continue;
                }
                Action::Reject => {
                    reject = true;
                    continue;
                }
            };
            match a {
                Action::Forward { .. } | Action::ForwardCc { .. } => {
                    if !self.forward_interest(now, id, face, incoming, mark, cc) {
                        forward_failed = true;
                        if let Some(c) = self.last_reject_cc.take() {
                            reject_cc = Some(c);
                        }
                    }
                }
                _ => {
                    let Some(wire) = data else { continue };
                    let token = self
                        .pit
                        .get(id)
                        .and_then(|e| e.in_record(face))
                        .and_then(|r| r.pit_token.clone());
                    if self
                        .scratch_sent
                        .iter()
                        .any(|(f, t)| *f == face && *t == token)
                    {
                        continue;
                    }
                    self.scratch_sent.push((face, token.clone()));
                    let pkt = OutPacket {
                        kind: PacketKind::Data,
                        wire: wire.clone(),
                        pit_token: token,
                        nack: None,
                        congestion_mark: mark,
                        cc: *cc,
                        enqueued_at: now,
                        ingress: incoming.face,
                    };
                    self.send(now, face, pkt, incoming.scope);
                }
            }
        }
        self.scratch_actions = actions;
        self.scratch_actions.clear();
        if forward_failed && !reject {
            reject = self.nack_if_no_upstream_left(now, id, mark, nack_cc(reject_cc));
        }
        self.process_evictions(now);
        if reject || self.pit.get(id).is_some_and(|e| e.in_records.is_empty()) {
            if self.pit.get(id).is_some() {
                self.counters.n_unsatisfied_interests += 1;
            }
            self.finalize(now, id, false);
        }
    }

    fn forward_interest(
        &mut self,
        now: Timestamp,
        id: u32,
        face: FaceId,
        incoming: &IncomingInterest,
        mark: u64,
        cc: &CcFields,
    ) -> bool {
        let max_out = self.cfg.pit_max_out_records;
        let Some(info) = self.faces.0.get(&face).map(|f| &f.info) else {
            self.drop_packet(incoming.face, DropReason::FaceGone);
            return false;
        };
        let local = info.params.is_local();
        if incoming.hop_limit == Some(0) && !local {
            self.drop_packet(face, DropReason::HopLimit);
            return false;
        }
        let Some(entry) = self.pit.get_mut(id) else {
            return false;
        };
        let expiry = entry.expiry;
        let nonce = incoming.nonce;
        let n_out = entry.out_records.len();
        match entry.out_records.iter_mut().find(|o| o.face == face) {
            Some(o) => {
                o.nonce = nonce;
                o.last_sent = now;
                o.expiry = expiry;
                o.nack = None;
            }
            None if n_out < max_out => entry.out_records.push(super::pit::OutRecord {
                face,
                nonce,
                last_sent: now,
                expiry,
                nack: None,
            }),
            None => {
                self.drop_packet(face, DropReason::PitRecordsFull);
                return false;
            }
        }
        let wire = entry.interest_wire.clone();
        let pkt = OutPacket {
            kind: PacketKind::Interest,
            wire,
            pit_token: None,
            nack: None,
            congestion_mark: mark,
            cc: *cc,
            enqueued_at: now,
            ingress: incoming.face,
        };
        if self.send(now, face, pkt, incoming.scope) {
            return true;
        }
        // The upstream queue refused it (full or AQM): local congestion, as
        // if that upstream had answered Nack(Congestion).
        if let Some(o) = self
            .pit
            .get_mut(id)
            .and_then(|e| e.out_records.iter_mut().find(|o| o.face == face))
        {
            o.nack = Some(NackReason::Congestion);
        }
        false
    }

    /// After a failed forward: when no upstream is left pending, Nacks every
    /// downstream with the least severe reason recorded. Returns whether it did.
    fn nack_if_no_upstream_left(
        &mut self,
        now: Timestamp,
        id: u32,
        mark: u64,
        cc: CcFields,
    ) -> bool {
        let Some(entry) = self.pit.get(id) else {
            return false;
        };
        if entry
            .out_records
            .iter()
            .any(|o| o.nack.is_none() && o.expiry > now)
        {
            return false;
        }
        let Some(reason) = entry
            .out_records
            .iter()
            .filter_map(|o| o.nack)
            .min_by_key(|r| super::strategy::nack_severity(*r))
        else {
            return false;
        };
        let faces: Vec<FaceId> = entry.in_records.iter().map(|r| r.face).collect();
        for f in faces {
            self.nack_downstream(now, id, f, reason, mark, cc);
        }
        true
    }

    /// Nacks (reason Congestion) the downstreams of Interests the CC hook
    /// evicted from a face's queue, when no other upstream is pending.
    fn process_evictions(&mut self, now: Timestamp) {
        while let Some((face, victim, cc)) = self.evicted.pop() {
            let Ok(interest) = icn_tlv::Interest::decode(victim.wire) else {
                continue;
            };
            let Some(id) = self.pit.find(
                interest.name.value(),
                interest.can_be_prefix,
                interest.must_be_fresh,
            ) else {
                continue;
            };
            if let Some(o) = self
                .pit
                .get_mut(id)
                .and_then(|e| e.out_records.iter_mut().find(|o| o.face == face))
            {
                o.nack = Some(NackReason::Congestion);
            }
            self.drop_packet(face, DropReason::CcShaper);
            if self.nack_if_no_upstream_left(now, id, victim.congestion_mark, cc) {
                self.counters.n_unsatisfied_interests += 1;
                self.finalize(now, id, false);
            }
        }
    }

    fn nack_downstream(
        &mut self,
        now: Timestamp,
        id: u32,
        face: FaceId,
        reason: NackReason,
        mark: u64,
        cc: CcFields,
    ) {
        let Some(entry) = self.pit.get_mut(id) else {
            return;
        };
        let Some(pos) = entry.in_records.iter().position(|r| r.face == face) else {
            return;
        };
        let rec = entry.in_records.swap_remove(pos);
        self.pit.release(face, rec.wire.len());
        let pkt = OutPacket {
            kind: PacketKind::Nack,
            wire: rec.wire,
            pit_token: rec.pit_token,
            nack: Some(reason),
            congestion_mark: mark,
            cc,
            enqueued_at: now,
            ingress: FaceId::INTERNAL,
        };
        self.send(now, face, pkt, NameScope::Global);
    }
}
