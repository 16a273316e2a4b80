//! Per-peer receive queues for the peers that need them. Every UDP peer
//! of a listening address shares that socket's kernel queue, one FIFO
//! that drops at its tail when full: a single peer sending faster than
//! the engine serves fills it, and then everyone's datagrams wait behind
//! the flood (a 4 MB queue of small Interests is about a second of a debug
//! build's work) or are dropped by the kernel before the engine's fair
//! shares ever see them. Measured with `tests/hardening_flood_live.rs`
//! (debug build, one peer flooding at 90-300 k Interests/s): a consumer
//! at 8 Mbit/s fell to 0.57 Mbit/s (RTT 0.7-2.2 s, 1602 timeouts); with
//! the engine loop yielding to the stream tasks (`mod.rs`) but no
//! isolation, 0.6 Mbit/s; with isolation but no yield, 1.4-4.6 Mbit/s;
//! with both and every source served each turn (`mod.rs`), 7.86-7.98
//! Mbit/s (10 of 10 runs with a busy loop on the other core).
//!
//! So a peer that has at least [`ISOLATE_DATAGRAMS_PER_TURN`] datagrams in
//! one read of the shared socket gets a socket of its own, bound to the
//! same address and connected to it (`udp::bind_connected`, NFD's
//! per-face sockets): the kernel queues its datagrams there from then on,
//! the engine reads that socket with the same per-turn bound as any
//! other, and what the peer sends beyond it overflows only its own queue.
//! The shared socket stays short, so every other peer is read each turn.
//! At most [`MAX_ISOLATED`] peers at once (one fd each, and a receive
//! queue as large as the listening socket's, kernel memory only while it
//! holds datagrams); the socket goes with the face. What the kernel drops
//! from a full queue is counted (`receive-overflow`, `drops.rs`). A flood
//! spread over many source ports, each below the threshold, still shares
//! the listening socket (the per-address face share bounds how many faces
//! it gets).

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use tokio::net::UdpSocket;

use super::Shell;
use crate::daemon::udp;
use crate::engine::FaceId;

/// Datagrams from one peer in one read of a shared socket (whose read is
/// bounded at 256 per turn) that earn it its own socket.
pub(super) const ISOLATE_DATAGRAMS_PER_TURN: usize = 64;
/// Peers with their own socket at once.
pub(super) const MAX_ISOLATED: usize = 64;

/// A peer's own receive socket.
pub(super) struct Isolated {
    pub(super) face: FaceId,
    pub(super) peer: SocketAddr,
    /// The listening channel it belongs to (replies leave from there).
    pub(super) chan: usize,
    pub(super) sock: Arc<UdpSocket>,
    /// The socket's kernel drop count when last read (`drops.rs`).
    pub(super) seen_drops: u32,
}

impl Shell {
    /// After a read of `got` from channel `chan`'s shared socket (already
    /// delivered): gives each peer with many datagrams in it a socket.
    pub(super) fn isolate_heavy(&mut self, chan: usize, got: &[(SocketAddr, Bytes)]) {
        if got.len() < ISOLATE_DATAGRAMS_PER_TURN
            || self.udp[chan].multicast_face.is_some()
            || self.isolation_off
        {
            return;
        }
        let mut counts = std::mem::take(&mut self.peer_counts);
        for (from, _) in got {
            *counts.entry(*from).or_insert(0) += 1;
        }
        for (from, n) in counts.drain() {
            if n < ISOLATE_DATAGRAMS_PER_TURN || self.isolated.len() >= MAX_ISOLATED {
                continue;
            }
            let Some(&face) = self.udp_peers.get(&(chan, from)) else {
                continue; // refused, or closed since
            };
            if self.isolated.iter().any(|i| i.face == face) {
                continue;
            }
            match udp::bind_connected(self.udp[chan].local, from) {
                Ok(s) => {
                    tracing::debug!(%face, %from, datagrams = n, "peer gets its own UDP receive socket");
                    self.isolated.push(Isolated {
                        face,
                        peer: from,
                        chan,
                        sock: Arc::new(s),
                        seen_drops: 0,
                    });
                    self.sockets_changed = true;
                }
                Err(e) => {
                    tracing::warn!(error = %e, local = %self.udp[chan].local,
                        "cannot open per-peer UDP sockets; every peer shares the listening socket");
                    self.isolation_off = true;
                }
            }
        }
        self.peer_counts = counts;
    }

    /// Reads each peer's own socket (bounded per turn, as the shared ones)
    /// and hands the datagrams to the engine; returns how many were read.
    pub(super) fn pump_isolated(&mut self, got: &mut Vec<(SocketAddr, Bytes)>) -> usize {
        let (mut i, mut read) = (0, 0);
        while i < self.isolated.len() {
            let (chan, sock) = (self.isolated[i].chan, self.isolated[i].sock.clone());
            i += 1;
            read += self.udp[chan]
                .port
                .recv_on(&sock, |from, pkt| got.push((from, pkt)));
            let now = self.now();
            self.count_oversized(now, chan);
            // Only the connected peer's, but for what arrived between bind
            // and connect: attributed by sender, as on the shared socket.
            for (from, pkt) in got.drain(..) {
                let face = self.udp_face(now, chan, from);
                self.deliver(now, face, pkt);
            }
        }
        read
    }

    /// The face is gone: so is its socket.
    pub(super) fn unisolate(&mut self, face: FaceId) {
        let before = self.isolated.len();
        self.isolated.retain(|i| i.face != face);
        self.sockets_changed |= self.isolated.len() != before;
    }

    /// The peers' own sockets, for the engine loop's readiness wait.
    pub(super) fn isolated_sockets(&self) -> impl Iterator<Item = Arc<UdpSocket>> + '_ {
        self.isolated.iter().map(|i| i.sock.clone())
    }
}
