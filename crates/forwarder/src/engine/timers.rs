//! The engine's timers: the next deadline the shell arms its one timer
//! for, and what a due timer does (PIT expiry, the Dead Nonce List, the
//! multicast groups and the scheme's timers, partial reassemblies).
//!
//! Both run at every turn of the daemon's loop, so they visit only the
//! faces at work (queued output, partial packets), never every face: a
//! walk over all faces per turn made forwarding cost grow with the faces
//! that merely exist (crates/forwarder/README.md, "Scaling").

use std::cmp::Reverse;

use cc_core::{Duration, Timestamp};

use super::cc_hooks::CcHooks;
use super::counters::DropReason;
use super::face::FaceId;
use super::forwarder::Forwarder;
use super::multicast_hook::MulticastHook;

/// How often the faces' congestion-control status and stamp windows are
/// refreshed from the scheme (see `handle_timeout`).
const CC_STATUS_REFRESH: Duration = Duration::from_millis(100);

impl<C: CcHooks, M: MulticastHook> Forwarder<C, M> {
    /// Earliest time `handle_timeout` or `poll_transmit` has work.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        let mut t = self.pit.next_expiry();
        let mut take = |x: Timestamp| t = Some(t.map_or(x, |y| y.min(x)));
        if let Some(x) = self.cc.poll_timeout() {
            take(x);
        }
        if let Some(x) = self.groups.poll_timeout() {
            take(x);
        }
        if let Some(Reverse(d)) = self.delay_line.peek() {
            take(d.at);
        }
        for f in self
            .reassembling
            .iter()
            .filter_map(|id| self.faces.0.get(id))
        {
            if let Some(d) = f.reassembly_deadline {
                take(d);
            }
        }
        // Every face with queued output is in `active` (`send`,
        // `face_blocked` and the multicast hook put it there; `poll_paced`
        // takes it out once empty).
        for f in self.active.iter().filter_map(|id| self.faces.0.get(id)) {
            if f.blocked {
                continue;
            }
            let eligible = if f.ready.is_empty() {
                f.queues.next_eligible()
            } else {
                Some(Timestamp::ZERO)
            };
            if let Some(e) = eligible {
                take(e.max(f.next_tx_at));
            }
        }
        t
    }

    /// Expires PIT entries and partial reassemblies due at `now`.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        while let Some(id) = self.pit.pop_expired(now) {
            self.on_pit_expiry(now, id);
        }
        self.dnl.expire(now);
        self.groups_timeout(now);
        if self.cc.poll_timeout().is_some_and(|t| t <= now) {
            self.cc.handle_timeout(now);
        }
        // The scheme's per-face status and stamp windows are for reading
        // (`icnfwd status`, metrics): copied in at most every
        // CC_STATUS_REFRESH, not at every timer of a rate law, whose
        // periods end every few milliseconds on each link (a walk over
        // 10 000 idle faces at each made RCP forward at a quarter of its
        // rate with one face).
        if now >= self.next_cc_refresh {
            self.next_cc_refresh = now + CC_STATUS_REFRESH;
            for (id, f) in &mut self.faces.0 {
                f.info.cc = self.cc.status(*id);
                f.info.cc_stamps.roll(now);
                if !f.queues.is_empty() && !f.in_active {
                    f.in_active = true;
                    self.active.push_back(*id);
                }
            }
        }
        let due: Vec<FaceId> = self
            .reassembling
            .iter()
            .copied()
            .filter(|id| {
                self.faces
                    .0
                    .get(id)
                    .and_then(|f| f.reassembly_deadline)
                    .is_some_and(|d| d <= now)
            })
            .collect();
        for id in due {
            let Some(f) = self.faces.0.get_mut(&id) else {
                continue;
            };
            let deadline = if let Some(r) = f.reassembler.as_mut() {
                let held = r.bytes();
                let expired = r.expire(now.as_nanos());
                self.reassembly_bytes = self.reassembly_bytes.saturating_sub(held - r.bytes());
                for _ in 0..expired {
                    f.info.counters.drops.add(DropReason::Reassembly);
                    self.counters.drops.add(DropReason::Reassembly);
                }
                // The reassembler keeps a partial packet until strictly
                // after its deadline; never report a time already past.
                r.next_deadline_ns().map(|d| {
                    Timestamp::from_nanos(d.saturating_add(1)).max(now + Duration::from_nanos(1))
                })
            } else {
                None
            };
            f.set_reassembly_deadline(deadline, &mut self.reassembling);
        }
        self.refresh_gauges();
    }
}
