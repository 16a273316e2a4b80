//! One direction of a simulated link: drop-tail queue, serialisation at
//! the capacity, then propagation delay.

use std::collections::VecDeque;

use bytes::Bytes;
use cc_core::{Duration, Timestamp};

use super::HostId;
use icn_multicast::node::FaceSample;

/// Capacity, delay and queue bound of a link (both directions alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkSpec {
    /// Capacity, bit/s.
    pub capacity_bps: u64,
    /// One-way propagation delay.
    pub delay: Duration,
    /// Drop-tail bound of the queue (Qmax, packets waiting).
    pub qmax_packets: usize,
}

impl LinkSpec {
    /// A link of `mbps` Mbit/s and `delay_ms` ms with the paper's Qmax = 50.
    pub fn mbps(mbps: f64, delay_ms: u64) -> Self {
        LinkSpec {
            capacity_bps: (mbps * 1e6) as u64,
            delay: Duration::from_millis(delay_ms),
            qmax_packets: 50,
        }
    }
}

/// Counters of one link direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Frames put on the wire.
    pub frames: u64,
    /// Bytes put on the wire.
    pub bytes: u64,
    /// Data frames put on the wire.
    pub data_frames: u64,
    /// Interest frames (subscriptions) put on the wire.
    pub interest_frames: u64,
    /// LpPacket frames (MCC feedback) put on the wire.
    pub lp_frames: u64,
    /// Frames dropped at the tail of a full queue.
    pub drops: u64,
}

/// One direction of a link.
#[derive(Debug)]
pub struct Link {
    /// Parameters.
    pub spec: LinkSpec,
    /// Receiving host and its face.
    pub to: (HostId, u64),
    /// Extra packets reported to the sampler as if queued (tests use it to
    /// impose a known occupancy).
    pub phantom_packets: u64,
    /// Counters.
    pub stats: LinkStats,
    queue: VecDeque<Bytes>,
    in_tx: Option<Bytes>,
}

impl Link {
    pub(super) fn new(spec: LinkSpec, to: (HostId, u64)) -> Self {
        Link {
            spec,
            to,
            phantom_packets: 0,
            stats: LinkStats::default(),
            queue: VecDeque::new(),
            in_tx: None,
        }
    }

    pub(super) fn enqueue(&mut self, bytes: Bytes) {
        if self.queue.len() >= self.spec.qmax_packets {
            self.stats.drops += 1;
        } else {
            self.queue.push_back(bytes);
        }
    }

    /// Starts serialising the head packet if idle; its serialisation time.
    pub(super) fn start(&mut self, _now: Timestamp) -> Option<Duration> {
        if self.in_tx.is_some() {
            return None;
        }
        let b = self.queue.pop_front()?;
        let ns = (b.len() as u64 * 8).saturating_mul(1_000_000_000) / self.spec.capacity_bps.max(1);
        self.in_tx = Some(b);
        Some(Duration::from_nanos(ns))
    }

    pub(super) fn finish(&mut self) -> Option<Bytes> {
        let b = self.in_tx.take()?;
        self.stats.frames += 1;
        self.stats.bytes += b.len() as u64;
        match b.first() {
            Some(0x06) => self.stats.data_frames += 1,
            Some(0x05) => self.stats.interest_frames += 1,
            Some(0x64) => self.stats.lp_frames += 1,
            _ => {}
        }
        Some(b)
    }

    /// Packets waiting (not counting the one on the wire).
    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }

    /// What a tree node sampling this face sees.
    pub fn sample(&self) -> FaceSample {
        FaceSample {
            queue_packets: self.queue.len() as u64 + self.phantom_packets,
            queue_max_packets: self.spec.qmax_packets as u64,
            capacity_bps: Some(self.spec.capacity_bps),
        }
    }
}
