//! The engine task: owns the `Node`, maps faces to transports, drives the
//! single timer, handles signals and configuration reloads.
//!
//! - this file: the task's state, its main loop, and moving packets between
//!   the node and the transports;
//! - [`faces`]: opening, mapping and closing faces of every transport;
//! - [`tables`]: configuration tables (static routes, strategies, permanent
//!   faces) and SIGHUP reloads; [`limits`]: `[limits]` and `[mgmt]` on SIGHUP.

mod admission;
mod drops;
mod faces;
mod isolate;
mod limits;
mod memory;
mod tables;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use bytes::Bytes;
use cc_core::Timestamp;
use hashbrown::{HashMap, HashSet};
use icn_tlv::Name;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use tokio::time::Instant;

use super::ethernet::{EthSocket, Mac};
use super::listen::{accept_tcp, accept_unix, multicast_socket, tcp_listener, unix_listener};
use super::{notify, udp, Inbound, InboundTx, LogReload, INBOUND_BATCHES_PER_TURN};
use crate::config::Config;
use crate::engine::FaceId;
use crate::mgmt::{FaceUri, ManagerConfig};
use crate::node::{Node, NodeEvent};

/// Batches waiting for the engine task.
const INBOUND_QUEUE: usize = 1024;
/// Batches waiting for one Ethernet sender.
const OUT_QUEUE: usize = 256;
const RECONNECT_DELAY: Duration = Duration::from_secs(2);
/// How long start-up waits for permanent TCP faces to connect before
/// accepting clients anyway (longer than the 800 ms connect timeout, so each
/// face has either connected or failed and gone to its retry loop).
const STARTUP_CONNECT_WAIT: Duration = Duration::from_millis(1000);

struct UdpChannel {
    local: SocketAddr,
    port: udp::UdpPort,
    /// A multicast channel maps every sender to one multi-access face.
    multicast_face: Option<FaceId>,
    /// The socket's kernel drop count when last read (`drops.rs`).
    seen_drops: u32,
}

/// One AF_PACKET socket: a multicast face plus on-demand unicast faces.
struct EthChannel {
    sock: Arc<EthSocket>,
    /// Face MTU (the interface MTU unless the config lowers it).
    mtu: usize,
    out: mpsc::Sender<Vec<(Mac, Bytes)>>,
    pending: Vec<(Mac, Bytes)>,
    multicast_face: FaceId,
}

enum FaceTx {
    Udp { sock: usize, peer: SocketAddr },
    Eth { chan: usize, peer: Mac },
    Stream(Option<mpsc::Sender<Bytes>>),
}

struct FaceEntry {
    tx: FaceTx,
    uri: FaceUri,
    on_demand: bool,
    last_rx: Instant,
    reader: Option<AbortHandle>,
}

struct Shell {
    node: Node,
    start: Instant,
    tx: InboundTx,
    udp: Vec<UdpChannel>,
    eth: Vec<EthChannel>,
    faces: HashMap<FaceId, FaceEntry>,
    udp_peers: HashMap<(usize, SocketAddr), FaceId>,
    /// On-demand UDP and Ethernet faces (bounded by `[limits] max_faces`).
    n_on_demand: usize,
    /// On-demand UDP faces per source address.
    on_demand_by_ip: HashMap<std::net::IpAddr, usize>,
    /// No idle-face scan before this (`admission.rs`).
    next_evict_scan: Instant,
    eth_peers: HashMap<(usize, Mac), FaceId>,
    /// Faces opened from `[[face]]`, by URI, for routes and reloads.
    config_faces: HashMap<FaceUri, FaceId>,
    /// Multicast faces a `[[route]]` may name: `dev://IFNAME` for an
    /// Ethernet face, the group URI for all UDP multicast faces.
    group_faces: HashMap<FaceUri, Vec<FaceId>>,
    config_strategies: Vec<Name>,
    /// Permanent TCP faces whose first connect has not finished (start-up
    /// waits for them before it accepts clients).
    connecting: HashSet<FaceId>,
    cfg: Config,
    config_path: Option<PathBuf>,
    log_reload: Option<LogReload>,
    /// One warning per (reason, peer address) per interval.
    drop_log: crate::ratelog::RateLimitedLog<(crate::engine::DropReason, Option<std::net::IpAddr>)>,
    /// Datagrams read in this turn, before the engine sees them (kept to
    /// reuse its allocation).
    udp_rx: Vec<(SocketAddr, Bytes)>,
    /// Peers with a receive socket of their own (`isolate.rs`).
    isolated: Vec<isolate::Isolated>,
    /// The set of sockets to wait on changed.
    sockets_changed: bool,
    /// Per-peer socket could not be opened: not tried again.
    isolation_off: bool,
    /// Scratch: datagrams per peer in one read.
    peer_counts: HashMap<SocketAddr, usize>,
}

/// Milliseconds since the Unix epoch now (0 if the clock is before it).
pub(crate) fn unix_now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The engine of `cfg`: its router configuration, management with the
/// file's RIB bound and scope policy (validated here: a bad section fails
/// the start) and wall-clock offset `unix_ms`, seeded from the start time,
/// the process id and `salt` (one per engine thread).
pub(crate) fn node_of_config(cfg: &Config, unix_ms: u64, salt: u64) -> anyhow::Result<Node> {
    let mcfg = ManagerConfig {
        unix_epoch_offset_ms: unix_ms,
        max_routes: cfg.tables.rib_max_routes,
        scope: crate::mgmt::scope::ScopePolicy::from_config(&cfg.mgmt)
            .map_err(|(k, why)| anyhow::anyhow!("invalid value for `{k}`: {why}"))?,
        ..Default::default()
    };
    let seed = unix_ms ^ u64::from(std::process::id()).rotate_left(32) ^ salt;
    Ok(Node::new(cfg.router_config(), mcfg, seed))
}

pub(super) async fn run(
    cfg: Config,
    config_path: Option<PathBuf>,
    log_reload: Option<LogReload>,
) -> anyhow::Result<()> {
    memory::fix_malloc_thresholds();
    let (tx, mut rx) = mpsc::channel::<Vec<Inbound>>(INBOUND_QUEUE);
    let start = Instant::now();
    let node = node_of_config(&cfg, unix_now_ms(), 0)?;
    let mut shell = Shell {
        node,
        start,
        tx: tx.clone(),
        udp: Vec::new(),
        eth: Vec::new(),
        faces: HashMap::new(),
        udp_peers: HashMap::new(),
        n_on_demand: 0,
        on_demand_by_ip: HashMap::new(),
        next_evict_scan: Instant::now(),
        eth_peers: HashMap::new(),
        config_faces: HashMap::new(),
        group_faces: HashMap::new(),
        config_strategies: Vec::new(),
        connecting: HashSet::new(),
        cfg: cfg.clone(),
        config_path,
        log_reload,
        drop_log: crate::ratelog::RateLimitedLog::new(drops::DROP_LOG_INTERVAL),
        udp_rx: Vec::with_capacity(udp::BATCH),
        isolated: Vec::new(),
        sockets_changed: false,
        isolation_off: false,
        peer_counts: HashMap::new(),
    };

    if cfg.udp.enabled {
        for addr in &cfg.udp.listen {
            let sock = udp::bind(*addr).with_context(|| format!("binding UDP {addr}"))?;
            let local = sock.local_addr()?;
            shell.add_udp_channel(Arc::new(sock), local, None);
            tracing::info!(%local, "UDP listening");
        }
    }
    if cfg.multicast.enabled {
        for iface in &cfg.multicast.interfaces {
            let sock = multicast_socket(cfg.multicast.group, *iface)
                .with_context(|| format!("joining {} on {iface}", cfg.multicast.group))?;
            shell.add_multicast_face(Arc::new(sock), *iface);
        }
    }
    for e in &cfg.ethernet {
        let sock = EthSocket::open(&e.interface)
            .with_context(|| format!("opening Ethernet face on {}", e.interface))?;
        shell.add_ethernet(Arc::new(sock), e.mtu);
    }
    // Permanent faces, static routes and strategies go in before any client
    // can connect: whoever sees the socket (or READY=1) sees the routes.
    shell.apply_config_tables(&cfg)?;
    shell.await_permanent_connects(&mut rx).await;
    let mut listeners = Vec::new();
    if cfg.tcp.enabled {
        for addr in &cfg.tcp.listen {
            let l = tcp_listener(*addr).with_context(|| format!("binding TCP {addr}"))?;
            tracing::info!(local = %l.local_addr()?, "TCP listening");
            listeners.push(tokio::spawn(accept_tcp(l, tx.clone())));
        }
    }
    let unix_path = cfg.unix.enabled.then(|| cfg.unix.path.clone());
    if let Some(path) = &unix_path {
        let l = unix_listener(path)
            .with_context(|| format!("binding Unix socket {}", path.display()))?;
        tracing::info!(path = %path.display(), "Unix socket listening");
        listeners.push(tokio::spawn(accept_unix(l, tx.clone())));
    }
    drop(tx);
    if let Err(e) = notify::notify("READY=1") {
        tracing::warn!(error = %e, "sd_notify READY=1 failed");
    }

    use tokio::signal::unix::{signal, SignalKind};
    let mut sigterm = signal(SignalKind::terminate())?;
    let mut sigint = signal(SignalKind::interrupt())?;
    let mut sighup = signal(SignalKind::hangup())?;
    let sweep_every = Duration::from_secs((cfg.udp.idle_timeout_s / 4).clamp(1, 60));
    let mut sweep = tokio::time::interval(sweep_every);
    let mut trim = tokio::time::interval(memory::TRIM_INTERVAL);
    let mut overflow = tokio::time::interval(drops::OVERFLOW_CHECK_INTERVAL);
    // One timer, re-armed only when the engine's deadline moves.
    let mut timer = Box::pin(tokio::time::sleep_until(Instant::now()));
    let mut armed: Option<Instant> = None;
    let mut udp_socks = shell.udp_sockets();
    let mut backlog = vec![false; udp_socks.len()];
    tracing::info!("icnfwd running");
    loop {
        if std::mem::take(&mut shell.sockets_changed) {
            udp_socks = shell.udp_sockets();
            backlog = vec![false; udp_socks.len()];
        }
        let deadline = shell.node.poll_timeout().map(|t| shell.instant_of(t));
        if deadline != armed {
            if let Some(d) = deadline {
                timer.as_mut().reset(d);
            }
            armed = deadline;
        }
        for (b, c) in backlog.iter_mut().zip(&shell.udp) {
            *b = c.port.backlogged();
        }
        tokio::select! {
            biased;
            _ = sigterm.recv() => { tracing::info!("SIGTERM: shutting down"); break; }
            _ = sigint.recv() => { tracing::info!("SIGINT: shutting down"); break; }
            _ = sighup.recv() => {
                let _ = notify::reloading();
                shell.reload();
                let _ = notify::notify("READY=1");
            }
            _ = sweep.tick() => shell.sweep_idle(),
            _ = trim.tick() => shell.return_memory(),
            _ = overflow.tick() => shell.count_receive_overflow(),
            _ = &mut timer, if armed.is_some() => {}
            batch = rx.recv() => {
                let Some(batch) = batch else { break };
                shell.handle_batch(batch);
            }
            _ = udp_ready(&udp_socks, &backlog) => {}
        }
        // Whatever woke the task, every source is served once per turn:
        // the inbound queue (stream faces, bounded), a due timer, the UDP
        // sockets that are ready (a readiness check, not a system call,
        // for those that are not). Serving only the branch that fired let
        // one source starve the others: under a UDP flood the engine's
        // timer was due at nearly every turn and the biased select took it
        // first, so a local producer's Data sat in the inbound queue for
        // 15-300 ms (tests/hardening_flood_live.rs: the timer had fired in
        // 420 of the 424 turns that left batches waiting; 5-195 consumer
        // timeouts, goodput down to 6.0 of 8.0 Mbit/s).
        for _ in 0..INBOUND_BATCHES_PER_TURN {
            match rx.try_recv() {
                Ok(b) => shell.handle_batch(b),
                Err(_) => break,
            }
        }
        if armed.is_some_and(|d| d <= Instant::now()) {
            // Due: the next deadline must re-arm it, even if unchanged.
            armed = None;
            let now = shell.now();
            shell.node.handle_timeout(now);
        }
        let read = shell.pump_udp();
        shell.flush();
        if read > 0 {
            // The stream faces' reader and writer tasks (Unix, TCP: local
            // applications) share this thread. While datagrams keep coming
            // the select above is always ready and would not let them run
            // for a whole coop budget: under a UDP flood a local producer's
            // Data then waited 0.3-0.8 s (tests/hardening_flood_live.rs).
            tokio::task::yield_now().await;
        }
    }
    let _ = notify::notify("STOPPING=1");
    for l in listeners {
        l.abort();
    }
    if let Some(p) = unix_path {
        let _ = std::fs::remove_file(p);
    }
    Ok(())
}

impl Shell {
    fn now(&self) -> Timestamp {
        Timestamp::from_nanos(self.start.elapsed().as_nanos() as u64)
    }

    fn instant_of(&self, t: Timestamp) -> Instant {
        self.start + Duration::from_nanos(t.as_nanos().min(u64::MAX / 2))
    }

    fn entry(&self, tx: FaceTx, uri: FaceUri, on_demand: bool) -> FaceEntry {
        FaceEntry {
            tx,
            uri,
            on_demand,
            last_rx: Instant::now(),
            reader: None,
        }
    }

    fn handle_batch(&mut self, batch: Vec<Inbound>) {
        let now = self.now();
        for m in batch {
            match m {
                Inbound::Eth {
                    chan,
                    from,
                    multicast,
                    pkt,
                } => {
                    let face = if multicast {
                        self.eth.get(chan).map(|c| c.multicast_face)
                    } else {
                        self.eth_face(now, chan, from)
                    };
                    self.deliver(now, face, pkt);
                }
                Inbound::Stream { face, pkt } => {
                    if self.faces.contains_key(&face) {
                        self.node.handle_packet(now, face, pkt);
                    }
                }
                Inbound::StreamClosed { face } => self.stream_closed(now, face),
                Inbound::StreamWritable { face } => self.node.face_writable(face),
                Inbound::Accepted(s) => self.accepted(now, s),
                Inbound::Connected { purpose, result } => self.connected(now, purpose, result),
            }
        }
    }

    /// Hands a datagram or frame to the engine and notes the face active.
    fn deliver(&mut self, now: Timestamp, face: Option<FaceId>, pkt: Bytes) {
        let Some(face) = face else { return };
        if let Some(e) = self.faces.get_mut(&face) {
            e.last_rx = Instant::now();
        }
        self.node.handle_packet(now, face, pkt);
    }

    fn output(&mut self, face: FaceId, bytes: Bytes) {
        let Some(e) = self.faces.get(&face) else {
            return;
        };
        let sent = match &e.tx {
            FaceTx::Udp { sock, peer } => self.udp[*sock].port.push(*peer, bytes),
            FaceTx::Eth { chan, peer } => {
                self.eth[*chan].pending.push((*peer, bytes));
                true
            }
            FaceTx::Stream(Some(tx)) => match tx.try_send(bytes) {
                Ok(()) => true,
                Err(mpsc::error::TrySendError::Full(bytes)) => {
                    // Back-pressure: the frame goes back to the engine,
                    // whose queues hold what follows until the writer has
                    // room again (then `Inbound::StreamWritable`).
                    self.node.face_blocked(face, bytes);
                    let (tx, inbound) = (tx.clone(), self.tx.clone());
                    tokio::spawn(async move {
                        if tx.reserve().await.is_ok() {
                            let _ = inbound.send(vec![Inbound::StreamWritable { face }]).await;
                        }
                    });
                    return;
                }
                Err(mpsc::error::TrySendError::Closed(_)) => false,
            },
            FaceTx::Stream(None) => false,
        };
        if !sent {
            let now = self.now();
            self.shell_drop(
                now,
                Some(face),
                crate::engine::DropReason::SendBacklog,
                None,
            );
        }
    }

    /// Drains transmits and events until both are empty, then hands each
    /// datagram socket its batch.
    fn flush(&mut self) {
        loop {
            let now = self.now();
            let mut progressed = false;
            while let Some(t) = self.node.poll_transmit(now) {
                self.output(t.face, t.bytes);
                progressed = true;
            }
            while let Some(ev) = self.node.poll_event() {
                self.node_event(now, ev);
                progressed = true;
            }
            if !progressed {
                break;
            }
        }
        for c in &mut self.udp {
            c.port.flush();
        }
        let mut failed = Vec::new();
        for c in &mut self.eth {
            if !c.pending.is_empty() {
                let batch = std::mem::take(&mut c.pending);
                if let Err(e) = c.out.try_send(batch) {
                    let n = match e {
                        mpsc::error::TrySendError::Full(b)
                        | mpsc::error::TrySendError::Closed(b) => b.len(),
                    };
                    failed.push(n);
                }
            }
        }
        let now = self.now();
        for _ in 0..failed.into_iter().sum::<usize>() {
            self.shell_drop(now, None, crate::engine::DropReason::SendBacklog, None);
        }
    }

    /// Reads every ready UDP socket (a bounded amount each) and hands the
    /// datagrams to the engine; returns how many were read.
    fn pump_udp(&mut self) -> usize {
        let mut got = std::mem::take(&mut self.udp_rx);
        let mut read = 0;
        for sock in 0..self.udp.len() {
            read += self.udp[sock].port.recv(|from, pkt| got.push((from, pkt)));
            let now = self.now();
            self.count_oversized(now, sock);
            if got.is_empty() {
                continue;
            }
            for (from, pkt) in &got {
                let face = self.udp_face(now, sock, *from);
                self.deliver(now, face, pkt.clone());
            }
            self.isolate_heavy(sock, &got);
            got.clear();
        }
        read += self.pump_isolated(&mut got);
        self.udp_rx = got;
        read
    }

    /// The listening sockets (in channel order, as `backlog` flags them),
    /// then the peers' own receive sockets.
    fn udp_sockets(&self) -> Vec<Arc<tokio::net::UdpSocket>> {
        self.udp
            .iter()
            .map(|c| c.port.socket().clone())
            .chain(self.isolated_sockets())
            .collect()
    }

    /// Start-up: serves the inbound channel (datagrams from peers, connect
    /// results) until every permanent TCP face has connected or failed, at
    /// most [`STARTUP_CONNECT_WAIT`], so that the first client's Interests
    /// find those faces open rather than dropped.
    async fn await_permanent_connects(&mut self, rx: &mut mpsc::Receiver<Vec<Inbound>>) {
        let deadline = Instant::now() + STARTUP_CONNECT_WAIT;
        let socks = self.udp_sockets();
        let backlog = vec![false; socks.len()];
        while !self.connecting.is_empty() {
            let woke = tokio::time::timeout_at(deadline, async {
                tokio::select! {
                    batch = rx.recv() => batch.map(Some),
                    _ = udp_ready(&socks, &backlog) => Some(None),
                }
            })
            .await;
            match woke {
                Ok(Some(batch)) => {
                    if let Some(batch) = batch {
                        self.handle_batch(batch);
                    }
                    self.pump_udp();
                    self.flush();
                }
                Ok(None) | Err(_) => break,
            }
        }
        if !self.connecting.is_empty() {
            tracing::warn!(
                faces = self.connecting.len(),
                "permanent TCP faces still connecting; accepting clients"
            );
            self.connecting.clear();
        }
    }

    fn node_event(&mut self, now: Timestamp, ev: NodeEvent) {
        match ev {
            NodeEvent::CreateFace(req) => self.create_face(now, req),
            NodeEvent::DestroyFace { face } => self.drop_face_transport(face),
        }
    }
}

/// Ready when any UDP socket is readable, or writable where `backlog` says
/// it has datagrams waiting.
async fn udp_ready(socks: &[Arc<tokio::net::UdpSocket>], backlog: &[bool]) {
    std::future::poll_fn(|cx| {
        let mut ready = false;
        for (s, b) in socks.iter().zip(backlog) {
            // Poll all of them, so that each one's waker is registered.
            ready |= udp::poll_socket_ready(s, *b, cx).is_ready();
        }
        if ready {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await
}
