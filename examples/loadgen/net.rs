//! Socket plumbing of the load generator, on the daemon's own batching code
//! (`icn_forwarder::daemon::mmsg`): the generator pays per datagram what the
//! forwarder pays, and there is one `recvmmsg`/`sendmmsg` implementation.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::Duration;

use bytes::Bytes;
use icnfwd_workspace::forwarder::daemon::mmsg::{self, RecvBatch, UdpSendBatch};

/// Largest datagram read (a whole GRO message of up to 64 KiB).
const SLOT_BYTES: usize = 65536;
/// Kernel buffers asked for, so a full window never overflows a socket.
const SOCKET_BUFFER_BYTES: libc::c_int = 4 << 20;

/// A non-blocking UDP socket with batched receive and GSO send.
pub struct Port {
    pub sock: UdpSocket,
    rx: RecvBatch<libc::sockaddr_storage>,
    tx: UdpSendBatch,
}

impl Port {
    pub fn bind(addr: &str) -> io::Result<Self> {
        let sock = UdpSocket::bind(addr)?;
        sock.set_nonblocking(true)?;
        let fd = sock.as_raw_fd();
        for opt in [libc::SO_RCVBUF, libc::SO_SNDBUF] {
            // SAFETY: a valid fd and a c_int option of the stated size.
            unsafe {
                libc::setsockopt(
                    fd,
                    libc::SOL_SOCKET,
                    opt,
                    (&SOCKET_BUFFER_BYTES as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                );
            }
        }
        mmsg::enable_gro(fd);
        Ok(Port {
            sock,
            rx: RecvBatch::new(SLOT_BYTES),
            tx: UdpSendBatch::new(),
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.sock.local_addr().expect("bound socket")
    }

    /// Waits up to `timeout` for something to read; false on timeout.
    pub fn wait_readable(&self, timeout: Duration) -> bool {
        let mut p = libc::pollfd {
            fd: self.sock.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the duration of the call.
        let r = unsafe { libc::poll(&mut p, 1, timeout.as_millis() as libc::c_int) };
        r > 0
    }

    fn wait_writable(&self) {
        let mut p = libc::pollfd {
            fd: self.sock.as_raw_fd(),
            events: libc::POLLOUT,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the duration of the call.
        unsafe { libc::poll(&mut p, 1, 100) };
    }

    /// One `recvmmsg` (GRO messages split back into datagrams); empty when
    /// nothing is queued.
    pub fn recv(&mut self) -> Vec<(SocketAddr, Bytes)> {
        self.rx
            .recv(self.sock.as_raw_fd(), |d| {
                (d.addr.ss_family as i32 == libc::AF_INET && !d.truncated)
                    .then(|| (v4(d.addr), d.payload.len()))
            })
            .unwrap_or_default()
    }

    /// Sends all of `items`, waiting for room when the socket is full.
    pub fn send_all(&mut self, items: &[(SocketAddr, Bytes)]) {
        let mut off = 0;
        while off < items.len() {
            match self.tx.send(self.sock.as_raw_fd(), &items[off..]) {
                Ok(n) => off += n.max(1),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.wait_writable(),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => off += 1,
            }
        }
    }

    /// Datagrams the kernel dropped on this socket (full receive queue).
    pub fn kernel_drops(&self) -> u32 {
        mmsg::kernel_drops(self.sock.as_raw_fd()).unwrap_or(0)
    }
}

fn v4(sa: &libc::sockaddr_storage) -> SocketAddr {
    // SAFETY: the caller checked the family: the kernel wrote a sockaddr_in.
    let sin: &libc::sockaddr_in = unsafe { &*(sa as *const libc::sockaddr_storage).cast() };
    SocketAddr::from((
        Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)),
        u16::from_be(sin.sin_port),
    ))
}
