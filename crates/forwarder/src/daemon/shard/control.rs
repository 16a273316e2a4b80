//! The control thread of the sharded engine: sockets, faces, dispatch.
//!
//! It reads every UDP socket (`recvmmsg` with GRO, the daemon's
//! [`udp::UdpPort`]) and the Unix stream faces, and gives each shard its
//! packets of one read as one batch: one hand-off per shard per read, never
//! one per packet. It creates every face and announces it to all shards
//! before any packet of that face, so face ids agree everywhere.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context as _;
use bytes::Bytes;
use crossbeam_channel::Sender;
use hashbrown::HashMap;
use tokio::net::UdpSocket;
use tokio::sync::mpsc;

use super::worker::Worker;
use super::{dispatch, FaceOut, Msg, Pkt, Sockets};
use crate::config::Config;
use crate::daemon::listen::{accept_unix, unix_listener};
use crate::daemon::{notify, stream, udp, AnyStream, Inbound};
use crate::engine::{FaceId, FaceParams, FaceScope, Persistency};
use crate::mgmt::rib::{CHILD_INHERIT, ORIGIN_STATIC};
use crate::mgmt::{FaceUri, ManagerConfig, Route};
use crate::node::Node;

/// Batches (of packets or table changes) queued per shard; packets beyond
/// it are dropped, as a full socket buffer would drop them.
const SHARD_QUEUE: usize = 1024;
/// Batches from stream readers and accept loops waiting for this thread.
const INBOUND_QUEUE: usize = 1024;

struct Control {
    cfg: Config,
    shards: Vec<Sender<Msg>>,
    ports: Vec<udp::UdpPort>,
    locals: Vec<SocketAddr>,
    peers: HashMap<(usize, SocketAddr), FaceId>,
    /// Stream faces, for their close.
    streams: HashMap<FaceId, tokio::task::AbortHandle>,
    next_face: u64,
    /// Per shard: packets of the current read.
    batches: Vec<Vec<Pkt>>,
    tx: mpsc::Sender<Vec<Inbound>>,
    /// Packets dropped on a full shard queue.
    dropped: u64,
}

pub(super) async fn run(cfg: Config) -> anyhow::Result<()> {
    let n = cfg.engine.threads;
    for (on, what) in [
        (cfg.tcp.enabled, "[tcp]"),
        (cfg.multicast.enabled, "[multicast]"),
        (!cfg.ethernet.is_empty(), "[[ethernet]]"),
        (cfg.metrics.listen.is_some(), "[metrics]"),
    ] {
        if on {
            tracing::warn!("{what} is not served by the sharded engine (engine.threads); ignored");
        }
    }
    let mut socks = Vec::new();
    let mut locals = Vec::new();
    if cfg.udp.enabled {
        for addr in &cfg.udp.listen {
            let s = udp::bind(*addr).with_context(|| format!("binding UDP {addr}"))?;
            locals.push(s.local_addr()?);
            tracing::info!(local = %s.local_addr()?, "UDP listening");
            socks.push(Arc::new(s));
        }
    }
    let sockets: Sockets = Arc::new(socks.clone());
    let (senders, workers) = start_shards(&cfg, n, &sockets)?;
    let (tx, mut rx) = mpsc::channel::<Vec<Inbound>>(INBOUND_QUEUE);
    let mut c = Control {
        ports: socks.iter().cloned().map(udp::UdpPort::new).collect(),
        locals,
        peers: HashMap::new(),
        streams: HashMap::new(),
        next_face: FaceId::FIRST_ORDINARY,
        batches: (0..n).map(|_| Vec::new()).collect(),
        shards: senders,
        tx: tx.clone(),
        dropped: 0,
        cfg,
    };
    let result = c.serve(&socks, &mut rx).await;
    for s in &c.shards {
        let _ = s.send(Msg::Stop);
    }
    for w in workers {
        let _ = w.join();
    }
    if c.cfg.unix.enabled {
        let _ = std::fs::remove_file(&c.cfg.unix.path);
    }
    tracing::info!(
        dropped_on_full_shard_queue = c.dropped,
        "sharded engine stopped"
    );
    result
}

/// Starts `n` engine threads, each with its own `Node`.
fn start_shards(
    cfg: &Config,
    n: usize,
    sockets: &Sockets,
) -> anyhow::Result<(Vec<Sender<Msg>>, Vec<std::thread::JoinHandle<()>>)> {
    let start = Instant::now();
    let unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let scope = crate::mgmt::scope::ScopePolicy::from_config(&cfg.mgmt)
        .map_err(|(k, why)| anyhow::anyhow!("invalid value for `{k}`: {why}"))?;
    let channels: Vec<_> = (0..n)
        .map(|_| crossbeam_channel::bounded::<Msg>(SHARD_QUEUE))
        .collect();
    let mut handles = Vec::new();
    for (i, (_, rx)) in channels.iter().enumerate() {
        let mcfg = ManagerConfig {
            unix_epoch_offset_ms: unix_ms,
            max_routes: cfg.tables.rib_max_routes,
            scope: scope.clone(),
            ..Default::default()
        };
        let seed = unix_ms ^ u64::from(std::process::id()).rotate_left(32) ^ i as u64;
        let w = Worker {
            index: i,
            node: Node::new(cfg.router_config(), mcfg, seed),
            start,
            rx: rx.clone(),
            prefix_shard: (i > 0).then(|| channels[0].0.clone()),
            sockets: sockets.clone(),
        };
        handles.push(
            std::thread::Builder::new()
                .name(format!("icnfwd-shard{i}"))
                .spawn(move || w.run())?,
        );
    }
    tracing::info!(
        threads = n,
        "sharded engine: one Node per thread, name-hash dispatch"
    );
    Ok((channels.into_iter().map(|(s, _)| s).collect(), handles))
}

impl Control {
    async fn serve(
        &mut self,
        socks: &[Arc<UdpSocket>],
        rx: &mut mpsc::Receiver<Vec<Inbound>>,
    ) -> anyhow::Result<()> {
        self.apply_config_tables()?;
        let unix = self.cfg.unix.enabled.then(|| self.cfg.unix.path.clone());
        let mut listener = None;
        if let Some(path) = &unix {
            let l = unix_listener(path)
                .with_context(|| format!("binding Unix socket {}", path.display()))?;
            tracing::info!(path = %path.display(), "Unix socket listening (management: shard 0)");
            listener = Some(tokio::spawn(accept_unix(l, self.tx.clone())));
        }
        if let Err(e) = notify::notify("READY=1") {
            tracing::warn!(error = %e, "sd_notify READY=1 failed");
        }
        use tokio::signal::unix::{signal, SignalKind};
        let mut sigterm = signal(SignalKind::terminate())?;
        let mut sigint = signal(SignalKind::interrupt())?;
        loop {
            tokio::select! {
                biased;
                _ = sigterm.recv() => break,
                _ = sigint.recv() => break,
                batch = rx.recv() => {
                    let Some(batch) = batch else { break };
                    for m in batch {
                        self.inbound(m);
                    }
                }
                _ = readable(socks) => {}
            }
            let read = self.pump_udp();
            self.hand_off();
            if read > 0 {
                // Let the stream tasks on this thread run under a flood.
                tokio::task::yield_now().await;
            }
        }
        let _ = notify::notify("STOPPING=1");
        if let Some(l) = listener {
            l.abort();
        }
        Ok(())
    }

    /// `[[face]]` (UDP only), `[[route]]` and `[[strategy]]` on every shard.
    fn apply_config_tables(&mut self) -> anyhow::Result<()> {
        let cfg = self.cfg.clone();
        let mut by_uri = HashMap::new();
        for i in 0..cfg.face.len() {
            let uri = cfg.face_uri(i)?;
            let FaceUri::Udp(peer) = uri else {
                anyhow::bail!("the sharded engine opens UDP faces only, not {uri}");
            };
            let sock = self
                .locals
                .iter()
                .position(|l| l.is_ipv4() == peer.is_ipv4())
                .ok_or_else(|| anyhow::anyhow!("no [udp] listen address for {uri}"))?;
            let f = &cfg.face[i];
            let params = FaceParams {
                persistency: Persistency::Permanent,
                local_uri: FaceUri::Udp(self.locals[sock]).to_string(),
                mtu: Some(f.mtu.unwrap_or(cfg.udp.mtu)),
                capacity_bps: f.capacity_bps,
                ingress_capacity_bps: f.ingress_capacity_bps,
                ..FaceParams::non_local(uri.to_string())
            };
            let id = self.add_face(params, FaceOut::Udp { sock, peer });
            self.peers.insert((sock, peer), id);
            by_uri.insert(uri, id);
        }
        for r in cfg.routes()? {
            let Some(face) = by_uri.get(&r.face) else {
                tracing::warn!(prefix = %r.prefix, face = %r.face, "route to a face that is not open");
                continue;
            };
            let route = Route {
                face: face.0,
                origin: ORIGIN_STATIC,
                cost: r.cost,
                flags: CHILD_INHERIT,
                expires: None,
            };
            self.broadcast(|| Msg::Route(r.prefix.clone(), route.clone()));
        }
        for (prefix, s) in cfg.strategies()? {
            self.broadcast(|| Msg::Strategy(prefix.clone(), s.clone()));
        }
        Ok(())
    }

    /// A new face, announced to every shard; its id is the one each
    /// shard's engine gives it (they all count from the same start).
    fn add_face(&mut self, params: FaceParams, out: FaceOut) -> FaceId {
        let id = FaceId(self.next_face);
        self.next_face += 1;
        self.broadcast(|| Msg::AddFace {
            id,
            params: Box::new(params.clone()),
            out: out.clone(),
        });
        id
    }

    /// Sends a table change to every shard; waits for room (it must not be lost).
    fn broadcast(&self, msg: impl Fn() -> Msg) {
        for s in &self.shards {
            let _ = s.send(msg());
        }
    }

    fn inbound(&mut self, m: Inbound) {
        match m {
            Inbound::Stream { face, pkt } => self.dispatch(face, pkt),
            Inbound::StreamClosed { face } => {
                if let Some(r) = self.streams.remove(&face) {
                    r.abort();
                }
                self.hand_off();
                self.broadcast(|| Msg::RemoveFace(face));
            }
            Inbound::Accepted(AnyStream::Unix(u)) => {
                let fd = {
                    use std::os::fd::AsRawFd;
                    u.as_raw_fd() as u64
                };
                let params = FaceParams {
                    persistency: Persistency::OnDemand,
                    local_uri: format!("unix://{}", self.cfg.unix.path.display()),
                    ..FaceParams::local(FaceUri::Fd(fd).to_string())
                };
                let (r, w) = u.into_split();
                let (wtx, wrx) = mpsc::channel(stream::WRITE_QUEUE);
                tokio::spawn(stream::write_loop(w, wrx));
                let id = self.add_face(params, FaceOut::Stream(wtx));
                let reader = tokio::spawn(stream::read_loop(r, id, self.tx.clone()));
                self.streams.insert(id, reader.abort_handle());
            }
            Inbound::Accepted(AnyStream::Tcp(_))
            | Inbound::Eth { .. }
            | Inbound::Connected { .. } => {}
        }
    }

    /// Reads every ready UDP socket (bounded per socket) into the batches.
    fn pump_udp(&mut self) -> usize {
        let mut got = Vec::new();
        let mut read = 0;
        for sock in 0..self.ports.len() {
            read += self.ports[sock].recv(|from, pkt| got.push((from, pkt)));
            let _ = self.ports[sock].take_oversized().count();
            for (from, pkt) in got.drain(..) {
                let face = self.udp_face(sock, from);
                self.dispatch(face, pkt);
            }
        }
        read
    }

    /// The face of a UDP peer; on-demand on first contact.
    fn udp_face(&mut self, sock: usize, from: SocketAddr) -> FaceId {
        if let Some(f) = self.peers.get(&(sock, from)) {
            return *f;
        }
        let local = from.ip().is_loopback() && self.cfg.udp.loopback_is_local;
        let params = FaceParams {
            scope: if local {
                FaceScope::Local
            } else {
                FaceScope::NonLocal
            },
            persistency: Persistency::OnDemand,
            local_uri: FaceUri::Udp(self.locals[sock]).to_string(),
            mtu: Some(self.cfg.udp.mtu),
            capacity_bps: self.cfg.udp.default_capacity_bps,
            ..FaceParams::non_local(FaceUri::Udp(from).to_string())
        };
        let id = self.add_face(params, FaceOut::Udp { sock, peer: from });
        tracing::debug!(%id, %from, "on-demand UDP face");
        self.peers.insert((sock, from), id);
        id
    }

    fn dispatch(&mut self, face: FaceId, bytes: Bytes) {
        let d = dispatch::dest(&bytes, self.shards.len());
        self.batches[d.shard].push(Pkt {
            face,
            bytes,
            retry: d.retry_on_prefix_shard,
        });
    }

    /// Hands each shard its packets of this turn, one message per shard.
    fn hand_off(&mut self) {
        for (i, b) in self.batches.iter_mut().enumerate() {
            if b.is_empty() {
                continue;
            }
            let n = b.len() as u64;
            let batch = std::mem::replace(b, Vec::with_capacity(n as usize));
            if self.shards[i].try_send(Msg::Packets(batch)).is_err() {
                self.dropped += n;
            }
        }
    }
}

/// Ready when any of the sockets has datagrams to read.
async fn readable(socks: &[Arc<UdpSocket>]) {
    std::future::poll_fn(|cx| {
        let mut ready = false;
        for s in socks {
            // Poll all of them, so that each one's waker is registered.
            ready |= s.poll_recv_ready(cx).is_ready();
        }
        if ready {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await
}
