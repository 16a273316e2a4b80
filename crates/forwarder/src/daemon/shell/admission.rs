//! Who gets an on-demand face: at most `[limits] max_faces` UDP and
//! Ethernet peers at once, and at most `face_share_percent` % of them from
//! one source address (loopback peers with local scope are applications
//! and exempt). When the table is full, the on-demand face silent the
//! longest (at least `evict_idle_ms`) makes room; otherwise the new peer is
//! refused and counted. Unix and TCP faces are not in this table, so local
//! applications always get in.

use std::net::IpAddr;
use std::time::Duration;

use cc_core::Timestamp;
use tokio::time::Instant;

use super::{FaceTx, Shell};
use crate::engine::{DropReason, FaceId};

/// How often a full table is scanned for an idle face when the last scan
/// found none (a flood of new peers must not cost a scan each).
const EVICT_SCAN_INTERVAL: Duration = Duration::from_millis(100);

impl Shell {
    /// Whether a new on-demand face may open for `peer` (`None`: an
    /// Ethernet peer); counts the refusal otherwise.
    pub(super) fn admit_on_demand(
        &mut self,
        now: Timestamp,
        peer: Option<IpAddr>,
        local: bool,
    ) -> bool {
        let limits = &self.cfg.limits;
        let per_address = (limits
            .max_faces
            .saturating_mul(limits.face_share_percent as usize)
            / 100)
            .max(1);
        if let (Some(ip), false) = (peer, local) {
            if self.on_demand_by_ip.get(&ip).copied().unwrap_or(0) >= per_address {
                self.shell_drop(now, None, DropReason::FaceTableFull, peer);
                return false;
            }
        }
        if self.on_demand_faces() >= self.cfg.limits.max_faces && !self.evict_idle(now) {
            self.shell_drop(now, None, DropReason::FaceTableFull, peer);
            return false;
        }
        true
    }

    /// Closes the on-demand face silent the longest, if it has been silent
    /// for `evict_idle_ms`; false when there is none.
    fn evict_idle(&mut self, now: Timestamp) -> bool {
        let t = Instant::now();
        if t < self.next_evict_scan {
            return false;
        }
        let min_idle = Duration::from_millis(self.cfg.limits.evict_idle_ms);
        let oldest = self
            .faces
            .iter()
            .filter(|(_, e)| e.on_demand && matches!(e.tx, FaceTx::Udp { .. } | FaceTx::Eth { .. }))
            .min_by_key(|(_, e)| e.last_rx)
            .filter(|(_, e)| t.duration_since(e.last_rx) >= min_idle)
            .map(|(id, _)| *id);
        let Some(id) = oldest else {
            self.next_evict_scan = t + EVICT_SCAN_INTERVAL;
            return false;
        };
        tracing::debug!(%id, "evicting the longest-idle on-demand face for a new peer");
        self.close_on_demand(now, id);
        true
    }

    /// Removes an on-demand face from the shell and the node.
    pub(super) fn close_on_demand(&mut self, now: Timestamp, id: FaceId) {
        self.drop_face_transport(id);
        self.node.remove_face(now, id);
    }

    /// On-demand UDP and Ethernet faces open now.
    pub(super) fn on_demand_faces(&self) -> usize {
        self.n_on_demand
    }

    /// Books a new on-demand face (per-address count).
    pub(super) fn booked_on_demand(&mut self, peer: Option<IpAddr>) {
        self.n_on_demand += 1;
        if let Some(ip) = peer {
            *self.on_demand_by_ip.entry(ip).or_insert(0) += 1;
        }
    }

    /// Releases what [`Shell::booked_on_demand`] booked.
    pub(super) fn released_on_demand(&mut self, peer: Option<IpAddr>) {
        self.n_on_demand = self.n_on_demand.saturating_sub(1);
        if let Some(ip) = peer {
            if let Some(n) = self.on_demand_by_ip.get_mut(&ip) {
                *n -= 1;
                if *n == 0 {
                    self.on_demand_by_ip.remove(&ip);
                }
            }
        }
    }
}
