//! Faces as the engine sees them: identity, NFD properties, counters and
//! egress-queue occupancy. The engine never touches a socket; the shell maps
//! a [`FaceId`] to its transport.

use core::fmt;

use cc_core::Duration;

use super::cc_hooks::CcFaceStatus;
use super::counters::FaceCounters;
use super::observe::CcStamps;
use super::queue::SojournStats;

/// Face identifier with NFD numbering: 1 = internal (management),
/// 254 = content store, 255 = null, ordinary faces from 256.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FaceId(pub u64);

impl FaceId {
    /// Invalid face.
    pub const INVALID: FaceId = FaceId(0);
    /// The management (internal) face; out-records to it mark a PIT entry
    /// handed to the manager.
    pub const INTERNAL: FaceId = FaceId(1);
    /// Content-store pseudo face.
    pub const CONTENT_STORE: FaceId = FaceId(254);
    /// Null face.
    pub const NULL: FaceId = FaceId(255);
    /// First id given to an ordinary face.
    pub const FIRST_ORDINARY: u64 = 256;
}

impl fmt::Display for FaceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// NFD FaceScope (`nfd-constants.hpp`): 0 non-local, 1 local.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaceScope {
    /// Reaches another host; `/localhost` names never cross it.
    NonLocal,
    /// An application on this host.
    Local,
}

impl FaceScope {
    /// NFD numeric value.
    pub fn as_u64(self) -> u64 {
        match self {
            FaceScope::NonLocal => 0,
            FaceScope::Local => 1,
        }
    }
}

/// NFD LinkType: 0 point-to-point, 1 multi-access, 2 ad hoc.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkType {
    /// One peer; loops are answered with Nack(Duplicate).
    PointToPoint,
    /// Many peers (multicast); loops are dropped silently, Nacks ignored.
    MultiAccess,
    /// Wireless ad hoc; Data may go back out of the face it came in on.
    AdHoc,
}

impl LinkType {
    /// NFD numeric value.
    pub fn as_u64(self) -> u64 {
        match self {
            LinkType::PointToPoint => 0,
            LinkType::MultiAccess => 1,
            LinkType::AdHoc => 2,
        }
    }
}

/// NFD FacePersistency: 0 persistent, 1 on-demand, 2 permanent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Persistency {
    /// Created by command; closed on transport failure.
    Persistent,
    /// Created by an incoming peer; closed when idle.
    OnDemand,
    /// Survives transport failures.
    Permanent,
}

impl Persistency {
    /// NFD numeric value.
    pub fn as_u64(self) -> u64 {
        match self {
            Persistency::Persistent => 0,
            Persistency::OnDemand => 1,
            Persistency::Permanent => 2,
        }
    }
}

/// What the shell tells the engine about a face when adding it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaceParams {
    /// Local or non-local.
    pub scope: FaceScope,
    /// Point-to-point or multi-access.
    pub link_type: LinkType,
    /// NFD persistency.
    pub persistency: Persistency,
    /// Remote URI, e.g. `udp4://192.0.2.1:6363`.
    pub remote_uri: String,
    /// Local URI, e.g. `udp4://0.0.0.0:6363`.
    pub local_uri: String,
    /// Link MTU in bytes; when set, egress packets above it are fragmented
    /// and incoming fragments are reassembled (UDP, Ethernet).
    pub mtu: Option<usize>,
    /// Link capacity; when set, `poll_transmit` paces this face at it so
    /// that the queue forms inside the engine, where AQM can see it.
    pub capacity_bps: Option<u64>,
    /// Capacity of the other direction (Data arriving over this face),
    /// for links that are not symmetric; `None`: as `capacity_bps`. Rate
    /// laws and Interest shapers book returning Data against it.
    pub ingress_capacity_bps: Option<u64>,
    /// NFD LocalFieldsEnabled: emit IncomingFaceId, honour NextHopFaceId.
    /// Only takes effect on local faces.
    pub local_fields: bool,
    /// NFD CongestionMarkingEnabled flag (reported in datasets; AQM hooks
    /// decide the marks).
    pub congestion_marking: bool,
    /// Link emulation for testbeds, applied after the face's own pacing.
    pub emulation: Option<LinkEmulation>,
}

/// Link emulation for testbeds without `netem`: frames that leave the
/// face's shaper are delayed by a constant one-way delay and dropped with a
/// seeded probability, so that the bottleneck queue stays inside the engine
/// (where the congestion-control laws see it) while the testbed still has
/// propagation delay and loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinkEmulation {
    /// One-way delay added after the shaper.
    pub delay: Duration,
    /// Drop probability in parts per million.
    pub loss_ppm: u32,
}

impl LinkEmulation {
    /// From a delay and a drop probability in `0.0..=1.0`.
    pub fn new(delay: Duration, loss: f64) -> Self {
        let loss = if loss.is_finite() {
            loss.clamp(0.0, 1.0)
        } else {
            0.0
        };
        LinkEmulation {
            delay,
            loss_ppm: (loss * 1e6).round() as u32,
        }
    }
    /// True when it changes nothing.
    pub fn is_noop(&self) -> bool {
        self.delay.is_zero() && self.loss_ppm == 0
    }
}

impl FaceParams {
    /// A local application face (Unix socket or loopback TCP).
    pub fn local(remote_uri: impl Into<String>) -> Self {
        FaceParams {
            scope: FaceScope::Local,
            link_type: LinkType::PointToPoint,
            persistency: Persistency::OnDemand,
            remote_uri: remote_uri.into(),
            local_uri: String::new(),
            mtu: None,
            capacity_bps: None,
            ingress_capacity_bps: None,
            local_fields: false,
            congestion_marking: false,
            emulation: None,
        }
    }

    /// A non-local point-to-point face (UDP unicast, TCP to a peer).
    pub fn non_local(remote_uri: impl Into<String>) -> Self {
        FaceParams {
            scope: FaceScope::NonLocal,
            persistency: Persistency::Persistent,
            ..FaceParams::local(remote_uri)
        }
    }

    /// Sets the MTU (builder style).
    pub fn with_mtu(mut self, mtu: usize) -> Self {
        self.mtu = Some(mtu);
        self
    }

    /// Sets the capacity (builder style).
    pub fn with_capacity_bps(mut self, bps: u64) -> Self {
        self.capacity_bps = Some(bps);
        self
    }

    /// Capacity of the direction Data arrive on: the ingress capacity when
    /// one is set, else the (symmetric) link capacity.
    pub fn data_in_capacity_bps(&self) -> Option<u64> {
        self.ingress_capacity_bps.or(self.capacity_bps)
    }

    /// Sets link emulation (builder style).
    pub fn with_emulation(mut self, e: LinkEmulation) -> Self {
        self.emulation = (!e.is_noop()).then_some(e);
        self
    }

    /// Sets the link type (builder style).
    pub fn with_link_type(mut self, lt: LinkType) -> Self {
        self.link_type = lt;
        self
    }

    /// NFD face flags word (bit 0 LocalFields, bit 2 CongestionMarking).
    pub fn flags(&self) -> u64 {
        u64::from(self.local_fields) | (u64::from(self.congestion_marking) << 2)
    }

    /// True for a local face.
    pub fn is_local(&self) -> bool {
        self.scope == FaceScope::Local
    }
}

/// Egress queue occupancy of one face.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Interests waiting.
    pub interest_packets: usize,
    /// Interest bytes waiting.
    pub interest_bytes: usize,
    /// Data and Nacks waiting.
    pub data_packets: usize,
    /// Data and Nack bytes waiting.
    pub data_bytes: usize,
    /// Encoded frames (fragments) waiting for release.
    pub ready_frames: usize,
    /// Interests held by the congestion-control hook (MIRCC/RCP shaper,
    /// QSCCP scheduler) rather than the FIFO: queued on this face all the
    /// same, so the link's queue is `interest_packets + cc_held_interests`.
    pub cc_held_interests: usize,
}

impl QueueStats {
    /// All packets waiting on the face.
    pub fn total_packets(&self) -> usize {
        self.interest_packets + self.data_packets + self.ready_frames
    }
    /// All network-packet bytes waiting on the face.
    pub fn total_bytes(&self) -> usize {
        self.interest_bytes + self.data_bytes
    }
}

/// A face's properties and live state, as datasets and strategies see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaceInfo {
    /// The face's id.
    pub id: FaceId,
    /// Properties given at creation.
    pub params: FaceParams,
    /// Traffic and drop counters.
    pub counters: FaceCounters,
    /// Egress queue occupancy.
    pub queue: QueueStats,
    /// Queueing delay of packets that left the face (both queues).
    pub sojourn: SojournStats,
    /// Congestion-control state (rates), refreshed at each periodic update.
    pub cc: CcFaceStatus,
    /// CC header fields the face sent, per one-second window.
    pub cc_stamps: CcStamps,
    /// Frames dropped by link emulation.
    pub emulated_drops: u64,
}
