//! The windowed consumer: keeps a fixed number of Interests with unique
//! names in flight and counts the Data that come back.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use icnfwd_workspace::tlv::{decode_packet, Component, Interest, Name, NetPacket};

use crate::net::Port;

/// An Interest unanswered this long counts as lost and frees its slot.
/// Loopback round trips here are well under 1 ms even on the shared
/// machine (the longest forwarder stall seen in `perf trace` was 9 ms), and
/// a lost Interest holding a slot for seconds would measure stalls of the
/// fixed window rather than forwarding cost.
const LOST_AFTER: Duration = Duration::from_millis(200);
/// InterestLifetime sent: longer than [`LOST_AFTER`], so a PIT entry never
/// expires before the consumer gives up on it.
const LIFETIME: Duration = Duration::from_secs(2);

pub struct Outcome {
    pub received: u64,
    pub lost: u64,
    /// Interests answered with a Nack (each frees its slot).
    pub nacked: u64,
    pub elapsed: Duration,
    /// Datagrams the consumer's own socket dropped (should stay 0).
    pub kernel_drops: u32,
}

/// Runs `exchanges` exchanges through `fwd` with `window` in flight; names
/// are `prefix/f<seq mod flows>/<seq>`, so every one misses the CS and
/// crosses the PIT, and the window is spread over `flows` flows (name minus
/// last component, the flow key of QSCCP, PCON and WinCM).
pub fn run(
    port: &mut Port,
    fwd: SocketAddr,
    prefix: &Name,
    exchanges: u64,
    window: usize,
    flows: u64,
) -> Outcome {
    let flow_prefixes: Vec<Name> = (0..flows.max(1))
        .map(|f| prefix.append(Component::generic(format!("f{f}").into_bytes())))
        .collect();
    let drops0 = port.kernel_drops();
    let mut next_seq: u64 = 0;
    let (mut received, mut lost, mut nacked) = (0u64, 0u64, 0u64);
    let mut outstanding: VecDeque<(u64, Instant)> = VecDeque::new();
    let mut done = vec![false; exchanges as usize];
    let mut out = BytesMut::with_capacity(64 * 1024);
    let mut pkts: Vec<(SocketAddr, Bytes)> = Vec::with_capacity(window);
    let mut in_flight = 0usize;
    let mut nonce: u32 = 0x1234_5678 ^ std::process::id();
    let start = Instant::now();
    while received + lost + nacked < exchanges {
        pkts.clear();
        while in_flight < window && next_seq < exchanges {
            let flow = &flow_prefixes[(next_seq % flow_prefixes.len() as u64) as usize];
            let mut i = Interest::new(flow.append(Component::sequence_num(next_seq)));
            nonce = nonce.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            i.nonce = Some(nonce);
            i.lifetime = Some(LIFETIME);
            i.encode_into(&mut out);
            pkts.push((fwd, out.split().freeze()));
            outstanding.push_back((next_seq, Instant::now()));
            next_seq += 1;
            in_flight += 1;
        }
        port.send_all(&pkts);
        if port.wait_readable(Duration::from_millis(50)) {
            for (_, wire) in port.recv() {
                let (name, counter) = match decode_packet(wire) {
                    Ok((_, Some(NetPacket::Data(d)))) => (d.name, &mut received),
                    Ok((lp, Some(NetPacket::Interest(i)))) if lp.nack.is_some() => {
                        (i.name, &mut nacked)
                    }
                    _ => continue,
                };
                let seq = name.last().and_then(|c| c.as_sequence_num());
                if let Some(slot) = seq.and_then(|s| done.get_mut(s as usize)) {
                    if !*slot {
                        *slot = true;
                        *counter += 1;
                        in_flight -= 1;
                    }
                }
            }
        }
        while let Some(&(seq, at)) = outstanding.front() {
            if done[seq as usize] {
                outstanding.pop_front();
            } else if at.elapsed() > LOST_AFTER {
                done[seq as usize] = true;
                lost += 1;
                in_flight -= 1;
                outstanding.pop_front();
            } else {
                break;
            }
        }
    }
    Outcome {
        received,
        lost,
        nacked,
        elapsed: start.elapsed(),
        kernel_drops: port.kernel_drops().wrapping_sub(drops0),
    }
}
