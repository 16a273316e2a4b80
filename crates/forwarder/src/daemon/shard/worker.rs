//! One engine thread: a whole `Node` fed in batches by the control thread,
//! sending on the shared UDP sockets itself.

use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use bytes::Bytes;
use cc_core::Timestamp;
use crossbeam_channel::{Receiver, RecvTimeoutError};
use hashbrown::HashMap;

use super::{FaceOut, Msg, Pkt, Sockets};
use crate::daemon::mmsg::UdpSendBatch;
use crate::daemon::udp::send_backlog;
use crate::engine::{DropReason, FaceId};
use crate::node::{Node, NodeEvent};

/// Batches drained per wake-up before the shard transmits.
const DRAIN_PER_TURN: usize = 64;
/// Datagrams a shard holds per socket while the socket buffer is full
/// (the daemon's `udp::SEND_QUEUE`).
const SEND_QUEUE: usize = crate::daemon::udp::SEND_QUEUE;
/// How soon a shard with a send backlog tries again (it does not wait on
/// the socket's writability: the control thread's reactor owns it).
const BACKLOG_RETRY: Duration = Duration::from_micros(200);

/// Hands a Data to shard 0 for a second match; false if its queue is full.
pub(super) type ToPrefixShard = Box<dyn Fn(Pkt) -> bool + Send>;

/// One shard: its `Node` and its transmit side. Shard 0 is driven by the
/// control thread itself ([`super::control`]), the others by [`Worker::run`].
pub(super) struct Worker {
    index: usize,
    node: Node,
    start: Instant,
    /// Shard 0's inbox, for Data that matched nothing here (None on shard 0).
    prefix_shard: Option<ToPrefixShard>,
    sockets: Sockets,
    out: Out,
}

struct Out {
    faces: HashMap<FaceId, FaceOut>,
    /// Per socket: datagrams waiting for `sendmmsg`.
    pending: Vec<Vec<(SocketAddr, Bytes)>>,
    send: UdpSendBatch,
    /// Transmits dropped (full backlog, closed stream), logged at exit.
    dropped: u64,
    /// Data handed to the prefix shard for a second match.
    retried: u64,
}

impl Worker {
    pub fn new(
        index: usize,
        node: Node,
        start: Instant,
        prefix_shard: Option<ToPrefixShard>,
        sockets: Sockets,
    ) -> Self {
        let out = Out {
            faces: HashMap::new(),
            pending: vec![Vec::new(); sockets.len()],
            send: UdpSendBatch::new(),
            dropped: 0,
            retried: 0,
        };
        Worker {
            index,
            node,
            start,
            prefix_shard,
            sockets,
            out,
        }
    }

    /// The loop of an engine thread of its own (shards 1..N).
    pub fn run(mut self, rx: Receiver<Msg>) {
        loop {
            let first = match self.wake_at() {
                Some(at) => rx.recv_deadline(at),
                None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            let mut stop = false;
            match first {
                Ok(m) => {
                    stop |= self.handle(m);
                    for _ in 0..DRAIN_PER_TURN {
                        match rx.try_recv() {
                            Ok(m) => stop |= self.handle(m),
                            Err(_) => break,
                        }
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => stop = true,
            }
            self.end_turn();
            if stop {
                break;
            }
        }
        self.log_stop();
    }

    /// When the shard needs a turn without a message: its engine's next
    /// deadline, or soon if datagrams wait for a full socket buffer.
    pub fn wake_at(&self) -> Option<Instant> {
        let timer = self.node.poll_timeout().map(|t| self.instant_of(t));
        let backlog = self.out.pending.iter().any(|p| !p.is_empty());
        let retry = backlog.then(|| Instant::now() + BACKLOG_RETRY);
        match (timer, retry) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs a due timer, then sends what the engine emitted.
    pub fn end_turn(&mut self) {
        let now = self.now();
        if self.node.poll_timeout().is_some_and(|t| t <= now) {
            self.node.handle_timeout(now);
        }
        self.flush();
    }

    pub fn log_stop(&self) {
        tracing::info!(
            shard = self.index,
            dropped = self.out.dropped,
            retried_on_shard0 = self.out.retried,
            "engine shard stopped"
        );
    }

    pub fn now(&self) -> Timestamp {
        Timestamp::from_nanos(self.start.elapsed().as_nanos() as u64)
    }

    fn instant_of(&self, t: Timestamp) -> Instant {
        self.start + Duration::from_nanos(t.as_nanos().min(u64::MAX / 2))
    }

    /// Applies one message; true on `Stop`.
    pub fn handle(&mut self, m: Msg) -> bool {
        let now = self.now();
        match m {
            Msg::Packets(pkts) => {
                for p in pkts {
                    self.packet(now, p);
                }
            }
            Msg::AddFace { id, params, out: o } => {
                let got = self.node.add_face(now, *params);
                if got != id {
                    // Every shard sees the same AddFace sequence; a
                    // mismatch means a face was added behind its back.
                    tracing::error!(shard = self.index, %id, %got, "face ids diverged");
                }
                self.out.faces.insert(got, o);
            }
            Msg::RemoveFace(id) => {
                self.node.remove_face(now, id);
                self.out.faces.remove(&id);
            }
            Msg::Route(prefix, route) => {
                if let Err(e) = self.node.add_route(prefix.clone(), route) {
                    tracing::warn!(shard = self.index, %prefix, error = %e, "route");
                }
            }
            Msg::Strategy(prefix, s) => {
                if self.node.set_strategy(&prefix, &s).is_none() {
                    tracing::warn!(shard = self.index, %prefix, strategy = %s, "unknown strategy");
                }
            }
            Msg::Stop => return true,
        }
        false
    }

    /// Runs one received packet through the engine.
    pub fn packet(&mut self, now: Timestamp, p: Pkt) {
        let Some(shard0) = self.prefix_shard.as_ref().filter(|_| p.retry) else {
            self.node.handle_packet(now, p.face, p.bytes);
            return;
        };
        let unsolicited = |n: &Node| {
            n.forwarder()
                .counters()
                .drops
                .get(DropReason::UnsolicitedData)
        };
        let before = unsolicited(&self.node);
        self.node.handle_packet(now, p.face, p.bytes.clone());
        if unsolicited(&self.node) > before {
            // Perhaps the answer to a CanBePrefix Interest, which lives on
            // shard 0: let it try there (a full queue drops it).
            let again = Pkt { retry: false, ..p };
            if shard0(again) {
                self.out.retried += 1;
            }
        }
    }

    /// Drains the engine's transmits and events, then sends.
    fn flush(&mut self) {
        let now = self.now();
        let out = &mut self.out;
        while let Some(t) = self.node.poll_transmit(now) {
            out.push(t.face, t.bytes);
        }
        while let Some(ev) = self.node.poll_event() {
            match ev {
                NodeEvent::CreateFace(req) => self.node.complete_create_face(
                    now,
                    req.token,
                    Err("faces/create is not served with engine threads".into()),
                ),
                NodeEvent::DestroyFace { face } => {
                    tracing::warn!(%face, "faces/destroy ignored with engine threads");
                }
            }
        }
        // A create-face refusal is a reply to send.
        while let Some(t) = self.node.poll_transmit(now) {
            out.push(t.face, t.bytes);
        }
        for (i, pending) in out.pending.iter_mut().enumerate() {
            if pending.is_empty() {
                continue;
            }
            let fd = self.sockets[i].as_raw_fd();
            let send = &mut out.send;
            send_backlog(pending, |items| send.send(fd, items));
        }
    }
}

impl Out {
    fn push(&mut self, face: FaceId, bytes: Bytes) {
        let sent = match self.faces.get(&face) {
            Some(FaceOut::Udp { sock, peer }) => {
                let q = &mut self.pending[*sock];
                q.len() < SEND_QUEUE && {
                    q.push((*peer, bytes));
                    true
                }
            }
            Some(FaceOut::Stream(tx)) => tx.try_send(bytes).is_ok(),
            None => false,
        };
        if !sent {
            self.dropped += 1;
        }
    }
}
