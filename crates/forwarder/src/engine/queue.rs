//! Per-face egress queues and the hook points where an Interest shaper /
//! scheduler and a Data-queue AQM attach.
//!
//! Each face has an Interest queue and a Data queue (Data and Nacks, the
//! packets AQM schemes such as PCON mark). The queues hold network packets
//! plus the LP fields to attach; encoding happens at release time so that a
//! mark decided at dequeue (CoDel-style) lands in the CongestionMark field.

use std::collections::VecDeque;

use bytes::Bytes;
use cc_core::{Duration, Timestamp};
use icn_tlv::NackReason;

use super::counters::DropReason;
use super::face::{FaceId, QueueStats};

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
    /// When it entered the queue (sojourn time for AQM).
    pub enqueued_at: Timestamp,
    /// The face the packet came from (IncomingFaceId towards local-fields
    /// faces; 254 for Content Store hits, 1 for management replies).
    pub ingress: FaceId,
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
}

/// Per-face Interest shaper/scheduler hook (WinCM, PCON, QSCCP later).
///
/// The default releases every Interest at once.
pub trait InterestShaper: Send {
    /// Earliest time the head-of-line Interest may leave. Returning a time
    /// after `now` holds the Interest queue until then (the engine reports it
    /// through `poll_timeout`).
    fn release_time(&mut self, now: Timestamp, pkt: &OutPacket, queue: &QueueView) -> Timestamp {
        let _ = (pkt, queue);
        now
    }
    /// Called when an Interest of `bytes` leaves the face.
    fn on_interest_sent(&mut self, now: Timestamp, bytes: usize, queue: &QueueView) {
        let _ = (now, bytes, queue);
    }
    /// Called when Data of `bytes` is received on the face (shapers that
    /// size Interests by returning Data use it).
    fn on_data_received(&mut self, now: Timestamp, bytes: usize) {
        let _ = (now, bytes);
    }
}

/// Verdict of the AQM at enqueue time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AqmVerdict {
    /// Queue the packet.
    Enqueue,
    /// Drop it (counted as [`DropReason::Aqm`]).
    Drop,
}

/// Data-queue active queue management hook (CoDel marking as in PCON).
///
/// The default never drops and never marks.
pub trait DataAqm: Send {
    /// Called before a Data/Nack enters the queue.
    fn on_enqueue(&mut self, now: Timestamp, pkt: &OutPacket, queue: &QueueView) -> AqmVerdict {
        let _ = (now, pkt, queue);
        AqmVerdict::Enqueue
    }
    /// Called as a Data/Nack leaves; return `true` to set CongestionMark=1.
    fn on_dequeue(&mut self, now: Timestamp, sojourn: Duration, queue: &QueueView) -> bool {
        let _ = (now, sojourn, queue);
        false
    }
}

/// The no-op shaper.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoShaper;
impl InterestShaper for NoShaper {}

/// The no-op AQM.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoAqm;
impl DataAqm for NoAqm {}

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
    data: VecDeque<OutPacket>,
    limits: QueueLimits,
    /// Serve the Data queue next when both are eligible.
    data_turn: bool,
    /// Shaper-imposed hold on the Interest queue.
    pub(crate) interest_hold_until: Timestamp,
    pub(crate) shaper: Box<dyn InterestShaper>,
    pub(crate) aqm: Box<dyn DataAqm>,
}

impl core::fmt::Debug for EgressQueues {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("EgressQueues")
            .field("interests", &self.interests.len())
            .field("data", &self.data.len())
            .finish()
    }
}

impl EgressQueues {
    /// Empty queues with no-op hooks.
    pub fn new(limits: QueueLimits) -> Self {
        EgressQueues {
            interests: VecDeque::new(),
            data: VecDeque::new(),
            limits,
            data_turn: true,
            interest_hold_until: Timestamp::ZERO,
            shaper: Box::new(NoShaper),
            aqm: Box::new(NoAqm),
        }
    }

    /// True when neither queue holds a packet.
    pub fn is_empty(&self) -> bool {
        self.interests.is_empty() && self.data.is_empty()
    }

    /// Queues a packet, or says why it was refused.
    pub fn enqueue(
        &mut self,
        now: Timestamp,
        pkt: OutPacket,
        view: &mut QueueView,
    ) -> Result<(), DropReason> {
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
                if self.data.len() >= self.limits.max_packets
                    || stats.data_bytes + len > self.limits.max_bytes
                {
                    return Err(DropReason::QueueFull);
                }
                if self.aqm.on_enqueue(now, &pkt, view) == AqmVerdict::Drop {
                    return Err(DropReason::Aqm);
                }
                let stats = &mut view.stats;
                stats.data_packets += 1;
                stats.data_bytes += len;
                self.data.push_back(pkt);
            }
        }
        Ok(())
    }

    /// Earliest time a packet could leave, ignoring link pacing.
    pub fn next_eligible(&self) -> Option<Timestamp> {
        match (self.data.is_empty(), self.interests.is_empty()) {
            (false, _) => Some(Timestamp::ZERO),
            (true, false) => Some(self.interest_hold_until),
            (true, true) => None,
        }
    }

    /// Takes the next packet to send at `now` (round robin between the
    /// Interest queue and the Data queue), consulting shaper and AQM.
    pub fn dequeue(&mut self, now: Timestamp, view: &mut QueueView) -> Option<OutPacket> {
        let mut interest_ok = !self.interests.is_empty() && self.interest_hold_until <= now;
        if interest_ok {
            if let Some(head) = self.interests.front() {
                let t = self.shaper.release_time(now, head, view);
                if t > now {
                    self.interest_hold_until = t;
                    interest_ok = false;
                }
            }
        }
        let data_ok = !self.data.is_empty();
        let take_data = match (data_ok, interest_ok) {
            (false, false) => return None,
            (true, false) => true,
            (false, true) => false,
            (true, true) => self.data_turn,
        };
        self.data_turn = !take_data;
        if take_data {
            let mut pkt = self.data.pop_front()?;
            view.stats.data_packets -= 1;
            view.stats.data_bytes -= pkt.wire.len();
            let sojourn = now.saturating_since(pkt.enqueued_at);
            if self.aqm.on_dequeue(now, sojourn, view) {
                pkt.congestion_mark = pkt.congestion_mark.max(1);
            }
            Some(pkt)
        } else {
            let pkt = self.interests.pop_front()?;
            view.stats.interest_packets -= 1;
            view.stats.interest_bytes -= pkt.wire.len();
            self.shaper.on_interest_sent(now, pkt.wire.len(), view);
            Some(pkt)
        }
    }

    /// Drops everything (face removed); returns the number of packets.
    pub fn clear(&mut self) -> usize {
        let n = self.interests.len() + self.data.len();
        self.interests.clear();
        self.data.clear();
        n
    }
}
