//! Deficit round robin among the flows of a class (see
//! [`super::scheduler`]): the DRR decision of each class, the pop of a
//! flow's head packet, and the prefetch of the lines a few turns ahead.

use super::flows;
use super::scheduler::{CdsScheduler, Scheduled};
use super::settle::settle;
use crate::time::Timestamp;

/// A class's DRR decision (flow id, head size), or none, in one `u64`: it
/// is written by one store and read by one load, so reading it right
/// after a write is forwarded from the store buffer (as three 4-byte
/// stores of an `Option<(u32, u32)>` read by a wider load it was not: the
/// criterion loop at 1 flow ran 4 ns slower per packet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Peek(u64);

impl Peek {
    /// No decision (flow ids stay below 2^24, so no decision reads so).
    pub(super) const NONE: Peek = Peek(u64::MAX);

    #[inline]
    pub(super) fn new(id: u32, size_bits: u32) -> Self {
        Peek(u64::from(id) << 32 | u64::from(size_bits))
    }

    /// (flow id, head size in bits).
    #[inline]
    pub(super) fn get(self) -> Option<(u32, u32)> {
        (self != Self::NONE).then_some(((self.0 >> 32) as u32, self.0 as u32))
    }
}

impl Default for Peek {
    fn default() -> Self {
        Self::NONE
    }
}

/// DRR turns ahead whose head packet a pop prefetches.
const PACKET_AHEAD: usize = 2;
/// DRR turns ahead whose flow line a pop prefetches.
const FLOW_AHEAD: usize = 4;
/// Active-ring entries ahead (one 64-byte line of ids) a pop prefetches.
const RING_AHEAD: usize = 20;
/// Ring length below which a pop prefetches nothing: the lines of a few
/// hundred flows and their head packets stay in L1/L2 between turns.
const PREFETCH_MIN_FLOWS: usize = 256;
const _: () = assert!(RING_AHEAD < PREFETCH_MIN_FLOWS && FLOW_AHEAD < PREFETCH_MIN_FLOWS);

impl<T> CdsScheduler<T> {
    /// Fetches lines ahead of the DRR turns of class `c`: the head packet of
    /// the flow [`PACKET_AHEAD`] turns ahead (its line was fetched earlier)
    /// and the line of the flow [`FLOW_AHEAD`] turns ahead, so a class
    /// served back to back still finds its lines in cache.
    #[inline]
    fn prefetch_next_turn(&self, c: usize) {
        let active = &self.classes[c].active;
        if active.len() < PREFETCH_MIN_FLOWS {
            // A short ring's flows are still cached from their last turn.
            return;
        }
        // All the look-aheads are within the ring (checked once, here); the
        // hints take no bounds check (`flows::prefetch_at`).
        if let Some(f) = self.flows.get(active.peek_ahead(PACKET_AHEAD) as usize) {
            flows::prefetch_packet(&self.arena, f.head);
        }
        flows::prefetch_at(&self.flows, active.peek_ahead(FLOW_AHEAD) as usize);
        // The ring itself: its next line was written a whole round ago.
        active.prefetch_slot(RING_AHEAD);
    }

    /// The flow at the head of class `c` that has deficit for its head
    /// packet, giving quanta to flows in turn (DRR).
    #[inline]
    pub(super) fn drr_peek(&mut self, c: usize) -> Option<(u32, u32)> {
        match self.classes[c].peeked.get() {
            Some(h) => Some(h),
            None => self.drr_turn(c),
        }
    }

    #[inline(always)]
    pub(super) fn drr_turn(&mut self, c: usize) -> Option<(u32, u32)> {
        let cls = &mut self.classes[c];
        loop {
            let id = cls.active.front()?;
            let Some(flow) = self.flows.get_mut(id as usize) else {
                cls.active.pop_front();
                continue;
            };
            if flow.len == 0 {
                // Cannot happen (active flows are backlogged); heal anyway.
                flow.in_turn = false;
                cls.active.pop_front();
                continue;
            }
            if !flow.in_turn {
                flow.deficit_bits = flow.deficit_bits.saturating_add(flow.quantum_bits);
                flow.in_turn = true;
            }
            let size = flow.head_size_bits;
            if flow.deficit_bits >= size {
                cls.peeked = Peek::new(id, size);
                cls.tag = cls.start.wrapping_add(u64::from(size) * self.vt_step[c]);
                return Some((id, size));
            }
            // Turn over: to the back of the list, deficit kept.
            flow.in_turn = false;
            cls.active.rotate();
        }
    }

    /// Takes the head packet of flow `id` of class `c`; returns it with
    /// the flow's class, prefix and rate (read while its line is at hand).
    #[inline(always)]
    pub(super) fn drr_pop(
        &mut self,
        now: Timestamp,
        c: usize,
        id: u32,
        size: u32,
    ) -> Option<Scheduled<T>> {
        self.classes[c].peeked = Peek::NONE;
        if let Some(r) = self.ds_ready_ns.get_mut(c) {
            *r = 0;
            self.ds_next_ns = 0;
        }
        let flow = self.flows.get_mut(id as usize)?;
        if flow.epoch != self.epoch {
            settle(&self.frozen, flow);
        }
        let q = flows::pop(&mut self.arena, flow)?;
        let out = Scheduled {
            item: q.item,
            class: flow.class,
            prefix: flow.prefix,
            size_bits: size,
            sojourn: now.saturating_since(q.at),
            target_rate_bps: flow.has_rate.then_some(flow.rate_bps),
            discounted: flow.penalised & self.frozen.pen_discounts,
        };
        flow.deficit_bits = flow.deficit_bits.saturating_sub(size);
        let cls = &mut self.classes[c];
        if flow.len == 0 {
            flow.deficit_bits = 0;
            flow.in_turn = false;
            cls.active.pop_front();
            if flow.offered_bits == 0 {
                // Drained a backlog of past periods: idle again.
                cls.active_wphi -= flow.weight * flow.phi(self.frozen.phi_pen);
                cls.active_flows -= 1;
            }
        }
        cls.queued -= 1;
        if cls.queued == 0 {
            self.backlog &= !(1 << c);
        } else {
            self.drr_turn(c);
        }
        self.prefetch_next_turn(c);
        Some(out)
    }
}
