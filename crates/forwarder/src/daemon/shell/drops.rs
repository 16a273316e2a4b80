//! Drops the shell makes outside the engine (oversized datagrams, peers
//! refused for a full face table, full send backlogs) and those the kernel
//! made for it (full socket receive queues): each is counted in the
//! engine's drop counters, so `icnfwd status` shows it, and a repeated
//! condition logs one warning per (reason, peer address) per interval.

use std::net::IpAddr;
use std::os::fd::AsRawFd;

use cc_core::Timestamp;

use super::Shell;
use crate::engine::{DropReason, FaceId};

/// Between two warnings about the same reason and peer address.
pub(super) const DROP_LOG_INTERVAL: cc_core::Duration = cc_core::Duration::from_secs(10);
/// How often the UDP sockets' kernel drop counts are read.
pub(super) const OVERFLOW_CHECK_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

impl Shell {
    /// Counts one drop (on `face` if it has one) and warns, rate-limited.
    pub(super) fn shell_drop(
        &mut self,
        now: Timestamp,
        face: Option<FaceId>,
        reason: DropReason,
        peer: Option<IpAddr>,
    ) {
        self.node.forwarder_mut().count_drop(face, reason);
        if let Some(n) = self.drop_log.hit(now, (reason, peer)) {
            tracing::warn!(reason = reason.as_str(), peer = ?peer, face = ?face, drops = n,
                "dropped by the shell");
        }
    }

    /// Counts what the kernel dropped since the last call because a UDP
    /// socket's receive queue was full: on the peer's face for a peer's
    /// own socket (`isolate.rs`), forwarder-wide for a shared one.
    pub(super) fn count_receive_overflow(&mut self) {
        let now = self.now();
        let mut seen = Vec::new();
        for c in &mut self.udp {
            if let Some(d) = crate::daemon::mmsg::kernel_drops(c.port.socket().as_raw_fd()) {
                seen.push((c.multicast_face, None, d.wrapping_sub(c.seen_drops)));
                c.seen_drops = d;
            }
        }
        for i in &mut self.isolated {
            if let Some(d) = crate::daemon::mmsg::kernel_drops(i.sock.as_raw_fd()) {
                seen.push((
                    Some(i.face),
                    Some(i.peer.ip()),
                    d.wrapping_sub(i.seen_drops),
                ));
                i.seen_drops = d;
            }
        }
        for (face, peer, n) in seen.into_iter().filter(|s| s.2 > 0) {
            let reason = DropReason::ReceiveOverflow;
            self.node
                .forwarder_mut()
                .count_drops(face, reason, u64::from(n));
            if self.drop_log.hit(now, (reason, peer)).is_some() {
                tracing::warn!(reason = reason.as_str(), peer = ?peer, face = ?face, datagrams = n,
                    "the kernel dropped datagrams: socket receive queue full");
            }
        }
    }

    /// Counts the datagrams a UDP port dropped as oversized this turn.
    pub(super) fn count_oversized(&mut self, now: Timestamp, sock: usize) {
        let senders: Vec<_> = self.udp[sock].port.take_oversized().collect();
        for from in senders {
            let face = self.udp_peers.get(&(sock, from)).copied();
            self.shell_drop(now, face, DropReason::Oversized, Some(from.ip()));
        }
    }
}
