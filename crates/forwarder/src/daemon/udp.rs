//! Batched UDP IO: `recvmmsg`/`sendmmsg` on the tokio socket's fd (Linux),
//! with a plain `recv_from`/`send_to` loop elsewhere.
//!
//! The batching itself (one heap allocation per receive batch) lives in
//! [`super::mmsg`], shared with the Ethernet faces.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use tokio::net::UdpSocket;
use tokio::sync::mpsc;

use super::{Inbound, InboundTx};

/// Datagrams per system call.
pub const BATCH: usize = super::mmsg::BATCH;
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
        super::mmsg::coalesce(&mut rx, &mut batch);
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
    use crate::daemon::mmsg;
    use std::os::fd::AsRawFd;

    /// `recvmmsg` buffers: one slot of [`MAX_DATAGRAM`] per datagram.
    pub struct RecvBatch(mmsg::RecvBatch<libc::sockaddr_storage>);

    impl RecvBatch {
        pub fn new() -> Self {
            RecvBatch(mmsg::RecvBatch::new(MAX_DATAGRAM))
        }

        /// One `recvmmsg` call; returns the datagrams received.
        pub fn recv(&mut self, sock: &UdpSocket) -> io::Result<Vec<(SocketAddr, Bytes)>> {
            self.0.recv(sock.as_raw_fd(), |d| {
                if d.truncated || d.payload.is_empty() {
                    return None;
                }
                // SAFETY: the kernel filled `namelen` bytes of this storage.
                let addr = unsafe { socket2::SockAddr::new(*d.addr, d.namelen) };
                Some((addr.as_socket()?, d.payload.len()))
            })
        }
    }

    /// One `sendmmsg` call for up to BATCH datagrams; returns how many went out.
    pub fn send_batch(sock: &UdpSocket, items: &[(SocketAddr, Bytes)]) -> io::Result<usize> {
        mmsg::send_batch(sock.as_raw_fd(), items, |a| socket2::SockAddr::from(*a))
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
