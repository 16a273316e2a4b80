//! A virtual-time simulator of a multicast tree, for tests and experiments.
//!
//! Hosts are joined by point-to-point links; each direction of a link has a
//! capacity, a propagation delay and a drop-tail queue of `qmax` packets
//! (the queue whose occupancy SRMCC samples). Frames are real wire bytes,
//! decoded at every hop, so the codecs are exercised end to end.
//!
//! * A **router** hosts a [`icn_multicast::MulticastNode`] and a FIB (group prefix →
//!   upstream face). It plays exactly the role the engine must play: see
//!   [`router`] for the dispatch, which is the integration recipe.
//! * A **source** host runs a [`icn_multicast::MulticastSource`], sending fixed-size
//!   payloads as fast as its pacer allows once a join has reached it.
//! * A **receiver** host runs a [`icn_multicast::MulticastReceiver`]; it can leave
//!   or be killed (stops sending anything, still counts what arrives).
//!
//! Faces are numbered per host from 256 in connection order.

mod hosts;
mod link;
pub mod router;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use bytes::Bytes;
use cc_core::{Duration, Timestamp};
use icn_tlv::Name;

pub use hosts::{ReceiverHost, SourceHost};
pub use link::{Link, LinkSpec, LinkStats};
pub use router::RouterHost;

use icn_multicast::node::NodeConfig;
use icn_multicast::receiver::ReceiverConfig;
use icn_multicast::source::SourceConfig;

/// First face id on every host.
pub const FIRST_FACE: u64 = 256;

/// Index of a host in the simulator.
pub type HostId = usize;

/// What runs on a host.
#[derive(Debug)]
pub enum Host {
    /// A tree node.
    Router(RouterHost),
    /// A multicast source.
    Source(SourceHost),
    /// A multicast receiver (boxed: its repair state dwarfs the others).
    Receiver(Box<ReceiverHost>),
}

#[derive(Debug)]
struct HostSlot {
    name: String,
    /// Outgoing link of each face (index = face - 256).
    faces: Vec<usize>,
    timer_at: Option<Timestamp>,
    host: Host,
}

#[derive(Debug)]
enum Event {
    Deliver {
        host: HostId,
        face: u64,
        bytes: Bytes,
    },
    TxDone {
        link: usize,
    },
    Timer {
        host: HostId,
    },
}

/// The simulator.
#[derive(Debug, Default)]
pub struct Sim {
    now: Timestamp,
    hosts: Vec<HostSlot>,
    links: Vec<Link>,
    heap: BinaryHeap<Reverse<(Timestamp, u64, usize)>>,
    events: Vec<Option<Event>>,
    free: Vec<usize>,
    seq: u64,
}

impl Sim {
    /// An empty network at time zero.
    pub fn new() -> Self {
        Sim::default()
    }

    /// Current virtual time.
    pub fn now(&self) -> Timestamp {
        self.now
    }

    fn add_host(&mut self, name: &str, host: Host) -> HostId {
        self.hosts.push(HostSlot {
            name: name.to_owned(),
            faces: Vec::new(),
            timer_at: None,
            host,
        });
        let id = self.hosts.len() - 1;
        self.schedule(self.now, Event::Timer { host: id });
        self.hosts[id].timer_at = Some(self.now);
        id
    }

    /// Adds a router.
    pub fn add_router(&mut self, name: &str, cfg: NodeConfig) -> HostId {
        let h = RouterHost::new(cfg, self.now);
        self.add_host(name, Host::Router(h))
    }

    /// Adds a source of `group` sending `payload_len`-byte payloads.
    pub fn add_source(
        &mut self,
        name: &str,
        group: Name,
        cfg: SourceConfig,
        payload_len: usize,
    ) -> HostId {
        let h = SourceHost::new(group, cfg, payload_len, self.now);
        self.add_host(name, Host::Source(h))
    }

    /// Adds a receiver of `group`; it joins as soon as the simulation runs
    /// (connect it first).
    pub fn add_receiver(&mut self, name: &str, group: Name, cfg: ReceiverConfig) -> HostId {
        let h = ReceiverHost::new(group, cfg, self.now);
        self.add_host(name, Host::Receiver(Box::new(h)))
    }

    /// Connects `a` and `b` with one link per direction; returns the new
    /// face at `a` and at `b`.
    pub fn connect(&mut self, a: HostId, b: HostId, spec: LinkSpec) -> (u64, u64) {
        let fa = FIRST_FACE + self.hosts[a].faces.len() as u64;
        let fb = FIRST_FACE + self.hosts[b].faces.len() as u64;
        self.links.push(Link::new(spec, (b, fb)));
        self.hosts[a].faces.push(self.links.len() - 1);
        self.links.push(Link::new(spec, (a, fa)));
        self.hosts[b].faces.push(self.links.len() - 1);
        (fa, fb)
    }

    /// Routes `prefix` at router `r` towards `face` (the source side).
    pub fn add_route(&mut self, r: HostId, prefix: Name, face: u64) {
        if let Host::Router(h) = &mut self.hosts[r].host {
            h.fib.push((prefix, face));
        }
    }

    /// The outgoing link of `host`'s `face`.
    pub fn link_of(&self, host: HostId, face: u64) -> &Link {
        &self.links[self.hosts[host].faces[(face - FIRST_FACE) as usize]]
    }

    /// Mutable access to the outgoing link of `host`'s `face`.
    pub fn link_of_mut(&mut self, host: HostId, face: u64) -> &mut Link {
        let l = self.hosts[host].faces[(face - FIRST_FACE) as usize];
        &mut self.links[l]
    }

    /// The host's name.
    pub fn name(&self, host: HostId) -> &str {
        &self.hosts[host].name
    }

    /// The host.
    pub fn host(&self, host: HostId) -> &Host {
        &self.hosts[host].host
    }

    /// The router at `id` (panics if it is another kind: test helper).
    pub fn router(&self, id: HostId) -> &RouterHost {
        match &self.hosts[id].host {
            Host::Router(r) => r,
            other => panic!("host {id} is not a router: {other:?}"),
        }
    }

    /// The source at `id` (panics if it is another kind: test helper).
    pub fn source(&self, id: HostId) -> &SourceHost {
        match &self.hosts[id].host {
            Host::Source(s) => s,
            other => panic!("host {id} is not a source: {other:?}"),
        }
    }

    /// The receiver at `id` (panics if it is another kind: test helper).
    pub fn receiver(&self, id: HostId) -> &ReceiverHost {
        match &self.hosts[id].host {
            Host::Receiver(r) => r,
            other => panic!("host {id} is not a receiver: {other:?}"),
        }
    }

    /// Makes receiver `id` leave its group now.
    pub fn leave(&mut self, id: HostId) {
        if let Host::Receiver(r) = &mut self.hosts[id].host {
            r.rx.leave();
        }
        self.wake(id, self.now);
    }

    /// Kills receiver `id`: it sends nothing any more (no leave).
    pub fn kill(&mut self, id: HostId) {
        if let Host::Receiver(r) = &mut self.hosts[id].host {
            r.alive = false;
        }
    }

    fn schedule(&mut self, at: Timestamp, ev: Event) {
        let idx = match self.free.pop() {
            Some(i) => {
                self.events[i] = Some(ev);
                i
            }
            None => {
                self.events.push(Some(ev));
                self.events.len() - 1
            }
        };
        self.seq += 1;
        self.heap.push(Reverse((at.max(self.now), self.seq, idx)));
    }

    fn wake(&mut self, host: HostId, at: Timestamp) {
        let at = at.max(self.now);
        let slot = &mut self.hosts[host];
        if slot.timer_at.is_some_and(|t| t <= at) {
            return;
        }
        slot.timer_at = Some(at);
        self.schedule(at, Event::Timer { host });
    }

    /// Runs every event up to and including `until`.
    pub fn run_until(&mut self, until: Timestamp) {
        while let Some(Reverse((at, _, idx))) = self.heap.peek().copied() {
            if at > until {
                break;
            }
            self.heap.pop();
            self.now = at;
            let Some(ev) = self.events[idx].take() else {
                continue;
            };
            self.free.push(idx);
            match ev {
                Event::Deliver { host, face, bytes } => self.deliver(host, face, bytes),
                Event::TxDone { link } => self.tx_done(link),
                Event::Timer { host } => {
                    if self.hosts[host].timer_at == Some(at) {
                        self.hosts[host].timer_at = None;
                        self.on_timer(host);
                    }
                }
            }
        }
        self.now = self.now.max(until);
    }

    /// Runs for `d` more.
    pub fn run_for(&mut self, d: Duration) {
        let until = self.now + d;
        self.run_until(until);
    }

    fn deliver(&mut self, host: HostId, face: u64, bytes: Bytes) {
        let now = self.now;
        let mut out = Vec::new();
        match &mut self.hosts[host].host {
            Host::Router(r) => r.on_frame(now, face, bytes, &mut out),
            Host::Source(s) => s.on_frame(now, bytes),
            Host::Receiver(r) => r.on_frame(now, bytes),
        }
        self.flush(host, out);
    }

    fn on_timer(&mut self, host: HostId) {
        let now = self.now;
        let mut out = Vec::new();
        let Sim { hosts, links, .. } = self;
        let slot = &mut hosts[host];
        let faces = &slot.faces;
        let sampler = |face: u64| {
            let l = faces.get(usize::try_from(face.checked_sub(FIRST_FACE)?).ok()?)?;
            Some(links[*l].sample())
        };
        match &mut slot.host {
            Host::Router(r) => r.on_timer(now, &sampler, &mut out),
            Host::Source(s) => s.on_timer(now, &mut out),
            Host::Receiver(r) => r.on_timer(now, &mut out),
        }
        self.flush(host, out);
    }

    /// Sends what a host produced and re-arms its timer.
    fn flush(&mut self, host: HostId, out: Vec<(u64, Bytes)>) {
        for (face, bytes) in out {
            let Some(&l) = self.hosts[host]
                .faces
                .get((face.saturating_sub(FIRST_FACE)) as usize)
            else {
                continue;
            };
            self.links[l].enqueue(bytes);
            self.start_tx(l);
        }
        let next = match &self.hosts[host].host {
            Host::Router(r) => r.poll_timeout(),
            Host::Source(s) => s.poll_timeout(self.now),
            Host::Receiver(r) => r.poll_timeout(),
        };
        if let Some(t) = next {
            self.wake(host, t);
        }
    }

    fn start_tx(&mut self, l: usize) {
        if let Some(d) = self.links[l].start(self.now) {
            self.schedule(self.now + d, Event::TxDone { link: l });
        }
    }

    fn tx_done(&mut self, l: usize) {
        if let Some(bytes) = self.links[l].finish() {
            let link = &self.links[l];
            let (host, face) = link.to;
            let at = self.now + link.spec.delay;
            self.schedule(at, Event::Deliver { host, face, bytes });
        }
        self.start_tx(l);
    }
}

/// Jain's fairness index, the one definition the virtual networks share.
pub use crate::net::flows::jain;

#[cfg(test)]
mod tests;
