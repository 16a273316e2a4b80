//! A virtual-time network of engines for deterministic tests (quinn's
//! `Pair`, generalised): several [`Router`]s joined by simulated links
//! with delay, capacity and seeded loss, plus in-memory application
//! endpoints (consumers and producers) on local faces.
//!
//! The clock is a plain [`Timestamp`] advanced by [`Network::run_until`] to
//! the next event (a link delivery or an engine's `poll_timeout`), so a test
//! that simulates minutes runs in milliseconds and always produces the same
//! result for the same seed.

pub mod flows;
mod packets;
mod wire;

pub use packets::{data, data_fresh, interest, interest_with, InterestOpts};
pub use wire::{testbed_tbf_rate_bps, Wire, TESTBED_TBF_BURST_BYTES};

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use bytes::Bytes;
use cc_core::token_bucket::TokenBucket;
use cc_core::{Duration, Timestamp};
use icn_tlv::{decode_packet, Data, Interest, LpPacket, NackReason, Name, NetPacket};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use icn_forwarder::engine::{FaceId, FaceParams, LinkType};
use icn_forwarder::router::{Router, RouterConfig};

/// Index of an engine in the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NodeId(pub usize);

/// Index of an application endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AppId(pub usize);

/// Properties of a simulated link (both directions alike, unless
/// `reverse_capacity_bps` is set).
#[derive(Debug, Clone, Copy)]
pub struct LinkParams {
    /// One-way propagation delay.
    pub delay: Duration,
    /// Link rate; also configured as both faces' pacing capacity so that
    /// queues form inside the engines.
    pub capacity_bps: Option<u64>,
    /// Rate of the direction from the second node to the first, when it
    /// differs: that node paces at it and the first node's face has it as
    /// its ingress capacity.
    pub reverse_capacity_bps: Option<u64>,
    /// Probability that a frame is lost.
    pub loss: f64,
    /// MTU of both faces (enables LP fragmentation/reassembly).
    pub mtu: Option<usize>,
    /// Link type of both faces.
    pub link_type: LinkType,
    /// What carries a frame once a face released it.
    pub wire: Wire,
}

impl Default for LinkParams {
    fn default() -> Self {
        LinkParams {
            delay: Duration::from_millis(1),
            capacity_bps: None,
            reverse_capacity_bps: None,
            loss: 0.0,
            mtu: None,
            link_type: LinkType::PointToPoint,
            wire: Wire::AtCapacity,
        }
    }
}

/// A frame an application received.
#[derive(Debug, Clone)]
pub struct Received {
    /// When it arrived.
    pub at: Timestamp,
    /// Its LP header fields.
    pub lp: LpPacket,
    /// The network packet inside.
    pub packet: Option<NetPacket>,
}

impl Received {
    /// The Data, if this frame carried one.
    pub fn data(&self) -> Option<&Data> {
        match &self.packet {
            Some(NetPacket::Data(d)) => Some(d),
            _ => None,
        }
    }
    /// The Nack reason and Interest, if this frame was a Nack.
    pub fn nack(&self) -> Option<(NackReason, &Interest)> {
        match (&self.packet, self.lp.nack) {
            (Some(NetPacket::Interest(i)), Some(r)) => Some((r, i)),
            _ => None,
        }
    }
    /// The Interest, if this frame was an Interest (not a Nack).
    pub fn interest(&self) -> Option<&Interest> {
        match (&self.packet, self.lp.nack) {
            (Some(NetPacket::Interest(i)), None) => Some(i),
            _ => None,
        }
    }
}

/// Builds the reply of a producer: `(now, interest, lp) -> frame`.
pub type Responder = Box<dyn FnMut(Timestamp, &Interest, &LpPacket) -> Option<Bytes>>;

struct App {
    node: NodeId,
    face: FaceId,
    inbox: Vec<Received>,
    responder: Option<Responder>,
}

#[derive(Clone, Copy)]
enum Port {
    Link {
        peer: NodeId,
        peer_face: FaceId,
        dir: usize,
    },
    App(AppId),
}

struct Event {
    at: Timestamp,
    seq: u64,
    node: NodeId,
    face: FaceId,
    bytes: Bytes,
}

impl PartialEq for Event {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Event {
    fn cmp(&self, o: &Self) -> core::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

struct Direction {
    params: LinkParams,
    /// The bucket of a [`Wire::TokenBucket`].
    bucket: Option<TokenBucket>,
    busy_until: Timestamp,
    delivered_frames: u64,
    delivered_bytes: u64,
    lost: u64,
}

/// Engines, links and applications on one virtual clock.
pub struct Network {
    now: Timestamp,
    nodes: Vec<Router>,
    ports: HashMap<(usize, FaceId), Port>,
    dirs: Vec<Direction>,
    apps: Vec<App>,
    events: BinaryHeap<Reverse<Event>>,
    seq: u64,
    rng: SmallRng,
}

impl Network {
    /// An empty network; `seed` drives link loss and engine seeds.
    pub fn new(seed: u64) -> Self {
        Network {
            now: Timestamp::ZERO,
            nodes: Vec::new(),
            ports: HashMap::new(),
            dirs: Vec::new(),
            apps: Vec::new(),
            events: BinaryHeap::new(),
            seq: 0,
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    /// The current virtual time.
    pub fn now(&self) -> Timestamp {
        self.now
    }

    /// Adds an engine.
    pub fn add_node(&mut self, cfg: impl Into<RouterConfig>) -> NodeId {
        let seed = self.rng.random();
        self.nodes
            .push(icn_forwarder::router::build(&cfg.into(), seed));
        NodeId(self.nodes.len() - 1)
    }

    /// The engine of a node.
    pub fn node(&self, n: NodeId) -> &Router {
        &self.nodes[n.0]
    }

    /// Nodes added so far (ids `0..node_count()`).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// The engine of a node, mutably (FIB changes, events, hooks).
    pub fn node_mut(&mut self, n: NodeId) -> &mut Router {
        &mut self.nodes[n.0]
    }

    /// Joins two nodes with a link; returns (face on a, face on b).
    pub fn connect(&mut self, a: NodeId, b: NodeId, p: LinkParams) -> (FaceId, FaceId) {
        let (ab_bps, ba_bps) = (p.capacity_bps, p.reverse_capacity_bps.or(p.capacity_bps));
        let mk = |uri: String, out_bps: Option<u64>, in_bps: Option<u64>| {
            let mut fp = FaceParams::non_local(uri).with_link_type(p.link_type);
            fp.mtu = p.mtu;
            fp.capacity_bps = out_bps;
            if p.reverse_capacity_bps.is_some() {
                fp.ingress_capacity_bps = in_bps;
            }
            fp
        };
        let now = self.now;
        let fa = self.nodes[a.0].add_face(now, mk(format!("sim://{}", b.0), ab_bps, ba_bps));
        let fb = self.nodes[b.0].add_face(now, mk(format!("sim://{}", a.0), ba_bps, ab_bps));
        let d = self.dirs.len();
        for bps in [ab_bps, ba_bps] {
            let bucket = match p.wire {
                Wire::AtCapacity => None,
                Wire::TokenBucket {
                    rate_bps,
                    burst_bytes,
                } => Some(TokenBucket::with_bits(
                    rate_bps,
                    burst_bytes.saturating_mul(8),
                    now,
                )),
            };
            self.dirs.push(Direction {
                params: LinkParams {
                    capacity_bps: bps,
                    ..p
                },
                bucket,
                busy_until: Timestamp::ZERO,
                delivered_frames: 0,
                delivered_bytes: 0,
                lost: 0,
            });
        }
        self.ports.insert(
            (a.0, fa),
            Port::Link {
                peer: b,
                peer_face: fb,
                dir: d,
            },
        );
        self.ports.insert(
            (b.0, fb),
            Port::Link {
                peer: a,
                peer_face: fa,
                dir: d + 1,
            },
        );
        (fa, fb)
    }

    /// Frames and bytes delivered out of `node`'s `face` across its link.
    pub fn link_delivered(&self, node: NodeId, face: FaceId) -> Option<(u64, u64, u64)> {
        match self.ports.get(&(node.0, face))? {
            Port::Link { dir, .. } => {
                let d = &self.dirs[*dir];
                Some((d.delivered_frames, d.delivered_bytes, d.lost))
            }
            Port::App(_) => None,
        }
    }

    /// Adds an application on a local face of `node`.
    pub fn add_app(&mut self, node: NodeId, responder: Option<Responder>) -> (AppId, FaceId) {
        let params = FaceParams::local(format!("app://{}", self.apps.len()));
        self.add_app_with(node, params, responder)
    }

    /// Adds an application on a face with the given parameters.
    pub fn add_app_with(
        &mut self,
        node: NodeId,
        params: FaceParams,
        responder: Option<Responder>,
    ) -> (AppId, FaceId) {
        let id = AppId(self.apps.len());
        let face = self.nodes[node.0].add_face(self.now, params);
        self.apps.push(App {
            node,
            face,
            inbox: Vec::new(),
            responder,
        });
        self.ports.insert((node.0, face), Port::App(id));
        (id, face)
    }

    /// Adds a consumer application.
    pub fn add_consumer(&mut self, node: NodeId) -> AppId {
        self.add_app(node, None).0
    }

    /// Adds a producer answering every Interest under `prefix` with Data of
    /// `content_len` bytes and `freshness`, echoing the PitToken, and routes
    /// `prefix` to it.
    pub fn add_producer(
        &mut self,
        node: NodeId,
        prefix: &str,
        content_len: usize,
        freshness: Option<Duration>,
    ) -> AppId {
        let content = Bytes::from(vec![0x5a; content_len]);
        let responder: Responder = Box::new(move |_, i, lp| {
            let wire = data_fresh(&i.name, content.clone(), freshness);
            Some(reply_frame(lp, wire))
        });
        let (app, face) = self.add_app(node, Some(responder));
        let name: Name = prefix.parse().unwrap_or_else(|_| Name::root());
        // The face was just added, so this can only fail on a full FIB.
        let _ = self.nodes[node.0].fib_add_nexthop(&name, face, 0);
        app
    }

    /// The local face of an application.
    pub fn app_face(&self, app: AppId) -> FaceId {
        self.apps[app.0].face
    }

    /// Sends a frame from an application into its engine at the current time.
    pub fn send(&mut self, app: AppId, frame: Bytes) {
        let (node, face) = (self.apps[app.0].node, self.apps[app.0].face);
        self.nodes[node.0].handle_packet(self.now, face, frame);
    }

    /// Frames received by an application so far.
    pub fn inbox(&self, app: AppId) -> &[Received] {
        &self.apps[app.0].inbox
    }

    /// Takes the frames received by an application.
    pub fn take_inbox(&mut self, app: AppId) -> Vec<Received> {
        core::mem::take(&mut self.apps[app.0].inbox)
    }

    /// Advances virtual time by `d`, processing everything due.
    pub fn run_for(&mut self, d: Duration) {
        let end = self.now + d;
        self.run_until(end);
    }

    /// Processes events in time order until `end`; the clock ends at `end`.
    ///
    /// # Panics
    /// When an engine keeps asking to be woken at a time already reached
    /// without making progress (a livelock bug), instead of spinning forever.
    pub fn run_until(&mut self, end: Timestamp) {
        let mut spins_at_same_time = 0u32;
        let mut last = self.now;
        loop {
            if self.now == last {
                spins_at_same_time += 1;
                assert!(
                    spins_at_same_time < 1_000_000,
                    "virtual time stuck at {:?}: an engine reports a past timeout",
                    self.now
                );
            } else {
                spins_at_same_time = 0;
                last = self.now;
            }
            self.flush();
            let mut next = self.events.peek().map(|Reverse(e)| e.at);
            for n in &self.nodes {
                if let Some(t) = n.poll_timeout() {
                    next = Some(next.map_or(t, |x| x.min(t)));
                }
            }
            let Some(t) = next.filter(|t| *t <= end) else {
                self.now = self.now.max(end);
                return;
            };
            self.now = self.now.max(t);
            while self
                .events
                .peek()
                .is_some_and(|Reverse(e)| e.at <= self.now)
            {
                let Some(Reverse(e)) = self.events.pop() else {
                    break;
                };
                self.nodes[e.node.0].handle_packet(self.now, e.face, e.bytes);
            }
            let now = self.now;
            for n in &mut self.nodes {
                if n.poll_timeout().is_some_and(|t| t <= now) {
                    n.handle_timeout(now);
                }
            }
        }
    }

    /// Drains every engine's transmissions at the current time.
    fn flush(&mut self) {
        loop {
            let mut progressed = false;
            for i in 0..self.nodes.len() {
                while let Some(tx) = self.nodes[i].poll_transmit(self.now) {
                    progressed = true;
                    self.route(i, tx.face, tx.bytes);
                }
            }
            if !progressed {
                return;
            }
        }
    }

    fn push_event(&mut self, at: Timestamp, node: NodeId, face: FaceId, bytes: Bytes) {
        self.seq += 1;
        self.events.push(Reverse(Event {
            at,
            seq: self.seq,
            node,
            face,
            bytes,
        }));
    }

    fn route(&mut self, node: usize, face: FaceId, bytes: Bytes) {
        let Some(port) = self.ports.get(&(node, face)).copied() else {
            return;
        };
        let now = self.now;
        match port {
            Port::App(app) => {
                let (lp, packet) = decode_packet(bytes).unwrap_or_default();
                let a = &mut self.apps[app.0];
                let reply = match (&mut a.responder, &packet, lp.nack) {
                    (Some(r), Some(NetPacket::Interest(i)), None) => r(now, i, &lp),
                    _ => None,
                };
                a.inbox.push(Received {
                    at: now,
                    lp,
                    packet,
                });
                if let Some(frame) = reply {
                    let (n, f) = (a.node, a.face);
                    self.push_event(now, n, f, frame);
                }
            }
            Port::Link {
                peer,
                peer_face,
                dir,
            } => {
                let d = &mut self.dirs[dir];
                if d.params.loss > 0.0 && self.rng.random::<f64>() < d.params.loss {
                    d.lost += 1;
                    return;
                }
                // Frames leave in order: none before the one ahead of it.
                let start = d.busy_until.max(now);
                let bits = bytes.len() as u64 * 8;
                d.busy_until = match d.bucket.as_mut() {
                    None => {
                        let tx_ns = d
                            .params
                            .capacity_bps
                            .filter(|c| *c > 0)
                            .map_or(0, |c| bits.saturating_mul(1_000_000_000) / c);
                        start + Duration::from_nanos(tx_ns)
                    }
                    Some(b) => {
                        // A frame the bucket can never pay for (deeper than
                        // the bucket, or a zero rate once it is spent) is
                        // lost, as tc's tbf drops it.
                        let Some(wait) = b.time_until_bits(start, bits) else {
                            d.lost += 1;
                            return;
                        };
                        let leave = start + wait;
                        let paid = b.try_consume_bits(leave, bits);
                        debug_assert!(paid, "the bucket holds the frame once it waited");
                        leave
                    }
                };
                let at = d.busy_until + d.params.delay;
                d.delivered_frames += 1;
                d.delivered_bytes += bytes.len() as u64;
                self.push_event(at, peer, peer_face, bytes);
            }
        }
    }
}

/// A producer's reply: the Data, wrapped in an LpPacket with the Interest's
/// PitToken when it had one.
pub fn reply_frame(interest_lp: &LpPacket, data_wire: Bytes) -> Bytes {
    match &interest_lp.pit_token {
        Some(t) => LpPacket {
            pit_token: Some(t.clone()),
            ..LpPacket::from_fragment(data_wire)
        }
        .encode(),
        None => data_wire,
    }
}
