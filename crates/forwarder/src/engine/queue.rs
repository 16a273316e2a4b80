//! Per-face egress queues. The congestion-control extension may own a
//! face's Interest queue (`CcHooks::admit_interest`) and marks or rewrites
//! each Data as it leaves (`CcHooks::data_dequeued`).
//!
//! Each face has an Interest queue and a Data queue (Data and Nacks, the
//! packets AQM schemes such as PCON mark). Data carrying a delay-sensitive
//! QSCCP ServiceClass (CS7, CS6, EF) use a priority lane of the Data queue,
//! served first: their volume is already bounded upstream by the class's
//! token bucket on the Interests, and without it an EF Data waits behind
//! any delay-tolerant backlog (on real links a pacer that wakes late loses
//! sending time, and the Data queue of a QSCCP bottleneck drains only at
//! the 1 − η margin). Data without a ServiceClass (every other scheme)
//! only ever use the FIFO lane. The queues hold network packets
//! plus the LP fields to attach; encoding happens at release time so that a
//! mark decided at dequeue (CoDel-style) lands in the CongestionMark field.

use std::collections::VecDeque;

use bytes::Bytes;
use cc_core::{Duration, Timestamp};
use icn_tlv::{CcFields, LpPacket, NackReason};

use super::cc_hooks::{CcHooks, HookDequeue};
use super::counters::DropReason;
use super::face::{FaceId, QueueStats};
use super::hash::SeededState;
use cc_core::fq::FlowQueues;
use icn_tlv::varnum::read_varnum;

/// Network-layer packet type of a queued packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketKind {
    /// An Interest going upstream.
    Interest,
    /// A Data going downstream.
    Data,
    /// A Nack going downstream.
    Nack,
}

/// A packet waiting for its face, with the LP header fields it will carry.
#[derive(Debug, Clone)]
pub struct OutPacket {
    /// Interest, Data or Nack.
    pub kind: PacketKind,
    /// The bare network packet (an Interest TLV for Nacks).
    pub wire: Bytes,
    /// PitToken to restore towards this face.
    pub pit_token: Option<Bytes>,
    /// Nack reason (Nacks only).
    pub nack: Option<NackReason>,
    /// CongestionMark to carry (0 = none).
    pub congestion_mark: u64,
    /// Congestion-control LP fields to carry.
    pub cc: CcFields,
    /// When it entered the queue (sojourn time for AQM).
    pub enqueued_at: Timestamp,
    /// The face the packet came from (IncomingFaceId towards local-fields
    /// faces; 254 for Content Store hits, 1 for management replies).
    pub ingress: FaceId,
}

impl OutPacket {
    /// Whether the packet leaves with an LP header, i.e. whether
    /// [`OutPacket::into_lp_packet`] sets a field (`incoming_face_id`: the
    /// face gets IncomingFaceId). Without one the frame is the bare packet
    /// and no ~400-byte LpPacket is built (most frames of a `none`
    /// forwarder). The two methods are the one OutPacket → LP mapping.
    pub fn has_lp_header(&self, incoming_face_id: bool) -> bool {
        incoming_face_id
            || self.pit_token.is_some()
            || self.nack.is_some()
            || self.congestion_mark > 0
            || !self.cc.is_empty()
    }

    /// The LpPacket carrying the packet; see [`OutPacket::has_lp_header`].
    pub fn into_lp_packet(self, incoming_face_id: bool) -> LpPacket {
        LpPacket {
            pit_token: self.pit_token,
            nack: self.nack,
            congestion_mark: (self.congestion_mark > 0).then_some(self.congestion_mark),
            cc: self.cc,
            incoming_face_id: incoming_face_id.then_some(self.ingress.0),
            ..LpPacket::from_fragment(self.wire)
        }
    }
}

/// What a shaper, scheduler or AQM sees of a queue.
#[derive(Debug, Clone, Copy)]
pub struct QueueView {
    /// The face.
    pub face: FaceId,
    /// Occupancy at the time of the call.
    pub stats: QueueStats,
    /// Configured link capacity.
    pub capacity_bps: Option<u64>,
    /// On a dequeue from flow queues: the packet's flow (per-flow markers
    /// judge that flow's sojourn alone).
    pub flow: Option<DataFlow>,
}

/// The flow a dequeued Data/Nack belonged to (flow-queued faces).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataFlow {
    /// Flow bucket (hash of the name without its last component).
    pub bucket: u32,
    /// Bytes of this flow still queued after the packet left (per-flow
    /// markers: whether the flow's own queue emptied).
    pub backlog_bytes: usize,
}

/// The Data queue of a face: one FIFO, or one per flow served in
/// byte-fair turns (`cc_core::fq`, asked for by the CC hook).
enum DataQueue {
    Fifo(VecDeque<OutPacket>),
    Flows(FlowQueues<OutPacket>),
}

impl DataQueue {
    fn len(&self) -> usize {
        match self {
            DataQueue::Fifo(q) => q.len(),
            DataQueue::Flows(q) => q.len(),
        }
    }

    #[inline]
    fn push(&mut self, pkt: OutPacket, hasher: &SeededState) {
        match self {
            DataQueue::Fifo(q) => q.push_back(pkt),
            DataQueue::Flows(q) => {
                let len = pkt.wire.len();
                q.push(flow_hash(&pkt.wire, hasher), pkt, len);
            }
        }
    }

    /// The next packet; its flow goes to `flow` (flow queues only). Not
    /// returned in a tuple: each wrapping of the 264-byte packet is a copy.
    fn pop(&mut self, flow: &mut Option<DataFlow>) -> Option<OutPacket> {
        match self {
            DataQueue::Fifo(q) => q.pop_front(),
            DataQueue::Flows(q) => q.pop().map(|p| {
                *flow = Some(DataFlow {
                    bucket: p.flow,
                    backlog_bytes: p.flow_backlog_bytes,
                });
                p.item
            }),
        }
    }

    fn clear(&mut self) {
        match self {
            DataQueue::Fifo(q) => q.clear(),
            DataQueue::Flows(q) => q.drain().for_each(drop),
        }
    }
}

/// Hash of a Data's (or a Nack's Interest's) name without its last
/// component: the segments of one object are one flow. A packet whose name
/// does not parse hashes as the empty name (one shared flow).
fn flow_hash(wire: &[u8], hasher: &SeededState) -> u64 {
    use core::hash::BuildHasher;
    let name = outer_value(wire).and_then(outer_value).unwrap_or_default();
    hasher.hash_one(super::name_table::without_last_component(name))
}

/// The value of the first TLV in `buf` (a packet's, then its Name's).
fn outer_value(buf: &[u8]) -> Option<&[u8]> {
    let (_, n1) = read_varnum(buf).ok()?;
    let (len, n2) = read_varnum(buf.get(n1..)?).ok()?;
    let start = n1 + n2;
    buf.get(start..start.checked_add(usize::try_from(len).ok()?)?)
}

/// Bounds of one face's queues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueLimits {
    /// Packets per queue (Interest queue and Data queue each).
    pub max_packets: usize,
    /// Bytes per queue.
    pub max_bytes: usize,
}

impl Default for QueueLimits {
    fn default() -> Self {
        QueueLimits {
            max_packets: 4096,
            max_bytes: 8 << 20,
        }
    }
}

/// The two egress queues of a face plus round-robin service between them.
pub struct EgressQueues {
    interests: VecDeque<OutPacket>,
    data: DataQueue,
    /// Keys the flow hash (per-forwarder seed: flows cannot be aimed at
    /// one bucket from outside).
    flow_hasher: SeededState,
    /// Delay-sensitive Data (see the module doc), ahead of `data`.
    data_priority: VecDeque<OutPacket>,
    limits: QueueLimits,
    /// Serve the Data queue next when both are eligible.
    data_turn: bool,
    /// Interests held by the CC hook for this face.
    pub(crate) hook_queued: usize,
    /// Earliest time the CC hook may release one.
    pub(crate) hook_hold_until: Timestamp,
}

impl core::fmt::Debug for EgressQueues {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("EgressQueues")
            .field("interests", &self.interests.len())
            .field("data", &self.data.len())
            .field("data_priority", &self.data_priority.len())
            .finish()
    }
}

impl EgressQueues {
    /// A new per-queue packet bound (a reload): what is queued above it
    /// drains, nothing more is admitted until it is under.
    pub fn set_max_packets(&mut self, max_packets: usize) {
        self.limits.max_packets = max_packets;
    }

    /// Empty queues with no-op hooks; Data in one FIFO, or per flow when
    /// `flow_hasher` is given.
    pub fn new(limits: QueueLimits, flow_hasher: Option<SeededState>) -> Self {
        EgressQueues {
            interests: VecDeque::new(),
            data: match flow_hasher {
                // One slot per flow, not RFC 8290's 1024 hashed buckets:
                // flows that share a bucket share a turn and a marker
                // (docs/deviations.md, P2/W6); the state follows the packets
                // queued either way, and the markers have their own bound.
                Some(_) => DataQueue::Flows(FlowQueues::per_flow(1500)),
                None => DataQueue::Fifo(VecDeque::new()),
            },
            flow_hasher: flow_hasher.unwrap_or_default(),
            data_priority: VecDeque::new(),
            limits,
            data_turn: true,
            hook_queued: 0,
            hook_hold_until: Timestamp::ZERO,
        }
    }

    /// True when neither queue holds a packet.
    pub fn is_empty(&self) -> bool {
        self.interests.is_empty() && !self.has_data() && self.hook_queued == 0
    }

    fn has_data(&self) -> bool {
        self.data.len() > 0 || !self.data_priority.is_empty()
    }

    /// Queues a packet, or says why it was refused.
    #[inline]
    pub fn enqueue(&mut self, pkt: OutPacket, view: &mut QueueView) -> Result<(), DropReason> {
        let len = pkt.wire.len();
        let stats = &mut view.stats;
        match pkt.kind {
            PacketKind::Interest => {
                if self.interests.len() >= self.limits.max_packets
                    || stats.interest_bytes + len > self.limits.max_bytes
                {
                    return Err(DropReason::QueueFull);
                }
                stats.interest_packets += 1;
                stats.interest_bytes += len;
                self.interests.push_back(pkt);
            }
            PacketKind::Data | PacketKind::Nack => {
                if self.data.len() + self.data_priority.len() >= self.limits.max_packets
                    || stats.data_bytes + len > self.limits.max_bytes
                {
                    return Err(DropReason::QueueFull);
                }
                let stats = &mut view.stats;
                stats.data_packets += 1;
                stats.data_bytes += len;
                if is_delay_sensitive(&pkt.cc) {
                    self.data_priority.push_back(pkt);
                } else {
                    self.data.push(pkt, &self.flow_hasher);
                }
            }
        }
        Ok(())
    }

    /// Earliest time a packet could leave, ignoring link pacing.
    pub fn next_eligible(&self) -> Option<Timestamp> {
        if self.has_data() {
            return Some(Timestamp::ZERO);
        }
        let fifo = (!self.interests.is_empty()).then_some(Timestamp::ZERO);
        let hook = (self.hook_queued > 0).then_some(self.hook_hold_until);
        match (fifo, hook) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Takes the next packet to send at `now` (round robin between the
    /// Interest side, i.e. the FIFO or the CC hook's queue, and the Data
    /// queue); the CC hook marks or rewrites each Data as it leaves. Its
    /// queueing delay is recorded in `sojourn`, the face's published
    /// statistics (not a copy kept here: copying the 208 bytes out after
    /// every frame was ~1 % of the engine's instructions).
    pub fn dequeue(
        &mut self,
        now: Timestamp,
        view: &mut QueueView,
        hooks: &mut dyn CcHooks,
        sojourn: &mut SojournStats,
    ) -> Option<OutPacket> {
        let data_ok = self.has_data();
        if !data_ok || !self.data_turn {
            if let Some(pkt) = self.take_interest(now, view, hooks, sojourn) {
                self.data_turn = true;
                return Some(pkt);
            }
        }
        if !data_ok {
            return None;
        }
        self.data_turn = false;
        view.flow = None;
        let mut pkt = match self.data_priority.pop_front() {
            Some(p) => p,
            None => self.data.pop(&mut view.flow)?,
        };
        view.stats.data_packets -= 1;
        view.stats.data_bytes -= pkt.wire.len();
        let delay = now.saturating_since(pkt.enqueued_at);
        sojourn.record(delay);
        hooks.data_dequeued(now, view.face, &mut pkt, delay, view);
        Some(pkt)
    }

    /// The next Interest from the FIFO or the hook.
    fn take_interest(
        &mut self,
        now: Timestamp,
        view: &mut QueueView,
        hooks: &mut dyn CcHooks,
        sojourn: &mut SojournStats,
    ) -> Option<OutPacket> {
        if let Some(pkt) = self.interests.pop_front() {
            view.stats.interest_packets -= 1;
            view.stats.interest_bytes -= pkt.wire.len();
            sojourn.record(now.saturating_since(pkt.enqueued_at));
            return Some(pkt);
        }
        if self.hook_queued == 0 || self.hook_hold_until > now {
            return None;
        }
        match hooks.dequeue_interest(now, view.face) {
            HookDequeue::Item(pkt) => {
                self.hook_queued = self.hook_queued.saturating_sub(1);
                sojourn.record(now.saturating_since(pkt.enqueued_at));
                Some(pkt)
            }
            HookDequeue::NotBefore(t) => {
                self.hook_hold_until = t.max(now + Duration::from_nanos(1));
                None
            }
            HookDequeue::Empty => {
                self.hook_queued = 0;
                None
            }
        }
    }

    /// Drops everything (face removed); returns the number of packets.
    pub fn clear(&mut self) -> usize {
        let n = self.interests.len() + self.data.len() + self.data_priority.len();
        self.hook_queued = 0;
        self.interests.clear();
        self.data.clear();
        self.data_priority.clear();
        n
    }
}

/// Whether a Data/Nack carries a delay-sensitive QSCCP class (CS7, CS6, EF).
fn is_delay_sensitive(cc: &CcFields) -> bool {
    cc.service_class.is_some_and(|c| c.is_delay_sensitive())
}

/// Queueing delay of the packets leaving a face: the last value, the
/// maximum and a log2 histogram (bucket i holds sojourns in [2^i, 2^(i+1))
/// microseconds) from which percentiles are read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SojournStats {
    /// Sojourn of the last packet, ns.
    pub last_ns: u64,
    /// Largest sojourn seen, ns.
    pub max_ns: u64,
    /// Packets per log2-microsecond bucket.
    pub hist: [u64; 24],
}

impl SojournStats {
    /// Adds one packet's sojourn.
    pub fn record(&mut self, d: Duration) {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.last_ns = ns;
        self.max_ns = self.max_ns.max(ns);
        let us = ns / 1000;
        let b = (64 - us.leading_zeros() as usize).min(self.hist.len() - 1);
        self.hist[b] += 1;
    }

    /// Packets recorded.
    pub fn count(&self) -> u64 {
        self.hist.iter().sum()
    }

    /// Upper edge of the bucket holding quantile `q` (0..=1), ns; 0 when
    /// nothing was recorded. An over-estimate by at most a factor of two.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        let n = self.count();
        if n == 0 {
            return 0;
        }
        let want = ((n as f64) * q.clamp(0.0, 1.0)).ceil().max(1.0) as u64;
        let mut acc = 0;
        for (i, c) in self.hist.iter().enumerate() {
            acc += c;
            if acc >= want {
                let edge_us = if i == 0 { 1 } else { 1u64 << i };
                return (edge_us * 1000).min(self.max_ns.max(1));
            }
        }
        self.max_ns
    }

    /// The 95th percentile, ns.
    pub fn p95_ns(&self) -> u64 {
        self.quantile_ns(0.95)
    }

    /// Difference of two snapshots (`self` later than `earlier`).
    pub fn since(&self, earlier: &SojournStats) -> SojournStats {
        let mut out = *self;
        for (o, e) in out.hist.iter_mut().zip(earlier.hist.iter()) {
            *o = o.saturating_sub(*e);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::cc_hooks::NoCc;
    use super::*;
    use icn_tlv::ServiceClass;

    fn data(tag: u8, class: Option<ServiceClass>) -> OutPacket {
        OutPacket {
            kind: PacketKind::Data,
            wire: Bytes::from(vec![tag; 100]),
            pit_token: None,
            nack: None,
            congestion_mark: 0,
            cc: CcFields {
                service_class: class,
                ..CcFields::default()
            },
            enqueued_at: Timestamp::ZERO,
            ingress: FaceId(1),
        }
    }

    fn view() -> QueueView {
        QueueView {
            face: FaceId(2),
            stats: QueueStats::default(),
            capacity_bps: None,
            flow: None,
        }
    }

    /// EF/CS6/CS7 Data overtake a delay-tolerant backlog; the rest (and
    /// Data without a class) stay FIFO; the bound covers both lanes.
    #[test]
    fn delay_sensitive_data_overtake_the_fifo() {
        let mut q = EgressQueues::new(
            QueueLimits {
                max_packets: 6,
                max_bytes: 1 << 20,
            },
            None,
        );
        let mut v = view();
        let t = Timestamp::ZERO;
        q.enqueue(data(1, Some(ServiceClass::Be)), &mut v).unwrap();
        q.enqueue(data(2, None), &mut v).unwrap();
        q.enqueue(data(3, Some(ServiceClass::Af2)), &mut v).unwrap();
        q.enqueue(data(4, Some(ServiceClass::Ef)), &mut v).unwrap();
        q.enqueue(data(5, Some(ServiceClass::Cs7)), &mut v).unwrap();
        q.enqueue(data(6, Some(ServiceClass::Be)), &mut v).unwrap();
        assert_eq!(
            q.enqueue(data(7, Some(ServiceClass::Ef)), &mut v),
            Err(DropReason::QueueFull)
        );
        assert_eq!(v.stats.data_packets, 6);
        let mut order = Vec::new();
        while let Some(p) = q.dequeue(t, &mut v, &mut NoCc, &mut SojournStats::default()) {
            order.push(p.wire[0]);
        }
        assert_eq!(order, [4, 5, 1, 2, 3, 6]);
        assert_eq!((v.stats.data_packets, v.stats.data_bytes), (0, 0));
        assert!(q.is_empty());
    }

    /// `has_lp_header` and `into_lp_packet` agree field by field.
    #[test]
    fn the_lp_header_test_matches_the_lp_packet_built() {
        let bare = data(1, None);
        let variants: [(OutPacket, bool); 7] = [
            (bare.clone(), false),
            (bare.clone(), true),
            (
                OutPacket {
                    pit_token: Some(Bytes::from_static(b"t")),
                    ..bare.clone()
                },
                false,
            ),
            (
                OutPacket {
                    nack: Some(NackReason::Congestion),
                    ..bare.clone()
                },
                false,
            ),
            (
                OutPacket {
                    congestion_mark: 1,
                    ..bare.clone()
                },
                false,
            ),
            (
                OutPacket {
                    cc: CcFields {
                        target_rate_bps: Some(1),
                        ..CcFields::NONE
                    },
                    ..bare.clone()
                },
                false,
            ),
            (
                OutPacket {
                    kind: PacketKind::Interest,
                    ..bare.clone()
                },
                false,
            ),
        ];
        for (i, (p, ifid)) in variants.into_iter().enumerate() {
            let header = p.has_lp_header(ifid);
            assert_eq!(header, p.into_lp_packet(ifid).has_header(), "variant {i}");
            assert_eq!(header, (1..=5).contains(&i), "variant {i}");
        }
    }

    /// Segments of one object are one flow; other objects, other flows;
    /// a packet that does not parse is the empty-name flow, not a panic.
    #[test]
    fn the_flow_is_the_name_without_its_last_component() {
        let h = SeededState::new(7);
        let data = |name: &str, seg: u64| {
            let n: icn_tlv::Name = name.parse().unwrap();
            icn_tlv::Data::new(n.append(icn_tlv::Component::segment(seg)), Bytes::new()).encode()
        };
        let a0 = flow_hash(&data("/a/v1", 0), &h);
        assert_eq!(a0, flow_hash(&data("/a/v1", 9), &h));
        assert_ne!(a0, flow_hash(&data("/b/v1", 0), &h));
        assert_eq!(flow_hash(&[0x06, 0xff], &h), flow_hash(&[], &h));
    }
}
