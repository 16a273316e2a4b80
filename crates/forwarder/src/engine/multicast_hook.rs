//! The multicast-group hook of the engine (issue 7, SRMCC): one
//! forwarder-wide object (the engine's `M` type parameter) that sees the
//! three kinds of packets a multicast tree node owns, before the normal
//! pipelines do:
//!
//! * LpPackets carrying an MCC header (SRMCC feedback, no fragment), which
//!   the engine used to count as `Idle`;
//! * subscription Interests (`/<group>/32=mcast-join|mcast-leave`), which
//!   never enter the PIT or the dead-nonce list;
//! * group Data from a group's upstream face, which is cloned to the
//!   downstream faces without any PIT entry.
//!
//! Whatever the hook wants sent (joins, leaves, MCC frames) and every Data
//! copy leaves through the face's ordinary egress path, so copies share the
//! per-face queues, AQM and capacity pacing with unicast traffic, and the
//! queue occupancy the hook samples ([`FaceSample`]) is the real one.
//!
//! The default ([`NoMulticast`]) claims nothing: MCC frames stay `Idle`
//! drops and every Data takes the PIT path (unsolicited Data is dropped).

use bytes::Bytes;
use cc_core::Timestamp;
use icn_multicast::FaceSample;
use icn_tlv::{Data, Interest, MccFeedback, Name};

use super::cc_hooks::CcHooks;
use super::counters::DropReason;
use super::face::FaceId;
use super::forwarder::{FaceTable, Forwarder};
use super::name_table::ComponentEnds;
use super::queue::{OutPacket, PacketKind};
use super::strategy::NameScope;

/// A frame the hook wants sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McFrame {
    /// A bare Interest (join or leave): queued as an Interest.
    Interest(Bytes),
    /// A complete LpPacket (MCC feedback, no fragment): sent as is, paced
    /// at the face's capacity ahead of the queued network packets.
    Lp(Bytes),
}

/// What the hook did with an Interest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubscriptionVerdict {
    /// Not a subscription: the normal Interest pipeline applies.
    NotSubscription,
    /// A subscription, recorded; the Interest is consumed.
    Accepted,
    /// A subscription the hook refused (bounds, join from the upstream, leave
    /// of a non-member); counted as [`DropReason::GroupRefused`].
    Refused,
}

/// What the hook did with a Data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupDataVerdict {
    /// Not under any group: the PIT path applies.
    NotGroup,
    /// Group Data from the upstream: clone to the faces listed (maybe none).
    Forward,
    /// Group Data from a face other than the group's upstream: dropped
    /// ([`DropReason::GroupWrongFace`]).
    WrongFace,
}

/// Engine-side multicast tree node. Every method has a no-op default.
pub trait MulticastHook: Send + 'static {
    /// False for the no-op hook: MCC frames then stay `Idle` drops.
    fn enabled(&self) -> bool {
        true
    }
    /// Cheap test run on every Interest: is this name a subscription?
    /// Only then does the engine look up the group's FIB next hop.
    fn is_subscription(&self, name: &Name) -> bool {
        let _ = name;
        false
    }
    /// A subscription Interest arrived on `face`; `upstream` is the FIB's
    /// cheapest next hop of the group.
    fn subscription(
        &mut self,
        now: Timestamp,
        face: FaceId,
        interest: &Interest,
        upstream: Option<FaceId>,
    ) -> SubscriptionVerdict {
        let _ = (now, face, interest, upstream);
        SubscriptionVerdict::NotSubscription
    }
    /// An MCC message arrived on `face`; returns whether it was accepted.
    fn feedback(&mut self, now: Timestamp, face: FaceId, fb: &MccFeedback) -> bool {
        let _ = (now, face, fb);
        false
    }
    /// Data-plane decision for a Data named `name` from `face`; on
    /// `Forward` the copy faces are appended to `out`.
    fn group_data(
        &mut self,
        now: Timestamp,
        face: FaceId,
        name: &Name,
        out: &mut Vec<FaceId>,
    ) -> GroupDataVerdict {
        let _ = (now, face, name, out);
        GroupDataVerdict::NotGroup
    }
    /// Cheap test: is `name` under a group this node serves? Only then does
    /// the engine look for a PIT entry (a repair Interest) before cloning.
    fn is_group_data(&self, name: &Name) -> bool {
        let _ = name;
        false
    }
    /// Whether cloned group Data is inserted into the Content Store (so
    /// that repair Interests are answered by the tree).
    fn cache_group_data(&self) -> bool {
        false
    }
    /// A group Data was cloned (status: announced rate, latest sequence).
    fn observe_group_data(&mut self, data: &Data) {
        let _ = data;
    }
    /// An ordinary (non-group) Data arrived on `face` (flow sampling for
    /// the fair-share estimate).
    fn unicast_data(&mut self, face: FaceId, name: &Name) {
        let _ = (face, name);
    }
    /// A face was removed.
    fn face_removed(&mut self, face: FaceId) {
        let _ = face;
    }
    /// Next periodic deadline.
    fn poll_timeout(&self) -> Option<Timestamp> {
        None
    }
    /// Runs the periodic work due at `now`; `sampler` reads the engine's
    /// per-face queues.
    fn handle_timeout(&mut self, now: Timestamp, sampler: &dyn Fn(FaceId) -> Option<FaceSample>) {
        let _ = (now, sampler);
    }
    /// The next frame to send.
    fn poll_transmit(&mut self) -> Option<(FaceId, McFrame)> {
        None
    }
}

/// An optional hook: `None` claims nothing, like [`NoMulticast`] (the
/// owner decides at start-up whether multicast groups run).
impl<H: MulticastHook> MulticastHook for Option<H> {
    fn enabled(&self) -> bool {
        self.as_ref().is_some_and(H::enabled)
    }
    fn is_subscription(&self, name: &Name) -> bool {
        self.as_ref().is_some_and(|h| h.is_subscription(name))
    }
    fn subscription(
        &mut self,
        now: Timestamp,
        face: FaceId,
        interest: &Interest,
        upstream: Option<FaceId>,
    ) -> SubscriptionVerdict {
        self.as_mut()
            .map_or(SubscriptionVerdict::NotSubscription, |h| {
                h.subscription(now, face, interest, upstream)
            })
    }
    fn feedback(&mut self, now: Timestamp, face: FaceId, fb: &MccFeedback) -> bool {
        self.as_mut().is_some_and(|h| h.feedback(now, face, fb))
    }
    fn group_data(
        &mut self,
        now: Timestamp,
        face: FaceId,
        name: &Name,
        out: &mut Vec<FaceId>,
    ) -> GroupDataVerdict {
        self.as_mut().map_or(GroupDataVerdict::NotGroup, |h| {
            h.group_data(now, face, name, out)
        })
    }
    fn is_group_data(&self, name: &Name) -> bool {
        self.as_ref().is_some_and(|h| h.is_group_data(name))
    }
    fn cache_group_data(&self) -> bool {
        self.as_ref().is_some_and(H::cache_group_data)
    }
    fn observe_group_data(&mut self, data: &Data) {
        if let Some(h) = self {
            h.observe_group_data(data);
        }
    }
    fn unicast_data(&mut self, face: FaceId, name: &Name) {
        if let Some(h) = self {
            h.unicast_data(face, name);
        }
    }
    fn face_removed(&mut self, face: FaceId) {
        if let Some(h) = self {
            h.face_removed(face);
        }
    }
    fn poll_timeout(&self) -> Option<Timestamp> {
        self.as_ref().and_then(H::poll_timeout)
    }
    fn handle_timeout(&mut self, now: Timestamp, sampler: &dyn Fn(FaceId) -> Option<FaceSample>) {
        if let Some(h) = self {
            h.handle_timeout(now, sampler);
        }
    }
    fn poll_transmit(&mut self) -> Option<(FaceId, McFrame)> {
        self.as_mut().and_then(H::poll_transmit)
    }
}

/// The hook that claims nothing (multicast groups disabled).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoMulticast;

impl MulticastHook for NoMulticast {
    fn enabled(&self) -> bool {
        false
    }
}

impl<C: CcHooks, M: MulticastHook> Forwarder<C, M> {
    /// The multicast hook (for status output and tests).
    pub fn multicast_hook(&self) -> &M {
        &self.groups
    }

    /// The multicast hook, mutably.
    pub fn multicast_hook_mut(&mut self) -> &mut M {
        &mut self.groups
    }

    /// The SRMCC view of a face's egress: Data-queue packets against the
    /// engine's queue bound, and the pacing capacity.
    pub fn face_sample(&self, face: FaceId) -> Option<FaceSample> {
        sample(&self.faces, self.cfg.queue.max_packets, face)
    }

    /// An MCC frame arrived on `face`; `bare` when it carried no network
    /// packet (then, without a multicast node, it is an `Idle` drop).
    pub(super) fn groups_feedback(
        &mut self,
        now: Timestamp,
        face: FaceId,
        fb: &MccFeedback,
        bare: bool,
    ) {
        if !self.groups.enabled() {
            if bare {
                self.drop_packet(face, DropReason::Idle);
            }
            return;
        }
        if !self.groups.feedback(now, face, fb) {
            self.drop_packet(face, DropReason::GroupRefused);
        }
        self.groups_drain(now);
    }

    /// Offers an Interest to the hook; true when it was a subscription
    /// (consumed, whether accepted or refused).
    pub(super) fn groups_interest(
        &mut self,
        now: Timestamp,
        face: FaceId,
        interest: &Interest,
        ends: &ComponentEnds,
    ) -> bool {
        if !self.groups.is_subscription(&interest.name) {
            return false;
        }
        // The group is the name without its keyword component.
        let value = interest.name.value();
        let group_len = ends.end(ends.total().saturating_sub(1));
        let group_value = &value[..group_len.min(value.len())];
        let upstream = ComponentEnds::parse(group_value)
            .and_then(|e| self.fib.lpm(&e, group_value))
            .and_then(|entry| entry.nexthops().iter().find(|n| n.face != face))
            .map(|n| n.face);
        match self.groups.subscription(now, face, interest, upstream) {
            SubscriptionVerdict::NotSubscription => return false,
            SubscriptionVerdict::Accepted => {}
            SubscriptionVerdict::Refused => self.drop_packet(face, DropReason::GroupRefused),
        }
        self.groups_drain(now);
        true
    }

    /// Offers a Data to the hook before the PIT; true when it was group Data
    /// (cloned or dropped), false when the PIT path must run.
    ///
    /// Group Data that matches a PIT entry is the answer to a repair
    /// Interest (`/<group>/seq=<n>`, sent by a receiver that missed `n`):
    /// it takes the PIT path to the faces that asked, not the tree. The
    /// original of such a packet has always passed this node before the
    /// repair Interest (the receiver detects the gap from a later packet on
    /// the same path), so a pending repair never captures a live copy.
    /// Cloned group Data is cached, so that tree nodes answer repairs.
    pub(super) fn groups_data(
        &mut self,
        now: Timestamp,
        face: FaceId,
        data: &Data,
        wire: &Bytes,
        ends: &ComponentEnds,
        congestion_mark: u64,
    ) -> bool {
        let mut out: Vec<FaceId> = Vec::new();
        if self.groups.is_group_data(&data.name) {
            let mut ids = core::mem::take(&mut self.scratch_ids);
            ids.clear();
            self.pit
                .matches_for_data(ends, data.name.value(), None, &mut ids);
            let answers_repair = !ids.is_empty();
            self.scratch_ids = ids;
            if answers_repair {
                return false;
            }
        }
        match self.groups.group_data(now, face, &data.name, &mut out) {
            GroupDataVerdict::NotGroup => {
                self.groups.unicast_data(face, &data.name);
                false
            }
            GroupDataVerdict::WrongFace => {
                self.drop_packet(face, DropReason::GroupWrongFace);
                true
            }
            GroupDataVerdict::Forward => {
                self.groups.observe_group_data(data);
                if self.groups.cache_group_data() {
                    self.cs.insert(
                        now,
                        data.name.value().clone(),
                        wire.clone(),
                        data.meta.freshness_period,
                    );
                }
                for f in out {
                    let pkt = OutPacket {
                        kind: PacketKind::Data,
                        wire: wire.clone(),
                        pit_token: None,
                        nack: None,
                        congestion_mark,
                        cc: Default::default(),
                        enqueued_at: now,
                        ingress: face,
                    };
                    self.send(now, f, pkt, NameScope::Global);
                }
                self.groups_drain(now);
                true
            }
        }
    }

    /// A face went away: the hook prunes it and may send leaves.
    pub(super) fn groups_face_removed(&mut self, now: Timestamp, face: FaceId) {
        self.groups.face_removed(face);
        self.groups_drain(now);
    }

    /// Runs the hook's timers if due.
    pub(super) fn groups_timeout(&mut self, now: Timestamp) {
        if self.groups.poll_timeout().is_none_or(|t| t > now) {
            return;
        }
        let (faces, max_packets) = (&self.faces, self.cfg.queue.max_packets);
        self.groups
            .handle_timeout(now, &|f| sample(faces, max_packets, f));
        self.groups_drain(now);
    }

    /// Moves the hook's frames onto the faces' egress paths.
    pub(super) fn groups_drain(&mut self, now: Timestamp) {
        while let Some((face, frame)) = self.groups.poll_transmit() {
            match frame {
                McFrame::Interest(wire) => {
                    let pkt = OutPacket {
                        kind: PacketKind::Interest,
                        wire,
                        pit_token: None,
                        nack: None,
                        congestion_mark: 0,
                        cc: Default::default(),
                        enqueued_at: now,
                        ingress: FaceId::INTERNAL,
                    };
                    self.send(now, face, pkt, NameScope::Global);
                }
                McFrame::Lp(bytes) => self.send_raw_frame(face, bytes),
            }
        }
    }

    /// Puts an encoded frame on the face's ready list (released by
    /// `poll_transmit` under the face's pacing, before queued packets).
    fn send_raw_frame(&mut self, face: FaceId, bytes: Bytes) {
        let limit = self.cfg.queue.max_packets;
        let Some(f) = self.faces.0.get_mut(&face) else {
            self.counters.drops.add(DropReason::FaceGone);
            return;
        };
        if f.ready.len() >= limit {
            self.drop_packet(face, DropReason::QueueFull);
            return;
        }
        f.ready.push_back(bytes);
        f.info.queue.ready_frames = f.ready.len();
        if !f.in_active {
            f.in_active = true;
            self.active.push_back(face);
        }
    }
}

fn sample(faces: &FaceTable, max_packets: usize, face: FaceId) -> Option<FaceSample> {
    let f = faces.0.get(&face)?;
    Some(FaceSample {
        queue_packets: f.info.queue.data_packets as u64,
        queue_max_packets: max_packets as u64,
        capacity_bps: f.info.params.capacity_bps,
    })
}
