//! Experimental: the engine sharded across threads by name hash
//! (`[engine] threads = N`, issue 21; design in `docs/multicore.md`).
//!
//! - N shards ([`worker`]) each own a whole [`crate::node::Node`] (FIB,
//!   PIT, CS, strategy) and send on the shared sockets themselves
//!   (`sendmmsg` with GSO, as the daemon does);
//! - the control thread ([`control`]) owns the UDP sockets and the Unix
//!   listener: it reads datagrams with `recvmmsg`, maps each peer to its
//!   face, picks the shard of each packet by the rule of [`dispatch`],
//!   hands each other shard its share of a read as one batch and runs
//!   shard 0 itself; shards 1..N have a thread each;
//! - faces are created by the control thread only and announced to every
//!   shard in the same order, so a face has the same id everywhere; routes
//!   and strategies of the configuration are applied on every shard.
//!
//! Limits of the prototype: UDP unicast faces and the Unix socket only (TCP,
//! multicast, Ethernet and the metrics endpoint are not started), the
//! congestion-control scheme must be `none`, management is served by shard
//! 0 alone (a `rib/register` reaches shard 0's FIB only; `status` shows
//! shard 0's tables and counters), faces/create is refused, no on-demand
//! face admission limits, idle sweep or SIGHUP reload.

mod control;
pub mod dispatch;
mod worker;

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use serde::Deserialize;
use tokio::sync::mpsc;

use crate::config::Config;
use crate::engine::{FaceId, FaceParams};
use crate::mgmt::Route;
use icn_tlv::Name;

/// `[engine]`: how many engine threads run the forwarding.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngineThreadsConfig {
    /// Engine threads; 1 (the default) runs today's single-thread daemon
    /// unless `sharded` is set.
    pub threads: usize,
    /// Run the sharded prototype even with one thread (to measure what the
    /// control thread and the hand-off cost against today's daemon).
    pub sharded: bool,
}

impl Default for EngineThreadsConfig {
    fn default() -> Self {
        EngineThreadsConfig {
            threads: 1,
            sharded: false,
        }
    }
}

impl EngineThreadsConfig {
    /// Whether the sharded prototype runs instead of the daemon.
    pub fn prototype(&self) -> bool {
        // Any count but 1 goes to the prototype, whose start-up refuses 0
        // and counts above MAX_THREADS with a clear error.
        self.sharded || self.threads != 1
    }
}

/// Most engine threads accepted: each holds a whole CS and PIT.
pub const MAX_THREADS: usize = 64;

/// Where a shard sends what its engine emits on a face.
#[derive(Debug, Clone)]
enum FaceOut {
    /// Datagrams to `peer` from UDP socket number `sock`.
    Udp { sock: usize, peer: SocketAddr },
    /// A stream face's writer task.
    Stream(mpsc::Sender<Bytes>),
}

/// A received packet for one shard.
#[derive(Debug)]
struct Pkt {
    face: FaceId,
    bytes: Bytes,
    /// See [`dispatch::Dest::retry_on_prefix_shard`].
    retry: bool,
}

/// What the control thread (and, for second matches, other shards) tell a
/// shard, in order.
#[derive(Debug)]
enum Msg {
    Packets(Vec<Pkt>),
    /// A face, with the id every shard must give it.
    AddFace {
        id: FaceId,
        params: Box<FaceParams>,
        out: FaceOut,
    },
    RemoveFace(FaceId),
    Route(Name, Route),
    Strategy(Name, Name),
    Stop,
}

/// The UDP sockets every shard sends on (kept open by these handles).
type Sockets = Arc<Vec<Arc<tokio::net::UdpSocket>>>;

/// Runs the sharded prototype until SIGINT/SIGTERM.
pub async fn run(cfg: Config) -> anyhow::Result<()> {
    let threads = cfg.engine.threads;
    anyhow::ensure!(
        (1..=MAX_THREADS).contains(&threads),
        "invalid value for `engine.threads`: {threads} (1 to {MAX_THREADS})"
    );
    anyhow::ensure!(
        cfg.cc.scheme == crate::cc::CcScheme::None,
        "invalid value for `cc.scheme`: the sharded engine (`engine.threads` > 1) runs scheme \"none\" only"
    );
    super::on_own_thread("icnfwd-control", "control", move || control::run(cfg)).await
}
