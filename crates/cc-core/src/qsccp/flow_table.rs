//! The flow table of a CDS face: flows live in the open-addressed table
//! itself (a flow's id is its slot, see [`super::flows::TagIndex`]), so a
//! lookup costs the tag line and the flow line, with no id loaded between.

use super::class::ServiceClass;
use super::drr::Peek;
use super::flows::{quantum, Flow, TagIndex, MAX_FLOWS, NIL};
use super::scheduler::CdsScheduler;
use alloc::vec;

impl<T> CdsScheduler<T> {
    /// The slot of flow (class, prefix), if tracked.
    #[inline]
    pub(super) fn find(&self, class: ServiceClass, prefix: u64) -> Option<u32> {
        self.find_hashed(self.hasher.hash(class, prefix), class, prefix)
    }

    #[inline]
    fn find_hashed(&self, hash: u64, class: ServiceClass, prefix: u64) -> Option<u32> {
        let flows = &self.flows;
        self.index.find(hash, |i| {
            flows
                .get(i as usize)
                .is_some_and(|f| f.prefix == prefix && f.class == class)
        })
    }

    /// The slot of flow (class, prefix), created if new and there is room.
    #[inline(always)]
    pub(super) fn flow_id(&mut self, class: ServiceClass, prefix: u64) -> Option<u32> {
        let hash = self.hasher.hash(class, prefix);
        match self.find_hashed(hash, class, prefix) {
            Some(id) => Some(id),
            None => self.new_flow(hash, class, prefix),
        }
    }

    #[inline(never)]
    fn new_flow(&mut self, hash: u64, class: ServiceClass, prefix: u64) -> Option<u32> {
        if self.index.len() >= self.cfg.max_flows.min(MAX_FLOWS) as usize {
            return None;
        }
        if let Some(slots) = self.index.rehash_to() {
            self.rehash(slots);
        }
        let id = self.index.insert(hash);
        let flow = self.flows.get_mut(id as usize)?;
        *flow = Flow {
            quantum_bits: quantum(self.cfg.quantum_bits, 1.0, 1.0),
            epoch: self.epoch,
            class,
            live: true,
            prefix,
            ..Flow::DEAD
        };
        Some(id)
    }

    /// Rebuilds the flow table with `slots` slots (growth, or clearing
    /// tombstones): O(flows), amortised O(1) per new flow. Flows get new
    /// slots, so the DRR rings and cached peeks are renumbered.
    #[inline(never)]
    fn rehash(&mut self, slots: usize) {
        let mut index = TagIndex::with_slots(slots);
        let mut flows = vec![Flow::DEAD; slots];
        let mut moved = vec![NIL; self.flows.len()];
        for (i, f) in self.flows.iter().enumerate() {
            if !self.index.is_live(i) {
                continue;
            }
            let j = index.insert(self.hasher.hash(f.class, f.prefix));
            flows[j as usize] = f.clone();
            moved[i] = j;
        }
        let renumber = |id: u32| moved.get(id as usize).copied().filter(|&j| j != NIL);
        for cls in &mut self.classes {
            // Active flows are live, so nothing is dropped; stay safe anyway.
            cls.active.remap(renumber);
            cls.peeked = match cls
                .peeked
                .get()
                .and_then(|(id, size)| Some((renumber(id)?, size)))
            {
                Some((id, size)) => Peek::new(id, size),
                None => Peek::NONE,
            };
        }
        self.index = index;
        self.flows = flows;
    }

    /// Forgets an idle flow (called by the PECN period); its slot becomes a
    /// tombstone, so no other flow moves.
    pub(super) fn remove_flow(&mut self, id: u32) {
        let Some(flow) = self.flows.get_mut(id as usize) else {
            return;
        };
        if !flow.live || flow.len != 0 {
            return;
        }
        flow.live = false;
        self.index.remove(id);
    }
}
