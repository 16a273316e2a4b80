//! Stream faces (TCP, Unix): bare TLVs back to back, no delimiter.

use bytes::{Buf, Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::mpsc;

use super::{Inbound, InboundTx};
use crate::engine::FaceId;

/// Largest element accepted on a stream (NFD's 8800-octet buffer).
pub const MAX_ELEMENT: usize = 8800;
/// Packets queued towards one stream before the engine's sends are dropped.
pub const WRITE_QUEUE: usize = 1024;

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

/// Reads elements from `r` and forwards them in batches; reports the close.
pub async fn read_loop<R: AsyncRead + Unpin>(mut r: R, face: FaceId, tx: InboundTx) {
    let mut buf = BytesMut::with_capacity(2 * MAX_ELEMENT);
    'outer: loop {
        match r.read_buf(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let mut batch = Vec::new();
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
        if buf.capacity() - buf.len() < MAX_ELEMENT {
            buf.reserve(2 * MAX_ELEMENT);
        }
        if !batch.is_empty() && tx.send(batch).await.is_err() {
            return;
        }
    }
    let _ = tx.send(vec![Inbound::StreamClosed { face }]).await;
}

/// Writes whole packets from `rx`, flushing when the queue runs dry.
pub async fn write_loop<W: AsyncWrite + Unpin>(w: W, mut rx: mpsc::Receiver<Bytes>) {
    let mut w = BufWriter::with_capacity(64 * 1024, w);
    while let Some(mut pkt) = rx.recv().await {
        loop {
            while pkt.has_remaining() {
                if w.write_buf(&mut pkt).await.is_err() {
                    return;
                }
            }
            match rx.try_recv() {
                Ok(next) => pkt = next,
                Err(_) => break,
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
