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
        let mut off = 0;
        while off < self.pending.len() {
            let sock = &self.sock;
            let tx = &mut self.tx;
            let items = &self.pending[off..];
            match sock.try_io(tokio::io::Interest::WRITABLE, || tx.send(sock, items)) {
                Ok(n) => off += n.max(1),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => {
                    tracing::debug!(error = %e, to = %items[0].0, "udp send");
                    off += 1;
                }
            }
        }
        if off == self.pending.len() {
            self.pending.clear();
        } else {
            self.pending.drain(..off);
        }
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
        let on: libc::c_int = 1;
        // SAFETY: a valid fd and an int option of the stated size.
        unsafe {
            libc::setsockopt(
                sock.as_raw_fd(),
                libc::SOL_UDP,
                mmsg::UDP_GRO,
                (&on as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
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

    /// `UDP_SEGMENT` from linux/udp.h (not in every libc build).
    const UDP_SEGMENT: libc::c_int = 103;
    /// Segments per GSO message (the kernel's UDP_MAX_SEGMENTS is 64 or more).
    const GSO_MAX_SEGMENTS: usize = 64;
    /// Largest segment sent with GSO: fits the path MTU of any IPv6 link
    /// (1280 - 48), because GSO refuses segments that would need IP
    /// fragmentation. Larger datagrams go one per message.
    const GSO_MAX_SEGMENT_BYTES: usize = 1232;
    /// Payload bytes per GSO message (one IP packet before segmentation).
    const GSO_MAX_BYTES: usize = 60_000;

    /// Control buffer holding one `UDP_SEGMENT` cmsg, aligned for `cmsghdr`.
    #[derive(Clone, Copy)]
    #[repr(C, align(8))]
    struct SegmentCmsg([u8; 32]);

    /// `sendmmsg` buffers, kept across calls. Runs of datagrams to the same
    /// peer with the same length go out as one GSO message (`UDP_SEGMENT`):
    /// the kernel builds, routes and loops back one packet instead of one
    /// per datagram, and the receiver still sees separate datagrams.
    pub struct SendBatch {
        addrs: Vec<socket2::SockAddr>,
        iovs: Vec<libc::iovec>,
        hdrs: Vec<libc::mmsghdr>,
        /// Datagrams and segment size per message.
        groups: Vec<(usize, usize)>,
        cmsgs: Vec<SegmentCmsg>,
        /// Cleared for good when the kernel refuses a GSO message.
        gso: bool,
    }

    // SAFETY: the raw pointers in `iovs`/`hdrs` are rebuilt before every
    // call and only used during it.
    unsafe impl Send for SendBatch {}

    impl SendBatch {
        pub fn new() -> Self {
            SendBatch {
                addrs: Vec::with_capacity(BATCH),
                iovs: Vec::new(),
                hdrs: Vec::with_capacity(BATCH),
                groups: Vec::with_capacity(BATCH),
                cmsgs: vec![SegmentCmsg([0; 32]); BATCH],
                gso: true,
            }
        }

        /// One `sendmmsg` call for up to [`BATCH`] messages; returns how many
        /// of `items` went out.
        pub fn send(
            &mut self,
            sock: &UdpSocket,
            items: &[(SocketAddr, Bytes)],
        ) -> io::Result<usize> {
            match self.send_once(sock, items) {
                Err(e)
                    if self.groups.first().is_some_and(|g| g.0 > 1)
                        && matches!(
                            e.raw_os_error(),
                            Some(libc::EINVAL | libc::EIO | libc::EOPNOTSUPP | libc::EMSGSIZE)
                        ) =>
                {
                    // How the kernel says GSO is unsupported on this path
                    // (no checksum offload, IPsec, too small an MTU). Fall
                    // back to one datagram per message for good; other
                    // errors (unreachable peer, ...) are the datagram's.
                    tracing::debug!(error = %e, "udp: GSO refused, sending datagrams singly");
                    self.gso = false;
                    self.send_once(sock, items)
                }
                r => r,
            }
        }

        fn send_once(
            &mut self,
            sock: &UdpSocket,
            items: &[(SocketAddr, Bytes)],
        ) -> io::Result<usize> {
            self.addrs.clear();
            self.iovs.clear();
            self.hdrs.clear();
            self.groups.clear();
            let mut i = 0;
            while i < items.len() && self.groups.len() < BATCH {
                let (to, first) = &items[i];
                let seg = first.len();
                let mut j = i + 1;
                if self.gso && seg > 0 && seg <= GSO_MAX_SEGMENT_BYTES {
                    let mut total = seg;
                    while j < items.len() && j - i < GSO_MAX_SEGMENTS {
                        let (t, b) = &items[j];
                        if t != to
                            || b.is_empty()
                            || b.len() > seg
                            || total + b.len() > GSO_MAX_BYTES
                        {
                            break;
                        }
                        total += b.len();
                        j += 1;
                        // Only the last segment may be shorter.
                        if b.len() < seg {
                            break;
                        }
                    }
                }
                for (_, b) in &items[i..j] {
                    self.iovs.push(libc::iovec {
                        iov_base: b.as_ptr() as *mut libc::c_void,
                        iov_len: b.len(),
                    });
                }
                self.addrs.push(socket2::SockAddr::from(*to));
                self.groups.push((j - i, seg));
                i = j;
            }
            // Pointers are taken only now that no vector grows any more.
            let mut iov_off = 0;
            for (g, &(count, seg)) in self.groups.iter().enumerate() {
                // SAFETY: all-zero is a valid mmsghdr.
                let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
                h.msg_hdr.msg_name = self.addrs[g].as_ptr() as *mut libc::c_void;
                h.msg_hdr.msg_namelen = self.addrs[g].len();
                h.msg_hdr.msg_iov = self.iovs[iov_off..].as_mut_ptr();
                h.msg_hdr.msg_iovlen = count as _;
                iov_off += count;
                if count > 1 {
                    let buf = &mut self.cmsgs[g];
                    h.msg_hdr.msg_control = buf.0.as_mut_ptr().cast();
                    // SAFETY: CMSG_* only compute sizes and offsets; the
                    // buffer holds CMSG_SPACE(2) bytes (checked below) and
                    // is aligned for cmsghdr.
                    unsafe {
                        let space = libc::CMSG_SPACE(2) as usize;
                        debug_assert!(space <= buf.0.len());
                        h.msg_hdr.msg_controllen = space as _;
                        let c = libc::CMSG_FIRSTHDR(&h.msg_hdr);
                        (*c).cmsg_level = libc::SOL_UDP;
                        (*c).cmsg_type = UDP_SEGMENT;
                        (*c).cmsg_len = libc::CMSG_LEN(2) as _;
                        std::ptr::write_unaligned(libc::CMSG_DATA(c).cast::<u16>(), seg as u16);
                    }
                }
                self.hdrs.push(h);
            }
            // SAFETY: every header points into `addrs`, `iovs`, `cmsgs` and
            // the `Bytes` of `items`, all alive and unchanged until the call
            // returns; the kernel only reads them.
            let n = unsafe {
                libc::sendmmsg(
                    sock.as_raw_fd(),
                    self.hdrs.as_mut_ptr(),
                    self.hdrs.len() as libc::c_uint,
                    libc::MSG_DONTWAIT,
                )
            };
            if n < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(self.groups[..n as usize].iter().map(|g| g.0).sum())
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
