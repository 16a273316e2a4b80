//! Data and Nack pipelines, and management replies.

use bytes::Bytes;
use cc_core::Timestamp;
use icn_tlv::{Data, Interest, LpPacket, NackReason};

use super::cc_hooks::CcHooks;
use super::cc_hooks::IncomingLp;
use super::counters::DropReason;
use super::face::{FaceId, LinkType};
use super::forwarder::Forwarder;
use super::multicast_hook::MulticastHook;
use super::name_table::ComponentEnds;
use super::pipeline::{name_scope, IMPLICIT_DIGEST, NO_LP_HEADER};
use super::queue::{OutPacket, PacketKind};
use super::strategy::{Action, IncomingInterest, NameScope, StrategyCtx};

/// The link bytes a management reply is booked at: the internal face has
/// no link, and the reply has always been booked as an empty LpPacket
/// (type and zero length), which it still is.
const INTERNAL_LINK_BYTES: usize = 2;

impl<C: CcHooks, M: MulticastHook> Forwarder<C, M> {
    /// `link_bytes` is the frame as the link carried it (`lp.encoded_len()`
    /// of the received LpPacket; the Data's own length for a bare Data).
    pub(super) fn on_data(
        &mut self,
        now: Timestamp,
        face: FaceId,
        lp: &LpPacket,
        data: &Data,
        link_bytes: usize,
    ) {
        self.counters.n_in_data += 1;
        let local = if face == FaceId::INTERNAL {
            true
        } else {
            match self.faces.0.get_mut(&face) {
                Some(f) => {
                    f.info.counters.n_in_data += 1;
                    f.info.params.is_local()
                }
                None => return,
            }
        };
        if lp.next_hop_face_id.is_some() || lp.non_discovery {
            self.drop_packet(face, DropReason::BadLpHeaders);
            return;
        }
        let name_value = data.name.value().clone();
        let scope = name_scope(&name_value);
        if scope == NameScope::Localhost && !local {
            self.drop_packet(face, DropReason::LocalhostScope);
            return;
        }
        let Some(wire) = data.wire().cloned() else {
            return;
        };
        let Some(ends) = ComponentEnds::parse(&name_value) else {
            self.drop_packet(face, DropReason::Malformed);
            return;
        };
        let mark = lp.congestion_mark.unwrap_or(0);
        if self.groups_data(now, face, data, &wire, &ends, mark) {
            return;
        }
        let full_name = self.pit.has_digest_entries().then(|| {
            let mut v = Vec::with_capacity(name_value.len() + 34);
            v.extend_from_slice(&name_value);
            v.extend_from_slice(&[IMPLICIT_DIGEST, 32]);
            v.extend_from_slice(&data.implicit_digest());
            v
        });
        let mut ids = core::mem::take(&mut self.scratch_ids);
        ids.clear();
        self.pit
            .matches_for_data(&ends, &name_value, full_name.as_deref(), &mut ids);
        if ids.is_empty() {
            self.scratch_ids = ids;
            self.drop_packet(face, DropReason::UnsolicitedData);
            return;
        }
        if !lp.cache_policy_no_cache {
            self.cs
                .insert(now, name_value, wire.clone(), data.meta.freshness_period);
        }
        // The CC hook of the upstream face sees the Data first: RTT of the
        // out-record it answers, then any rewrite (rate stamping, marks).
        let rtt = ids.iter().find_map(|&id| {
            let o = self.pit.get(id)?.out_record(face)?;
            Some(now.saturating_since(o.last_sent))
        });
        // Congestion control books the Data as the link carried it: its LP
        // frame, header and CC fields included, the bytes the upstream's
        // pacer counted against the capacity. Booking the bare Data let
        // MIRCC/QSCCP admit more than the link returns: at 1200-byte Data
        // the ~40 header bytes are 3 %, more than the headroom left, and
        // the upstream's Data queue grew without bound (forwarder README).
        // Built in place: the hook rewrites the fields where the strategy
        // reads them (one copy of the 152-byte CcFields, not three).
        let mut in_lp = IncomingLp {
            congestion_mark: lp.congestion_mark.unwrap_or(0),
            cc: lp.cc,
            bytes: link_bytes,
            is_nack: false,
        };
        self.cc.data_received(
            now,
            face,
            &mut in_lp.cc,
            &mut in_lp.congestion_mark,
            link_bytes,
            rtt,
        );
        self.scratch_sent.clear();
        for &id in &ids {
            self.scratch_actions.clear();
            let Some(entry) = self.pit.get(id) else {
                continue;
            };
            let slot = self
                .strategy_table
                .lpm(&ends, &entry.name_value)
                .map(|(_, s)| *s);
            match slot
                .and_then(|s| self.strategies.get_mut(s))
                .and_then(Option::as_mut)
            {
                Some(strategy) => {
                    let mut ctx = StrategyCtx {
                        now,
                        rng: &mut self.rng,
                        faces: &self.faces,
                        scope,
                        actions: &mut self.scratch_actions,
                        cc: &mut self.cc,
                        lp: in_lp,
                        fib_prefix: &[],
                    };
                    strategy.after_receive_data(&mut ctx, face, entry);
                }
                None => {
                    for r in &entry.in_records {
                        if r.face != face && r.expiry > now {
                            self.scratch_actions.push(Action::SendData { face: r.face });
                        }
                    }
                }
            }
            let incoming = IncomingInterest {
                face,
                nonce: 0,
                hop_limit: None,
                scope,
                wire: Bytes::new(),
            };
            self.apply_actions(now, id, &incoming, &in_lp, Some(&wire));
            if self.pit.get(id).is_some() {
                self.counters.n_satisfied_interests += 1;
                self.finalize(now, id, true);
            }
        }
        self.scratch_ids = ids;
    }

    pub(super) fn on_nack(
        &mut self,
        now: Timestamp,
        face: FaceId,
        lp: &LpPacket,
        interest: &Interest,
        reason: NackReason,
    ) {
        self.counters.n_in_nacks += 1;
        let link_type = match self.faces.0.get_mut(&face) {
            Some(f) => {
                f.info.counters.n_in_nacks += 1;
                f.info.params.link_type
            }
            None => return,
        };
        if lp.next_hop_face_id.is_some() || lp.cache_policy_no_cache || lp.non_discovery {
            self.drop_packet(face, DropReason::BadLpHeaders);
            return;
        }
        if link_type == LinkType::MultiAccess {
            self.drop_packet(face, DropReason::NackOnMultiAccess);
            return;
        }
        let name_value = interest.name.value();
        let Some(id) = self
            .pit
            .find(name_value, interest.can_be_prefix, interest.must_be_fresh)
        else {
            self.drop_packet(face, DropReason::UnmatchedNack);
            return;
        };
        let Some(entry) = self.pit.get_mut(id) else {
            return;
        };
        let Some(out) = entry
            .out_records
            .iter_mut()
            .find(|o| o.face == face && Some(o.nonce) == interest.nonce)
        else {
            self.drop_packet(face, DropReason::UnmatchedNack);
            return;
        };
        out.nack = Some(reason);
        let scope = name_scope(name_value);
        let Some(ends) = ComponentEnds::parse(name_value) else {
            return;
        };
        self.scratch_actions.clear();
        let mut cc = lp.cc;
        self.cc.nack_received(now, face, &mut cc);
        let in_lp = IncomingLp {
            congestion_mark: lp.congestion_mark.unwrap_or(0),
            cc,
            bytes: 0,
            is_nack: true,
        };
        let nexthops = self
            .fib
            .lpm(&ends, name_value)
            .map(|e| e.nexthops())
            .unwrap_or(&[]);
        let slot = self.strategy_table.lpm(&ends, name_value).map(|(_, s)| *s);
        let Some(entry) = self.pit.get(id) else {
            return;
        };
        if let Some(strategy) = slot
            .and_then(|s| self.strategies.get_mut(s))
            .and_then(Option::as_mut)
        {
            let mut ctx = StrategyCtx {
                now,
                rng: &mut self.rng,
                faces: &self.faces,
                scope,
                actions: &mut self.scratch_actions,
                cc: &mut self.cc,
                lp: in_lp,
                fib_prefix: &[],
            };
            strategy.after_receive_nack(&mut ctx, face, reason, entry, nexthops);
        }
        let incoming = IncomingInterest {
            face,
            nonce: interest.nonce.unwrap_or(0),
            hop_limit: None,
            scope,
            wire: entry.interest_wire.clone(),
        };
        self.apply_actions(now, id, &incoming, &in_lp, None);
    }

    /// Accepts a management reply (bare Data) for `face`. It satisfies the
    /// PIT entry the management Interest created, so the PitToken is restored
    /// and aggregated requesters are answered too; without a matching entry
    /// the Data goes straight to `face`.
    pub fn send_local_data(&mut self, now: Timestamp, face: FaceId, data: Bytes) {
        let d = match Data::decode(data.clone()) {
            Ok(d) => d,
            Err(e) => {
                tracing::debug!(error = %e, "management produced malformed Data");
                self.drop_packet(FaceId::INTERNAL, DropReason::Malformed);
                return;
            }
        };
        let name_value = d.name.value().clone();
        let ends = ComponentEnds::parse(&name_value);
        let mut ids = core::mem::take(&mut self.scratch_ids);
        ids.clear();
        if let Some(ends) = &ends {
            self.pit.matches_for_data(ends, &name_value, None, &mut ids);
        }
        let pending_on_face = ids.iter().any(|&id| {
            self.pit
                .get(id)
                .is_some_and(|e| e.in_record(face).is_some())
        });
        self.scratch_ids = ids;
        if pending_on_face {
            self.on_data(
                now,
                FaceId::INTERNAL,
                &NO_LP_HEADER,
                &d,
                INTERNAL_LINK_BYTES,
            );
        } else {
            let pkt = OutPacket {
                kind: PacketKind::Data,
                wire: data,
                pit_token: None,
                nack: None,
                congestion_mark: 0,
                cc: Default::default(),
                enqueued_at: now,
                ingress: FaceId::INTERNAL,
            };
            self.send(now, face, pkt, name_scope(&name_value));
        }
        self.refresh_gauges();
    }
}

#[cfg(test)]
mod tests {
    /// A management reply is booked as before: an empty LpPacket's length.
    #[test]
    fn internal_link_bytes_are_an_empty_lp_packet() {
        let empty = icn_tlv::LpPacket::default();
        assert_eq!(super::INTERNAL_LINK_BYTES, empty.encoded_len());
    }
}
