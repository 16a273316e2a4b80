//! The control thread of the sharded engine: sockets, faces, dispatch, and
//! shard 0.
//!
//! It reads every UDP socket (`recvmmsg` with GRO, the daemon's
//! [`udp::UdpPort`]) and the Unix stream faces, gives each other shard its
//! packets of one read as one batch (one hand-off per shard per read, never
//! one per packet) and runs shard 0's share itself, inline: with one
//! thread this is today's daemon plus the dispatch rule, and N threads cost
//! N - 1 hand-offs per read. (A first version ran every shard on a thread
//! of its own behind this one; `docs/multicore.md` has both measured.) It
//! creates every face and announces it to all shards before any packet of
//! that face, so face ids agree everywhere.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context as _;
use bytes::Bytes;
use crossbeam_channel::Sender;
use hashbrown::HashMap;
use tokio::net::UdpSocket;
use tokio::sync::mpsc;

use super::worker::{ToPrefixShard, Worker};
use super::{dispatch, FaceOut, Msg, Pkt, Sockets};
use crate::config::Config;
use crate::daemon::listen::{accept_unix, unix_listener};
use crate::daemon::INBOUND_BATCHES_PER_TURN;
use crate::daemon::{notify, stream, udp, AnyStream, Inbound};
use crate::engine::{FaceId, FaceParams};
use crate::mgmt::{FaceUri, Route};

/// Batches (of packets or table changes) queued per shard; packets beyond
/// it are dropped, as a full socket buffer would drop them.
const SHARD_QUEUE: usize = 1024;
/// Batches from stream readers and accept loops waiting for this thread.
const INBOUND_QUEUE: usize = 1024;

struct Control {
    cfg: Config,
    /// Shard 0, run on this thread.
    shard0: Worker,
    /// Queues of shards 1..N.
    others: Vec<Sender<Msg>>,
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
    let (inbox_tx, mut inbox) = mpsc::channel::<Pkt>(SHARD_QUEUE);
    let (shard0, (senders, workers)) = start_shards(&cfg, n, &sockets, inbox_tx)?;
    let (tx, mut rx) = mpsc::channel::<Vec<Inbound>>(INBOUND_QUEUE);
    let mut c = Control {
        shard0,
        ports: socks.iter().cloned().map(udp::UdpPort::new).collect(),
        locals,
        peers: HashMap::new(),
        streams: HashMap::new(),
        next_face: FaceId::FIRST_ORDINARY,
        batches: (0..n).map(|_| Vec::new()).collect(),
        others: senders,
        tx: tx.clone(),
        dropped: 0,
        cfg,
    };
    let result = c.serve(&socks, &mut rx, &mut inbox).await;
    for s in &c.others {
        let _ = s.send(Msg::Stop);
    }
    c.shard0.log_stop();
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

/// Threads of shards 1..N and their queues.
type Others = (Vec<Sender<Msg>>, Vec<std::thread::JoinHandle<()>>);

/// Shard 0 (for this thread) and `n - 1` engine threads, each with its
/// own `Node`; `inbox` is shard 0's queue for second matches.
fn start_shards(
    cfg: &Config,
    n: usize,
    sockets: &Sockets,
    inbox: mpsc::Sender<Pkt>,
) -> anyhow::Result<(Worker, Others)> {
    let start = Instant::now();
    let unix_ms = crate::daemon::shell::unix_now_ms();
    let mut senders = Vec::new();
    let mut handles = Vec::new();
    let mut shard0 = None;
    for i in 0..n {
        let node = crate::daemon::shell::node_of_config(cfg, unix_ms, i as u64)?;
        if i == 0 {
            shard0 = Some(Worker::new(0, node, start, None, sockets.clone()));
            continue;
        }
        let to0 = inbox.clone();
        let to0: ToPrefixShard = Box::new(move |p| to0.try_send(p).is_ok());
        let w = Worker::new(i, node, start, Some(to0), sockets.clone());
        let (tx, rx) = crossbeam_channel::bounded::<Msg>(SHARD_QUEUE);
        senders.push(tx);
        handles.push(
            std::thread::Builder::new()
                .name(format!("icnfwd-shard{i}"))
                .spawn(move || w.run(rx))?,
        );
    }
    tracing::info!(
        threads = n,
        "sharded engine: one Node per thread, name-hash dispatch"
    );
    let shard0 = shard0.ok_or_else(|| anyhow::anyhow!("no engine thread"))?;
    Ok((shard0, (senders, handles)))
}

impl Control {
    async fn serve(
        &mut self,
        socks: &[Arc<UdpSocket>],
        rx: &mut mpsc::Receiver<Vec<Inbound>>,
        inbox: &mut mpsc::Receiver<Pkt>,
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
        // Shard 0's one timer, re-armed only when its deadline moves.
        let mut timer = Box::pin(tokio::time::sleep_until(tokio::time::Instant::now()));
        let mut armed: Option<Instant> = None;
        let mut inbox_closed = false;
        loop {
            let wake = self.shard0.wake_at();
            if wake != armed {
                if let Some(at) = wake {
                    timer.as_mut().reset(at.into());
                }
                armed = wake;
            }
            tokio::select! {
                biased;
                _ = sigterm.recv() => break,
                _ = sigint.recv() => break,
                _ = &mut timer, if armed.is_some() => armed = None,
                batch = rx.recv() => {
                    let Some(batch) = batch else { break };
                    for m in batch {
                        self.inbound(m);
                    }
                }
                // Closed at once with one thread (nobody hands Data back):
                // a closed queue must not keep the select ready.
                p = inbox.recv(), if !inbox_closed => {
                    let now = self.shard0.now();
                    match p {
                        Some(p) => self.shard0.packet(now, p),
                        None => inbox_closed = true,
                    }
                }
                _ = readable(socks) => {}
            }
            // Whatever woke the task, every source is served once per turn
            // (as in the single-thread shell, `shell/mod.rs`): a branch the
            // biased select always finds ready first (a timer due at every
            // turn under a flood) must not leave the stream faces' batches
            // or the other shards' Data waiting.
            for _ in 0..INBOUND_BATCHES_PER_TURN {
                match rx.try_recv() {
                    Ok(batch) => batch.into_iter().for_each(|m| self.inbound(m)),
                    Err(_) => break,
                }
            }
            let now = self.shard0.now();
            while let Ok(p) = inbox.try_recv() {
                self.shard0.packet(now, p);
            }
            let read = self.pump_udp();
            self.hand_off();
            self.shard0.end_turn();
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
            let params = udp::permanent_face_params(
                self.locals[sock],
                peer,
                f.mtu.unwrap_or(cfg.udp.mtu),
                f.capacity_bps,
                f.ingress_capacity_bps,
            );
            let id = self.add_face(params, FaceOut::Udp { sock, peer });
            self.peers.insert((sock, peer), id);
            by_uri.insert(uri, id);
        }
        for r in cfg.routes()? {
            let Some(face) = by_uri.get(&r.face) else {
                tracing::warn!(prefix = %r.prefix, face = %r.face, "route to a face that is not open");
                continue;
            };
            let route = Route::from_config(face.0, r.cost);
            self.broadcast(|| Msg::Route(r.prefix.clone(), route));
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

    /// Applies a table change on every shard; waits for room in their
    /// queues (it must not be lost).
    fn broadcast(&mut self, msg: impl Fn() -> Msg) {
        self.shard0.handle(msg());
        for s in &self.others {
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
                stream::size_unix_buffers(&u);
                let (params, _) = stream::unix_face_params(&self.cfg.unix.path, &u);
                let (r, w) = u.into_split();
                let (wtx, wrx) = mpsc::channel(stream::WRITE_QUEUE);
                tokio::spawn(stream::write_loop(w, wrx));
                let id = self.add_face(params, FaceOut::Stream(wtx));
                let reader = tokio::spawn(stream::read_loop(r, id, self.tx.clone()));
                self.streams.insert(id, reader.abort_handle());
            }
            Inbound::Accepted(AnyStream::Tcp(_))
            | Inbound::Eth { .. }
            | Inbound::StreamWritable { .. }
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
        let (params, _) = udp::on_demand_face_params(&self.cfg.udp, self.locals[sock], from);
        let id = self.add_face(params, FaceOut::Udp { sock, peer: from });
        tracing::debug!(%id, %from, "on-demand UDP face");
        self.peers.insert((sock, from), id);
        id
    }

    fn dispatch(&mut self, face: FaceId, bytes: Bytes) {
        let d = dispatch::dest(&bytes, self.batches.len());
        self.batches[d.shard].push(Pkt {
            face,
            bytes,
            retry: d.retry_on_prefix_shard,
        });
    }

    /// Hands each other shard its packets of this turn (one message per
    /// shard, first, so that they work while this thread runs shard 0's
    /// share).
    fn hand_off(&mut self) {
        for (i, b) in self.batches.iter_mut().enumerate().skip(1) {
            if b.is_empty() {
                continue;
            }
            let n = b.len() as u64;
            let batch = std::mem::replace(b, Vec::with_capacity(n as usize));
            if self.others[i - 1].try_send(Msg::Packets(batch)).is_err() {
                self.dropped += n;
            }
        }
        let mine = std::mem::take(&mut self.batches[0]);
        let now = self.shard0.now();
        for p in mine {
            self.shard0.packet(now, p);
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
