//! The engine task: owns the `Node`, maps faces to transports, drives the
//! single timer, handles signals and configuration reloads.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use bytes::Bytes;
use cc_core::Timestamp;
use hashbrown::HashMap;
use icn_tlv::Name;
use tokio::net::UdpSocket;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use tokio::time::Instant;

use super::listen::{
    accept_tcp, accept_unix, multicast_socket, spawn_connect, tcp_listener, unix_listener,
};
use super::{stream, udp, AnyStream, ConnectPurpose, Inbound, InboundTx};
use crate::config::Config;
use crate::engine::{FaceId, FaceParams, FaceScope, LinkType, Persistency};
use crate::mgmt::rib::{CHILD_INHERIT, ORIGIN_STATIC};
use crate::mgmt::{FaceUri, ManagerConfig, Route};
use crate::node::{Node, NodeEvent};

/// Batches waiting for the engine task.
const INBOUND_QUEUE: usize = 1024;
/// Batches waiting for one UDP sender.
const UDP_OUT_QUEUE: usize = 256;
/// On-demand faces allowed at once; new peers beyond it are dropped.
const MAX_FACES: usize = 10_000;
const RECONNECT_DELAY: Duration = Duration::from_secs(2);

struct UdpChannel {
    local: SocketAddr,
    out: mpsc::Sender<Vec<(SocketAddr, Bytes)>>,
    pending: Vec<(SocketAddr, Bytes)>,
    /// A multicast channel maps every sender to one multi-access face.
    multicast_face: Option<FaceId>,
}

enum FaceTx {
    Udp { sock: usize, peer: SocketAddr },
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
    faces: HashMap<FaceId, FaceEntry>,
    udp_peers: HashMap<(usize, SocketAddr), FaceId>,
    /// Faces opened from `[[face]]`, by URI, for routes and reloads.
    config_faces: HashMap<FaceUri, FaceId>,
    config_strategies: Vec<Name>,
    cfg: Config,
    config_path: Option<PathBuf>,
    dropped_out: u64,
}

pub(super) async fn run(cfg: Config, config_path: Option<PathBuf>) -> anyhow::Result<()> {
    let (tx, mut rx) = mpsc::channel::<Vec<Inbound>>(INBOUND_QUEUE);
    let start = Instant::now();
    let unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let mcfg = ManagerConfig {
        unix_epoch_offset_ms: unix_ms,
        max_routes: cfg.tables.rib_max_routes,
        ..Default::default()
    };
    let seed = unix_ms ^ u64::from(std::process::id()).rotate_left(32);
    let node = Node::new(cfg.engine_config(), mcfg, seed);
    let mut shell = Shell {
        node,
        start,
        tx: tx.clone(),
        udp: Vec::new(),
        faces: HashMap::new(),
        udp_peers: HashMap::new(),
        config_faces: HashMap::new(),
        config_strategies: Vec::new(),
        cfg: cfg.clone(),
        config_path,
        dropped_out: 0,
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
    shell.apply_config_tables(&cfg)?;
    drop(tx);

    use tokio::signal::unix::{signal, SignalKind};
    let mut sigterm = signal(SignalKind::terminate())?;
    let mut sigint = signal(SignalKind::interrupt())?;
    let mut sighup = signal(SignalKind::hangup())?;
    let sweep_every = Duration::from_secs((cfg.udp.idle_timeout_s / 4).clamp(1, 60));
    let mut sweep = tokio::time::interval(sweep_every);
    tracing::info!("icnfwd running");
    loop {
        let deadline = shell.node.poll_timeout().map(|t| shell.instant_of(t));
        let timer = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            _ = sigterm.recv() => { tracing::info!("SIGTERM: shutting down"); break; }
            _ = sigint.recv() => { tracing::info!("SIGINT: shutting down"); break; }
            _ = sighup.recv() => shell.reload(),
            batch = rx.recv() => {
                let Some(batch) = batch else { break };
                shell.handle_batch(batch);
                // Drain what else is ready before transmitting, bounded.
                for _ in 0..64 {
                    match rx.try_recv() {
                        Ok(b) => shell.handle_batch(b),
                        Err(_) => break,
                    }
                }
            }
            _ = timer => { let now = shell.now(); shell.node.handle_timeout(now); }
            _ = sweep.tick() => shell.sweep_idle(),
        }
        shell.flush();
    }
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

    fn add_udp_channel(
        &mut self,
        sock: Arc<UdpSocket>,
        local: SocketAddr,
        multicast_face: Option<FaceId>,
    ) -> usize {
        let index = self.udp.len();
        let (otx, orx) = mpsc::channel(UDP_OUT_QUEUE);
        tokio::spawn(udp::send_loop(sock.clone(), orx));
        tokio::spawn(udp::recv_loop(sock, index, self.tx.clone()));
        self.udp.push(UdpChannel {
            local,
            out: otx,
            pending: Vec::new(),
            multicast_face,
        });
        index
    }

    fn add_multicast_face(&mut self, sock: Arc<UdpSocket>, iface: std::net::Ipv4Addr) {
        let group = self.cfg.multicast.group;
        let params = FaceParams {
            link_type: LinkType::MultiAccess,
            persistency: Persistency::Permanent,
            local_uri: format!("udp4://{iface}:{}", group.port()),
            mtu: Some(self.cfg.udp.mtu),
            ..FaceParams::non_local(FaceUri::Udp(group).to_string())
        };
        let now = self.now();
        let id = self.node.add_face(now, params);
        let index =
            self.add_udp_channel(sock, SocketAddr::new(iface.into(), group.port()), Some(id));
        self.faces.insert(
            id,
            self.entry(
                FaceTx::Udp {
                    sock: index,
                    peer: group,
                },
                FaceUri::Udp(group),
                false,
            ),
        );
        tracing::info!(%id, %iface, %group, "UDP multicast face");
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

    /// Permanent faces, static routes and strategies from the configuration.
    fn apply_config_tables(&mut self, cfg: &Config) -> anyhow::Result<()> {
        for i in 0..cfg.face.len() {
            let uri = cfg.face_uri(i)?;
            if self.config_faces.contains_key(&uri) {
                continue;
            }
            let f = &cfg.face[i];
            let id = self.open_permanent(&uri, f.capacity_bps, f.mtu)?;
            self.config_faces.insert(uri, id);
        }
        self.node.remove_routes_of_origin(ORIGIN_STATIC);
        for r in cfg.routes()? {
            let face = self.config_faces[&r.face];
            let route = Route {
                face: face.0,
                origin: ORIGIN_STATIC,
                cost: r.cost,
                flags: CHILD_INHERIT,
                expires: None,
            };
            self.node
                .add_route(r.prefix.clone(), route)
                .map_err(|e| anyhow::anyhow!("route {}: {e}", r.prefix))?;
        }
        let wanted = cfg.strategies()?;
        for old in std::mem::take(&mut self.config_strategies) {
            if !wanted.iter().any(|(p, _)| *p == old) {
                self.node.unset_strategy(&old);
            }
        }
        for (prefix, s) in wanted {
            self.node
                .set_strategy(&prefix, &s)
                .ok_or_else(|| anyhow::anyhow!("unknown strategy {s} for {prefix}"))?;
            self.config_strategies.push(prefix);
        }
        Ok(())
    }

    fn open_permanent(
        &mut self,
        uri: &FaceUri,
        capacity_bps: Option<u64>,
        mtu: Option<usize>,
    ) -> anyhow::Result<FaceId> {
        let now = self.now();
        match uri {
            FaceUri::Udp(peer) => {
                let sock = self
                    .udp_channel_for(*peer)
                    .ok_or_else(|| anyhow::anyhow!("no [udp] listen address for {uri}"))?;
                let params = FaceParams {
                    persistency: Persistency::Permanent,
                    local_uri: FaceUri::Udp(self.udp[sock].local).to_string(),
                    mtu: Some(mtu.unwrap_or(self.cfg.udp.mtu)),
                    capacity_bps,
                    ..FaceParams::non_local(uri.to_string())
                };
                let id = self.node.add_face(now, params);
                self.udp_peers.insert((sock, *peer), id);
                self.faces.insert(
                    id,
                    self.entry(FaceTx::Udp { sock, peer: *peer }, uri.clone(), false),
                );
                Ok(id)
            }
            FaceUri::Tcp(peer) => {
                let params = FaceParams {
                    persistency: Persistency::Permanent,
                    mtu,
                    capacity_bps,
                    ..FaceParams::non_local(uri.to_string())
                };
                let id = self.node.add_face(now, params);
                self.faces
                    .insert(id, self.entry(FaceTx::Stream(None), uri.clone(), false));
                spawn_connect(
                    *peer,
                    ConnectPurpose::Permanent(id),
                    Duration::ZERO,
                    self.tx.clone(),
                );
                Ok(id)
            }
            _ => anyhow::bail!("cannot open {uri}"),
        }
    }

    /// The unicast UDP socket to reach `peer` from.
    fn udp_channel_for(&self, peer: SocketAddr) -> Option<usize> {
        let ok = |c: &UdpChannel| c.multicast_face.is_none() && c.local.is_ipv4() == peer.is_ipv4();
        let exact = self.udp.iter().position(|c| {
            ok(c)
                && c.local.ip().is_loopback() == peer.ip().is_loopback()
                && !c.local.ip().is_unspecified()
        });
        exact
            .or_else(|| {
                self.udp
                    .iter()
                    .position(|c| ok(c) && c.local.ip().is_unspecified())
            })
            .or_else(|| self.udp.iter().position(ok))
    }

    fn handle_batch(&mut self, batch: Vec<Inbound>) {
        let now = self.now();
        for m in batch {
            match m {
                Inbound::Udp { sock, from, pkt } => {
                    if let Some(face) = self.udp_face(now, sock, from) {
                        if let Some(e) = self.faces.get_mut(&face) {
                            e.last_rx = Instant::now();
                        }
                        self.node.handle_packet(now, face, pkt);
                    }
                }
                Inbound::Stream { face, pkt } => {
                    if self.faces.contains_key(&face) {
                        self.node.handle_packet(now, face, pkt);
                    }
                }
                Inbound::StreamClosed { face } => self.stream_closed(now, face),
                Inbound::Accepted(s) => self.accepted(now, s),
                Inbound::Connected { purpose, result } => self.connected(now, purpose, result),
            }
        }
    }

    /// The face of a UDP peer; creates an on-demand face on first contact.
    fn udp_face(&mut self, now: Timestamp, sock: usize, from: SocketAddr) -> Option<FaceId> {
        if let Some(f) = self.udp[sock].multicast_face {
            return Some(f);
        }
        if let Some(f) = self.udp_peers.get(&(sock, from)) {
            return Some(*f);
        }
        if self.faces.len() >= MAX_FACES {
            return None;
        }
        // Loopback peers are applications on this host: local scope, so that
        // python-ndn can register over UDP to 127.0.0.1 (protocol.md §3.11).
        let scope = if from.ip().is_loopback() {
            FaceScope::Local
        } else {
            FaceScope::NonLocal
        };
        let params = FaceParams {
            scope,
            persistency: Persistency::OnDemand,
            local_uri: FaceUri::Udp(self.udp[sock].local).to_string(),
            mtu: Some(self.cfg.udp.mtu),
            ..FaceParams::non_local(FaceUri::Udp(from).to_string())
        };
        let id = self.node.add_face(now, params);
        tracing::debug!(%id, %from, "on-demand UDP face");
        self.udp_peers.insert((sock, from), id);
        self.faces.insert(
            id,
            self.entry(FaceTx::Udp { sock, peer: from }, FaceUri::Udp(from), true),
        );
        Some(id)
    }

    fn accepted(&mut self, now: Timestamp, s: AnyStream) {
        match s {
            AnyStream::Tcp(t) => {
                let (Ok(peer), Ok(local)) = (t.peer_addr(), t.local_addr()) else {
                    return;
                };
                let local_scope = peer.ip().is_loopback() && local.ip().is_loopback();
                let params = FaceParams {
                    scope: if local_scope {
                        FaceScope::Local
                    } else {
                        FaceScope::NonLocal
                    },
                    persistency: Persistency::OnDemand,
                    local_uri: FaceUri::Tcp(local).to_string(),
                    ..FaceParams::non_local(FaceUri::Tcp(peer).to_string())
                };
                let id = self.node.add_face(now, params);
                let (r, w) = t.into_split();
                self.attach_stream(id, FaceUri::Tcp(peer), true, r, w);
            }
            AnyStream::Unix(u) => {
                let fd = {
                    use std::os::fd::AsRawFd;
                    u.as_raw_fd() as u64
                };
                let params = FaceParams {
                    persistency: Persistency::OnDemand,
                    local_uri: format!("unix://{}", self.cfg.unix.path.display()),
                    ..FaceParams::local(FaceUri::Fd(fd).to_string())
                };
                let id = self.node.add_face(now, params);
                tracing::debug!(%id, "Unix face");
                let (r, w) = u.into_split();
                self.attach_stream(id, FaceUri::Fd(fd), true, r, w);
            }
        }
    }

    fn attach_stream<R, W>(&mut self, id: FaceId, uri: FaceUri, on_demand: bool, r: R, w: W)
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let (wtx, wrx) = mpsc::channel(stream::WRITE_QUEUE);
        tokio::spawn(stream::write_loop(w, wrx));
        let reader = tokio::spawn(stream::read_loop(r, id, self.tx.clone())).abort_handle();
        let mut e = self.entry(FaceTx::Stream(Some(wtx)), uri, on_demand);
        e.reader = Some(reader);
        if let Some(old) = self.faces.insert(id, e) {
            if let Some(r) = old.reader {
                r.abort();
            }
        }
    }

    fn connected(
        &mut self,
        now: Timestamp,
        purpose: ConnectPurpose,
        result: std::io::Result<tokio::net::TcpStream>,
    ) {
        match (purpose, result) {
            (ConnectPurpose::Create { token, persistency }, Ok(t)) => {
                let (Ok(peer), Ok(local)) = (t.peer_addr(), t.local_addr()) else {
                    self.node
                        .complete_create_face(now, token, Err("socket closed".into()));
                    return;
                };
                let params = FaceParams {
                    persistency: persistency_of(persistency),
                    local_uri: FaceUri::Tcp(local).to_string(),
                    ..FaceParams::non_local(FaceUri::Tcp(peer).to_string())
                };
                let id = self.node.add_face(now, params);
                let (r, w) = t.into_split();
                self.attach_stream(id, FaceUri::Tcp(peer), false, r, w);
                self.node.complete_create_face(now, token, Ok(id));
            }
            (ConnectPurpose::Create { token, .. }, Err(e)) => {
                self.node
                    .complete_create_face(now, token, Err(e.to_string()));
            }
            (ConnectPurpose::Permanent(id), Ok(t)) => {
                if !self.faces.contains_key(&id) {
                    return;
                }
                tracing::info!(%id, "permanent TCP face connected");
                let uri = self.faces[&id].uri.clone();
                let (r, w) = t.into_split();
                self.attach_stream(id, uri, false, r, w);
            }
            (ConnectPurpose::Permanent(id), Err(e)) => {
                if let Some(peer) = self.faces.get(&id).and_then(|f| f.uri.socket_addr()) {
                    tracing::debug!(%id, error = %e, "permanent TCP face: retrying");
                    spawn_connect(
                        peer,
                        ConnectPurpose::Permanent(id),
                        RECONNECT_DELAY,
                        self.tx.clone(),
                    );
                }
            }
        }
    }

    fn stream_closed(&mut self, now: Timestamp, face: FaceId) {
        let Some(e) = self.faces.get_mut(&face) else {
            return;
        };
        if !e.on_demand && self.config_faces.values().any(|f| *f == face) {
            // Permanent: keep the engine face, reconnect.
            e.tx = FaceTx::Stream(None);
            if let Some(peer) = e.uri.socket_addr() {
                spawn_connect(
                    peer,
                    ConnectPurpose::Permanent(face),
                    RECONNECT_DELAY,
                    self.tx.clone(),
                );
            }
            return;
        }
        self.faces.remove(&face);
        tracing::debug!(%face, "stream face closed");
        self.node.remove_face(now, face);
    }

    fn sweep_idle(&mut self) {
        let idle = Duration::from_secs(self.cfg.udp.idle_timeout_s);
        let now = self.now();
        let stale: Vec<FaceId> = self
            .faces
            .iter()
            .filter(|(_, e)| {
                e.on_demand && matches!(e.tx, FaceTx::Udp { .. }) && e.last_rx.elapsed() >= idle
            })
            .map(|(id, _)| *id)
            .collect();
        for id in stale {
            tracing::debug!(%id, "closing idle UDP face");
            self.drop_face_transport(id);
            self.node.remove_face(now, id);
        }
    }

    fn drop_face_transport(&mut self, id: FaceId) {
        if let Some(e) = self.faces.remove(&id) {
            match e.tx {
                FaceTx::Udp { sock, peer } => {
                    self.udp_peers.remove(&(sock, peer));
                }
                FaceTx::Stream(_) => {
                    if let Some(r) = e.reader {
                        r.abort();
                    }
                }
            }
            self.config_faces.retain(|_, f| *f != id);
        }
    }

    fn output(&mut self, face: FaceId, bytes: Bytes) {
        let Some(e) = self.faces.get(&face) else {
            return;
        };
        match &e.tx {
            FaceTx::Udp { sock, peer } => self.udp[*sock].pending.push((*peer, bytes)),
            FaceTx::Stream(Some(tx)) => {
                if tx.try_send(bytes).is_err() {
                    self.dropped_out += 1;
                }
            }
            FaceTx::Stream(None) => self.dropped_out += 1,
        }
    }

    /// Drains transmits and events until both are empty.
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
            if !c.pending.is_empty() {
                let batch = std::mem::take(&mut c.pending);
                let n = batch.len() as u64;
                if c.out.try_send(batch).is_err() {
                    self.dropped_out += n;
                }
            }
        }
    }

    fn node_event(&mut self, now: Timestamp, ev: NodeEvent) {
        match ev {
            NodeEvent::CreateFace(req) => match req.uri {
                FaceUri::Udp(peer) => {
                    let Some(sock) = self.udp_channel_for(peer) else {
                        self.node.complete_create_face(
                            now,
                            req.token,
                            Err("no UDP channel for this address family".into()),
                        );
                        return;
                    };
                    let params = FaceParams {
                        persistency: persistency_of(req.persistency),
                        local_uri: FaceUri::Udp(self.udp[sock].local).to_string(),
                        mtu: Some(
                            req.mtu
                                .map_or(self.cfg.udp.mtu, |m| m.clamp(64, 8800) as usize),
                        ),
                        ..FaceParams::non_local(req.uri.to_string())
                    };
                    let id = self.node.add_face(now, params);
                    self.udp_peers.insert((sock, peer), id);
                    self.faces.insert(
                        id,
                        self.entry(FaceTx::Udp { sock, peer }, req.uri.clone(), false),
                    );
                    self.node.complete_create_face(now, req.token, Ok(id));
                }
                FaceUri::Tcp(peer) => spawn_connect(
                    peer,
                    ConnectPurpose::Create {
                        token: req.token,
                        persistency: req.persistency,
                    },
                    Duration::ZERO,
                    self.tx.clone(),
                ),
                other => self.node.complete_create_face(
                    now,
                    req.token,
                    Err(format!("unsupported {other}")),
                ),
            },
            NodeEvent::DestroyFace { face } => self.drop_face_transport(face),
        }
    }

    /// SIGHUP: re-read the file; replace static routes and strategies, open
    /// new permanent faces, keep every existing face.
    fn reload(&mut self) {
        let Some(path) = self.config_path.clone() else {
            tracing::info!("SIGHUP without --config: nothing to reload");
            return;
        };
        match Config::from_file(&path) {
            Ok(cfg) => {
                if let Err(e) = self.apply_config_tables(&cfg) {
                    tracing::error!(error = %e, "reload failed part way");
                } else {
                    tracing::info!(path = %path.display(), "configuration reloaded");
                }
                self.cfg.route = cfg.route.clone();
                self.cfg.strategy = cfg.strategy.clone();
                self.cfg.face = cfg.face.clone();
            }
            Err(e) => tracing::error!(error = %e, "reload: keeping the old configuration"),
        }
    }
}

fn persistency_of(p: u64) -> Persistency {
    match p {
        1 => Persistency::OnDemand,
        2 => Persistency::Permanent,
        _ => Persistency::Persistent,
    }
}
