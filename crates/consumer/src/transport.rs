//! Client faces over Unix stream, TCP and UDP (tokio), with bare-TLV
//! framing on streams (docs/protocol.md §4).

use bytes::{Buf, Bytes, BytesMut};
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UdpSocket, UnixStream};
use tokio::sync::mpsc;

/// Largest packet accepted from a stream (NFD's limit is 8800; we allow more
/// so that large segments from other producers still pass).
pub const MAX_PACKET: usize = 65_536;

/// Where the forwarder is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    Unix(PathBuf),
    Tcp(String),
    Udp(String),
}

impl FromStr for Endpoint {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let with_port = |a: &str| {
            if a.rsplit_once(':')
                .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
                && !a.ends_with(']')
            {
                a.to_string()
            } else {
                format!("{a}:6363")
            }
        };
        if let Some(p) = s.strip_prefix("unix://") {
            if p.is_empty() {
                return Err("unix:// needs a path, e.g. unix:///run/nfd/nfd.sock".into());
            }
            Ok(Endpoint::Unix(PathBuf::from(p)))
        } else if let Some(a) = s
            .strip_prefix("tcp://")
            .or_else(|| s.strip_prefix("tcp4://"))
            .or_else(|| s.strip_prefix("tcp6://"))
        {
            Ok(Endpoint::Tcp(with_port(a.trim_end_matches('/'))))
        } else if let Some(a) = s
            .strip_prefix("udp://")
            .or_else(|| s.strip_prefix("udp4://"))
            .or_else(|| s.strip_prefix("udp6://"))
        {
            Ok(Endpoint::Udp(with_port(a.trim_end_matches('/'))))
        } else {
            Err(format!("unsupported transport {s:?}: expected unix:///path, tcp://host:port or udp://host:port"))
        }
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Unix(p) => write!(f, "unix://{}", p.display()),
            Endpoint::Tcp(a) => write!(f, "tcp://{a}"),
            Endpoint::Udp(a) => write!(f, "udp://{a}"),
        }
    }
}

/// The default face, as python-ndn/NDNts pick it: `NDN_CLIENT_TRANSPORT`,
/// else `/run/nfd/nfd.sock`, falling back to `/run/nfd.sock` when only that exists.
pub fn default_endpoint() -> Result<Endpoint, String> {
    if let Ok(t) = std::env::var("NDN_CLIENT_TRANSPORT") {
        if !t.is_empty() {
            return t.parse();
        }
    }
    let new = Path::new("/run/nfd/nfd.sock");
    let old = Path::new("/run/nfd.sock");
    Ok(Endpoint::Unix(if !new.exists() && old.exists() {
        old.into()
    } else {
        new.into()
    }))
}

/// Splits a byte stream into whole TLV elements.
#[derive(Debug, Default)]
pub struct StreamFramer {
    buf: BytesMut,
}

/// A stream carried an element that cannot be framed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("TLV element of {0} bytes exceeds the {MAX_PACKET}-byte limit")]
    TooLarge(u64),
}

fn varnum(b: &[u8]) -> Option<(u64, usize)> {
    icn_tlv::varnum::read_varnum(b).ok()
}

impl StreamFramer {
    /// Appends received bytes.
    pub fn push(&mut self, data: &[u8]) {
        self.buf.extend_from_slice(data);
    }

    /// Space to read into directly (avoids a copy).
    pub fn buffer_mut(&mut self) -> &mut BytesMut {
        &mut self.buf
    }

    /// The next complete element, if buffered.
    pub fn next_packet(&mut self) -> Result<Option<Bytes>, FrameError> {
        let Some((_, tl)) = varnum(&self.buf) else {
            return Ok(None);
        };
        let Some((len, ll)) = varnum(&self.buf[tl..]) else {
            return Ok(None);
        };
        let total = (tl + ll) as u64 + len;
        if total > MAX_PACKET as u64 {
            return Err(FrameError::TooLarge(total));
        }
        let total = total as usize;
        if self.buf.len() < total {
            self.buf.reserve(total - self.buf.len());
            return Ok(None);
        }
        Ok(Some(self.buf.split_to(total).freeze()))
    }
}

enum Reader {
    Stream(Box<dyn tokio::io::AsyncRead + Unpin + Send>, StreamFramer),
    Udp(std::sync::Arc<UdpSocket>, Vec<u8>),
}

/// A connected face: receive with [`Face::recv`], send through [`Face::sender`].
pub struct Face {
    reader: Reader,
    tx: mpsc::Sender<Vec<Bytes>>,
    writer: tokio::task::JoinHandle<io::Result<()>>,
}

/// Sends packets. Each queued item is a list of buffers that, joined, are
/// whole TLVs (a stream writes them in one vectored write, UDP sends one
/// datagram per TLV).
#[derive(Clone)]
pub struct Sender(mpsc::Sender<Vec<Bytes>>);

impl Sender {
    /// Queues bytes (one or more whole TLVs) for the writer task.
    pub async fn send(&self, b: Bytes) -> io::Result<()> {
        self.send_parts(vec![b]).await
    }

    /// Queues pieces that joined are whole TLVs (e.g. a segment's head,
    /// content and tail), written without joining them on streams.
    pub async fn send_parts(&self, parts: Vec<Bytes>) -> io::Result<()> {
        self.0
            .send(parts)
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "face closed"))
    }
}

/// Buffers gathered into one vectored write at most (the kernel's IOV_MAX
/// is 1024; a segment is three).
const WRITE_IOVECS: usize = 384;
/// Bytes gathered into one vectored write at most.
const WRITE_BYTES: usize = 1 << 20;
/// Send and receive buffer asked for on Unix streams: the kernel default
/// (208 KB) holds two dozen 8.8 KB Data, so a larger window went out a few
/// packets per wake-up. Capped by net.core.wmem_max / rmem_max.
const UNIX_BUFFER_BYTES: usize = 4 << 20;

/// Writes what is queued as it comes, gathering the queued buffers into
/// vectored writes: no copy into a write buffer.
async fn write_stream(
    mut w: impl tokio::io::AsyncWrite + Unpin,
    mut rx: mpsc::Receiver<Vec<Bytes>>,
) -> io::Result<()> {
    let mut queue: std::collections::VecDeque<Bytes> = std::collections::VecDeque::new();
    while let Some(parts) = rx.recv().await {
        queue.extend(parts);
        while !queue.is_empty() {
            let mut bytes: usize = queue.iter().map(Bytes::len).sum();
            while queue.len() < WRITE_IOVECS && bytes < WRITE_BYTES {
                match rx.try_recv() {
                    Ok(more) => {
                        bytes += more.iter().map(Bytes::len).sum::<usize>();
                        queue.extend(more);
                    }
                    Err(_) => break,
                }
            }
            let slices: Vec<io::IoSlice<'_>> = queue
                .iter()
                .take(WRITE_IOVECS)
                .map(|b| io::IoSlice::new(b))
                .collect();
            let mut n = w.write_vectored(&slices).await?;
            drop(slices);
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            while n > 0 {
                let Some(front) = queue.front_mut() else {
                    break;
                };
                if n >= front.len() {
                    n -= front.len();
                    queue.pop_front();
                } else {
                    front.advance(n);
                    n = 0;
                }
            }
        }
    }
    w.flush().await
}

impl Face {
    /// A face over the two halves of a byte stream (Unix or TCP): a writer
    /// task copies queued buffers as they are, the reader frames TLVs.
    fn stream(
        r: impl tokio::io::AsyncRead + Unpin + Send + 'static,
        w: impl tokio::io::AsyncWrite + Unpin + Send + 'static,
        tx: mpsc::Sender<Vec<Bytes>>,
        rx: mpsc::Receiver<Vec<Bytes>>,
    ) -> Face {
        let writer = tokio::spawn(write_stream(w, rx));
        Face {
            reader: Reader::Stream(Box::new(r), StreamFramer::default()),
            tx,
            writer,
        }
    }

    /// Connects to `ep`.
    pub async fn connect(ep: &Endpoint) -> io::Result<Face> {
        let (tx, mut rx) = mpsc::channel::<Vec<Bytes>>(256);
        match ep {
            Endpoint::Unix(p) => {
                let s = UnixStream::connect(p)
                    .await
                    .map_err(|e| io::Error::new(e.kind(), format!("{e}")))?;
                let sock = socket2::SockRef::from(&s);
                let _ = sock.set_send_buffer_size(UNIX_BUFFER_BYTES);
                let _ = sock.set_recv_buffer_size(UNIX_BUFFER_BYTES);
                let (r, w) = s.into_split();
                Ok(Face::stream(r, w, tx, rx))
            }
            Endpoint::Tcp(a) => {
                let s = TcpStream::connect(a)
                    .await
                    .map_err(|e| io::Error::new(e.kind(), format!("{e}")))?;
                s.set_nodelay(true)?;
                let (r, w) = s.into_split();
                Ok(Face::stream(r, w, tx, rx))
            }
            Endpoint::Udp(a) => {
                let remote = tokio::net::lookup_host(a).await?.next().ok_or_else(|| {
                    io::Error::new(io::ErrorKind::NotFound, format!("cannot resolve {a}"))
                })?;
                let local = if remote.is_ipv4() {
                    "0.0.0.0:0"
                } else {
                    "[::]:0"
                };
                let s = std::sync::Arc::new(udp_socket(local.parse().expect("literal address"))?);
                s.connect(remote).await?;
                let ws = s.clone();
                let writer = tokio::spawn(async move {
                    while let Some(parts) = rx.recv().await {
                        // One TLV per datagram: split a batch back into elements.
                        let mut f = StreamFramer::default();
                        for b in &parts {
                            f.push(b);
                        }
                        while let Ok(Some(p)) = f.next_packet() {
                            ws.send(&p).await?;
                        }
                    }
                    Ok(())
                });
                Ok(Face {
                    reader: Reader::Udp(s, vec![0u8; MAX_PACKET]),
                    tx,
                    writer,
                })
            }
        }
    }

    /// A handle to send packets.
    pub fn sender(&self) -> Sender {
        Sender(self.tx.clone())
    }

    /// Waits for at least one packet and appends every complete one to `out`.
    /// `Ok(false)` means the forwarder closed the connection.
    pub async fn recv(&mut self, out: &mut Vec<Bytes>) -> io::Result<bool> {
        match &mut self.reader {
            Reader::Stream(r, framer) => loop {
                while let Some(p) = framer
                    .next_packet()
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?
                {
                    out.push(p);
                }
                if !out.is_empty() {
                    return Ok(true);
                }
                let buf = framer.buffer_mut();
                buf.reserve(256 * 1024);
                if r.read_buf(buf).await? == 0 {
                    return Ok(false);
                }
            },
            Reader::Udp(s, buf) => {
                let n = s.recv(buf).await?;
                out.push(Bytes::copy_from_slice(&buf[..n]));
                // Drain what else is queued (bounded, so the caller gets to
                // send between bursts): the socket is emptied in one turn.
                for _ in 1..UDP_READS_PER_CALL {
                    match s.try_recv(buf) {
                        Ok(n) => out.push(Bytes::copy_from_slice(&buf[..n])),
                        Err(_) => break,
                    }
                }
                Ok(true)
            }
        }
    }

    /// How many datagrams of up to `datagram_bytes` the receive buffer of a
    /// UDP face holds before the kernel drops; `None` on stream faces (TCP
    /// and Unix streams have flow control). A window beyond this only turns
    /// a burst of Data into kernel drops and timeouts.
    pub fn datagrams_buffered(&self, datagram_bytes: usize) -> Option<u32> {
        let Reader::Udp(s, _) = &self.reader else {
            return None;
        };
        let rcvbuf = socket2::SockRef::from(s.as_ref()).recv_buffer_size().ok()?;
        Some(
            u32::try_from(rcvbuf / datagram_truesize(datagram_bytes))
                .unwrap_or(u32::MAX)
                .max(1),
        )
    }

    /// Datagrams the kernel dropped on a UDP face's socket so far (a full
    /// receive buffer; the `drops` column of `/proc/net/udp`); `None` on
    /// stream faces or where the kernel does not say.
    pub fn kernel_drops(&self) -> Option<u32> {
        let Reader::Udp(s, _) = &self.reader else {
            return None;
        };
        kernel_drops(s.as_ref())
    }

    /// Flushes queued packets and closes the sending side.
    pub async fn close(self) -> io::Result<()> {
        drop(self.tx);
        match self.writer.await {
            Ok(r) => r,
            Err(e) => Err(io::Error::other(e)),
        }
    }
}

/// Receive and send buffer asked for on UDP faces. The kernel default
/// (208 KB) holds a dozen 8 KB Data; a window of hundreds of them arrives
/// as one burst from a local forwarder. The kernel caps the request at
/// net.core.rmem_max / wmem_max (and reports twice what it grants).
const UDP_BUFFER_BYTES: usize = 8 << 20;
/// Datagrams read per [`Face::recv`] call at most.
const UDP_READS_PER_CALL: usize = 256;

/// A non-blocking UDP socket bound to `local` with large kernel buffers.
fn udp_socket(local: std::net::SocketAddr) -> io::Result<UdpSocket> {
    use socket2::{Domain, Protocol, Socket, Type};
    let s = Socket::new(Domain::for_address(local), Type::DGRAM, Some(Protocol::UDP))?;
    let _ = s.set_recv_buffer_size(UDP_BUFFER_BYTES);
    let _ = s.set_send_buffer_size(UDP_BUFFER_BYTES);
    s.set_nonblocking(true)?;
    s.bind(&local.into())?;
    UdpSocket::from_std(s.into())
}

/// Receive-buffer bytes one datagram of `bytes` is charged on Linux: the
/// packet's data is a power-of-two slab above 4 KB (a 8.8 KB datagram sits
/// in 16 KB) plus the socket buffer's own ~1 KB of metadata. Below that,
/// the data plus the metadata, rounded up.
fn datagram_truesize(bytes: usize) -> usize {
    const META_BYTES: usize = 1024;
    let data = bytes + 128; // IP/UDP headers and alignment
    let slab = if data > 4096 {
        data.next_power_of_two()
    } else {
        data
    };
    slab + META_BYTES
}

/// `SK_MEMINFO_DROPS` of `SO_MEMINFO`: the socket's `sk_drops`.
fn kernel_drops(s: &UdpSocket) -> Option<u32> {
    use std::os::fd::AsRawFd;
    let mut info = [0u32; 16];
    let mut len = std::mem::size_of_val(&info) as libc::socklen_t;
    // SAFETY: a valid fd and a buffer of `len` bytes the kernel fills.
    let rc = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_MEMINFO,
            info.as_mut_ptr().cast(),
            &mut len,
        )
    };
    let at = libc::SK_MEMINFO_DROPS as usize;
    (rc == 0 && len as usize > at * 4).then(|| info[at])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framer_splits_back_to_back_and_partial_elements() {
        let mut f = StreamFramer::default();
        f.push(&[0x05, 0x02, 0xaa, 0xbb, 0x64, 0x00, 0x06]);
        assert_eq!(
            f.next_packet().unwrap().unwrap().as_ref(),
            &[0x05, 0x02, 0xaa, 0xbb]
        );
        assert_eq!(f.next_packet().unwrap().unwrap().as_ref(), &[0x64, 0x00]);
        assert_eq!(f.next_packet().unwrap(), None);
        f.push(&[0xfd, 0x01]);
        assert_eq!(f.next_packet().unwrap(), None);
        f.push(&[0x00]);
        f.push(&vec![7u8; 256]);
        let p = f.next_packet().unwrap().unwrap();
        assert_eq!(p.len(), 4 + 256);
        let mut g = StreamFramer::default();
        g.push(&[0x06, 0xfe, 0x00, 0x10, 0x00, 0x00]);
        assert!(matches!(g.next_packet(), Err(FrameError::TooLarge(_))));
    }

    /// Pieces queued in many sends come out joined and in order through
    /// vectored writes that the other end takes in small pieces.
    #[tokio::test]
    async fn stream_writer_joins_parts_in_order() {
        use tokio::io::AsyncReadExt;
        let (a, mut b) = tokio::io::duplex(1000);
        let (tx, rx) = mpsc::channel(4);
        let writer = tokio::spawn(write_stream(a, rx));
        let batches: Vec<Vec<Bytes>> = (0..200u16)
            .map(|i| {
                (0..(i % 5))
                    .map(|k| Bytes::from(vec![(i + k) as u8; 1 + usize::from(i * 31 + k) % 700]))
                    .collect()
            })
            .collect();
        let want: Vec<u8> = batches.iter().flatten().flat_map(|p| p.to_vec()).collect();
        let send = tokio::spawn(async move {
            for parts in batches {
                tx.send(parts).await.unwrap();
            }
        });
        let mut got = Vec::new();
        let read = b.read_to_end(&mut got);
        let (r, s, w) = tokio::join!(read, send, writer);
        r.unwrap();
        s.unwrap();
        w.unwrap().unwrap();
        assert_eq!(got, want);
    }

    /// The drop counter the UDP summary and the window cap rely on moves
    /// when a receive buffer overflows (so "0 dropped" is a measurement).
    #[tokio::test]
    async fn kernel_drops_counts_an_overflowing_buffer() {
        let rx = udp_socket("127.0.0.1:0".parse().unwrap()).unwrap();
        socket2::SockRef::from(&rx)
            .set_recv_buffer_size(4096)
            .unwrap();
        let to = rx.local_addr().unwrap();
        assert_eq!(kernel_drops(&rx), Some(0));
        let tx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        for _ in 0..64 {
            tx.send_to(&[0u8; 8000], to).unwrap();
        }
        assert!(kernel_drops(&rx).unwrap() > 0);
    }

    /// A whole window of the largest Data, arriving while the consumer
    /// reads nothing (a descheduled process), fits the UDP face's receive
    /// buffer: no datagram is dropped, and the window is far beyond what
    /// the kernel's default buffer (208 KB, a dozen 8.8 KB Data) holds.
    #[tokio::test]
    async fn a_window_of_the_cap_fits_the_receive_buffer() {
        let server = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let ep = Endpoint::Udp(server.local_addr().unwrap().to_string());
        let mut face = Face::connect(&ep).await.unwrap();
        let window = face.datagrams_buffered(8800).unwrap();
        assert!(window >= 64, "window {window}");
        // Learn the face's address from one datagram, then answer with a
        // whole window at once before the face reads.
        face.sender()
            .send(Bytes::from_static(&[0x05, 0x00]))
            .await
            .unwrap();
        let mut b = [0u8; 16];
        let (_, to) = server.recv_from(&mut b).await.unwrap();
        let mut data = vec![0u8; 8800];
        data[..4].copy_from_slice(&[0x06, 0xfd, 0x22, 0x5c]); // Data, 8796 bytes
        for _ in 0..window {
            server.send_to(&data, to).await.unwrap();
        }
        assert_eq!(face.kernel_drops(), Some(0));
        let mut got = Vec::new();
        while got.len() < window as usize {
            let read = face.recv(&mut got);
            tokio::time::timeout(std::time::Duration::from_secs(10), read)
                .await
                .expect("every datagram of the window arrives")
                .unwrap();
        }
        assert_eq!(got.len(), window as usize);
    }

    #[test]
    fn truesize_of_a_large_datagram_is_its_slab_plus_metadata() {
        assert_eq!(datagram_truesize(8800), 16384 + 1024);
        assert_eq!(datagram_truesize(1000), 1000 + 128 + 1024);
    }

    #[test]
    fn endpoints_parse() {
        assert_eq!(
            "unix:///tmp/x.sock".parse(),
            Ok(Endpoint::Unix("/tmp/x.sock".into()))
        );
        assert_eq!(
            "udp://127.0.0.1:6363".parse(),
            Ok(Endpoint::Udp("127.0.0.1:6363".into()))
        );
        assert_eq!(
            "tcp://localhost".parse(),
            Ok(Endpoint::Tcp("localhost:6363".into()))
        );
        assert!("http://x".parse::<Endpoint>().is_err());
    }
}
