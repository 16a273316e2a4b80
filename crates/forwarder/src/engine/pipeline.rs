//! Incoming pipelines: LP decoding and reassembly, then Interest, Data and
//! Nack processing in NFD's order (`daemon/fw/forwarder.cpp`).

use bytes::Bytes;
use cc_core::Timestamp;

use icn_tlv::{types, Data, Interest, LpPacket, NackReason, NetPacket, TlvError};

use super::api::EngineEvent;
use super::cc_hooks::CcHooks;
use super::cc_hooks::IncomingLp;
use super::counters::DropReason;
use super::cs::CsQuery;
use super::face::{FaceId, LinkType};
use super::forwarder::Forwarder;
use super::multicast_hook::MulticastHook;
use super::name_table::ComponentEnds;
use super::pit::{InRecord, PitInsert};
use super::queue::{OutPacket, PacketKind};
use super::strategy::{Action, IncomingInterest, NameScope, StrategyCtx};

/// `/localhost` as the start of a Name TLV-VALUE.
const LOCALHOST: &[u8] = b"\x08\x09localhost";
/// `/localhop` as the start of a Name TLV-VALUE.
const LOCALHOP: &[u8] = b"\x08\x08localhop";
/// `/localhost/nfd`.
const LOCALHOST_NFD: &[u8] = b"\x08\x09localhost\x08\x03nfd";
/// `/localhop/nfd`.
const LOCALHOP_NFD: &[u8] = b"\x08\x08localhop\x08\x03nfd";

/// The LP header of a bare Interest or Data: no field present.
pub(super) static NO_LP_HEADER: LpPacket = LpPacket::IDLE;

/// Implicit digest component type.
pub(super) const IMPLICIT_DIGEST: u8 = 1;

pub(super) fn name_scope(name_value: &[u8]) -> NameScope {
    if name_value.starts_with(LOCALHOST) {
        NameScope::Localhost
    } else if name_value.starts_with(LOCALHOP) {
        NameScope::Localhop
    } else {
        NameScope::Global
    }
}

/// The 32-byte digest when the last component of `name_value` is an
/// ImplicitSha256DigestComponent, with the value length before it.
fn trailing_digest(name_value: &[u8], ends: &ComponentEnds) -> Option<([u8; 32], usize)> {
    let total = ends.total();
    if total == 0 || total > ends.depth() {
        return None;
    }
    let start = ends.end(total - 1);
    let comp = &name_value[start..];
    if comp.len() == 34 && comp[0] == IMPLICIT_DIGEST && comp[1] == 32 {
        let mut d = [0u8; 32];
        d.copy_from_slice(&comp[2..]);
        Some((d, start))
    } else {
        None
    }
}

/// What the link layer made of a frame that is not a bare packet.
// Returned once per LP frame, never stored: boxing the LpPacket would
// allocate per frame (every frame of a CC scheme carries an LP header).
#[allow(clippy::large_enum_variant)]
enum LinkLayer {
    /// A network packet (the LpPacket and its fragment, whole).
    Network(LpPacket, Bytes),
    /// IDLE or MCC feedback only: handled.
    Consumed,
    /// Dropped and counted.
    Dropped,
}

impl<C: CcHooks, M: MulticastHook> Forwarder<C, M> {
    /// Processes one frame received on `face`. Never fails: bad input is
    /// counted per reason and dropped.
    pub fn handle_packet(&mut self, now: Timestamp, face: FaceId, bytes: Bytes) {
        let Some(f) = self.faces.0.get_mut(&face) else {
            self.counters.drops.add(DropReason::UnknownFace);
            return;
        };
        f.info.counters.n_in_bytes += bytes.len() as u64;
        // A bare Interest or Data (the common case) has no LP header to
        // decode; the network packet is decoded in place and the pipelines
        // borrow it. Decoding every frame to an (LpPacket, NetPacket) pair
        // moved ~700 bytes at every layer (memcpy about 10 % of the
        // engine's instructions per exchange).
        let received;
        let (lp, wire) = match bytes.first().map(|&t| u32::from(t)) {
            Some(types::INTEREST | types::DATA) => (&NO_LP_HEADER, bytes),
            _ => match self.on_lp_packet(now, face, bytes) {
                LinkLayer::Network(l, wire) => {
                    received = l;
                    (&received, wire)
                }
                LinkLayer::Consumed => {
                    self.refresh_gauges();
                    return;
                }
                LinkLayer::Dropped => return,
            },
        };
        self.on_network_packet(now, face, lp, wire);
        self.refresh_gauges();
    }

    /// Decodes an LpPacket and reassembles fragments; IDLE packets and MCC
    /// feedback end here.
    fn on_lp_packet(&mut self, now: Timestamp, face: FaceId, bytes: Bytes) -> LinkLayer {
        let mut lp = match LpPacket::decode(bytes) {
            Ok(lp) => lp,
            Err(e) => {
                self.drop_malformed(face, &e);
                return LinkLayer::Dropped;
            }
        };
        if lp.is_fragmented() {
            match self.reassemble(now, face, lp) {
                Some(whole) => lp = whole,
                None => return LinkLayer::Dropped,
            }
        }
        match lp.fragment.clone() {
            // `lp` keeps its fragment: a Data is booked at `encoded_len`.
            Some(wire) => LinkLayer::Network(lp, wire),
            None => {
                match &lp.mcc {
                    Some(fb) => self.groups_feedback(now, face, fb, true),
                    None => self.drop_packet(face, DropReason::Idle),
                }
                LinkLayer::Consumed
            }
        }
    }

    /// Decodes the network packet `wire` that came with `lp` and runs its
    /// pipeline (MCC feedback on it first).
    fn on_network_packet(&mut self, now: Timestamp, face: FaceId, lp: &LpPacket, wire: Bytes) {
        match wire.first().map(|&t| u32::from(t)) {
            Some(types::INTEREST) => {
                let decoded = Interest::decode(wire);
                match &decoded {
                    Ok(i) => {
                        self.lp_feedback(now, face, lp);
                        match lp.nack {
                            Some(reason) => self.on_nack(now, face, lp, i, reason),
                            None => self.on_interest(now, face, lp, i),
                        }
                    }
                    Err(e) => self.drop_malformed(face, e),
                }
            }
            Some(types::DATA) => {
                let frame_len = wire.len();
                let decoded = Data::decode(wire);
                match &decoded {
                    Ok(d) => {
                        self.lp_feedback(now, face, lp);
                        // The frame as the link carried it: an LpPacket
                        // holds its fragment (`NO_LP_HEADER` has none), a
                        // bare Data is the frame (decoding checked it spans
                        // the whole of it).
                        let link_bytes = match lp.fragment {
                            Some(_) => lp.encoded_len(),
                            None => frame_len,
                        };
                        self.on_data(now, face, lp, d, link_bytes);
                    }
                    Err(e) => self.drop_malformed(face, e),
                }
            }
            _ => {
                if let Err(e) = NetPacket::decode(wire) {
                    self.drop_malformed(face, &e);
                }
            }
        }
    }

    /// SRMCC feedback riding on a network packet.
    fn lp_feedback(&mut self, now: Timestamp, face: FaceId, lp: &LpPacket) {
        if let Some(fb) = &lp.mcc {
            self.groups_feedback(now, face, fb, false);
        }
    }

    fn drop_malformed(&mut self, face: FaceId, e: &TlvError) {
        tracing::debug!(face = face.0, error = %e, "drop malformed");
        self.drop_packet(face, DropReason::Malformed);
    }

    /// The whole packet once every fragment of it arrived.
    fn reassemble(&mut self, now: Timestamp, face: FaceId, lp: LpPacket) -> Option<LpPacket> {
        match self.reassemble_within_budget(now, face, lp) {
            Ok(whole) => whole,
            Err(reason) => {
                tracing::debug!(face = face.0, reason = reason.as_str(), "drop fragment");
                self.drop_packet(face, reason);
                None
            }
        }
    }

    /// Drops an Interest the PIT has no room (or no share) for; a
    /// point-to-point downstream is told to back off with Nack(Congestion).
    fn refuse_overload(
        &mut self,
        now: Timestamp,
        face: FaceId,
        reason: DropReason,
        link_type: LinkType,
        lp: &LpPacket,
        received: Bytes,
    ) {
        self.drop_packet(face, reason);
        if link_type == LinkType::PointToPoint {
            let pkt = OutPacket {
                kind: PacketKind::Nack,
                wire: received,
                pit_token: lp.pit_token.clone(),
                nack: Some(NackReason::Congestion),
                congestion_mark: 0,
                cc: Default::default(),
                enqueued_at: now,
                ingress: face,
            };
            self.send(now, face, pkt, NameScope::Global);
        }
    }

    fn on_interest(&mut self, now: Timestamp, face: FaceId, lp: &LpPacket, interest: &Interest) {
        self.counters.n_in_interests += 1;
        let (local, link_type) = match self.faces.0.get_mut(&face) {
            Some(f) => {
                f.info.counters.n_in_interests += 1;
                (f.info.params.is_local(), f.info.params.link_type)
            }
            None => return,
        };
        if lp.cache_policy_no_cache {
            self.drop_packet(face, DropReason::BadLpHeaders);
            return;
        }
        if lp.next_hop_face_id.is_some() && !local {
            self.drop_packet(face, DropReason::NextHopFaceId);
            return;
        }
        let hop_limit = match interest.hop_limit {
            Some(0) => {
                self.drop_packet(face, DropReason::HopLimit);
                return;
            }
            Some(h) => Some(h - 1),
            None => None,
        };
        let name_value = interest.name.value().clone();
        let scope = name_scope(&name_value);
        if scope == NameScope::Localhost && !local {
            self.drop_packet(face, DropReason::LocalhostScope);
            return;
        }
        let Some(ends) = ComponentEnds::parse(&name_value).filter(|e| e.total() > 0) else {
            self.drop_packet(face, DropReason::Malformed);
            return;
        };
        if self.groups_interest(now, face, interest, &ends) {
            return;
        }
        let Some(received) = interest.wire().cloned() else {
            return;
        };
        self.cc.interest_received(now, face, &lp.cc, received.len());
        // The wire forwarded upstream: Nonce added if missing (a forwarder
        // must), HopLimit decremented. Both rewrites copy once (cold path).
        // With a Nonce the HopLimit is spliced into the received wire
        // directly (decoding the wire again cost ~600 instructions per
        // Interest, callgrind's `Interest::decode`); a Nonce added first
        // moves the layout.
        let (nonce, out_wire) = match (interest.nonce, hop_limit) {
            (Some(n), None) => (n, received.clone()),
            (Some(n), Some(h)) => (n, interest.with_hop_limit(h)),
            (None, None) => {
                let n = self.rng_u64() as u32;
                (n, interest.with_nonce(n))
            }
            (None, Some(h)) => {
                let n = self.rng_u64() as u32;
                match Interest::decode(interest.with_nonce(n)) {
                    Ok(i) => (n, i.with_hop_limit(h)),
                    Err(_) => {
                        self.drop_packet(face, DropReason::Malformed);
                        return;
                    }
                }
            }
        };

        self.dnl.expire(now);
        if self.dnl.contains(&name_value, nonce) {
            self.on_interest_loop(now, face, link_type, lp, received);
            return;
        }
        let mgmt = (local && name_value.starts_with(LOCALHOST_NFD))
            || name_value.starts_with(LOCALHOP_NFD);
        let digest = trailing_digest(&name_value, &ends);
        let insert = if self.pit_has_room(local) {
            self.pit.find_or_insert(
                &name_value,
                ends.total(),
                interest.can_be_prefix,
                interest.must_be_fresh,
                digest.is_some(),
            )
        } else {
            PitInsert::Full
        };
        let id = match insert {
            PitInsert::Full => {
                self.refuse_overload(now, face, DropReason::PitFull, link_type, lp, received);
                return;
            }
            PitInsert::New(id) | PitInsert::Existing(id) => id,
        };
        let Some(entry) = self.pit.get(id) else {
            return;
        };
        let same_face_same_nonce = entry
            .in_records
            .iter()
            .any(|r| r.face == face && r.nonce == nonce);
        let dup_elsewhere = entry
            .in_records
            .iter()
            .any(|r| r.face != face && r.nonce == nonce)
            || entry.out_records.iter().any(|o| o.nonce == nonce);
        let is_loop = dup_elsewhere || (same_face_same_nonce && link_type == LinkType::MultiAccess);
        if is_loop {
            if !entry.is_pending() {
                self.pit.remove(id);
            }
            self.on_interest_loop(now, face, link_type, lp, received);
            return;
        }

        // Content Store: only for an entry nobody is waiting on yet.
        if !entry.is_pending() && !mgmt {
            let query_name = match digest {
                Some((_, start)) => &name_value[..start],
                None => &name_value[..],
            };
            let q = CsQuery {
                name_value: query_name,
                can_be_prefix: interest.can_be_prefix,
                must_be_fresh: interest.must_be_fresh,
                implicit_digest: digest.map(|(d, _)| d),
            };
            let hit = self.cs.find(now, &q, |wire| {
                Data::decode(wire.clone()).ok().map(|d| d.implicit_digest())
            });
            if let Some(data_wire) = hit {
                self.counters.n_cs_hits += 1;
                self.counters.n_satisfied_interests += 1;
                self.pit.remove(id);
                let pkt = OutPacket {
                    kind: PacketKind::Data,
                    wire: data_wire,
                    pit_token: lp.pit_token.clone(),
                    nack: None,
                    congestion_mark: 0,
                    cc: Default::default(),
                    enqueued_at: now,
                    ingress: FaceId::CONTENT_STORE,
                };
                self.send(now, face, pkt, scope);
                return;
            }
            self.counters.n_cs_misses += 1;
        }

        // In-record.
        let lifetime = interest
            .lifetime_or_default()
            .min(self.cfg.max_interest_lifetime);
        let expiry = now + lifetime;
        let max_in = self.cfg.pit_max_in_records;
        let existing = self
            .pit
            .get(id)
            .and_then(|e| e.in_record(face))
            .map(|r| r.wire.len());
        if existing.is_none() {
            if let Err(reason) = self.pit_admits(face, local, received.len()) {
                if self.pit.get(id).is_some_and(|e| !e.is_pending()) {
                    self.pit.remove(id);
                }
                self.refuse_overload(now, face, reason, link_type, lp, received);
                return;
            }
        }
        let len = received.len();
        let Some(entry) = self.pit.get_mut(id) else {
            return;
        };
        let n_in = entry.in_records.len();
        match entry.in_records.iter_mut().find(|r| r.face == face) {
            Some(r) => {
                r.nonce = nonce;
                r.expiry = expiry;
                r.last_renewed = now;
                r.pit_token = lp.pit_token.clone();
                r.wire = received;
            }
            None if n_in < max_in => entry.in_records.push(InRecord {
                face,
                nonce,
                expiry,
                last_renewed: now,
                pit_token: lp.pit_token.clone(),
                wire: received,
            }),
            None => {
                if !entry.is_pending() {
                    self.pit.remove(id);
                }
                self.drop_packet(face, DropReason::PitRecordsFull);
                return;
            }
        }
        entry.interest_wire = out_wire.clone();
        let entry_expiry = entry
            .in_records
            .iter()
            .map(|r| r.expiry)
            .max()
            .unwrap_or(expiry);
        self.pit.set_expiry(id, entry_expiry);
        if let Some(old) = existing {
            self.pit.release(face, old);
        }
        self.pit.charge(face, len);

        if mgmt {
            self.deliver_management(now, face, id, nonce, lp, interest);
            return;
        }

        let incoming = IncomingInterest {
            face,
            nonce,
            hop_limit,
            scope,
            wire: out_wire,
        };
        let mark = lp.congestion_mark.unwrap_or(0);
        let in_lp = IncomingLp {
            congestion_mark: mark,
            cc: lp.cc,
            bytes: incoming.wire.len(),
            is_nack: false,
        };
        if let Some(nh) = lp.next_hop_face_id {
            // NextHopFaceId from a local app bypasses the strategy.
            self.scratch_actions.clear();
            if self.faces.0.contains_key(&FaceId(nh)) {
                self.scratch_actions
                    .push(Action::Forward { face: FaceId(nh) });
            } else {
                self.drop_packet(face, DropReason::NextHopFaceId);
            }
            self.apply_actions(now, id, &incoming, &in_lp, None);
            return;
        }
        self.run_interest_strategy(now, id, &ends, &name_value, interest, &incoming, in_lp);
        self.apply_actions(now, id, &incoming, &in_lp, None);
    }

    #[allow(clippy::too_many_arguments)] // one call site; the values are borrowed from it
    fn run_interest_strategy(
        &mut self,
        now: Timestamp,
        id: u32,
        ends: &ComponentEnds,
        name_value: &[u8],
        interest: &Interest,
        incoming: &IncomingInterest,
        lp: IncomingLp,
    ) {
        self.scratch_actions.clear();
        // Forwarding hint: use the first delegation that has a route.
        let hint_entry = interest.forwarding_hint.iter().find_map(|h| {
            let e = ComponentEnds::parse(h.value())?;
            self.fib.lpm_prefix(&e, h.value())
        });
        let fib_entry = hint_entry.or_else(|| self.fib.lpm_prefix(ends, name_value));
        let nexthops = fib_entry.map(|(_, e)| e.nexthops()).unwrap_or(&[]);
        let fib_prefix = fib_entry.map_or(&[][..], |(p, _)| p);
        let Some((_, &slot)) = self.strategy_table.lpm(ends, name_value) else {
            self.scratch_actions.push(Action::Nack {
                face: incoming.face,
                reason: NackReason::NoRoute,
            });
            return;
        };
        let (Some(Some(strategy)), Some(entry)) =
            (self.strategies.get_mut(slot), self.pit.get_mut(id))
        else {
            return;
        };
        let mut ctx = StrategyCtx {
            now,
            rng: &mut self.rng,
            faces: &self.faces,
            scope: incoming.scope,
            actions: &mut self.scratch_actions,
            cc: &mut self.cc,
            lp,
            fib_prefix,
        };
        strategy.after_receive_interest(&mut ctx, incoming, entry, nexthops);
    }

    fn deliver_management(
        &mut self,
        now: Timestamp,
        face: FaceId,
        id: u32,
        nonce: u32,
        lp: &LpPacket,
        interest: &Interest,
    ) {
        if self.events.len() >= self.cfg.max_pending_events {
            self.drop_packet(face, DropReason::EventQueueFull);
            return;
        }
        if let Some(entry) = self.pit.get_mut(id) {
            let expiry = entry.expiry;
            match entry
                .out_records
                .iter_mut()
                .find(|o| o.face == FaceId::INTERNAL)
            {
                Some(o) => {
                    o.nonce = nonce;
                    o.last_sent = now;
                    o.expiry = expiry;
                }
                None => entry.out_records.push(super::pit::OutRecord {
                    face: FaceId::INTERNAL,
                    nonce,
                    last_sent: now,
                    expiry,
                    nack: None,
                }),
            }
        }
        self.events.push_back(EngineEvent::ManagementInterest {
            face,
            interest: interest.clone(),
            pit_token: lp.pit_token.clone(),
        });
    }

    /// NFD `onInterestLoop`: Nack(Duplicate) on point-to-point faces, silent
    /// drop on multi-access faces.
    fn on_interest_loop(
        &mut self,
        now: Timestamp,
        face: FaceId,
        link_type: LinkType,
        lp: &LpPacket,
        received: Bytes,
    ) {
        self.drop_packet(face, DropReason::DuplicateNonce);
        if link_type != LinkType::PointToPoint {
            return;
        }
        let pkt = OutPacket {
            kind: PacketKind::Nack,
            wire: received,
            pit_token: lp.pit_token.clone(),
            nack: Some(NackReason::Duplicate),
            congestion_mark: 0,
            cc: Default::default(),
            enqueued_at: now,
            ingress: face,
        };
        self.send(now, face, pkt, NameScope::Global);
    }
}
