//! Drops the shell makes outside the engine (oversized datagrams, peers
//! refused for a full face table, full send backlogs): each is counted in
//! the engine's drop counters, so `icnfwd status` shows it, and a repeated
//! condition logs one warning per (reason, peer address) per interval.

use std::net::IpAddr;

use cc_core::Timestamp;

use super::Shell;
use crate::engine::{DropReason, FaceId};

/// Between two warnings about the same reason and peer address.
pub(super) const DROP_LOG_INTERVAL: cc_core::Duration = cc_core::Duration::from_secs(10);

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

    /// Counts the datagrams a UDP port dropped as oversized this turn.
    pub(super) fn count_oversized(&mut self, now: Timestamp, sock: usize) {
        let senders: Vec<_> = self.udp[sock].port.take_oversized().collect();
        for from in senders {
            let face = self.udp_peers.get(&(sock, from)).copied();
            self.shell_drop(now, face, DropReason::Oversized, Some(from.ip()));
        }
    }
}
