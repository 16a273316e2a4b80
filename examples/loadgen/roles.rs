//! The two helper processes the measuring process starts: the producer and
//! the bare relay. Each prints its bound address on stdout, then serves
//! until killed.

use std::io::Write;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use icnfwd_workspace::tlv::{decode_packet, Data, NetPacket};

use crate::net::Port;

fn announce(port: &Port) {
    println!("{}", port.local_addr());
    std::io::stdout().flush().ok();
}

/// Answers every Interest with a Data of `payload_bytes` (DigestSha256
/// signed), in batches: one `recvmmsg` in, one GSO `sendmmsg` out.
pub fn producer(payload_bytes: usize) {
    let mut port = Port::bind("127.0.0.1:0").expect("bind producer");
    announce(&port);
    let payload = Bytes::from(vec![0x5a; payload_bytes]);
    let mut out = BytesMut::with_capacity(64 * (payload_bytes + 256));
    let mut replies: Vec<(SocketAddr, Bytes)> = Vec::new();
    loop {
        if !port.wait_readable(Duration::from_secs(1)) {
            continue;
        }
        replies.clear();
        for (from, wire) in port.recv() {
            let Ok((_, Some(NetPacket::Interest(i)))) = decode_packet(wire) else {
                continue;
            };
            Data::new(i.name, payload.clone()).encode_signed_digest_sha256_into(&mut out);
            replies.push((from, out.split().freeze()));
        }
        port.send_all(&replies);
    }
}

/// Relays without any NDN work: what comes from `upstream` goes to the last
/// other peer seen, everything else goes to `upstream`. Same socket code,
/// batch sizes and GRO/GSO as icnfwd's UDP faces: the limit for a
/// forwarder process on this machine.
pub fn relay(upstream: SocketAddr) {
    let mut port = Port::bind("127.0.0.1:0").expect("bind relay");
    announce(&port);
    let mut downstream: Option<SocketAddr> = None;
    let mut out: Vec<(SocketAddr, Bytes)> = Vec::new();
    loop {
        if !port.wait_readable(Duration::from_secs(1)) {
            continue;
        }
        // Drain a few batches per wakeup, as icnfwd does per turn.
        for _ in 0..4 {
            let got = port.recv();
            let full = got.len() >= icnfwd_workspace::forwarder::daemon::mmsg::BATCH;
            for (from, pkt) in got {
                if from == upstream {
                    if let Some(d) = downstream {
                        out.push((d, pkt));
                    }
                } else {
                    downstream = Some(from);
                    out.push((upstream, pkt));
                }
            }
            if !full {
                break;
            }
        }
        port.send_all(&out);
        out.clear();
    }
}
