//! Faces of every transport: opening them (configuration, peers, accepted
//! streams, faces/create), mapping received traffic to them, closing them.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use cc_core::Timestamp;
use tokio::net::UdpSocket;
use tokio::sync::mpsc;

use super::{EthChannel, FaceTx, Shell, UdpChannel, OUT_QUEUE, RECONNECT_DELAY};
use crate::daemon::ethernet::{self, EthSocket, Mac, NDN_MULTICAST_MAC};
use crate::daemon::listen::spawn_connect;
use crate::daemon::{stream, udp, AnyStream, ConnectPurpose};
use crate::engine::{FaceId, FaceParams, FaceScope, LinkType, Persistency};
use crate::mgmt::{FaceCreateRequest, FaceUri};

/// Smallest MTU accepted from faces/create or the configuration.
const MIN_MTU: usize = 64;

impl Shell {
    pub(super) fn add_udp_channel(
        &mut self,
        sock: Arc<UdpSocket>,
        local: SocketAddr,
        multicast_face: Option<FaceId>,
    ) -> usize {
        let index = self.udp.len();
        self.udp.push(UdpChannel {
            local,
            port: udp::UdpPort::new(sock),
            multicast_face,
            seen_drops: 0,
        });
        index
    }

    pub(super) fn add_multicast_face(&mut self, sock: Arc<UdpSocket>, iface: std::net::Ipv4Addr) {
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
        let tx = FaceTx::Udp {
            sock: index,
            peer: group,
        };
        self.faces
            .insert(id, self.entry(tx, FaceUri::Udp(group), false));
        self.group_faces
            .entry(FaceUri::Udp(group))
            .or_default()
            .push(id);
        tracing::info!(%id, %iface, %group, "UDP multicast face");
    }

    /// The multicast face of an AF_PACKET socket and its IO tasks.
    pub(super) fn add_ethernet(&mut self, sock: Arc<EthSocket>, mtu: Option<usize>) {
        let mtu = mtu
            .unwrap_or(sock.mtu)
            .clamp(MIN_MTU, sock.mtu.max(MIN_MTU));
        let dev = FaceUri::Dev(sock.ifname.clone());
        let params = FaceParams {
            link_type: LinkType::MultiAccess,
            persistency: Persistency::Permanent,
            local_uri: dev.to_string(),
            mtu: Some(mtu),
            ..FaceParams::non_local(FaceUri::Ether(NDN_MULTICAST_MAC).to_string())
        };
        let now = self.now();
        let id = self.node.add_face(now, params);
        let chan = self.eth.len();
        let (otx, orx) = mpsc::channel(OUT_QUEUE);
        tokio::spawn(ethernet::send_loop(sock.clone(), orx));
        tokio::spawn(ethernet::recv_loop(sock.clone(), chan, self.tx.clone()));
        tracing::info!(
            %id,
            iface = %sock.ifname,
            mac = %ethernet::mac_string(&sock.mac),
            mtu,
            "Ethernet multicast face"
        );
        self.eth.push(EthChannel {
            sock,
            mtu,
            out: otx,
            pending: Vec::new(),
            multicast_face: id,
        });
        let tx = FaceTx::Eth {
            chan,
            peer: NDN_MULTICAST_MAC,
        };
        self.faces
            .insert(id, self.entry(tx, FaceUri::Ether(NDN_MULTICAST_MAC), false));
        self.group_faces.entry(dev).or_default().push(id);
    }

    /// A unicast Ethernet face to `peer` on channel `chan`.
    fn add_eth_unicast(
        &mut self,
        now: Timestamp,
        chan: usize,
        peer: Mac,
        persistency: Persistency,
    ) -> FaceId {
        let c = &self.eth[chan];
        let params = FaceParams {
            persistency,
            local_uri: FaceUri::Dev(c.sock.ifname.clone()).to_string(),
            mtu: Some(c.mtu),
            ..FaceParams::non_local(FaceUri::Ether(peer).to_string())
        };
        let id = self.node.add_face(now, params);
        self.eth_peers.insert((chan, peer), id);
        let on_demand = persistency == Persistency::OnDemand;
        if on_demand {
            self.booked_on_demand(None);
        }
        self.faces.insert(
            id,
            self.entry(FaceTx::Eth { chan, peer }, FaceUri::Ether(peer), on_demand),
        );
        id
    }

    /// The unicast face of an Ethernet peer; on-demand on first contact.
    pub(super) fn eth_face(&mut self, now: Timestamp, chan: usize, from: Mac) -> Option<FaceId> {
        if chan >= self.eth.len() {
            return None;
        }
        if let Some(f) = self.eth_peers.get(&(chan, from)) {
            return Some(*f);
        }
        if !self.admit_on_demand(now, None, false) {
            return None;
        }
        let id = self.add_eth_unicast(now, chan, from, Persistency::OnDemand);
        tracing::debug!(%id, peer = %ethernet::mac_string(&from), "on-demand Ethernet face");
        Some(id)
    }

    /// Opens a `[[face]]`: `capacity_bps` paces it, `ingress_capacity_bps`
    /// (None: the same) is the capacity of Data arriving over it.
    pub(super) fn open_permanent(
        &mut self,
        uri: &FaceUri,
        capacity_bps: Option<u64>,
        ingress_capacity_bps: Option<u64>,
        mtu: Option<usize>,
    ) -> anyhow::Result<FaceId> {
        let now = self.now();
        match uri {
            FaceUri::Udp(peer) => {
                let sock = self
                    .udp_channel_for(*peer)
                    .ok_or_else(|| anyhow::anyhow!("no [udp] listen address for {uri}"))?;
                let params = udp::permanent_face_params(
                    self.udp[sock].local,
                    *peer,
                    mtu.unwrap_or(self.cfg.udp.mtu),
                    capacity_bps,
                    ingress_capacity_bps,
                );
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
                    ingress_capacity_bps,
                    ..FaceParams::non_local(uri.to_string())
                };
                let id = self.node.add_face(now, params);
                self.faces
                    .insert(id, self.entry(FaceTx::Stream(None), uri.clone(), false));
                self.connecting.insert(id);
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
    pub(super) fn udp_channel_for(&self, peer: SocketAddr) -> Option<usize> {
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

    /// The face of a UDP peer; creates an on-demand face on first contact.
    pub(super) fn udp_face(
        &mut self,
        now: Timestamp,
        sock: usize,
        from: SocketAddr,
    ) -> Option<FaceId> {
        if let Some(f) = self.udp[sock].multicast_face {
            return Some(f);
        }
        if let Some(f) = self.udp_peers.get(&(sock, from)) {
            return Some(*f);
        }
        let (params, local) = udp::on_demand_face_params(&self.cfg.udp, self.udp[sock].local, from);
        if !self.admit_on_demand(now, Some(from.ip()), local) {
            return None;
        }
        let id = self.node.add_face(now, params);
        tracing::debug!(%id, %from, "on-demand UDP face");
        self.udp_peers.insert((sock, from), id);
        self.booked_on_demand(Some(from.ip()));
        self.faces.insert(
            id,
            self.entry(FaceTx::Udp { sock, peer: from }, FaceUri::Udp(from), true),
        );
        Some(id)
    }

    pub(super) fn accepted(&mut self, now: Timestamp, s: AnyStream) {
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
                stream::size_unix_buffers(&u);
                let (params, uri) = stream::unix_face_params(&self.cfg.unix.path, &u);
                let id = self.node.add_face(now, params);
                tracing::debug!(%id, "Unix face");
                let (r, w) = u.into_split();
                self.attach_stream(id, uri, true, r, w);
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

    pub(super) fn connected(
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
                self.connecting.remove(&id);
                if !self.faces.contains_key(&id) {
                    return;
                }
                tracing::info!(%id, "permanent TCP face connected");
                let uri = self.faces[&id].uri.clone();
                let (r, w) = t.into_split();
                self.attach_stream(id, uri, false, r, w);
            }
            (ConnectPurpose::Permanent(id), Err(e)) => {
                self.connecting.remove(&id);
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

    pub(super) fn stream_closed(&mut self, now: Timestamp, face: FaceId) {
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

    /// Closes on-demand datagram faces (UDP, Ethernet unicast) that have
    /// been silent for the idle timeout.
    pub(super) fn sweep_idle(&mut self) {
        let idle = Duration::from_secs(self.cfg.udp.idle_timeout_s);
        let now = self.now();
        let stale: Vec<FaceId> = self
            .faces
            .iter()
            .filter(|(_, e)| {
                e.on_demand
                    && matches!(e.tx, FaceTx::Udp { .. } | FaceTx::Eth { .. })
                    && e.last_rx.elapsed() >= idle
            })
            .map(|(id, _)| *id)
            .collect();
        for id in stale {
            tracing::debug!(%id, "closing idle face");
            self.close_on_demand(now, id);
        }
    }

    pub(super) fn drop_face_transport(&mut self, id: FaceId) {
        self.connecting.remove(&id);
        self.unisolate(id);
        if let Some(e) = self.faces.remove(&id) {
            match e.tx {
                FaceTx::Udp { peer, .. } if e.on_demand => self.released_on_demand(Some(peer.ip())),
                FaceTx::Eth { .. } if e.on_demand => self.released_on_demand(None),
                _ => {}
            }
            match e.tx {
                FaceTx::Udp { sock, peer } => {
                    self.udp_peers.remove(&(sock, peer));
                }
                FaceTx::Eth { chan, peer } => {
                    self.eth_peers.remove(&(chan, peer));
                }
                FaceTx::Stream(_) => {
                    if let Some(r) = e.reader {
                        r.abort();
                    }
                }
            }
            self.config_faces.retain(|_, f| *f != id);
            for ids in self.group_faces.values_mut() {
                ids.retain(|f| *f != id);
            }
        }
    }

    /// faces/create: UDP faces are ready at once, TCP after the connect,
    /// Ethernet unicast on the interface named by `dev://` (or the only one).
    pub(super) fn create_face(&mut self, now: Timestamp, req: FaceCreateRequest) {
        let result = match &req.uri {
            FaceUri::Udp(peer) => self.create_udp(now, &req, *peer),
            FaceUri::Ether(peer) => self.create_eth(now, &req, *peer),
            FaceUri::Tcp(peer) => {
                let purpose = ConnectPurpose::Create {
                    token: req.token,
                    persistency: req.persistency,
                };
                spawn_connect(*peer, purpose, Duration::ZERO, self.tx.clone());
                return;
            }
            other => Err(format!("unsupported {other}")),
        };
        self.node.complete_create_face(now, req.token, result);
    }

    fn create_udp(
        &mut self,
        now: Timestamp,
        req: &FaceCreateRequest,
        peer: SocketAddr,
    ) -> Result<FaceId, String> {
        let sock = self
            .udp_channel_for(peer)
            .ok_or("no UDP channel for this address family")?;
        let mtu = req.mtu.map_or(self.cfg.udp.mtu, |m| {
            (m as usize).clamp(MIN_MTU, udp::MAX_DATAGRAM)
        });
        let params = FaceParams {
            persistency: persistency_of(req.persistency),
            local_uri: FaceUri::Udp(self.udp[sock].local).to_string(),
            mtu: Some(mtu),
            ..FaceParams::non_local(req.uri.to_string())
        };
        let id = self.node.add_face(now, params);
        self.udp_peers.insert((sock, peer), id);
        self.faces.insert(
            id,
            self.entry(FaceTx::Udp { sock, peer }, req.uri.clone(), false),
        );
        Ok(id)
    }

    fn create_eth(
        &mut self,
        now: Timestamp,
        req: &FaceCreateRequest,
        peer: Mac,
    ) -> Result<FaceId, String> {
        if ethernet::is_group(&peer) {
            return Err("the Ethernet multicast face exists per [[ethernet]] interface".into());
        }
        let chan = match &req.local_uri {
            Some(FaceUri::Dev(name)) => self
                .eth
                .iter()
                .position(|c| c.sock.ifname == *name)
                .ok_or_else(|| format!("no [[ethernet]] face on {name}"))?,
            Some(other) => return Err(format!("LocalUri {other} is not dev://IFNAME")),
            None if self.eth.len() == 1 => 0,
            None => return Err("LocalUri dev://IFNAME is required".into()),
        };
        if let Some(id) = self.eth_peers.get(&(chan, peer)) {
            return Ok(*id);
        }
        Ok(self.add_eth_unicast(now, chan, peer, persistency_of(req.persistency)))
    }
}

/// NFD FacePersistency number to the engine's enum.
pub(super) fn persistency_of(p: u64) -> Persistency {
    match p {
        1 => Persistency::OnDemand,
        2 => Persistency::Permanent,
        _ => Persistency::Persistent,
    }
}
