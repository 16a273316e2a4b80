//! Stream faces (TCP, Unix): bare TLVs back to back, no delimiter.

use bytes::{Buf, Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use super::{Inbound, InboundTx};
use crate::engine::FaceId;

/// Largest element accepted on a stream (NFD's 8800-octet buffer).
pub const MAX_ELEMENT: usize = 8800;
/// Packets queued towards one stream before the engine's sends are dropped.
pub const WRITE_QUEUE: usize = 1024;

/// A face for an app accepted on the Unix socket at `socket_path`: local,
/// on-demand, named by its file descriptor (NFD's `fd://`). Returns the
/// face's parameters and its remote URI.
pub fn unix_face_params(
    socket_path: &std::path::Path,
    stream: &tokio::net::UnixStream,
) -> (crate::engine::FaceParams, crate::mgmt::FaceUri) {
    use std::os::fd::AsRawFd;
    let uri = crate::mgmt::FaceUri::Fd(stream.as_raw_fd() as u64);
    let params = crate::engine::FaceParams {
        persistency: crate::engine::Persistency::OnDemand,
        local_uri: format!("unix://{}", socket_path.display()),
        ..crate::engine::FaceParams::local(uri.to_string())
    };
    (params, uri)
}

/// Outcome of looking for one element at the front of a buffer.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// Need more bytes.
    Partial,
    /// A complete element of this many bytes, with its TLV-TYPE.
    Complete { typ: u64, len: usize },
    /// Larger than [`MAX_ELEMENT`] or a malformed header: close the face.
    TooLarge,
}

fn varnum(b: &[u8]) -> Option<(u64, usize)> {
    icn_tlv::varnum::read_varnum(b).ok()
}

/// Finds the first TLV element of `buf`.
pub fn frame(buf: &[u8]) -> Frame {
    let Some((typ, n1)) = varnum(buf) else {
        return Frame::Partial;
    };
    let Some((len, n2)) = varnum(&buf[n1..]) else {
        return if buf.len() >= 9 + n1 {
            Frame::TooLarge
        } else {
            Frame::Partial
        };
    };
    let total = (n1 + n2) as u64 + len;
    if total > MAX_ELEMENT as u64 + 16 {
        return Frame::TooLarge;
    }
    let total = total as usize;
    if buf.len() < total {
        Frame::Partial
    } else {
        Frame::Complete { typ, len: total }
    }
}

/// Whether a top-level element is worth handing to the engine: Interest,
/// Data or a non-empty LpPacket (`64 00` is an NDNts keep-alive).
pub fn wanted(typ: u64, len: usize) -> bool {
    matches!(typ, 5 | 6) || (typ == 100 && len > 2)
}

/// Bytes asked of the kernel per read. Every element is copied out of
/// this buffer into a `Bytes` of its own (what the PIT, the CS or a queue
/// keeps holds only its own bytes), so its size only sets how many
/// elements one `read` brings: at two elements (17.6 KB) the reads of a
/// 1 GB Unix transfer were 13 % of icnfwd's samples. Allocated at this
/// size (glibc maps it apart from the heap), it is resident only as far as
/// the face's traffic has written into it. A buffer started at two
/// elements and grown on the first full read measured the same (icnfwd
/// 0.54-0.66 s/GB against 0.44-0.62, CS off, load 5) and was not kept.
const READ_CHUNK: usize = 256 * 1024;
/// Send and receive buffer asked for on accepted Unix streams. A Unix
/// stream's sender may have `SO_SNDBUF` bytes queued at the receiver; the
/// kernel default (208 KB) is two dozen 8.8 KB Data, so a window larger
/// than that was written out a few packets per wake-up. The kernel caps
/// the request at `net.core.wmem_max`/`rmem_max`.
pub const UNIX_SOCKET_BUFFER_BYTES: usize = 4 << 20;

/// Sizes the kernel buffers of an accepted Unix stream (see
/// [`UNIX_SOCKET_BUFFER_BYTES`]); a refusal leaves the defaults.
pub fn size_unix_buffers(stream: &tokio::net::UnixStream) {
    let s = socket2::SockRef::from(stream);
    let _ = s.set_send_buffer_size(UNIX_SOCKET_BUFFER_BYTES);
    let _ = s.set_recv_buffer_size(UNIX_SOCKET_BUFFER_BYTES);
}
/// Packets gathered into one vectored write at most (the kernel's IOV_MAX
/// is 1024).
const WRITE_IOVECS: usize = 128;
/// Bytes gathered into one vectored write at most.
const WRITE_BYTES: usize = 1 << 20;

/// Reads elements from `r` and forwards them in batches; reports the close.
pub async fn read_loop<R: AsyncRead + Unpin>(mut r: R, face: FaceId, tx: InboundTx) {
    let mut buf = BytesMut::with_capacity(READ_CHUNK);
    'outer: loop {
        match r.read_buf(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let mut batch = Vec::with_capacity(buf.len() / 1024 + 1);
        loop {
            match frame(&buf) {
                Frame::Partial => break,
                Frame::TooLarge => {
                    tracing::info!(%face, "stream element too large, closing");
                    break 'outer;
                }
                Frame::Complete { typ, len } => {
                    // Copied out: a slice would keep the whole read buffer.
                    let pkt = Bytes::copy_from_slice(&buf[..len]);
                    buf.advance(len);
                    if wanted(typ, len) {
                        batch.push(Inbound::Stream { face, pkt });
                    }
                }
            }
        }
        // At most a partial element is left (and nothing else refers to
        // the buffer): `reserve` moves it to the front of the same
        // allocation rather than growing, as the request fits in it.
        if buf.capacity() - buf.len() < MAX_ELEMENT {
            buf.reserve(READ_CHUNK - buf.len());
        }
        if !batch.is_empty() && tx.send(batch).await.is_err() {
            return;
        }
    }
    let _ = tx.send(vec![Inbound::StreamClosed { face }]).await;
}

/// Writes whole packets from `rx`: what is queued goes out in one vectored
/// write straight from the packets' own buffers (no copy into a user-space
/// write buffer; a 1 GB transfer copied every Data once more before).
pub async fn write_loop<W: AsyncWrite + Unpin>(mut w: W, mut rx: mpsc::Receiver<Bytes>) {
    let mut queue: std::collections::VecDeque<Bytes> = std::collections::VecDeque::new();
    while let Some(pkt) = rx.recv().await {
        queue.push_back(pkt);
        while !queue.is_empty() {
            let mut bytes: usize = queue.iter().map(Bytes::len).sum();
            while queue.len() < WRITE_IOVECS && bytes < WRITE_BYTES {
                match rx.try_recv() {
                    Ok(next) => {
                        bytes += next.len();
                        queue.push_back(next);
                    }
                    Err(_) => break,
                }
            }
            let slices: Vec<std::io::IoSlice<'_>> = queue
                .iter()
                .take(WRITE_IOVECS)
                .map(|b| std::io::IoSlice::new(b))
                .collect();
            let mut n = match w.write_vectored(&slices).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            drop(slices);
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
        if w.flush().await.is_err() {
            return;
        }
    }
    let _ = w.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing() {
        assert_eq!(frame(&[]), Frame::Partial);
        assert_eq!(frame(&[0x05]), Frame::Partial);
        assert_eq!(frame(&[0x05, 0x03, 1, 2]), Frame::Partial);
        assert_eq!(
            frame(&[0x05, 0x03, 1, 2, 3, 0x06]),
            Frame::Complete { typ: 5, len: 5 }
        );
        assert_eq!(frame(&[0x64, 0x00]), Frame::Complete { typ: 100, len: 2 });
        assert!(!wanted(100, 2));
        assert!(wanted(100, 3));
        assert!(!wanted(7, 10));
        assert_eq!(frame(&[0x06, 0xFD, 0xFF, 0xFF]), Frame::TooLarge);
        assert_eq!(frame(&[0x06, 0xFD, 0x22]), Frame::Partial);
    }

    /// Queued packets come out whole and in order through vectored writes
    /// that the other end takes in small pieces.
    #[tokio::test]
    async fn writer_sends_every_packet_in_order() {
        let (a, mut b) = tokio::io::duplex(1000);
        let (tx, rx) = mpsc::channel(WRITE_QUEUE);
        let writer = tokio::spawn(write_loop(a, rx));
        let pkts: Vec<Bytes> = (0..300u16)
            .map(|i| Bytes::from(vec![i as u8; 1 + usize::from(i) * 37 % 9000]))
            .collect();
        let want: Vec<u8> = pkts.iter().flat_map(|p| p.iter().copied()).collect();
        let send = tokio::spawn(async move {
            for p in pkts {
                tx.send(p).await.unwrap();
            }
        });
        let mut got = Vec::new();
        b.read_to_end(&mut got).await.unwrap();
        send.await.unwrap();
        writer.await.unwrap();
        assert_eq!(got, want);
    }

    /// A burst larger than the first read buffer (so the buffer grows and
    /// is reused with partial elements left at its end) arrives whole, in
    /// order.
    #[tokio::test]
    async fn reader_passes_a_burst_whole() {
        let (mut a, b) = tokio::io::duplex(1 << 20);
        let (tx, mut rx) = mpsc::channel(1024);
        tokio::spawn(read_loop(b, FaceId(301), tx));
        let mut want = Vec::new();
        for i in 0..300u32 {
            let len = 1 + (i as usize * 997) % 8000;
            let mut pkt = vec![0x06, 0xFD];
            pkt.extend_from_slice(&(len as u16).to_be_bytes());
            pkt.extend((0..len).map(|k| (i as usize + k) as u8));
            want.push(pkt);
        }
        let all: Vec<u8> = want.concat();
        a.write_all(&all).await.unwrap();
        drop(a);
        let mut got = Vec::new();
        while let Some(batch) = rx.recv().await {
            got.extend(batch.into_iter().filter_map(|m| match m {
                Inbound::Stream { pkt, .. } => Some(pkt),
                _ => None,
            }));
        }
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(&g[..], &w[..]);
        }
    }

    #[tokio::test]
    async fn reader_splits_and_drops_keepalives() {
        let (mut a, b) = tokio::io::duplex(64);
        let (tx, mut rx) = mpsc::channel(16);
        tokio::spawn(read_loop(b, FaceId(300), tx));
        // Interest-shaped element split across writes, an idle LpPacket, and a Data.
        a.write_all(&[0x05, 0x04, 0x07, 0x02]).await.unwrap();
        a.write_all(&[0x08, 0x00, 0x64, 0x00, 0x06, 0x01, 0xAA])
            .await
            .unwrap();
        drop(a);
        let mut got = Vec::new();
        while let Some(batch) = rx.recv().await {
            got.extend(batch);
        }
        let pkts: Vec<Vec<u8>> = got
            .iter()
            .filter_map(|m| match m {
                Inbound::Stream { pkt, .. } => Some(pkt.to_vec()),
                _ => None,
            })
            .collect();
        assert_eq!(
            pkts,
            vec![
                vec![0x05, 0x04, 0x07, 0x02, 0x08, 0x00],
                vec![0x06, 0x01, 0xAA]
            ]
        );
        assert!(matches!(
            got.last(),
            Some(Inbound::StreamClosed { face: FaceId(300) })
        ));
    }
}
