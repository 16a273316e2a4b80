//! Batched UDP IO: `recvmmsg`/`sendmmsg` on the tokio socket's fd (Linux),
//! with a plain `recv_from`/`send_to` loop elsewhere.
//!
//! One receive batch costs one heap allocation: the datagrams are copied
//! back to back into a fresh buffer and handed on as `Bytes` slices of it.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use tokio::net::UdpSocket;
use tokio::sync::mpsc;

use super::{Inbound, InboundTx};

/// Datagrams per system call.
pub const BATCH: usize = 32;
/// Largest datagram accepted (NFD's receive buffer); bigger ones are truncated and dropped.
pub const MAX_DATAGRAM: usize = 8800;

/// Opens a non-blocking UDP socket with large kernel buffers.
pub fn bind(addr: SocketAddr) -> io::Result<UdpSocket> {
    use socket2::{Domain, Protocol, Socket, Type};
    let s = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    if addr.is_ipv6() {
        s.set_only_v6(true)?;
    }
    s.set_reuse_address(true)?;
    // Best effort: the kernel caps these at net.core.{r,w}mem_max.
    let _ = s.set_recv_buffer_size(4 << 20);
    let _ = s.set_send_buffer_size(4 << 20);
    s.set_nonblocking(true)?;
    s.bind(&addr.into())?;
    UdpSocket::from_std(s.into())
}

/// Receives batches from `sock` and forwards them to the engine task.
pub async fn recv_loop(sock: Arc<UdpSocket>, index: usize, tx: InboundTx) {
    let mut batch = RecvBatch::new();
    loop {
        if sock.readable().await.is_err() {
            return;
        }
        loop {
            match sock.try_io(tokio::io::Interest::READABLE, || batch.recv(&sock)) {
                Ok(pkts) if !pkts.is_empty() => {
                    let msgs = pkts
                        .into_iter()
                        .map(|(from, pkt)| Inbound::Udp {
                            sock: index,
                            from,
                            pkt,
                        })
                        .collect();
                    if tx.send(msgs).await.is_err() {
                        return;
                    }
                }
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => {
                    // ICMP errors surface here (ECONNREFUSED); keep going.
                    tracing::debug!(error = %e, "udp recv");
                    break;
                }
            }
        }
    }
}

/// Sends batches handed over by the engine task.
pub async fn send_loop(sock: Arc<UdpSocket>, mut rx: mpsc::Receiver<Vec<(SocketAddr, Bytes)>>) {
    while let Some(mut batch) = rx.recv().await {
        // Coalesce whatever else is already waiting.
        while batch.len() < BATCH * 4 {
            match rx.try_recv() {
                Ok(more) => batch.extend(more),
                Err(_) => break,
            }
        }
        let mut off = 0;
        while off < batch.len() {
            if sock.writable().await.is_err() {
                return;
            }
            match sock.try_io(tokio::io::Interest::WRITABLE, || {
                send_batch(&sock, &batch[off..])
            }) {
                Ok(n) => off += n.max(1),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => {
                    tracing::debug!(error = %e, to = %batch[off].0, "udp send");
                    off += 1;
                }
            }
        }
    }
}

#[cfg(target_os = "linux")]
mod sys {
    use super::*;
    use std::os::fd::AsRawFd;

    pub struct RecvBatch {
        bufs: Vec<u8>,
        addrs: Vec<libc::sockaddr_storage>,
        iovs: Vec<libc::iovec>,
        hdrs: Vec<libc::mmsghdr>,
    }

    // SAFETY: the raw pointers in `iovs`/`hdrs` only ever point into this
    // struct's own heap buffers and are rebuilt before every call, so moving
    // the batch to another thread is sound.
    unsafe impl Send for RecvBatch {}

    impl RecvBatch {
        pub fn new() -> Self {
            // SAFETY: all-zero is a valid value for these plain C structs.
            let zeroed_addr: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
            let zeroed_hdr: libc::mmsghdr = unsafe { std::mem::zeroed() };
            RecvBatch {
                bufs: vec![0u8; BATCH * MAX_DATAGRAM],
                addrs: vec![zeroed_addr; BATCH],
                iovs: Vec::with_capacity(BATCH),
                hdrs: vec![zeroed_hdr; BATCH],
            }
        }

        /// One `recvmmsg` call; returns the datagrams received.
        pub fn recv(&mut self, sock: &UdpSocket) -> io::Result<Vec<(SocketAddr, Bytes)>> {
            self.iovs.clear();
            for i in 0..BATCH {
                self.iovs.push(libc::iovec {
                    iov_base: self.bufs[i * MAX_DATAGRAM..].as_mut_ptr().cast(),
                    iov_len: MAX_DATAGRAM,
                });
            }
            for i in 0..BATCH {
                let h = &mut self.hdrs[i];
                h.msg_hdr.msg_name = (&mut self.addrs[i] as *mut libc::sockaddr_storage).cast();
                h.msg_hdr.msg_namelen =
                    std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
                h.msg_hdr.msg_iov = &mut self.iovs[i];
                h.msg_hdr.msg_iovlen = 1;
                h.msg_hdr.msg_control = std::ptr::null_mut();
                h.msg_hdr.msg_controllen = 0;
                h.msg_hdr.msg_flags = 0;
                h.msg_len = 0;
            }
            // SAFETY: every header points at live buffers of the stated sizes
            // owned by `self`, which outlives the call.
            let n = unsafe {
                libc::recvmmsg(
                    sock.as_raw_fd(),
                    self.hdrs.as_mut_ptr(),
                    BATCH as libc::c_uint,
                    libc::MSG_DONTWAIT,
                    std::ptr::null_mut(),
                )
            };
            if n < 0 {
                return Err(io::Error::last_os_error());
            }
            let n = n as usize;
            let total: usize = self.hdrs[..n].iter().map(|h| h.msg_len as usize).sum();
            let mut out_buf = BytesMut::with_capacity(total);
            let mut spans = Vec::with_capacity(n);
            for i in 0..n {
                let h = &self.hdrs[i];
                let len = h.msg_len as usize;
                if h.msg_hdr.msg_flags & libc::MSG_TRUNC != 0 || len == 0 {
                    continue;
                }
                // SAFETY: the kernel filled `msg_namelen` bytes of this storage.
                let addr = unsafe { socket2::SockAddr::new(self.addrs[i], h.msg_hdr.msg_namelen) };
                let Some(from) = addr.as_socket() else {
                    continue;
                };
                let start = out_buf.len();
                out_buf.extend_from_slice(&self.bufs[i * MAX_DATAGRAM..i * MAX_DATAGRAM + len]);
                spans.push((from, start, len));
            }
            let frozen = out_buf.freeze();
            Ok(spans
                .into_iter()
                .map(|(from, s, l)| (from, frozen.slice(s..s + l)))
                .collect())
        }
    }

    /// One `sendmmsg` call for up to BATCH datagrams; returns how many went out.
    pub fn send_batch(sock: &UdpSocket, items: &[(SocketAddr, Bytes)]) -> io::Result<usize> {
        let items = &items[..items.len().min(BATCH)];
        let addrs: Vec<socket2::SockAddr> = items.iter().map(|(a, _)| (*a).into()).collect();
        let mut iovs: Vec<libc::iovec> = items
            .iter()
            .map(|(_, b)| libc::iovec {
                iov_base: b.as_ptr() as *mut libc::c_void,
                iov_len: b.len(),
            })
            .collect();
        // SAFETY: zeroed mmsghdr is valid; pointers below stay alive for the call.
        let mut hdrs: Vec<libc::mmsghdr> = (0..items.len())
            .map(|_| unsafe { std::mem::zeroed() })
            .collect();
        for (i, h) in hdrs.iter_mut().enumerate() {
            h.msg_hdr.msg_name = addrs[i].as_ptr() as *mut libc::c_void;
            h.msg_hdr.msg_namelen = addrs[i].len();
            h.msg_hdr.msg_iov = &mut iovs[i];
            h.msg_hdr.msg_iovlen = 1;
        }
        // SAFETY: headers reference `addrs`, `iovs` and the `Bytes` in `items`,
        // all alive until the call returns; the kernel only reads them.
        let n = unsafe {
            libc::sendmmsg(
                sock.as_raw_fd(),
                hdrs.as_mut_ptr(),
                hdrs.len() as libc::c_uint,
                libc::MSG_DONTWAIT,
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(n as usize)
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

        pub fn recv(&mut self, sock: &UdpSocket) -> io::Result<Vec<(SocketAddr, Bytes)>> {
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

    pub fn send_batch(sock: &UdpSocket, items: &[(SocketAddr, Bytes)]) -> io::Result<usize> {
        sock.try_send_to(&items[0].1, items[0].0).map(|_| 1)
    }
}

use sys::{send_batch, RecvBatch};

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn batched_roundtrip_on_loopback() {
        let a = Arc::new(bind("127.0.0.1:0".parse().unwrap()).unwrap());
        let b = Arc::new(bind("127.0.0.1:0".parse().unwrap()).unwrap());
        let b_addr = b.local_addr().unwrap();
        let items: Vec<(SocketAddr, Bytes)> = (0..40u8)
            .map(|i| (b_addr, Bytes::from(vec![i; 100 + i as usize])))
            .collect();
        let (stx, srx) = mpsc::channel(4);
        tokio::spawn(send_loop(a.clone(), srx));
        stx.send(items).await.unwrap();
        let (itx, mut irx) = mpsc::channel(16);
        tokio::spawn(recv_loop(b.clone(), 7, itx));
        let mut got = Vec::new();
        while got.len() < 40 {
            let batch = tokio::time::timeout(std::time::Duration::from_secs(5), irx.recv())
                .await
                .unwrap()
                .unwrap();
            for m in batch {
                let Inbound::Udp { sock, from, pkt } = m else {
                    panic!()
                };
                assert_eq!(sock, 7);
                assert_eq!(from, a.local_addr().unwrap());
                got.push(pkt);
            }
        }
        for (i, p) in got.iter().enumerate() {
            assert_eq!(p.len(), 100 + i);
            assert!(p.iter().all(|&x| x == i as u8));
        }
    }
}
