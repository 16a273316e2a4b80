//! UDP ports driven by the engine task itself: no IO tasks and no channels
//! on the datagram path.
//!
//! The engine task waits for any port to turn readable (or, with a backlog,
//! writable), drains each ready socket with `recvmmsg` until `WouldBlock`
//! (bounded per turn), runs the engine, then pushes everything queued out
//! with `sendmmsg`. A burst thus costs one wakeup on one thread instead of a
//! hand-off per batch between a receive task, the engine task and a send
//! task. On Linux, runs of same-size datagrams to one peer leave as one GSO
//! message (`UDP_SEGMENT`) and arrive, from peers that send that way, as one
//! GRO message (`UDP_GRO`) split back into datagrams here: the kernel then
//! routes, loops back and queues one packet per run instead of one per
//! datagram, while every peer still sees ordinary datagrams. The batching
//! itself lives in [`super::mmsg`], shared with the Ethernet faces;
//! elsewhere than Linux a plain `recv_from`/`send_to` loop stands in.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::net::UdpSocket;

/// Datagrams per system call.
pub const BATCH: usize = super::mmsg::BATCH;
/// Largest datagram accepted (NFD's receive buffer); bigger ones are truncated and dropped.
pub const MAX_DATAGRAM: usize = 8800;
/// `recvmmsg` calls per port per turn of the engine loop, so one busy
/// socket cannot starve timers, other ports or stream faces.
const RECV_CALLS_PER_TURN: usize = 4;
/// Datagrams after which a port stops reading for this turn (GRO messages
/// carry up to 64 each), so that one turn's replies fit [`SEND_QUEUE`].
const RECV_DATAGRAMS_PER_TURN: usize = 256;
/// Datagrams a port holds while its socket buffer is full; beyond it
/// transmits are dropped (and counted by the caller).
pub const SEND_QUEUE: usize = 8192;

/// Kernel buffer sizes asked for (the kernel caps them at
/// net.core.{r,w}mem_max).
const SOCKET_BUFFER: usize = 4 << 20;

/// The parameters of an on-demand face for a UDP `peer` first heard on
/// the socket bound at `local`, and whether it is local: loopback peers
/// are applications on this host (with `loopback_is_local`), so that
/// python-ndn can register over UDP to 127.0.0.1 (docs/protocol.md §3.11).
pub fn on_demand_face_params(
    cfg: &crate::config::UdpConfig,
    local: SocketAddr,
    peer: SocketAddr,
) -> (crate::engine::FaceParams, bool) {
    use crate::engine::{FaceParams, FaceScope, Persistency};
    use crate::mgmt::FaceUri;
    let is_local = peer.ip().is_loopback() && cfg.loopback_is_local;
    let params = FaceParams {
        scope: if is_local {
            FaceScope::Local
        } else {
            FaceScope::NonLocal
        },
        persistency: Persistency::OnDemand,
        local_uri: FaceUri::Udp(local).to_string(),
        mtu: Some(cfg.mtu),
        capacity_bps: cfg.default_capacity_bps,
        ..FaceParams::non_local(FaceUri::Udp(peer).to_string())
    };
    (params, is_local)
}

/// The parameters of a permanent UDP face to `peer` (a `[[face]]` or a
/// faces/create), sent from the socket bound at `local`.
pub fn permanent_face_params(
    local: SocketAddr,
    peer: SocketAddr,
    mtu: usize,
    capacity_bps: Option<u64>,
    ingress_capacity_bps: Option<u64>,
) -> crate::engine::FaceParams {
    use crate::mgmt::FaceUri;
    crate::engine::FaceParams {
        persistency: crate::engine::Persistency::Permanent,
        local_uri: FaceUri::Udp(local).to_string(),
        mtu: Some(mtu),
        capacity_bps,
        ingress_capacity_bps,
        ..crate::engine::FaceParams::non_local(FaceUri::Udp(peer).to_string())
    }
}

/// Opens a non-blocking UDP socket with large kernel buffers.
pub fn bind(addr: SocketAddr) -> io::Result<UdpSocket> {
    let s = socket(addr)?;
    let _ = s.set_send_buffer_size(SOCKET_BUFFER);
    UdpSocket::from_std(s.into())
}

/// Opens a receive-only socket on the listening address `local`, connected
/// to `peer`: the kernel then queues that peer's datagrams there, apart
/// from everyone else's on the listening socket (a connected socket is the
/// better match; both set `SO_REUSEADDR`, as NFD's UDP faces do). Replies
/// still leave from the listening socket. Its receive buffer is the
/// listening socket's: a fast legitimate peer (a forwarder's link at
/// tens of Mbit/s of 8 KB Data) must not lose more to a late wake-up
/// than it did there.
pub fn bind_connected(local: SocketAddr, peer: SocketAddr) -> io::Result<UdpSocket> {
    let s = socket(local)?;
    s.connect(&peer.into())?;
    UdpSocket::from_std(s.into())
}

/// A non-blocking UDP socket bound to `addr` (shared with other
/// `SO_REUSEADDR` sockets), with GRO and a large receive buffer.
fn socket(addr: SocketAddr) -> io::Result<socket2::Socket> {
    use socket2::{Domain, Protocol, Socket, Type};
    let s = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    if addr.is_ipv6() {
        s.set_only_v6(true)?;
    }
    s.set_reuse_address(true)?;
    let _ = s.set_recv_buffer_size(SOCKET_BUFFER);
    s.set_nonblocking(true)?;
    enable_gro(&s);
    s.bind(&addr.into())?;
    Ok(s)
}

/// Ready when `sock` has datagrams to read or, if `backlogged`, room to send.
pub fn poll_socket_ready(sock: &UdpSocket, backlogged: bool, cx: &mut Context<'_>) -> Poll<()> {
    if sock.poll_recv_ready(cx).is_ready() {
        return Poll::Ready(());
    }
    if backlogged && sock.poll_send_ready(cx).is_ready() {
        return Poll::Ready(());
    }
    Poll::Pending
}

/// One UDP socket with its receive buffers and its send backlog.
pub struct UdpPort {
    sock: Arc<UdpSocket>,
    rx: RecvBatch,
    tx: SendBatch,
    /// Datagrams waiting for the socket, oldest first.
    pending: Vec<(SocketAddr, Bytes)>,
    /// Senders of datagrams dropped as over [`MAX_DATAGRAM`] since the
    /// last [`UdpPort::take_oversized`].
    oversized: Vec<SocketAddr>,
}

impl UdpPort {
    pub fn new(sock: Arc<UdpSocket>) -> Self {
        UdpPort {
            sock,
            rx: RecvBatch::new(),
            tx: SendBatch::new(),
            pending: Vec::new(),
            oversized: Vec::new(),
        }
    }

    /// Senders of the oversized datagrams dropped since the last call.
    pub fn take_oversized(&mut self) -> std::vec::Drain<'_, SocketAddr> {
        self.oversized.drain(..)
    }

    /// Queues a datagram for the next [`UdpPort::flush`]; `false` (and the
    /// datagram is dropped) when the backlog is full.
    pub fn push(&mut self, to: SocketAddr, pkt: Bytes) -> bool {
        if self.pending.len() >= SEND_QUEUE {
            return false;
        }
        self.pending.push((to, pkt));
        true
    }

    /// Whether datagrams wait for the socket to turn writable.
    pub fn backlogged(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Ready when the socket has datagrams to read, or when it has a
    /// backlog and room to send.
    pub fn poll_ready(&self, cx: &mut Context<'_>) -> Poll<()> {
        poll_socket_ready(&self.sock, self.backlogged(), cx)
    }

    /// The socket, for waiting on it without borrowing the port.
    pub fn socket(&self) -> &Arc<UdpSocket> {
        &self.sock
    }

    /// Reads what the socket holds (at most a few batches) and hands each
    /// datagram to `sink`. Returns how many were read.
    pub fn recv(&mut self, sink: impl FnMut(SocketAddr, Bytes)) -> usize {
        let sock = self.sock.clone();
        self.recv_on(&sock, sink)
    }

    /// Like [`UdpPort::recv`], for another socket of this port's address
    /// (a [`bind_connected`] one), with this port's buffers.
    pub fn recv_on(&mut self, sock: &UdpSocket, mut sink: impl FnMut(SocketAddr, Bytes)) -> usize {
        let mut count = 0;
        for _ in 0..RECV_CALLS_PER_TURN {
            let rx = &mut self.rx;
            let big = &mut self.oversized;
            match sock.try_io(tokio::io::Interest::READABLE, || rx.recv(sock, big)) {
                Ok(pkts) => {
                    let full = pkts.len() >= BATCH;
                    count += pkts.len();
                    for (from, pkt) in pkts {
                        sink(from, pkt);
                    }
                    // A short batch means the queue is (nearly) empty: do not
                    // pay a system call just to learn `WouldBlock`.
                    if !full || count >= RECV_DATAGRAMS_PER_TURN {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => {
                    // ICMP errors surface here (ECONNREFUSED); keep going.
                    tracing::debug!(error = %e, "udp recv");
                    break;
                }
            }
        }
        count
    }

    /// Sends the backlog with as few `sendmmsg` calls as the socket allows;
    /// what does not fit stays queued until the socket turns writable.
    pub fn flush(&mut self) {
        let sock = &self.sock;
        let tx = &mut self.tx;
        send_backlog(&mut self.pending, |items| {
            sock.try_io(tokio::io::Interest::WRITABLE, || tx.send(sock, items))
        });
    }
}

/// Sends `pending` through `send` (one `sendmmsg` of a prefix, returning
/// how many datagrams went), grouped by peer so that GSO takes each peer's
/// run as one message, until the socket would block; what did not go
/// stays queued in order. A datagram the kernel refuses is logged and
/// dropped. The daemon's UDP ports send through tokio's readiness; the
/// sharded prototype's threads on the raw socket, which belongs to no
/// runtime of theirs.
pub(crate) fn send_backlog(
    pending: &mut Vec<(SocketAddr, Bytes)>,
    mut send: impl FnMut(&[(SocketAddr, Bytes)]) -> io::Result<usize>,
) {
    group_by_peer(pending);
    let mut off = 0;
    while off < pending.len() {
        match send(&pending[off..]) {
            Ok(n) => off += n.max(1),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) => {
                tracing::debug!(error = %e, to = %pending[off].0, "udp send");
                off += 1;
            }
        }
    }
    if off == pending.len() {
        pending.clear();
    } else {
        pending.drain(..off);
    }
}

/// Peers tracked when checking whether a backlog is already grouped; with
/// more, the backlog is simply sorted.
const GROUP_CHECK_PEERS: usize = 8;

/// Brings each peer's datagrams together, keeping their order per peer.
/// The engine emits in processing order, so a turn that read Interests from
/// consumers and Data from producers queues them interleaved; a GSO message
/// only takes a run to one peer, so interleaved, every datagram cost its own
/// trip through the kernel's send path (61 % of icnfwd's cycles under the
/// side-by-side load). The order across peers carries no meaning.
fn group_by_peer(pending: &mut [(SocketAddr, Bytes)]) {
    let mut seen = [None::<SocketAddr>; GROUP_CHECK_PEERS];
    let mut n_seen = 0;
    let mut grouped = true;
    for (i, (to, _)) in pending.iter().enumerate() {
        if i > 0 && pending[i - 1].0 == *to {
            continue;
        }
        // A new run: grouped only if this peer had no run before.
        if seen[..n_seen].contains(&Some(*to)) || n_seen == GROUP_CHECK_PEERS {
            grouped = false;
            break;
        }
        seen[n_seen] = Some(*to);
        n_seen += 1;
    }
    if !grouped {
        // Stable: per-peer order is kept.
        pending.sort_by_key(|a| a.0);
    }
}

#[cfg(target_os = "linux")]
mod sys {
    use super::*;
    use crate::daemon::mmsg;
    use std::os::fd::AsRawFd;

    /// Slot size: a whole GRO message (up to 64 KiB of datagrams).
    const GRO_SLOT: usize = 65536;

    /// Asks the kernel to hand over runs of same-size datagrams from one
    /// peer (typically one GSO send) as one message (`UDP_GRO`): one receive
    /// instead of one per datagram. Best effort.
    pub fn enable_gro(sock: &socket2::Socket) {
        mmsg::enable_gro(sock.as_raw_fd());
    }

    /// `recvmmsg` buffers: one slot per message, large enough for a GRO
    /// message; datagrams over [`MAX_DATAGRAM`] are dropped.
    pub struct RecvBatch(mmsg::RecvBatch<libc::sockaddr_storage>);

    impl RecvBatch {
        pub fn new() -> Self {
            RecvBatch(mmsg::RecvBatch::new(GRO_SLOT))
        }

        /// One `recvmmsg` call; returns the datagrams received and adds
        /// the senders of oversized ones to `oversized`.
        pub fn recv(
            &mut self,
            sock: &UdpSocket,
            oversized: &mut Vec<SocketAddr>,
        ) -> io::Result<Vec<(SocketAddr, Bytes)>> {
            self.0.recv(sock.as_raw_fd(), |d| {
                // SAFETY: the kernel filled `namelen` bytes of this storage.
                let addr = unsafe { socket2::SockAddr::new(*d.addr, d.namelen) }.as_socket()?;
                let datagram = d.segment.unwrap_or(d.payload.len());
                if d.truncated || datagram > MAX_DATAGRAM {
                    oversized.push(addr);
                    return None;
                }
                if d.payload.is_empty() {
                    return None;
                }
                Some((addr, d.payload.len()))
            })
        }
    }

    /// `sendmmsg` with GSO runs, see [`mmsg::UdpSendBatch`].
    pub struct SendBatch(mmsg::UdpSendBatch);

    impl SendBatch {
        pub fn new() -> Self {
            SendBatch(mmsg::UdpSendBatch::new())
        }

        /// One `sendmmsg` call for up to [`BATCH`] messages; returns how many
        /// of `items` went out.
        pub fn send(
            &mut self,
            sock: &UdpSocket,
            items: &[(SocketAddr, Bytes)],
        ) -> io::Result<usize> {
            self.0.send(sock.as_raw_fd(), items)
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod sys {
    use super::*;

    pub struct RecvBatch {
        buf: Vec<u8>,
    }

    impl RecvBatch {
        pub fn new() -> Self {
            RecvBatch {
                buf: vec![0u8; MAX_DATAGRAM],
            }
        }

        pub fn recv(
            &mut self,
            sock: &UdpSocket,
            _oversized: &mut Vec<SocketAddr>,
        ) -> io::Result<Vec<(SocketAddr, Bytes)>> {
            let mut out = Vec::new();
            while out.len() < BATCH {
                match sock.try_recv_from(&mut self.buf) {
                    Ok((n, from)) => out.push((from, Bytes::copy_from_slice(&self.buf[..n]))),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock && !out.is_empty() => break,
                    Err(e) => return Err(e),
                }
            }
            Ok(out)
        }
    }

    pub fn enable_gro(_sock: &socket2::Socket) {}

    pub struct SendBatch;

    impl SendBatch {
        pub fn new() -> Self {
            SendBatch
        }

        pub fn send(
            &mut self,
            sock: &UdpSocket,
            items: &[(SocketAddr, Bytes)],
        ) -> io::Result<usize> {
            sock.try_send_to(&items[0].1, items[0].0).map(|_| 1)
        }
    }
}

use sys::{enable_gro, RecvBatch, SendBatch};

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn batched_roundtrip_on_loopback() {
        let a = Arc::new(bind("127.0.0.1:0".parse().unwrap()).unwrap());
        let b = Arc::new(bind("127.0.0.1:0".parse().unwrap()).unwrap());
        let a_addr = a.local_addr().unwrap();
        let b_addr = b.local_addr().unwrap();
        let mut pa = UdpPort::new(a);
        let mut pb = UdpPort::new(b);
        for i in 0..100u8 {
            assert!(pa.push(b_addr, Bytes::from(vec![i; 100 + i as usize])));
        }
        // Readiness is learnt from the reactor: the first flush may find
        // none yet and keep the backlog until the socket reports writable.
        pa.flush();
        while pa.backlogged() {
            tokio::time::timeout(
                std::time::Duration::from_secs(5),
                std::future::poll_fn(|cx| pa.poll_ready(cx)),
            )
            .await
            .unwrap();
            pa.flush();
        }
        let mut got = Vec::new();
        while got.len() < 100 {
            tokio::time::timeout(
                std::time::Duration::from_secs(5),
                std::future::poll_fn(|cx| pb.poll_ready(cx)),
            )
            .await
            .unwrap();
            pb.recv(|from, pkt| {
                assert_eq!(from, a_addr);
                got.push(pkt);
            });
        }
        for (i, p) in got.iter().enumerate() {
            assert_eq!(p.len(), 100 + i);
            assert!(p.iter().all(|&x| x == i as u8));
        }
    }

    /// Runs of equal-size datagrams (GSO messages on Linux), a shorter
    /// tail, oversize datagrams and alternating peers all arrive as the
    /// same separate datagrams, in order per peer.
    #[tokio::test]
    async fn equal_size_runs_arrive_as_separate_datagrams() {
        let a = Arc::new(bind("127.0.0.1:0".parse().unwrap()).unwrap());
        let b = Arc::new(bind("127.0.0.1:0".parse().unwrap()).unwrap());
        let c = Arc::new(bind("127.0.0.1:0".parse().unwrap()).unwrap());
        let (b_addr, c_addr) = (b.local_addr().unwrap(), c.local_addr().unwrap());
        let mut pa = UdpPort::new(a);
        let mut want_b = Vec::new();
        let mut want_c = Vec::new();
        let mut n = 0u8;
        let mut item = |to: SocketAddr, len: usize, pa: &mut UdpPort| {
            n = n.wrapping_add(1);
            let pkt = Bytes::from(vec![n; len]);
            if to == b_addr {
                want_b.push(pkt.clone());
            } else {
                want_c.push(pkt.clone());
            }
            assert!(pa.push(to, pkt));
        };
        for _ in 0..150 {
            item(b_addr, 300, &mut pa);
        }
        item(b_addr, 120, &mut pa);
        item(b_addr, 300, &mut pa);
        for _ in 0..5 {
            item(c_addr, 2000, &mut pa);
        }
        for i in 0..40 {
            item(if i % 2 == 0 { b_addr } else { c_addr }, 64, &mut pa);
        }
        pa.flush();
        while pa.backlogged() {
            std::future::poll_fn(|cx| pa.poll_ready(cx)).await;
            pa.flush();
        }
        for (sock, want) in [(b, want_b), (c, want_c)] {
            let mut port = UdpPort::new(sock);
            let mut got = Vec::new();
            while got.len() < want.len() {
                tokio::time::timeout(
                    std::time::Duration::from_secs(5),
                    std::future::poll_fn(|cx| port.poll_ready(cx)),
                )
                .await
                .unwrap();
                port.recv(|_, pkt| got.push(pkt));
            }
            assert_eq!(got, want);
        }
    }

    #[test]
    fn interleaved_backlog_is_grouped_per_peer_in_order() {
        let a: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let b: SocketAddr = "127.0.0.1:2".parse().unwrap();
        let mut v: Vec<(SocketAddr, Bytes)> = (0..10u8)
            .map(|i| (if i % 2 == 0 { b } else { a }, Bytes::from(vec![i])))
            .collect();
        group_by_peer(&mut v);
        let runs = v.windows(2).filter(|w| w[0].0 != w[1].0).count();
        assert_eq!(runs, 1, "one run per peer");
        for peer in [a, b] {
            let seq: Vec<u8> = v.iter().filter(|x| x.0 == peer).map(|x| x.1[0]).collect();
            assert!(seq.windows(2).all(|w| w[0] < w[1]), "order kept for {peer}");
        }
    }

    #[test]
    fn backlog_is_bounded() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _g = rt.enter();
        let s = Arc::new(bind("127.0.0.1:0".parse().unwrap()).unwrap());
        let to = s.local_addr().unwrap();
        let mut p = UdpPort::new(s);
        for _ in 0..SEND_QUEUE {
            assert!(p.push(to, Bytes::from_static(b"x")));
        }
        assert!(!p.push(to, Bytes::from_static(b"x")));
    }
}
