//! Byte budgets and fair shares of the tables (`[limits]`): no single
//! face may hold more than `face_share_pct` % of the PIT or of the
//! reassembly budget, and the last 1/16 of the PIT (entries and bytes) is
//! kept for local faces, so `icnfwd status` and a local producer's
//! registration still work while a peer floods. Also the accounting the
//! budgets need (bytes held, shrinking after a flood, the shell's drops).

use bytes::Bytes;
use cc_core::Timestamp;
use icn_tlv::{LpPacket, TlvError};

use super::cc_hooks::CcHooks;
use super::counters::DropReason;
use super::face::FaceId;
use super::forwarder::Forwarder;
use super::multicast_hook::MulticastHook;

/// The fraction of the PIT kept for local faces: 1 / this.
const LOCAL_RESERVE_DIV: usize = 16;

/// Largest NDN packet (NDN packet format: 8800 octets).
pub const MAX_NDN_PACKET: usize = 8800;

/// Octets the PIT and the egress queues held when a reload lowered their
/// budgets ([`Forwarder::apply_budgets`]): they may stay above the new
/// bound while they drain, never grow past it.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct BudgetGrace {
    pit_bytes: usize,
    queue_bytes: usize,
}

/// Whether a container with `cap` slots for `len` items is worth shrinking.
pub(super) fn spare(len: usize, cap: usize) -> bool {
    cap > 2 * len + 1024
}

/// `share_pct` % of `total`, at least 1.
fn share(total: usize, share_pct: u32) -> usize {
    (total / 100).saturating_mul(share_pct as usize).max(1)
}

impl<C: CcHooks, M: MulticastHook> Forwarder<C, M> {
    /// The bound that applies to a face: all of `total` for local faces,
    /// the part not reserved for them otherwise.
    fn scoped(total: usize, local: bool) -> usize {
        if local {
            total
        } else {
            total - total / LOCAL_RESERVE_DIV
        }
    }

    /// Counts a drop the shell made before or after the engine (oversized
    /// datagrams, refused peers, full send backlogs), on `face` if known.
    pub fn count_drop(&mut self, face: Option<FaceId>, reason: DropReason) {
        match face {
            Some(f) => self.drop_packet(f, reason),
            None => self.counters.drops.add(reason),
        }
    }

    /// Counts `n` drops the shell learnt of at once (a socket's kernel
    /// drop count), on `face` if known.
    pub fn count_drops(&mut self, face: Option<FaceId>, reason: DropReason, n: u64) {
        self.counters.drops.add_n(reason, n);
        if let Some(f) = face.and_then(|f| self.faces.0.get_mut(&f)) {
            f.info.counters.drops.add_n(reason, n);
        }
    }

    /// Whether the PIT has room for a new entry from a face of this scope.
    pub(super) fn pit_has_room(&self, local: bool) -> bool {
        self.pit.len() < Self::scoped(self.cfg.pit_max_entries, local)
    }

    /// Whether `face` may add an in-record of `bytes` octets: within the
    /// PIT byte budget, and (non-local faces) within its share of the
    /// entries and of the bytes. The refusal's drop reason otherwise.
    pub(super) fn pit_admits(
        &self,
        face: FaceId,
        local: bool,
        bytes: usize,
    ) -> Result<(), DropReason> {
        let max_bytes = Self::scoped(self.cfg.pit_max_bytes, local);
        if self.pit.in_bytes() + bytes > max_bytes {
            return Err(DropReason::PitFull);
        }
        if !local
            && self.pit.face_records(face)
                >= share(self.cfg.pit_max_entries, self.cfg.face_share_pct)
        {
            return Err(DropReason::FaceShare);
        }
        Ok(())
    }

    /// Feeds a fragment to the face's reassembler within the global byte
    /// budget; the face's own share is its reassembler's byte bound.
    pub(super) fn reassemble_within_budget(
        &mut self,
        now: Timestamp,
        face: FaceId,
        lp: LpPacket,
    ) -> Result<Option<LpPacket>, DropReason> {
        let piece = lp.fragment.as_ref().map_or(0, Bytes::len);
        if self.reassembly_bytes + piece > self.cfg.reassembly_max_bytes {
            return Err(DropReason::Reassembly);
        }
        let f = self.faces.0.get_mut(&face).ok_or(DropReason::UnknownFace)?;
        let r = f.reassembler.as_mut().ok_or(DropReason::Reassembly)?;
        let before = r.bytes();
        let res = r.push(now.as_nanos(), face.0, lp);
        self.reassembly_bytes = self.reassembly_bytes + r.bytes() - before;
        // Partial packets live until strictly after their deadline.
        let deadline = r
            .next_deadline_ns()
            .map(|d| Timestamp::from_nanos(d.saturating_add(1)));
        f.set_reassembly_deadline(deadline, &mut self.reassembling);
        res.map_err(|e| match e {
            TlvError::PacketTooLarge => DropReason::Oversized,
            TlvError::ReassemblyFull => DropReason::FaceShare,
            _ => DropReason::Reassembly,
        })
    }

    /// A face's reassembler: its share of the byte budget, NDN's packet bound.
    pub(super) fn new_reassembler(&self) -> icn_tlv::Reassembler {
        icn_tlv::Reassembler::new(self.cfg.reassembly_max_partial, self.cfg.reassembly_timeout)
            .with_byte_limits(
                share(self.cfg.reassembly_max_bytes, self.cfg.face_share_pct),
                MAX_NDN_PACKET,
            )
    }

    /// Replaces the byte budgets, the face share and the per-face queue
    /// length (`pit_max_bytes`, `reassembly_max_bytes`, `queue_max_bytes`,
    /// `face_share_pct`, `queue.max_packets`) with
    /// those of `from`, as a configuration reload asks; its other fields
    /// sized the tables at construction and are ignored. New admissions
    /// are checked against the new values at once. Reassembly, short-lived,
    /// fits at once too: each face's reassembler gets its new share
    /// (oldest partial packets evicted) and, if all of them still hold more
    /// than the new budget, the largest holders drop their partials. PIT
    /// in-records and queued packets above a lowered budget are not thrown
    /// away: they drain (expiry, sending) and nothing new is admitted until
    /// use is under the bound.
    pub fn apply_budgets(&mut self, from: &super::EngineConfig) {
        self.cfg.pit_max_bytes = from.pit_max_bytes;
        self.cfg.reassembly_max_bytes = from.reassembly_max_bytes;
        self.cfg.queue_max_bytes = from.queue_max_bytes;
        self.cfg.face_share_pct = from.face_share_pct;
        self.cfg.queue.max_packets = from.queue.max_packets;
        for f in self.faces.0.values_mut() {
            f.queues.set_max_packets(from.queue.max_packets);
        }
        self.budget_grace = BudgetGrace {
            pit_bytes: self.pit.in_bytes(),
            queue_bytes: self.queued_bytes,
        };
        let face_share = share(self.cfg.reassembly_max_bytes, self.cfg.face_share_pct);
        let mut held = Vec::new();
        for (id, f) in &mut self.faces.0 {
            if let Some(r) = f.reassembler.as_mut() {
                r.set_max_bytes(face_share);
                held.push((r.bytes(), *id));
            }
        }
        held.sort_unstable_by(|a, b| b.cmp(a));
        let mut total: usize = held.iter().map(|(b, _)| b).sum();
        for (bytes, id) in held {
            if total <= self.cfg.reassembly_max_bytes {
                break;
            }
            if let Some(r) = self
                .faces
                .0
                .get_mut(&id)
                .and_then(|f| f.reassembler.as_mut())
            {
                r.set_max_bytes(0);
                r.set_max_bytes(face_share);
                total -= bytes;
            }
        }
        self.reassembly_bytes = total;
        for f in self.faces.0.values_mut() {
            if let Some(r) = &f.reassembler {
                let deadline = r
                    .next_deadline_ns()
                    .map(|d| Timestamp::from_nanos(d.saturating_add(1)));
                f.set_reassembly_deadline(deadline, &mut self.reassembling);
            }
        }
    }

    /// The byte accounting matches the tables, and they are within budget
    /// (or within what they held when a reload lowered the budget).
    pub(super) fn check_budgets(&self) -> Result<(), String> {
        let (mut bytes, mut records) = (0, std::collections::HashMap::new());
        for e in self.pit.ids().filter_map(|id| self.pit.get(id)) {
            for r in &e.in_records {
                bytes += r.wire.len();
                *records.entry(r.face).or_insert(0usize) += 1;
            }
        }
        let pit_bound = self.cfg.pit_max_bytes.max(self.budget_grace.pit_bytes);
        if bytes != self.pit.in_bytes() || bytes > pit_bound {
            return Err(format!(
                "PIT bytes {} booked {}",
                bytes,
                self.pit.in_bytes()
            ));
        }
        if records.iter().any(|(f, n)| self.pit.face_records(*f) != *n) {
            return Err("PIT records per face mismatch".into());
        }
        let held: usize = self
            .faces
            .0
            .values()
            .filter_map(|f| f.reassembler.as_ref())
            .map(icn_tlv::Reassembler::bytes)
            .sum();
        if held != self.reassembly_bytes || held > self.cfg.reassembly_max_bytes {
            return Err(format!(
                "reassembly bytes {held} booked {}",
                self.reassembly_bytes
            ));
        }
        let queued: usize = self
            .faces
            .0
            .values()
            .map(|f| super::egress::queued_bytes_of(&f.info.queue))
            .sum();
        let queue_bound = self.cfg.queue_max_bytes.max(self.budget_grace.queue_bytes);
        if queued != self.queued_bytes || queued > queue_bound {
            return Err(format!("queue bytes {queued} booked {}", self.queued_bytes));
        }
        Ok(())
    }

    /// Drops the spare capacity of tables that have drained (after a
    /// flood); true when something was released. Cheap when nothing did.
    pub fn shrink_tables(&mut self) -> bool {
        let pit = self.pit.shrink();
        let dnl = self.dnl.shrink();
        pit || dnl
    }

    /// Octets held by all reassemblers.
    pub fn reassembly_bytes(&self) -> usize {
        self.reassembly_bytes
    }

    /// Octets in all egress queues.
    pub fn queued_bytes(&self) -> usize {
        self.queued_bytes
    }

    /// Interest octets held by PIT in-records.
    pub fn pit_bytes(&self) -> usize {
        self.pit.in_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_and_reserve() {
        assert_eq!(share(1000, 25), 250);
        assert_eq!(share(10, 25), 1);
        assert_eq!(<Forwarder>::scoped(1600, true), 1600);
        assert_eq!(<Forwarder>::scoped(1600, false), 1500);
    }
}
